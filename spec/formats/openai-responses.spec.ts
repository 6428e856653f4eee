import { describe, expect, it } from 'vitest';
import { fromOpenAIResponses, toOpenAIResponses } from '../../lib/index.ts';
import { corpusSkipNote, hasCorpus, readCorpusJson, runWithOutputs } from './corpus.ts';

describe('F3 OpenAI Responses: fromOpenAIResponses', () => {
  const output = [
    { type: 'reasoning', id: 'rs_1', summary: [] },
    { type: 'function_call', id: 'fc_1', call_id: 'call_a', name: 'get_location', arguments: '{"loc_name":"Londos"}', status: 'completed' },
    { type: 'message', id: 'msg_1', role: 'assistant', content: [] },
    { type: 'function_call', id: 'fc_2', call_id: 'call_b', name: 'get_location', arguments: '{"loc_name":"London"}' },
    { type: 'web_search_call', id: 'ws_1', status: 'completed' },
  ];

  it('reads function_call items in order, keyed by call_id (never the item id fc_…)', () => {
    const calls = fromOpenAIResponses(output);
    expect(calls).toEqual([
      { id: 'call_a', name: 'get_location', arguments: '{"loc_name":"Londos"}', providerItem: output[1] },
      { id: 'call_b', name: 'get_location', arguments: '{"loc_name":"London"}', providerItem: output[3] },
    ]);
    // The model's own item, not a copy (an adapter hands it to its peer as it is).
    expect(calls.map((c) => c.providerItem)).toEqual(output.filter((item) => item.type === 'function_call'));
    expect(calls[0]!.providerItem).toBe(output.find((item) => item.type === 'function_call'));
  });

  it('accepts a whole response body, and output: null', () => {
    expect(fromOpenAIResponses({ object: 'response', output } as never)).toHaveLength(2);
    expect(fromOpenAIResponses({ output: null })).toEqual([]);
  });

  it('keeps repeated call_ids and a missing one as ""', () => {
    const items = [
      { type: 'function_call', call_id: 'call_0', name: 'a', arguments: '{}' },
      { type: 'function_call', call_id: 'call_0', name: 'b', arguments: '' },
      { type: 'function_call', name: 'c' },
    ];
    const calls = fromOpenAIResponses(items);
    expect(calls).toEqual([
      { id: 'call_0', name: 'a', arguments: '{}', providerItem: items[0] },
      { id: 'call_0', name: 'b', arguments: '', providerItem: items[1] },
      { id: '', name: 'c', providerItem: items[2] },
    ]);
  });

  it('throws a TypeError for a value that is neither an output array nor a response', () => {
    expect(() => fromOpenAIResponses(7 as never)).toThrow(TypeError);
    expect(() => fromOpenAIResponses({ output: 'x' } as never)).toThrow(/output/);
  });
});

describe('F3 OpenAI Responses: toOpenAIResponses', () => {
  it('gives one function_call_output item per result, in order, output as one string', () => {
    expect(
      toOpenAIResponses([
        { role: 'tool', toolCallId: 'call_a', toolName: 'x', content: [{ type: 'text', text: 'ok' }], isError: false },
        { role: 'tool', toolCallId: 'call_b', toolName: 'x', content: [{ type: 'text', text: 'failed' }, { type: 'image', data: 'AAAAAA==', mimeType: 'image/jpeg' }], isError: true },
      ]),
    ).toEqual([
      { type: 'function_call_output', call_id: 'call_a', output: 'ok' },
      { type: 'function_call_output', call_id: 'call_b', output: 'failed\n[image omitted: image/jpeg, 4 bytes; this tool result format carries text only]' },
    ]);
  });
});

describe.skipIf(!hasCorpus)(`F3 OpenAI Responses round trips on corpus recordings${corpusSkipNote}`, () => {
  it('pydantic-ai model retry: results reference call_id and equal the recorded function_call_output items', async () => {
    const cassette = readCorpusJson('openai-responses/pydantic-ai__openai_responses_model_retry.json');
    const response = cassette.interactions[0].response.body;
    const calls = fromOpenAIResponses(response);
    const recorded = (cassette.interactions[1].request.body.input as Array<{ type: string; output: string }>).filter(
      (item) => item.type === 'function_call_output',
    );

    const produced = toOpenAIResponses(await runWithOutputs(calls, recorded.map((item) => item.output)));

    expect(calls.map((c) => c.id)).toEqual(['call_LWVp74L5HaH2KNvgVz9PJsrj', 'call_YnRAWeTyxI91m5uNa5bxXwVO']);
    expect(response.output.map((item: { id: string }) => item.id.slice(0, 3))).toEqual(['fc_', 'fc_']);
    expect(produced).toEqual(recorded);
  });

  it('Bedrock mantle: the provider reuses call_id "call_0" in consecutive turns; each turn still gets its own answer', async () => {
    const cassette = readCorpusJson('openai-responses/pydantic-ai__bedrock_mantle_reused_call_ids.json');
    const first = fromOpenAIResponses(cassette.interactions[0].response.body);
    const second = fromOpenAIResponses(cassette.interactions[1].response.body);
    expect(first.map((c) => [c.id, c.name])).toEqual([['call_0', 'first_tool']]);
    expect(second.map((c) => [c.id, c.name])).toEqual([['call_0', 'second_tool']]);
    expect(toOpenAIResponses(await runWithOutputs(second, ['second result']))).toEqual([
      { type: 'function_call_output', call_id: 'call_0', output: 'second result' },
    ]);
  });

  it('the multi_tool_use.parallel wrapper fixture is read as the one call the model sent', () => {
    const calls = fromOpenAIResponses(readCorpusJson('openai-responses/vercel-ai__parallel-tool-call-wrapper.1.json'));
    expect(calls).toHaveLength(1);
    expect(calls[0]?.id).toBe('call_parallel');
    expect(JSON.parse(calls[0]?.arguments as string).tool_uses).toHaveLength(2);
  });
});
