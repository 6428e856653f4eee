/**
 * One fresh process of the `cold-start` scenario: runs `batches` batches of N = 10
 * `{ content, details }` calls through one implementation, one after the other, and prints
 * one JSON line `{ cpu: ns[], wall: ns[] }`, one entry per batch. The modules are imported
 * before the first batch is timed; nothing else runs first.
 *
 *   node --import tsx bench/cold-start-child.ts <toolrun|pi|floor> <batches>
 *
 * @module
 */
import { cpuNs, nowNs, type Window } from './harness.ts';
import { loadPeers } from './peers.ts';
import { detailsBody, makeCalls, makePiBatch, runFloorParallel, runPi, runToolrun, toolrunTool } from './workload.ts';

/** Calls per batch: a real agent turn's size. */
const COLD_N = 10;

const [impl, batchesText] = process.argv.slice(2);
const batches = Number(batchesText);
if (!(Number.isInteger(batches) && batches > 0)) throw new Error(`usage: cold-start-child.ts <toolrun|pi|floor> <batches>, received ${String(batchesText)}`);
const calls = makeCalls(COLD_N);
let run: () => Promise<Window | void>;
if (impl === 'toolrun') {
  const tool = toolrunTool(detailsBody);
  run = () => runToolrun(calls, { tools: [tool] });
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
