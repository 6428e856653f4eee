/**
 * `serveMcp`: toolrun tools served as an MCP server over stdio or Streamable HTTP: the SDK's
 * (`@modelcontextprotocol/sdk` 1.x) Streamable HTTP transport (lib/mcp/server/http.ts), and a
 * stdio transport of our own with a per-message limit (lib/mcp/server/serve-stdio.ts,
 * lib/mcp/server/stdio.ts). Around them, what a server in
 * production needs: sessions capped and expiring (lib/mcp/server/sessions.ts), calls aborted when
 * their client leaves, what queues for a slow client bounded per session
 * (lib/mcp/server/pacer.ts), and a `close()` bounded by the grace period.
 *
 * Streamable HTTP (MCP specification, revision 2025-06-18, "Base protocol → Transports"):
 * one endpoint (`/mcp` by default) on a Node `http` server; each client gets a session of
 * its own (`Mcp-Session-Id`, a random UUID) with its own {@link createMcpServer} `Server`;
 * `DELETE` ends a session. Requests for an unknown session get 404, as the specification
 * says, so a client learns that the server restarted. On a loopback address, a request whose
 * `Host` names another host is refused with 403, and on any address one whose `Origin` is
 * not the endpoint's own nor in `allowedOrigins` (DNS rebinding protection, which the
 * specification requires). With `http.auth`, every request needs a bearer token its verifier
 * accepts, and a session serves only the principal that opened it (lib/mcp/server/auth.ts).
 *
 * @module
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Tool } from '../../core/tool/tool.ts';
import { serveHttp } from './http.ts';
import { createMcpServer } from './mcp-server.ts';
import { DEFAULT_MAX_QUEUED_BYTES } from './pacer.ts';
import { checkMaxCalls } from './request-guards.ts';
import { serveStdio } from './serve-stdio.ts';
import type { McpCloseSummary, ServedMcp, ServeMcpOptions } from './serve-types.ts';

export type { McpCloseSummary, McpHttpOptions, McpServeStats, ServedMcp, ServeMcpOptions } from './serve-types.ts';

/**
 * Serves `tools` as an MCP server, over Streamable HTTP when `options.http` is given, else
 * over stdio. Resolves once the server is listening.
 *
 * What each call does is {@link createMcpServer}'s: it runs through `runTools` (same error
 * texts, timeouts and grace as in process), yields become `notifications/progress`,
 * `notifications/cancelled` aborts the call, `perTool[name].output` adds `outputSchema` and
 * `structuredContent`.
 *
 * Lifetimes and bounds (docs/guide/serve-over-mcp.md): a call whose client is gone
 * (its POST's connection closed, its session deleted or expired, stdin ended) is aborted at
 * once; sessions are capped (`maxSessions`, 503 beyond) and expire when idle
 * (`sessionIdleMs`); what queues for a slow client is bounded per session
 * (`maxQueuedBytes`), and so are the calls at once (`maxCallsPerSession`); a request reusing
 * the id of one not yet answered is refused; over stdio a message over `maxMessageBytes`
 * fails alone.
 *
 * @throws TypeError at once for malformed tools or options (see {@link createMcpServer}; a
 *   `maxCallsPerSession` that is not a positive integer);
 *   the `listen` error (`EADDRINUSE`, `EACCES`…) when the port cannot be bound.
 *
 * @example
 * ```ts
 * const served = await serveMcp([add], { http: { port: 0 } });
 * console.log(`MCP server on ${served.url}`);
 * // … later
 * const { interruptedCalls } = await served.close();
 * ```
 */
export async function serveMcp(tools: readonly Tool[], options: ServeMcpOptions = {}): Promise<ServedMcp> {
  const { http, maxQueuedBytes, maxMessageBytes, maxCallsPerSession, log = logToStderr, ...serverOptions } = options;
  const maxCalls = checkMaxCalls(maxCallsPerSession ?? http?.maxCallsPerSession);
  // Built up front so that bad tools or options throw here, not at the first client.
  let first: Server | undefined = createMcpServer(tools, serverOptions);
  const grace = serverOptions.abortGraceMs ?? 100;
  if (http === undefined) return await serveStdio(first, { maxQueuedBytes: maxQueuedBytes ?? DEFAULT_MAX_QUEUED_BYTES, maxMessageBytes, maxCalls, log });
  return await serveHttp(
    () => {
      const server = first ?? createMcpServer(tools, serverOptions);
      first = undefined;
      return server;
    },
    { closeGraceMs: grace, ...http, maxCallsPerSession: maxCalls, ...(maxQueuedBytes === undefined ? {} : { maxQueuedBytes }) },
  );
}

function logToStderr(line: string): void {
  process.stderr.write(`toolrun: ${line}\n`);
}
