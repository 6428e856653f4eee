/**
 * `toolrun/dbos` approvals through the engine, against a real PostgreSQL: a durable batch
 * paused for approval publishes its requests as a DBOS event and waits for a DBOS message;
 * the decision is sent by another process (spec/dbos/fixtures/dbos-process.ts, `ROLE=approve`,
 * through a `DBOSClient`, without launching DBOS) and the batch resumes in whichever process
 * runs the workflow — here, after a simulated crash, the relaunched one.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { DBOS } from '@dbos-inc/dbos-sdk';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import type { ToolApprovalRequest } from '../../lib/core/approval/approval.ts';
import { defineTool } from '../../lib/index.ts';
import { APPROVAL_EVENT, registerDurableBatch, type DurableApproval } from '../../lib/dbos/index.ts';
import { launchDbosForFile } from './harness.ts';

const fixture = join(import.meta.dirname, 'fixtures', 'dbos-process.ts');
const postgres = launchDbosForFile('toolrun_approval');
const runs: Record<string, number> = {};

const pay = defineTool({
  name: 'pay',
  input: v.object({ amount: v.number() }),
  needsApproval: true,
  async execute({ amount }) {
    runs[`pay ${amount}`] = (runs[`pay ${amount}`] ?? 0) + 1;
    return `paid ${amount}`;
  },
});
const lookup = defineTool({
  name: 'lookup',
  input: v.object({ q: v.string() }),
  async execute({ q }) {
    runs[`lookup ${q}`] = (runs[`lookup ${q}`] ?? 0) + 1;
    return `found ${q}`;
  },
});
const batch = registerDurableBatch({ name: 'approval-batch', tools: [pay, lookup] });


/** Sends decisions from another process, through a DBOSClient. */
function approveFromAnotherProcess(workflowId: string, approvals: DurableApproval[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', fixture], {
      env: { ...process.env, ROLE: 'approve', DB_URL: postgres().databaseUrl('toolrun_approval_dbos'), WORKFLOW: workflowId, APPROVALS: JSON.stringify(approvals) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`approving process exited ${code}: ${err.slice(-2000)}`))));
  });
}

const calls = [
  { id: 'toolu_a', name: 'lookup', arguments: { q: 'invoice 7' } },
  { id: 'toolu_b', name: 'pay', arguments: { amount: 70 } },
  { id: 'toolu_c', name: 'pay', arguments: { amount: 999 } },
];

describe('toolrun/dbos approvals (J)', () => {
  it('J-dbos-approval: a paused batch publishes its requests, takes the decision sent from another process, and resumes after a crash', async () => {
    // Fails if the requests are not published (getEvent waits out), if the decision does not
    // reach the workflow (getResult hangs: the hang guard fails the spec), if decisions are
    // matched by approvalId instead of the call's index (the relaunched run made new ids:
    // both pays would stay pending), if a denied call ran, or if the call answered before the
    // pause ran again after the crash (its result is journaled).
    const workflowId = 'approval-1';
    await batch.start(calls, { workflowId });
    const requests = await DBOS.getEvent<ToolApprovalRequest[]>(workflowId, APPROVAL_EVENT, { timeoutSeconds: 60 });
    expect(requests?.map((r) => [r.index, r.toolName, r.input])).toEqual([
      [1, 'pay', { amount: 70 }],
      [2, 'pay', { amount: 999 }],
    ]);
    // The process running the batch "crashes" while it waits; the relaunch recovers it.
    await DBOS.shutdown();
    await DBOS.launch();
    await approveFromAnotherProcess(workflowId, [
      { index: 1, approved: true },
      { index: 2, approved: false, reason: 'Over the limit.' },
    ]);
    const result = await DBOS.retrieveWorkflow<Awaited<ReturnType<typeof batch.run>>>(workflowId).getResult();
    expect(result.approvalRounds).toBe(1);
    expect(result.messages.map((m) => [m.toolCallId, m.isError])).toEqual([
      ['toolu_a', false],
      ['toolu_b', false],
      ['toolu_c', true],
    ]);
    expect(JSON.stringify(result.messages[2]!.content)).toContain('Over the limit.');
    // Journaled before the pause: not run again by the relaunched attempt, nor by the resumed run.
    expect(runs['lookup invoice 7']).toBe(1);
    expect(runs['pay 70']).toBe(1);
    expect(runs['pay 999']).toBeUndefined();
    expect(await DBOS.getEvent(workflowId, APPROVAL_EVENT, { timeoutSeconds: 5 })).toEqual([]);
  }, 120_000);
});
