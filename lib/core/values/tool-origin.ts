/**
 * Which tools came from an MCP server: `mcpTools` (lib/mcp/client/tools.ts) marks each tool it
 * makes, and `toolrun/otel` reads the mark, without importing the MCP client.
 *
 * @module
 */
import type { Tool } from '../tool/tool.ts';

/** The tools {@link mcpTools} made: `toolrun/otel` gives their spans `gen_ai.tool.type` `extension`. */
export const madeByMcpTools = new WeakSet<Tool>();

/** @internal True for a tool {@link mcpTools} made (not for a wrapper of one). */
export function isMcpTool(tool: Tool): boolean {
  return madeByMcpTools.has(tool);
}
