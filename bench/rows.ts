/**
 * What every scenario returns: one {@link Row} per implementation and size, plus the
 * targets it checks. The terminal table, `docs/benchmarks.md` and the SVG charts are all
 * made from these.
 *
 * @module
 */

/** The named scenarios, in the order `npm run bench` runs them. */
export const SCENARIO_NAMES = ['overhead', 'progress', 'scaling', 'release-latency', 'memory', 'abort', 'stream-start', 'mcp-stdio', 'mcp-http', 'cold-start', 'resume', 'journal', 'tracing'] as const;
export type ScenarioName = (typeof SCENARIO_NAMES)[number];

/** One table row: one implementation at one size. */
export interface Row {
  scenario: ScenarioName;
  /** A sub-table: `parallel`, `runTools K=10`, `cooperative`… */
  series: string;
  /** The implementation: `toolrun`, `floor (Promise.all)`, `pi-agent-core 0.73.1`, … */
  impl: string;
  /** The size on the chart's x axis (calls, sources). */
  n: number;
  /** The unit of `value`, e.g. `µs/call`, `events/s`, `ns/item`, `ms`, `B/call`. */
  unit: string;
  /** The headline figure (a median); `null` when this implementation did not run here. */
  value: number | null;
  /**
   * Lowest and highest of the medians it is the median of (same unit), when there are
   * several: the runs' values when the row comes from several runs ({@link Row.runs}), else
   * the round medians of its one run.
   */
  lo?: number;
  hi?: number;
  /**
   * The value of each run, in run order (`null`: not measured in that run), when the scenario
   * ran in several fresh processes (`npm run bench -- --runs K`, bench/runs.ts); `value` is
   * their median. Absent for a scenario run once.
   */
  runs?: (number | null)[];
  /** How many measurements `value` summarizes. */
  samples?: number;
  /** What the chart plots (log scale): ns per item, or bytes per call for `memory`. */
  chart: number | null;
  /** Further columns, already formatted: ratios, max latency… */
  cols: Record<string, string>;
  /** Why `value` is null, or anything a reader must know about this row. */
  note?: string;
}

/** A target from the issue, checked against the rows. */
export interface Target {
  target: string;
  measured: string;
  /** `null` when the sizes needed were not run (e.g. a filtered or smoke run). */
  met: boolean | null;
  /** The figure the target judges (a ratio, or a difference such as `tracing`'s µs per call), when measured; what several runs are combined on. */
  x?: number;
  /** What `x` must be: at least (`>=`) or at most (`<=`) `limit`. Set together with `x`. */
  bound?: { op: '>=' | '<='; limit: number };
  /** `x` of each run (or round of processes, `tracing`), in run order (`null`: not measured in that run), when the scenario ran in several processes; `x` is their median. */
  runs?: (number | null)[];
}

/** What one scenario produced. */
export interface ScenarioResult {
  name: ScenarioName;
  title: string;
  /** What the scenario measures and how, one paragraph of Markdown. */
  description: string;
  /** Label of the chart's y axis. */
  chartLabel: string;
  /** What `Row.n` counts, for the table's column and the chart's x axis. @default 'N' */
  xLabel?: string;
  rows: Row[];
  targets: Target[];
  /**
   * A dense curve for the chart instead of the rows' points (`cold-start`: every k from 1 to
   * the batches run, where the table keeps k = 1, 2, 3, 5, 10…). `y` in µs; a series marked
   * `reference` is drawn dashed and thin (a target line, not an implementation).
   */
  curve?: { impl: string; x: number; y: number; reference?: boolean }[];
  /** How many fresh processes the figures are the median of (bench/runs.ts); absent: one run, in the bench's own process. */
  runs?: number;
}

/** Options every scenario function takes. */
export interface ScenarioOptions {
  /** Sizes to run (overrides the scenario's defaults). */
  sizes?: readonly number[];
  /** Progress message sink (the terminal); silent when absent. */
  log?: (line: string) => void;
  /**
   * Measure only the series the targets read: set for the second and later runs of a
   * scenario run several times (bench/runs.ts), so that the repeats cost less. A scenario may
   * ignore it (then every run measures everything).
   */
  targetsOnly?: boolean;
}

/** The implementation names used across scenarios (one spelling everywhere). */
export const IMPL = {
  toolrun: 'toolrun',
  toolrunDefault: 'toolrun (maxConcurrency 10)',
  floor: 'floor (Promise.all)',
  floorSeq: 'floor (for…await)',
  floorValidated: 'floor + validation (Promise.all)',
  minimal: 'minimal runner',
  pi: 'pi-agent-core 0.73.1',
  merge: 'toolrun mergeGenerators',
  ix: 'ix merge 7.0.0',
  itMerge: 'it-merge 3.0.15',
  repeater: 'Repeater.merge 3.1.0',
  race: 'Promise.race baseline',
} as const;

/** The row of `impl` at `n` in `series`, if any. */
export function findRow(rows: readonly Row[], series: string, impl: string, n: number): Row | undefined {
  return rows.find((r) => r.series === series && r.impl === impl && r.n === n);
}
