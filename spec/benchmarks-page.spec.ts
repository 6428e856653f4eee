/**
 * docs/benchmarks.md's targets table is the one place that says where each target stands
 * (docs/adr/0031-benchmarks.md): every target the stored results miss has its "what limits
 * it" text in bench/report.ts, and the page written from those results shows it.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readStore, renderMarkdown, whatLimits } from '../bench/report.ts';
import type { ScenarioName } from '../bench/rows.ts';

describe('the benchmarks page says where each target stands', () => {
  const store = readStore('docs');
  const missed = Object.entries(store.scenarios).flatMap(([name, entry]) =>
    (entry?.result.targets ?? []).filter((t) => t.met === false).map((t) => ({ name: name as ScenarioName, target: t.target })),
  );

  it('every target the stored results miss says what limits it', () => {
    expect(missed.length).toBeGreaterThan(0);
    expect(missed.filter(({ name, target }) => whatLimits(name, target) === undefined)).toEqual([]);
  });

  it('docs/benchmarks.md is the page the stored results render, limits included', () => {
    const page = readFileSync('docs/benchmarks.md', 'utf8');
    // A hand edit, or a change of bench/report.ts without the page: write it again from the
    // stored results with `npx tsx -e "import { readStore, writeReport } from './bench/report.ts'; writeReport('docs', readStore('docs'), new Map())"`.
    expect(page).toBe(renderMarkdown(store));
    for (const { name, target } of missed) expect(page).toContain(whatLimits(name, target)!);
  });
});
