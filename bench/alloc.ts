/**
 * Allocation per call of one 1,000-call no-op batch (the `overhead` workload), measured with
 * no gc inside the batch: run it as
 *
 *   node --min-semi-space-size=64 --max-semi-space-size=64 --expose-gc --import tsx bench/alloc.ts
 *
 * A full gc, then `heapUsed` before and after one batch; the difference over N is what the
 * batch allocated per call (nothing is collected in between: the young generation holds it
 * all). Median of 9 batches after `ALLOC_WARMUP` (default 300) warm-up batches, floor and
 * toolrun interleaved. (The inspector's sampling heap profiler gives a lower figure for toolrun,
 * see docs/bench/findings.md §0.)
 *
 * @module
 */
import { makeCalls, noopBody, runFloorParallel, runToolrun, toolrunTool } from './workload.ts';

const N = Number(process.env.ALLOC_N ?? 1_000);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc (see the header of bench/alloc.ts)');

const calls = makeCalls(N);
const tool = toolrunTool(noopBody);
const cases: Record<string, () => Promise<void>> = {
  floor: () => runFloorParallel(calls, noopBody),
  toolrun: () => runToolrun(calls, { tools: [tool], maxConcurrency: Infinity }),
  'toolrun (maxConcurrency 10)': () => runToolrun(calls, { tools: [tool] }),
};

async function once(run: () => Promise<void>): Promise<number> {
  gc!();
  const before = process.memoryUsage().heapUsed;
  await run();
  return (process.memoryUsage().heapUsed - before) / N;
}

for (let i = 0; i < Number(process.env.ALLOC_WARMUP ?? 300); i++) for (const run of Object.values(cases)) await run();
const samples = new Map<string, number[]>(Object.keys(cases).map((k) => [k, []]));
for (let round = 0; round < 9; round++) {
  for (const [name, run] of Object.entries(cases)) samples.get(name)!.push(await once(run));
}
for (const [name, values] of samples) {
  values.sort((a, b) => a - b);
  console.log(`${name.padEnd(28)} ${Math.round(values[4]!)} B/call allocated (range ${Math.round(values[0]!)} … ${Math.round(values[8]!)}) at N=${N}`);
}
