/**
 * The agent loop's provider-neutral messages ({@link AgentMessage}) to and from the OpenAI
 * Responses API's items: what a model function for `runAgent` needs around a
 * `responses.create` request (the Anthropic and Chat Completions ones are in
 * `agent-messages.ts`).
 *
 * Tool results go through the batch adapter `toOpenAIResponses`, so F3 holds: each result is
 * a `function_call_output` item keyed by the call's `call_id`, in call order, right after
 * the `function_call` items it answers.
 *
 * @module
 */
import type { AgentMessage, AssistantContent, AssistantMessage, StopReason, ToolCallContent } from './messages.ts';
import { describeValue } from '../../core/values/guards.ts';
import { argumentsText, toOpenAIHistory } from './agent-messages.ts';
import { toOpenAIResponses, type OpenAIResponsesFunctionCallOutput } from '../../formats/openai-responses.ts';
import { asString } from '../../formats/shared.ts';
import { isObjectRecord } from '../../core/values/guards.ts';

/** A part of a user message's content in a Responses request. */
export type OpenAIResponsesUserContent = { type: 'input_text'; text: string } | { type: 'input_image'; image_url: string; detail: 'auto' };

/** A `function_call` input item: a call of an earlier assistant turn. */
export interface OpenAIResponsesFunctionCallItem {
  type: 'function_call';
  call_id: string;
  name: string;
  /** JSON text, as the API wrote it. */
  arguments: string;
}

/**
 * One item of a Responses request's `input`, assignable to the `openai` SDK's
 * `ResponseInputItem`.
 */
export type OpenAIResponsesInputItem =
  | { role: 'user'; content: string | OpenAIResponsesUserContent[] }
  | { role: 'assistant'; content: string }
  | OpenAIResponsesFunctionCallItem
  | OpenAIResponsesFunctionCallOutput;

/**
 * What {@link fromOpenAIResponsesMessage} accepts: a Responses API response body (its
 * `status` and `incomplete_details` give the stop reason), or its `output` array. The SDK's
 * `Response` fits.
 */
export type OpenAIResponsesReply =
  | readonly unknown[]
  | { readonly output?: readonly unknown[] | null | undefined; readonly status?: unknown; readonly incomplete_details?: unknown };

/**
 * A Responses API reply → an {@link AssistantMessage}: `message` items' `output_text` (and
 * `refusal`) parts → text blocks; `reasoning` items' summary text → a thinking block;
 * `function_call` items → `toolCall` blocks with `id` = `call_id` (never the item's `fc_…`
 * id, F3) and the raw `arguments` text (validated when the call runs, P5). Built-in tool
 * items (`web_search_call`, …) are dropped. Stop reason: `status: 'incomplete'` with reason
 * `max_output_tokens` → `length`; any function call → `toolUse`; `failed` → `error`;
 * another status → `stop`; no status (an `output` array) and no call → none.
 *
 * @throws TypeError when no output array can be found.
 *
 * @example
 * ```ts
 * const model: AgentModel = async (history) =>
 *   fromOpenAIResponsesMessage(await openai.responses.create({ model: 'gpt-5', input: toOpenAIResponsesMessages(history), tools: definitions }));
 * ```
 */
export function fromOpenAIResponsesMessage(reply: OpenAIResponsesReply): AssistantMessage {
  const output: unknown = Array.isArray(reply) ? reply : isObjectRecord(reply) ? (reply.output ?? []) : undefined;
  if (!Array.isArray(output)) {
    throw new TypeError(`fromOpenAIResponsesMessage: expected a response with an output array, or the output array, received ${describeValue(reply)}`);
  }
  const blocks: AssistantContent[] = [];
  for (const item of output as unknown[]) {
    if (!isObjectRecord(item)) continue;
    if (item.type === 'message' && Array.isArray(item.content)) {
      for (const part of item.content as unknown[]) {
        if (!isObjectRecord(part)) continue;
        if (part.type === 'output_text') blocks.push({ type: 'text', text: asString(part.text) });
        else if (part.type === 'refusal') blocks.push({ type: 'text', text: asString(part.refusal) });
      }
    } else if (item.type === 'reasoning') {
      const summary = Array.isArray(item.summary) ? (item.summary as unknown[]).flatMap((s) => (isObjectRecord(s) && typeof s.text === 'string' ? [s.text] : [])) : [];
      if (summary.length > 0) blocks.push({ type: 'thinking', thinking: summary.join('\n') });
    } else if (item.type === 'function_call') {
      const call: ToolCallContent = { type: 'toolCall', id: asString(item.call_id), name: asString(item.name) };
      if (item.arguments !== undefined) call.arguments = item.arguments;
      blocks.push(call);
    }
  }
  const message: AssistantMessage = { role: 'assistant', content: blocks };
  const stop = responsesStop(Array.isArray(reply) ? undefined : (reply as { status?: unknown; incomplete_details?: unknown }), blocks);
  if (stop !== undefined) message.stopReason = stop;
  return message;
}

function responsesStop(reply: { status?: unknown; incomplete_details?: unknown } | undefined, blocks: AssistantContent[]): StopReason | undefined {
  const status = reply?.status;
  if (status === 'incomplete' && isObjectRecord(reply?.incomplete_details) && reply.incomplete_details.reason === 'max_output_tokens') return 'length';
  if (blocks.some((b) => b.type === 'toolCall')) return 'toolUse';
  if (status === 'failed') return 'error';
  return typeof status === 'string' ? 'stop' : undefined;
}

/**
 * A neutral history → the `input` items of a Responses request (after your instructions).
 * User messages → `{ role: 'user', content }` (images as `input_image` data URLs); an
 * assistant's text → `{ role: 'assistant', content: text }`; its calls → `function_call`
 * items (arguments as JSON text: a string as it is, an object serialized); tool results →
 * `function_call_output` items (`toOpenAIResponses`, F3). Thinking blocks are dropped: a
 * `reasoning` input item needs the item id and encrypted content the neutral message does
 * not keep (use `previous_response_id` to keep reasoning across turns).
 *
 * @example
 * ```ts
 * toOpenAIResponsesMessages([{ role: 'user', content: 'time?' }]);
 * // [{ role: 'user', content: 'time?' }]
 * ```
 */
export function toOpenAIResponsesMessages(history: readonly AgentMessage[]): OpenAIResponsesInputItem[] {
  return toOpenAIHistory<OpenAIResponsesInputItem, OpenAIResponsesUserContent>(history, {
    tool: (message) => toOpenAIResponses([message]),
    userPart: (b) => (b.type === 'text' ? { type: 'input_text', text: b.text } : { type: 'input_image', image_url: `data:${b.mimeType};base64,${b.data}`, detail: 'auto' }),
    assistant: (text, calls) => [
      ...(text === '' ? [] : [{ role: 'assistant' as const, content: text }]),
      ...calls.map((b) => ({ type: 'function_call' as const, call_id: b.id, name: b.name, arguments: argumentsText(b.arguments) })),
    ],
  });
}
