/**
 * `registerDurableBatch` with approvals under `kill -9`, on a real PostgreSQL: the
 * application (spec/dbos/fixtures/approval-child.ts: the batch and the client that asks a
 * person) is killed right after each `tool_result` in turn, and while the batch waits for
 * the person, under both `interruptedCalls` policies; a new process of the same executor
 * recovers the workflow and the restarted client goes on. Every kill lands at a placed
 * point: the child freezes itself there (a synchronous wait) and the spec kills it on that
 * marker, so nothing here waits on a clock.
 *
 * Checked after each recovery: every result the consumer was shown before the kill is the
 * batch's final result for that call (J3); no call that had finished — shown, or ended before
 * the batch paused — runs again; nobody is asked about a call whose decision was sent and
 * received (J12); the approval event is `[]` at the end. Also: two processes of the executor
 * recovering the batch at once run each call at most once between them, and a process
 * registered with other tools refuses to recover it (J13).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DBOSClient } from '@dbos-inc/dbos-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolResultMessage } from '../../lib/index.ts';
import { APPROVAL_EVENT, type DurableBatchResult } from '../../lib/dbos/index.ts';
import { startPostgres, type PostgresServer } from '../../lib/dbos/postgres.ts';
import type { ChildTrial } from './fixtures/approval-child.ts';

const fixture = join(import.meta.dirname, 'fixtures', 'approval-child.ts');
let pg: PostgresServer | undefined;
let client: DBOSClient | undefined;
let root = '';
const databaseUrl = (): string => pg!.databaseUrl('toolrun_approval_crash_dbos');

beforeAll(async () => {
  pg = await startPostgres();
  root = mkdtempSync(join(tmpdir(), 'toolrun-approval-crash-'));
}, 120_000);
afterAll(async () => {
  await client?.destroy();
  await pg?.stop();
  if (root !== '') rmSync(root, { recursive: true, force: true });
}, 60_000);

interface AttemptEnd {
  frozen: boolean;
  done?: { value?: DurableBatchResult; error?: { name: string; message: string }; shown: number };
  stderr: string;
}

/** Runs one attempt; SIGKILLs it when it reports that it froze. Never rejects; a hang guard kills it. */
function attempt(trial: ChildTrial): Promise<AttemptEnd> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', fixture], { env: { ...process.env, TRIAL: JSON.stringify(trial) }, stdio: ['ignore', 'pipe', 'pipe'] });
    const end: AttemptEnd = { frozen: false, stderr: '' };
    const guard = setTimeout(() => {
      end.stderr += '\n[spec] hang guard: killed';
      child.kill('SIGKILL');
    }, 150_000);
    let buffer = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      buffer += chunk;
      for (let newline = buffer.indexOf('\n'); newline >= 0; newline = buffer.indexOf('\n')) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        if (line === '@@ frozen') {
          end.frozen = true;
          child.kill('SIGKILL');
        } else if (line.startsWith('@@ done ')) end.done = JSON.parse(line.slice('@@ done '.length));
      }
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      if (end.stderr.length < 20_000) end.stderr += chunk;
    });
    child.on('close', () => {
      clearTimeout(guard);
      resolve(end);
    });
  });
}

/** The effect log as `[what, index | undefined, attempt]` rows, in the order written. */
function effects(dir: string): { what: string; index: number | undefined; attempt: number }[] {
  return readFileSync(join(dir, 'effects.log'), 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const parts = line.split(' ');
      return parts.length === 2 ? { what: parts[0]!, index: undefined, attempt: Number(parts[1]) } : { what: parts[0]!, index: Number(parts[1]), attempt: Number(parts[2]) };
    });
}

function seen(dir: string): Map<number, ToolResultMessage> {
  let text = '';
  try {
    text = readFileSync(join(dir, 'seen.jsonl'), 'utf8');
  } catch {
    return new Map();
  }
  return new Map(text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { index: number; message: ToolResultMessage }).map((r) => [r.index, r.message]));
}

let trials = 0;
/** Kills attempt 0 at `killAt`, recovers in attempt 1, and returns what the checks need. */
async function killAndRecover(killAt: NonNullable<ChildTrial['killAt']>, interruptedCalls: ChildTrial['interruptedCalls'], recoverWith: ChildTrial['tools'] = 'same') {
  const dir = join(root, `trial-${trials++}`);
  mkdirSync(dir);
  const runId = `approval-crash-${trials}-${process.pid}`;
  const base = { databaseUrl: databaseUrl(), runId, dir, interruptedCalls };
  const first = await attempt({ ...base, attempt: 0, killAt });
  expect(first.frozen, `attempt 0 never reached its kill point: ${first.stderr}`).toBe(true);
  const second = await attempt({ ...base, attempt: 1, tools: recoverWith });
  expect(second.done, `attempt 1 did not finish: ${second.stderr}`).toBeDefined();
  client ??= await DBOSClient.create({ systemDatabaseUrl: databaseUrl() });
  return { dir, runId, done: second.done!, shown: seen(dir), log: effects(dir) };
}

describe('toolrun/dbos approvals under kill -9 (J3, J12)', () => {
  for (const interruptedCalls of ['unknown', 'run-again'] as const) {
    for (const killAt of [{ result: 0 }, { result: 1 }, { result: 2 }, { result: 3 }, { result: 4 }, 'wait' as const]) {
      const where = killAt === 'wait' ? 'while the batch waits for the person' : `right after the tool_result of call ${killAt.result}`;
      it(`J3 J12 killed ${where} ('${interruptedCalls}'): every result shown stays, no finished call runs again, nobody is asked about a decided call`, async () => {
        const { runId, done, shown, log } = await killAndRecover(killAt, interruptedCalls);
        expect(done.error).toBeUndefined();
        const result = done.value!;
        expect(result.messages.map((m) => m.toolCallId)).toEqual(['toolu_0', 'toolu_1', 'toolu_2', 'toolu_3', 'toolu_4']);
        expect(result.approvalRounds).toBe(2);
        // The kill came right after the consumer was shown call k's result: it and every earlier one were shown.
        if (typeof killAt === 'object' && 'result' in killAt) expect([...shown.keys()]).toEqual(Array.from({ length: killAt.result + 1 }, (_, i) => i));
        // Fails if a result the consumer saw comes back "outcome unknown" or from a second run
        // (a result carried into a later round with no journal entry).
        for (const [index, message] of shown) expect(result.messages[index], `call ${index}`).toEqual(message);
        // Fails if a call that had finished runs again: one shown, or one that ended before
        // the batch paused (the pause comes only once every commit settled).
        const startedAgain = new Set(log.filter((e) => e.what === 'start' && e.attempt === 1).map((e) => e.index));
        for (const index of shown.keys()) expect(startedAgain.has(index), `call ${index} was shown and ran again`).toBe(false);
        const pausedAt = log.findIndex((e) => e.what === 'paused' && e.attempt === 0);
        if (pausedAt >= 0) {
          const endedBefore = log.slice(0, pausedAt).filter((e) => e.what === 'end').map((e) => e.index!);
          expect(endedBefore.length).toBeGreaterThan(0);
          for (const index of endedBefore) {
            expect(startedAgain.has(index), `call ${index} ended before the pause and ran again`).toBe(false);
            // Fails if it came back "outcome unknown": its result lived only in the paused state.
            expect(result.outcomes[index], `call ${index} ended before the pause`).toBe('ok');
            expect(JSON.stringify(result.messages[index]!.content), `call ${index}`).toContain('(attempt 0)');
          }
        }
        // Under both policies, a call's result never comes from two runs of it.
        for (let i = 0; i < 5; i++) expect(log.filter((e) => e.what === 'end' && e.index === i).length, `call ${i} ended twice`).toBeLessThanOrEqual(typeof killAt === 'object' && 'result' in killAt && killAt.result === 0 ? 2 : 1);
        // Fails if the approval event still lists a decided call: the restarted client asks again.
        for (const [position, entry] of log.entries()) {
          if (entry.what !== 'ask') continue;
          const sentBefore = log.slice(0, position).some((e) => e.what === 'sent' && e.index === entry.index);
          expect(sentBefore, `call ${entry.index} asked about again after its decision was sent (attempt ${entry.attempt})`).toBe(false);
        }
        expect(await client!.getEvent(runId, APPROVAL_EVENT, { timeoutSeconds: 0 })).toEqual([]);
      }, 300_000);
    }
  }

  it("J-dbos-two-recoverers: two processes of the executor recover the batch at once ('run-again'): one of them runs it, no tool runs twice, both see the same result", async () => {
    // Fails if both processes run the recovered workflow (a call in flight at the kill would
    // start in each), or if their results differ.
    const dir = join(root, `trial-${trials++}`);
    mkdirSync(dir);
    const runId = `approval-crash-${trials}-${process.pid}`;
    const base = { databaseUrl: databaseUrl(), runId, dir, interruptedCalls: 'run-again' as const };
    // Killed while call 2's tool runs: 'started', so the recovery runs it again — once.
    const first = await attempt({ ...base, attempt: 0, killAt: { start: 2 } });
    expect(first.frozen, first.stderr).toBe(true);
    const [b, c] = await Promise.all([attempt({ ...base, attempt: 1 }), attempt({ ...base, attempt: 2 })]);
    expect(b.done?.value, b.stderr).toBeDefined();
    expect(c.done?.value, c.stderr).toBeDefined();
    expect(c.done!.value).toEqual(b.done!.value);
    const log = effects(dir);
    for (let i = 0; i < 5; i++) expect(log.filter((e) => e.what === 'start' && e.index === i && e.attempt > 0).length, `call ${i} started in both recovering processes`).toBeLessThanOrEqual(1);
    expect(log.filter((e) => e.what === 'start' && e.index === 2 && e.attempt > 0)).toHaveLength(1);
    expect(b.done!.value!.messages.map((m) => m.toolCallId)).toEqual(['toolu_0', 'toolu_1', 'toolu_2', 'toolu_3', 'toolu_4']);
    expect(b.done!.value!.outcomes).toEqual(['ok', 'ok', 'ok', 'ok', 'ok']);
  }, 300_000);

  it('J13 a process registered with another config refuses to recover the batch: DurableConfigMismatchError, and no tool runs there', async () => {
    // Fails if the recovering process, whose batch has other tools, runs on with them (the
    // journal read against different tools: calls replayed as "no tool named …", or run).
    const { done, log } = await killAndRecover('wait', 'unknown', 'renamed');
    expect(done.error?.name).toBe('DurableConfigMismatchError');
    expect(done.error?.message).toMatch(/started with config .*"work".* but this process registered it with .*"work-v2"/);
    expect(log.filter((e) => e.attempt === 1 && (e.what === 'start' || e.what === 'end'))).toEqual([]);
  }, 300_000);
});
