/**
 * OpenAI Responses API adapter (contract F3).
 *
 * - {@link fromOpenAIResponses}: `function_call` output items → {@link ToolCall}s keyed by
 *   `call_id`.
 * - {@link toOpenAIResponses}: toolrun's results → `function_call_output` input items.
 *
 * Provider rule: a function call item has two ids, the item `id` (`fc_…`) and `call_id`
 * (`call_…`); the output must reference `call_id`, or the next request fails with "No tool
 * output found for function call" (corpus file
 * `openai-responses/pydantic-ai__openai_responses_model_retry.json`).
 *
 * @module
 */
import type { ToolCall, ToolResultMessage } from '../core/tool/tool.ts';
import { describeValue } from '../core/values/guards.ts';
import { checkedResults, contentToText, toolCallId, toolName } from './shared.ts';

/**
 * What {@link fromOpenAIResponses} accepts: a response's `output` array, or the whole
 * response body `{ object: 'response', output: [...] }`. The SDK's `Response` type fits.
 */
export type OpenAIResponsesInput = readonly unknown[] | { readonly output?: readonly unknown[] | null };

/** A `function_call_output` input item: the result of the call `call_id`. */
export interface OpenAIResponsesFunctionCallOutput {
  type: 'function_call_output';
  call_id: string;
  output: string;
}

/**
 * Reads the function calls of a Responses API output.
 *
 * Returns one {@link ToolCall} per `function_call` item, in output order: `id` = the item's
 * `call_id` (never the item `id` `fc_…`; a number → its text, another non-string → `''`),
 * `name` (not a string → `''`, never its `String()`: `runTools` answers "no tool name" and
 * runs nothing), `arguments` = the raw JSON string (always a string in the corpus), and
 * `providerItem` = the `function_call` item itself (not copied). Other items (messages,
 * reasoning, built-in tool calls such as `web_search_call`) are skipped. `call_id`s are not checked for uniqueness: AWS
 * Bedrock's Responses endpoint returned `call_0` in consecutive turns (corpus file
 * `openai-responses/pydantic-ai__bedrock_mantle_reused_call_ids.json`), and toolrun pairs by
 * position (contract O1).
 *
 * A single call named `parallel` whose arguments hold `tool_uses` (the
 * `multi_tool_use.parallel` wrapper quirk) is returned as that one call, not unwrapped.
 *
 * @throws TypeError when `items` is neither an array nor an object with an `output` array.
 *
 * @example
 * ```ts
 * const response = await openai.responses.create({ model, input, tools: definitions });
 * const results: ToolResultMessage[] = [];
 * for await (const event of runTools(fromOpenAIResponses(response), { tools })) {
 *   if (event.type === 'tool_result') results.push(event.message);
 * }
 * input.push(...response.output, ...toOpenAIResponses(results));
 * ```
 */
export function fromOpenAIResponses(items: OpenAIResponsesInput): ToolCall[] {
  const output = outputItems(items);
  const calls: ToolCall[] = [];
  for (const item of output) {
    if (typeof item !== 'object' || item === null) continue;
    const i = item as Record<string, unknown>;
    if (i.type !== 'function_call') continue;
    const call: ToolCall = { id: toolCallId(i.call_id), name: toolName(i.name) };
    if (i.arguments !== undefined) call.arguments = i.arguments;
    // The model's own item, for an adapter whose peer takes it (fromOpenAIAgentsTools).
    call.providerItem = item;
    calls.push(call);
  }
  return calls;
}

/**
 * Builds the `function_call_output` items that answer a response's function calls: one per
 * result, in the order given (toolrun's results are in call order), `call_id` = the result's
 * `toolCallId`.
 *
 * `output` is one string: text blocks joined with `"\n"`; an image block becomes a short
 * placeholder such as `[image omitted: image/png, 5120 bytes; this tool result format
 * carries text only]`; an audio, `resource_link` or `resource` block the text
 * `contentBlockText` writes. The Responses API has no error flag: an error result is sent as its
 * text. `details` is never sent.
 *
 * Content is checked at run time as in `toAnthropic`: a string `content` is the text, a
 * malformed block (e.g. an image without `data`) becomes `[invalid content block omitted:
 * …]`; never throws on a result message's fields.
 *
 * @throws TypeError when `results` is not an array, or an entry is not an object.
 *
 * @example
 * ```ts
 * toOpenAIResponses([{ role: 'tool', toolCallId: 'call_1', toolName: 'get_time', content: [{ type: 'text', text: '12:00' }], isError: false }]);
 * // [{ type: 'function_call_output', call_id: 'call_1', output: '12:00' }]
 * ```
 */
export function toOpenAIResponses(results: readonly ToolResultMessage[]): OpenAIResponsesFunctionCallOutput[] {
  return checkedResults('toOpenAIResponses', results).map((result) => ({
    type: 'function_call_output',
    call_id: result.toolCallId,
    output: contentToText(result.content),
  }));
}

function outputItems(items: OpenAIResponsesInput): readonly unknown[] {
  if (Array.isArray(items)) return items;
  if (typeof items === 'object' && items !== null) {
    const output = (items as { output?: unknown }).output;
    if (Array.isArray(output)) return output;
    if (output === null) return [];
    throw new TypeError(`fromOpenAIResponses: expected the response's \`output\` to be an array, received ${describeValue(output)}`);
  }
  throw new TypeError(`fromOpenAIResponses: expected an output array or a response body, received ${describeValue(items)}`);
}
