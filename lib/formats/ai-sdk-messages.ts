/**
 * Vercel AI SDK `ModelMessage`s (`ai` 6 and 7) adapter (contract F6).
 *
 * - {@link fromAISDKMessage}: the `tool-call` parts of an assistant `ModelMessage` →
 *   {@link ToolCall}s.
 * - {@link toAISDKMessages}: toolrun's results → the `role: 'tool'` message of
 *   `tool-result` parts that answers them, in call order.
 *
 * For an application that keeps its history as AI SDK messages but runs the tool calls
 * with toolrun (e.g. `generateText` with tools that have no `execute`). Typed structurally:
 * the result is assignable to the `ai` package's `ModelMessage` (checked by a type test).
 *
 * @module
 */
import type { ToolCall, ToolResultMessage } from '../core/tool.ts';
import { describeValue, providerBlock } from '../core/tool.ts';
import { asString, contentToText } from './shared.ts';
import { isObjectRecord } from '../core/guards.ts';

/** What {@link fromAISDKMessage} accepts: an assistant `ModelMessage` (`content` a string or an array of parts). */
export interface AISDKAssistantMessageInput {
  readonly role?: string | undefined;
  readonly content?: string | readonly unknown[] | undefined;
}

/** The major version of the `ai` package a converter writes parts for. */
export type AISDKVersion = 6 | 7;

/**
 * An image of a tool result, as `ai` `V` wants it in `content` output: ai 7's `file` part
 * with tagged data (`{ type: 'file', data: { type: 'data', data }, mediaType }`); ai 6's
 * `image-data` part, which ai 7 still reads but logs as deprecated
 * (`AISDK_DEP_TOOL_RESULT_IMAGE_DATA`).
 */
export type AISDKImageOutputPart<V extends AISDKVersion = 7> = V extends 6
  ? { type: 'image-data'; data: string; mediaType: string }
  : { type: 'file'; data: { type: 'data'; data: string }; mediaType: string };

/** The `output` of a `tool-result` part that {@link toAISDKMessages} writes (kinds of the SDK's `ToolResultOutput`) for `ai` `V`. */
export type AISDKToolResultOutput<V extends AISDKVersion = 7> =
  | { type: 'text'; value: string }
  | { type: 'error-text'; value: string }
  | { type: 'content'; value: Array<{ type: 'text'; text: string } | AISDKImageOutputPart<V>> };

/** A `tool-result` part. */
export interface AISDKToolResultPart<V extends AISDKVersion = 7> {
  type: 'tool-result';
  toolCallId: string;
  toolName: string;
  output: AISDKToolResultOutput<V>;
}

/** A `role: 'tool'` model message. */
export interface AISDKToolModelMessage<V extends AISDKVersion = 7> {
  role: 'tool';
  content: AISDKToolResultPart<V>[];
}

/** Options of {@link toAISDKMessages}. */
export interface ToAISDKMessagesOptions<V extends AISDKVersion = 7> {
  /**
   * The `ai` major version the messages are for: it decides how images are written
   * ({@link AISDKImageOutputPart}). ai 7 reads ai 6's `image-data` too, with a deprecation
   * warning; ai 6 does not read ai 7's `file` part.
   * @default 7
   */
  aiVersion?: V;
}

/**
 * Reads the tool calls of an AI SDK assistant message.
 *
 * Returns one {@link ToolCall} per `tool-call` part, in content order: `id` = `toolCallId`,
 * `name` = `toolName`, `arguments` = `input` as is (an object after the SDK parsed it; the
 * raw text when it could not). Parts with `providerExecuted: true` (run by the provider,
 * e.g. a hosted web search) are skipped, as are text, reasoning, file and tool-result parts.
 * A string `content` holds no calls.
 *
 * @throws TypeError when `message` is not an object or `content` is neither a string nor an array.
 *
 * @example
 * ```ts
 * const { response } = await generateText({ model, messages, tools: definitionsOnly });
 * const assistant = response.messages[0];
 * const results: ToolResultMessage[] = [];
 * for await (const event of runTools(fromAISDKMessage(assistant), { tools })) {
 *   if (event.type === 'tool_result') results.push(event.message);
 * }
 * messages.push(...response.messages, ...toAISDKMessages(results));
 * ```
 */
export function fromAISDKMessage(message: AISDKAssistantMessageInput): ToolCall[] {
  if (!isObjectRecord(message)) throw new TypeError(`fromAISDKMessage: expected an assistant ModelMessage, received ${describeValue(message)}`);
  const content: unknown = message.content;
  if (typeof content === 'string') return [];
  if (!Array.isArray(content)) throw new TypeError(`fromAISDKMessage: expected \`content\` to be a string or an array of parts, received ${describeValue(content)}`);
  const calls: ToolCall[] = [];
  for (const part of content as unknown[]) {
    if (!isObjectRecord(part) || part.type !== 'tool-call' || part.providerExecuted === true) continue;
    const call: ToolCall = { id: asString(part.toolCallId), name: asString(part.toolName) };
    if (part.input !== undefined) call.arguments = part.input;
    calls.push(call);
  }
  return calls;
}

/**
 * Builds the tool message that answers an assistant message's tool calls: one
 * `tool-result` part per result, in the order given (toolrun's results are in call order),
 * `toolCallId` and `toolName` copied from the result (F6).
 *
 * `output`: `{ type: 'error-text', value }` for an error result; `{ type: 'text', value }`
 * for text (blocks joined with `"\n"`); `{ type: 'content', value: [text, file…] }` when the
 * result has images: ai 7's `{ type: 'file', data: { type: 'data', data }, mediaType }`, or
 * with `{ aiVersion: 6 }` ai 6's `{ type: 'image-data', data, mediaType }` (which ai 7 logs as
 * deprecated, `AISDK_DEP_TOOL_RESULT_IMAGE_DATA`). `details` is never sent.
 *
 * @throws TypeError for an `aiVersion` other than 6 or 7.
 *
 * @returns `[message]`, or `[]` when there are no results (an empty tool message is not valid).
 *
 * @example
 * ```ts
 * toAISDKMessages([{ role: 'tool', toolCallId: 'c1', toolName: 'get_time', content: [{ type: 'text', text: '12:00' }], isError: false }]);
 * // [{ role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'get_time', output: { type: 'text', value: '12:00' } }] }]
 * ```
 */
export function toAISDKMessages<V extends AISDKVersion = 7>(results: readonly ToolResultMessage[], options: ToAISDKMessagesOptions<V> = {}): AISDKToolModelMessage<V>[] {
  const version = aiSdkVersion('toAISDKMessages', options.aiVersion);
  if (results.length === 0) return [];
  return [
    {
      role: 'tool',
      content: results.map((result) => ({ type: 'tool-result', toolCallId: result.toolCallId, toolName: result.toolName, output: toolResultOutput(result, version) })),
    },
  ];
}

function toolResultOutput<V extends AISDKVersion>(result: ToolResultMessage, version: V): AISDKToolResultOutput<V> {
  if (result.isError) return { type: 'error-text', value: contentToText(result.content) };
  if (result.content.every((b) => b.type === 'text')) return { type: 'text', value: contentToText(result.content) };
  return {
    type: 'content',
    value: result.content.map(providerBlock).map((b) => (b.type === 'text' ? { type: 'text' as const, text: b.text } : aiSdkImagePart(b.data, b.mimeType, version))),
  };
}

/** @internal The `aiVersion` option checked: 7 when absent; `where` names the caller in the error. */
export function aiSdkVersion<V extends AISDKVersion>(where: string, version: V | undefined): V {
  if (version === undefined) return 7 as V;
  if (version !== 6 && version !== 7) throw new TypeError(`${where}: options.aiVersion must be 6 or 7 (the ai package's major version), received ${describeValue(version)}`);
  return version;
}

/** @internal A base64 image as `ai` `version` wants it in tool-result `content` output. */
export function aiSdkImagePart<V extends AISDKVersion>(data: string, mediaType: string, version: V): AISDKImageOutputPart<V> {
  const part = version === 6 ? { type: 'image-data', data, mediaType } : { type: 'file', data: { type: 'data', data }, mediaType };
  return part as AISDKImageOutputPart<V>;
}
