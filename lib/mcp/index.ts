/**
 * `toolrun/mcp`: the Node-only side of MCP. `McpStdioTransport` starts an MCP server as a
 * child process and speaks JSON-RPC over its stdio with a per-message size limit, so one
 * oversized or malformed answer fails only its own request (docs/decisions.md). The
 * portable MCP bridge, `mcpTools(client)`, stays in the main entry.
 *
 * @module
 */
export { McpStdioTransport } from '../extras/mcp-stdio.ts';
export type { McpJsonRpcMessage, McpStdioTransportOptions } from '../extras/mcp-stdio.ts';
