/**
 * Several runs of one scenario, each in a fresh process, combined into one result: what
 * `npm run bench` does for the scenarios whose targets are CPU ratios measured in one
 * process (`overhead`, `resume`; `--runs K` sets how many).
 *
 * Why: on a shared 2-core machine one process's figures swing between processes far more
 * than between rounds of the same process (a quiet run gave toolrun 4.70 µs/call at N =
 * 1,000 with round medians 4.43 … 9.70, while the same code's `maxConcurrency 10` row read
 * 2.90): how warm the JIT got, the heap's layout and a burst of load all belong to the
 * process. The median over K processes, each interleaving every implementation, is what the
 * targets are judged on; the range over the processes says how far one run can be off.
 *
 * Combining (see {@link combineRuns}): rows are matched by series, implementation and size;
 * a row's value is the median of its runs' values, `lo`/`hi` their lowest and highest, and
 * `runs` keeps every run's value (docs/bench/results.json). Formatted columns holding one
 * number (a ratio `2.6×`, `4.00 ms`) become the median of the runs' numbers, so a ratio is
 * the median of the per-run ratios, each between implementations measured in the same
 * process. A target with a figure (`x`, `bound`) is judged on the median of the runs'
 * figures; its range over the runs goes into its `measured` text.
 *
 * The runs are sequential, never side by side (the machine has two cores), and each run
 * after the first measures only the series the targets read (`targetsOnly`).
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatNum, formatRatio, median } from './harness.ts';
import type { Row, ScenarioName, ScenarioResult, Target } from './rows.ts';

const RUN_SCRIPT = fileURLToPath(new URL('./run.ts', import.meta.url));

/** Where a child run writes its result (`bench/run.ts --result-file <path>`). */
export const RESULT_FILE_FLAG = '--result-file';
/** Asks a child run to measure only what the targets read (see `ScenarioOptions.targetsOnly`). */
export const TARGETS_ONLY_FLAG = '--targets-only';

/**
 * Runs scenario `name` `k` times, one fresh `node --expose-gc --import tsx bench/run.ts`
 * process after the other, and returns the runs' results in order. The children's output
 * goes to this process's stderr. Rejects when a child fails.
 */
export async function runInChildren(name: ScenarioName, k: number, options: { full: boolean; env: NodeJS.ProcessEnv; log?: (line: string) => void }): Promise<ScenarioResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'toolrun-bench-runs-'));
  try {
    const out: ScenarioResult[] = [];
    for (let i = 0; i < k; i++) {
      options.log?.(`${name}: run ${i + 1}/${k}, a fresh process${i > 0 ? ' (the series the targets read)' : ''}`);
      const file = join(dir, `run-${i}.json`);
      const args = ['--expose-gc', '--import', 'tsx', RUN_SCRIPT, name, '--no-write', RESULT_FILE_FLAG, file, ...(options.full ? ['--full'] : []), ...(i > 0 ? [TARGETS_ONLY_FLAG] : [])];
      await new Promise<void>((resolve, reject) => {
        const child = spawn(process.execPath, args, { stdio: ['ignore', 2, 2], env: options.env });
        child.on('error', reject);
        child.on('close', (code, signal) =>
          code === 0 ? resolve() : reject(new Error(`bench: run ${i + 1}/${k} of ${name} exited ${signal ?? String(code)}`)),
        );
      });
      out.push(JSON.parse(readFileSync(file, 'utf8')) as ScenarioResult);
    }
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function rowKey(row: Row): string {
  return `${row.series}\u0000${row.impl}\u0000${row.n}`;
}

/** `'2.6×'` → 2.6 with suffix `×`; `'4.00 ms'` → 4 with suffix ` ms`; anything else → undefined. */
function parseCell(cell: string): { x: number; suffix: string } | undefined {
  const m = /^(-?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?)(×| ?[^\d\s(][^\d(]*)?$/.exec(cell);
  if (m === null) return undefined;
  const x = Number(m[1]!.replace(/,/g, ''));
  return Number.isFinite(x) ? { x, suffix: m[2] ?? '' } : undefined;
}

/** The runs' cells of one column, combined: the median of their numbers when every cell is one number with the same unit, else the cell of the median run. */
function combineCell(cells: readonly (string | undefined)[], medianRun: number): string | undefined {
  const present = cells.filter((c): c is string => c !== undefined);
  if (present.length === 0) return undefined;
  const parsed = present.map(parseCell);
  const first = parsed[0];
  if (first !== undefined && parsed.every((p) => p !== undefined && p.suffix === first.suffix)) {
    const m = median(parsed.map((p) => p!.x));
    return first.suffix === '×' ? formatRatio(m) : `${formatNum(m)}${first.suffix}`;
  }
  return cells[medianRun] ?? present[0];
}

/** The index of the run whose value is the median (the lower middle one for an even count), among the runs that have one. */
function medianIndex(values: readonly (number | null)[]): number {
  const order = values
    .map((v, i) => ({ v, i }))
    .filter((e): e is { v: number; i: number } => e.v !== null)
    .sort((a, b) => a.v - b.v);
  return order.length === 0 ? 0 : order[(order.length - 1) >> 1]!.i;
}

/** One row out of the runs' rows with its key (`undefined`: not measured in that run). */
function combineRow(perRun: readonly (Row | undefined)[]): Row {
  const values = perRun.map((r) => r?.value ?? null);
  const measured = values.filter((v): v is number => v !== null);
  const base = perRun.find((r) => r !== undefined)!;
  if (measured.length === 0) return { ...base, runs: values };
  const mid = medianIndex(values);
  const pick = perRun[mid]!;
  const charts = perRun.map((r) => r?.chart).filter((c): c is number => typeof c === 'number');
  const cols: Record<string, string> = {};
  const keys = [...new Set(perRun.flatMap((r) => (r === undefined ? [] : Object.keys(r.cols))))];
  for (const k of keys) {
    const cell = combineCell(perRun.map((r) => (r?.value != null ? r.cols[k] : undefined)), mid);
    if (cell !== undefined) cols[k] = cell;
  }
  const samples = perRun.reduce((sum, r) => sum + (r?.samples ?? 0), 0);
  const row: Row = {
    ...pick,
    value: median(measured),
    chart: charts.length > 0 ? median(charts) : null,
    cols,
    runs: values,
    ...(samples > 0 ? { samples } : {}),
  };
  if (measured.length >= 2) {
    row.lo = Math.min(...measured);
    row.hi = Math.max(...measured);
  }
  return row;
}

/** One target out of the runs' targets of the same text. */
function combineTarget(perRun: readonly (Target | undefined)[]): Target {
  const base = perRun.find((t) => t !== undefined)!;
  const xs = perRun.map((t) => (t?.x !== undefined && Number.isFinite(t.x) ? t.x : null));
  const measured = xs.filter((x): x is number => x !== null);
  const bound = base.bound;
  if (measured.length === 0 || bound === undefined) {
    // No figure to combine: met when most runs met it.
    const verdicts = perRun.map((t) => t?.met ?? null).filter((m): m is boolean => m !== null);
    const met = verdicts.length === 0 ? null : verdicts.filter(Boolean).length * 2 > verdicts.length;
    return { ...base, met, measured: `${base.measured} (first run; met in ${verdicts.filter(Boolean).length} of ${verdicts.length} runs)` };
  }
  const x = median(measured);
  const mid = medianIndex(xs);
  const met = bound.op === '>=' ? x >= bound.limit : x <= bound.limit;
  // Two decimals: the figure is judged against a bound (3.0× can be 3.04, a miss of ≤ 3).
  const range = measured.length >= 2 ? `, range ${Math.min(...measured).toFixed(2)}× … ${Math.max(...measured).toFixed(2)}×` : '';
  return {
    ...base,
    x,
    met,
    runs: xs,
    measured: `${x.toFixed(2)}×, median of ${measured.length} runs${range}; ${measured.length % 2 === 1 ? 'the median run' : 'the lower middle run'}: ${perRun[mid]!.measured}`,
  };
}

/**
 * Combines the results of several runs of one scenario (the first run measured everything;
 * later ones may hold only some rows). See the module comment for the rules.
 */
export function combineRuns(results: readonly ScenarioResult[]): ScenarioResult {
  const first = results[0];
  if (first === undefined) throw new RangeError('combineRuns needs at least one result');
  if (results.length === 1) return first;
  const keys: string[] = [];
  const byRun = results.map((r) => {
    const map = new Map<string, Row>();
    for (const row of r.rows) {
      const key = rowKey(row);
      if (!map.has(key)) map.set(key, row);
      if (!keys.includes(key)) keys.push(key);
    }
    return map;
  });
  const rows = keys.map((key) => combineRow(byRun.map((m) => m.get(key))));
  const texts: string[] = [];
  for (const r of results) for (const t of r.targets) if (!texts.includes(t.target)) texts.push(t.target);
  const targets = texts.map((text) => combineTarget(results.map((r) => r.targets.find((t) => t.target === text))));
  return {
    ...first,
    description: `${first.description} Median of ${results.length} runs, each in a fresh process (the first measures every series, the others the series the targets read); the range column is the lowest and highest run, a ratio the median of the per-run ratios.`,
    rows,
    targets,
    runs: results.length,
  };
}
