/**
 * `toolrun/mcp`: the Node side of MCP, kept out of the portable main entry so that
 * `import 'toolrun'` never loads `@modelcontextprotocol/sdk` or `node:child_process`. This
 * entry imports the SDK statically (its server and client modules do), so importing it at
 * all needs `@modelcontextprotocol/sdk` installed (an optional peer dependency of toolrun).
 * - `serveMcp` / `createMcpServer` / `serveHttp`: toolrun tools served as an MCP server, over
 *   stdio or Streamable HTTP; `mcpProgress`: the rule that turns a tool's progress value
 *   into an MCP progress notification.
 * - `connectMcpHttp`: an SDK client over Streamable HTTP that answers every pending call at
 *   once when the server goes away.
 * - `McpStdioTransport`: starts an MCP server as a child process and speaks JSON-RPC over its
 *   stdio with a per-message size limit, so one oversized or malformed answer fails only its
 *   own request (docs/adr/0018-mcp-client.md).
 *
 * The MCP client bridge, `mcpTools(client)`, is in the main entry and needs no SDK of its own.
 *
 * @module
 */
export { createMcpServer, mcpProgress } from './server/mcp-server.ts';
export type { McpProgressPayload, McpServerOptions, McpToolOptions } from './server/mcp-server.ts';
export { serveMcp } from './server/serve.ts';
export { serveHttp } from './server/http.ts';
export type { McpCloseSummary, McpHttpOptions, McpServeStats, ServedMcp, ServeMcpOptions } from './server/serve.ts';
export type { EventStoreLimits } from './server/event-store.ts';
export type { McpSessionLimits } from './server/sessions.ts';
export { staticTokenVerifier } from './server/auth.ts';
export type { AuthInfo, McpHttpAuth, McpTokenVerifier } from './server/auth.ts';
export { connectMcpHttp } from './client/http.ts';
export type { ConnectMcpHttpOptions } from './client/http.ts';
export { McpStdioTransport } from './client/stdio.ts';
export type { McpJsonRpcMessage, McpStdioTransportOptions } from './client/stdio.ts';
