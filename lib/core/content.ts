/**
 * The one check of a content block read from a value nobody checked yet. Every path that
 * takes content blocks from outside uses it, so a block is valid or not by the same rule
 * wherever it comes from (docs/decisions.md, "Content blocks: one check"):
 * - a tool's return value and an `afterToolCall` answer (`readToolOutput`,
 *   lib/core/stages/foreign.ts): an invalid block makes the call an error result naming it;
 * - a tool result message handed to a provider format (lib/formats/shared.ts) and an MCP
 *   server's tool result read by `mcpTools` (lib/extras/mcp.ts): an invalid block becomes a
 *   text block saying what was left out ({@link omittedBlockText});
 * - an MCP client's answer to `sampling/createMessage` (lib/mcp/client-requests.ts): an
 *   invalid block fails the tool's `sample()` call with the problem.
 *
 * Valid blocks are copied field by field, so nothing else of the value is kept. The check
 * bounds nothing: a text's length is bounded where a result is made (`maxResultChars` of
 * `runTools`) and where a message crosses a wire (the MCP transports' message limits).
 *
 * @module
 */
import { describeValue } from './tool.ts';
import { typeName } from './guards.ts';
import type { ContentBlock, EmbeddedResourceContent, ResourceLinkContent } from './tool.ts';

/**
 * @internal Reads `value` as a content block: the block, copied, or — a string — a phrase
 * saying why it is not one ("an image block without a MIME type"), to be put after "is" or
 * "omitted:". A string rather than a wrapper object: a tool's every result goes through this.
 *
 * The rule (the MCP schema's for each type, and what a provider can send on):
 * - `text`: `text` a string, of any length, `''` included;
 * - `image` and `audio`: `data` a non-empty string (an image or a sound of no bytes shows
 *   nothing, and a provider that decodes it refuses the whole request) and `mimeType` a
 *   non-empty string (MCP requires it; providers need the media type); whether `data` is
 *   well-formed base64 is checked where a block leaves for MCP (lib/mcp/content.ts);
 * - `resource_link`: `uri` and `name` strings; `title`, `description`, `mimeType` kept when
 *   strings, `size` when a finite non-negative number;
 * - `resource`: a `resource` object with a string `uri` and a string `text` or `blob`;
 *   `mimeType` kept when a string;
 * - any other `type` (or none) is not a block: there is no way to know what it carries.
 *
 * Reads each field once; a throwing getter throws (the callers that read values of unknown
 * code, like `readToolOutput`, call it inside a `try`).
 */
export function readContentBlock(value: unknown): ContentBlock | string {
  if (typeof value !== 'object' || value === null) return `${typeName(value)}, not a content block`;
  const type: unknown = (value as { type?: unknown }).type;
  // Text first: nearly every block is one.
  if (type === 'text') {
    const text: unknown = (value as { text?: unknown }).text;
    return typeof text === 'string' ? { type: 'text', text } : `a text block whose text is ${typeName(text)}, not a string`;
  }
  if (type === 'image' || type === 'audio') {
    const data: unknown = (value as { data?: unknown }).data;
    const mimeType: unknown = (value as { mimeType?: unknown }).mimeType;
    if (typeof data !== 'string' || data === '') return `an ${type} block without base64 data`;
    if (typeof mimeType !== 'string' || mimeType === '') return `an ${type} block without a MIME type`;
    return { type, data, mimeType };
  }
  if (type === 'resource_link') {
    const b = value as Record<string, unknown>;
    const { uri, name, title, description, mimeType, size } = b;
    if (typeof uri !== 'string' || typeof name !== 'string') return 'a resource_link block without a string uri and name';
    const link: ResourceLinkContent = { type: 'resource_link', uri, name };
    if (typeof title === 'string') link.title = title;
    if (typeof description === 'string') link.description = description;
    if (typeof mimeType === 'string') link.mimeType = mimeType;
    if (typeof size === 'number' && Number.isFinite(size) && size >= 0) link.size = size;
    return link;
  }
  if (type === 'resource') {
    const r: unknown = (value as { resource?: unknown }).resource;
    if (typeof r !== 'object' || r === null) return 'a resource block without a resource object';
    const { uri, mimeType, text, blob } = r as Record<string, unknown>;
    if (typeof uri !== 'string') return 'a resource block whose resource has no string uri';
    let resource: EmbeddedResourceContent['resource'];
    if (typeof text === 'string') resource = { uri, text };
    else if (typeof blob === 'string') resource = { uri, blob };
    else return 'a resource block whose resource has neither a string text nor a string blob';
    if (typeof mimeType === 'string') resource.mimeType = mimeType;
    return { type: 'resource', resource };
  }
  const named = type === undefined ? 'a block without a type' : `a block of type ${typeof type === 'string' ? JSON.stringify(type.length > 40 ? `${type.slice(0, 40)}…` : type) : typeName(type)}`;
  return `${named}; a content block is text, image, audio, resource_link or resource`;
}

/**
 * @internal The text block that stands for an invalid block where content goes on without it
 * (a provider format, `mcpTools`): `[invalid content block omitted: <problem>: <the value,
 * at most 80 characters>]`, so the model sees that something was there and what.
 */
export function omittedBlockText(problem: string, value: unknown): string {
  // A value that is not an object is named by the problem already ("null, not a content block").
  return typeof value === 'object' && value !== null ? `[invalid content block omitted: ${problem}: ${describeValue(value, 80)}]` : `[invalid content block omitted: ${problem}]`;
}
