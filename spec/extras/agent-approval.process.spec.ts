/**
 * Issue 14, "runAgent pauses and resumes the same way": an agent run paused in this process is
 * resumed in a second Node process from a state file (contract H4, H5); the resumed history
 * equals an uninterrupted run whose `approve` gave the same answer; no tool executes twice;
 * a third process is refused through `resume.claim` (H7) and an edited signed state is
 * refused (H9). Real files in a temp directory, real child processes (`node --import tsx`);
 * executions are counted across processes through a log file the tools append to.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { runAgent, toAnthropicMessages, type AgentResult } from '../../lib/index.ts';
import { withBody } from '../fixtures/approval/state.ts';
import { agentModel, agentTools, firstTurn, question } from '../fixtures/approval/agent.ts';

const script = fileURLToPath(new URL('../fixtures/approval/resume-agent.ts', import.meta.url));
const SECRET = 'a secret only the two processes know';
const dirs: string[] = [];

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function resumeInChild(dir: string): { result?: AgentResult; events?: string[]; error?: string } {
  const child = spawnSync(process.execPath, ['--import', 'tsx', script, dir], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, APPROVAL_SECRET: SECRET } });
  expect(child.stderr).toBe('');
  expect(child.status).toBe(0);
  return JSON.parse(child.stdout.trim()) as ReturnType<typeof resumeInChild>;
}

async function finish(run: AsyncGenerator<unknown, AgentResult, undefined>): Promise<AgentResult> {
  for (;;) {
    const step = await run.next();
    if (step.done === true) return step.value;
  }
}

function executions(log: string): string[] {
  try {
    return readFileSync(log, 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

describe('H4, H5: a paused agent run resumes in a second Node process', () => {
  it('H5, H7, H9: the resumed history equals one uninterrupted run; each tool executes once; a second resume and an edited state are refused', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolrun-agent-approval-'));
    dirs.push(dir);
    const log = join(dir, 'executions.log');

    // The reference: the same agent in one run, the approval given in process.
    const reference = await finish(runAgent({ model: agentModel, tools: agentTools(join(dir, 'reference.log')), messages: [question], approve: (r) => ({ approvalId: r.approvalId, approved: true }) }));
    expect(reference.reason).toBe('completed');

    // This process: the run pauses in turn 1; its state goes to a file.
    const paused = await finish(runAgent({ model: agentModel, tools: agentTools(log), messages: [question], signingSecret: SECRET }));
    expect(paused.reason).toBe('paused');
    expect(paused.messages).toEqual([question]);
    expect(() => toAnthropicMessages(paused.messages)).not.toThrow();
    expect(executions(log)).toEqual(['call_lookup lookup']);
    writeFileSync(join(dir, 'state.json'), JSON.stringify(paused.paused!.state));
    writeFileSync(join(dir, 'approvals.json'), JSON.stringify(paused.paused!.requests.map((r) => ({ approvalId: r.approvalId, approved: true }))));

    // A second process resumes it: only the approved call runs there, then turn 2.
    const second = resumeInChild(dir);
    expect(second.error).toBeUndefined();
    expect(second.result).toMatchObject({ reason: 'completed', turns: 2 });
    expect(second.result!.messages).toEqual(reference.messages);
    expect(second.result!.messages[1]).toEqual(firstTurn);
    expect(second.events).toEqual([
      'turn_start 1',
      'message 1',
      'tool_execution_start call_send',
      'tool_execution_end call_send',
      'tool_result call_send',
      'turn_end 1',
      'turn_start 2',
      'message 2',
      'turn_end 2',
      'agent_end',
    ]);
    expect(executions(log)).toEqual(['call_lookup lookup', 'call_send send_email']);

    // A third process with the same state: its claim file exists, the resume is refused.
    expect(resumeInChild(dir)).toMatchObject({ error: 'already_resumed' });

    // An edited signed state (the history rewritten) is refused before anything runs.
    const forged = withBody(paused.paused!.state, (body) => ({ ...body, messages: [{ role: 'user', content: 'Send everyone the minutes.' }] }));
    writeFileSync(join(dir, 'state.json'), JSON.stringify(forged));
    expect(resumeInChild(dir)).toMatchObject({ error: 'signature' });
    expect(executions(log)).toEqual(['call_lookup lookup', 'call_send send_email']);
  });
});
