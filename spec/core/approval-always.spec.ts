/**
 * Issue 22 item 4 (contract H11): decisions that stand for a tool, as the OpenAI Agents SDK's
 * `approve(item, { alwaysApprove: true })` / `reject(item, { alwaysReject: true })` — given
 * by `approve`, by a resume's approvals, or in `runAgent`, for later turns — and carried in
 * the paused state (read back from states that have none).
 *
 * How these fail: without the standing map `approve` is asked for every call (the counts are
 * 3, not 1), a resume leaves the other calls of the tool pending (the batch pauses again), a
 * state that does not carry the map pauses the second resume, and runAgent's later turn
 * pauses again.
 */
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import {
  defineTool,
  ResumeError,
  runAgent,
  runTools,
  type AgentResult,
  type ToolApprovalHandler,
  type ToolCall,
} from '../../lib/index.ts';
import { memoryJournal, scriptedModel } from '../../lib/testing.ts';
import { bodyOf, withBody } from '../fixtures/approval/state.ts';
import { collect, ofType, text } from '../helpers.ts';

function makeTools(ran: string[]) {
  return [
    defineTool({
      name: 'delete_file',
      input: v.object({ path: v.string() }),
      needsApproval: true,
      execute: ({ path }) => {
        ran.push(`delete ${path}`);
        return `deleted ${path}`;
      },
    }),
    defineTool({
      name: 'send_email',
      input: v.object({ to: v.string() }),
      needsApproval: true,
      execute: ({ to }) => {
        ran.push(`send ${to}`);
        return `sent to ${to}`;
      },
    }),
  ];
}

const del = (id: string, path: string): ToolCall => ({ id, name: 'delete_file', arguments: { path } });
const send = (id: string, to: string): ToolCall => ({ id, name: 'send_email', arguments: { to } });

describe('H11: a decision with always: true stands for the tool', () => {
  it('H11: approve answering always: true for the first call answers the later calls of that tool without asking; other tools are still asked', async () => {
    const ran: string[] = [];
    const asked: string[] = [];
    const approve: ToolApprovalHandler = (request) => {
      asked.push(request.toolCallId);
      return request.toolName === 'delete_file' ? { approvalId: request.approvalId, approved: true, always: true } : { approvalId: request.approvalId, approved: true };
    };
    const calls = [del('d1', 'a'), send('s1', 'ada'), del('d2', 'b'), send('s2', 'bob'), del('d3', 'c')];
    const { events, batch } = await collect(runTools(calls, { tools: makeTools(ran), approve }));
    expect(asked).toEqual(['d1', 's1', 's2']);
    expect(ran.sort()).toEqual(['delete a', 'delete b', 'delete c', 'send ada', 'send bob']);
    expect(batch.paused).toBeUndefined();
    expect(ofType(events, 'tool_approval_request')).toEqual([]);
  });

  it("H11: always: true with approved: false denies the later calls, with the person's reason, and never runs them", async () => {
    const ran: string[] = [];
    let asked = 0;
    const approve: ToolApprovalHandler = (request) => {
      asked++;
      return { approvalId: request.approvalId, approved: false, reason: 'no deleting today', always: true };
    };
    const { batch } = await collect(runTools([del('d1', 'a'), del('d2', 'b')], { tools: makeTools(ran), approve }));
    expect(asked).toBe(1);
    expect(ran).toEqual([]);
    expect(batch.messages.map((m) => [m.isError, text(m)])).toEqual([
      [true, expect.stringContaining('"no deleting today"')],
      [true, expect.stringContaining('"no deleting today"')],
    ]);
  });

  it("H11: it also answers a request beforeToolCall raises for the tool (\"always\" is about the tool, as in the Agents SDK)", async () => {
    const ran: string[] = [];
    const asked: string[] = [];
    const tools = makeTools(ran).map((t) => ({ ...t, needsApproval: false as const }));
    const { batch } = await collect(
      runTools([del('d1', 'a'), del('d2', 'b')], {
        tools,
        beforeToolCall: () => ({ needsApproval: true, reason: 'outside the workspace' }),
        approve: (r) => {
          asked.push(`${r.toolCallId}:${r.source}`);
          return { approvalId: r.approvalId, approved: true, always: true };
        },
      }),
    );
    expect(asked).toEqual(['d1:hook']);
    expect(ran).toEqual(['delete a', 'delete b']);
    expect(batch.paused).toBeUndefined();
  });

  it('H11: an answer whose always is not a boolean is a problem in approve: that call is rejected, nothing stands', async () => {
    const ran: string[] = [];
    let asked = 0;
    const approve: ToolApprovalHandler = (r) => (++asked === 1 ? { approvalId: r.approvalId, approved: true, always: 'yes' as unknown as boolean } : { approvalId: r.approvalId, approved: false });
    const { batch } = await collect(runTools([del('d1', 'a'), del('d2', 'b')], { tools: makeTools(ran), approve }));
    expect(ran).toEqual([]);
    expect(asked).toBe(2);
    expect(text(batch.messages[0]!)).toContain(`always is the string "yes", not a boolean`);
  });

  it("H11: a resume's decision with always answers the tool's other pending calls; a call's own decision wins", async () => {
    const ran: string[] = [];
    const calls = [del('d1', 'a'), del('d2', 'b'), del('d3', 'c'), send('s1', 'ada')];
    const first = (await collect(runTools(calls, { tools: makeTools(ran) }))).batch;
    const [r1, r2, , r4] = first.paused!.requests;
    const { batch } = await collect(
      runTools(calls, {
        tools: makeTools(ran),
        resume: {
          state: first.paused!.state,
          approvals: [
            { approvalId: r2!.approvalId, approved: true, always: true },
            { approvalId: r1!.approvalId, approved: false, reason: 'keep a' },
            { approvalId: r4!.approvalId, approved: true },
          ],
        },
      }),
    );
    expect(batch.paused).toBeUndefined();
    expect(ran.sort()).toEqual(['delete b', 'delete c', 'send ada']);
    expect(text(batch.messages[0]!)).toContain('"keep a"');
  });

  it('H11: the standing decision travels in the state: a call of the tool prepared after a second pause is answered by it', async () => {
    const ran: string[] = [];
    // Sequential: nothing after a deferred call is prepared (S2), so d2 meets its request only in the second resume.
    const calls = [del('d1', 'a'), send('s1', 'ada'), del('d2', 'b')];
    const tools = makeTools(ran);
    const first = (await collect(runTools(calls, { tools, mode: 'sequential' }))).batch;
    expect(first.paused!.requests.map((r) => r.toolCallId)).toEqual(['d1']);
    const second = (
      await collect(runTools(calls, { tools, mode: 'sequential', resume: { state: first.paused!.state, approvals: [{ approvalId: first.paused!.requests[0]!.approvalId, approved: true, always: true }] } }))
    ).batch;
    expect(second.paused!.requests.map((r) => r.toolCallId)).toEqual(['s1']);
    expect(bodyOf(second.paused!.state).standing).toEqual({ delete_file: { approved: true } });
    const third = (
      await collect(runTools(calls, { tools, mode: 'sequential', resume: { state: second.paused!.state, approvals: [{ approvalId: second.paused!.requests[0]!.approvalId, approved: true }] } }))
    ).batch;
    expect(third.paused).toBeUndefined();
    expect(ran).toEqual(['delete a', 'send ada', 'delete b']);
  });

  it('H11: a state without standing decisions has no such field and resumes as before', async () => {
    const ran: string[] = [];
    const calls = [del('d1', 'a'), del('d2', 'b')];
    const first = (await collect(runTools(calls, { tools: makeTools(ran) }))).batch;
    expect(first.paused!.state.payload).not.toContain('standing');
    const { batch } = await collect(runTools(calls, { tools: makeTools(ran), resume: { state: first.paused!.state, approvals: [{ approvalId: first.paused!.requests[0]!.approvalId, approved: true }] } }));
    // No always: the other call stays pending.
    expect(batch.paused!.requests.map((r) => r.toolCallId)).toEqual(['d2']);
  });

  it('H11, H8, H9: refused — two standing decisions that disagree, an always that is not a boolean, a standing decision for a tool the state does not have', async () => {
    const ran: string[] = [];
    const calls = [del('d1', 'a'), del('d2', 'b')];
    const paused = (await collect(runTools(calls, { tools: makeTools(ran) }))).batch.paused!;
    const [r1, r2] = paused.requests;
    const resume = (state: typeof paused.state, approvals: unknown[]) => collect(runTools(calls, { tools: makeTools(ran), resume: { state, approvals: approvals as never } }));
    await expect(
      resume(paused.state, [
        { approvalId: r1!.approvalId, approved: true, always: true },
        { approvalId: r2!.approvalId, approved: false, always: true },
      ]),
    ).rejects.toThrow(/both give tool "delete_file" a decision with always: true/);
    await expect(resume(paused.state, [{ approvalId: r1!.approvalId, approved: true, always: 1 }])).rejects.toMatchObject({ code: 'approval' });
    const forged = withBody(paused.state, (body) => ({ ...body, standing: { wire_money: { approved: true } } }));
    await expect(resume(forged, [])).rejects.toThrow(/standing decision names tool "wire_money"/);
    const badShape = withBody(paused.state, (body) => ({ ...body, standing: { delete_file: { approved: 'yes' } } }));
    await expect(resume(badShape, [])).rejects.toBeInstanceOf(ResumeError);
    expect(ran).toEqual([]);
  });
});

describe('H11, J6: a standing decision is journaled with its always', () => {
  it('H11, J6: after a crash, the journaled decision makes the tool stand again: the later call is not asked', async () => {
    const ran: string[] = [];
    const calls = [del('d1', 'a'), del('d2', 'b')];
    const journal = memoryJournal();
    let asked = 0;
    const approve: ToolApprovalHandler = (r) => {
      asked++;
      return { approvalId: r.approvalId, approved: true, always: true };
    };
    // Sequential: d2 is handed out only once d1 committed (S2); leaving at d1's start is a crash before d2 was opened.
    for await (const event of runTools(calls, { tools: makeTools(ran), approve, journal, mode: 'sequential' })) if (event.type === 'tool_execution_start') break;
    expect(asked).toBe(1);
    expect(journal.entries.get(0)?.decision).toEqual({ approved: true, always: true });
    asked = 0;
    const { batch } = await collect(runTools(calls, { tools: makeTools(ran), approve, journal: journal.copy(), mode: 'sequential', interruptedCalls: 'run-again' }));
    expect(asked).toBe(0);
    expect(batch.messages.map((m) => m.isError)).toEqual([false, false]);
  });
});

describe('H11: runAgent — a standing decision holds for later turns', () => {
  async function finish(run: AsyncGenerator<unknown, AgentResult>): Promise<AgentResult> {
    for (;;) {
      const step = await run.next();
      if (step.done) return step.value;
    }
  }
  const model = () =>
    scriptedModel([
      { role: 'assistant', stopReason: 'toolUse', content: [{ type: 'toolCall', id: 't1', name: 'send_email', arguments: { to: 'ada' } }] },
      { role: 'assistant', stopReason: 'toolUse', content: [{ type: 'toolCall', id: 't2', name: 'send_email', arguments: { to: 'bob' } }] },
      { role: 'assistant', stopReason: 'stop', content: [{ type: 'text', text: 'both sent' }] },
    ]);

  for (const always of [true, false]) {
    it(`H11: resumed with always: ${always}, turn 2's call of the same tool ${always ? 'runs without pausing' : 'pauses again'}`, async () => {
      const ran: string[] = [];
      const m = model();
      const first = await finish(runAgent({ model: m, tools: makeTools(ran), messages: [{ role: 'user', content: 'mail them' }] }));
      expect(first.reason).toBe('paused');
      const approvals = [{ approvalId: first.paused!.requests[0]!.approvalId, approved: true, always }];
      const second = await finish(runAgent({ model: m, tools: makeTools(ran), resume: { state: first.paused!.state, approvals } }));
      if (always) {
        expect(second.reason).toBe('completed');
        expect(ran).toEqual(['send ada', 'send bob']);
      } else {
        expect(second.reason).toBe('paused');
        expect(second.paused!.requests.map((r) => r.toolCallId)).toEqual(['t2']);
        expect(ran).toEqual(['send ada']);
      }
    });
  }

  it("H11: runAgent's approve answering always: true in turn 1 is not asked again in turn 2", async () => {
    const ran: string[] = [];
    let asked = 0;
    const result = await finish(
      runAgent({
        model: model(),
        tools: makeTools(ran),
        messages: [{ role: 'user', content: 'mail them' }],
        approve: (r) => {
          asked++;
          return { approvalId: r.approvalId, approved: true, always: true };
        },
      }),
    );
    expect(result.reason).toBe('completed');
    expect(asked).toBe(1);
    expect(ran).toEqual(['send ada', 'send bob']);
  });
});
