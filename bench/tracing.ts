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
 * @module
 */
import { spawnSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as v from 'valibot';
import { compare, DEFAULT_BUDGET } from './harness.ts';

const VARIANTS = ['off', 'on, API only', 'on, SDK', 'baseline'] as const;
type Variant = (typeof VARIANTS)[number];
const SIZES = [10, 1_000] as const;
const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));

interface LibLike {
  defineTool(definition: object): unknown;
  runTools(calls: readonly object[], options: object): AsyncGenerator<unknown, unknown, undefined>;
}

/** One process: times every size for `variant`; prints one JSON line `{ [n]: ns per batch (median) }`. */
async function child(variant: Variant, baseline: string | undefined): Promise<void> {
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
  for (const n of SIZES) {
    const calls = Array.from({ length: n }, (_, i) => ({ id: `call_${i}`, name: 'work', arguments: { i } }));
    const run = async (): Promise<void> => {
      const gen = lib.runTools(calls, options);
      while ((await gen.next()).done !== true);
    };
    // Warmed up first (the same 200,000 calls at every size), so that no variant is timed while it is being compiled.
    for (let i = 0; i < 200_000 / n; i++) await run();
    const timing = (await compare([{ name: variant, run }], DEFAULT_BUDGET)).get(variant)!;
    if ('error' in timing) throw new Error(timing.error);
    out[n] = timing.median;
  }
  console.log(JSON.stringify(out));
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The variants named in a comma-separated list; a name may hold a comma itself (`on, API only`). */
function variantList(text: string): string[] {
  const names: string[] = [];
  let pending = '';
  for (const piece of text.split(',')) {
    pending = pending === '' ? piece.trim() : `${pending}, ${piece.trim()}`;
    if ((VARIANTS as readonly string[]).includes(pending)) {
      names.push(pending);
      pending = '';
    }
  }
  if (pending !== '') throw new Error(`--only: unknown variant ${JSON.stringify(pending)} (variants: ${VARIANTS.join('; ')})`);
  return names;
}

function main(argv: readonly string[]): void {
  const runsAt = argv.indexOf('--runs');
  const runs = runsAt >= 0 ? Number(argv[runsAt + 1]) : 7;
  const baselineAt = argv.indexOf('--baseline');
  const baseline = baselineAt >= 0 ? argv[baselineAt + 1] : undefined;
  const onlyAt = argv.indexOf('--only');
  const only = onlyAt >= 0 ? variantList(argv[onlyAt + 1]!) : undefined;
  const variants = VARIANTS.filter((name) => (name !== 'baseline' || baseline !== undefined) && (only === undefined || only.includes(name)));
  const results = new Map<Variant, Record<number, number>[]>(variants.map((name) => [name, []]));
  for (let r = 0; r < runs; r++) {
    for (const variant of variants) {
      const args = ['--expose-gc', '--import', 'tsx', fileURLToPath(import.meta.url), '--child', variant];
      if (baseline !== undefined) args.push('--baseline', baseline);
      const done = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8' });
      if (done.status !== 0) throw new Error(`${variant} failed (${done.status}): ${done.stderr}`);
      const line = done.stdout.trim().split('\n').at(-1)!;
      results.get(variant)!.push(JSON.parse(line) as Record<number, number>);
      process.stderr.write(`run ${r + 1}/${runs} ${variant}: ${line}\n`);
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

const childAt = process.argv.indexOf('--child');
if (childAt >= 0) {
  const baselineAt = process.argv.indexOf('--baseline');
  await child(process.argv[childAt + 1] as Variant, baselineAt >= 0 ? process.argv[baselineAt + 1] : undefined);
} else {
  main(process.argv.slice(2));
}
