/**
 * What tracing costs: the `overhead` workload (one batch of N no-op async-generator calls,
 * each validated against a valibot schema, `maxConcurrency: Infinity`), timed with tracing
 * off and on, each variant in a process of its own:
 *
 *   npx tsx bench/tracing.ts [--runs 7] [--baseline <folder holding a lib/>] [--only off,baseline]
 *
 * - `baseline` (with `--baseline`): the same workload on another copy of `lib/` (e.g. the
 *   commit before the tracing seam, extracted with `git archive`), no tracing;
 * - `off`: this `lib/`, no `tracing` option: `@opentelemetry/api` is never loaded;
 * - `on, API only`: `tracing: openTelemetry()` with `@opentelemetry/api` and no SDK: every
 *   span is a non-recording one, and `context.with` has no context manager behind it — the
 *   cost of toolrun's own tracing path;
 * - `on, SDK`: `openTelemetry()` with a `BasicTracerProvider` of `@opentelemetry/sdk-trace-base`
 *   (every span recorded, then dropped: no span processor) and the
 *   `AsyncLocalStorageContextManager` (what `NodeSDK` installs).
 *
 * Why separate processes: a context manager built on `AsyncLocalStorage` makes every promise
 * of the process pay for async hooks, so the variants cannot share one process the way the
 * `overhead` scenario's implementations do. Each run starts one process per variant, in
 * turn (off, on, on, baseline, then again), and each process warms every size up (200,000
 * calls) then times it with the bench harness (`compare`, the default budget: rounds,
 * median of the round medians, CPU time). Printed per variant and size: the median of the per-process medians,
 * in µs per call, and their lowest and highest.
 *
 * `npm run bench`'s `tracing` scenario (bench/scenarios/tracing.ts) runs the same child
 * processes through {@link tracingProcess}, for `off` and `on, API only` only, and judges the
 * target on them; this script stays the manual tool with every variant.
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as v from 'valibot';
import { compare, DEFAULT_BUDGET, median, type Budget } from './harness.ts';

/** The variants, each timed in processes of its own (the module comment says what each is). */
export const TRACING_VARIANTS = ['off', 'on, API only', 'on, SDK', 'baseline'] as const;
export type TracingVariant = (typeof TRACING_VARIANTS)[number];
const SIZES = [10, 1_000] as const;
/** Calls run before a size is timed, so that no variant is timed while it is being compiled. */
const WARMUP_CALLS = 200_000;
const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const SCRIPT = fileURLToPath(import.meta.url);

interface LibLike {
  defineTool(definition: object): unknown;
  runTools(calls: readonly object[], options: object): AsyncGenerator<unknown, unknown, undefined>;
}

/** What one child process is told: `--child <variant> --sizes 10,1000 --warmup 200000 --budget <json> [--baseline <folder>]`. */
interface ChildArgs {
  variant: TracingVariant;
  sizes: readonly number[];
  warmupCalls: number;
  budget: Budget;
  baseline: string | undefined;
}

/** One process: times every size for `variant`; prints one JSON line `{ [n]: ns per batch (median) }`. */
async function child({ variant, sizes, warmupCalls, budget, baseline }: ChildArgs): Promise<void> {
  const libDir = variant === 'baseline' ? join(resolve(baseline!), 'lib') : join(ROOT, 'lib');
  const lib = (await import(pathToFileURL(join(libDir, 'index.ts')).href)) as LibLike;
  let tracing: unknown;
  if (variant === 'on, API only' || variant === 'on, SDK') {
    const { openTelemetry } = await import('../lib/otel/index.ts');
    if (variant === 'on, SDK') {
      const { context } = await import('@opentelemetry/api');
      const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
      const { BasicTracerProvider } = await import('@opentelemetry/sdk-trace-base');
      context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
      tracing = openTelemetry({ tracer: new BasicTracerProvider().getTracer('bench') });
    } else {
      tracing = openTelemetry();
    }
  }
  const tool = lib.defineTool({
    name: 'work',
    input: v.object({ i: v.number() }),
    // eslint-disable-next-line require-yield -- a no-op generator tool, as in the overhead scenario
    execute: async function* () {
      return 'ok';
    },
  });
  const options: Record<string, unknown> = { tools: [tool], maxConcurrency: Infinity };
  if (tracing !== undefined) options.tracing = tracing;
  const out: Record<number, number> = {};
  for (const n of sizes) {
    const calls = Array.from({ length: n }, (_, i) => ({ id: `call_${i}`, name: 'work', arguments: { i } }));
    const run = async (): Promise<void> => {
      const gen = lib.runTools(calls, options);
      while ((await gen.next()).done !== true);
    };
    // Warmed up first (the same number of calls at every size), so that no variant is timed while it is being compiled.
    for (let i = 0; i < warmupCalls / n; i++) await run();
    const timing = (await compare([{ name: variant, run }], budget)).get(variant)!;
    if ('error' in timing) throw new Error(timing.error);
    out[n] = timing.median;
  }
  console.log(JSON.stringify(out));
}

/** Options of {@link tracingProcess}. */
export interface TracingProcessOptions {
  /** Calls per batch to time, each in turn. @default [10, 1000] */
  sizes?: readonly number[];
  /** The harness budget of the child's `compare`. @default DEFAULT_BUDGET */
  budget?: Budget;
  /** Calls run (in batches of the size) before each size is timed. @default 200000 */
  warmupCalls?: number;
  /** The folder holding the `lib/` the `baseline` variant runs. */
  baseline?: string;
}

/**
 * Runs one fresh process of `variant` (`node --expose-gc --import tsx bench/tracing.ts --child …`)
 * and resolves to its median CPU ns per batch, by batch size; rejects with the end of its
 * stderr when it fails.
 */
export function tracingProcess(variant: TracingVariant, options: TracingProcessOptions = {}): Promise<Record<number, number>> {
  const args = ['--expose-gc', '--import', 'tsx', SCRIPT, '--child', variant];
  args.push('--sizes', (options.sizes ?? SIZES).join(','), '--warmup', String(options.warmupCalls ?? WARMUP_CALLS), '--budget', JSON.stringify(options.budget ?? DEFAULT_BUDGET));
  if (options.baseline !== undefined) args.push('--baseline', options.baseline);
  const proc = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((done, fail) => {
    let out = '';
    let err = '';
    proc.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    proc.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    proc.on('error', fail);
    proc.on('close', (code) => {
      if (code !== 0) fail(new Error(`tracing child "${variant}" exited ${String(code)}: ${err.trim().split('\n').slice(-3).join(' ')}`));
      else done(JSON.parse(out.trim().split('\n').at(-1)!) as Record<number, number>);
    });
  });
}

/** The variants named in a comma-separated list; a name may hold a comma itself (`on, API only`). */
function variantList(text: string): string[] {
  const names: string[] = [];
  let pending = '';
  for (const piece of text.split(',')) {
    pending = pending === '' ? piece.trim() : `${pending}, ${piece.trim()}`;
    if ((TRACING_VARIANTS as readonly string[]).includes(pending)) {
      names.push(pending);
      pending = '';
    }
  }
  if (pending !== '') throw new Error(`--only: unknown variant ${JSON.stringify(pending)} (variants: ${TRACING_VARIANTS.join('; ')})`);
  return names;
}

function flag(argv: readonly string[], name: string): string | undefined {
  const at = argv.indexOf(name);
  return at >= 0 ? argv[at + 1] : undefined;
}

async function main(argv: readonly string[]): Promise<void> {
  const runs = Number(flag(argv, '--runs') ?? 7);
  const baseline = flag(argv, '--baseline');
  const onlyText = flag(argv, '--only');
  const only = onlyText !== undefined ? variantList(onlyText) : undefined;
  const variants = TRACING_VARIANTS.filter((name) => (name !== 'baseline' || baseline !== undefined) && (only === undefined || only.includes(name)));
  const results = new Map<TracingVariant, Record<number, number>[]>(variants.map((name) => [name, []]));
  for (let r = 0; r < runs; r++) {
    for (const variant of variants) {
      const line = await tracingProcess(variant, baseline !== undefined ? { baseline } : {});
      results.get(variant)!.push(line);
      process.stderr.write(`run ${r + 1}/${runs} ${variant}: ${JSON.stringify(line)}\n`);
    }
  }
  console.log(`| variant | N | µs/call (CPU, median of ${runs} processes) | range (per-process medians) |`);
  console.log('| --- | ---: | ---: | --- |');
  for (const n of SIZES) {
    for (const variant of variants) {
      const perCall = results.get(variant)!.map((o) => o[n]! / n / 1e3);
      console.log(`| ${variant} | ${n.toLocaleString('en-US')} | ${median(perCall).toFixed(2)} | ${Math.min(...perCall).toFixed(2)} … ${Math.max(...perCall).toFixed(2)} |`);
    }
  }
}

// Run as a script (the manual tool, or a child process); imported (the bench scenario), do nothing.
if (process.argv[1] !== undefined && resolve(process.argv[1]) === SCRIPT) {
  const argv = process.argv.slice(2);
  const variant = flag(argv, '--child');
  if (variant !== undefined) {
    await child({
      variant: variant as TracingVariant,
      sizes: (flag(argv, '--sizes') ?? SIZES.join(',')).split(',').map(Number),
      warmupCalls: Number(flag(argv, '--warmup') ?? WARMUP_CALLS),
      budget: flag(argv, '--budget') !== undefined ? (JSON.parse(flag(argv, '--budget')!) as Budget) : DEFAULT_BUDGET,
      baseline: flag(argv, '--baseline'),
    });
  } else {
    await main(argv);
  }
}
