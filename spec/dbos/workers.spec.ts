/**
 * `toolrun/dbos` queue mode on several worker processes, one of them lost for good: three
 * workers (spec/dbos/fixtures/workers-process.ts, two calls at a time each) run a batch of 40
 * calls; one is killed with SIGKILL while a call of its own is in flight, after it finished
 * others, and is not started again. `recoverWorker` hands what it held back to the queue, and
 * the two others take it over. The kill comes when the victim wrote its `held` file (its
 * third start), never after a time, and every wait has a hang guard only, so the load on the
 * machine changes how long this takes, not whether it passes.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DBOS, DBOSClient } from '@dbos-inc/dbos-sdk';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { recoverWorker } from '../../lib/dbos/index.ts';
import { startPostgres, type PostgresServer } from '../../lib/dbos/postgres.ts';
import type { ToolCall } from '../../lib/index.ts';
import { batches, QUEUE } from './fixtures/workers-process.ts';
import { startWorkerProcess } from './harness.ts';

const fixture = join(import.meta.dirname, 'fixtures', 'workers-process.ts');
const N = 40;
let pg: PostgresServer;
let url: string;
let dir: string;
let client: DBOSClient;
const children = new Set<ChildProcess>();

const callsOf = (n: number): ToolCall[] => Array.from({ length: n }, (_, i) => ({ id: `c${i}`, name: 'io', arguments: { i } }));

beforeAll(async () => {
  pg = await startPostgres();
  url = pg.databaseUrl('toolrun_workers_dbos');
  dir = mkdtempSync(join(tmpdir(), 'toolrun-workers-spec-'));
  // Migrated once, before processes launch side by side on it (their migrations would race).
  await DBOS.migrate(url);
  // This process orchestrates and dequeues nothing: every call runs in a worker.
  DBOS.setConfig({ name: 'toolrun_workers', systemDatabaseUrl: url, logLevel: 'error', applicationVersion: 'spec-workers', executorID: 'orchestrator', listenQueues: [] });
  await DBOS.launch();
  await DBOS.registerQueue(QUEUE, { workerConcurrency: 2, minPollingIntervalMs: 50, onConflict: 'always_update' });
  // The operator's view: a client that has not launched DBOS.
  client = await DBOSClient.create({ systemDatabaseUrl: url });
}, 120_000);
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await client?.destroy();
  await DBOS.shutdown();
  await pg?.stop();
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

async function startWorker(env: Record<string, string>): Promise<ChildProcess> {
  return await startWorkerProcess(fixture, url, env, children);
}

/** Waits for a file another process writes; a hang guard, not a timing assertion. */
async function until(what: string, check: () => boolean): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`gave up waiting for: ${what}`);
}

interface Effect {
  kind: 'start' | 'end';
  index: number;
  pid: number;
  key?: string;
  /** Its line number in the log. */
  at: number;
}

function effects(log: string): Effect[] {
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8').split('\n').filter(Boolean).map((line, at) => {
    const [kind, index, pid, key] = line.split(' ');
    return { kind: kind as 'start' | 'end', index: Number(index), pid: Number(pid), ...(key === undefined ? {} : { key }), at };
  });
}

describe('toolrun/dbos queue mode on several workers (J)', () => {
  for (const policy of ['run-again', 'unknown'] as const) {
    it(`J17 J-dbos-workers-takeover (${policy}): a worker killed for good mid-batch; recoverWorker hands its calls to the others; nothing lost, no journaled call re-run, results in call order`, async () => {
      // Fails if the dead worker's calls were lost (the batch never ends: the hang guard), if
      // a call whose workflow had ended at the kill ran again, if a call ran twice other
      // than the one the victim was running (and that only under 'run-again', with the same
      // idempotency key, in a survivor), or if results were matched by completion order.
      const log = join(dir, `${policy}.log`);
      const batchId = `takeover-${policy}`;
      const victimId = `${policy}-w0`;
      // The victim holds its third call: it has finished calls of its own when it is killed.
      const victim = await startWorker({ EXECUTOR: victimId, LOG: log, HOLD_AT: '3' });
      const survivors = [await startWorker({ EXECUTOR: `${policy}-w1`, LOG: log }), await startWorker({ EXECUTOR: `${policy}-w2`, LOG: log })];
      // A failing test must not leave its workers dequeuing the next test's calls.
      onTestFinished(() => {
        for (const w of [victim, ...survivors]) w.kill('SIGKILL');
      });
      const handle = await batches[policy].start(callsOf(N), { workflowId: batchId });

      // The fixture renames the file into place once written, and the check also wants the whole line.
      await until('the victim to hold a call', () => existsSync(`${log}.held`) && /^\d+\n$/.test(readFileSync(`${log}.held`, 'utf8')));
      victim.kill('SIGKILL');
      await new Promise((r) => victim.once('exit', r));
      const heldIndex = Number(readFileSync(`${log}.held`, 'utf8'));

      // What was journaled once the victim was dead: every call workflow's status. The
      // survivors go on meanwhile, so the journal is read first and the log's length after: a
      // call found ended has its start before that length, and a start after it is a re-run.
      const ids = Array.from({ length: N }, (_, i) => `${batchId}:call:${i}`);
      const statuses = await client.listWorkflows({ workflowIDs: ids, loadInput: false, loadOutput: false });
      const atKill = effects(log).length;
      const ended = new Set(statuses.filter((w) => w.status === 'SUCCESS').map((w) => Number(w.workflowID.split(':').pop())));
      const held = new Set(statuses.filter((w) => w.status === 'PENDING' && w.executorId === victimId).map((w) => w.workflowID));
      // The calls the victim held stay its own until someone hands them back: nothing else would.
      const heldStatus = statuses.find((w) => w.workflowID === `${batchId}:call:${heldIndex}`);
      expect(
        held.has(`${batchId}:call:${heldIndex}`),
        `call ${heldIndex}, held by the victim (pid ${victim.pid}), is ${heldStatus?.status} on ${heldStatus?.executorId} (recovery attempts ${heldStatus?.recoveryAttempts}); its log: ${JSON.stringify(effects(log).filter((e) => e.index === heldIndex))}; survivors ${survivors.map((w) => w.pid).join(', ')}`,
      ).toBe(true);
      expect(effects(log).some((e) => e.pid === victim.pid && e.kind === 'end')).toBe(true);

      const recovered = await recoverWorker(victimId, { client, applicationVersion: 'spec-workers' });
      expect(new Set(recovered)).toEqual(held);

      const { messages } = await handle.getResult();
      // Every call answered once, in call order, each with its own result.
      expect(messages.map((m) => m.toolCallId)).toEqual(callsOf(N).map((c) => c.id));
      const text = (i: number): string => (messages[i]!.content[0] as { text: string }).text;
      const heldIndexes = new Set([...held].map((id) => Number(id.split(':').pop())));
      /** J5 under 'unknown': a call the victim held (its start journaled, no result) may be answered "outcome unknown", without starting again. */
      const unknown = (i: number): boolean => policy === 'unknown' && heldIndexes.has(i) && text(i).includes('its outcome is unknown');
      for (let i = 0; i < N; i++) if (!unknown(i)) expect(text(i)).toBe(`done ${i}`);

      const all = effects(log);
      const pids = new Set(survivors.map((s) => s.pid));
      for (let i = 0; i < N; i++) {
        const starts = all.filter((e) => e.kind === 'start' && e.index === i);
        const after = starts.filter((e) => e.at >= atKill);
        // No call whose workflow had ended at the kill starts again.
        if (ended.has(i)) expect(after, `call ${i} ended before the kill and started again`).toEqual([]);
        // Nothing runs in the dead process after the kill, nor in the orchestrator.
        expect(after.every((e) => pids.has(e.pid))).toBe(true);
        expect(starts.some((e) => e.pid === process.pid)).toBe(false);
        // Every start of a call carries the batch's idempotency key for it.
        for (const e of starts) expect(e.key).toBe(`${batchId}:batch:${i}`);
        const before = starts.filter((e) => e.at < atKill);
        const victimWasRunning = heldIndexes.has(i) && before.length === 1 && before[0]!.pid === victim.pid;
        // One start per call; a call the victim was running starts once more in a survivor
        // under 'run-again'; one answered "outcome unknown" never starts after the kill (its
        // tool may not have started at all: its start was journaled just before).
        if (unknown(i)) expect(after, `call ${i} was answered "outcome unknown" and started again`).toEqual([]);
        else expect(starts.length, `call ${i} started ${starts.length} times`).toBe(victimWasRunning && policy === 'run-again' ? 2 : 1);
      }
      // The takeover happened: the held call ran (or was answered) in a survivor's workflow.
      const finalStatus = await client.getWorkflow(`${batchId}:call:${heldIndex}`);
      expect(finalStatus?.status).toBe('SUCCESS');
      expect(finalStatus?.executorId).not.toBe(victimId);
    }, 240_000);
  }
});
