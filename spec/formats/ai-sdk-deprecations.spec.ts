/**
 * No ai 7 deprecation warning from toolrun's AI SDK converters: a tool
 * result with an image, written by `toAISDKMessages` or by `toModelOutput` of a
 * `toAISDKTools` tool, goes through the real `ai` 7 `generateText` (its prompt
 * standardization and `convertToLanguageModelPrompt`, where the SDK logs
 * `AISDK_DEP_TOOL_RESULT_IMAGE_DATA` for an `image-data` part) with the SDK's warning logger
 * replaced by a collector (`globalThis.AI_SDK_LOG_WARNINGS`, the SDK's documented hook).
 *
 * Fails with the old shape: each test also writes the same result with `aiVersion: 6` (ai 6's
 * `image-data` part, which toolrun wrote for every version before) and asserts that the SDK
 * then does log the deprecation, so the collector sees what the default must not cause.
 */
import * as ai7 from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defineTool, toAISDKMessages, toAISDKTools, type AISDKVersion, type ToolResultMessage } from '../../lib/index.ts';

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};
const stop = { content: [{ type: 'text' as const, text: 'done' }], finishReason: { unified: 'stop' as const, raw: 'stop' }, usage, warnings: [] };
const PNG = 'iVBORw0KGgo=';
const IMAGE_DATA_SETTING = '"tool-result" content of type "image-data"';

type Logged = { type: string; setting?: string };
let logged: Logged[] = [];
const globals = globalThis as { AI_SDK_LOG_WARNINGS?: unknown };
let previous: unknown;
beforeEach(() => {
  logged = [];
  previous = globals.AI_SDK_LOG_WARNINGS;
  globals.AI_SDK_LOG_WARNINGS = (options: { warnings: Logged[] }) => logged.push(...options.warnings);
});
afterEach(() => {
  globals.AI_SDK_LOG_WARNINGS = previous;
});

const deprecations = () => logged.filter((w) => w.type === 'deprecated');

describe('no ai 7 deprecation warning from toolrun’s converters', () => {
  const image: ToolResultMessage = {
    role: 'tool',
    toolCallId: 'call-1',
    toolName: 'snapshot',
    content: [
      { type: 'text', text: 'a cat' },
      { type: 'image', data: PNG, mimeType: 'image/png' },
    ],
    isError: false,
  };

  /** The prompt ai 7 gives the model after a history ending in toolrun's tool message for `image`. */
  async function promptAfter(version: AISDKVersion | undefined) {
    const model = new MockLanguageModelV4({ doGenerate: [stop] });
    // No execute: the application runs the calls (with toolrun) and sends the tool message.
    const tools = { snapshot: ai7.tool({ inputSchema: ai7.jsonSchema<{ path?: string }>({ type: 'object' }), outputSchema: ai7.jsonSchema<string>({ type: 'string' }) }) };
    const messages: ai7.ModelMessage[] = [
      { role: 'user', content: 'take a snapshot' },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'call-1', toolName: 'snapshot', input: {} }] },
      ...(version === undefined ? toAISDKMessages([image]) : (toAISDKMessages([image], { aiVersion: version }) as ai7.ModelMessage[])),
    ];
    await ai7.generateText({ model, tools, messages });
    return model.doGenerateCalls[0]!.prompt;
  }

  /** No deprecation was logged, and the prompt's tool message carries the text and the image as an ai 7 `file` part. */
  function expectImageSentWithoutDeprecation(prompt: Awaited<ReturnType<typeof promptAfter>>): void {
    expect(deprecations()).toEqual([]);
    const tool = prompt.find((m) => m.role === 'tool');
    expect(tool?.content).toEqual([
      expect.objectContaining({
        type: 'tool-result',
        output: { type: 'content', value: [{ type: 'text', text: 'a cat' }, expect.objectContaining({ type: 'file', data: { type: 'data', data: PNG }, mediaType: 'image/png' })] },
      }),
    ]);
  }

  it('toAISDKMessages writes images as ai 7 file parts: generateText logs no deprecation, the model gets the image', async () => {
    const prompt = await promptAfter(undefined);
    expectImageSentWithoutDeprecation(prompt);
  });

  it('the check sees the deprecation: aiVersion 6 (image-data, the old shape) makes ai 7 log AISDK_DEP_TOOL_RESULT_IMAGE_DATA', async () => {
    await promptAfter(6);
    expect(deprecations()).toEqual([expect.objectContaining({ setting: IMAGE_DATA_SETTING })]);
  });

  /** Two steps of generateText with a toolrun tool returning an image; the warnings of the whole run. */
  async function runWithTool(version: AISDKVersion | undefined) {
    const snapshot = defineTool({
      name: 'snapshot',
      input: { type: 'object' },
      execute: () => ({ content: [{ type: 'text' as const, text: 'a cat' }, { type: 'image' as const, data: PNG, mimeType: 'image/png' }] }),
    });
    const model = new MockLanguageModelV4({
      doGenerate: [
        { content: [{ type: 'tool-call', toolCallId: 'call-1', toolName: 'snapshot', input: '{}' }], finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage, warnings: [] },
        stop,
      ],
    });
    const tools = version === undefined ? toAISDKTools([snapshot]) : toAISDKTools([snapshot], { aiVersion: version });
    await ai7.generateText({ model, tools: tools as ai7.ToolSet, prompt: 'take a snapshot', stopWhen: ai7.stepCountIs(2) });
    return model.doGenerateCalls[1]!.prompt;
  }

  it('toAISDKTools: toModelOutput writes ai 7 file parts; the second step logs no deprecation and sends the image', async () => {
    const prompt = await runWithTool(undefined);
    expectImageSentWithoutDeprecation(prompt);
  });

  it('the check sees it there too: toAISDKTools with aiVersion 6 makes ai 7 log the image-data deprecation', async () => {
    await runWithTool(6);
    expect(deprecations()).toEqual([expect.objectContaining({ setting: IMAGE_DATA_SETTING })]);
  });

  it('an aiVersion other than 6 or 7 is a TypeError', () => {
    expect(() => toAISDKMessages([image], { aiVersion: 5 as AISDKVersion })).toThrow(/^toAISDKMessages: options\.aiVersion must be 6 or 7/);
    expect(() => toAISDKTools([], { aiVersion: '7' as unknown as AISDKVersion })).toThrow(/^toAISDKTools: options\.aiVersion must be 6 or 7/);
  });
});
