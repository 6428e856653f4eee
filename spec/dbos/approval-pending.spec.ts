/**
 * `toolrun/dbos` approvals and what is pending, against a real PostgreSQL: `APPROVAL_EVENT`
 * says what the batch waits for at every moment (updated as soon as decisions are received),
 * `sendApproval` refuses a decision that answers no pending request, and a decision that
 * reaches the batch anyway is dropped visibly and never answers a later pause
 * (docs/adr/0045-durable-approvals-pending-only.md).
 */
import { DBOS, DBOSClient } from '@dbos-inc/dbos-sdk';
import * as v from 'valibot';
import { afterEach, describe, expect, it } from 'vitest';
import type { ToolApprovalRequest } from '../../lib/core/approval/approval.ts';
import { defineTool } from '../../lib/index.ts';
import { APPROVAL_DROPPED_EVENT, APPROVAL_EVENT, APPROVAL_TOPIC, ApprovalNotPendingError, registerDurableBatch, sendApproval, type DroppedApproval, type DurableBatchResult } from '../../lib/dbos/index.ts';
import { gate, launchDbosForFile } from './harness.ts';

const server = launchDbosForFile('toolrun_pending');
const runs: string[] = [];
let lookupGate = gate();

const pay = defineTool({
  name: 'pay',
  input: v.object({ amount: v.number() }),
  needsApproval: true,
  execute: async ({ amount }) => (runs.push(`pay ${amount}`), `paid ${amount}`),
});
const lookup = defineTool({
  name: 'lookup',
  input: v.object({ q: v.string() }),
  async execute({ q }) {
    await lookupGate.promise;
    runs.push(`lookup ${q}`);
    return `found ${q}`;
  },
});
const parallel = registerDurableBatch({ name: 'pending-batch', tools: [pay, lookup] });
const sequential = registerDurableBatch({ name: 'pending-sequential', tools: [pay, lookup], options: { mode: 'sequential' } });

const calls = [
  { id: 'toolu_a', name: 'lookup', arguments: { q: 'invoice 7' } },
  { id: 'toolu_b', name: 'pay', arguments: { amount: 70 } },
  { id: 'toolu_c', name: 'pay', arguments: { amount: 999 } },
];

/** The event's pending indexes. */
async function pendingNow(workflowId: string): Promise<number[] | undefined> {
  return (await DBOS.getEvent<ToolApprovalRequest[]>(workflowId, APPROVAL_EVENT, { timeoutSeconds: 0 }))?.map((r) => r.index);
}

/** Waits (on the event, re-read) until it lists exactly `indexes`; the spec's time limit is the hang guard. */
async function eventBecomes(workflowId: string, indexes: number[]): Promise<void> {
  for (;;) {
    const now = await pendingNow(workflowId);
    if (JSON.stringify(now) === JSON.stringify(indexes)) return;
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function refusal(promise: Promise<void>): Promise<ApprovalNotPendingError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApprovalNotPendingError);
  return error as ApprovalNotPendingError;
}

afterEach(() => {
  runs.length = 0;
  lookupGate = gate();
});

describe('toolrun/dbos: what is pending (J12)', () => {
  it('J12 APPROVAL_EVENT lists what is pending: set at the pause, updated as soon as decisions are received, [] at the end', async () => {
    // Fails if the event keeps a decided call until the whole batch ends: a client restarted
    // after a crash, following the docs, asks the person again.
    const workflowId = 'pending-1';
    lookupGate.open();
    const handle = await parallel.start(calls, { workflowId });
    await eventBecomes(workflowId, [1, 2]);
    await sendApproval(workflowId, [{ index: 1, approved: true }]);
    await eventBecomes(workflowId, [2]);
    expect(await handle.getStatus().then((s) => s?.status)).toBe('PENDING');
    await sendApproval(workflowId, [{ index: 2, approved: false, reason: 'Over the limit.' }]);
    const result = await handle.getResult();
    expect(result.messages.map((m) => m.isError)).toEqual([false, false, true]);
    expect(result.approvalRounds).toBe(2);
    expect(await pendingNow(workflowId)).toEqual([]);
  }, 60_000);

  it('J12 sendApproval refuses, and sends nothing, when a decision answers no pending request: before the pause, a call not deferred, another toolCallId, twice, decided already', async () => {
    // Fails if a refused decision is sent: it would wait in the topic and answer a later pause,
    // or be taken for the pending call (the toolCallId of another call).
    const workflowId = 'pending-2';
    const handle = await parallel.start(calls, { workflowId });
    // lookup is held, so the batch cannot pause: nothing is pending yet.
    const early = await refusal(sendApproval(workflowId, [{ index: 1, approved: true }]));
    expect(early.pending).toEqual([]);
    expect(early.refused).toEqual([{ position: 0, index: 1, why: 'call 1 is not pending (pending: none)' }]);
    lookupGate.open();
    await eventBecomes(workflowId, [1, 2]);
    const notDeferred = await refusal(sendApproval(workflowId, [{ index: 2, approved: false }, { index: 0, approved: true }]));
    expect(notDeferred.refused).toEqual([{ position: 1, index: 0, why: 'call 0 is not pending (pending: 1, 2)' }]);
    const otherId = await refusal(sendApproval(workflowId, [{ index: 1, toolCallId: 'toolu_c', approved: true }]));
    expect(otherId.refused[0]!.why).toBe('call 1 is "toolu_b", not "toolu_c"');
    const twice = await refusal(sendApproval(workflowId, [{ index: 1, approved: true }, { index: 1, approved: false }]));
    expect(twice.refused[0]!.why).toBe('call 1 is decided twice in one message');
    // Nothing of the above reached the batch: it still waits for both.
    expect(await handle.getStatus().then((s) => s?.status)).toBe('PENDING');
    expect(await pendingNow(workflowId)).toEqual([1, 2]);
    await sendApproval(workflowId, [{ index: 1, toolCallId: 'toolu_b', approved: false, reason: 'No.' }]);
    await eventBecomes(workflowId, [2]);
    // A client that asks again about call 1 (decided) is refused.
    await refusal(sendApproval(workflowId, [{ index: 1, approved: true }]));
    await sendApproval(workflowId, [{ index: 2, approved: true }]);
    const result = await handle.getResult();
    expect(result.outcomes).toEqual(['ok', 'rejected', 'ok']);
    expect(runs).toEqual(['lookup invoice 7', 'pay 999']);
    expect(result.approvalRounds).toBe(2);
    // After the end, nothing is pending.
    await refusal(sendApproval(workflowId, [{ index: 2, approved: true }]));
  }, 60_000);

  it('J12 a decision that reaches the batch for no pending request is dropped visibly (a ToolrunWarning, APPROVAL_DROPPED_EVENT) and never answers a later pause', async () => {
    // Sequential mode: call 2 is handed out (and deferred) only once call 1 ran, so it is not
    // pending at the first pause. Fails if a dropped decision resumes the batch (a round with
    // no decision), or if the approval sent early for call 2 answers its later pause.
    const workflowId = 'pending-3';
    lookupGate.open();
    const warnings: string[] = [];
    const onWarning = (w: Error): void => {
      if (w.name === 'ToolrunWarning') warnings.push(w.message);
    };
    process.on('warning', onWarning);
    try {
      const handle = await sequential.start(calls, { workflowId });
      await eventBecomes(workflowId, [1]);
      await DBOS.send(workflowId, [{ index: 2, approved: true }, { index: 1, toolCallId: 'toolu_x', approved: true }, 'yes'], APPROVAL_TOPIC);
      const dropped = await DBOS.getEvent<DroppedApproval[]>(workflowId, APPROVAL_DROPPED_EVENT, { timeoutSeconds: 60 });
      expect(dropped).toEqual([
        { index: 2, why: 'call 2 is not pending (pending: 1)' },
        { index: 1, toolCallId: 'toolu_x', why: 'call 1 is "toolu_b", not "toolu_x"' },
        { why: 'not a decision { index, approved, reason? }' },
      ]);
      await refusal(sendApproval(workflowId, [{ index: 2, approved: true }]));
      await sendApproval(workflowId, [{ index: 1, approved: true }]);
      await eventBecomes(workflowId, [2]);
      // Call 2 is pending now, and nothing sent before answers it: the batch waits.
      expect(await handle.getStatus().then((s) => s?.status)).toBe('PENDING');
      expect(runs).toEqual(['lookup invoice 7', 'pay 70']);
      await sendApproval(workflowId, [{ index: 2, approved: false, reason: 'Not today.' }]);
      const result: DurableBatchResult = await handle.getResult();
      expect(result.outcomes).toEqual(['ok', 'ok', 'rejected']);
      expect(result.approvalRounds).toBe(2);
      expect(runs).toEqual(['lookup invoice 7', 'pay 70']);
      expect(warnings.filter((w) => w.includes(workflowId))).toHaveLength(3);
    } finally {
      process.off('warning', onWarning);
    }
  }, 60_000);
  it('J12 a message of 300,000 decisions sent with DBOS.send is dropped whole: the batch neither fails nor resumes, and a real decision still resumes it', async () => {
    // Fails if the workflow reads such a message decision by decision: it spread 300,000
    // dropped entries into one call (a RangeError that ended the batch in ERROR, its calls
    // never run) after 300,000 warnings.
    const workflowId = 'pending-4';
    lookupGate.open();
    const handle = await parallel.start(calls, { workflowId });
    await eventBecomes(workflowId, [1, 2]);
    await DBOS.send(workflowId, Array.from({ length: 300_000 }, () => ({ index: 99, approved: true })), APPROVAL_TOPIC);
    const dropped = await droppedOrLeft(workflowId, handle);
    expect(await handle.getStatus().then((s) => s?.status)).toBe('PENDING');
    expect(dropped).toEqual([{ why: 'the message holds 300000 decisions, more than the 2 pending requests + 100: dropped unread' }]);
    expect(await pendingNow(workflowId)).toEqual([1, 2]);
    await sendApproval(workflowId, [{ index: 1, approved: true }, { index: 2, approved: false }]);
    const result = await handle.getResult();
    expect(result.outcomes).toEqual(['ok', 'ok', 'rejected']);
    expect(result.approvalRounds).toBe(1);
  }, 60_000);
  it('J12 a message the batch cannot decode (sent through a DBOSClient with a serializer of its own) is dropped: the batch neither fails nor resumes', async () => {
    // Fails if the workflow lets DBOS.recv's decoding error through: the batch ends in ERROR,
    // and for good, since DBOS records the message as sent and decodes it again on recovery.
    const workflowId = 'pending-5';
    lookupGate.open();
    const handle = await parallel.start(calls, { workflowId });
    await eventBecomes(workflowId, [1, 2]);
    const serializer = { name: () => 'other-json', stringify: (value: unknown) => JSON.stringify(value), parse: (text: string) => JSON.parse(text) as unknown };
    const client = await DBOSClient.create({ systemDatabaseUrl: server().databaseUrl('toolrun_pending_dbos'), serializer });
    try {
      await sendApproval(workflowId, [{ index: 1, approved: true }], { client });
    } finally {
      await client.destroy();
    }
    const dropped = await droppedOrLeft(workflowId, handle);
    expect(await handle.getStatus().then((s) => s?.status)).toBe('PENDING');
    expect(dropped).toEqual([{ why: 'the message could not be decoded: Value deserialization type other-json is not available' }]);
    expect(await pendingNow(workflowId)).toEqual([1, 2]);
    await sendApproval(workflowId, [{ index: 1, approved: true }, { index: 2, approved: true }]);
    const result = await handle.getResult();
    expect(result.outcomes).toEqual(['ok', 'ok', 'ok']);
    expect(result.approvalRounds).toBe(1);
  }, 60_000);
});

/**
 * Waits until the batch lists a dropped decision or has left PENDING (the failure the two
 * message specs hold against); the test's timeout is the hang guard.
 */
async function droppedOrLeft(workflowId: string, handle: { getStatus(): Promise<{ status: string } | null> }): Promise<DroppedApproval[] | null> {
  for (;;) {
    const dropped = await DBOS.getEvent<DroppedApproval[]>(workflowId, APPROVAL_DROPPED_EVENT, { timeoutSeconds: 0 });
    const status = await handle.getStatus().then((s) => s?.status);
    if (dropped !== null || status !== 'PENDING') return dropped;
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('the config a recovery checks (J13)', () => {
  it("J13 the config fingerprint differs when a tool's needsApproval, executionMode, the mode or the policy differs, and not for the tools' order", async () => {
    const { configFingerprint } = await import('../../lib/dbos/approvals.ts');
    const tool = (name: string, extra: Record<string, unknown> = {}) => defineTool({ name, input: v.object({}), execute: () => 'ok', ...extra });
    const base = configFingerprint([tool('a'), tool('b')], undefined, undefined);
    expect(configFingerprint([tool('b'), tool('a')], undefined, undefined)).toBe(base);
    const variants = [
      configFingerprint([tool('a', { needsApproval: true }), tool('b')], undefined, undefined),
      configFingerprint([tool('a', { needsApproval: () => true }), tool('b')], undefined, undefined),
      configFingerprint([tool('a', { executionMode: 'sequential' }), tool('b')], undefined, undefined),
      configFingerprint([tool('a'), tool('b')], 'sequential', undefined),
      configFingerprint([tool('a'), tool('b')], undefined, 'run-again'),
    ];
    expect(new Set([base, ...variants]).size).toBe(variants.length + 1);
  });
});
