/**
 * Anthropic Messages API adapter (contract F1).
 *
 * - {@link fromAnthropic}: the `tool_use` blocks of an assistant message → {@link ToolCall}s.
 * - {@link toAnthropic}: toolrun's results → the ONE `user` message of `tool_result` blocks
 *   that must follow that assistant message.
 *
 * Provider rules this follows (Anthropic "Tool use" docs): every `tool_use` id of an
 * assistant message needs a `tool_result` block in the very next message; all of them go
 * in that one user message, before any text; `is_error: true` marks a failed call; text
 * content blocks must be non-empty (the API answers 400 "text content blocks must be
 * non-empty" otherwise).
 *
 * @module
 */
import type { ContentBlock } from '../core/tool/content.ts';
import type { ToolCall, ToolResultMessage } from '../core/tool/tool.ts';
import { describeValue } from '../core/values/guards.ts';
import { providerBlock } from '../core/values/content.ts';
import { checkedResults, toolCallId, toolName } from './shared.ts';

/**
 * What {@link fromAnthropic} accepts: an assistant message `{ role, content }` or a whole
 * Messages response body (`{ type: 'message', role: 'assistant', content, stop_reason, … }`).
 * Only `content` is read. The SDK's `Message` and `MessageParam` types fit this shape.
 */
export interface AnthropicMessageInput {
  readonly role?: string;
  /** Content blocks; a plain string (a text-only message) holds no tool calls. */
  readonly content?: string | readonly unknown[];
}

/** A text block of a `tool_result`. */
export interface AnthropicTextBlock {
  type: 'text';
  text: string;
}

/** An image block of a `tool_result`, base64-encoded. */
export interface AnthropicImageBlock {
  type: 'image';
  /** `media_type` has the API's type (so the message fits the SDK's `MessageParam`); other image types are sent as they are, and the API rejects them. */
  source: { type: 'base64'; media_type: 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp'; data: string };
}

/** One `tool_result` block, answering the `tool_use` block whose id is `tool_use_id`. */
export interface AnthropicToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  /** Omitted when the result has no non-empty block (the API rejects empty text blocks). */
  content?: Array<AnthropicTextBlock | AnthropicImageBlock>;
  /** Present, and `true`, only on errors. */
  is_error?: true;
}

/** The user message that answers an assistant message's tool calls. */
export interface AnthropicToolResultMessage {
  role: 'user';
  content: AnthropicToolResultBlock[];
}

/**
 * Reads the tool calls of an Anthropic assistant message.
 *
 * Returns one {@link ToolCall} per `tool_use` block, in content order: `id` and `name`
 * copied; a `name` that is not a string (missing, `["echo"]`, a number) becomes `''`, never
 * its `String()`, so `runTools` answers that call "The tool call has no tool name" and runs
 * nothing; an `id` that is a number becomes its text, any other non-string `''` (results
 * pair by position, O1). `arguments` = the block's `input` as is (an object in
 * non-streamed bodies and Claude Code transcripts; a joined `partial_json` string, possibly
 * `""`, when a caller assembled a stream — see `../shared/corpus/SOURCES.md`, "Format
 * observations" 1–2).
 *
 * Not tool calls for the application: `server_tool_use` blocks (run by Anthropic, e.g.
 * `code_execution`, ids `srvtoolu_…`), text, thinking and `*_tool_result` blocks. Extra
 * fields on `tool_use` (e.g. programmatic tool calling's `caller`) are ignored. The message's
 * `stop_reason` is not consulted: a recorded message with 4 `tool_use` blocks can say
 * `"end_turn"` (corpus file `anthropic/vercel-ai__anthropic-programmatic-tool-calling.1.json`).
 * Ids are not checked for uniqueness: toolrun pairs by position (contract O1).
 *
 * @throws TypeError when `message` is not an object, or `content` is neither a string nor an array.
 *
 * @example
 * ```ts
 * const response = await anthropic.messages.create({ model, messages, tools: definitions });
 * const results: ToolResultMessage[] = [];
 * for await (const event of runTools(fromAnthropic(response), { tools })) {
 *   if (event.type === 'tool_result') results.push(event.message);
 * }
 * messages.push({ role: 'assistant', content: response.content }, toAnthropic(results));
 * ```
 */
export function fromAnthropic(message: AnthropicMessageInput): ToolCall[] {
  if (typeof message !== 'object' || message === null) {
    throw new TypeError(`fromAnthropic: expected an assistant message or a Messages response, received ${describeValue(message)}`);
  }
  const content: unknown = message.content;
  if (typeof content === 'string') return [];
  if (!Array.isArray(content)) {
    throw new TypeError(
      `fromAnthropic: expected \`content\` to be an array of content blocks, received ${describeValue(content)}`,
    );
  }
  const calls: ToolCall[] = [];
  for (const block of content as unknown[]) {
    if (typeof block !== 'object' || block === null) continue;
    const b = block as Record<string, unknown>;
    if (b.type !== 'tool_use') continue;
    const call: ToolCall = { id: toolCallId(b.id), name: toolName(b.name) };
    if ('input' in b) call.arguments = b.input;
    calls.push(call);
  }
  return calls;
}

/**
 * Builds the user message that answers an assistant message's tool calls: one
 * `tool_result` block per result, in the order given (toolrun's results are in call order),
 * `tool_use_id` = the result's `toolCallId`.
 *
 * Content mapping: a text block → `{ type: 'text', text }` (empty text blocks are dropped,
 * and `content` is omitted when nothing is left, because the API rejects empty text blocks);
 * an image block → `{ type: 'image', source: { type: 'base64', media_type, data } }`; an
 * audio, `resource_link` or `resource` block (MCP's, which Anthropic does not take in a
 * tool result) → one text block, as `contentBlockText` writes it.
 *
 * Content is checked at run time, whatever the type says (a hook may return anything): a
 * string `content` becomes one text block; a malformed block (a text block whose `text` is
 * not a string, an image block without `data` or `mimeType`, an unknown type, a non-object)
 * becomes a text block `[invalid content block omitted: …]` describing it; any other
 * non-array `content` one text block saying so. A non-string `toolCallId` is sent as its
 * number text or `''`. So this never throws on a result message's fields.
 * `is_error: true` is set only on error results (F1). `details` is never sent. To say more
 * in the same turn, append text blocks after these: the API wants the `tool_result` blocks
 * first.
 *
 * @throws TypeError when `results` is not an array, or an entry is not an object.
 *
 * @example
 * ```ts
 * toAnthropic([{ role: 'tool', toolCallId: 'toolu_1', toolName: 'get_time', content: [{ type: 'text', text: '12:00' }], isError: false }]);
 * // { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: '12:00' }] }] }
 * ```
 */
export function toAnthropic(results: readonly ToolResultMessage[]): AnthropicToolResultMessage {
  return {
    role: 'user',
    content: checkedResults('toAnthropic', results).map((result) => {
      const block: AnthropicToolResultBlock = { type: 'tool_result', tool_use_id: result.toolCallId };
      const content = result.content.flatMap(toAnthropicContent);
      if (content.length > 0) block.content = content;
      if (result.isError) block.is_error = true;
      return block;
    }),
  };
}

function toAnthropicContent(content: ContentBlock): Array<AnthropicTextBlock | AnthropicImageBlock> {
  const block = providerBlock(content);
  if (block.type === 'text') return block.text === '' ? [] : [{ type: 'text', text: block.text }];
  return [{ type: 'image', source: { type: 'base64', media_type: block.mimeType as AnthropicImageBlock['source']['media_type'], data: block.data } }];
}
