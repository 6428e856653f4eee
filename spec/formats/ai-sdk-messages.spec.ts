/**
 * AI SDK ModelMessages (F6) against the real `ai` package: typed against its `ModelMessage`
 * (ai 7 and ai 6), and round-tripped through `generateText` with the SDK's mock model.
 */
import * as ai7 from 'ai';
import type { ModelMessage as ModelMessage6 } from 'ai-v6';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { collect } from '../helpers.ts';
import { defineTool, fromAISDKMessage, runTools, toAISDKMessages, type ToolResultMessage } from '../../lib/index.ts';

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

const result = (over: Partial<ToolResultMessage>): ToolResultMessage => ({
  role: 'tool',
  toolCallId: 'c1',
  toolName: 'get_time',
  content: [{ type: 'text', text: '12:00' }],
  isError: false,
  ...over,
});

describe('AI SDK messages (F6)', () => {
  it('F6: fromAISDKMessage reads tool-call parts in order and skips provider-executed ones', () => {
    expect(
      fromAISDKMessage({
        role: 'assistant',
        content: [
          { type: 'text', text: 'checking' },
          { type: 'tool-call', toolCallId: 'a', toolName: 'search', input: { q: 1 } },
          { type: 'tool-call', toolCallId: 'ws', toolName: 'web_search', input: {}, providerExecuted: true },
          { type: 'tool-call', toolCallId: 'a', toolName: 'search', input: { q: 1 } },
        ],
      }),
    ).toEqual([
      { id: 'a', name: 'search', arguments: { q: 1 } },
      { id: 'a', name: 'search', arguments: { q: 1 } },
    ]);
    expect(fromAISDKMessage({ role: 'assistant', content: 'just text' })).toEqual([]);
    expect(() => fromAISDKMessage({ role: 'assistant', content: 5 } as never)).toThrow(/fromAISDKMessage: expected `content`/);
  });

  it('F6: toAISDKMessages writes one tool message: text, error-text, content with ai 7 file parts (ai 6 image-data on request); [] for no results', () => {
    const results = [
      result({}),
      result({ toolCallId: 'c2', isError: true, content: [{ type: 'text', text: 'boom' }] }),
      result({ toolCallId: 'c3', content: [{ type: 'text', text: 'cat' }, { type: 'image', data: 'AAAA', mimeType: 'image/png' }] }),
    ];
    expect(toAISDKMessages(results)[0]!.content[2]!.output).toEqual({
      type: 'content',
      value: [{ type: 'text', text: 'cat' }, { type: 'file', data: { type: 'data', data: 'AAAA' }, mediaType: 'image/png' }],
    });
    expect(toAISDKMessages(results, { aiVersion: 6 })).toEqual([
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'c1', toolName: 'get_time', output: { type: 'text', value: '12:00' } },
          { type: 'tool-result', toolCallId: 'c2', toolName: 'get_time', output: { type: 'error-text', value: 'boom' } },
          {
            type: 'tool-result',
            toolCallId: 'c3',
            toolName: 'get_time',
            output: { type: 'content', value: [{ type: 'text', text: 'cat' }, { type: 'image-data', data: 'AAAA', mediaType: 'image/png' }] },
          },
        ],
      },
    ]);
    expect(toAISDKMessages([])).toEqual([]);
  });

  it("F6 (types): the messages are the ai package's ModelMessage (ai 7 and ai 6); its assistant message fits fromAISDKMessage", () => {
    expectTypeOf(toAISDKMessages([])).toExtend<ai7.ModelMessage[]>();
    expectTypeOf(toAISDKMessages([], { aiVersion: 6 })).toExtend<ModelMessage6[]>();
    expectTypeOf<ai7.AssistantModelMessage>().toExtend<Parameters<typeof fromAISDKMessage>[0]>();
    expectTypeOf<ai7.ModelMessage>().toExtend<Parameters<typeof fromAISDKMessage>[0]>();
  });

  it('F6: round trip through generateText: the calls of a step run with toolrun, their results reach the next model call', async () => {
    const add = defineTool({ name: 'add', input: { type: 'object', properties: { a: { type: 'number' } }, required: ['a'] }, execute: ({ a }) => String(Number(a) + 1) });
    const model = new MockLanguageModelV3({
      doGenerate: [
        {
          content: [
            { type: 'tool-call', toolCallId: 'call-1', toolName: 'add', input: '{"a":1}' },
            { type: 'tool-call', toolCallId: 'call-2', toolName: 'add', input: '{"a":"x"}' },
          ],
          finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
          usage,
          warnings: [],
        },
        { content: [{ type: 'text', text: 'two' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] },
      ],
    });
    // Tools without execute: the SDK stops after the tool calls and leaves them to the application.
    const definitions = { add: ai7.tool({ inputSchema: ai7.jsonSchema<{ a: unknown }>({ type: 'object', properties: { a: {} } }), outputSchema: ai7.jsonSchema<string>({ type: 'string' }) }) };
    const messages: ai7.ModelMessage[] = [{ role: 'user', content: 'add' }];
    const first = await ai7.generateText({ model, tools: definitions, messages });
    const assistant = first.response.messages[0]!;
    expect(assistant.role).toBe('assistant');
    const calls = fromAISDKMessage(assistant);
    expect(calls.map((c) => c.id)).toEqual(['call-1', 'call-2']);
    const { batch } = await collect(runTools(calls, { tools: [add] }));
    messages.push(...first.response.messages, ...toAISDKMessages(batch.messages));
    const second = await ai7.generateText({ model, tools: definitions, messages });
    expect(second.text).toBe('two');
    const prompt = model.doGenerateCalls[1]!.prompt;
    const toolMessage = prompt.find((m) => m.role === 'tool');
    expect(toolMessage?.content).toEqual([
      expect.objectContaining({ type: 'tool-result', toolCallId: 'call-1', toolName: 'add', output: { type: 'text', value: '2' } }),
      expect.objectContaining({ type: 'tool-result', toolCallId: 'call-2', toolName: 'add', output: expect.objectContaining({ type: 'error-text' }) }),
    ]);
  });
});
