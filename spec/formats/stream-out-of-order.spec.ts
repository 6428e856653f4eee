/**
 * The stream adapters on out-of-order input: the stream is untrusted, and
 * an adapter never runs a call with other arguments than the model sent, and never loses a
 * call it saw — each gets exactly one result (O1). One spec per defect found, a count-based
 * check that argument assembly is linear, and a property over random event orders.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  defineTool,
  fromAnthropicStream,
  fromOpenAIChatStream,
  fromOpenAIResponsesStream,
  runTools,
  type ToolCall,
  type ToolCallStreamEnd,
  type ToolEvent,
  type ToolResultMessage,
} from '../../lib/index.ts';
import { text } from '../helpers.ts';
import { drain } from './stream-helpers.ts';
import { anthropic, buildEvents, chat, responses, scenarioArbitrary, type Provider } from './stream-events.ts';

const adapters = {
  anthropic: fromAnthropicStream,
  chat: fromOpenAIChatStream,
  responses: fromOpenAIResponsesStream,
} satisfies Record<Provider, unknown>;

/** Runs a stream's calls with one tool, `echo`, that records what it ran: the results, the runs, and the adapter's report. */
async function runEcho(provider: Provider, events: unknown[]) {
  const ran: Array<{ id: string; args: unknown }> = [];
  const echo = defineTool({
    name: 'echo',
    input: { type: 'object' },
    execute: (args, { toolCallId }) => {
      ran.push({ id: toolCallId, args });
      return 'ok';
    },
  });
  let end: ToolCallStreamEnd | undefined;
  const results: ToolResultMessage[] = [];
  const events_: ToolEvent[] = [];
  let error: unknown;
  try {
    for await (const e of runTools(adapters[provider](events, { onMessageEnd: (x) => (end = x) }), { tools: [echo] })) {
      events_.push(e);
      if (e.type === 'tool_result') results.push(e.message);
    }
  } catch (e) {
    error = e;
  }
  return { ran, results, end, error, byId: (id: string) => results.filter((r) => r.toolCallId === id) };
}

describe('Anthropic interleaved blocks (content_block_start 0, start 1, delta 0 …): call A runs with its own arguments, never {}', () => {
  it('each block runs with its own input, once its content_block_stop arrived', async () => {
    const events = [
      anthropic.start(0, 'toolu_a'),
      anthropic.start(1, 'toolu_b'),
      anthropic.delta(0, '{"path":'),
      anthropic.delta(1, '{"path":"b"}'),
      anthropic.delta(0, '"a"}'),
      anthropic.stop(1),
      anthropic.stop(0),
      ...anthropic.end(),
    ];
    const run = await runEcho('anthropic', events);
    expect(run.ran).toEqual([
      { id: 'toolu_a', args: { path: 'a' } },
      { id: 'toolu_b', args: { path: 'b' } },
    ]);
    expect(run.results.map((r) => r.isError)).toEqual([false, false]);
  });

  it('a block that is never closed and whose text is not complete JSON is answered "cut off", never run with {}', async () => {
    const events = [anthropic.start(0, 'toolu_a'), anthropic.start(1, 'toolu_b'), anthropic.delta(1, '{}'), anthropic.stop(1), ...anthropic.end()];
    const run = await runEcho('anthropic', events);
    expect(run.ran).toEqual([{ id: 'toolu_b', args: {} }]);
    expect(run.results[0]!.isError).toBe(true);
    expect(text(run.results[0]!)).toContain('was cut off by the stream ending the message before this tool_use block was closed');
    expect(run.end).toMatchObject({ status: 'complete', calls: 2, incompleteCalls: 1 });
  });
});

describe('Anthropic duplicate block index 0: the first call is never run with {} (O1)', () => {
  it('a second start at an open index: neither call runs, each gets one "cut off" result', async () => {
    const events = [anthropic.start(0, 'toolu_a'), anthropic.start(0, 'toolu_b'), anthropic.delta(0, '{"path":"x"}'), anthropic.stop(0), ...anthropic.end()];
    const run = await runEcho('anthropic', events);
    expect(run.ran).toEqual([]);
    expect(run.results.map((r) => r.toolCallId)).toEqual(['toolu_a', 'toolu_b']);
    for (const r of run.results) expect(text(r)).toContain('was cut off by the stream starting a second content block at index 0 while block 0 was still open');
  });

  it('a call whose JSON was already complete when its index was taken over keeps it and runs', async () => {
    const events = [anthropic.start(0, 'toolu_a'), anthropic.delta(0, '{"path":"a"}'), anthropic.start(0, 'toolu_b'), anthropic.delta(0, '{"path":"b"}'), anthropic.stop(0), ...anthropic.end()];
    const run = await runEcho('anthropic', events);
    expect(run.ran).toEqual([{ id: 'toolu_a', args: { path: 'a' } }]);
    expect(run.byId('toolu_b')).toHaveLength(1);
    expect(run.byId('toolu_b')[0]!.isError).toBe(true);
  });

  it('an index reused after its block was closed is a new block, and runs', async () => {
    const events = [anthropic.start(0, 'toolu_a'), anthropic.delta(0, '{"path":"a"}'), anthropic.stop(0), anthropic.start(0, 'toolu_b'), anthropic.delta(0, '{"path":"b"}'), anthropic.stop(0), ...anthropic.end()];
    const run = await runEcho('anthropic', events);
    expect(run.ran.map((r) => r.args)).toEqual([{ path: 'a' }, { path: 'b' }]);
  });
});

describe('Responses output_item.done before output_item.added: runs with the done item\'s arguments, never {}', () => {
  it('the done item carries the call; the late added is a repeat and adds no call', async () => {
    const events = [
      responses.done(0, 'call_a', '{"path":"a"}'),
      responses.added(0, 'call_a'),
      responses.delta(0, '{"path":"zzz"}'),
      ...responses.end(),
    ];
    const run = await runEcho('responses', events);
    expect(run.ran).toEqual([{ id: 'call_a', args: { path: 'a' } }]);
    expect(run.results).toHaveLength(1);
  });

  it('an item that is never done, and not in the final output, is answered "cut off" at response.completed, never run with its deltas', async () => {
    const events = [responses.added(0, 'call_a'), responses.delta(0, '{"path":"a"'), ...responses.end()];
    const run = await runEcho('responses', events);
    expect(run.ran).toEqual([]);
    expect(text(run.results[0]!)).toContain('without this function_call item being done');
  });
});

describe('Anthropic blocks after message_stop: every call seen gets exactly one result (O1)', () => {
  it('a tool_use block after message_stop is answered "cut off", never run, and counted in the returned report', async () => {
    const events = [
      anthropic.start(0, 'toolu_a'),
      anthropic.delta(0, '{"path":"a"}'),
      anthropic.stop(0),
      ...anthropic.end(),
      anthropic.start(1, 'toolu_late'),
      anthropic.delta(1, '{"path":"b"}'),
      anthropic.stop(1),
    ];
    const run = await runEcho('anthropic', events);
    expect(run.ran).toEqual([{ id: 'toolu_a', args: { path: 'a' } }]);
    expect(run.results.map((r) => r.toolCallId)).toEqual(['toolu_a', 'toolu_late']);
    expect(text(run.results[1]!)).toContain('was cut off by the stream sending it after the message had ended');
    // onMessageEnd saw the message at its stop event; the generator's return value counts the late call.
    expect(run.end).toEqual({ status: 'complete', stopReason: 'tool_use', calls: 1, incompleteCalls: 0 });
    const returned = await drain(fromAnthropicStream(events));
    expect(returned.end).toEqual({ status: 'complete', stopReason: 'tool_use', calls: 2, incompleteCalls: 1 });
  });

  it('Chat and Responses: a call that starts after the stop event is answered too', async () => {
    const chatRun = await runEcho('chat', [chat.first(0, 'call_a', '{}'), ...chat.end(), chat.first(1, 'call_late', '{}')]);
    expect(chatRun.results.map((r) => [r.toolCallId, r.isError])).toEqual([
      ['call_a', false],
      ['call_late', true],
    ]);
    const respRun = await runEcho('responses', [responses.added(0, 'call_a'), responses.done(0, 'call_a', '{}'), ...responses.end(), responses.added(1, 'call_late'), responses.done(1, 'call_late', '{}')]);
    expect(respRun.ran.map((r) => r.id)).toEqual(['call_a']);
    expect(respRun.results.map((r) => [r.toolCallId, r.isError])).toEqual([
      ['call_a', false],
      ['call_late', true],
    ]);
  });
});

describe('Chat index 0 reused with a new id: a new call, never merged into the first (O1)', () => {
  it('each call complete in its own chunk at index 0 (as some compatible servers send them): both run with their own arguments', async () => {
    const run = await runEcho('chat', [chat.first(0, 'call_a', '{"path":"a"}'), chat.first(0, 'call_b', '{"path":"b"}'), ...chat.end()]);
    expect(run.ran).toEqual([
      { id: 'call_a', args: { path: 'a' } },
      { id: 'call_b', args: { path: 'b' } },
    ]);
  });

  it('reused before the first call was complete: neither runs, each gets one "cut off" result', async () => {
    const run = await runEcho('chat', [chat.first(0, 'call_a', '{"path":'), chat.first(0, 'call_b', '{"path":"b"}'), chat.args(0, '"a"}'), ...chat.end()]);
    expect(run.ran).toEqual([]);
    expect(run.results.map((r) => r.toolCallId)).toEqual(['call_a', 'call_b']);
    for (const r of run.results) expect(text(r)).toContain('was cut off by the stream reusing index 0 for a new tool call (id "call_b") before call "call_a" was complete');
  });
});

describe('Chat argument assembly is linear: 2,000 fragments of one interleaved call are parsed once, not once per fragment', () => {
  afterEach(() => vi.restoreAllMocks());

  /** Characters handed to JSON.parse while the adapter reads `n` fragments of `size` characters of call 0 after call 1 has started. */
  async function parsedCharacters(n: number, size: number): Promise<{ parsed: number; total: number; calls: ToolCall[] }> {
    // Fragments that end in a quote or a brace: the ones a "does it parse yet?" check would try.
    const events: unknown[] = [chat.first(0, 'call_a', '{"c":['), chat.first(1, 'call_b', '{}')];
    let total = '{"c":['.length;
    for (let i = 0; i < n; i++) {
      const piece = `${i === 0 ? '' : ','}{"k":"${'x'.repeat(size)}"}`;
      events.push(chat.args(0, piece));
      total += piece.length;
    }
    events.push(chat.args(0, ']}'), ...chat.end());
    total += 2;
    const original = JSON.parse;
    let parsed = 0;
    vi.spyOn(JSON, 'parse').mockImplementation((source: string, reviver?: Parameters<typeof JSON.parse>[1]) => {
      parsed += String(source).length;
      return original(source, reviver);
    });
    const { calls } = await drain(fromOpenAIChatStream(events));
    vi.restoreAllMocks();
    return { parsed, total, calls };
  }

  it('the text is parsed at most once per call, whatever the number of fragments (count-based, no clock)', async () => {
    const { parsed, total, calls } = await parsedCharacters(2000, 100);
    expect(calls.map((c) => c.id)).toEqual(['call_a', 'call_b']);
    expect(JSON.parse(calls[0]!.arguments as string).c).toHaveLength(2000);
    // Once for call_a's whole text, once for call_b's "{}"; a check per fragment would be ~1,000 × total.
    expect(parsed).toBeLessThanOrEqual(total + 2);
  });

  it('doubling the fragments doubles the work, no more (size scaling)', async () => {
    const small = await parsedCharacters(500, 100);
    const large = await parsedCharacters(1000, 100);
    expect(large.parsed / small.parsed).toBeLessThan(2.2);
  });
});

describe('stream adapters, property: every call seen is run with exactly its arguments or answered, exactly once (O1)', () => {
  const seed = process.env.CI === 'true' ? 20_261_201 : undefined;
  // 50 and 100 generated streams per provider (were 150 and 300: 2 s of CPU in npm test). A
  // fresh seed on every local run, so the cases checked add up over runs; the failure prints
  // the seed and path that replay it.
  for (const provider of ['anthropic', 'chat', 'responses'] as const) {
    it(`${provider}: well-formed streams in any interleaving run every call with exactly its arguments`, async () => {
      await fc.assert(
        fc.asyncProperty(scenarioArbitrary(provider, false), async (scenario) => {
          const { events, argsById } = buildEvents(scenario);
          const run = await runEcho(provider, events);
          expect(run.error).toBeUndefined();
          expect(run.ran).toHaveLength(scenario.calls.length);
          for (const r of run.ran) expect(r.args).toEqual(argsById.get(r.id));
        }),
        { numRuns: 50, ...(seed === undefined ? {} : { seed }) },
      );
    });

    it(`${provider}: out-of-order, duplicate, late, unclosed and cut streams never run other arguments, and answer every call once`, async () => {
      const counts = { ran: 0, answeredOnly: 0 };
      await fc.assert(
        fc.asyncProperty(scenarioArbitrary(provider, true), async (scenario) => {
          const { events, started, allowed } = buildEvents(scenario);
          const run = await runEcho(provider, events);
          // Never lost: one result per call the stream showed a start for (O1).
          expect(run.results.map((r) => r.toolCallId).sort()).toEqual([...started].sort());
          // Never run with other arguments than the model sent (by the stop event).
          for (const r of run.ran) expect(allowed(r.id)).toContainEqual(r.args);
          counts.ran += run.ran.length;
          counts.answeredOnly += run.results.length - run.ran.length;
        }),
        { numRuns: 100, ...(seed === undefined ? {} : { seed }) },
      );
      // The generated messes both let calls through and stop some: the property is not vacuous.
      expect(counts.ran).toBeGreaterThan(0);
      expect(counts.answeredOnly).toBeGreaterThan(0);
    });
  }
});
