/**
 * Issue 14, "done when": a batch paused in this process is resumed in a second Node process
 * from a state file (contract H4, H5), a third process resuming the same state is refused
 * through `resume.claim` (H7), and an edited signed state is refused (H9). Real files in a
 * temporary directory, real child processes (`node --import tsx`); executions are counted
 * per call across processes through a log file the tools append to.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { runTools, type ToolApprovalRequest, type ToolApprovalResponse, type ToolResultMessage } from '../../lib/index.ts';
import { withBody } from '../fixtures/approval/state.ts';
import { approvalCalls, approvalHook, approvalTools } from '../fixtures/approval/tools.ts';
import { collect, ofType } from '../helpers.ts';

const script = fileURLToPath(new URL('../fixtures/approval/resume.ts', import.meta.url));
const SECRET = 'a secret only the two processes know';
const dirs: string[] = [];

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Runs the resume script in a new Node process on `dir`; returns what it printed. */
function resumeInChild(dir: string): { messages?: ToolResultMessage[]; events?: string[]; paused?: unknown; error?: string } {
  const child = spawnSync(process.execPath, ['--import', 'tsx', script, dir], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, APPROVAL_SECRET: SECRET } });
  expect(child.stderr).toBe('');
  expect(child.status).toBe(0);
  return JSON.parse(child.stdout.trim()) as ReturnType<typeof resumeInChild>;
}

/** Per call index, how many times it executed, from the tools' log. */
function executions(log: string): Map<number, number> {
  const counts = new Map<number, number>();
  let text = '';
  try {
    text = readFileSync(log, 'utf8');
  } catch {
    return counts;
  }
  for (const line of text.split('\n').filter(Boolean)) {
    const index = Number(line.split(' ')[0]);
    counts.set(index, (counts.get(index) ?? 0) + 1);
  }
  return counts;
}

/** The person's decisions: call 1 (remove) approved, call 3 (write /etc) denied, call 4 (secret read) approved. */
function decide(request: ToolApprovalRequest): ToolApprovalResponse {
  return request.index === 3 ? { approvalId: request.approvalId, approved: false, reason: 'Not the system files.' } : { approvalId: request.approvalId, approved: true };
}

describe('H4, H5: a paused batch resumes in a second Node process', () => {
  it('H5, H7, H9: the state file resumed in another process gives the messages of one uninterrupted run; no call executes twice; a second resume and an edited state are refused', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolrun-approval-'));
    dirs.push(dir);
    const log = join(dir, 'executions.log');

    // The reference: the same batch in one run, the decisions given in process.
    const referenceLog = join(dir, 'reference.log');
    const reference = await collect(runTools(approvalCalls, { tools: approvalTools(referenceLog), beforeToolCall: approvalHook, approve: decide }));

    // This process: the batch pauses; its state goes to a file.
    const first = await collect(runTools(approvalCalls, { tools: approvalTools(log), beforeToolCall: approvalHook, signingSecret: SECRET }));
    const paused = first.batch.paused!;
    expect(paused.requests.map((r) => [r.index, r.source])).toEqual([
      [1, 'tool'],
      [3, 'tool'],
      [4, 'hook'],
    ]);
    expect(first.batch.messages.map((m) => m.toolCallId)).toEqual(['toolu_01']);
    writeFileSync(join(dir, 'state.json'), JSON.stringify(paused.state));
    writeFileSync(join(dir, 'approvals.json'), JSON.stringify(paused.requests.map(decide)));
    expect([...executions(log).keys()].sort()).toEqual([0, 2, 5]);

    // A second process resumes it.
    const second = resumeInChild(dir);
    expect(second.error).toBeUndefined();
    expect(second.paused).toBeNull();
    expect(second.messages).toEqual(reference.batch.messages);
    // A start and an end for each call it worked on; a result for every call not released before the pause, in call order.
    const of = (type: string) => second.events!.filter((e) => e.startsWith(`${type} `)).map((e) => Number(e.split(' ')[1]));
    expect(of('tool_execution_start')).toEqual([1, 3, 4]);
    expect(of('tool_execution_end').sort()).toEqual([1, 3, 4]);
    expect(of('tool_result')).toEqual([1, 2, 3, 4, 5]);
    expect(second.messages![3]).toMatchObject({ isError: true, content: [{ type: 'text', text: expect.stringContaining('A person denied this call to tool "write"') }] });
    // The results this process released plus those the second released: every call once, in order.
    expect([...ofType(first.events, 'tool_result').map((e) => e.message), ...second.messages!.slice(1)]).toEqual(reference.batch.messages);
    const counts = executions(log);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect([...counts.keys()].sort()).toEqual([...executions(referenceLog).keys()].sort());

    // A third process with the same state, the denied call now approved: the claim file
    // exists, the resume is refused, the denied call does not run (fails without a shared claim).
    writeFileSync(join(dir, 'approvals.json'), JSON.stringify(paused.requests.map((r) => ({ approvalId: r.approvalId, approved: true }))));
    expect(resumeInChild(dir)).toMatchObject({ error: 'already_resumed' });
    expect(executions(log)).toEqual(counts);

    // An edited signed state (a forged result for call 0) is refused before the claim.
    const forged = withBody(paused.state, (body) => ({
      ...body,
      calls: (body.calls as { result?: object }[]).map((c, i) => (i === 0 ? { ...c, result: { ...c.result!, content: [{ type: 'text', text: 'forged' }] } } : c)),
    }));
    writeFileSync(join(dir, 'state.json'), JSON.stringify(forged));
    expect(resumeInChild(dir)).toMatchObject({ error: 'signature' });
    expect(executions(log)).toEqual(counts);
  });
});
