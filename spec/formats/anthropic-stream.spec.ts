/**
 * `fromAnthropicStream` (contract S4, F1; case C16): the Anthropic streaming recordings of
 * the corpus driven through the adapter and `runTools`, then synthetic streams for the
 * message's end — `max_tokens` mid-argument, a stream that throws, an error event, no stop
 * event — where a cut call must never run.
 */
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { assembleAnthropicStream } from '../../lib/cli/recordings/streams.ts';
import {
  defineTool,
  fromAnthropic,
  fromAnthropicStream,
  runTools,
  StreamBrokenError,
  toAnthropic,
  type ToolCall,
  type ToolCallStreamEnd,
} from '../../lib/index.ts';
import { collect, ofType, settle, text } from '../helpers.ts';
import { corpusSkipNote, hasCorpus, readCorpusJson, readCorpusLines } from './corpus.ts';
import { argumentValue, byteChunks, countingSource, drain, manualSource, runStreamed, toSSE } from './stream-helpers.ts';

const CASSETTE = 'anthropic/openllmetry__anthropic_tools_streaming_legacy.json';
const CHUNKS = 'anthropic/vercel-ai__anthropic-tool-no-args.chunks.jsonl';

/** The non-streamed form of a recorded stream: the existing assembler, read by `fromAnthropic`, arguments as values. */
function nonStreamed(events: readonly unknown[]): Array<{ id: string; name: string; arguments: unknown }> {
  return fromAnthropic(assembleAnthropicStream(events)).map((call) => ({ id: call.id, name: call.name, arguments: argumentValue(call) }));
}

/** Position (1-based count of events read) of the first event matching `test`. */
function positionOf(events: readonly unknown[], test: (data: Record<string, any>) => boolean): number {
  const i = events.findIndex((e) => test(((e as { data?: unknown }).data ?? e) as Record<string, any>));
  if (i < 0) throw new Error('event not found');
  return i + 1;
}

describe.skipIf(!hasCorpus)(`fromAnthropicStream over the corpus's Anthropic streams (S4, F1)${corpusSkipNote}`, () => {
  it(`${CASSETTE}: yields the calls of the non-streamed form, each as its block stops, and runTools starts them mid-message`, async () => {
    const doc = readCorpusJson(CASSETTE);
    const interaction = doc.interactions[0];
    const events: Array<{ event: string; data: any }> = interaction.response.events;
    const definitions = (interaction.request.body.tools as Array<{ name: string; input_schema: object }>).map((t) => ({ name: t.name, schema: t.input_schema as never }));

    const source = countingSource(events);
    let end: ToolCallStreamEnd | undefined;
    const calls: ToolCall[] = [];
    async function* tap(): AsyncGenerator<ToolCall> {
      for await (const call of fromAnthropicStream(source.iterable, { onMessageEnd: (e) => (end = e) })) {
        calls.push(call);
        yield call;
      }
    }
    const run = await runStreamed(tap(), definitions, () => source.probe.pulled);
    expect(run.error).toBeUndefined();

    // The calls equal the assembled, non-streamed form (arguments as objects, like tool_use.input).
    expect(calls).toEqual(nonStreamed(events));
    expect(calls.map((c) => c.id)).toEqual(['toolu_014x5X91kx3fvdhpLvwXZWE2', 'toolu_0121kXsENLvoDZ72LCuAnCCz']);
    expect(calls[0]!.arguments).toEqual({ location: 'San Francisco, CA', unit: 'celsius' });

    // Each call started as soon as its block stopped, before the message ended.
    const stop1 = positionOf(events, (d) => d.type === 'content_block_stop' && d.index === 1);
    const stop2 = positionOf(events, (d) => d.type === 'content_block_stop' && d.index === 2);
    expect(run.startedAt).toEqual([stop1, stop2]);
    expect(Math.max(...run.startedAt)).toBeLessThan(positionOf(events, (d) => d.type === 'message_delta'));

    // Results in call order, with the calls' own ids (F1), and the end reported.
    const results = run.batch!.messages;
    expect(toAnthropic(results).content.map((b) => [b.tool_use_id, b.is_error])).toEqual(calls.map((c) => [c.id, undefined]));
    expect(results.map(text)).toEqual(['ran get_weather #0', 'ran get_time #1']);
    expect(end).toEqual({ status: 'complete', stopReason: 'tool_use', calls: 2, incompleteCalls: 0 });
    expect(source.probe.finished).toBe(true);
  });

  it(`${CASSETTE}: the same stream as raw SSE bytes, split every 1 and every 7 bytes, yields the same calls`, async () => {
    const events = readCorpusJson(CASSETTE).interactions[0].response.events;
    const expected = nonStreamed(events);
    for (const size of [1, 7, 4096]) {
      const { calls, end } = await drain(fromAnthropicStream(byteChunks(toSSE(events), size)));
      expect(calls, `chunks of ${size} bytes`).toEqual(expected);
      expect(end!.status).toBe('complete');
    }
  });

  it(`${CHUNKS}: the empty partial_json of a no-argument call becomes {} and the call runs`, async () => {
    const events = readCorpusLines(CHUNKS);
    const source = countingSource(events);
    const run = await runStreamed(fromAnthropicStream(source.iterable), [{ name: 'updateIssueList', schema: { type: 'object' } }], () => source.probe.pulled);
    expect(run.error).toBeUndefined();
    const starts = ofType(run.events, 'tool_execution_start');
    expect(starts.map((s) => [s.toolCallId, s.toolName, s.args])).toEqual([['toolu_01QE1WLsSVp5hy5Q3GmGTmjP', 'updateIssueList', {}]]);
    expect(nonStreamed(events)).toEqual([{ id: 'toolu_01QE1WLsSVp5hy5Q3GmGTmjP', name: 'updateIssueList', arguments: {} }]);
    expect(run.batch!.messages.map((m) => [m.toolCallId, m.isError])).toEqual([['toolu_01QE1WLsSVp5hy5Q3GmGTmjP', false]]);
    // An empty text is ambiguous until the message ends (a cut also ends with content_block_stop):
    // the call starts at message_delta (stop_reason "tool_use"), before message_stop.
    expect(run.startedAt).toEqual([positionOf(events, (d) => d.type === 'message_delta')]);
  });
});

// ---------------------------------------------------------------------------------------
// Synthetic streams

const start = (index: number, id: string, name: string, input: unknown = {}) => ({ type: 'content_block_start', index, content_block: { type: 'tool_use', id, name, input } });
const json = (index: number, partial_json: string) => ({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } });
const stop = (index: number) => ({ type: 'content_block_stop', index });
const messageDelta = (stop_reason: string) => ({ type: 'message_delta', delta: { stop_reason, stop_sequence: null }, usage: { output_tokens: 9 } });
const messageStart = { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], stop_reason: null } };
const messageStop = { type: 'message_stop' };
const textBlock = (index: number, t: string) => [
  { type: 'content_block_start', index, content_block: { type: 'text', text: '' } },
  { type: 'content_block_delta', index, delta: { type: 'text_delta', text: t } },
  stop(index),
];

/** Case C16's tool: counts every body run. */
function writeNote() {
  const probe = { bodies: [] as string[] };
  const tool = defineTool({
    name: 'write_note',
    input: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } }, required: ['path', 'content'] },
    execute: (input) => {
      probe.bodies.push(String(input.path));
      return `wrote ${String(input.path)}`;
    },
  });
  return { tool, probe };
}

const CUT = '{"path":"n.txt","content":"line1\\nline2';

describe('fromAnthropicStream: the message ends at the output limit (case C16)', () => {
  it('max_tokens mid-argument: the complete call runs, the cut one is answered "cut off by the output limit" and never runs', async () => {
    const { tool, probe } = writeNote();
    const events = [
      messageStart,
      ...textBlock(0, 'Writing two notes.'),
      start(1, 'toolu_a', 'write_note'),
      json(1, ''),
      json(1, '{"path":"m.txt",'),
      json(1, '"content":"ok"}'),
      stop(1),
      start(2, 'toolu_b', 'write_note'),
      ...[CUT.slice(0, 9), CUT.slice(9, 20), CUT.slice(20, 28), CUT.slice(28, 34), CUT.slice(34)].map((part) => json(2, part)),
      stop(2), // Anthropic closes the cut block too: content_block_stop is no proof of completeness
      messageDelta('max_tokens'),
      messageStop,
    ];
    let end: ToolCallStreamEnd | undefined;
    const { events: out, batch } = await collect(runTools(fromAnthropicStream(events, { onMessageEnd: (e) => (end = e) }), { tools: [tool] }));
    expect(probe.bodies).toEqual(['m.txt']);
    expect(batch.messages.map((m) => [m.toolCallId, m.isError])).toEqual([
      ['toolu_a', false],
      ['toolu_b', true],
    ]);
    expect(text(batch.messages[1]!)).toContain('was cut off by the output limit (stop_reason "max_tokens") before its arguments were complete');
    expect(text(batch.messages[1]!)).not.toContain('not valid JSON');
    expect(ofType(out, 'tool_execution_end').find((e) => e.index === 1)!.outcome).toBe('rejected');
    // The partial text is shown as it was, never repaired into `"line1\nline2"`.
    expect(ofType(out, 'tool_execution_start')[1]!.args).toBe(CUT);
    expect(end).toEqual({ status: 'truncated', stopReason: 'max_tokens', calls: 2, incompleteCalls: 1 });
  });

  it('max_tokens right after a tool_use block started: the call is not run with {} (the empty input is the cut)', async () => {
    const { calls, end } = await drain(fromAnthropicStream([messageStart, start(0, 'toolu_a', 'write_note'), json(0, ''), stop(0), messageDelta('max_tokens'), messageStop]));
    expect(calls).toEqual([{ id: 'toolu_a', name: 'write_note', incomplete: 'the output limit (stop_reason "max_tokens")' }]);
    expect(end!.incompleteCalls).toBe(1);
  });

  it('max_tokens just after a complete argument text: that call is complete and runs', async () => {
    const { calls, end } = await drain(fromAnthropicStream([start(0, 'toolu_a', 'write_note'), json(0, '{"path":"a","content":"b"}'), messageDelta('max_tokens')]));
    expect(calls).toEqual([{ id: 'toolu_a', name: 'write_note', arguments: { path: 'a', content: 'b' } }]);
    expect(end).toEqual({ status: 'truncated', stopReason: 'max_tokens', calls: 1, incompleteCalls: 0 });
  });

  it('refusal and model_context_window_exceeded also cut; each reason is named', async () => {
    for (const [reason, named] of [
      ['refusal', 'the message ending early (stop_reason "refusal")'],
      ['model_context_window_exceeded', `the model's context window limit (stop_reason "model_context_window_exceeded")`],
    ] as const) {
      const { calls } = await drain(fromAnthropicStream([start(0, 'toolu_a', 'write_note'), json(0, '{"path":'), stop(0), messageDelta(reason)]));
      expect(calls).toEqual([{ id: 'toolu_a', name: 'write_note', arguments: '{"path":', incomplete: named }]);
    }
  });
});

describe('fromAnthropicStream: the stream breaks', () => {
  it('throws mid-call: the finished call runs, the unfinished one is answered "cut off", then runTools rethrows the same error', async () => {
    const { tool, probe } = writeNote();
    const reset = new Error('socket hang up');
    const events = [messageStart, start(0, 'toolu_a', 'write_note'), json(0, '{"path":"a","content":"x"}'), stop(0), start(1, 'toolu_b', 'write_note'), json(1, '{"path":"b","con')];
    const source = countingSource(events, { failAt: events.length, error: reset });
    let end: ToolCallStreamEnd | undefined;
    const run = runTools(fromAnthropicStream(source.iterable, { onMessageEnd: (e) => (end = e) }), { tools: [tool] });
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const event of run) if (event.type === 'tool_result') seen.push(`${event.message.toolCallId} ${event.message.isError} ${text(event.message)}`);
      })(),
    ).rejects.toBe(reset);
    expect(probe.bodies).toEqual(['a']);
    expect(seen[0]).toBe('toolu_a false wrote a');
    expect(seen[1]).toContain('toolu_b true Your call to tool "write_note" was cut off by the stream breaking (socket hang up)');
    expect(seen).toHaveLength(2);
    expect(end).toEqual({ status: 'broken', stopReason: null, calls: 2, incompleteCalls: 1, error: reset });
  });

  it('ends without message_delta or message_stop: the pending call is flagged and a StreamBrokenError is thrown after it', async () => {
    const { calls, error } = await drain(fromAnthropicStream([messageStart, start(0, 'toolu_a', 'write_note'), json(0, '{"path":"a"'), stop(0)]));
    expect(calls).toEqual([
      { id: 'toolu_a', name: 'write_note', arguments: '{"path":"a"', incomplete: 'the stream ending early, before the message was complete' },
    ]);
    expect(error).toBeInstanceOf(StreamBrokenError);
    expect((error as Error).message).toContain('the Anthropic stream ended before the message');
  });

  it('an error event (overloaded) breaks the stream: StreamBrokenError carries the event', async () => {
    const overloaded = { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } };
    const { calls, error } = await drain(fromAnthropicStream([start(0, 'toolu_a', 'write_note'), json(0, '{"pa'), overloaded]));
    expect(calls[0]!.incomplete).toBe('the stream breaking (an error event: overloaded_error: Overloaded)');
    expect(error).toBeInstanceOf(StreamBrokenError);
    expect((error as StreamBrokenError).event).toBe(overloaded);
  });

  it('an SSE body with non-JSON data breaks the stream with a SyntaxError naming the data', async () => {
    const sse = `${toSSE([{ event: 'content_block_start', data: start(0, 'toolu_a', 'write_note') }])}event: content_block_delta\ndata: {not json\n\n`;
    const { calls, error } = await drain(fromAnthropicStream([sse]));
    expect(error).toBeInstanceOf(SyntaxError);
    expect((error as Error).message).toContain("a server-sent event's data is not JSON");
    expect(calls[0]!.incomplete).toMatch(/^the stream breaking \(SyntaxError: a server-sent event's data is not JSON/);
  });
});

describe('fromAnthropicStream: when calls are yielded', () => {
  it('a call is yielded at its content_block_stop, while the message is still streaming', async () => {
    const source = manualSource();
    const adapter = fromAnthropicStream(source.iterable);
    const first = adapter.next();
    let got: IteratorResult<ToolCall, unknown> | undefined;
    void first.then((r) => (got = r));
    source.push(messageStart, start(0, 'toolu_a', 'lookup'), json(0, '{"q":'), json(0, '"x"}'));
    await settle();
    expect(got).toBeUndefined();
    source.push(stop(0));
    await settle();
    expect(got).toEqual({ done: false, value: { id: 'toolu_a', name: 'lookup', arguments: { q: 'x' } } });
    source.push(messageDelta('tool_use'), messageStop);
    source.end();
    expect(await adapter.next()).toEqual({ done: true, value: { status: 'complete', stopReason: 'tool_use', calls: 1, incompleteCalls: 0 } });
  });

  it('a no-argument call in the middle of a message is yielded with {} when the next block starts', async () => {
    const source = manualSource();
    const adapter = fromAnthropicStream(source.iterable);
    let got: IteratorResult<ToolCall, unknown> | undefined;
    void adapter.next().then((r) => (got = r));
    source.push(start(0, 'toolu_a', 'now'), json(0, ''), stop(0));
    await settle();
    expect(got).toBeUndefined();
    source.push(start(1, 'toolu_b', 'lookup'));
    await settle();
    expect(got).toEqual({ done: false, value: { id: 'toolu_a', name: 'now', arguments: {} } });
    source.push(json(1, '{"q":"y"}'), stop(1), messageDelta('tool_use'));
    source.end();
    expect((await adapter.next()).value).toEqual({ id: 'toolu_b', name: 'lookup', arguments: { q: 'y' } });
  });

  it('invalid JSON in a message that ended normally is passed raw: runTools says "not valid JSON", not "cut off"', async () => {
    const lookup = defineTool({ name: 'lookup', input: v.object({ q: v.string() }), execute: ({ q }) => q });
    const events = [start(0, 'toolu_a', 'lookup'), json(0, "{'q': 'x'}"), stop(0), start(1, 'toolu_b', 'lookup'), json(1, '{"q":"y"}'), stop(1), messageDelta('tool_use')];
    const { batch } = await collect(runTools(fromAnthropicStream(events), { tools: [lookup] }));
    expect(text(batch.messages[0]!)).toContain('are not valid JSON');
    expect(batch.messages[1]!.isError).toBe(false);
  });

  it('skips text, thinking and server_tool_use blocks; uses content_block_start input when no fragment came', async () => {
    const events = [
      ...textBlock(0, 'hi'),
      { type: 'content_block_start', index: 1, content_block: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'code_execution', input: {} } },
      json(1, '{"code":"1"}'),
      stop(1),
      start(2, 'toolu_a', 'lookup', { q: 'given' }),
      stop(2),
      messageDelta('tool_use'),
    ];
    const { calls } = await drain(fromAnthropicStream(events));
    expect(calls).toEqual([{ id: 'toolu_a', name: 'lookup', arguments: { q: 'given' } }]);
  });

  it('reads the stream to its end after the stop event (so an SDK can finish its own message), and returns the report', async () => {
    const source = countingSource([start(0, 'toolu_a', 'lookup'), json(0, '{}'), stop(0), messageDelta('tool_use'), messageStop, { type: 'ping' }]);
    const { calls, end } = await drain(fromAnthropicStream(source.iterable));
    expect(calls).toHaveLength(1);
    expect(source.probe.finished).toBe(true);
    expect(end).toEqual({ status: 'complete', stopReason: 'tool_use', calls: 1, incompleteCalls: 0 });
  });

  it('an aborted run does not wait for a stalled stream; the adapter closes its source at its next event', async () => {
    const source = manualSource();
    const controller = new AbortController();
    const lookup = defineTool({ name: 'lookup', input: v.object({ q: v.string() }), execute: ({ q }) => q });
    const run = collect(runTools(fromAnthropicStream(source.iterable), { tools: [lookup], signal: controller.signal }));
    source.push(start(0, 'toolu_a', 'lookup'), json(0, '{"q":"a"}'), stop(0), start(1, 'toolu_b', 'lookup'), json(1, '{"q"'));
    await settle();
    controller.abort();
    // The stream is stalled (no event arrives): the run still ends, with the received call answered.
    const { batch } = await run;
    expect(batch.aborted).toBe(true);
    expect(batch.messages.map((m) => [m.toolCallId, m.isError])).toEqual([['toolu_a', false]]);
    expect(source.probe.returned).toBe(false);
    // An async generator cannot be interrupted mid-read: it honours return() at its next step.
    // (Pass the same signal to the SDK request to end the read itself.)
    source.push(json(1, ':"b"}'), stop(1));
    await settle();
    expect(source.probe.returned).toBe(true);
  });

  it('throws a TypeError at once for a source that is not iterable or a bad onMessageEnd', () => {
    expect(() => fromAnthropicStream(42 as never)).toThrow(/fromAnthropicStream: expected an async iterable/);
    expect(() => fromAnthropicStream([], { onMessageEnd: 'x' as never })).toThrow(/options.onMessageEnd must be a function/);
  });
});
