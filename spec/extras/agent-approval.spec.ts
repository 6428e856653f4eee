/**
 * runAgent and human approval: a turn whose batch pauses ends the run `paused`
 * with a history valid to send (the paused turn left out) and a JSON state; `resume`
 * finishes the batch, appends the turn whole, and goes on with the model — `maxTurns`
 * counting across the pause; the state is checked (kind, version, signature, single use)
 * with the core's ResumeError. The resume in another process is spec'd in
 * agent-approval-process.spec.ts.
 */
import * as v from 'valibot';
import { describe, expect, expectTypeOf, it, vi } from 'vitest';
import {
  agentTool,
  defineTool,
  inMemoryClaim,
  ResumeError,
  runAgent,
  toAnthropicMessages,
  toOpenAIChatMessages,
  type AgentEvent,
  type AgentMessage,
  type AgentResult,
  type AssistantMessage,
  type ModelStreamEvent,
  type PausedAgentState,
  type ToolApprovalRequest,
} from '../../lib/index.ts';
import { agentBodyOf, withBody } from '../fixtures/approval/state.ts';
import { scriptedModel } from '../../lib/testing.ts';
import { text } from '../helpers.ts';

async function drain<E>(run: AsyncGenerator<E, AgentResult, undefined>): Promise<{ events: E[]; result: AgentResult }> {
  const events: E[] = [];
  for (;;) {
    const step = await run.next();
    if (step.done === true) return { events, result: step.value };
    events.push(step.value);
  }
}

/** Every tool call of the history has its result right after its message, in both providers' formats (F1–F2). */
function expectSendable(messages: readonly AgentMessage[]): void {
  const anthropic = toAnthropicMessages(messages);
  anthropic.forEach((message, i) => {
    if (message.role !== 'assistant' || typeof message.content === 'string') return;
    const uses = message.content.filter((b) => b.type === 'tool_use').map((b) => (b as { id: string }).id);
    if (uses.length === 0) return;
    const next = anthropic[i + 1];
    const answered = next === undefined || typeof next.content === 'string' ? [] : next.content.filter((b) => b.type === 'tool_result').map((b) => (b as { tool_use_id: string }).tool_use_id);
    expect(answered, `tool_result blocks after Anthropic message ${i}`).toEqual(uses);
  });
  const openai = toOpenAIChatMessages(messages);
  openai.forEach((message, i) => {
    if (message.role !== 'assistant' || message.tool_calls === undefined) return;
    const ids = message.tool_calls.map((c) => c.id);
    const answers = openai.slice(i + 1, i + 1 + ids.length).map((m) => (m.role === 'tool' ? m.tool_call_id : `(${m.role})`));
    expect(answers, `tool messages after OpenAI message ${i}`).toEqual(ids);
  });
}

const say = (words: string): AssistantMessage => ({ role: 'assistant', content: [{ type: 'text', text: words }], stopReason: 'stop' });
const calls = (...blocks: Array<[id: string, name: string, args: unknown]>): AssistantMessage => ({
  role: 'assistant',
  content: blocks.map(([id, name, args]) => ({ type: 'toolCall' as const, id, name, arguments: args })),
  stopReason: 'toolUse',
});

/** Two tools, one of which asks a person first; counters show what ran, and how often. */
function fixture() {
  const ran = { lookup: 0, send: 0 };
  const tools = [
    defineTool({
      name: 'lookup',
      input: v.object({ name: v.string() }),
      execute: ({ name }) => {
        ran.lookup++;
        return `${name} <${name.toLowerCase()}@example.com>`;
      },
    }),
    defineTool({
      name: 'send_email',
      input: v.object({ to: v.string() }),
      needsApproval: true,
      execute: ({ to }) => {
        ran.send++;
        return `sent to ${to}`;
      },
    }),
  ] as const;
  const turn1 = calls(['c1', 'lookup', { name: 'Ada' }], ['c2', 'send_email', { to: 'ada@example.com' }]);
  return { ran, tools, turn1 };
}

const question: AgentMessage = { role: 'user', content: 'Email Ada.' };

describe('runAgent: a call that needs approval pauses the run (H3)', () => {
  it('reason paused; messages is the history without the paused turn, valid to send; the state is JSON with the turn inside', async () => {
    const { ran, tools, turn1 } = fixture();
    const model = scriptedModel([turn1, say('unused')]);
    const { events, result } = await drain(runAgent({ model, tools, messages: [question] }));
    expect(result.reason).toBe('paused');
    expect(result.turns).toBe(1);
    expect(result.messages).toEqual([question]);
    expectSendable(result.messages);
    expect(ran).toEqual({ lookup: 1, send: 0 });
    expect(model.calls).toBe(1);
    expect(result.paused?.requests).toEqual([expect.objectContaining({ toolCallId: 'c2', toolName: 'send_email', index: 1, input: { to: 'ada@example.com' }, source: 'tool' })]);
    const state = result.paused!.state;
    expect(JSON.parse(JSON.stringify(state))).toEqual(state);
    expect(state).toMatchObject({ version: 2, kind: 'toolrun/paused-agent', payload: expect.any(String) });
    expect(agentBodyOf(state)).toMatchObject({ turn: 1, messages: [question], message: turn1, batch: { version: 2, kind: 'toolrun/paused-batch', payload: expect.any(String) } });
    // Events: the request passes through; the paused turn has no turn_end; agent_end carries the pause.
    const types = events.map((e) => e.type);
    expect(types).toContain('tool_approval_request');
    expect(types).not.toContain('turn_end');
    expect(events.at(-1)).toMatchObject({ type: 'agent_end', reason: 'paused', paused: { requests: result.paused!.requests } });
  });

  it('resume with approval: the batch finishes (the earlier call is not run again), the turn joins the history whole, the model goes on (H5)', async () => {
    const { ran, tools, turn1 } = fixture();
    const model = scriptedModel([turn1, (messages) => say(`done: ${text(messages.at(-1) as { content: { type: string }[] })}`)]);
    const paused = (await drain(runAgent({ model, tools, messages: [question] }))).result.paused!;
    const approvals = [{ approvalId: paused.requests[0]!.approvalId, approved: true }];
    // Through JSON text, as it would come back from a file or a request.
    const { events, result } = await drain(runAgent({ model, tools, resume: { state: JSON.stringify(paused.state), approvals } }));
    expect(result.reason).toBe('completed');
    expect(result.turns).toBe(2);
    expect(ran).toEqual({ lookup: 1, send: 1 });
    expect(result.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'assistant']);
    expect(result.messages[1]).toEqual(turn1);
    expect(result.messages.slice(2, 4).map((m) => (m.role === 'tool' ? [m.toolCallId, m.isError, text(m)] : m.role))).toEqual([
      ['c1', false, 'Ada <ada@example.com>'],
      ['c2', false, 'sent to ada@example.com'],
    ]);
    expect(text(result.messages[4] as AssistantMessage)).toBe('done: sent to ada@example.com');
    expectSendable(result.messages);
    // The resumed run tells the paused turn from its start, then its end with every result.
    expect(events.slice(0, 2)).toEqual([{ type: 'turn_start', turn: 1 }, { type: 'message', turn: 1, message: turn1 }]);
    const end = events.find((e) => e.type === 'turn_end' && e.turn === 1);
    expect(end?.type === 'turn_end' ? end.toolResults.map((r) => r.toolCallId) : end).toEqual(['c1', 'c2']);
  });

  it('resume with a denial: the call gets an error result that tells the model a person denied it, and why (H5)', async () => {
    const { ran, tools, turn1 } = fixture();
    const model = scriptedModel([turn1, say('I will not send it.')]);
    const paused = (await drain(runAgent({ model, tools, messages: [question] }))).result.paused!;
    const { result } = await drain(runAgent({ model, tools, resume: { state: paused.state, approvals: [{ approvalId: paused.requests[0]!.approvalId, approved: false, reason: 'Not today.' }] } }));
    expect(ran.send).toBe(0);
    const denied = result.messages[3]!;
    expect(denied).toMatchObject({ role: 'tool', toolCallId: 'c2', isError: true });
    expect(text(denied as AssistantMessage)).toContain('A person denied this call to tool "send_email"');
    expect(text(denied as AssistantMessage)).toContain('Not today.');
    expect(result.reason).toBe('completed');
  });

  it('resume with no decision: the run pauses again with the same approvalId, the history still without the turn', async () => {
    const { tools, turn1 } = fixture();
    const model = scriptedModel([turn1]);
    const first = (await drain(runAgent({ model, tools, messages: [question] }))).result.paused!;
    const { result } = await drain(runAgent({ model, tools, resume: { state: first.state } }));
    expect(result.reason).toBe('paused');
    expect(result.messages).toEqual([question]);
    expect(result.paused!.requests.map((r) => r.approvalId)).toEqual([first.requests[0]!.approvalId]);
    expect(agentBodyOf(result.paused!.state).turn).toBe(1);
  });

  it('a resume whose signal is already aborted: the pending call ends not run (H6), the run ends aborted with the turn in a valid history', async () => {
    const { ran, tools, turn1 } = fixture();
    const model = scriptedModel([turn1]);
    const paused = (await drain(runAgent({ model, tools, messages: [question] }))).result.paused!;
    const { result } = await drain(runAgent({ model, tools, signal: AbortSignal.abort(), resume: { state: paused.state, approvals: [{ approvalId: paused.requests[0]!.approvalId, approved: true }] } }));
    expect(result.reason).toBe('aborted');
    expect(ran.send).toBe(0);
    expect(result.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool']);
    expect(result.messages[3]).toMatchObject({ toolCallId: 'c2', isError: true });
    expectSendable(result.messages);
    expect(model.calls).toBe(1);
  });

  it('maxTurns counts across the pause: paused in the last turn, the resumed run ends max_turns after the batch, without a model call', async () => {
    const { tools, turn1 } = fixture();
    const model = scriptedModel([turn1]);
    const paused = (await drain(runAgent({ model, tools, messages: [question], maxTurns: 1 }))).result.paused!;
    const { result } = await drain(runAgent({ model, tools, maxTurns: 1, resume: { state: paused.state, approvals: [{ approvalId: paused.requests[0]!.approvalId, approved: true }] } }));
    expect(result).toMatchObject({ reason: 'max_turns', turns: 1 });
    expect(model.calls).toBe(1);
    expectSendable(result.messages);
  });

  it('the approve option passes through runAgent: answered in process, no pause (H2)', async () => {
    const { ran, tools, turn1 } = fixture();
    const asked: string[] = [];
    const model = scriptedModel([turn1, say('sent')]);
    const { result } = await drain(
      runAgent({
        model,
        tools,
        messages: [question],
        approve: (request) => {
          asked.push(request.toolName);
          return { approvalId: request.approvalId, approved: true };
        },
      }),
    );
    expect(asked).toEqual(['send_email']);
    expect(result.reason).toBe('completed');
    expect(ran.send).toBe(1);
  });

  it("beforeToolCall's needsApproval passes through too: its reason is the request's text (H1)", async () => {
    const { tools } = fixture();
    const model = scriptedModel([calls(['c1', 'lookup', { name: 'Bob' }])]);
    const { result } = await drain(runAgent({ model, tools, messages: [question], beforeToolCall: () => ({ needsApproval: true, reason: 'Bob is a new contact' }) }));
    expect(result.paused?.requests).toEqual([expect.objectContaining({ toolName: 'lookup', source: 'hook', reason: 'Bob is a new contact' })]);
  });

  it('a streamed reply pauses the same way: the paused message is the streamed one', async () => {
    const { tools } = fixture();
    const model = scriptedModel([
      async function* (): AsyncGenerator<ModelStreamEvent> {
        yield { type: 'text_delta', text: 'Sending.' };
        yield { type: 'tool_call', call: { id: 's1', name: 'send_email', arguments: { to: 'x@example.com' } } };
        yield { type: 'stop', stopReason: 'toolUse' };
      },
    ]);
    const { events, result } = await drain(runAgent({ model, tools, messages: [question] }));
    expect(result.reason).toBe('paused');
    // The pending call is not answered in the paused run: no end, no result.
    expect(events.filter((e) => e.type === 'tool_execution_end' || e.type === 'tool_result')).toEqual([]);
    expect(agentBodyOf(result.paused!.state).message.content).toEqual([
      { type: 'text', text: 'Sending.' },
      { type: 'toolCall', id: 's1', name: 'send_email', arguments: { to: 'x@example.com' } },
    ]);
  });

  it('a streamed reply that breaks does not pause: the pending call ends not run, the run ends with error, the history is valid', async () => {
    const { ran, tools } = fixture();
    const failure = new Error('connection reset');
    const model = scriptedModel([
      async function* (): AsyncGenerator<ModelStreamEvent> {
        yield { type: 'tool_call', call: { id: 's1', name: 'send_email', arguments: { to: 'x@example.com' } } };
        throw failure;
      },
    ]);
    const { events, result } = await drain(runAgent({ model, tools, messages: [question] }));
    expect(result.reason).toBe('error');
    expect(events.filter((e) => e.type === 'tool_execution_end').map((e) => (e as { outcome: string }).outcome)).toEqual(['not_run']);
    expect(result.error).toBe(failure);
    expect(result.paused).toBeUndefined();
    expect(ran.send).toBe(0);
    expect(result.messages.at(-1)).toMatchObject({ role: 'tool', toolCallId: 's1', isError: true });
    expectSendable(result.messages);
  });

  it('a sub-agent cannot pause: its call fails with a text that says a person must approve; with approve it runs', async () => {
    const { tools } = fixture();
    const inner = () => scriptedModel([calls(['i1', 'send_email', { to: 'ada@example.com' }]), say('sent')]);
    const outerTurn = calls(['o1', 'helper', { prompt: 'email Ada' }]);
    const helper = agentTool({ name: 'helper', model: inner(), tools });
    const { result } = await drain(runAgent({ model: scriptedModel([outerTurn, say('ok')]), tools: [helper], messages: [question] }));
    expect(result.messages[2]).toMatchObject({ role: 'tool', toolCallId: 'o1', isError: true });
    expect(text(result.messages[2] as AssistantMessage)).toMatch(/Sub-agent "helper" stopped: its calls to send_email need a person's approval/);
    const approving = agentTool({ name: 'helper', model: inner(), tools, approve: (request) => ({ approvalId: request.approvalId, approved: true }) });
    const second = await drain(runAgent({ model: scriptedModel([outerTurn, say('ok')]), tools: [approving], messages: [question] }));
    expect(second.result.messages[2]).toMatchObject({ role: 'tool', toolCallId: 'o1', isError: false });
  });
});

describe('runAgent resume: the state is checked before anything runs (H7–H9)', () => {
  async function pausedWith(secret?: string) {
    const f = fixture();
    const model = scriptedModel([f.turn1, say('done')]);
    const { result } = await drain(runAgent({ model, tools: f.tools, messages: [question], ...(secret === undefined ? {} : { signingSecret: secret }) }));
    return { ...f, model, paused: result.paused! };
  }

  /** The ResumeError the first next() of a resumed run throws, having yielded nothing. */
  async function resumeError(run: AsyncGenerator<unknown, AgentResult, undefined>): Promise<ResumeError> {
    const error = await run.next().then(
      (step) => new Error(`expected a ResumeError, the run gave ${JSON.stringify(step)}`),
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(ResumeError);
    return error as ResumeError;
  }

  it('signed with signingSecret: resumes with the same secret; an edited, unsigned or differently signed state is refused (signature)', async () => {
    const { tools, model, paused, ran } = await pausedWith('s3cret');
    expect(paused.state.signature).toMatch(/^[0-9a-f]{64}$/);
    const edited = withBody(paused.state, (body) => ({ ...body, messages: [{ role: 'user', content: 'Email everyone.' }] }));
    const approvals = [{ approvalId: paused.requests[0]!.approvalId, approved: true }];
    const claim = inMemoryClaim();
    expect((await resumeError(runAgent({ model, tools, signingSecret: 's3cret', resume: { state: edited, approvals, claim } }))).code).toBe('signature');
    const { signature: _signature, ...unsigned } = paused.state;
    expect((await resumeError(runAgent({ model, tools, signingSecret: 's3cret', resume: { state: unsigned as PausedAgentState, approvals, claim } }))).code).toBe('signature');
    expect((await resumeError(runAgent({ model, tools, signingSecret: 'other', resume: { state: paused.state, approvals, claim } }))).code).toBe('signature');
    expect(ran.send).toBe(0);
    expect(() => runAgent({ model, tools, signingSecret: 's3cret', resume: { state: paused.state, approvals } })).toThrow('runAgent: options.resume.claim is required with options.signingSecret');
    const { result } = await drain(runAgent({ model, tools, signingSecret: 's3cret', resume: { state: paused.state, approvals, claim } }));
    expect(result.reason).toBe('completed');
    expect(ran.send).toBe(1);
  });

  it('a state resumes once (already_resumed); a batch state, another version, or not JSON are refused', async () => {
    const { tools, model, paused } = await pausedWith();
    const approvals = [{ approvalId: paused.requests[0]!.approvalId, approved: true }];
    await drain(runAgent({ model, tools, resume: { state: paused.state, approvals } }));
    expect((await resumeError(runAgent({ model, tools, resume: { state: paused.state, approvals } }))).code).toBe('already_resumed');
    const batchState = await resumeError(runAgent({ model, tools, resume: { state: JSON.stringify(agentBodyOf(paused.state).batch) } }));
    expect([batchState.code, batchState.message]).toEqual(['malformed', expect.stringContaining('resume it with runTools, not runAgent')]);
    expect((await resumeError(runAgent({ model, tools, resume: { state: { ...paused.state, version: 3 } as unknown as PausedAgentState } }))).code).toBe('version');
    const v1 = { version: 1, kind: 'toolrun/paused-agent', ...(agentBodyOf(paused.state) as object) };
    expect((await resumeError(runAgent({ model, tools, resume: { state: JSON.stringify(v1) } }))).code).toBe('version');
    expect((await resumeError(runAgent({ model, tools, resume: { state: '{"kind":' } }))).code).toBe('malformed');
    expect((await resumeError(runAgent({ model, tools, resume: { state: withBody(paused.state, (body) => ({ ...body, turn: 0 })) } }))).code).toBe('malformed');
  });

  // Fails without the depth bound: the state is then accepted (or a RangeError
  // escapes here; every other throw is now wrapped as malformed too).
  it('H9: runAgent resume wraps a deep history as ResumeError', async () => {
    const { tools, model, paused } = await pausedWith();
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    const state = { ...paused.state, payload: paused.state.payload.replace('{"role":"user",', `{"role":"user","extra":${deep},`) };
    expect(state.payload).toContain(deep);
    const error = await resumeError(runAgent({ model, tools, resume: { state } }));
    expect([error.code, error.message]).toEqual(['malformed', expect.stringContaining('nested more than 256 deep')]);
    const asText = await resumeError(runAgent({ model, tools, resume: { state: JSON.stringify(state) } }));
    expect(asText.code).toBe('malformed');
  });

  // Fails if the agent reader parses before it bounds, or before it checks the signature.
  it('H9: runAgent refuses a 132 M-char state before parsing, and checks the signature before the payload is parsed', async () => {
    const { tools, model, paused } = await pausedWith('s3cret');
    const parse = vi.spyOn(JSON, 'parse');
    try {
      const huge = `{"version":2,"kind":"toolrun/paused-agent","payload":"${'x'.repeat(132_000_000)}"}`;
      const error = await resumeError(runAgent({ model, tools, signingSecret: 's3cret', resume: { state: huge, claim: inMemoryClaim() } }));
      expect(error.code).toBe('malformed');
      expect(parse).not.toHaveBeenCalled();
      const edited = withBody(paused.state, (body) => ({ ...body, turn: 2 }));
      expect((await resumeError(runAgent({ model, tools, signingSecret: 's3cret', resume: { state: edited, claim: inMemoryClaim() } }))).code).toBe('signature');
      expect(parse.mock.calls.filter(([text]) => text === edited.payload)).toEqual([]);
    } finally {
      parse.mockRestore();
    }
  });

  it("the batch's own checks apply: other tools (tools), an unknown approvalId (approval)", async () => {
    const { tools, model, paused } = await pausedWith();
    expect((await resumeError(runAgent({ model, tools: [tools[0]], resume: { state: paused.state } }))).code).toBe('tools');
    expect((await resumeError(runAgent({ model, tools, resume: { state: paused.state, approvals: [{ approvalId: 'nope', approved: true }] } }))).code).toBe('approval');
  });

  it('messages and resume together, or resume not an object, throw a TypeError at once', () => {
    const { tools } = fixture();
    const model = scriptedModel([]);
    expect(() => runAgent({ model, tools, messages: [question], resume: { state: '{}' } })).toThrow(/options\.messages must be left out with options\.resume/);
    expect(() => runAgent({ model, tools, resume: 'state' as never })).toThrow(/options\.resume must be an object/);
    expect(() => runAgent({ model, tools })).toThrow(/options\.messages must be an array/);
  });
});

describe('types (checked by tsc)', () => {
  it('the request event is an AgentEvent; the result says paused and holds a PausedAgentState', () => {
    expectTypeOf<Extract<AgentEvent, { type: 'tool_approval_request' }>['request']>().toEqualTypeOf<ToolApprovalRequest>();
    expectTypeOf<NonNullable<AgentResult['paused']>['state']>().toEqualTypeOf<PausedAgentState>();
    expectTypeOf<AgentResult['reason']>().toEqualTypeOf<'completed' | 'terminated' | 'max_turns' | 'aborted' | 'error' | 'paused'>();
  });
});
