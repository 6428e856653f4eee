/**
 * toolrun content blocks as MCP content (specification 2025-06-18, "Server features → Tools
 * → Tool result"): every toolrun block type is one of MCP's, so each block is copied field
 * by field (a block never carries more than its type's fields over the wire); binary data
 * that is not base64 becomes a text block saying so.
 *
 * @module
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ContentBlock } from '../../core/tool/content.ts';

type McpContentBlock = CallToolResult['content'][number];

/** @internal The MCP content blocks of a toolrun result's content, in the same order. */
export function toMcpContent(content: readonly ContentBlock[]): McpContentBlock[] {
  return content.map((block): McpContentBlock => {
    switch (block.type) {
      case 'text':
        return { type: 'text', text: block.text };
      case 'image':
      case 'audio':
        if (!isBase64(block.data)) return { type: 'text', text: `[${block.type} omitted: its data is not base64 (${block.mimeType})]` };
        return { type: block.type, data: block.data, mimeType: block.mimeType };
      case 'resource_link': {
        const link: McpContentBlock = { type: 'resource_link', uri: block.uri, name: block.name };
        if (block.title !== undefined) link.title = block.title;
        if (block.description !== undefined) link.description = block.description;
        if (block.mimeType !== undefined) link.mimeType = block.mimeType;
        if (block.size !== undefined) link.size = block.size;
        return link;
      }
      case 'resource': {
        const r = block.resource;
        if ('blob' in r && !isBase64(r.blob)) return { type: 'text', text: `[embedded resource ${r.uri} omitted: its blob is not base64]` };
        const resource = 'text' in r ? { uri: r.uri, text: r.text } : { uri: r.uri, blob: r.blob };
        return { type: 'resource', resource: r.mimeType === undefined ? resource : { ...resource, mimeType: r.mimeType } };
      }
    }
  });
}

/**
 * True for base64 text as MCP's schema takes it (the SDK checks it with `atob`, which also
 * skips ASCII whitespace): the result is no longer re-validated by the SDK's `Server`
 * (lib/mcp/server/mcp-server.ts), so a block a client's SDK would refuse is caught here.
 */
function isBase64(data: string): boolean {
  if (!BASE64.test(data)) return false;
  let length = data.length;
  if (WHITESPACE.test(data)) length = data.replace(/[\t\n\f\r ]/g, '').length;
  return length % 4 !== 1;
}

const BASE64 = /^[A-Za-z0-9+/\t\n\f\r ]*={0,2}[\t\n\f\r ]*$/;
const WHITESPACE = /[\t\n\f\r ]/;

/** `value` as JSON text for a person or a model to read; `String(value)` where JSON cannot hold it (a cycle, a BigInt, `undefined`). */
export function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
