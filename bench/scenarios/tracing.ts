/**
 * Scenario `tracing`: what tracing with `@opentelemetry/api` alone (no SDK registered) adds
 * per call over tracing off (the target: at most +0.3 µs per call).
 *
 * The workload of bench/tracing.ts (one batch of N no-op async-generator calls returning
 * `'ok'`, each validated against a valibot schema, `maxConcurrency: Infinity`), in the same
 * child processes, run through its {@link tracingProcess}: `off` (no `tracing` option,
 * `@opentelemetry/api` never loaded) and `on, API only` (`tracing: openTelemetry()`, no
 * provider, no parent span). One process per variant and round, because a context manager
 * built on `AsyncLocalStorage` would slow every other implementation of a shared process;
 * the two variants alternate, their order swapped every round (off, on; on, off; …), so a
 * change of load hits both. Each process warms every size up, then times it with the
 * harness (`compare`, the run's budget, CPU time).
 *
 * Rows: µs per call, the median over the processes of their medians; range: the lowest and
 * highest process. The target reads N = 1,000: the median over the rounds of the difference
 * between the round's two processes. The SDK and `baseline` variants stay in the manual tool
 * (`npx tsx bench/tracing.ts`).
 *
 * @module
 */
import { formatInt, formatNum, median, type Budget } from '../harness.ts';
import type { Row, ScenarioOptions, ScenarioResult, Target } from '../rows.ts';
import { tracingProcess, type TracingVariant } from '../tracing.ts';

/** Calls per batch in a default run. */
export const TRACING_SIZES = [10, 1_000] as const;
const SERIES = 'N calls, one process per variant';
const VARIANTS = [
  { variant: 'off', impl: 'toolrun: tracing off' },
  { variant: 'on, API only', impl: 'toolrun: tracing on, API only' },
] as const satisfies readonly { variant: TracingVariant; impl: string }[];
/** The size the target reads. */
const TARGET_N = 1_000;
/** What tracing with the API alone may add, µs per call. */
const LIMIT = 0.3;
const TARGET = `tracing with @opentelemetry/api alone (no SDK): at most +${LIMIT} µs per call over tracing off, N = ${formatInt(TARGET_N)}`;

/**
 * Runs `tracing` at `sizes` (default 10 and 1,000 calls): `runs` rounds of one process per
 * variant (default 2 × `budget.repeats` − 1: 5, about 3 s a process on a quiet machine, so
 * about 30 s in all); `warmupCalls` calls before each size is timed (default 200,000).
 */
export async function tracing(budget: Budget, options: ScenarioOptions & { runs?: number; warmupCalls?: number } = {}): Promise<ScenarioResult> {
  const sizes = options.sizes ?? TRACING_SIZES;
  const runs = options.runs ?? Math.max(1, 2 * budget.repeats - 1);
  /** Per variant, per round: ns per batch by size; `null` where that process failed. */
  const results = new Map<TracingVariant, (Record<number, number> | null)[]>(VARIANTS.map((v) => [v.variant, []]));
  const failed = new Map<TracingVariant, string>();
  for (let r = 0; r < runs; r++) {
    const order = r % 2 === 0 ? VARIANTS : [...VARIANTS].reverse();
    for (const { variant } of order) {
      options.log?.(`tracing "${variant}" process ${r + 1}/${runs}`);
      try {
        results.get(variant)![r] = await tracingProcess(variant, { sizes, budget, ...(options.warmupCalls !== undefined ? { warmupCalls: options.warmupCalls } : {}) });
      } catch (error) {
        results.get(variant)![r] = null;
        failed.set(variant, error instanceof Error ? error.message : String(error));
      }
    }
  }
  /** µs per call of each round's process (`null`: failed). */
  const perCall = (variant: TracingVariant, n: number): (number | null)[] => results.get(variant)!.map((o) => (o != null && o[n] !== undefined ? o[n] / n / 1e3 : null));
  const rows: Row[] = [];
  for (const n of sizes) {
    const off = perCall('off', n);
    for (const { variant, impl } of VARIANTS) {
      const each = perCall(variant, n);
      const values = each.filter((x): x is number => x !== null);
      if (values.length === 0) {
        rows.push({ scenario: 'tracing', series: SERIES, impl, n, unit: 'µs/call (CPU)', value: null, chart: null, cols: {}, note: `failed: ${failed.get(variant) ?? 'no process ran'}` });
        continue;
      }
      const value = median(values);
      const diffs = pairDiffs(each, off);
      rows.push({
        scenario: 'tracing',
        series: SERIES,
        impl,
        n,
        unit: 'µs/call (CPU)',
        value,
        lo: Math.min(...values),
        hi: Math.max(...values),
        runs: each,
        samples: values.length,
        chart: value * 1e3,
        cols: { 'over off, µs/call': variant === 'off' || diffs.length === 0 ? '–' : signed(median(diffs)) },
        ...(failed.has(variant) ? { note: `a process failed: ${failed.get(variant)!}` } : {}),
      });
    }
  }
  return {
    name: 'tracing',
    title: 'tracing: @opentelemetry/api alone, over tracing off',
    description:
      'One batch of N no-op generator calls returning `\'ok\'` (valibot-validated, `maxConcurrency: Infinity`), the workload of `bench/tracing.ts`, in fresh processes: ' +
      `\`tracing off\` (no \`tracing\` option) and \`tracing on, API only\` (\`tracing: openTelemetry()\` with \`@opentelemetry/api\` and no SDK, no parent span), one process per variant and round, ${formatInt(runs)} rounds, the two alternating (order swapped every round). ` +
      'Each process warms up, then times each size with the harness (CPU time). Value: µs per call, median over the processes; range: lowest and highest process. ' +
      '`over off` is the median over rounds of the difference between the round\'s two processes. With the SDK and against an older `lib/`: `npx tsx bench/tracing.ts --baseline <folder>`.',
    chartLabel: 'ns per call',
    rows,
    targets: [tracingTarget(perCall('on, API only', TARGET_N), perCall('off', TARGET_N), sizes)],
    runs,
  };
}

/** `on − off` of each round where both processes ran. */
function pairDiffs(on: readonly (number | null)[], off: readonly (number | null)[]): number[] {
  const out: number[] = [];
  for (let r = 0; r < on.length; r++) if (on[r] != null && off[r] != null) out.push(on[r]! - off[r]!);
  return out;
}

function signed(x: number): string {
  return `${x >= 0 ? '+' : '−'}${formatNum(Math.abs(x))}`;
}

function tracingTarget(on: readonly (number | null)[], off: readonly (number | null)[], sizes: readonly number[]): Target {
  const diffs = pairDiffs(on, off);
  if (!sizes.includes(TARGET_N) || diffs.length === 0) return { target: TARGET, measured: 'not measured in this run', met: null };
  const x = median(diffs);
  const onValues = on.filter((v): v is number => v !== null);
  const offValues = off.filter((v): v is number => v !== null);
  return {
    target: TARGET,
    measured:
      `on ${formatNum(median(onValues))} vs off ${formatNum(median(offValues))} µs/call: ${signed(x)} µs/call ` +
      `(median over ${formatInt(diffs.length)} rounds; rounds ${signed(Math.min(...diffs))} … ${signed(Math.max(...diffs))})`,
    met: x <= LIMIT,
    x,
    bound: { op: '<=', limit: LIMIT },
    runs: on.map((v, r) => (v != null && off[r] != null ? v - off[r]! : null)),
  };
}
