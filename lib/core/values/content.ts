/**
 * The one check of a content block read from a value nobody checked yet. Every path that
 * takes content blocks from outside uses it, so a block is valid or not by the same rule
 * wherever it comes from (docs/adr/0005-results.md):
 * - a tool's return value and an `afterToolCall` answer (`readToolOutput`,
 *   lib/core/values/foreign.ts): an invalid block makes the call an error result naming it;
 * - a tool result message handed to a provider format (lib/formats/shared.ts) and an MCP
 *   server's tool result read by `mcpTools` (lib/mcp/client/tools.ts): an invalid block becomes a
 *   text block saying what was left out ({@link omittedBlockText});
 * - an MCP client's answer to `sampling/createMessage` (lib/mcp/server/client-requests.ts): an
 *   invalid block fails the tool's `sample()` call with the problem.
 *
 * Valid blocks are copied field by field, so nothing else of the value is kept. The check
 * bounds nothing: a text's length is bounded where a result is made (`maxResultChars` of
 * `runTools`) and where a message crosses a wire (the MCP transports' message limits).
 *
 * The same file holds the content helpers every layer uses: `textContent`,
 * `normalizeToolOutput` (whatever a tool returns → a result), `contentBlockText` and
 * `providerBlock` (a block no provider takes → its text).
 *
 * @module
 */
import type { ContentBlock, EmbeddedResourceContent, ImageContent, ResourceLinkContent, TextContent } from '../tool/content.ts';
import type { ToolResult } from '../tool/tool.ts';
import { describeValue, typeName } from './guards.ts';

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
 *   well-formed base64 is checked where a block leaves for MCP (lib/mcp/server/content.ts);
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

/**
 * The text a provider format sends for a block no provider takes in a tool result (audio, a
 * resource link, an embedded resource); `undefined` for text and image blocks.
 *
 * @example
 * ```ts
 * contentBlockText({ type: 'resource_link', uri: 'file:///a.txt', name: 'a.txt' }); // '[resource link: file:///a.txt "a.txt"]'
 * ```
 */
export function contentBlockText(block: ContentBlock): string | undefined {
  switch (block.type) {
    case 'text':
    case 'image':
      return undefined;
    case 'audio':
      return `[audio: ${block.mimeType}, ${base64Bytes(block.data)} bytes; not sent to the model]`;
    case 'resource_link': {
      const parts = [`resource link: ${block.uri}`, `"${block.name}"`];
      if (block.mimeType !== undefined) parts.push(`(${block.mimeType})`);
      const head = parts.join(' ');
      return block.description === undefined ? `[${head}]` : `[${head}: ${block.description}]`;
    }
    case 'resource': {
      const r = block.resource;
      const mime = r.mimeType ?? 'unknown type';
      if ('text' in r) return `[resource ${r.uri} (${mime})]\n${r.text}`;
      return `[resource ${r.uri}: ${mime}, ${base64Bytes(r.blob)} bytes of binary data; not sent to the model]`;
    }
  }
}

/** @internal The block as a provider takes it: a text or image block as it is, any other as the text of {@link contentBlockText}. */
export function providerBlock(block: ContentBlock): TextContent | ImageContent {
  const text = contentBlockText(block);
  return text === undefined ? (block as TextContent | ImageContent) : { type: 'text', text };
}

/** Decoded size of base64 text, in bytes. */
function base64Bytes(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

/**
 * The content of a result with one text block.
 *
 * @example
 * ```ts
 * return { content: textContent('3 files changed'), details: { files } };
 * ```
 */
export function textContent(text: string): ContentBlock[] {
  return [{ type: 'text', text }];
}

/**
 * Turns what a tool returned into a {@link ToolResult}:
 * - a string becomes one text block;
 * - an object with a `content` array is taken as is (`details` and `terminate` kept);
 * - `undefined` becomes an empty text block;
 * - anything else becomes its JSON text (`String(value)` when it cannot be serialized,
 *   e.g. a BigInt or a cycle), and the value itself its `details`.
 *
 * The run applies the same rule to every tool's return value, block by block checked (a
 * malformed `content` becomes the call's error result). Throws only if reading `output`
 * throws (a revoked Proxy, a throwing `content` getter).
 *
 * @example
 * ```ts
 * normalizeToolOutput('done');        // { content: [{ type: 'text', text: 'done' }] }
 * normalizeToolOutput({ celsius: 21 }); // { content: [{ type: 'text', text: '{"celsius":21}' }], details: { celsius: 21 } }
 * ```
 */
export function normalizeToolOutput(output: unknown): ToolResult {
  if (typeof output === 'string') return { content: textContent(output) };
  if (output === undefined) return { content: textContent('') };
  if (typeof output === 'object' && output !== null && Array.isArray((output as ToolResult).content)) {
    return output as ToolResult;
  }
  let text: string;
  try {
    text = JSON.stringify(output) ?? String(output);
  } catch {
    text = String(output);
  }
  return { content: textContent(text), details: output };
}
