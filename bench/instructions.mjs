/**
 * Instructions per call of the headline steady-state workload (N = 1,000
 * parallel calls returning `{ content, details }`), counted by valgrind: a figure the load of a
 * shared machine does not move, for comparing two trees where the CPU-time A/B (bench/ab.ts)
 * is inside its own noise. Plain JavaScript on the built package, so that nothing but the
 * batches runs under valgrind (tsx would transpile in it).
 *
 *   npx tsdown --no-dts -d /tmp/tree-dist          # in each tree
 *   for B in 20 60; do B=$B LIB=/tmp/tree-dist/index.js valgrind --tool=cachegrind --cache-sim=no \
 *     --cachegrind-out-file=/dev/null --smc-check=all-non-file node --single-threaded \
 *     --min-semi-space-size=16 --max-semi-space-size=16 bench/instructions.mjs; done
 *
 * (I refs at B = 60) − (I refs at B = 20), ÷ 40,000: instructions per call, warm-up and process
 * start cancelled out. `--single-threaded` keeps V8's compiler and GC threads from adding a
 * varying count; the fixed young generation keeps scavenges where the allocation puts them.
 * Two runs of one tree agreed within 1.2 %. `LIB` unset: the
 * floor (the same bodies drained by `Promise.all`, as bench/workload.ts `runFloorParallel`).
 * What it cannot see: cache misses, a syscall's or the clock's cost (`Date.now()`).
 */
import * as v from 'valibot';

const N = 1_000;
const B = Number(process.env.B ?? 20);
const calls = Array.from({ length: N }, (_, i) => ({ id: `call_${i}`, name: 'work', arguments: { i } }));
const body = async function* (args) {
  return { content: [{ type: 'text', text: 'ok' }], details: { i: args.i } };
};

async function drain(iterator) {
  for (;;) {
    const step = await iterator.next();
    if (step.done === true) return step.value;
  }
}

if (process.env.LIB === undefined) {
  const ctx = { signal: new AbortController().signal };
  for (let b = 0; b < B; b++) await Promise.all(calls.map((c) => drain(body(c.arguments, ctx))));
} else {
  const lib = await import(process.env.LIB);
  const tool = lib.defineTool({ name: 'work', input: v.object({ i: v.number() }), execute: (args, ctx) => body(args, ctx) });
  const options = { tools: [tool], maxConcurrency: Infinity };
  for (let b = 0; b < B; b++) await drain(lib.runTools(calls, options));
}
