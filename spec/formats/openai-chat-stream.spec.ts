/**
 * `fromOpenAIChatStream` (contract S4, F2; case C16): every streamed Chat Completions
 * recording of the corpus (OpenAI, Writer, llama-stack) driven through the adapter and
 * `runTools`, compared with the same conversation's non-streamed form; then synthetic
 * streams: `finish_reason: "length"` mid-argument, interleaved indices, a stream that
 * throws, an error chunk, no finish_reason.
 */
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { assembleOpenAIChatStream } from '../../lib/cli/recordings/streams.ts';
import {
  defineTool,
  fromOpenAIChat,
  fromOpenAIChatStream,
  runTools,
  StreamBrokenError,
  toOpenAIChat,
  type ToolCall,
  type ToolCallStreamEnd,
} from '../../lib/index.ts';
import { collect, settle, text } from '../helpers.ts';
import { corpusSkipNote, hasCorpus, readCorpusJson } from './corpus.ts';
import { byteChunks, countingSource, drain, manualSource, runStreamed, toSSE } from './stream-helpers.ts';

const STREAMS = [
  'openai-chat/openllmetry__openai_streaming_parallel.json',
  'openai-chat/openllmetry__writer_streaming_seven_tool_calls.json',
  'openai-chat/llama-stack__function_call_ordering_2.json',
] as const;

/** Position (count of events read) of the first chunk that starts tool call `index`. */
function startOfIndex(events: Array<{ data: any }>, index: number): number {
  return events.findIndex((e) => e.data?.choices?.[0]?.delta?.tool_calls?.some((t: { index: number; id: unknown }) => t.index === index && typeof t.id === 'string')) + 1;
}

function finishPosition(events: Array<{ data: any }>): number {
  return events.findIndex((e) => typeof e.data?.choices?.[0]?.finish_reason === 'string') + 1;
}

describe.skipIf(!hasCorpus)(`fromOpenAIChatStream over the corpus's streamed Chat Completions (S4, F2)${corpusSkipNote}`, () => {
  for (const file of STREAMS) {
    const doc = hasCorpus ? readCorpusJson(file) : { interactions: [] };
    (doc.interactions as Array<{ request: { body: any }; response: { events: Array<{ data: any }> } }>).forEach((interaction, n) => {
      it(`${file} interaction ${n}: the calls of the non-streamed form, each started when the next call begins`, async () => {
        const events = interaction.response.events;
        const definitions = (interaction.request.body.tools as Array<{ function: { name: string; parameters: object } }>).map((t) => ({
          name: t.function.name,
          schema: t.function.parameters as never,
        }));
        const source = countingSource(events);
        const calls: ToolCall[] = [];
        let end: ToolCallStreamEnd | undefined;
        async function* tap(): AsyncGenerator<ToolCall> {
          for await (const call of fromOpenAIChatStream(source.iterable, { onMessageEnd: (e) => (end = e) })) {
            calls.push(call);
            yield call;
          }
        }
        const run = await runStreamed(tap(), definitions, () => source.probe.pulled);
        expect(run.error).toBeUndefined();

        // Equal to the assembled, non-streamed form: ids, names, raw argument text.
        const expected = fromOpenAIChat(assembleOpenAIChatStream(events));
        expect(calls).toEqual(expected);
        expect(calls.length).toBeGreaterThanOrEqual(2);

        // Call i started as soon as call i+1 began; the last at finish_reason — all before the stream ended.
        const starts = calls.map((_, i) => (i + 1 < calls.length ? startOfIndex(events, i + 1) : finishPosition(events)));
        expect(run.startedAt).toEqual(starts);
        expect(Math.max(...run.startedAt)).toBeLessThan(events.length);

        const results = run.batch!.messages;
        expect(toOpenAIChat(results).map((m) => m.tool_call_id)).toEqual(calls.map((c) => c.id));
        expect(results.every((m) => !m.isError)).toBe(true);
        expect(end).toEqual({ status: 'complete', stopReason: 'tool_calls', calls: calls.length, incompleteCalls: 0 });
      });
    });
  }

  it('Writer: the streamed calls equal the non-streamed recording of the same conversation (names, argument text; ids differ per request)', async () => {
    const streamed = await drain(fromOpenAIChatStream(readCorpusJson(STREAMS[1]).interactions[0].response.events));
    const plain = fromOpenAIChat(readCorpusJson('openai-chat/openllmetry__writer_chat_seven_tool_calls.json').interactions[0].response.body);
    expect(streamed.calls.map((c) => [c.name, c.arguments])).toEqual(plain.map((c) => [c.name, c.arguments]));
    expect(streamed.calls).toHaveLength(7);
    expect(streamed.calls.every((c) => c.id.startsWith('chatcmpl-tool-'))).toBe(true);
  });

  it('the same recordings as raw SSE bytes (one chunk per event, or split every 5 bytes, with [DONE]) yield the same calls', async () => {
    for (const file of STREAMS) {
      const events = readCorpusJson(file).interactions[0].response.events as Array<{ data: unknown }>;
      const expected = fromOpenAIChat(assembleOpenAIChatStream(events));
      const sse = toSSE(events);
      for (const chunks of [sse.split(/(?<=\n\n)/), byteChunks(sse, 5)]) {
        const { calls, end } = await drain(fromOpenAIChatStream(chunks));
        expect(calls, file).toEqual(expected);
        expect(end!.status).toBe('complete');
      }
    }
  });
});

// ---------------------------------------------------------------------------------------
// Synthetic streams

const chunk = (delta: object, finish_reason: string | null = null) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  choices: [{ index: 0, delta, finish_reason }],
});
const first = (index: number, id: string, name: string) => chunk({ tool_calls: [{ index, id, type: 'function', function: { name, arguments: '' } }] });
const args = (index: number, fragment: string | null) => chunk({ tool_calls: [{ index, id: null, type: null, function: { name: null, arguments: fragment } }] });
const finish = (reason: string) => chunk({}, reason);

function writeNote() {
  const probe = { bodies: [] as string[] };
  const tool = defineTool({
    name: 'write_note',
    input: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } }, required: ['path', 'content'] },
    execute: (input) => void probe.bodies.push(String(input.path)),
  });
  return { tool, probe };
}

describe('fromOpenAIChatStream: the message ends at the output limit (case C16)', () => {
  it('finish_reason "length" mid-argument: the complete call runs, the cut one is answered "cut off" and never runs', async () => {
    const { tool, probe } = writeNote();
    const cut = '{"path":"n.txt","content":"line1\\nline2';
    const events = [
      chunk({ role: 'assistant', content: null }),
      first(0, 'call_a', 'write_note'),
      args(0, '{"path":"m.txt",'),
      args(0, '"content":"ok"}'),
      first(1, 'call_b', 'write_note'),
      ...[0, 8, 16, 24, 32].map((at, k, all) => args(1, cut.slice(at, all[k + 1]))),
      finish('length'),
      'data: [DONE]\n\n',
    ];
    let end: ToolCallStreamEnd | undefined;
    const { batch } = await collect(runTools(fromOpenAIChatStream(events, { onMessageEnd: (e) => (end = e) }), { tools: [tool] }));
    expect(probe.bodies).toEqual(['m.txt']);
    expect(batch.messages.map((m) => m.isError)).toEqual([false, true]);
    expect(text(batch.messages[1]!)).toContain('was cut off by the output limit (finish_reason "length")');
    expect(end).toEqual({ status: 'truncated', stopReason: 'length', calls: 2, incompleteCalls: 1 });
  });

  it('content_filter cuts too, and says so', async () => {
    const { calls } = await drain(fromOpenAIChatStream([first(0, 'call_a', 'write_note'), args(0, '{"path":"'), finish('content_filter')]));
    expect(calls).toEqual([{ id: 'call_a', name: 'write_note', arguments: '{"path":"', incomplete: 'the content filter (finish_reason "content_filter")' }]);
  });

  it('two JSON objects glued in one call ({"a":1}{"b":2}) are never run as the first one: passed raw, "not valid JSON"', async () => {
    const lookup = defineTool({ name: 'lookup', input: v.object({ q: v.string() }), execute: ({ q }) => q });
    const events = [first(0, 'call_a', 'lookup'), args(0, '{"q":"a"}'), args(0, '{"q":"b"}'), first(1, 'call_b', 'lookup'), args(1, '{"q":"c"}'), finish('tool_calls')];
    const { batch } = await collect(runTools(fromOpenAIChatStream(events), { tools: [lookup] }));
    expect(text(batch.messages[0]!)).toContain('are not valid JSON');
    expect(text(batch.messages[1]!)).toBe('c');
  });
});

describe('fromOpenAIChatStream: interleaved indices', () => {
  it('assembles by index, yields a call only once its text is complete JSON, and keeps call order', async () => {
    const source = manualSource();
    const adapter = fromOpenAIChatStream(source.iterable);
    const yielded: ToolCall[] = [];
    const reading = (async () => {
      for await (const call of adapter) yielded.push(call);
    })();
    source.push(first(0, 'call_a', 'lookup'), args(0, '{"q":'), first(1, 'call_b', 'lookup'), args(1, '{"q":"b"}'));
    await settle();
    // Call 1 is complete, but call 0 is not: nothing may go yet (call order).
    expect(yielded).toEqual([]);
    source.push(args(0, '"a"'));
    await settle();
    expect(yielded).toEqual([]);
    source.push(args(0, '}'));
    await settle();
    // Call 0 is complete and a later call has started: it goes. Call 1 is the latest call: it
    // may still grow (two glued objects are one invalid text), so it waits for a later call.
    expect(yielded).toEqual([{ id: 'call_a', name: 'lookup', arguments: '{"q":"a"}' }]);
    source.push(first(2, 'call_c', 'lookup'));
    await settle();
    expect(yielded.map((c) => c.id)).toEqual(['call_a', 'call_b']);
    expect(yielded[1]).toEqual({ id: 'call_b', name: 'lookup', arguments: '{"q":"b"}' });
    source.push(args(2, '{"q":"c"}'), finish('tool_calls'));
    source.end();
    await reading;
    expect(yielded.map((c) => c.id)).toEqual(['call_a', 'call_b', 'call_c']);
  });

  it('several tool_calls entries in one chunk, interleaved, run with the right arguments', async () => {
    const both = (a: string, b: string) => chunk({ tool_calls: [{ index: 0, function: { arguments: a } }, { index: 1, function: { arguments: b } }] });
    const events = [
      chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'lookup', arguments: '' } }, { index: 1, id: 'call_b', type: 'function', function: { name: 'lookup', arguments: '' } }] }),
      both('{"q"', '{"q"'),
      both(':"a"}', ':"b"}'),
      finish('tool_calls'),
    ];
    const lookup = defineTool({ name: 'lookup', input: v.object({ q: v.string() }), execute: ({ q }) => q });
    const { batch } = await collect(runTools(fromOpenAIChatStream(events), { tools: [lookup] }));
    expect(batch.messages.map((m) => [m.toolCallId, text(m)])).toEqual([
      ['call_a', 'a'],
      ['call_b', 'b'],
    ]);
  });
});

describe('fromOpenAIChatStream: the stream breaks', () => {
  it('throws mid-call: the finished call runs, the unfinished one is answered "cut off", then runTools rethrows the same error', async () => {
    const { tool, probe } = writeNote();
    const reset = new TypeError('terminated');
    const events = [first(0, 'call_a', 'write_note'), args(0, '{"path":"a","content":"x"}'), first(1, 'call_b', 'write_note'), args(1, '{"path":"b"')];
    const source = countingSource(events, { failAt: events.length, error: reset });
    const results: string[] = [];
    await expect(
      (async () => {
        for await (const e of runTools(fromOpenAIChatStream(source.iterable), { tools: [tool] })) if (e.type === 'tool_result') results.push(text(e.message));
      })(),
    ).rejects.toBe(reset);
    expect(probe.bodies).toEqual(['a']);
    expect(results[1]).toContain('was cut off by the stream breaking (TypeError: terminated)');
  });

  it('ends without a finish_reason: StreamBrokenError after the pending call, which is flagged', async () => {
    const { calls, error, end } = await drain(fromOpenAIChatStream([first(0, 'call_a', 'lookup'), args(0, '{"q":"a"}')]));
    // Even complete JSON waits for a later call or the finish; at the break it is complete and runs.
    expect(calls).toEqual([{ id: 'call_a', name: 'lookup', arguments: '{"q":"a"}' }]);
    expect(error).toBeInstanceOf(StreamBrokenError);
    expect(end).toBeUndefined();
    const cut = await drain(fromOpenAIChatStream([first(0, 'call_a', 'lookup'), args(0, '{"q":"a')]));
    expect(cut.calls[0]!.incomplete).toBe('the stream ending early, before the message was complete');
  });

  it('an error chunk breaks the stream', async () => {
    const { calls, error } = await drain(fromOpenAIChatStream([first(0, 'call_a', 'lookup'), args(0, '{"q'), { error: { message: 'upstream overloaded', type: 'server_error' } }]));
    expect(error).toBeInstanceOf(StreamBrokenError);
    expect(calls[0]!.incomplete).toBe('the stream breaking (an error chunk: upstream overloaded)');
  });
});

describe('fromOpenAIChatStream: provider variations', () => {
  it('reads only the first choice, skips usage chunks, and assembles calls sent without an index by id', async () => {
    const other = { id: 'x', object: 'chat.completion.chunk', choices: [{ index: 1, delta: { tool_calls: [{ index: 0, id: 'call_other', function: { name: 'lookup', arguments: '{}' } }] }, finish_reason: null }] };
    const noIndex = (id: string | undefined, name: string | undefined, fragment: string) => chunk({ tool_calls: [{ ...(id ? { id } : {}), function: { ...(name ? { name } : {}), arguments: fragment } }] });
    const events = [other, noIndex('call_a', 'lookup', '{"q":'), noIndex(undefined, undefined, '"a"}'), noIndex('call_b', 'lookup', '{"q":"b"}'), finish('tool_calls'), { id: 'x', choices: [], usage: { total_tokens: 3 } }];
    const { calls } = await drain(fromOpenAIChatStream(events));
    expect(calls).toEqual([
      { id: 'call_a', name: 'lookup', arguments: '{"q":"a"}' },
      { id: 'call_b', name: 'lookup', arguments: '{"q":"b"}' },
    ]);
  });

  it('a call with no argument fragments at all gets {}', async () => {
    const { calls } = await drain(fromOpenAIChatStream([chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'now', arguments: null } }] }), finish('tool_calls')]));
    expect(calls).toEqual([{ id: 'call_a', name: 'now', arguments: {} }]);
  });
});
