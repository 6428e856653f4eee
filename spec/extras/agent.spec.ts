/**
 * The agent loop (lib/extras/agent.ts) and sub-agents as tools (lib/extras/agent-tool.ts), with a
 * scripted model: every way a run ends, streaming replies, nesting two levels deep, and a
 * retried tool — each ending with a history that is valid to send again.
 */
import { getEventListeners } from 'node:events';
import type Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import * as v from 'valibot';
import { afterEach, describe, expect, expectTypeOf, it, vi } from 'vitest';
import {
  agentTool,
  assistantText,
  defineTool,
  fromAnthropicMessage,
  fromAnthropicStream,
  fromOpenAIChatMessage,
  runAgent,
  toAnthropicMessages,
  toOpenAIChatMessages,
  withRetry,
  type AgentEvent,
  type AgentMessage,
  type AgentResult,
  type AssistantMessage,
  type ModelStreamEvent,
  type ToolCall,
} from '../../lib/index.ts';
import { scriptedModel } from '../../lib/testing.ts';
import { gate, settle, text } from '../helpers.ts';

afterEach(() => {
  vi.useRealTimers();
});

/** Drains a run: its events and its result. */
async function drain<E>(run: AsyncGenerator<E, AgentResult, undefined>): Promise<{ events: E[]; result: AgentResult }> {
  const events: E[] = [];
  for (;;) {
    const step = await run.next();
    if (step.done === true) return { events, result: step.value };
    events.push(step.value);
  }
}

/**
 * The rule every provider enforces: each assistant message's tool calls are answered by
 * the tool messages right after it, one each, in order, ids matching; no tool message
 * answers nothing.
 */
function expectValidHistory(messages: readonly AgentMessage[]): void {
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    if (message.role === 'tool') throw new Error(`tool result at ${i} answers no call`);
    if (message.role !== 'assistant') continue;
    const calls = message.content.filter((b) => b.type === 'toolCall');
    const answers = messages.slice(i + 1, i + 1 + calls.length);
    expect(answers.map((m) => (m.role === 'tool' ? m.toolCallId : `(${m.role})`)), `answers of the assistant message at ${i}`).toEqual(calls.map((c) => c.id));
    i += calls.length;
  }
}

const user = (content: string): AgentMessage => ({ role: 'user', content });
const say = (text: string): AssistantMessage => ({ role: 'assistant', content: [{ type: 'text', text }], stopReason: 'stop' });
const call = (id: string, name: string, args: unknown, text?: string): AssistantMessage => ({
  role: 'assistant',
  content: [...(text === undefined ? [] : [{ type: 'text' as const, text }]), { type: 'toolCall', id, name, arguments: args }],
  stopReason: 'toolUse',
});

const echo = defineTool({
  name: 'echo',
  input: v.object({ text: v.string() }),
  async *execute({ text }) {
    yield `echoing ${text}`;
    return `echo: ${text}`;
  },
});

const types = (events: ReadonlyArray<{ type: string }>) => events.map((e) => e.type);

describe('runAgent: the loop around runTools (seed 000 runLoop)', () => {
  it('normal end: tool turn, then an answer without calls → completed; events in order; the model sees the results', async () => {
    const seen: AgentMessage[][] = [];
    const model = scriptedModel([
      call('t1', 'echo', { text: 'hi' }, 'Let me echo.'),
      (messages) => {
        seen.push([...messages]);
        return say('Done: echo said hi.');
      },
    ]);
    const { events, result } = await drain(runAgent({ model, tools: [echo], messages: [user('echo hi')] }));
    expectTypeOf(events[0]!).toEqualTypeOf<AgentEvent<typeof echo, never>>();
    expect(types(events)).toEqual([
      'turn_start',
      'message',
      'tool_execution_start',
      'tool_execution_update',
      'tool_execution_end',
      'tool_result',
      'turn_end',
      'turn_start',
      'message',
      'turn_end',
      'agent_end',
    ]);
    expect(result.reason).toBe('completed');
    expect(result.turns).toBe(2);
    expect(result.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(seen[0]!.at(-1)).toMatchObject({ role: 'tool', toolCallId: 't1', content: [{ type: 'text', text: 'echo: hi' }] });
    expect(events.at(-1)).toEqual({ type: 'agent_end', ...result });
    const turnEnd = events.find((e) => e.type === 'turn_end')!;
    expect(turnEnd).toMatchObject({ turn: 1, toolResults: [{ toolCallId: 't1' }] });
    expectValidHistory(result.messages);
  });

  it('terminate: a batch whose every result asks to terminate ends the run → terminated', async () => {
    const submit = defineTool({
      name: 'submit',
      input: v.object({ answer: v.string() }),
      execute: ({ answer }) => ({ content: [{ type: 'text' as const, text: answer }], terminate: true }),
    });
    const model = scriptedModel([call('s1', 'submit', { answer: '42' })]);
    const { result } = await drain(runAgent({ model, tools: [submit], messages: [user('answer')] }));
    expect(result.reason).toBe('terminated');
    expect(model.calls).toBe(1);
    expect(result.messages.at(-1)).toMatchObject({ role: 'tool', toolCallId: 's1' });
    expectValidHistory(result.messages);
  });

  it('P6: a beforeToolCall that blocks with terminate: true ends the run after that batch → terminated, history valid', async () => {
    const model = scriptedModel([
      { role: 'assistant', content: [{ type: 'toolCall', id: 'e1', name: 'echo', arguments: { text: 'a' } }, { type: 'toolCall', id: 'e2', name: 'echo', arguments: { text: 'b' } }], stopReason: 'toolUse' },
      call('e3', 'echo', { text: 'never' }),
    ]);
    const { result } = await drain(
      runAgent({
        model,
        tools: [echo],
        messages: [user('go')],
        beforeToolCall: ({ toolCall }) => (toolCall.id === 'e2' ? { block: true, reason: 'Stop here: a person takes over.', terminate: true } : undefined),
      }),
    );
    expect(result.reason).toBe('terminated');
    expect(model.calls).toBe(1);
    expect(result.messages.slice(-2)).toMatchObject([
      { role: 'tool', toolCallId: 'e1', isError: false, content: [{ type: 'text', text: 'echo: a' }] },
      { role: 'tool', toolCallId: 'e2', isError: true, content: [{ type: 'text', text: 'Stop here: a person takes over.' }] },
    ]);
    expectValidHistory(result.messages);
  });

  it('maxTurns: the last turn’s calls are run and answered, then the run ends with max_turns (no exception)', async () => {
    const model = scriptedModel([1, 2, 3, 4].map((n) => call(`t${n}`, 'echo', { text: String(n) })));
    const { events, result } = await drain(runAgent({ model, tools: [echo], messages: [user('loop')], maxTurns: 3 }));
    expect(result.reason).toBe('max_turns');
    expect(result.turns).toBe(3);
    expect(model.calls).toBe(3);
    expect(result.messages.at(-1)).toMatchObject({ role: 'tool', toolCallId: 't3' });
    expect(events.at(-1)).toMatchObject({ type: 'agent_end', reason: 'max_turns', turns: 3 });
    expectValidHistory(result.messages);
  });

  it('abort mid-tool: every call answered (interrupted / not run), reason aborted, one listener on the signal, removed', async () => {
    const controller = new AbortController();
    const started = gate();
    let toolSignal: AbortSignal | undefined;
    const wait = defineTool({
      name: 'wait',
      input: v.object({}),
      execute: (_i, { signal }) => {
        toolSignal = signal;
        started.open();
        return new Promise((_r, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
      },
    });
    const exclusive = defineTool({ name: 'after', input: v.object({}), executionMode: 'sequential', execute: () => 'never' });
    const model = scriptedModel([
      { role: 'assistant', content: [{ type: 'toolCall', id: 'w1', name: 'wait', arguments: {} }, { type: 'toolCall', id: 'a1', name: 'after', arguments: {} }] },
    ]);
    const running = drain(runAgent({ model, tools: [wait, exclusive], messages: [user('wait')], signal: controller.signal }));
    await started.promise;
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    controller.abort(new Error('Esc'));
    const { events, result } = await running;
    expect(result.reason).toBe('aborted');
    expect(toolSignal?.aborted).toBe(true);
    const ends = events.filter((e) => e.type === 'tool_execution_end');
    expect(ends.map((e) => e.outcome).sort()).toEqual(['interrupted', 'not_run']);
    expect(result.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool']);
    expectValidHistory(result.messages);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    expect(types(events).slice(-2)).toEqual(['turn_end', 'agent_end']);
  });

  it('abort mid-model: the pending model call is abandoned, no assistant message is added', async () => {
    const controller = new AbortController();
    let modelSignal: AbortSignal | undefined;
    const model = scriptedModel([
      call('t1', 'echo', { text: 'one' }),
      (_messages, { signal }) => {
        modelSignal = signal;
        return new Promise<AssistantMessage>(() => {}); // a model that ignores its signal
      },
    ]);
    const running = drain(runAgent({ model, tools: [echo], messages: [user('go')], signal: controller.signal }));
    await settle();
    expect(modelSignal).toBeDefined();
    controller.abort();
    const { events, result } = await running;
    expect(modelSignal?.aborted).toBe(true);
    expect(result.reason).toBe('aborted');
    expect(result.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(events.filter((e) => e.type === 'turn_end').at(-1)).toEqual({ type: 'turn_end', turn: 2, message: undefined, toolResults: [] });
    expectValidHistory(result.messages);
  });

  it('an already-aborted signal ends the run before the model is called', async () => {
    const controller = new AbortController();
    controller.abort();
    const model = scriptedModel([say('never')]);
    const { events, result } = await drain(runAgent({ model, tools: [], messages: [user('x')], signal: controller.signal }));
    expect(types(events)).toEqual(['agent_end']);
    expect(result).toMatchObject({ reason: 'aborted', turns: 0 });
    expect(model.calls).toBe(0);
  });

  it('a model failure ends the run with reason error, the history as it was', async () => {
    const failure = new Error('529 overloaded');
    const model = scriptedModel([
      call('t1', 'echo', { text: 'a' }),
      () => Promise.reject(failure),
    ]);
    const { result } = await drain(runAgent({ model, tools: [echo], messages: [user('x')] }));
    expect(result.reason).toBe('error');
    expect(result.error).toBe(failure);
    expectValidHistory(result.messages);

    const noReply = await drain(runAgent({ model: scriptedModel([]), tools: [], messages: [] }));
    expect((noReply.result.error as Error).message).toBe('scriptedModel: no reply left for turn 1 (the script has 0)');

    const wrong = await drain(runAgent({ model: () => ({ role: 'user', content: 'hi' }) as never, tools: [], messages: [] }));
    expect((wrong.result.error as Error).message).toMatch(/^runAgent: the model must return an assistant message/);
  });

  it('leaving the loop early aborts the model call and closes the running tools (A5)', async () => {
    const closed: string[] = [];
    const ticker = defineTool({
      name: 'tick',
      input: v.object({}),
      async *execute(_i, { signal }) {
        try {
          for (let i = 0; ; i++) yield i;
        } finally {
          closed.push(`tick finally, aborted=${signal.aborted}`);
        }
      },
    });
    const run = runAgent({ model: scriptedModel([call('k', 'tick', {})]), tools: [ticker], messages: [user('x')] });
    for await (const event of run) {
      if (event.type === 'tool_execution_update' && event.progress === 3) break;
    }
    await settle();
    expect(closed).toEqual(['tick finally, aborted=true']);
  });

  it('rejects malformed options at once', () => {
    expect(() => runAgent({ model: 'gpt' as never, tools: [], messages: [] })).toThrow(/options\.model must be a function/);
    expect(() => runAgent({ model: scriptedModel([]), tools: [], messages: [], maxTurns: 0 })).toThrow('runAgent: options.maxTurns must be a positive integer or Infinity, received number 0');
    expect(() => runAgent({ model: scriptedModel([]), tools: [echo, echo], messages: [] })).toThrow(/two tools named "echo"/);
    // The batch options get runTools' own checks, before any run exists.
    expect(() => runAgent({ model: scriptedModel([]), tools: [echo], messages: [], mode: 'fast' as never })).toThrow("runTools: options.mode must be 'parallel' or 'sequential', received string \"fast\"");
    expect(() => runAgent({ model: scriptedModel([]), tools: [{ name: 'x' } as never], messages: [] })).toThrow('runTools: options.tools[0]: tool "x".execute must be a function, received undefined');
    expect(() => runAgent({ model: scriptedModel([]), tools: 'echo' as never, messages: [] })).toThrow(/options\.tools must be an array/);
  });
});

describe('runAgent with a streamed reply (S4: calls start while the model still writes)', () => {
  /** A stream the test drives: push events, then end. */
  function controlledStream() {
    const queue: Array<ModelStreamEvent | ToolCall> = [];
    let wake: (() => void) | undefined;
    let ended = false;
    let returned = false;
    const stream: AsyncIterable<ModelStreamEvent | ToolCall> = {
      [Symbol.asyncIterator]: () => ({
        async next() {
          for (;;) {
            const item = queue.shift();
            if (item !== undefined) return { done: false, value: item };
            if (ended) return { done: true, value: undefined };
            await new Promise<void>((r) => (wake = r));
          }
        },
        async return() {
          returned = true;
          return { done: true, value: undefined };
        },
      }),
    };
    return {
      stream,
      push(item: ModelStreamEvent | ToolCall) {
        queue.push(item);
        wake?.();
      },
      end() {
        ended = true;
        wake?.();
      },
      get returned() {
        return returned;
      },
    };
  }

  it('a call streamed mid-message starts before the message is complete; the message keeps text and calls in order', async () => {
    const s = controlledStream();
    const hold = gate();
    const slow = defineTool({
      name: 'slow',
      input: v.object({}),
      async *execute() {
        yield 'started';
        await hold.promise;
        return 'slow done';
      },
    });
    const model = scriptedModel([() => s.stream, say('all done')]);
    const events: AgentEvent[] = [];
    const running = (async () => {
      const run = runAgent({ model, tools: [slow, echo], messages: [user('x')] });
      for (;;) {
        const step = await run.next();
        if (step.done) return step.value;
        events.push(step.value);
      }
    })();
    s.push({ type: 'text_delta', text: 'Working ' });
    s.push({ type: 'text_delta', text: 'on it.' });
    s.push({ id: 'c1', name: 'slow', arguments: {} }); // a bare ToolCall, as fromAnthropicStream yields
    await settle();
    expect(types(events)).toEqual(['turn_start', 'message_update', 'message_update', 'tool_execution_start', 'tool_execution_update']);
    s.push({ type: 'tool_call', call: { id: 'c2', name: 'echo', arguments: '{"text":"b"}' } });
    s.end();
    await settle();
    hold.open();
    const result = await running;
    const message = events.find((e) => e.type === 'message')!;
    expect(message).toEqual({
      type: 'message',
      turn: 1,
      message: {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Working on it.' },
          { type: 'toolCall', id: 'c1', name: 'slow', arguments: {} },
          { type: 'toolCall', id: 'c2', name: 'echo', arguments: '{"text":"b"}' },
        ],
        stopReason: 'toolUse',
      },
    });
    expect(result.reason).toBe('completed');
    expect(result.messages.filter((m) => m.role === 'tool').map((m) => text(m as never))).toEqual(['slow done', 'echo: b']);
    expectValidHistory(result.messages);
  });

  it('abort mid-stream: the partial message is kept with stopReason aborted, every call in it answered; the stream is let go of', async () => {
    const s = controlledStream();
    const controller = new AbortController();
    const wait = defineTool({
      name: 'wait',
      input: v.object({}),
      execute: (_i, { signal }) => new Promise((_r, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true })),
    });
    const running = drain(runAgent({ model: scriptedModel([() => s.stream]), tools: [wait], messages: [user('x')], signal: controller.signal }));
    s.push({ type: 'text_delta', text: 'Starting' });
    s.push({ id: 'c1', name: 'wait', arguments: {} });
    await settle();
    controller.abort();
    // The stream delivers one more call after the abort: it is answered, never run.
    s.push({ id: 'c2', name: 'wait', arguments: {} });
    const { events, result } = await running;
    expect(result.reason).toBe('aborted');
    const message = result.messages[1] as AssistantMessage;
    expect(message.stopReason).toBe('aborted');
    expect(message.content.map((b) => b.type)).toEqual(['text', 'toolCall']);
    expect(events.filter((e) => e.type === 'tool_execution_end').map((e) => e.outcome)).toEqual(['interrupted']);
    expectValidHistory(result.messages);
    await settle();
    expect(s.returned).toBe(true);
  });

  it('abort while a permission prompt holds the batch: calls the stream delivered but runTools never took are answered as not run', async () => {
    const s = controlledStream();
    const controller = new AbortController();
    const asked = gate();
    const running = drain(
      runAgent({
        model: scriptedModel([() => s.stream]),
        tools: [echo],
        messages: [user('x')],
        signal: controller.signal,
        // Prepare is serial (P1): while call 1 waits for the user, call 2 is not read.
        beforeToolCall: () => {
          asked.open();
          return new Promise(() => {});
        },
      }),
    );
    s.push({ id: 'c1', name: 'echo', arguments: { text: 'a' } });
    s.push({ id: 'c2', name: 'echo', arguments: { text: 'b' } });
    s.end();
    await asked.promise;
    await settle();
    controller.abort();
    const { events, result } = await running;
    expect(events.filter((e) => e.type === 'tool_execution_end').map((e) => [e.toolCallId, e.outcome])).toEqual([
      ['c1', 'not_run'],
      ['c2', 'not_run'],
    ]);
    expect(events.filter((e) => e.type === 'tool_result').map((e) => e.index)).toEqual([0, 1]);
    expect(text(result.messages[3] as never)).toMatch(/^Not run: the run was aborted before tool "echo" started/);
    expectValidHistory(result.messages);
  });

  it('abort before anything arrived: no message at all', async () => {
    const s = controlledStream();
    const controller = new AbortController();
    const running = drain(runAgent({ model: scriptedModel([() => s.stream]), tools: [], messages: [user('x')], signal: controller.signal }));
    await settle();
    controller.abort();
    const { result } = await running;
    expect(result.messages).toEqual([user('x')]);
    expect(result.reason).toBe('aborted');
  });

  it('a stream adapter as the model (fromAnthropicStream): its calls run mid-message; a final message it returns keeps the thinking signature', async () => {
    const events = [
      { type: 'message_start', message: { id: 'msg_1', role: 'assistant', content: [] } },
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Echo it.' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig_abc' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_1', name: 'echo', input: {} } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"text":' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '"hi"}' } },
      { type: 'content_block_stop', index: 1 },
      { type: 'message_delta', delta: { stop_reason: 'tool_use' } },
      { type: 'message_stop' },
    ];
    const final = fromAnthropicMessage({
      content: [
        { type: 'thinking', thinking: 'Echo it.', signature: 'sig_abc' },
        { type: 'tool_use', id: 'toolu_1', name: 'echo', input: { text: 'hi' } },
      ],
      stop_reason: 'tool_use',
    });
    // The shape of a real model function: the adapter's calls, then the SDK's final message.
    async function* streamed(): AsyncGenerator<ToolCall, AssistantMessage, undefined> {
      yield* fromAnthropicStream(events);
      return final;
    }
    const { result } = await drain(runAgent({ model: scriptedModel([() => streamed(), say('done')]), tools: [echo], messages: [user('x')] }));
    expect(result.reason).toBe('completed');
    expect(result.messages[1]).toEqual({ ...final, stopReason: 'toolUse' });
    expect(text(result.messages[2] as never)).toBe('echo: hi');

    // Without the final message, the history holds what the adapter streamed: the call, no thinking.
    const bare = await drain(runAgent({ model: scriptedModel([() => fromAnthropicStream(events), say('done')]), tools: [echo], messages: [user('x')] }));
    expect(bare.result.messages[1]).toEqual({ role: 'assistant', content: [{ type: 'toolCall', id: 'toolu_1', name: 'echo', arguments: { text: 'hi' } }], stopReason: 'toolUse' });
    expectValidHistory(bare.result.messages);

    // An async model function may resolve to the stream.
    const later = await drain(runAgent({ model: scriptedModel([async () => streamed(), say('done')]), tools: [echo], messages: [user('x')] }));
    expect(later.result.messages[1]).toEqual({ ...final, stopReason: 'toolUse' });
  });

  it('a stream that breaks: calls received are answered, the run ends with reason error', async () => {
    const broken = new Error('stream broke');
    async function* stream(): AsyncGenerator<ModelStreamEvent | ToolCall> {
      yield { id: 'c1', name: 'echo', arguments: { text: 'x' } };
      throw broken;
    }
    const { result } = await drain(runAgent({ model: scriptedModel([() => stream()]), tools: [echo], messages: [user('x')] }));
    expect(result.reason).toBe('error');
    expect(result.error).toBe(broken);
    expect((result.messages[1] as AssistantMessage).stopReason).toBe('error');
    expectValidHistory(result.messages);
  });
});

describe('agentTool: sub-agents as tools (seed 002)', () => {
  const lookup = defineTool({
    name: 'lookup',
    input: v.object({ key: v.string() }),
    async *execute({ key }) {
      yield `looking up ${key}`;
      return `${key}=7`;
    },
  });

  /** parent → explore (depth 1) → deep (depth 2) → lookup. */
  function nested(options: { deepModel?: Parameters<typeof agentTool>[0]['model'] } = {}) {
    const deep = agentTool({
      name: 'deep',
      description: 'Looks things up',
      model: options.deepModel ?? scriptedModel([call('d1', 'lookup', { key: 'k' }), say('deep answer: k=7')]),
      tools: [lookup],
      maxTurns: 3,
    });
    const explore = agentTool({
      name: 'explore',
      model: scriptedModel([call('e1', 'deep', { prompt: 'find k' }), say('explore answer: k is 7')]),
      tools: [deep],
    });
    const parent = scriptedModel([call('p1', 'explore', { prompt: 'what is k?' }), say('k is 7')]);
    return { deep, explore, parent };
  }

  it('a sub-agent inside a sub-agent (depth 2): nested events arrive live, tagged with depth and path; results flow up', async () => {
    const { explore, parent } = nested();
    expectTypeOf(explore.execute).parameter(0).toEqualTypeOf<{ prompt: string }>();
    const { events, result } = await drain(runAgent({ model: parent, tools: [explore], messages: [user('what is k?')] }));
    expect(result.reason).toBe('completed');
    expect(assistantText(result.messages.at(-1) as AssistantMessage)).toBe('k is 7');
    const toolMessage = result.messages[2]!;
    expect(toolMessage).toMatchObject({ role: 'tool', toolCallId: 'p1', isError: false, content: [{ type: 'text', text: 'explore answer: k is 7' }] });
    expect((toolMessage as { details?: { reason: string; turns: number } }).details).toMatchObject({ reason: 'completed', turns: 2 });

    const progress = events.flatMap((e) => (e.type === 'tool_execution_update' ? [e.progress] : []));
    const tagged = progress.map((p) => `${p.depth} ${p.path.join('/')} ${p.agent} ${p.event.type}${p.event.type === 'tool_execution_start' ? ` ${p.event.toolName}` : ''}`);
    expect(tagged).toContain('1 p1 explore tool_execution_start deep');
    expect(tagged).toContain('2 p1/e1 deep tool_execution_start lookup');
    expect(tagged).toContain('2 p1/e1 deep tool_execution_update');
    expect(tagged.at(-1)).toBe('1 p1 explore agent_end');
    // The deeper events come before the level-1 end of the call that ran them: live, not after the fact.
    expect(tagged.indexOf('2 p1/e1 deep agent_end')).toBeLessThan(tagged.indexOf('1 p1 explore tool_execution_end'));
    for (const p of progress) expect(p.parentToolCallId).toBe(p.path.at(-1));
    // Deeper updates are passed up unwrapped: no level-1 update that wraps a level-2 one.
    expect(progress.filter((p) => p.depth === 1 && p.event.type === 'tool_execution_update')).toEqual([]);
    expectValidHistory(result.messages);
  });

  it('maxTurns bounds a sub-agent: the call fails with a text that says so; the parent goes on', async () => {
    const looping = agentTool({ name: 'loop', model: scriptedModel([call('l1', 'lookup', { key: 'a' }), call('l2', 'lookup', { key: 'b' })]), tools: [lookup], maxTurns: 2 });
    const parent = scriptedModel([call('p1', 'loop', { prompt: 'go' }), say('it gave up')]);
    const { result } = await drain(runAgent({ model: parent, tools: [looping], messages: [user('x')] }));
    const toolMessage = result.messages[2]!;
    expect(toolMessage.role === 'tool' && toolMessage.isError).toBe(true);
    expect(text(toolMessage as never)).toBe('Sub-agent "loop" reached its limit of 2 turns without a final answer.');
    expect(result.reason).toBe('completed');
  });

  it('aborting the parent aborts the nested runs and every nested tool; every level answers its calls', async () => {
    const controller = new AbortController();
    const started = gate();
    const finals: string[] = [];
    let innerSignal: AbortSignal | undefined;
    const deepWait = defineTool({
      name: 'lookup',
      input: v.object({ key: v.string() }),
      async *execute(_i, { signal }) {
        innerSignal = signal;
        started.open();
        try {
          await new Promise((_r, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
        } finally {
          finals.push('lookup finally');
        }
      },
    });
    const deep = agentTool({ name: 'deep', model: scriptedModel([call('d1', 'lookup', { key: 'k' })]), tools: [deepWait] });
    const explore = agentTool({ name: 'explore', model: scriptedModel([call('e1', 'deep', { prompt: 'p' })]), tools: [deep] });
    const running = drain(runAgent({ model: scriptedModel([call('p1', 'explore', { prompt: 'p' })]), tools: [explore], messages: [user('x')], signal: controller.signal }));
    await started.promise;
    const reason = new Error('Esc');
    controller.abort(reason);
    const { events, result } = await running;
    expect(innerSignal?.reason).toBe(reason);
    expect(finals).toEqual(['lookup finally']);
    expect(result.reason).toBe('aborted');
    expectValidHistory(result.messages);
    const nestedEnds = events.flatMap((e) => (e.type === 'tool_execution_update' && e.progress.event.type === 'agent_end' ? [{ depth: e.progress.depth, end: e.progress.event }] : []));
    expect(nestedEnds.map((p) => [p.depth, p.end.reason])).toEqual([
      [2, 'aborted'],
      [1, 'aborted'],
    ]);
    expect(events.find((e) => e.type === 'tool_execution_end')).toMatchObject({ toolCallId: 'p1', outcome: 'interrupted' });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('has no time limit by default (seed 002), and takes timeoutMs when given', () => {
    const { explore } = nested();
    expect(explore.timeoutMs).toBeUndefined();
    expect(agentTool({ name: 'x', model: scriptedModel([]), tools: [], timeoutMs: 60_000 }).timeoutMs).toBe(60_000);
    expect(() => agentTool({ name: '', model: scriptedModel([]), tools: [] })).toThrow(/options\.name/);
  });
});

describe('withRetry inside the loop: a tool that fails twice then succeeds', () => {
  it('the model sees one successful result; the retries show as progress', async () => {
    vi.useFakeTimers();
    let attempts = 0;
    const flaky = defineTool({
      name: 'fetch',
      input: v.object({ url: v.string() }),
      async *execute({ url }) {
        attempts++;
        yield `attempt ${attempts}`;
        if (attempts < 3) throw new Error(`503 on attempt ${attempts}`);
        return `body of ${url}`;
      },
    });
    const model = scriptedModel([call('f1', 'fetch', { url: 'https://example.com' }), say('fetched')]);
    const running = drain(runAgent({ model, tools: [withRetry(flaky, { retries: 2, backoff: { baseMs: 100 } })], messages: [user('x')] }));
    await vi.advanceTimersByTimeAsync(300);
    const { events, result } = await running;
    expect(attempts).toBe(3);
    expect(events.filter((e) => e.type === 'tool_execution_update').map((e) => e.progress)).toEqual(['attempt 1', 'attempt 2', 'attempt 3']);
    expect(result.messages[2]).toMatchObject({ role: 'tool', isError: false, content: [{ type: 'text', text: 'body of https://example.com' }] });
    expect(result.reason).toBe('completed');
  });
});

describe('provider conversions of the neutral history', () => {
  const history: AgentMessage[] = [
    user('hi'),
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'hmm', signature: 'sig' },
        { type: 'text', text: 'Reading.' },
        { type: 'toolCall', id: 'toolu_1', name: 'read', arguments: { path: 'a' } },
        { type: 'toolCall', id: 'toolu_2', name: 'read', arguments: '{"path":"b"}' },
      ],
      stopReason: 'toolUse',
    },
    { role: 'tool', toolCallId: 'toolu_1', toolName: 'read', content: [{ type: 'text', text: 'A' }], isError: false },
    { role: 'tool', toolCallId: 'toolu_2', toolName: 'read', content: [{ type: 'text', text: 'no such file' }], isError: true },
    say('A and nothing.'),
  ];

  it('the request messages fit the official SDKs’ parameter types', () => {
    expectTypeOf(toAnthropicMessages(history)).toMatchTypeOf<Anthropic.MessageParam[]>();
    expectTypeOf(toOpenAIChatMessages(history)).toMatchTypeOf<OpenAI.ChatCompletionMessageParam[]>();
    expectTypeOf<Anthropic.Message>().toMatchTypeOf<Parameters<typeof fromAnthropicMessage>[0]>();
    expectTypeOf<OpenAI.ChatCompletion>().toMatchTypeOf<Parameters<typeof fromOpenAIChatMessage>[0]>();
  });

  it('Anthropic: tool results grouped in one user message after the assistant message (F1); replies read back', () => {
    expect(toAnthropicMessages(history)).toEqual([
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'hmm', signature: 'sig' },
          { type: 'text', text: 'Reading.' },
          { type: 'tool_use', id: 'toolu_1', name: 'read', input: { path: 'a' } },
          { type: 'tool_use', id: 'toolu_2', name: 'read', input: { path: 'b' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'A' }] },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: 'no such file' }], is_error: true },
        ],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'A and nothing.' }] },
    ]);
    const reply = fromAnthropicMessage({
      content: [
        { type: 'text', text: 'x' },
        { type: 'tool_use', id: 'toolu_9', name: 'read', input: { path: 'c' } },
        { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} },
      ],
      stop_reason: 'tool_use',
    });
    expect(reply).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'x' }, { type: 'toolCall', id: 'toolu_9', name: 'read', arguments: { path: 'c' } }], stopReason: 'toolUse' });
  });

  it('OpenAI Chat: one role "tool" message per call (F2), arguments as JSON text, thinking dropped', () => {
    expect(toOpenAIChatMessages(history)).toEqual([
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: 'Reading.',
        tool_calls: [
          { id: 'toolu_1', type: 'function', function: { name: 'read', arguments: '{"path":"a"}' } },
          { id: 'toolu_2', type: 'function', function: { name: 'read', arguments: '{"path":"b"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'toolu_1', content: 'A' },
      { role: 'tool', tool_call_id: 'toolu_2', content: 'no such file' },
      { role: 'assistant', content: 'A and nothing.' },
    ]);
    expect(
      fromOpenAIChatMessage({ choices: [{ message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read', arguments: '{"path":"a"}' } }] }, finish_reason: 'tool_calls' }] }),
    ).toEqual({ role: 'assistant', content: [{ type: 'toolCall', id: 'call_1', name: 'read', arguments: '{"path":"a"}' }], stopReason: 'toolUse' });
  });
});
