/**
 * `fromOpenAIResponsesStream` (contract S4, F3; case C16). The corpus holds no streamed
 * Responses recording, so these streams are synthetic, shaped like the `openai` SDK's
 * `ResponseStreamEvent` types; the non-streamed form they must equal is the final
 * `response.completed` body read by `fromOpenAIResponses`. The recorded non-streamed
 * response of `openai-responses/pydantic-ai__openai_responses_model_retry.json` is
 * replayed as a stream built from its own output items.
 */
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { defineTool, fromOpenAIResponses, fromOpenAIResponsesStream, runTools, StreamBrokenError, type ToolCall, type ToolCallStreamEnd } from '../../lib/index.ts';
import { collect, settle, text } from '../helpers.ts';
import { corpusSkipNote, hasCorpus, readCorpusJson } from './corpus.ts';
import { byteChunks, countingSource, drain, manualSource, runStreamed, toSSE } from './stream-helpers.ts';

let seq = 0;
const ev = (type: string, fields: object) => ({ type, sequence_number: seq++, ...fields });
const fc = (n: number, args = '', status = 'in_progress') => ({ type: 'function_call', id: `fc_${n}`, call_id: `call_${n}`, name: 'lookup', arguments: args, status });
const added = (out: number, n: number) => ev('response.output_item.added', { output_index: out, item: fc(n) });
const delta = (out: number, n: number, d: string) => ev('response.function_call_arguments.delta', { item_id: `fc_${n}`, output_index: out, delta: d });
const argsDone = (out: number, n: number, a: string) => ev('response.function_call_arguments.done', { item_id: `fc_${n}`, output_index: out, arguments: a, name: 'lookup' });
const itemDone = (out: number, n: number, a: string, status = 'completed') => ev('response.output_item.done', { output_index: out, item: fc(n, a, status) });
const response = (status: string, output: unknown[], extra: object = {}) => ({ id: 'resp_1', object: 'response', status, output, ...extra });
const completed = (output: unknown[]) => ev('response.completed', { response: response('completed', output) });
const incomplete = (reason: string, output: unknown[] = []) => ev('response.incomplete', { response: response('incomplete', output, { incomplete_details: { reason } }) });

/** A stream of `calls` (argument texts), each split in two deltas, after a reasoning item. */
function streamOf(argTexts: string[]) {
  const events: object[] = [ev('response.created', { response: response('in_progress', []) })];
  events.push(ev('response.output_item.added', { output_index: 0, item: { type: 'reasoning', id: 'rs_1', summary: [] } }));
  events.push(ev('response.output_item.done', { output_index: 0, item: { type: 'reasoning', id: 'rs_1', summary: [] } }));
  argTexts.forEach((a, k) => {
    const out = k + 1;
    const half = Math.floor(a.length / 2);
    events.push(added(out, k), delta(out, k, a.slice(0, half)), delta(out, k, a.slice(half)), argsDone(out, k, a), itemDone(out, k, a));
  });
  events.push(completed(argTexts.map((a, k) => fc(k, a, 'completed'))));
  return events;
}

describe('fromOpenAIResponsesStream: calls keyed by call_id, each yielded at its output_item.done (S4, F3)', () => {
  it('yields the calls of the final response, each as its item is done, and runTools starts them mid-response', async () => {
    const events = streamOf(['{"q":"a"}', '{"q":"b"}', '{}']);
    const source = countingSource(events);
    let end: ToolCallStreamEnd | undefined;
    const run = await runStreamed(fromOpenAIResponsesStream(source.iterable, { onMessageEnd: (e) => (end = e) }), [{ name: 'lookup', schema: { type: 'object' } }], () => source.probe.pulled);
    expect(run.error).toBeUndefined();
    const final = (events.at(-1) as { response: { output: unknown[] } }).response;
    expect(run.batch!.messages.map((m) => m.toolCallId)).toEqual(fromOpenAIResponses(final).map((c) => c.id));
    expect(run.batch!.messages.map((m) => m.toolCallId)).toEqual(['call_0', 'call_1', 'call_2']);
    const doneAt = events.map((e, i) => ((e as { type: string; item?: { type: string } }).type === 'response.output_item.done' && (e as { item: { type: string } }).item.type === 'function_call' ? i + 1 : 0)).filter((p) => p > 0);
    expect(run.startedAt).toEqual(doneAt);
    expect(end).toEqual({ status: 'complete', stopReason: 'completed', calls: 3, incompleteCalls: 0 });
  });

  it('arguments are the raw text, as in the non-streamed form; the final text of the item wins over the deltas', async () => {
    const events = [added(0, 0), delta(0, 0, '{"q":'), delta(0, 0, '"typo'), itemDone(0, 0, '{"q":"fixed"}'), completed([fc(0, '{"q":"fixed"}', 'completed')])];
    const { calls } = await drain(fromOpenAIResponsesStream(events));
    expect(calls).toEqual([{ id: 'call_0', name: 'lookup', arguments: '{"q":"fixed"}' }]);
  });

  it('as raw SSE bytes with event: names, split every 3 bytes, yields the same calls', async () => {
    const events = streamOf(['{"q":"a"}', '{"q":"é"}']);
    const sse = toSSE(events.map((data) => ({ event: (data as { type: string }).type, data })));
    const { calls } = await drain(fromOpenAIResponsesStream(byteChunks(sse, 3)));
    expect(calls).toEqual([
      { id: 'call_0', name: 'lookup', arguments: '{"q":"a"}' },
      { id: 'call_1', name: 'lookup', arguments: '{"q":"é"}' },
    ]);
  });

  it('a call is yielded while the response is still streaming', async () => {
    const source = manualSource();
    const adapter = fromOpenAIResponsesStream(source.iterable);
    let got: IteratorResult<ToolCall, unknown> | undefined;
    void adapter.next().then((r) => (got = r));
    source.push(added(0, 0), delta(0, 0, '{"q":"a"}'), argsDone(0, 0, '{"q":"a"}'));
    await settle();
    expect(got).toBeUndefined();
    source.push(itemDone(0, 0, '{"q":"a"}'));
    await settle();
    expect(got).toEqual({ done: false, value: { id: 'call_0', name: 'lookup', arguments: '{"q":"a"}', providerItem: expect.objectContaining({ type: 'function_call', call_id: 'call_0' }) } });
    source.push(completed([fc(0, '{"q":"a"}', 'completed')]));
    source.end();
    expect((await adapter.next()).done).toBe(true);
  });

  it('a call never announced by output_item.added is taken from response.completed', async () => {
    const { calls } = await drain(fromOpenAIResponsesStream([completed([{ type: 'message', id: 'msg_1' }, fc(0, '{"q":"z"}', 'completed')])]));
    expect(calls).toEqual([{ id: 'call_0', name: 'lookup', arguments: '{"q":"z"}' }]);
  });
});

describe.skipIf(!hasCorpus)(`fromOpenAIResponsesStream over a recorded response turned into a stream${corpusSkipNote}`, () => {
  it('openai-responses/pydantic-ai__openai_responses_model_retry.json: the streamed form of its output gives the calls of the non-streamed form and of the follow-up request', async () => {
    const doc = readCorpusJson('openai-responses/pydantic-ai__openai_responses_model_retry.json');
    const body = doc.interactions[0].response.body;
    const events: object[] = [];
    (body.output as Array<Record<string, unknown>>).forEach((item, out) => {
      events.push(ev('response.output_item.added', { output_index: out, item: { ...item, arguments: '' } }));
      if (item.type === 'function_call') {
        const a = String(item.arguments);
        for (let i = 0; i < a.length; i += 4) events.push(ev('response.function_call_arguments.delta', { item_id: item.id, output_index: out, delta: a.slice(i, i + 4) }));
      }
      events.push(ev('response.output_item.done', { output_index: out, item }));
    });
    events.push(ev('response.completed', { response: body }));
    const { calls, items, end } = await drain(fromOpenAIResponsesStream(events));
    // Fails if the stream reader kept no item, or another one than the non-streamed form keeps.
    expect(calls.map((call, i) => ({ ...call, providerItem: items[i] }))).toEqual(fromOpenAIResponses(body));
    // The follow-up request echoes the same calls (call_id, name, arguments) and answers them by call_id.
    const followUp = doc.interactions[1].request.body.input as Array<Record<string, unknown>>;
    const echoed = followUp.filter((item) => item.type === 'function_call').map((item) => ({ id: item.call_id, name: item.name, arguments: item.arguments }));
    expect(calls.map(({ id, name, arguments: args }) => ({ id, name, arguments: args }))).toEqual(echoed);
    expect(followUp.filter((item) => item.type === 'function_call_output').map((item) => item.call_id)).toEqual(calls.map((c) => c.id));
    expect(end!.status).toBe('complete');
  });
});

function writeNote() {
  const probe = { bodies: [] as string[] };
  const tool = defineTool({ name: 'lookup', input: v.object({ q: v.string() }), execute: ({ q }) => void probe.bodies.push(q) });
  return { tool, probe };
}

describe('fromOpenAIResponsesStream: the response ends incomplete (case C16)', () => {
  it('response.incomplete (max_output_tokens) after a function_call item started: not run with {}, answered "cut off"', async () => {
    const { tool, probe } = writeNote();
    const events = [added(0, 0), delta(0, 0, '{"q":"a"}'), itemDone(0, 0, '{"q":"a"}'), added(1, 1), delta(1, 1, '{"q":"b'), incomplete('max_output_tokens')];
    let end: ToolCallStreamEnd | undefined;
    const { batch } = await collect(runTools(fromOpenAIResponsesStream(events, { onMessageEnd: (e) => (end = e) }), { tools: [tool] }));
    expect(probe.bodies).toEqual(['a']);
    expect(batch.messages.map((m) => [m.toolCallId, m.isError])).toEqual([
      ['call_0', false],
      ['call_1', true],
    ]);
    expect(text(batch.messages[1]!)).toContain('cut off by the output limit (response incomplete: "max_output_tokens")');
    expect(end).toEqual({ status: 'truncated', stopReason: 'max_output_tokens', calls: 2, incompleteCalls: 1 });
  });

  it('an item done with status "incomplete" is never run, even when its text parses', async () => {
    const { calls } = await drain(fromOpenAIResponsesStream([added(0, 0), itemDone(0, 0, '{"q":"a"}', 'incomplete'), incomplete('max_output_tokens')]));
    expect(calls).toEqual([{ id: 'call_0', name: 'lookup', arguments: '{"q":"a"}', incomplete: 'the output limit (response incomplete: "max_output_tokens")' }]);
  });

  it('content_filter is named', async () => {
    const { calls } = await drain(fromOpenAIResponsesStream([added(0, 0), incomplete('content_filter')]));
    expect(calls[0]!.incomplete).toBe('the content filter (response incomplete: "content_filter")');
  });
});

describe('fromOpenAIResponsesStream: the stream breaks', () => {
  it('throws mid-call: the done call runs, the other is answered "cut off", then runTools rethrows the same error', async () => {
    const { tool, probe } = writeNote();
    const reset = new Error('ECONNRESET');
    const events = [added(0, 0), itemDone(0, 0, '{"q":"a"}'), added(1, 1), delta(1, 1, '{"q":"b"}')];
    const source = countingSource(events, { failAt: events.length, error: reset });
    const results: string[] = [];
    await expect(
      (async () => {
        for await (const e of runTools(fromOpenAIResponsesStream(source.iterable), { tools: [tool] })) if (e.type === 'tool_result') results.push(text(e.message));
      })(),
    ).rejects.toBe(reset);
    expect(probe.bodies).toEqual(['a']);
    // Not done: even a text that parses is not trusted without output_item.done.
    expect(results[1]).toContain('cut off by the stream breaking (ECONNRESET)');
  });

  it('response.failed and error events break the stream with a StreamBrokenError', async () => {
    const failed = ev('response.failed', { response: response('failed', [], { error: { code: 'server_error', message: 'The model failed' } }) });
    const a = await drain(fromOpenAIResponsesStream([added(0, 0), failed]));
    expect(a.error).toBeInstanceOf(StreamBrokenError);
    expect(a.calls[0]!.incomplete).toBe('the stream breaking (response.failed: server_error: The model failed)');
    const b = await drain(fromOpenAIResponsesStream([added(0, 0), ev('error', { code: 'rate_limit_exceeded', message: 'slow down', param: null })]));
    expect(b.calls[0]!.incomplete).toBe('the stream breaking (an error event: rate_limit_exceeded: slow down)');
  });

  it('ends without response.completed: StreamBrokenError, pending calls flagged', async () => {
    const { calls, error } = await drain(fromOpenAIResponsesStream([added(0, 0), delta(0, 0, '{"q":"a"}')]));
    expect(error).toBeInstanceOf(StreamBrokenError);
    expect(calls[0]!.incomplete).toBe('the stream ending early, before the message was complete');
  });
});
