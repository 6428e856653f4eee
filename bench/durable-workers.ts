/**
 * Queue mode on more than one worker process: how a durable batch's throughput grows with the
 * number of workers dequeuing its calls (`registerDurableBatch({ queueName })`, one
 * PostgreSQL). This process is the orchestrator (it starts the batches and dequeues nothing);
 * for each K of `--workers` it starts K worker processes (bench/durable-workers-app.ts,
 * bundled), each with its own executor id and the queue's per-worker concurrency
 * `--concurrency`, runs one untimed warm-up batch, then one batch of `--calls` calls of a tool
 * that waits `--tool-ms` ms, timed from `start` to its result; then kills them. Rounds rotate
 * the order of the K's, so a noisy neighbour on the machine hits every K alike.
 *
 *   npm run bench:workers -- [--calls 2000] [--workers 1,2,4] [--runs 3] [--concurrency 2] [--poll-ms 50] [--tool-ms 20]
 *
 * Printed per K: calls/s over the runs (median [lowest – highest]), the CPU each call cost
 * (ms per call, median over the runs: orchestrator, workers, PostgreSQL, their sum — the
 * machine's cores are the ceiling once workers stop being bound by their own concurrency),
 * and the ratios of the medians 2/1 and 4/1 (with the range from the runs' extremes). Also the
 * DBOS operations each call leaves in the system database (rows of `operation_outputs`: the
 * orchestrator's steps per call, plus one call workflow's).
 *
 * A worker is bound by its concurrency and the queue's polling: it claims up to
 * `--concurrency` calls per poll (every `--poll-ms` ms at the least), so one worker runs at
 * most about concurrency / max(poll interval, a call's time) calls per second.
 *
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DBOS } from '@dbos-inc/dbos-sdk';
import { build } from 'esbuild';
import { startPostgres } from '../lib/dbos/postgres.ts';
import { batch, callsOf, configure, QUEUE } from './durable-workers-app.ts';
import { median } from './harness.ts';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '2000' },
    workers: { type: 'string', default: '1,2,4' },
    runs: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '2' },
    'poll-ms': { type: 'string', default: '50' },
    'tool-ms': { type: 'string', default: '20' },
  },
});
const N = Number(values.calls);
const KS = values.workers.split(',').map(Number);
const RUNS = Number(values.runs);
const CONCURRENCY = Number(values.concurrency);
const POLL_MS = Number(values['poll-ms']);
for (const [name, x] of [['calls', N], ['runs', RUNS], ['concurrency', CONCURRENCY], ['poll-ms', POLL_MS], ...KS.map((k) => ['workers', k] as const)] as const) {
  if (!Number.isInteger(x) || x < 1) throw new TypeError(`--${name} must be a positive integer, received ${String(x)}`);
}

const TICK_MS = 1000 / 100; // USER_HZ: /proc's CPU times are in ticks of 10 ms

/** utime + stime (and, with `children`, cutime + cstime: children it waited for) of `pid`, in ms; 0 when it is gone. */
function cpuOfPid(pid: number, children = false): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields after the name start at field 3 (state): utime is field 14, stime 15, cutime 16, cstime 17.
    const ticks = Number(f[11]) + Number(f[12]) + (children ? Number(f[13]) + Number(f[14]) : 0);
    return ticks * TICK_MS;
  } catch {
    return 0;
  }
}

/** CPU of the PostgreSQL server: the postmaster, its live children (the backends), and the children it reaped. */
function cpuOfPostgres(postmaster: number): number {
  let total = cpuOfPid(postmaster, true);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === postmaster) total += cpuOfPid(Number(entry));
    } catch {
      // Exited while listed.
    }
  }
  return total;
}

const ownCpu = (): number => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};

const bundle = fileURLToPath(new URL('../.tmp/bench/durable-workers-app.mjs', import.meta.url));
await build({ entryPoints: [fileURLToPath(new URL('./durable-workers-app.ts', import.meta.url))], bundle: true, platform: 'node', format: 'esm', packages: 'external', outfile: bundle, logLevel: 'warning' });

const pg = await startPostgres();
const url = pg.databaseUrl('toolrun_bench_workers');
const postmaster = Number(readFileSync(join(pg.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
const children = new Set<ChildProcess>();

/** Starts worker `name`; resolves once it printed `ready`. */
function startWorker(name: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [bundle], {
    env: { ...process.env, TOOLRUN_BENCH_ROLE: 'worker', TOOLRUN_BENCH_DB: url, TOOLRUN_BENCH_EXECUTOR: name, TOOLRUN_BENCH_TOOL_MS: values['tool-ms'] },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => d.toString().includes('ready') && resolve(child));
    child.on('exit', (code) => {
      children.delete(child);
      reject(new Error(`worker ${name} exited (${code}) before it was ready: ${err.slice(-2000)}`));
    });
  });
}

async function stop(workers: ChildProcess[]): Promise<void> {
  await Promise.all(
    workers.map(
      (w) =>
        new Promise<void>((resolve) => {
          if (w.exitCode !== null || w.signalCode !== null) return resolve();
          w.once('exit', () => resolve());
          w.kill('SIGKILL');
        }),
    ),
  );
}

interface Sample {
  callsPerSecond: number;
  /** CPU ms per call: orchestrator, workers, PostgreSQL. */
  cpu: { orchestrator: number; workers: number; postgres: number };
}

let batchNo = 0;
/** One timed batch of `N` calls on `k` fresh workers (after a warm-up batch). */
async function sample(k: number, round: number): Promise<Sample> {
  const workers = await Promise.all(Array.from({ length: k }, (_, n) => startWorker(`w${k}-${round}-${n}`)));
  try {
    await batch.run(callsOf(Math.min(200, N)), { workflowId: `warm-${batchNo++}` });
    const cpu0 = { o: ownCpu(), w: workers.map((w) => cpuOfPid(w.pid!)), p: cpuOfPostgres(postmaster) };
    const t0 = performance.now();
    const id = `timed-${batchNo++}`;
    const result = await batch.run(callsOf(N), { workflowId: id });
    const ms = performance.now() - t0;
    const workersCpu = workers.reduce((sum, w, n) => sum + cpuOfPid(w.pid!) - cpu0.w[n]!, 0);
    const cpu = { orchestrator: (ownCpu() - cpu0.o) / N, workers: workersCpu / N, postgres: (cpuOfPostgres(postmaster) - cpu0.p) / N };
    if (result.messages.length !== N || result.messages.some((m, i) => m.toolCallId !== `c${i}` || m.isError === true)) throw new Error(`batch ${id}: the results are not the ${N} calls' own, in call order`);
    if (round === 0 && k === KS[0]) rowsPerCall = (await DBOS.listWorkflowSteps(id))!.length / N + (await DBOS.listWorkflowSteps(`${id}:call:0`))!.length;
    return { callsPerSecond: (N * 1000) / ms, cpu };
  } finally {
    await stop(workers);
  }
}

let rowsPerCall = NaN;
const samples = new Map<number, Sample[]>(KS.map((k) => [k, []]));
try {
  await DBOS.migrate(url);
  configure(url, 'orchestrator', false);
  await DBOS.launch();
  await DBOS.registerQueue(QUEUE, { workerConcurrency: CONCURRENCY, minPollingIntervalMs: POLL_MS, onConflict: 'always_update' });
  console.log(`queue mode on K workers: ${N} calls of a ${values['tool-ms']} ms I/O-bound tool per batch, worker concurrency ${CONCURRENCY}, queue polling ${POLL_MS} ms, ${RUNS} runs; PostgreSQL ${pg.version}`);
  for (let round = 0; round < RUNS; round++) {
    const order = KS.map((_, n) => KS[(n + round) % KS.length]!);
    for (const k of order) {
      const s = await sample(k, round);
      samples.get(k)!.push(s);
      console.log(`  run ${round + 1}, ${k} worker${k === 1 ? '' : 's'}: ${s.callsPerSecond.toFixed(0)} calls/s`);
    }
  }
} finally {
  await stop([...children]);
  await DBOS.shutdown();
  await pg.stop();
}

const f0 = (x: number): string => x.toFixed(0);
const f2 = (x: number): string => x.toFixed(2);
console.log(`\n  workers   calls/s median [lowest – highest]   CPU ms per call: orchestrator  workers  PostgreSQL  total`);
for (const k of KS) {
  const s = samples.get(k)!;
  const rate = s.map((x) => x.callsPerSecond);
  const c = (f: (x: Sample['cpu']) => number): number => median(s.map((x) => f(x.cpu)));
  console.log(
    `  ${String(k).padStart(7)}   ${f0(median(rate)).padStart(7)} [${f0(Math.min(...rate))} – ${f0(Math.max(...rate))}]`.padEnd(48) +
      `${f2(c((x) => x.orchestrator)).padStart(27)}  ${f2(c((x) => x.workers)).padStart(7)}  ${f2(c((x) => x.postgres)).padStart(10)}  ${f2(c((x) => x.orchestrator + x.workers + x.postgres)).padStart(5)}`,
  );
}
const one = samples.get(1)?.map((x) => x.callsPerSecond);
if (one !== undefined) {
  for (const k of KS.filter((k) => k > 1)) {
    const r = samples.get(k)!.map((x) => x.callsPerSecond);
    console.log(`  ${k}/1: ${f2(median(r) / median(one))}× [${f2(Math.min(...r) / Math.max(...one))} – ${f2(Math.max(...r) / Math.min(...one))}]`);
  }
}
console.log(`  DBOS operations per call (operation_outputs rows: the orchestrator's per call + one call workflow's): ${rowsPerCall.toFixed(2)}`);
