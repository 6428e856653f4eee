/**
 * Helpers shared by the format adapters: how result content becomes what a provider
 * carries (checked at run time: a tool result message is whatever the application and its
 * hooks produced), how a model's tool name and call id are read, and lenient reads of
 * provider fields.
 *
 * @module
 */
import { omittedBlockText, readContentBlock } from '../core/values/content.ts';
import { contentBlockText } from '../core/values/content.ts';
import { describeValue } from '../core/values/guards.ts';
import type { ContentBlock, ImageContent } from '../core/tool/content.ts';
import { isObjectRecord } from '../core/values/guards.ts';

/**
 * The tool name of a call as the model sent it: a string as it is; anything else (an
 * array, a number, `null`, a missing field) becomes `''`, never its `String()` — a model
 * that sends `["echo"]` must not reach the tool `echo`. `''` matches no tool (a tool's name
 * is a non-empty string), so `runTools` answers the call "The tool call has no tool name.
 * Available tools: …" and runs nothing (contract O1, P5). See docs/adr/0007-provider-formats.md.
 */
export function toolName(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/**
 * A call id as the model sent it: a string as it is, a finite number as its decimal text
 * (the id is only echoed back in the result), anything else — missing, `null`, an object —
 * `''`. toolrun pairs results with calls by position, never by id (contract O1), so an
 * empty id still gets its result; the provider may reject the follow-up request, as it
 * would have rejected the id.
 */
export function toolCallId(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return '';
}

/**
 * A tool result message's `content`, checked at run time, as valid {@link ContentBlock}s.
 * A `ToolResultMessage` holds an array of content blocks; what a hook or tool really put
 * there is not checked by the type, so:
 * - an array: each block is read by `readContentBlock` (the rule every path shares: a text
 *   block needs a string `text`, an image or audio block non-empty `data` and `mimeType`, an
 *   unknown `type` is not a block…) and kept as a copy; each invalid one becomes a text
 *   block `[invalid content block omitted: …]` describing it, so the model sees that
 *   something was there;
 * - a string: one text block with it (the same rule as a tool's string return value);
 * - anything else: one text block `[invalid tool result content omitted: …]`.
 *
 * Never throws. `toAnthropic`, `toOpenAIChat` and `toOpenAIResponses` read content only
 * through this (via {@link checkedResults}); the other converters (`toGemini`,
 * `toAISDKMessages`) check blocks their own way, and call {@link contentToText} for text.
 */
function resultContent(content: unknown): ContentBlock[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) {
    return [{ type: 'text', text: `[invalid tool result content omitted: expected an array of content blocks, received ${describeValue(content, 80)}]` }];
  }
  return (content as unknown[]).map(checkedBlock);
}

function checkedBlock(value: unknown): ContentBlock {
  const block = readContentBlock(value);
  return typeof block === 'string' ? { type: 'text', text: omittedBlockText(block, value) } : block;
}

/**
 * The text an OpenAI tool result carries for `content`: text blocks as they are, each image
 * block as {@link imagePlaceholder}, audio and resource blocks as `contentBlockText` writes
 * them, blocks joined with `"\n"`. `content` is checked first
 * ({@link resultContent}), so this never throws.
 *
 * Why a placeholder: a Chat Completions `role: "tool"` message and a Responses
 * `function_call_output` with a string `output` carry text only, so an image cannot be
 * passed through; the placeholder tells the model that an image existed, and how big it was,
 * instead of dropping it silently.
 */
export function contentToText(content: unknown): string {
  return resultContent(content)
    .map((block) => (block.type === 'text' ? block.text : block.type === 'image' ? imagePlaceholder(block) : contentBlockText(block)))
    .join('\n');
}

/**
 * `[image omitted: image/png, 12345 bytes; this tool result format carries text only]`.
 * The size is the decoded size computed from the base64 length.
 */
function imagePlaceholder(image: ImageContent): string {
  const padding = image.data.endsWith('==') ? 2 : image.data.endsWith('=') ? 1 : 0;
  const bytes = Math.max(0, Math.floor((image.data.length * 3) / 4) - padding);
  return `[image omitted: ${image.mimeType}, ${bytes} bytes; this tool result format carries text only]`;
}

/** The fields of one tool result message the converters send, read at run time (see {@link resultContent}). */
export interface CheckedResult {
  toolCallId: string;
  content: ContentBlock[];
  isError: boolean;
}

/**
 * Reads `results[i]` for a converter: `toolCallId` through {@link toolCallId}, `content`
 * through {@link resultContent}, `isError` true only when it is `true`.
 *
 * @throws TypeError when `results` is not an array, or an entry is not an object — the
 *   caller passed something other than tool result messages (named, with its position).
 */
export function checkedResults(where: string, results: unknown): CheckedResult[] {
  if (!Array.isArray(results)) throw new TypeError(`${where}: expected an array of tool result messages, received ${describeValue(results)}`);
  return (results as unknown[]).map((result, i) => {
    if (!isObjectRecord(result)) throw new TypeError(`${where}: results[${i}] must be a tool result message object, received ${describeValue(result)}`);
    return { toolCallId: toolCallId(result.toolCallId), content: resultContent(result.content), isError: result.isError === true };
  });
}

/** A provider field as a string: strings as they are, `undefined`/`null` as `''`, anything else through `String`. */
export function asString(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '';
  return String(value);
}
