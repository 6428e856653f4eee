/**
 * `runTools` of several checkouts side by side in one process: the in-process A/B for
 * steady-state changes too small for `npm run bench` to resolve. Each tree's `lib/index.ts`
 * is imported; every round runs each implementation (and the floor) in an order rotated
 * per round, as blocks of batches; CPU over a block ÷ the calls in it is one sample.
 *
 *   git worktree add --detach /tmp/perf-old <commit>
 *   ln -s "$PWD/node_modules" /tmp/perf-old/node_modules
 *   node --import tsx bench/ab.ts /tmp/perf-old .
 *
 * Environment: `AB_N` calls per batch (default 1,000), `AB_ROUNDS` (16), `AB_BLOCKS` blocks
 * per implementation per round (3), `AB_BATCHES` batches per block (10), `AB_WORKLOAD`
 * `details` (`{ content, details }`, default) or `ok`. Printed per implementation: the
 * median µs of CPU per call over every block, p10 … p90, and the ratio to the floor's
 * median. On a shared machine run it more than once and quote the load (`uptime`).
 *
 * @module
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as v from 'valibot';
import type { RunToolsOptions, Tool, ToolCall } from '../lib/index.ts';
import { cpuNs } from './harness.ts';
import { detailsBody, makeCalls, noopBody, runFloorParallel } from './workload.ts';

/** What the script uses of a tree's `lib/index.ts`. */
interface TreeLib {
  defineTool: (definition: { name: string; input: unknown; execute: (args: { i: number }, ctx: unknown) => unknown }) => Tool;
  runTools: (calls: ToolCall[], options: RunToolsOptions) => AsyncGenerator<unknown, unknown, undefined>;
}

const trees = process.argv.slice(2);
if (trees.length === 0) throw new Error('usage: node --import tsx bench/ab.ts <tree> [<tree> …] (see the header of bench/ab.ts)');
const N = Number(process.env.AB_N ?? 1_000);
const ROUNDS = Number(process.env.AB_ROUNDS ?? 16);
const BLOCKS = Number(process.env.AB_BLOCKS ?? 3);
const BATCHES = Number(process.env.AB_BATCHES ?? 10);
const body = process.env.AB_WORKLOAD === 'ok' ? noopBody : detailsBody;
const calls = makeCalls(N);
const input = v.object({ i: v.number() });

const cases: { name: string; run: () => Promise<void> }[] = [{ name: 'floor', run: () => runFloorParallel(calls, body) }];
for (const tree of trees) {
  const lib = (await import(pathToFileURL(resolve(tree, 'lib/index.ts')).href)) as TreeLib;
  const tool = lib.defineTool({ name: 'work', input, execute: (args, ctx) => body(args, ctx as never) });
  const options: RunToolsOptions = { tools: [tool], maxConcurrency: Infinity };
  cases.push({
    name: tree,
    run: async () => {
      const run = lib.runTools(calls, options);
      while ((await run.next()).done !== true);
    },
  });
}

for (let i = 0; i < 200; i++) for (const c of cases) await c.run();
const samples = new Map<string, number[]>(cases.map((c) => [c.name, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (let k = 0; k < cases.length; k++) {
    const c = cases[(k + round) % cases.length]!;
    for (let block = 0; block < BLOCKS; block++) {
      const c0 = cpuNs();
      for (let b = 0; b < BATCHES; b++) await c.run();
      samples.get(c.name)!.push((cpuNs() - c0) / 1e3 / BATCHES / N);
    }
  }
}
const at = (sorted: number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const floor = at([...samples.get('floor')!].sort((a, b) => a - b), 0.5);
for (const [name, values] of samples) {
  values.sort((a, b) => a - b);
  const median = at(values, 0.5);
  console.log(`${name.padEnd(32)} ${median.toFixed(2)} µs/call (p10 ${at(values, 0.1).toFixed(2)} … p90 ${at(values, 0.9).toFixed(2)}), ${(median / floor).toFixed(2)}× the floor`);
}
