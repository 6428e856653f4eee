/**
 * The agent loop's provider-neutral messages ({@link AgentMessage}) to and from the
 * providers' own: what a model function for `runAgent` needs around its request.
 *
 * | provider | reply → neutral | history → request |
 * | --- | --- | --- |
 * | Anthropic Messages | {@link fromAnthropicMessage} | {@link toAnthropicMessages} |
 * | OpenAI Chat Completions | {@link fromOpenAIChatMessage} | {@link toOpenAIChatMessages} |
 *
 * Tool results go through the batch adapters (`toAnthropic`, `toOpenAIChat`), so the
 * provider rules of F1–F2 hold: results right after their assistant message, in call order.
 *
 * @module
 */
import type { AgentMessage, AssistantContent, AssistantMessage, StopReason, ToolCallContent } from './messages.ts';
import type { ContentBlock, ImageContent, TextContent } from '../../core/tool/content.ts';
import type { ToolResultMessage } from '../../core/tool/tool.ts';
import { describeValue } from '../../core/values/guards.ts';
import { providerBlock } from '../../core/values/content.ts';
import { toAnthropic, type AnthropicTextBlock } from '../../formats/anthropic.ts';
import { toOpenAIChat, type OpenAIChatToolMessage } from '../../formats/openai-chat.ts';
import { asString, toolCallId, toolName } from '../../formats/shared.ts';
import { isObjectRecord } from '../../core/values/guards.ts';

// ---------------------------------------------------------------------------------------
// Anthropic

/** An assistant content block of an Anthropic request. */
export type AnthropicAssistantBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

/** The image types the Messages API accepts. */
export type AnthropicImageMediaType = 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp';

/**
 * An image block of a request. `media_type` is typed as the API's four types, as the SDK
 * types it; the value is the content block's `mimeType` as it is (the API rejects others).
 */
export interface AnthropicRequestImageBlock {
  type: 'image';
  source: { type: 'base64'; media_type: AnthropicImageMediaType; data: string };
}

/** A `tool_result` block of a request. */
export interface AnthropicRequestToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content?: Array<AnthropicTextBlock | AnthropicRequestImageBlock>;
  is_error?: true;
}

/**
 * One message of an Anthropic Messages request (`messages[]`), assignable to the SDK's
 * `MessageParam`.
 */
export type AnthropicMessageParam =
  | { role: 'user'; content: string | Array<AnthropicTextBlock | AnthropicRequestImageBlock | AnthropicRequestToolResultBlock> }
  | { role: 'assistant'; content: AnthropicAssistantBlock[] };

/**
 * An Anthropic assistant message or Messages response body → an {@link AssistantMessage}:
 * `text` → text, `thinking` / `redacted_thinking` → thinking (signature and data kept, so
 * they can be sent back), `tool_use` → a `toolCall` block (`input` as `arguments`; a name
 * that is not a string becomes `''` and an id as in `fromAnthropic`, so the call is answered,
 * never run). Other blocks (`server_tool_use` and its results) are dropped. `stop_reason`: `tool_use` →
 * `toolUse`, `max_tokens` / `model_context_window_exceeded` → `length`, any other string →
 * `stop`, none → no `stopReason`. A string `content` is one text block.
 *
 * @throws TypeError when `message.content` is not an array or a string.
 *
 * @example
 * ```ts
 * const model: AgentModel = async (history, { signal, tools }) =>
 *   fromAnthropicMessage(await anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 4096, messages: toAnthropicMessages(history), tools: toAnthropicTools(tools) }, { signal }));
 * ```
 */
export function fromAnthropicMessage(message: { content?: unknown; stop_reason?: unknown }): AssistantMessage {
  const content = message?.content;
  if (typeof content === 'string') return withStop({ role: 'assistant', content: content === '' ? [] : [{ type: 'text', text: content }] }, anthropicStop(message.stop_reason));
  if (!Array.isArray(content)) throw new TypeError(`fromAnthropicMessage: expected a message with a content array, received ${describeValue(message)}`);
  const blocks: AssistantContent[] = [];
  for (const block of content as unknown[]) {
    if (!isObjectRecord(block)) continue;
    switch (block.type) {
      case 'text':
        blocks.push({ type: 'text', text: asString(block.text) });
        break;
      case 'thinking': {
        const thinking: AssistantContent = { type: 'thinking', thinking: asString(block.thinking) };
        if (typeof block.signature === 'string') thinking.signature = block.signature;
        blocks.push(thinking);
        break;
      }
      case 'redacted_thinking':
        blocks.push({ type: 'thinking', thinking: '', redacted: asString(block.data) });
        break;
      case 'tool_use': {
        const call: ToolCallContent = { type: 'toolCall', id: toolCallId(block.id), name: toolName(block.name) };
        if ('input' in block) call.arguments = block.input;
        blocks.push(call);
        break;
      }
      default:
        break;
    }
  }
  return withStop({ role: 'assistant', content: blocks }, anthropicStop(message.stop_reason));
}

function anthropicStop(reason: unknown): StopReason | undefined {
  if (reason === 'tool_use') return 'toolUse';
  if (reason === 'max_tokens' || reason === 'model_context_window_exceeded') return 'length';
  return typeof reason === 'string' ? 'stop' : undefined;
}

/**
 * A neutral history → the `messages` of an Anthropic Messages request. Consecutive tool
 * results become one user message of `tool_result` blocks (`toAnthropic`, F1). Empty text
 * blocks are dropped (the API rejects them); a call's arguments are sent as an object —
 * a JSON text is parsed, and text that is not a JSON object is sent as `{}` (the call's
 * result already told the model its arguments were invalid).
 *
 * @example
 * ```ts
 * toAnthropicMessages([{ role: 'user', content: 'What time is it?' }]); // [{ role: 'user', content: 'What time is it?' }]
 * ```
 */
export function toAnthropicMessages(history: readonly AgentMessage[]): AnthropicMessageParam[] {
  const out: AnthropicMessageParam[] = [];
  let results: ToolResultMessage[] = [];
  const flush = (): void => {
    // toAnthropic types media_type as any string; the request type narrows it (same value).
    if (results.length > 0) out.push(toAnthropic(results) as { role: 'user'; content: AnthropicRequestToolResultBlock[] });
    results = [];
  };
  for (const message of history) {
    if (message.role === 'tool') {
      results.push(message);
      continue;
    }
    flush();
    if (message.role === 'user') {
      out.push({ role: 'user', content: typeof message.content === 'string' ? message.content : message.content.flatMap(anthropicUserBlock) });
      continue;
    }
    const blocks: AnthropicAssistantBlock[] = [];
    for (const block of message.content) {
      if (block.type === 'text') {
        if (block.text !== '') blocks.push({ type: 'text', text: block.text });
      } else if (block.type === 'thinking') {
        if (block.redacted !== undefined) blocks.push({ type: 'redacted_thinking', data: block.redacted });
        else blocks.push({ type: 'thinking', thinking: block.thinking, signature: block.signature ?? '' });
      } else {
        blocks.push({ type: 'tool_use', id: block.id, name: block.name, input: argumentsObject(block.arguments) });
      }
    }
    if (blocks.length > 0) out.push({ role: 'assistant', content: blocks });
  }
  flush();
  return out;
}

function anthropicUserBlock(content: ContentBlock): Array<AnthropicTextBlock | AnthropicRequestImageBlock> {
  const block = providerBlock(content);
  if (block.type === 'text') return block.text === '' ? [] : [{ type: 'text', text: block.text }];
  return [{ type: 'image', source: { type: 'base64', media_type: block.mimeType as AnthropicImageMediaType, data: block.data } }];
}

function argumentsObject(args: unknown): Record<string, unknown> {
  if (isObjectRecord(args)) return args;
  if (typeof args === 'string') {
    try {
      const parsed: unknown = JSON.parse(args);
      if (isObjectRecord(parsed)) return parsed;
    } catch {
      // sent as {} below
    }
  }
  return {};
}

// ---------------------------------------------------------------------------------------
// OpenAI Chat Completions

/** One message of an OpenAI Chat Completions request. */
export type OpenAIChatMessageParam =
  | { role: 'user'; content: string | Array<{ type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } }> }
  | { role: 'assistant'; content: string | null; tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }> }
  | OpenAIChatToolMessage;

/**
 * An OpenAI Chat assistant message, or a response body (`choices[0]`, whose
 * `finish_reason` gives the stop reason) → an {@link AssistantMessage}: `content` → one text
 * block, `tool_calls[]` → `toolCall` blocks with the raw `arguments` string (validated when
 * the call runs, P5; names and ids read as in `fromOpenAIChat`). `finish_reason`:
 * `tool_calls` → `toolUse`, `length` → `length`, any other string → `stop`; a bare message
 * (no `choices`) has no `stopReason`. An empty `content` gives no text block.
 *
 * @throws TypeError when no message can be found.
 *
 * @example
 * ```ts
 * const model: AgentModel = async (history, { signal, tools }) =>
 *   fromOpenAIChatMessage(await openai.chat.completions.create({ model: 'gpt-5', messages: toOpenAIChatMessages(history), tools: toOpenAIChatTools(tools) }, { signal }));
 * ```
 */
export function fromOpenAIChatMessage(reply: { choices?: readonly unknown[]; role?: unknown; content?: unknown; tool_calls?: unknown }): AssistantMessage {
  let message: unknown = reply;
  let finish: unknown;
  if (isObjectRecord(reply) && Array.isArray(reply.choices)) {
    const choice: unknown = reply.choices[0];
    message = isObjectRecord(choice) ? choice.message : undefined;
    finish = isObjectRecord(choice) ? choice.finish_reason : undefined;
  }
  if (!isObjectRecord(message)) throw new TypeError(`fromOpenAIChatMessage: expected an assistant message or a response with choices, received ${describeValue(reply)}`);
  const blocks: AssistantContent[] = [];
  if (typeof message.content === 'string' && message.content !== '') blocks.push({ type: 'text', text: message.content });
  if (Array.isArray(message.tool_calls)) {
    for (const entry of message.tool_calls as unknown[]) {
      if (!isObjectRecord(entry)) continue;
      const fn = isObjectRecord(entry.function) ? entry.function : {};
      const call: ToolCallContent = { type: 'toolCall', id: toolCallId(entry.id), name: toolName(fn.name) };
      if (fn.arguments !== undefined) call.arguments = fn.arguments;
      blocks.push(call);
    }
  }
  const stop: StopReason | undefined = finish === 'tool_calls' ? 'toolUse' : finish === 'length' ? 'length' : typeof finish === 'string' ? 'stop' : undefined;
  return withStop({ role: 'assistant', content: blocks }, stop);
}

/**
 * A neutral history → the `messages` of an OpenAI Chat Completions request (after your
 * system message). Tool results become `role: "tool"` messages (`toOpenAIChat`, F2);
 * thinking blocks are dropped; an assistant's text blocks are joined into one `content`
 * string (`null` when empty); arguments are sent as JSON text (a string as it is, absent
 * ones as `{}`); user images as `image_url` data URLs.
 *
 * @example
 * ```ts
 * toOpenAIChatMessages([{ role: 'user', content: 'What time is it?' }]); // [{ role: 'user', content: 'What time is it?' }]
 * ```
 */
export function toOpenAIChatMessages(history: readonly AgentMessage[]): OpenAIChatMessageParam[] {
  return toOpenAIHistory<OpenAIChatMessageParam, OpenAIChatUserPart>(history, {
    tool: (message) => toOpenAIChat([message]),
    userPart: (b) => (b.type === 'text' ? { type: 'text', text: b.text } : { type: 'image_url', image_url: { url: `data:${b.mimeType};base64,${b.data}` } }),
    assistant: (text, calls) => {
      const param: OpenAIChatMessageParam = { role: 'assistant', content: text === '' ? null : text };
      if (calls.length > 0) param.tool_calls = calls.map((b) => ({ id: b.id, type: 'function', function: { name: b.name, arguments: argumentsText(b.arguments) } }));
      return [param];
    },
  });
}

/** A text or image part of an OpenAI Chat user message. */
type OpenAIChatUserPart = Exclude<Extract<OpenAIChatMessageParam, { role: 'user' }>['content'], string>[number];

/** How one OpenAI format writes each kind of neutral message ({@link toOpenAIHistory}). */
interface OpenAIHistoryShape<Item, UserPart> {
  /** A tool result message. */
  tool(message: ToolResultMessage): Item[];
  /** A user text or image block (after {@link providerBlock}). */
  userPart(block: TextContent | ImageContent): UserPart;
  /** An assistant message: its text blocks joined (`''` when none), its tool calls. */
  assistant(text: string, calls: ToolCallContent[]): Item[];
}

/**
 * @internal The walk both OpenAI formats (Chat Completions, Responses) make over a neutral
 * history: tool results as the format's tool items, a user message as `{ role: 'user' }` with
 * its blocks in the format's parts, an assistant message as its text and tool calls; thinking
 * blocks are dropped.
 */
export function toOpenAIHistory<Item, UserPart>(history: readonly AgentMessage[], shape: OpenAIHistoryShape<Item, UserPart>): Item[] {
  const out: Item[] = [];
  for (const message of history) {
    if (message.role === 'tool') {
      out.push(...shape.tool(message));
    } else if (message.role === 'user') {
      const content = typeof message.content === 'string' ? message.content : message.content.map((b) => shape.userPart(providerBlock(b)));
      out.push({ role: 'user', content } as Item);
    } else {
      const text = message.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
      out.push(...shape.assistant(text, message.content.filter((b): b is ToolCallContent => b.type === 'toolCall')));
    }
  }
  return out;
}

/** @internal A tool call's arguments as OpenAI takes them: JSON text (a string as it is, absent ones as `{}`). */
export function argumentsText(args: unknown): string {
  return typeof args === 'string' ? args : JSON.stringify(args ?? {});
}

function withStop(message: AssistantMessage, stop: StopReason | undefined): AssistantMessage {
  if (stop !== undefined) message.stopReason = stop;
  return message;
}
