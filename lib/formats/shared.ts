/**
 * Helpers shared by the format adapters: how result content becomes the one string an
 * OpenAI tool result carries, and lenient reads of provider fields.
 *
 * @module
 */
import type { ContentBlock, ImageContent } from '../core/tool.ts';

/**
 * The text an OpenAI tool result carries for `content`: text blocks as they are, each image
 * block as {@link imagePlaceholder}, blocks joined with `"\n"`.
 *
 * Why a placeholder: a Chat Completions `role: "tool"` message and a Responses
 * `function_call_output` with a string `output` carry text only, so an image cannot be
 * passed through; the placeholder tells the model that an image existed, and how big it was,
 * instead of dropping it silently.
 */
export function contentToText(content: readonly ContentBlock[]): string {
  return content.map((block) => (block.type === 'text' ? block.text : imagePlaceholder(block))).join('\n');
}

/**
 * `[image omitted: image/png, 12345 bytes; this tool result format carries text only]`.
 * The size is the decoded size computed from the base64 length.
 */
export function imagePlaceholder(image: ImageContent): string {
  const padding = image.data.endsWith('==') ? 2 : image.data.endsWith('=') ? 1 : 0;
  const bytes = Math.max(0, Math.floor((image.data.length * 3) / 4) - padding);
  return `[image omitted: ${image.mimeType}, ${bytes} bytes; this tool result format carries text only]`;
}

/** A provider field as a string: strings as they are, `undefined`/`null` as `''`, anything else through `String`. */
export function asString(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '';
  return String(value);
}

/** True for a non-null, non-array object. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
