/**
 * OpenAI Chat Completions adapter (contract F2), also for the OpenAI-compatible providers
 * recorded in `../shared/corpus/openai-chat/` (Writer, DeepSeek, Azure, llama-stack) and
 * Cohere v2 chat, which uses the same `tool_calls` shape.
 *
 * - {@link fromOpenAIChat}: `message.tool_calls` → {@link ToolCall}s, arguments kept as the
 *   raw JSON string.
 * - {@link toOpenAIChat}: toolrun's results → one `role: "tool"` message per call, in call
 *   order (provider rule: each `tool_call_id` of the assistant message needs a tool message
 *   after it, or the next request fails).
 *
 * @module
 */
import type { ToolCall, ToolResultMessage } from '../core/tool/tool.ts';
import { describeValue } from '../core/values/guards.ts';
import { checkedResults, contentToText, toolCallId, toolName } from './shared.ts';
import { isObjectRecord } from '../core/values/guards.ts';

/**
 * What {@link fromOpenAIChat} accepts, any of:
 * - an assistant message `{ role: 'assistant', content, tool_calls }`;
 * - a Chat Completions response body `{ choices: [{ message }] }` (the first choice is read);
 * - a Cohere v2 chat response body `{ message: { tool_calls, tool_plan } }`.
 * The SDK's `ChatCompletion` and `ChatCompletionMessage` types fit this shape.
 */
export interface OpenAIChatMessageInput {
  readonly role?: string;
  readonly tool_calls?: readonly unknown[] | null;
  readonly choices?: readonly unknown[];
  readonly message?: unknown;
}

/** A Chat Completions tool message: the result of the call `tool_call_id`. */
export interface OpenAIChatToolMessage {
  role: 'tool';
  tool_call_id: string;
  content: string;
}

/**
 * Reads the tool calls of an OpenAI Chat Completions assistant message.
 *
 * Returns one {@link ToolCall} per `tool_calls` entry, in order: `id` and
 * `function.name` copied (missing → `''`; a name that is not a string → `''`, never its
 * `String()`, so `runTools` answers "no tool name" and runs nothing; a numeric id → its text,
 * any other non-string id → `''`), `arguments` = `function.arguments` as is — a
 * JSON string in every recording of the corpus, `"{}"` for no arguments (DeepSeek, OpenAI),
 * kept raw so that toolrun's parser reports invalid JSON to the model (contract P5). Entries
 * of type `custom` (free-form tools) give `custom.name` and the raw `custom.input`.
 * Streaming-only fields (`index`) and provider extras (Writer's `graph_data`, Cohere's
 * `tool_plan`) are ignored. Ids can have any shape (`call_…`, `chatcmpl-tool-<hex>`,
 * `call_00_…`, `<tool>_<random>`) and are not checked for uniqueness (contract O1).
 *
 * A message without `tool_calls` (or with `tool_calls: null`) gives `[]`.
 *
 * @throws TypeError when `message` is not an object, a body's `choices` holds no message, or
 *   `tool_calls` is neither an array nor `null`.
 *
 * @example
 * ```ts
 * const completion = await openai.chat.completions.create({ model, messages, tools: definitions });
 * const results: ToolResultMessage[] = [];
 * for await (const event of runTools(fromOpenAIChat(completion), { tools })) {
 *   if (event.type === 'tool_result') results.push(event.message);
 * }
 * messages.push(completion.choices[0].message, ...toOpenAIChat(results));
 * ```
 */
export function fromOpenAIChat(message: OpenAIChatMessageInput): ToolCall[] {
  const assistant = assistantMessage(message);
  const toolCalls = assistant.tool_calls;
  if (toolCalls === undefined || toolCalls === null) return [];
  if (!Array.isArray(toolCalls)) {
    throw new TypeError(`fromOpenAIChat: expected \`tool_calls\` to be an array, received ${describeValue(toolCalls)}`);
  }
  const calls: ToolCall[] = [];
  for (const entry of toolCalls as unknown[]) {
    if (typeof entry !== 'object' || entry === null) continue;
    const e = entry as Record<string, unknown>;
    const fn = (isObjectRecord(e.function) ? e.function : isObjectRecord(e.custom) ? e.custom : {}) as Record<string, unknown>;
    const call: ToolCall = { id: toolCallId(e.id), name: toolName(fn.name) };
    const args = 'arguments' in fn ? fn.arguments : fn.input;
    if (args !== undefined) call.arguments = args;
    calls.push(call);
  }
  return calls;
}

/**
 * Builds the tool messages that answer an assistant message's tool calls: one
 * `{ role: 'tool', tool_call_id, content }` per result, in the order given (toolrun's
 * results are in call order).
 *
 * `content` is one string: text blocks joined with `"\n"`; an image block, which a tool
 * message cannot carry, becomes a short placeholder such as
 * `[image omitted: image/png, 5120 bytes; this tool result format carries text only]`; an
 * audio, `resource_link` or `resource` block becomes the text `contentBlockText` writes.
 * Chat Completions has no error flag: an error result is sent as its text (toolrun writes
 * error texts for the model to act on, contract P5). `details` is never sent.
 *
 * Content is checked at run time as in `toAnthropic`: a string `content` is the text, a
 * malformed block becomes `[invalid content block omitted: …]`; never throws on a result
 * message's fields.
 *
 * @throws TypeError when `results` is not an array, or an entry is not an object.
 *
 * @example
 * ```ts
 * toOpenAIChat([{ role: 'tool', toolCallId: 'call_1', toolName: 'get_time', content: [{ type: 'text', text: '12:00' }], isError: false }]);
 * // [{ role: 'tool', tool_call_id: 'call_1', content: '12:00' }]
 * ```
 */
export function toOpenAIChat(results: readonly ToolResultMessage[]): OpenAIChatToolMessage[] {
  return checkedResults('toOpenAIChat', results).map((result) => ({ role: 'tool', tool_call_id: result.toolCallId, content: contentToText(result.content) }));
}

function assistantMessage(input: OpenAIChatMessageInput): { tool_calls?: unknown } {
  if (typeof input !== 'object' || input === null) {
    throw new TypeError(`fromOpenAIChat: expected an assistant message or a chat completion, received ${describeValue(input)}`);
  }
  if ('tool_calls' in input) return input;
  if (Array.isArray(input.choices)) {
    const choice: unknown = input.choices[0];
    if (isObjectRecord(choice) && isObjectRecord(choice.message)) return choice.message;
    throw new TypeError(`fromOpenAIChat: the response's first choice holds no message, received ${describeValue(choice)}`);
  }
  if (isObjectRecord(input.message)) return input.message; // Cohere v2: { message: { tool_calls } }
  return input;
}
