/**
 * Timing, memory and row helpers shared by the scenarios.
 *
 * Timing goes through mitata's `measure` (warm-up, sampling until a CPU-time budget is
 * spent, outlier trimming, one forced gc before each measurement). Every sample is one
 * whole batch, timed by the scenario's own clock ("manual" mode), so that pi-agent-core
 * can be timed from its first `tool_execution_start` to its `turn_end`, and every
 * implementation's samples mean the same thing.
 *
 * Comparisons are interleaved: {@link compare} runs `rounds` rounds, and in each round
 * measures every implementation once, in an order rotated by one per round, so that a
 * noisy neighbour on the machine hits all implementations alike. The reported value is the
 * median over the rounds of each round's median sample; `lo`/`hi` are the lowest and
 * highest round medians.
 *
 * @module
 */
import { measure } from 'mitata';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Monotonic clock in nanoseconds. */
export function nowNs(): number {
  return performance.now() * 1e6;
}

/**
 * CPU time of this process (every thread: JS, gc helpers) in nanoseconds, µs resolution.
 * Unlike wall time it does not count the time the process waits for a core, which on a
 * shared, loaded machine is most of the noise.
 */
export function cpuNs(): number {
  const c = process.cpuUsage();
  return (c.user + c.system) * 1e3;
}

/** Monotonic clock in milliseconds. */
export function nowMs(): number {
  return performance.now();
}

let gcFn: (() => void) | undefined;

/**
 * A full, synchronous garbage collection. Uses `globalThis.gc` (node `--expose-gc`, which
 * `bench/run.ts` sets by re-executing itself); elsewhere (the vitest smoke spec) it turns
 * the flag on at run time and takes `gc` from a fresh context.
 */
function gc(): void {
  if (gcFn === undefined) {
    const exposed = (globalThis as { gc?: () => void }).gc;
    if (typeof exposed === 'function') gcFn = exposed;
    else {
      setFlagsFromString('--expose-gc');
      gcFn = runInNewContext('gc') as () => void;
    }
  }
  gcFn();
}

/** True when the process was started with `--expose-gc` (the figures the report relies on). */
export function hasExposedGc(): boolean {
  return typeof (globalThis as { gc?: unknown }).gc === 'function';
}

/** Heap in use after two full collections, in bytes. */
export function settledHeap(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/** Yields to the event loop once (lets timers and I/O callbacks run). */
export function tick(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** The median of a non-empty list (the mean of the two middle values for an even count). */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError('median of an empty list');
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** How hard to measure: set once per run by `bench/run.ts`, smaller in the smoke spec. */
export interface Budget {
  /** Interleaved rounds per comparison. Never below 2 in a report run. */
  rounds: number;
  /** mitata's CPU-time budget per implementation and round, in ms. */
  roundMs: number;
  /** Fewest samples mitata takes per implementation and round (1 for a case slower than `roundMs`). */
  minSamples: number;
  /** A peer whose predicted single run exceeds this (ms) is not run at that size. */
  capMs: number;
  /** Repetitions for the scenarios that measure events, heap or latency by hand. */
  repeats: number;
  /**
   * Let mitata force a full gc before each measurement. Off in every preset: on Node 20,
   * allocation-heavy code runs several times slower right after a forced `gc()` (measured
   * here: a 1,000-call toolrun batch 5.7 → 35 ms, pi-agent-core 16 → 41 ms, the floor
   * 0.44 → 0.89 ms), so the first samples after it would measure a cold VM, not the code.
   */
  gc: boolean;
}

/** The default budget of `npm run bench` (every scenario in about 4 minutes on a quiet 2-core machine, `overhead` and `resume` in 3 runs each). */
export const DEFAULT_BUDGET: Budget = { rounds: 3, roundMs: 100, minSamples: 3, capMs: 500, repeats: 3, gc: false };
/** `--full`: the large sizes, more patience for the slow peers. */
export const FULL_BUDGET: Budget = { rounds: 5, roundMs: 300, minSamples: 5, capMs: 5_000, repeats: 5, gc: false };
/** The smoke spec: just enough to produce every row. */
export const SMOKE_BUDGET: Budget = { rounds: 2, roundMs: 1, minSamples: 1, capMs: 2_000, repeats: 2, gc: false };

/** A timed window, in ns: CPU time of the process, and wall time. */
export interface Window {
  cpu: number;
  wall: number;
}

/**
 * One implementation in a comparison. `run` does one whole batch; it may return its own
 * timed {@link Window} (pi-agent-core's, from its first `tool_execution_start` to
 * `turn_end`), else the harness times the whole call.
 */
export interface Case {
  name: string;
  run: () => Promise<Window | void>;
}

/** The measured time of one {@link Case}, in ns per run. */
export interface Timing {
  /** Median over rounds of the round medians of CPU time, ns per run. */
  median: number;
  /** Lowest and highest round median (CPU), ns per run. */
  lo: number;
  hi: number;
  /** The same median for wall time, ns per run. */
  wall: number;
  /** Samples taken in all rounds (warm-up runs not counted). */
  samples: number;
}

/** A case that threw: the error text goes into the row's note. */
export interface Failed {
  error: string;
}

/**
 * Measures every case in `rounds` interleaved rounds with mitata and returns each one's
 * {@link Timing}, or {@link Failed} when it threw (it is then dropped from later rounds).
 * Each case first runs once unmeasured (a warm-up, and a probe: a case slower than
 * `roundMs` takes one sample per round instead of `minSamples`).
 *
 * mitata's samples are CPU time ({@link cpuNs}); wall time is recorded alongside, with
 * mitata's own warm-up runs left out.
 */
export async function compare(cases: readonly Case[], budget: Budget): Promise<Map<string, Timing | Failed>> {
  const cpuRounds = new Map<string, number[]>();
  const wallRounds = new Map<string, number[]>();
  const samples = new Map<string, number>();
  const failed = new Map<string, Failed>();
  const minSamples = new Map<string, number>();
  for (const c of cases) {
    try {
      const ms = await timeOnce(c.run);
      minSamples.set(c.name, ms > budget.roundMs ? 1 : budget.minSamples);
    } catch (error) {
      failed.set(c.name, { error: describeError(error) });
    }
  }
  for (let round = 0; round < budget.rounds; round++) {
    for (let k = 0; k < cases.length; k++) {
      const c = cases[(k + round) % cases.length]!;
      if (failed.has(c.name)) continue;
      const walls: number[] = [];
      try {
        const stats = await measure(
          function* () {
            yield {
              manual: async () => {
                const c0 = cpuNs();
                const t0 = nowNs();
                const own = await c.run();
                const cpu = own !== undefined ? own.cpu : cpuNs() - c0;
                walls.push(own !== undefined ? own.wall : nowNs() - t0);
                return cpu;
              },
            };
          },
          { min_samples: minSamples.get(c.name) ?? budget.minSamples, min_cpu_time: budget.roundMs * 1e6, gc: budget.gc ? gc : false },
        );
        // mitata trims 2 samples at each end past 12; what it ran before its loop was warm-up.
        const loops = stats.samples.length > 12 ? stats.samples.length + 4 : stats.samples.length;
        const measured = walls.slice(Math.max(0, walls.length - loops));
        cpuRounds.set(c.name, [...(cpuRounds.get(c.name) ?? []), stats.p50]);
        wallRounds.set(c.name, [...(wallRounds.get(c.name) ?? []), median(measured.length > 0 ? measured : walls)]);
        samples.set(c.name, (samples.get(c.name) ?? 0) + stats.samples.length);
      } catch (error) {
        failed.set(c.name, { error: describeError(error) });
      }
    }
  }
  const out = new Map<string, Timing | Failed>();
  for (const c of cases) {
    const f = failed.get(c.name);
    const r = cpuRounds.get(c.name);
    if (f !== undefined) out.set(c.name, f);
    else if (r !== undefined) {
      out.set(c.name, { median: median(r), lo: Math.min(...r), hi: Math.max(...r), wall: median(wallRounds.get(c.name)!), samples: samples.get(c.name) ?? 0 });
    }
  }
  return out;
}

/** Runs `fn` once and returns its wall time in ms (used to probe before measuring). */
async function timeOnce(fn: () => Promise<unknown>): Promise<number> {
  const t0 = nowMs();
  await fn();
  return nowMs() - t0;
}

/**
 * Decides which slow peers to skip at larger sizes. A peer's single-run time (its median)
 * is predicted from its last two sizes as a power law (exponent clamped to 1..2.5), or
 * with exponent 2 from one size (an O(N)-per-item merge is O(N²) per run); a prediction
 * above the budget's `capMs` means "not run", and the row says so with the prediction.
 */
export class Cap {
  readonly #points = new Map<string, { n: number; ms: number }[]>();
  constructor(readonly limitMs: number) {}

  /** Records one measured single-run time (ms) of `impl` at size `n`. */
  record(impl: string, n: number, ms: number): void {
    this.#points.set(impl, [...(this.#points.get(impl) ?? []), { n, ms }]);
  }

  /** The predicted single-run time in ms of `impl` at `n`, or undefined with no data yet. */
  predict(impl: string, n: number): number | undefined {
    const pts = this.#points.get(impl);
    if (pts === undefined || pts.length === 0) return undefined;
    const b = pts[pts.length - 1]!;
    let k = 2;
    if (pts.length >= 2) {
      const a = pts[pts.length - 2]!;
      if (b.n > a.n && a.ms > 0 && b.ms > 0) k = Math.log(b.ms / a.ms) / Math.log(b.n / a.n);
      k = Math.min(2.5, Math.max(1, k));
    }
    return b.ms * (n / b.n) ** k;
  }

  /** A note when `impl` should not run at `n`, else undefined. */
  skip(impl: string, n: number): string | undefined {
    const p = this.predict(impl, n);
    if (p === undefined || p <= this.limitMs) return undefined;
    const last = this.#points.get(impl)!.at(-1)!;
    return `capped: not run, predicted ${formatMs(p)} per run (${formatMs(last.ms)} at ${formatInt(last.n)}); cap ${formatMs(this.limitMs)}`;
  }
}

/** An error as one line for a table note. */
function describeError(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  const line = text.split('\n')[0] ?? text;
  return line.length > 140 ? `${line.slice(0, 140)}…` : line;
}

/** 1234567 → "1,234,567". */
export function formatInt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** A duration in ms with a readable unit. */
export function formatMs(ms: number): string {
  if (ms >= 60_000) return `${(ms / 60_000).toFixed(1)} min`;
  if (ms >= 1_000) return `${(ms / 1_000).toFixed(1)} s`;
  if (ms >= 10) return `${ms.toFixed(0)} ms`;
  return `${ms.toFixed(2)} ms`;
}

/** A number with about three significant digits, grouped. */
export function formatNum(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  const a = Math.abs(x);
  if (a >= 999.5) return formatInt(x);
  if (a >= 100) return x.toFixed(0);
  if (a >= 10) return x.toFixed(1);
  if (a >= 1) return x.toFixed(2);
  return x.toPrecision(2);
}

/** A ratio like "3.2×". */
export function formatRatio(x: number): string {
  if (!Number.isFinite(x)) return '–';
  return `${x >= 10 ? x.toFixed(0) : x >= 1 ? x.toFixed(1) : x.toFixed(2)}×`;
}
