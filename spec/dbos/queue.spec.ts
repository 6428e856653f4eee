/**
 * `toolrun/dbos` queue mode against a real PostgreSQL and a real worker process
 * (spec/dbos/fixtures/dbos-process.ts): each call is its own workflow on a DBOS queue with
 * the id `<batch id>:call:<index>`, executed by the worker; the batch (this process, which
 * dequeues nothing) awaits the results in call order. A worker killed with SIGKILL and
 * started again with the same executor id re-runs only the call it held; an orchestrator
 * crash re-issues the same ids and attaches to the calls already queued or done.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DBOS } from '@dbos-inc/dbos-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueJournal, queuedCallWorkflows } from '../../lib/dbos/journal.ts';
import { registerDurableBatch } from '../../lib/dbos/index.ts';
import { startPostgres, type PostgresServer } from '../../lib/dbos/postgres.ts';
import { work } from './fixtures/dbos-process.ts';
import type { ToolCall } from '../../lib/index.ts';
import { driveBatch, startWorkerProcess, type DrivenCall } from './harness.ts';

const fixture = join(import.meta.dirname, 'fixtures', 'dbos-process.ts');
let pg: PostgresServer;
let url: string;
let dir: string;
const children = new Set<ChildProcess>();

const batch = registerDurableBatch({ name: 'spec-batch', tools: [work], queueName: 'toolrun-calls', interruptedCalls: 'run-again' });
/** The calls `driveBatch` opens: `toolu_<i>`, tool `work`, `{ n: i }`. */
const callsOf = (n: number): ToolCall[] => Array.from({ length: n }, (_, index) => ({ id: `toolu_${index}`, name: 'work', arguments: { n: index } }));
const orchestrate = DBOS.registerWorkflow(
  async (n: number): Promise<DrivenCall[]> =>
    await driveBatch(queueJournal(queuedCallWorkflows.get('spec-batch')!, 'toolrun-calls', DBOS.workflowID!, 0, callsOf(n)), n, async (index) => {
      throw new Error(`call ${index} was executed by the orchestrator: in queue mode every call is answered by its queued workflow`);
    }),
  { name: 'queue-spec-orchestrator' },
);

beforeAll(async () => {
  pg = await startPostgres();
  url = pg.databaseUrl('toolrun_queue_dbos');
  dir = mkdtempSync(join(tmpdir(), 'toolrun-queue-spec-'));
  // listenQueues: [] — this process dequeues nothing: every call must run in a worker.
  DBOS.setConfig({ name: 'toolrun_queue', systemDatabaseUrl: url, logLevel: 'error', applicationVersion: 'spec', executorID: 'orchestrator', listenQueues: [] });
  await DBOS.launch();
  await DBOS.registerQueue('toolrun-calls', { workerConcurrency: 4, minPollingIntervalMs: 100, onConflict: 'always_update' });
}, 120_000);
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await DBOS.shutdown();
  await pg?.stop();
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

/** Starts a worker process; resolves once it printed `ready`. */
async function startWorker(env: Record<string, string>): Promise<ChildProcess> {
  return await startWorkerProcess(fixture, url, env, children);
}

/** Waits for a condition the spec cannot be told about by an event (a row in another process's database); a hang guard, not a timing assertion. */
async function until(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`gave up waiting for: ${what}`);
}

function starts(log: string): { index: number; pid: number; key: string }[] {
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8').trim().split('\n').filter(Boolean).map((line) => {
    const [, index, pid, key] = line.split(' ');
    return { index: Number(index), pid: Number(pid), key: key! };
  });
}

const text = (r: DrivenCall) => (r.result.message.content[0] as { text: string }).text;

describe('toolrun/dbos queue mode (J)', () => {
  it('J11 J-dbos-queue: calls run in the worker process, results come back in call order, each its own', async () => {
    // Fails if the orchestrator executed a call (its execute throws), or if results were
    // matched to calls by completion order (a call's text names its own index).
    const log = join(dir, 'plain.log');
    const worker = await startWorker({ EXECUTOR: 'w-plain', LOG: log, HOLD: '' });
    const results = await DBOS.startWorkflow(orchestrate, { workflowID: 'queue-plain' })(4).then((h) => h.getResult());
    expect(results.map(text)).toEqual(['call 0 done', 'call 1 done', 'call 2 done', 'call 3 done']);
    expect(results.map((r) => r.result.message.toolCallId)).toEqual(['toolu_0', 'toolu_1', 'toolu_2', 'toolu_3']);
    const s = starts(log);
    expect(s.map((x) => x.index).sort()).toEqual([0, 1, 2, 3]);
    expect(new Set(s.map((x) => x.pid))).toEqual(new Set([worker.pid]));
    worker.kill('SIGKILL');
  }, 120_000);

  it('J11 J-dbos-queue-parallel: registerDurableBatch enqueues every call at once, so calls run side by side on the workers', async () => {
    // Fails if the batch enqueued a call only when the run handed it out: the run hands call
    // 1 out once call 0's prior (its result) is known, so call 0, which waits until call 1 has
    // started, would give up waiting (after its 60 s hang guard) — or the batch would hang.
    const log = join(dir, 'parallel.log');
    const worker = await startWorker({ EXECUTOR: 'w-parallel', LOG: log, HOLD: '', AFTER: '0:1' });
    const { messages } = await batch.run(callsOf(3), { workflowId: 'queue-parallel' });
    expect(messages.map((m) => (m.content[0] as { text: string }).text)).toEqual(['call 0 done', 'call 1 done', 'call 2 done']);
    expect(messages.map((m) => m.toolCallId)).toEqual(['toolu_0', 'toolu_1', 'toolu_2']);
    expect(starts(log).map((x) => x.pid)).toEqual([worker.pid, worker.pid, worker.pid]);
    worker.kill('SIGKILL');
  }, 180_000);

  it('J11 J-dbos-queue-crash: an orchestrator crash attaches to the queued calls; a worker killed mid-call re-runs only its held call when it comes back', async () => {
    // Fails if the recovered orchestrator enqueued the calls again (starts > 1 for calls 0,
    // 1, 3), if the restarted worker re-ran finished calls, or if the held call's result
    // went to another call.
    const log = join(dir, 'crash.log');
    const workflowID = 'queue-crash';
    let worker = await startWorker({ EXECUTOR: 'w-crash', LOG: log, HOLD: '2' });
    await DBOS.startWorkflow(orchestrate, { workflowID })(4);
    const done = async (i: number) => (await DBOS.getWorkflowStatus(`${workflowID}:call:${i}`))?.status === 'SUCCESS';
    await until('calls 0, 1, 3 done and call 2 held', async () => existsSync(`${log}.held-2`) && (await done(0)) && (await done(1)) && (await done(3)));

    // The orchestrator crashes and recovers (in this process: shutdown, relaunch).
    await DBOS.shutdown();
    await DBOS.launch();
    // The worker is killed while it runs call 2, and comes back with the same executor id.
    const killedPid = worker.pid;
    worker.kill('SIGKILL');
    await new Promise((r) => worker.once('exit', r));
    worker = await startWorker({ EXECUTOR: 'w-crash', LOG: log, HOLD: '2' });

    const results = await DBOS.retrieveWorkflow<DrivenCall[]>(workflowID).getResult();
    expect(results.map(text)).toEqual(['call 0 done', 'call 1 done', 'call 2 done', 'call 3 done']);
    const s = starts(log);
    expect([0, 1, 2, 3].map((i) => s.filter((x) => x.index === i).length)).toEqual([1, 1, 2, 1]);
    const held = s.filter((x) => x.index === 2);
    expect(held[0]!.pid).toBe(killedPid);
    expect(held[1]!.pid).toBe(worker.pid);
    expect(held.map((x) => x.key)).toEqual([`${workflowID}:batch:2`, `${workflowID}:batch:2`]);
    worker.kill('SIGKILL');
  }, 180_000);
});
