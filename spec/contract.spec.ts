/**
 * docs/contract.md stays true to the repository: every rule's id is named by a spec it
 * lists, every file it names exists, and every bug-report case has its spec. Fails when a
 * spec file is renamed or deleted without the contract following (as `scheduler.spec.ts`
 * became `run.spec.ts` once), or when a row lists specs none of which names its id.
 */
import { existsSync, readFileSync } from 'node:fs';
import { globSync } from 'tinyglobby';
import { describe, expect, it } from 'vitest';

const contract = readFileSync('docs/contract.md', 'utf8');

interface Row {
  readonly id: string;
  readonly line: number;
  readonly cells: readonly string[];
}

/** The rows of every table whose first column is an id (`O1`, `P4`, `J10`, `C20`, …), and the table's header cells. */
function rows(): { rules: Row[]; cases: Row[] } {
  const rules: Row[] = [];
  const cases: Row[] = [];
  let header: string[] = [];
  contract.split('\n').forEach((text, i) => {
    if (!text.startsWith('|')) {
      header = [];
      return;
    }
    const cells = text.slice(1, text.endsWith('|') ? -1 : undefined).split('|').map((cell) => cell.trim());
    if (header.length === 0) {
      header = cells;
      return;
    }
    const id = cells[0] ?? '';
    if (!/^[A-Z]+\d+[a-z]?$/.test(id)) return;
    (header[0] === 'case' ? cases : rules).push({ id, line: i + 1, cells });
  });
  return { rules, cases };
}

/** The repository paths a text names in backticks (`spec/core/run.spec.ts`, `lib/core/run/run.ts`, globs). */
function pathsIn(text: string): string[] {
  return [...text.matchAll(/`([^`\s]+)`/g)]
    .map((m) => m[1]!)
    .filter((token) => /^(spec|lib|bench|scripts|examples|docs)\/[\w./*-]+$/.test(token));
}

function files(path: string): string[] {
  return path.includes('*') ? globSync(path) : [path];
}

const { rules, cases } = rows();

describe('docs/contract.md maps every id to its code and spec', () => {
  it('has the rule tables (a parse that found nothing would pass everything below)', () => {
    expect(rules.length).toBeGreaterThanOrEqual(50);
    expect(cases.length).toBeGreaterThanOrEqual(15);
  });

  it.each(rules.map((row) => [row.id, row] as const))('%s: the files it names exist, and a spec it lists names the id', (id, row) => {
    const named = row.cells.slice(1).flatMap(pathsIn);
    const missing = named.filter((path) => files(path).length === 0 || files(path).some((file) => !existsSync(file)));
    expect(missing, `docs/contract.md:${row.line} names files that do not exist`).toEqual([]);
    const specs = pathsIn(row.cells.at(-1)!).flatMap(files).filter((file) => file.startsWith('spec/'));
    expect(specs.length, `docs/contract.md:${row.line} lists no spec file`).toBeGreaterThan(0);
    const naming = specs.filter((file) => new RegExp(`\\b${id}\\b`).test(readFileSync(file, 'utf8')));
    expect(naming, `docs/contract.md:${row.line}: none of ${specs.join(', ')} names ${id}`).not.toEqual([]);
  });

  it.each(cases.map((row) => [row.id] as const))('%s: spec/cases/%s.spec.ts exists and names it', (id) => {
    const file = `spec/cases/${id}.spec.ts`;
    expect(existsSync(file)).toBe(true);
    expect(readFileSync(file, 'utf8')).toMatch(new RegExp(`\\b${id}\\b`));
  });
});
