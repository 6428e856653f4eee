/**
 * The agent history ↔ OpenAI Responses items: unit cases, a type test against the `openai`
 * SDK's `ResponseInputItem`, and `runAgent` replaying a recorded Responses conversation.
 */
import type { ResponseInputItem } from 'openai/resources/responses/responses';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { collect } from '../helpers.ts';
import { corpusSkipNote, hasCorpus, readCorpusJson } from './corpus.ts';
import { defineTool, fromOpenAIResponsesMessage, runAgent, toOpenAIResponsesMessages, type AgentMessage } from '../../lib/index.ts';

describe('OpenAI Responses agent messages (F3)', () => {
  it('F3: fromOpenAIResponsesMessage: text, refusal, reasoning summary, function calls by call_id; stop reasons', () => {
    const message = fromOpenAIResponsesMessage({
      status: 'completed',
      output: [
        { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'think' }] },
        { type: 'message', content: [{ type: 'output_text', text: 'Looking.' }, { type: 'refusal', refusal: 'not that' }] },
        { type: 'web_search_call', id: 'ws_1' },
        { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'search', arguments: '{"q":"x"}' },
      ],
    });
    expect(message).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'think' },
        { type: 'text', text: 'Looking.' },
        { type: 'text', text: 'not that' },
        { type: 'toolCall', id: 'call_1', name: 'search', arguments: '{"q":"x"}' },
      ],
      stopReason: 'toolUse',
    });
    expect(fromOpenAIResponsesMessage({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, output: [] }).stopReason).toBe('length');
    expect(fromOpenAIResponsesMessage({ status: 'completed', output: [] }).stopReason).toBe('stop');
    expect(fromOpenAIResponsesMessage([]).stopReason).toBeUndefined();
    expect(() => fromOpenAIResponsesMessage(7 as never)).toThrow(/fromOpenAIResponsesMessage: expected a response/);
  });

  it('F3: toOpenAIResponsesMessages: user, assistant text, function_call, function_call_output in history order; thinking dropped', () => {
    const history: AgentMessage[] = [
      { role: 'user', content: [{ type: 'text', text: 'see' }, { type: 'image', data: 'AAAA', mimeType: 'image/png' }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'hmm' },
          { type: 'text', text: 'Two calls.' },
          { type: 'toolCall', id: 'call_1', name: 'a', arguments: '{"x":1}' },
          { type: 'toolCall', id: 'call_2', name: 'b', arguments: { y: 2 } },
        ],
      },
      { role: 'tool', toolCallId: 'call_1', toolName: 'a', content: [{ type: 'text', text: 'A' }], isError: false },
      { role: 'tool', toolCallId: 'call_2', toolName: 'b', content: [{ type: 'text', text: 'bad' }], isError: true },
    ];
    expect(toOpenAIResponsesMessages(history)).toEqual([
      { role: 'user', content: [{ type: 'input_text', text: 'see' }, { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'auto' }] },
      { role: 'assistant', content: 'Two calls.' },
      { type: 'function_call', call_id: 'call_1', name: 'a', arguments: '{"x":1}' },
      { type: 'function_call', call_id: 'call_2', name: 'b', arguments: '{"y":2}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'A' },
      { type: 'function_call_output', call_id: 'call_2', output: 'bad' },
    ]);
  });

  it("F3 (types): the items are the openai SDK's ResponseInputItem", () => {
    expectTypeOf(toOpenAIResponsesMessages([])).toExtend<ResponseInputItem[]>();
  });
});

describe.skipIf(!hasCorpus)(`runAgent replays a recorded Responses conversation (F3, F4)${corpusSkipNote}`, () => {
  it('F3 F4: each request the agent would send holds the recorded items: calls and outputs in order, keyed by the reply call_id', async () => {
    // AWS Bedrock's Responses endpoint: two turns that both return call_id "call_0".
    const recording = readCorpusJson('openai-responses/pydantic-ai__bedrock_mantle_reused_call_ids.json');
    const interactions: any[] = recording.interactions.slice(0, 3);
    const outputs: Record<string, string> = { first_tool: 'first result', second_tool: 'second result' };
    const tools = Object.keys(outputs).map((name) => defineTool({ name, input: { type: 'object' }, execute: () => outputs[name]! }));
    const sent: unknown[][] = [];
    let turn = 0;
    const first = interactions[0].request.body.input[0];
    const run = runAgent({
      tools,
      messages: [{ role: 'user', content: first.content }],
      model: (history) => {
        sent.push(toOpenAIResponsesMessages(history));
        return fromOpenAIResponsesMessage(interactions[turn++].response.body);
      },
    });
    for (let step = await run.next(); !step.done; step = await run.next());
    expect(turn).toBe(3);
    for (let i = 0; i < 3; i++) {
      const recorded: any[] = interactions[i].request.body.input;
      const ours = sent[i] as any[];
      // Same items in the same order: pydantic-ai rewrote the call ids (prefixed the response id), and sent item ids.
      const shape = (item: any) => [item.type ?? 'message', item.role, item.name, item.arguments, item.output, typeof item.content === 'string' ? item.content : undefined];
      expect(ours.map(shape)).toEqual(recorded.map(shape));
      // toolrun keys each output by the call_id of the reply that made the call (F3), and pairs them by position (O1).
      const calls = ours.filter((item) => item.type === 'function_call');
      const answers = ours.filter((item) => item.type === 'function_call_output');
      expect(answers.map((a) => a.call_id)).toEqual(calls.map((c) => c.call_id));
      expect(calls.every((c) => c.call_id === 'call_0')).toBe(true);
    }
  });
});
