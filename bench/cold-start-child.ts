/**
 * One fresh process of the `cold-start` scenario: runs `batches` batches of N = 10
 * `{ content, details }` calls through one implementation, one after the other, and prints
 * one JSON line `{ cpu: ns[], wall: ns[] }`, one entry per batch. The modules are imported
 * before the first batch is timed; nothing else runs first.
 *
 *   node --import tsx bench/cold-start-child.ts <toolrun|pi|floor> <batches> [toolrun module]
 *
 * `toolrun module`: the path of the built library (`index.js`) to run, as a user's program
 * imports it — the scenario builds one (bench/scenarios/cold-start.ts); without it, `lib/`
 * itself runs, as tsx transpiles it.
 *
 * @module
 */
import { pathToFileURL } from 'node:url';
import * as v from 'valibot';
import { cpuNs, nowNs, type Window } from './harness.ts';
import { loadPeers } from './peers.ts';
import { detailsBody, makeCalls, makePiBatch, runFloorParallel, runPi, runToolrun, toolrunTool } from './workload.ts';

/** Calls per batch: a real agent turn's size. */
const COLD_N = 10;

const [impl, batchesText, toolrunModule] = process.argv.slice(2);
const batches = Number(batchesText);
if (!(Number.isInteger(batches) && batches > 0)) throw new Error(`usage: cold-start-child.ts <toolrun|pi|floor> <batches> [toolrun module], received ${String(batchesText)}`);
const calls = makeCalls(COLD_N);
let run: () => Promise<Window | void>;
if (impl === 'toolrun') {
  // The built package when given: its functions are not the ones workload.ts imported from lib/.
  const lib = toolrunModule === undefined ? undefined : ((await import(pathToFileURL(toolrunModule).href)) as typeof import('../lib/index.ts'));
  const tool =
    lib === undefined ? toolrunTool(detailsBody) : lib.defineTool({ name: 'work', input: v.object({ i: v.number() }), execute: (args, ctx) => detailsBody(args, ctx) });
  const runTools = lib?.runTools;
  run = runTools === undefined ? () => runToolrun(calls, { tools: [tool] }) : () => drainRun(runTools(calls, { tools: [tool] }));
} else if (impl === 'pi') {
  const peers = await loadPeers();
  if (peers === undefined) throw new Error('the peers are not installed (npm ci --prefix bench)');
  const batch = makePiBatch(peers, COLD_N, detailsBody);
  run = () => runPi(peers, batch, { mode: 'parallel' });
} else if (impl === 'floor') {
  run = () => runFloorParallel(calls, detailsBody);
} else {
  throw new Error(`unknown implementation ${String(impl)}`);
}

/** Drains one batch of the built package's `runTools`, as `runToolrun` does for `lib/`'s. */
async function drainRun(run: AsyncGenerator<unknown, unknown, undefined>): Promise<void> {
  for (;;) if ((await run.next()).done === true) return;
}

const cpu: number[] = [];
const wall: number[] = [];
for (let b = 0; b < batches; b++) {
  const c0 = cpuNs();
  const t0 = nowNs();
  const own = await run();
  cpu.push(own !== undefined ? own.cpu : cpuNs() - c0);
  wall.push(own !== undefined ? own.wall : nowNs() - t0);
}
console.log(JSON.stringify({ cpu, wall }));
