/**
 * A 10,000-call durable batch on DBOS and PostgreSQL: the memory it holds per call, and how
 * long its recovery takes after `kill -9` (the figures docs/durable.md, "What a durable batch
 * costs", quotes). Each measurement runs in a child process of its own:
 *
 * - memory: `registerDurableBatch` (policy `'unknown'`, `maxConcurrency: 8`) over N no-op calls,
 *   for N = 1,000 and `--calls`; the last call's tool reads the heap after full collections
 *   (every earlier call ended, its result journaled and held by the run): (that − the heap
 *   before the batch) ÷ N is what the batch holds per call; also the child's peak RSS.
 * - recovery, under each policy (`'run-again'`, `'unknown'`): the same batch of `--calls`, killed with SIGKILL once the journal holds half the
 *   results (the parent polls `toolrun.journal`); a second child launches DBOS, which recovers
 *   the workflow: the time from its `DBOS.launch()` to the batch's result, and from the
 *   parent's spawn to that child's exit (its start-up included), with how many calls replayed.
 *
 *   npx tsx bench/durable-big.ts [--calls 10000] [--runs 3]
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';
import { DBOS } from '@dbos-inc/dbos-sdk';
import { DBOSExecutor } from '@dbos-inc/dbos-sdk/internal/dbos-executor';
import * as v from 'valibot';
import { defineTool, type ToolCall } from '../lib/index.ts';
import { registerDurableBatch } from '../lib/dbos/index.ts';
import { startPostgres } from '../lib/dbos/postgres.ts';
import { median, settledHeap } from './harness.ts';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '10000' },
    runs: { type: 'string', default: '3' },
    child: { type: 'string' },
    url: { type: 'string' },
    id: { type: 'string' },
    policy: { type: 'string', default: 'unknown' },
  },
});
const N = Number(values.calls);

let heapAtLast: number | undefined;
let lastIndex = -1;
/** When this process first ran a tool (performance.now()). */
let firstToolAt: number | undefined;
const noop = defineTool({
  name: 'noop',
  input: v.object({ i: v.number() }),
  async execute({ i }) {
    firstToolAt ??= performance.now();
    if (i === lastIndex) heapAtLast = settledHeap();
    return `done ${i}`;
  },
});
const callsOf = (n: number): ToolCall[] => Array.from({ length: n }, (_, i) => ({ id: `c${i}`, name: 'noop', arguments: { i } }));

if (values.child !== undefined) {
  // A child: one batch (or one recovery) on the parent's PostgreSQL; prints one JSON line.
  const batch = registerDurableBatch({ name: 'big-batch', tools: [noop], options: { maxConcurrency: 8 }, interruptedCalls: values.policy === 'run-again' ? 'run-again' : 'unknown' });
  DBOS.setConfig({ name: 'toolrun-bench-big', systemDatabaseUrl: values.url!, logLevel: 'error', applicationVersion: 'bench-big' });
  const calls = callsOf(N);
  if (values.child === 'memory') {
    await DBOS.launch();
    await batch.run(callsOf(10)); // the table, the pool and the code paths warmed up
    lastIndex = N - 1;
    const before = settledHeap();
    const t0 = performance.now();
    const result = await batch.run(calls);
    const ms = performance.now() - t0;
    if (result.messages.length !== N) throw new Error(`${result.messages.length} results for ${N} calls`);
    console.log(JSON.stringify({ bytesPerCall: (heapAtLast! - before) / N, ms, peakRssMb: process.resourceUsage().maxRSS / 1024 }));
  } else if (values.child === 'run') {
    await DBOS.launch();
    await batch.run(calls, { workflowId: values.id! });
  } else {
    const t0 = performance.now();
    await DBOS.launch(); // recovers the killed child's workflow
    const result = await DBOS.retrieveWorkflow<{ messages: unknown[]; outcomes: string[] }>(values.id!).getResult();
    console.log(JSON.stringify({ launchToResultMs: performance.now() - t0, launchToFirstCallMs: (firstToolAt ?? NaN) - t0, results: result.messages.length, interrupted: result.outcomes.filter((o) => o === 'interrupted').length }));
  }
  await DBOS.shutdown();
  process.exit(0);
}

/** Runs this file as a child; resolves to its last stdout line, parsed. */
function child(args: string[], onSpawn?: (kill: () => void) => void): Promise<{ out: Record<string, number> | undefined; ms: number; signal: NodeJS.Signals | null }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const proc = spawn(process.execPath, ['--import', 'tsx', import.meta.filename, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
    proc.on('error', reject);
    proc.on('exit', (code, signal) => {
      const ms = performance.now() - t0;
      if (code !== 0 && signal === null) reject(new Error(`child ${args.join(' ')} exited with ${code}`));
      const last = out.trim().split('\n').at(-1);
      resolve({ out: last === undefined || last === '' ? undefined : (JSON.parse(last) as Record<string, number>), ms, signal });
    });
    onSpawn?.(() => proc.kill('SIGKILL'));
  });
}

const pg = await startPostgres();
try {
  const url = pg.databaseUrl('bench_big');
  const memory: Array<{ n: number; bytes: number[]; rss: number[]; ms: number[] }> = [];
  for (const n of [1000, N]) {
    const row = { n, bytes: [] as number[], rss: [] as number[], ms: [] as number[] };
    for (let r = 0; r < Number(values.runs); r++) {
      const { out } = await child(['--child', 'memory', '--calls', String(n), '--url', url]);
      row.bytes.push(out!.bytesPerCall!);
      row.rss.push(out!.peakRssMb!);
      row.ms.push(out!.ms!);
    }
    memory.push(row);
  }

  // Recovery: the parent reads the journal through a DBOS of its own (launched: the pool exists; it runs no workflow of the children's application).
  DBOS.setConfig({ name: 'toolrun-bench-big-parent', systemDatabaseUrl: url, logLevel: 'error', applicationVersion: 'bench-big-parent' });
  await DBOS.launch();
  const pool = (DBOSExecutor.globalInstance as unknown as { systemDatabase: { pool: { query(t: string, v?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }> } } }).systemDatabase.pool;
  const ended = async (id: string): Promise<number> =>
    Number((await pool.query('SELECT count(*)::int AS n FROM toolrun.journal WHERE workflow_id = $1 AND idx >= 0 AND result IS NOT NULL', [id])).rows[0]!.n);
  const recoveries: Record<string, Array<{ atKill: number; launchToResultMs: number; launchToFirstCallMs: number; spawnToExitMs: number; interrupted: number }>> = { 'run-again': [], unknown: [] };
  for (let r = 0; r < Number(values.runs) * 2; r++) {
    const policy = r % 2 === 0 ? 'run-again' : 'unknown';
    const id = `big-${r}`;
    const killed = await child(['--child', 'run', '--calls', String(N), '--url', url, '--id', id, '--policy', policy], (kill) => {
      void (async () => {
        while ((await ended(id).catch(() => 0)) < N / 2) await new Promise((res) => setTimeout(res, 20));
        kill();
      })();
    });
    if (killed.signal !== 'SIGKILL') throw new Error(`the batch ended before it was killed (${String(killed.signal)})`);
    const atKill = await ended(id);
    const recovered = await child(['--child', 'recover', '--calls', String(N), '--url', url, '--id', id, '--policy', policy]);
    if (recovered.out?.results !== N) throw new Error(`recovery gave ${recovered.out?.results} results for ${N} calls`);
    recoveries[policy]!.push({ atKill, launchToResultMs: recovered.out.launchToResultMs!, launchToFirstCallMs: recovered.out.launchToFirstCallMs!, spawnToExitMs: recovered.ms, interrupted: recovered.out.interrupted! });
  }
  await DBOS.shutdown();

  const range = (xs: number[], f: (x: number) => string): string => `${f(median(xs))} [${f(Math.min(...xs))} – ${f(Math.max(...xs))}]`;
  console.log(`durable batch of ${N} calls (registerDurableBatch, maxConcurrency 8; memory under 'unknown'; PostgreSQL ${pg.version}, fsync off), median [low – high] of ${values.runs} children`);
  for (const m of memory) console.log(`  memory, ${String(m.n).padStart(5)} calls: ${range(m.bytes, (x) => `${(x / 1024).toFixed(2)} KiB`)} heap per call; peak RSS ${range(m.rss, (x) => `${x.toFixed(0)} MB`)}; the batch, uncrashed: ${range(m.ms, (x) => `${(x / 1000).toFixed(2)} s`)}`);
  for (const [policy, list] of Object.entries(recoveries)) {
    console.log(
      `  recovery, '${policy}', after kill -9 at ${range(list.map((x) => x.atKill), (x) => x.toFixed(0))} journaled results: DBOS.launch() → result ${range(list.map((x) => x.launchToResultMs), (x) => `${(x / 1000).toFixed(2)} s`)} ` +
        `(→ the first call run again ${range(list.map((x) => x.launchToFirstCallMs), (x) => `${(x / 1000).toFixed(2)} s`)}); ` +
        `spawn → exit ${range(list.map((x) => x.spawnToExitMs), (x) => `${(x / 1000).toFixed(2)} s`)}; calls answered 'interrupted' ${range(list.map((x) => x.interrupted), (x) => x.toFixed(0))}`,
    );
  }
} finally {
  await pg.stop();
}
