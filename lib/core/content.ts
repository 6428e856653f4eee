/**
 * Reading one content block from a value nobody checked yet (a tool's return value, a
 * result handed to a format, an MCP server's answer): the five block types of
 * {@link ContentBlock}, copied field by field so that nothing else of the value is kept.
 *
 * @module
 */
import type { ContentBlock, EmbeddedResourceContent, ResourceLinkContent } from './tool.ts';

/** The block, copied, or why it is not one (a phrase: "an image block without a MIME type"). */
export type ReadBlock = { ok: true; block: ContentBlock } | { ok: false; problem: string };

/**
 * @internal Reads `value` as a content block: `text` (string `text`), `image` and `audio`
 * (non-empty string `data` and `mimeType`), `resource_link` (string `uri` and `name`;
 * `title`, `description`, `mimeType` kept when strings, `size` when a non-negative number),
 * `resource` (a `resource` object with a string `uri` and a string `text` or `blob`;
 * `mimeType` kept when a string).
 */
export function readContentBlock(value: unknown): ReadBlock {
  if (typeof value !== 'object' || value === null) return { ok: false, problem: 'not a content block' };
  const b = value as Record<string, unknown>;
  switch (b.type) {
    case 'text':
      return typeof b.text === 'string' ? { ok: true, block: { type: 'text', text: b.text } } : { ok: false, problem: 'a text block whose text is not a string' };
    case 'image':
    case 'audio': {
      if (typeof b.data !== 'string' || b.data === '') return { ok: false, problem: `an ${b.type} block without base64 data` };
      if (typeof b.mimeType !== 'string' || b.mimeType === '') return { ok: false, problem: `an ${b.type} block without a MIME type` };
      return { ok: true, block: { type: b.type, data: b.data, mimeType: b.mimeType } };
    }
    case 'resource_link': {
      if (typeof b.uri !== 'string' || typeof b.name !== 'string') return { ok: false, problem: 'a resource_link block without a string uri and name' };
      const link: ResourceLinkContent = { type: 'resource_link', uri: b.uri, name: b.name };
      if (typeof b.title === 'string') link.title = b.title;
      if (typeof b.description === 'string') link.description = b.description;
      if (typeof b.mimeType === 'string') link.mimeType = b.mimeType;
      if (typeof b.size === 'number' && Number.isFinite(b.size) && b.size >= 0) link.size = b.size;
      return { ok: true, block: link };
    }
    case 'resource': {
      const r = b.resource;
      if (typeof r !== 'object' || r === null) return { ok: false, problem: 'a resource block without a resource object' };
      const { uri, mimeType, text, blob } = r as Record<string, unknown>;
      if (typeof uri !== 'string') return { ok: false, problem: 'a resource block whose resource has no string uri' };
      let resource: EmbeddedResourceContent['resource'];
      if (typeof text === 'string') resource = { uri, text };
      else if (typeof blob === 'string') resource = { uri, blob };
      else return { ok: false, problem: 'a resource block whose resource has neither a string text nor a string blob' };
      if (typeof mimeType === 'string') resource.mimeType = mimeType;
      return { ok: true, block: { type: 'resource', resource } };
    }
    default:
      return { ok: false, problem: 'a block of unknown type' };
  }
}
