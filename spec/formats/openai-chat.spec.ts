import { describe, expect, it } from 'vitest';
import { assembleOpenAIChatStream } from '../../lib/cli/recordings/streams.ts';
import { fromOpenAIChat, toOpenAIChat, type ToolResultMessage } from '../../lib/index.ts';
import { corpusSkipNote, hasCorpus, readCorpusJson, runWithOutputs } from './corpus.ts';

const call = (id: string, name: string, args: string) => ({ id, type: 'function', function: { name, arguments: args } });

describe('F2 OpenAI Chat: fromOpenAIChat', () => {
  it('reads tool_calls in order and keeps arguments as the raw JSON string', () => {
    const calls = fromOpenAIChat({
      role: 'assistant',
      tool_calls: [call('call_1', 'delete_file', '{"path": ".env"}'), call('call_2', 'create_file', '{"path":"test.txt"}')],
    });
    expect(calls).toEqual([
      { id: 'call_1', name: 'delete_file', arguments: '{"path": ".env"}' },
      { id: 'call_2', name: 'create_file', arguments: '{"path":"test.txt"}' },
    ]);
  });

  it('accepts a chat completion body (first choice) and a Cohere v2 body ({ message })', () => {
    const message = { role: 'assistant', content: null, tool_calls: [call('chatcmpl-tool-abc', 'get_weather', '{}')] };
    expect(fromOpenAIChat({ choices: [{ index: 0, message, finish_reason: 'tool_calls' }] })).toEqual([
      { id: 'chatcmpl-tool-abc', name: 'get_weather', arguments: '{}' },
    ]);
    expect(fromOpenAIChat({ message: { ...message, tool_plan: 'I will…' } })).toHaveLength(1);
  });

  it('keeps "" arguments, an object, repeated ids, extra fields; reads custom tools raw', () => {
    const calls = fromOpenAIChat({
      tool_calls: [
        { ...call('call_0', 'a', ''), index: 0 },
        { id: 'call_0', type: 'function', function: { name: 'a', arguments: { x: 1 } } },
        { id: 'c', type: 'custom', custom: { name: 'patch', input: '*** Begin Patch' } },
        { type: 'function', function: { name: 'no_id' } },
      ],
    });
    expect(calls).toEqual([
      { id: 'call_0', name: 'a', arguments: '' },
      { id: 'call_0', name: 'a', arguments: { x: 1 } },
      { id: 'c', name: 'patch', arguments: '*** Begin Patch' },
      { id: '', name: 'no_id' },
    ]);
  });

  it('gives no calls without tool_calls (absent or null), a TypeError for a non-message', () => {
    expect(fromOpenAIChat({ role: 'assistant', tool_calls: null })).toEqual([]);
    expect(fromOpenAIChat({ role: 'assistant' })).toEqual([]);
    expect(() => fromOpenAIChat('x' as never)).toThrow(TypeError);
    expect(() => fromOpenAIChat({ choices: [{}] })).toThrow(/first choice/);
  });
});

describe('F2 OpenAI Chat: toOpenAIChat', () => {
  it('gives one role:"tool" message per result, in order, content as one string', () => {
    const results: ToolResultMessage[] = [
      { role: 'tool', toolCallId: 'call_1', toolName: 'a', content: [{ type: 'text', text: 'line 1' }, { type: 'text', text: 'line 2' }], isError: false },
      { role: 'tool', toolCallId: 'call_2', toolName: 'b', content: [{ type: 'text', text: 'Tool "b" failed' }], isError: true, details: { x: 1 } },
    ];
    expect(toOpenAIChat(results)).toEqual([
      { role: 'tool', tool_call_id: 'call_1', content: 'line 1\nline 2' },
      { role: 'tool', tool_call_id: 'call_2', content: 'Tool "b" failed' },
    ]);
  });

  it('replaces an image block, which a tool message cannot carry, by a placeholder with its type and size', () => {
    const [message] = toOpenAIChat([
      { role: 'tool', toolCallId: 'call_1', toolName: 'shot', content: [{ type: 'image', data: 'AAAA', mimeType: 'image/png' }], isError: false },
    ]);
    expect(message?.content).toBe('[image omitted: image/png, 3 bytes; this tool result format carries text only]');
  });
});

describe.skipIf(!hasCorpus)(`F2 OpenAI Chat round trips on corpus recordings${corpusSkipNote}`, () => {
  for (const [file, interaction] of [
    ['openai-chat/pydantic-ai__openai_chat_hitl_two_calls.json', 0],
    ['openai-chat/crewai__openai_parallel_native_tool_calling_agent_kickoff.json', 0],
    ['openai-chat/pydantic-ai__deepseek_two_calls.json', 1],
  ] as const) {
    it(`${file}: the tool messages equal the ones the framework sent (id, order, content)`, async () => {
      const cassette = readCorpusJson(file);
      const calls = fromOpenAIChat(cassette.interactions[interaction].response.body);
      const history: Array<Record<string, unknown>> = cassette.interactions[interaction + 1].request.body.messages;
      const at = history.findIndex((m) => Array.isArray(m.tool_calls) && (m.tool_calls as Array<{ id: string }>)[0]?.id === calls[0]?.id);
      const recorded = history.slice(at + 1, at + 1 + calls.length);

      const produced = toOpenAIChat(await runWithOutputs(calls, recorded.map((m) => String(m.content))));

      expect(calls.length).toBeGreaterThanOrEqual(2);
      // crewAI adds `name` to its tool messages: an extra field, not part of the contract.
      expect(produced).toEqual(recorded.map(({ role, tool_call_id, content }) => ({ role, tool_call_id, content })));
    });
  }

  it('DeepSeek: ids with the index inside (call_00_…, call_01_…) and "{}" arguments', () => {
    const calls = fromOpenAIChat(readCorpusJson('openai-chat/pydantic-ai__deepseek_two_calls.json').interactions[1].response.body);
    expect(calls.map((c) => c.id.slice(0, 8))).toEqual(['call_00_', 'call_01_']);
    expect(calls.map((c) => c.arguments)).toEqual(['{}', '{}']);
  });

  it('Writer: the streamed and the non-streamed recording give the same 7 calls shape (chatcmpl-tool-<hex> ids)', () => {
    const plain = fromOpenAIChat(readCorpusJson('openai-chat/openllmetry__writer_chat_seven_tool_calls.json').interactions[0].response.body);
    const streamed = fromOpenAIChat(
      assembleOpenAIChatStream(readCorpusJson('openai-chat/openllmetry__writer_streaming_seven_tool_calls.json').interactions[0].response.events),
    );
    for (const calls of [plain, streamed]) {
      expect(calls).toHaveLength(7);
      for (const c of calls) expect(c.id).toMatch(/^chatcmpl-tool-[0-9a-f]{32}$/);
      expect(calls.map((c) => JSON.parse(c.arguments as string).location)).toEqual(['Zakopane', 'Warsaw', 'Lodz', 'Katowice', 'Krakow', 'Poznan', 'Lublin']);
    }
  });

  it('llama-stack stream with explicit nulls after the first delta: ids and names from the first delta', () => {
    const cassette = readCorpusJson('openai-chat/llama-stack__function_call_ordering_2.json');
    const calls = fromOpenAIChat(assembleOpenAIChatStream(cassette.interactions[0].response.events));
    expect(calls).toEqual([
      { id: 'call_wMa6RcQHNGwr4h2FuRhNEKT2', name: 'get_weather', arguments: '{"location": "San Francisco, USA"}' },
      { id: 'call_p4RoPAGT5xM9xsmQM9tewGUZ', name: 'get_weather', arguments: '{"location": "Los Angeles, USA"}' },
    ]);
  });

  it('Cohere v2 body: ids shaped <toolName>_<random>', () => {
    const calls = fromOpenAIChat(readCorpusJson('openai-chat/vercel-ai__cohere-tool-call.json'));
    expect(calls.map((c) => [c.id, c.name])).toEqual([
      ['weather_dqgshstja6p9', 'weather'],
      ['cityAttractions_dcxfx4myvx68', 'cityAttractions'],
    ]);
  });
});
