/**
 * The format converters on what the type system does not stop: result
 * content that a hook or tool really produced at run time (`to*` never throw on a result
 * message's fields, and never send a malformed block), and tool names and call ids from the
 * model that are not strings (`from*`, batch and streamed: a non-string name is never
 * coerced into a tool's name — the call is answered, never run; O1).
 */
import { describe, expect, it } from 'vitest';
import {
  defineTool,
  fromAnthropic,
  fromAnthropicMessage,
  fromAISDKMessage,
  fromAnthropicStream,
  fromGemini,
  fromOpenAIChat,
  fromOpenAIChatMessage,
  fromOpenAIChatStream,
  fromOpenAIResponses,
  fromOpenAIResponsesStream,
  runTools,
  toAnthropic,
  toOpenAIChat,
  toOpenAIResponses,
  type ToolCall,
  type ToolResultMessage,
} from '../../lib/index.ts';
import { collect, text } from '../helpers.ts';
import { anthropic, chat, responses } from './stream-events.ts';

/**
 * A result message holding `content` as a caller may build it by hand (a stored history, an
 * adapter): the converters must not trust its shape. Through `runTools` such content never
 * gets this far: the core turns it into an error result that names the problem (the last
 * spec of this file).
 */
async function resultsWith(options: { hookContent?: unknown; toolReturns?: unknown }): Promise<ToolResultMessage[]> {
  const content = options.hookContent ?? (options.toolReturns as { content?: unknown } | undefined)?.content;
  return [{ role: 'tool', toolCallId: 'call_1', toolName: 'echo', content: content as never, isError: false }];
}

/** The three converters' texts for `results`, one string per result and converter (a throw fails the spec). */
function sent(results: ToolResultMessage[]) {
  const anthropicMessage = toAnthropic(results);
  return {
    anthropic: anthropicMessage.content.map((b) => (b.content ?? []).map((c) => (c.type === 'text' ? c.text : `[image ${c.source.media_type}]`)).join('\n')),
    anthropicBlocks: anthropicMessage.content.flatMap((b) => b.content ?? []),
    chat: toOpenAIChat(results).map((m) => m.content),
    responses: toOpenAIResponses(results).map((m) => m.output),
  };
}

describe("afterToolCall returning { content: 'str' }: every converter takes a string content as its text", () => {
  it('every converter sends the string as the result text', async () => {
    const out = sent(await resultsWith({ hookContent: 'the hook text' }));
    expect(out.anthropic).toEqual(['the hook text']);
    expect(out.chat).toEqual(['the hook text']);
    expect(out.responses).toEqual(['the hook text']);
  });

  it('content that is neither an array nor a string (a number, null, an object) is described, not thrown on', () => {
    for (const content of [5, null, { type: 'text', text: 'x' }]) {
      const results = [{ role: 'tool', toolCallId: 'call_1', toolName: 'echo', content, isError: false }] as unknown as ToolResultMessage[];
      const out = sent(results);
      for (const t of [out.anthropic[0], out.chat[0], out.responses[0]]) expect(t).toMatch(/^\[invalid tool result content omitted: expected an array of content blocks, received /);
    }
  });
});

describe('an image block with no data: every converter describes it instead of throwing', () => {
  it('a tool returning { content: [{ type: "image" }] }: each converter sends a text block describing it, no image without data', async () => {
    const out = sent(await resultsWith({ toolReturns: { content: [{ type: 'text', text: 'before' }, { type: 'image' }, { type: 'image', data: 'AAAA' }] } }));
    for (const t of [out.anthropic[0], out.chat[0], out.responses[0]]) {
      expect(t).toContain('before\n[invalid content block omitted: an image block without base64 data');
      expect(t).toContain('[invalid content block omitted: an image block without a MIME type');
    }
    expect(out.anthropicBlocks.every((b) => b.type === 'text')).toBe(true);
  });

  it('a valid image still goes through (Anthropic as an image block, OpenAI as the placeholder)', async () => {
    const out = sent(await resultsWith({ toolReturns: { content: [{ type: 'image', data: 'AAAA', mimeType: 'image/png' }] } }));
    expect(out.anthropicBlocks).toEqual([{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } }]);
    expect(out.chat[0]).toBe('[image omitted: image/png, 3 bytes; this tool result format carries text only]');
  });
});

describe('{ type: "text", text: 5 } is checked, never passed on', () => {
  it('a text block whose text is not a string, a null block and an unknown type become described text blocks; the API never sees text: 5', async () => {
    const out = sent(await resultsWith({ hookContent: [{ type: 'text', text: 5 }, null, { type: 'audio', data: 'x' }, { type: 'text', text: 'fine' }] }));
    const expected = [
      // The texts of the one content-block check (readContentBlock, docs/adr/0005-results.md).
      '[invalid content block omitted: a text block whose text is a number (5), not a string: object {"type":"text","text":5}]',
      '[invalid content block omitted: null, not a content block]',
      '[invalid content block omitted: an audio block without a MIME type: object {"type":"audio","data":"x"}]',
      'fine',
    ].join('\n');
    expect(out.anthropic).toEqual([expected]);
    expect(out.chat).toEqual([expected]);
    expect(out.responses).toEqual([expected]);
    expect(out.anthropicBlocks.every((b) => b.type === 'text' && typeof b.text === 'string')).toBe(true);
  });

  it('a non-string toolCallId is sent as its number text or "", a non-boolean isError is not an error; results that are not an array throw a TypeError', () => {
    const results = [
      { role: 'tool', toolCallId: 7, toolName: 'echo', content: [], isError: 'yes' },
      { role: 'tool', toolName: 'echo', content: [{ type: 'text', text: 'x' }], isError: true },
    ] as unknown as ToolResultMessage[];
    expect(toAnthropic(results).content).toEqual([
      { type: 'tool_result', tool_use_id: '7' },
      { type: 'tool_result', tool_use_id: '', content: [{ type: 'text', text: 'x' }], is_error: true },
    ]);
    expect(toOpenAIChat(results).map((m) => m.tool_call_id)).toEqual(['7', '']);
    expect(toOpenAIResponses(results).map((m) => m.call_id)).toEqual(['7', '']);
    expect(() => toAnthropic('x' as never)).toThrow(/toAnthropic: expected an array of tool result messages, received string "x"/);
    expect(() => toOpenAIChat([null] as never)).toThrow(/toOpenAIChat: results\[0\] must be a tool result message object, received null/);
  });
});

// ---------------------------------------------------------------------------------------
// Tool names and ids from the model

async function runEcho(calls: Iterable<ToolCall> | AsyncIterable<ToolCall>) {
  const ran: string[] = [];
  const echo = defineTool({ name: 'echo', input: { type: 'object' }, execute: (_a, { toolCallId }) => void ran.push(toolCallId) });
  const results: ToolResultMessage[] = [];
  try {
    for await (const e of runTools(calls as AsyncIterable<ToolCall>, { tools: [echo] })) if (e.type === 'tool_result') results.push(e.message);
  } catch {
    // a broken stream is rethrown after every result; the results are what is checked
  }
  return { ran, results };
}

function expectAnsweredNotRun(run: { ran: string[]; results: ToolResultMessage[] }, ids: string[]) {
  expect(run.ran).toEqual([]);
  expect(run.results.map((r) => r.toolCallId)).toEqual(ids);
  for (const r of run.results) {
    expect(r.isError).toBe(true);
    expect(text(r)).toContain('The tool call has no tool name. Available tools: echo');
  }
}

describe("a non-string tool name from the model (['echo']) is never coerced, so nothing runs (O1)", () => {
  const names: unknown[] = [['echo'], { toString: () => 'echo' }, 5, null];

  it('fromAnthropic, fromOpenAIChat, fromOpenAIResponses: the name becomes "", so the call is answered "no tool name", never run', async () => {
    const anthropicCalls = fromAnthropic({ content: names.map((name, i) => ({ type: 'tool_use', id: `toolu_${i}`, name, input: {} })) });
    const chatCalls = fromOpenAIChat({ tool_calls: names.map((name, i) => ({ id: `call_${i}`, type: 'function', function: { name, arguments: '{}' } })) });
    const responsesCalls = fromOpenAIResponses(names.map((name, i) => ({ type: 'function_call', id: `fc_${i}`, call_id: `call_${i}`, name, arguments: '{}' })));
    expectAnsweredNotRun(await runEcho(anthropicCalls), names.map((_, i) => `toolu_${i}`));
    expectAnsweredNotRun(await runEcho(chatCalls), names.map((_, i) => `call_${i}`));
    expectAnsweredNotRun(await runEcho(responsesCalls), names.map((_, i) => `call_${i}`));
  });

  it('the agent-loop readers (fromAnthropicMessage, fromOpenAIChatMessage) do not coerce either', () => {
    const a = fromAnthropicMessage({ content: [{ type: 'tool_use', id: 'toolu_1', name: ['echo'], input: {} }] });
    const c = fromOpenAIChatMessage({ role: 'assistant', content: null, tool_calls: [{ id: 'call_1', function: { name: ['echo'], arguments: '{}' } }] });
    expect(a.content).toEqual([{ type: 'toolCall', id: 'toolu_1', name: '', arguments: {} }]);
    expect(c.content).toEqual([{ type: 'toolCall', id: 'call_1', name: '', arguments: '{}' }]);
  });

  // Fails if fromGemini or fromAISDKMessage read the name with asString (String(['echo']) is 'echo': the call ran echo).
  it('fromGemini and fromAISDKMessage: the name becomes "", so the call is answered "no tool name", never run', async () => {
    const geminiCalls = fromGemini({ role: 'model', parts: names.map((name, i) => ({ functionCall: { id: `g_${i}`, name, args: {} } })) });
    const aiSdkCalls = fromAISDKMessage({ role: 'assistant', content: names.map((toolName, i) => ({ type: 'tool-call', toolCallId: `c_${i}`, toolName, input: {} })) });
    expectAnsweredNotRun(await runEcho(geminiCalls), names.map((_, i) => `g_${i}`));
    expectAnsweredNotRun(await runEcho(aiSdkCalls), names.map((_, i) => `c_${i}`));
  });

  it('the stream adapters: a streamed call with a non-string name is answered "no tool name", never run', async () => {
    const a = await runEcho(
      fromAnthropicStream([anthropic.start(0, 'toolu_1', ['echo'] as never), anthropic.delta(0, '{}'), anthropic.stop(0), ...anthropic.end()]),
    );
    expectAnsweredNotRun(a, ['toolu_1']);
    const c = await runEcho(fromOpenAIChatStream([chat.first(0, 'call_1', '{}', ['echo']), ...chat.end()]));
    expectAnsweredNotRun(c, ['call_1']);
    const r = await runEcho(fromOpenAIResponsesStream([responses.added(0, 'call_1', ['echo']), responses.done(0, 'call_1', '{}', ['echo']), ...responses.end()]));
    expectAnsweredNotRun(r, ['call_1']);
  });
});

describe('non-string and missing call ids from the model: a number is its text, anything else "" — every call still gets its result (O1)', () => {
  it('batch and streamed readers agree', async () => {
    const ids: unknown[] = [42, { id: 'x' }, null, undefined];
    const expected = ['42', '', '', ''];
    expect(fromAnthropic({ content: ids.map((id) => ({ type: 'tool_use', id, name: 'echo', input: {} })) }).map((c) => c.id)).toEqual(expected);
    expect(fromOpenAIChat({ tool_calls: ids.map((id) => ({ id, function: { name: 'echo', arguments: '{}' } })) }).map((c) => c.id)).toEqual(expected);
    expect(fromOpenAIResponses(ids.map((call_id) => ({ type: 'function_call', call_id, name: 'echo', arguments: '{}' }))).map((c) => c.id)).toEqual(expected);
    const streamed = await runEcho(
      fromAnthropicStream([...ids.flatMap((id, i) => [anthropic.start(i, id as never), anthropic.delta(i, '{}'), anthropic.stop(i)]), ...anthropic.end()]),
    );
    expect(streamed.results.map((r) => r.toolCallId)).toEqual(expected);
    expect(streamed.ran).toEqual(expected);
  });
});

describe('through runTools, malformed content never reaches a converter (the core reads foreign values in one place, P4)', () => {
  async function ran(options: { hookContent?: unknown; toolReturns?: unknown }): Promise<ToolResultMessage> {
    const echo = defineTool({ name: 'echo', input: { type: 'object' }, execute: () => options.toolReturns ?? 'ok' });
    const run = runTools([{ id: 'call_1', name: 'echo', arguments: {} }], {
      tools: [echo],
      ...(options.hookContent === undefined ? {} : { afterToolCall: () => ({ content: options.hookContent as never }) }),
    });
    return (await collect(run)).batch.messages[0]!;
  }

  it('a string content from afterToolCall, an image without data and a text block with a number are error results that say what is wrong', async () => {
    const fromHook = await ran({ hookContent: 'the hook text' });
    expect(fromHook.isError).toBe(true);
    expect(text(fromHook)).toMatch(/afterToolCall failed: content must be an array of content blocks/);
    const image = await ran({ toolReturns: { content: [{ type: 'text', text: 'before' }, { type: 'image' }] } });
    expect(image.isError).toBe(true);
    expect(text(image)).toMatch(/content\[1\] is an image block without base64 data/);
    const five = await ran({ hookContent: [{ type: 'text', text: 5 }] });
    expect(text(five)).toMatch(/content\[0\] is a text block whose text is a number \(5\), not a string/);
    for (const message of [fromHook, image, five]) expect(() => [toAnthropic([message]), toOpenAIChat([message]), toOpenAIResponses([message])]).not.toThrow();
  });
});
