/**
 * Several runs of a scenario combined (bench/runs.ts): the medians, ranges and per-run values
 * that `npm run bench` reports and judges the targets on. No timing is asserted; the
 * combining is checked against the runs' own figures, and one case runs the real child
 * processes (`bench/run.ts --result-file`, with the smoke budget).
 */
import { describe, expect, it } from 'vitest';
import { median, SMOKE_BUDGET } from '../../bench/harness.ts';
import { textTable } from '../../bench/report.ts';
import type { Row, ScenarioResult, Target } from '../../bench/rows.ts';
import { combineRuns, runInChildren } from '../../bench/runs.ts';
import { resume } from '../../bench/scenarios/index.ts';

function row(impl: string, value: number | null, cols: Record<string, string> = {}, extra: Partial<Row> = {}): Row {
  return { scenario: 'overhead', series: 'parallel', impl, n: 1_000, unit: 'µs/call (CPU)', value, chart: value === null ? null : value * 1e3, cols, ...extra };
}

function result(rows: Row[], targets: Target[] = []): ScenarioResult {
  return { name: 'overhead', title: 'overhead', description: 'd.', chartLabel: 'ns per call', rows, targets };
}

function target(x: number): Target {
  return { target: 'at least 5× less', measured: `${x}× less`, met: x >= 5, x, bound: { op: '>=', limit: 5 } };
}

describe('combineRuns: the median over runs, the range over runs, every run kept', () => {
  it('a row is the median of its runs, lo/hi the lowest and highest run, runs every value in order', () => {
    // Fails if the value is taken from one run (the first, the last) or the mean, or if the range stays the round medians.
    const runs = [4.7, 2.9, 3.1].map((v) => result([row('toolrun', v, {}, { lo: v - 0.5, hi: v + 5, samples: 10 })]));
    const combined = combineRuns(runs);
    const r = combined.rows[0]!;
    expect(r.value).toBe(3.1);
    expect(r.lo).toBe(2.9);
    expect(r.hi).toBe(4.7);
    expect(r.runs).toEqual([4.7, 2.9, 3.1]);
    expect(r.samples).toBe(30);
    expect(r.chart).toBe(3_100);
    expect(combined.runs).toBe(3);
    expect(textTable(combined)).toContain('range (3 runs)');
  });

  it('a formatted ratio or figure becomes the median of the runs\' numbers; other cells come from the median run', () => {
    // Fails if a ratio column is copied from one run instead of combined.
    const runs = [
      result([row('toolrun', 4, { '× floor': '5.2×', 'per batch': '4.00 ms', 'import': '80.9 ms (74.1 ms)' })]),
      result([row('toolrun', 3, { '× floor': '4.1×', 'per batch': '3.00 ms', 'import': '70.0 ms (71.0 ms)' })]),
      result([row('toolrun', 5, { '× floor': '6.3×', 'per batch': '5.00 ms', 'import': '90.0 ms (91.0 ms)' })]),
    ];
    const cols = combineRuns(runs).rows[0]!.cols;
    expect(cols['× floor']).toBe('5.2×');
    expect(cols['per batch']).toBe('4.00 ms');
    expect(cols.import).toBe('80.9 ms (74.1 ms)');
  });

  it('a row measured in one run only (later runs measure the target series) keeps its round medians and says so', () => {
    // Fails if a missing run is counted as a value, or if the table hides that the range is one run's rounds.
    const runs = [
      result([row('toolrun', 4), row('sequential toolrun', 7, {}, { series: 'sequential', lo: 6, hi: 8 })]),
      result([row('toolrun', 3)]),
      result([row('toolrun', 5)]),
    ];
    const combined = combineRuns(runs);
    const seq = combined.rows.find((r) => r.series === 'sequential')!;
    expect(seq.value).toBe(7);
    expect(seq.runs).toEqual([7, null, null]);
    expect([seq.lo, seq.hi]).toEqual([6, 8]);
    expect(textTable(combined)).toContain('6.00 … 8.00 (rounds, 1 run)');
  });

  it('a target is judged on the median of the runs\' figures, with its range; not on any one run', () => {
    // Fails if the verdict follows the first run (met here) or the last (missed) rather than the median (missed).
    const combined = combineRuns([result([], [target(5.4)]), result([], [target(4.1)]), result([], [target(4.6)])]);
    const t = combined.targets[0]!;
    expect(t.x).toBe(4.6);
    expect(t.met).toBe(false);
    expect(t.runs).toEqual([5.4, 4.1, 4.6]);
    expect(t.measured).toContain('4.60×, median of 3 runs, range 4.10× … 5.40×');
    expect(t.measured).toContain('the median run: 4.6× less');
  });

  it('combines the real results of three runs of `resume`', async () => {
    // Fails if the scenario's targets stop carrying their figure (x, bound), or the combined rows drift from the runs' medians.
    const runs: ScenarioResult[] = [];
    for (let i = 0; i < 3; i++) runs.push(await resume(SMOKE_BUDGET, { sizes: [10] }));
    const combined = combineRuns(runs);
    expect(combined.rows.length).toBe(runs[0]!.rows.length);
    for (const [i, r] of combined.rows.entries()) {
      const values = runs.map((run) => run.rows[i]!.value!);
      expect(r.value).toBe(median(values));
      expect(r.runs).toEqual(values);
    }
    expect(combined.targets.length).toBe(2);
    for (const [i, t] of combined.targets.entries()) {
      const xs = runs.map((run) => run.targets[i]!.x!);
      expect(xs.every(Number.isFinite)).toBe(true);
      expect(t.x).toBe(median(xs));
      expect(t.met).toBe(t.x! <= 3);
    }
  }, 60_000);
});

describe('runInChildren: each run a fresh process', () => {
  it('runs `resume` in two child processes of bench/run.ts and returns both results', async () => {
    // Fails if the child mode (--result-file) stops writing its result, or a child's failure goes unnoticed.
    const results = await runInChildren('resume', 2, { full: false, env: { ...process.env, TOOLRUN_BENCH_SMOKE: '1', TOOLRUN_BENCH_REEXEC: '1' } });
    expect(results.length).toBe(2);
    for (const r of results) {
      expect(r.name).toBe('resume');
      expect(r.rows.some((row) => row.impl === 'toolrun: plain run' && row.value !== null)).toBe(true);
    }
    const combined = combineRuns(results);
    expect(combined.runs).toBe(2);
    expect(combined.rows[0]!.runs?.length).toBe(2);
  }, 120_000);
});
