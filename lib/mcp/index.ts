/**
 * `toolrun/mcp`: toolrun tools served as an MCP server. A separate entry, so that
 * `import 'toolrun'` never loads `@modelcontextprotocol/sdk` (an optional peer dependency,
 * needed only by this entry). The MCP client bridge, `mcpTools`, is in the main entry and
 * needs no SDK of its own.
 *
 * @module
 */
export { createMcpServer, mcpProgress } from './server.ts';
export type { McpProgressPayload, McpServerOptions, McpToolOptions } from './server.ts';
export { serveHttp, serveMcp } from './serve.ts';
export type { McpHttpOptions, ServedMcp, ServeMcpOptions } from './serve.ts';
export { connectMcpHttp } from './client.ts';
export type { ConnectMcpHttpOptions } from './client.ts';
