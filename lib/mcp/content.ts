/**
 * toolrun content blocks as MCP content (specification 2025-06-18, "Server features → Tools
 * → Tool result"): every toolrun block type is one of MCP's, so each block is copied field
 * by field (a block never carries more than its type's fields over the wire).
 *
 * @module
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ContentBlock } from '../core/tool.ts';

type McpContentBlock = CallToolResult['content'][number];

/** @internal The MCP content blocks of a toolrun result's content, in the same order. */
export function toMcpContent(content: readonly ContentBlock[]): McpContentBlock[] {
  return content.map((block): McpContentBlock => {
    switch (block.type) {
      case 'text':
        return { type: 'text', text: block.text };
      case 'image':
      case 'audio':
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
        const resource = 'text' in r ? { uri: r.uri, text: r.text } : { uri: r.uri, blob: r.blob };
        return { type: 'resource', resource: r.mimeType === undefined ? resource : { ...resource, mimeType: r.mimeType } };
      }
    }
  });
}

/** `value` as JSON text for a person or a model to read; `String(value)` where JSON cannot hold it (a cycle, a BigInt, `undefined`). */
export function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
