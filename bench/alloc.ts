/**
 * Allocation per call of one 1,000-call no-op batch (the `overhead` workloads), in steady
 * state: run it as
 *
 *   node --min-semi-space-size=64 --max-semi-space-size=64 --expose-gc --import tsx bench/alloc.ts
 *
 * `heapUsed` before and after each batch; the difference over N is what the batch allocated
 * per call. No gc is forced between batches (a full gc before each batch put
 * toolrun in a state it is never in otherwise, and added ≈ 600 B/call to it and nothing to
 * the floor); the large young generation makes a scavenge rare (one every few dozen
 * batches), and a batch a scavenge fell in shows as a drop of `heapUsed` and is left out.
 * One gc at the start only, after `ALLOC_WARMUP` (default 300) warm-up batches of every
 * case; then `ALLOC_ROUNDS` (default 60) rounds, the cases interleaved. Printed: the median
 * over the kept batches, and the 10th and 90th percentiles. (The inspector's sampling heap
 * profiler gives a lower figure for toolrun: it misses short-lived objects.)
 *
 * @module
 */
import { detailsBody, makeCalls, noopBody, runFloorParallel, runToolrun, toolrunTool } from './workload.ts';

const N = Number(process.env.ALLOC_N ?? 1_000);
const ROUNDS = Number(process.env.ALLOC_ROUNDS ?? 60);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc (see the header of bench/alloc.ts)');

const calls = makeCalls(N);
const details = toolrunTool(detailsBody);
const plain = toolrunTool(noopBody);
const cases: Record<string, () => Promise<void>> = {
  'floor, { content, details }': () => runFloorParallel(calls, detailsBody),
  'toolrun, { content, details }': () => runToolrun(calls, { tools: [details], maxConcurrency: Infinity }),
  'toolrun (maxConcurrency 10), { c, d }': () => runToolrun(calls, { tools: [details] }),
  "floor, 'ok'": () => runFloorParallel(calls, noopBody),
  "toolrun, 'ok'": () => runToolrun(calls, { tools: [plain], maxConcurrency: Infinity }),
};

/** Bytes per call one batch allocated, or `undefined` when a scavenge fell in it. */
async function once(run: () => Promise<void>): Promise<number | undefined> {
  const before = process.memoryUsage().heapUsed;
  await run();
  const after = process.memoryUsage().heapUsed;
  return after >= before ? (after - before) / N : undefined;
}

for (let i = 0; i < Number(process.env.ALLOC_WARMUP ?? 300); i++) for (const run of Object.values(cases)) await run();
gc();
const samples = new Map<string, number[]>(Object.keys(cases).map((k) => [k, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, run] of Object.entries(cases)) {
    const bytes = await once(run);
    if (bytes !== undefined) samples.get(name)!.push(bytes);
  }
}
const at = (sorted: number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
for (const [name, values] of samples) {
  values.sort((a, b) => a - b);
  console.log(
    `${name.padEnd(40)} ${Math.round(at(values, 0.5))} B/call allocated (p10 ${Math.round(at(values, 0.1))} … p90 ${Math.round(at(values, 0.9))}; ${values.length} of ${ROUNDS} batches kept) at N=${N}`,
  );
}
