/**
 * `serveMcp`: toolrun tools served as an MCP server over stdio or Streamable HTTP, with the
 * transports of `@modelcontextprotocol/sdk` (1.x).
 *
 * Streamable HTTP (MCP specification, revision 2025-06-18, "Base protocol → Transports"):
 * one endpoint (`/mcp` by default) on a Node `http` server; each client gets a session of
 * its own (`Mcp-Session-Id`, a random UUID) with its own {@link createMcpServer} `Server`;
 * `DELETE` ends a session. Requests for an unknown session get 404, as the specification
 * says, so a client learns that the server restarted. On a loopback address, a request whose
 * `Host` or `Origin` names another host is refused with 403 (DNS rebinding protection, which
 * the specification requires of local servers).
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Tool } from '../core/tool.ts';
import { BoundedEventStore, type EventStoreLimits } from './event-store.ts';
import { createMcpServer, stopCalls, type McpServerOptions } from './server.ts';

/** Where `serveMcp` listens over Streamable HTTP. */
export interface McpHttpOptions {
  /** The TCP port; `0` picks a free one (read it from {@link ServedMcp.url}). @default 0 */
  port?: number;
  /** The address to bind. Anything but a loopback address exposes the tools to the network. @default '127.0.0.1' */
  host?: string;
  /** The endpoint's path. @default '/mcp' */
  path?: string;
  /**
   * Resumable SSE streams (MCP specification 2025-06-18, "Transports → Resumability and
   * redelivery"; SEP-1699 polling, 2025-11-25): each session keeps the messages written to
   * its SSE streams in a bounded store, every event carries an id, and a client whose stream
   * broke reconnects with `GET` and `Last-Event-ID` to get what it missed (clients of protocol
   * 2025-11-25 or later are sent a first, empty "priming" event with that id and `retry`).
   * `false` turns it off (no ids, nothing kept). Limits are per session; past them the oldest
   * events are dropped, and a resume from a dropped event is refused.
   * @default { maxEvents: 1_000, maxBytes: 4 MiB, retryMs: 1_000 }
   */
  resumability?: false | (EventStoreLimits & { /** The `retry` field of the priming event: how long a client waits before reconnecting, in ms. @default 1_000 */ retryMs?: number });
}

/** Options of {@link serveMcp}: those of {@link createMcpServer}, plus the transport. */
export interface ServeMcpOptions extends McpServerOptions {
  /**
   * Serve over Streamable HTTP with these settings; without it, serve one client over this
   * process's stdin and stdout (then nothing else may write to stdout).
   * @default stdio
   */
  http?: McpHttpOptions;
}

/** A running MCP server. */
export interface ServedMcp {
  /** The endpoint's URL, e.g. `http://127.0.0.1:41234/mcp`; `undefined` over stdio. */
  readonly url: URL | undefined;
  /** How many clients are connected now (Streamable HTTP sessions; 0 or 1 over stdio). */
  readonly sessions: number;
  /**
   * Stops serving: new requests get 503; every running call is aborted (its tool's `finally`
   * runs, contract A3) and its client gets its result, the interrupted text of `runTools`;
   * then every session and the HTTP server with its open connections are closed. Idempotent.
   */
  close(): Promise<void>;
}

/**
 * Serves `tools` as an MCP server, over Streamable HTTP when `options.http` is given, else
 * over stdio. Resolves once the server is listening.
 *
 * What each call does is {@link createMcpServer}'s: it runs through `runTools` (same error
 * texts, timeouts and grace as in process), yields become `notifications/progress`,
 * `notifications/cancelled` aborts the call, `perTool[name].output` adds `outputSchema` and
 * `structuredContent`.
 *
 * @throws TypeError at once for malformed tools or options (see {@link createMcpServer});
 *   the `listen` error (`EADDRINUSE`, `EACCES`…) when the port cannot be bound.
 *
 * @example
 * ```ts
 * const served = await serveMcp([add], { http: { port: 0 } });
 * console.log(`MCP server on ${served.url}`);
 * // … later
 * await served.close();
 * ```
 */
export async function serveMcp(tools: readonly Tool[], options: ServeMcpOptions = {}): Promise<ServedMcp> {
  const { http, ...serverOptions } = options;
  // Built up front so that bad tools or options throw here, not at the first client.
  let first: Server | undefined = createMcpServer(tools, serverOptions);
  if (http === undefined) return await serveStdio(first);
  return await serveHttp(() => {
    const server = first ?? createMcpServer(tools, serverOptions);
    first = undefined;
    return server;
  }, http);
}

async function serveStdio(server: Server): Promise<ServedMcp> {
  let connected = 1;
  server.onclose = () => void (connected = 0);
  await server.connect(new StdioServerTransport());
  return {
    url: undefined,
    get sessions() {
      return connected;
    },
    async close() {
      await stopCalls(server);
      // The SDK writes a handler's response a few promise steps after the handler resolves;
      // one turn of the event loop lets those steps run before close() drops unsent responses.
      await new Promise((resolve) => setImmediate(resolve));
      await server.close();
    },
  };
}

/**
 * Hosts MCP servers over Streamable HTTP, one `Server` from `newServer` per session (called
 * when a client's first request arrives without a session id). Exported for hosting any SDK
 * server on the same terms as `serveMcp` (sessions, 404 for an unknown session, the loopback
 * Host/Origin check); the specs host a reference server with it.
 *
 * @param newServer - makes a fresh, unconnected SDK `Server` (for an SDK `McpServer`: its
 *   `.server`). Set its `onclose` to release what it holds when its session ends.
 * @param http - port, host, path; see {@link McpHttpOptions}.
 * @throws the `listen` error (`EADDRINUSE`, `EACCES`…) when the port cannot be bound.
 *
 * @example
 * ```ts
 * const host = await serveHttp(() => createMcpServer(tools), { port: 3000 });
 * ```
 */
export async function serveHttp(newServer: () => Server, http: McpHttpOptions): Promise<ServedMcp> {
  const host = http.host ?? '127.0.0.1';
  const path = http.path ?? '/mcp';
  const loopback = isLoopback(host);
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; server: Server }>();
  /** POST responses still open, with the server that answers them: close() waits for the ones of its own servers. */
  const posts = new Map<ServerResponse, Server>();
  let closing: Promise<void> | undefined;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== path) return reply(res, 404, `no MCP endpoint at ${url.pathname}; it is ${path}`);
    if (loopback && !fromLoopback(req)) return reply(res, 403, 'Host or Origin is not a loopback address');
    if (closing !== undefined) return reply(res, 503, 'the server is shutting down');
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const session = sessions.get(sessionId);
      if (session === undefined) return reply(res, 404, 'Session not found');
      if (req.method === 'POST') {
        posts.set(res, session.server);
        res.once('close', () => posts.delete(res));
      }
      return await session.transport.handleRequest(req, res);
    }
    if (req.method !== 'POST') return reply(res, 400, 'Bad Request: no Mcp-Session-Id header');
    // A new client: its first POST must be `initialize` (the transport checks and answers 400 otherwise).
    const server = newServer();
    const resumability = http.resumability;
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void sessions.set(id, { transport, server }),
      ...(resumability === false ? {} : { eventStore: new BoundedEventStore(resumability), retryInterval: resumability?.retryMs ?? 1_000 }),
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res);
    // Not initialized (a bad first request): nothing refers to this pair any more.
    if (transport.sessionId === undefined || !sessions.has(transport.sessionId)) await server.close();
  };

  const httpServer: HttpServer = createHttpServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) reply(res, 500, `internal error: ${error instanceof Error ? error.message : String(error)}`);
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(http.port ?? 0, host, () => {
      httpServer.off('error', reject);
      resolve();
    });
  });
  const address = httpServer.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: new URL(`http://${shownHost}:${address.port}${path}`),
    get sessions() {
      return sessions.size;
    },
    close() {
      closing ??= (async () => {
        const open = [...sessions.values()];
        // First every running call of our servers ends with its interrupted result, and that
        // result reaches its client: closing first would abort the requests, and the SDK sends
        // no response for an aborted request (its client would wait for its own timeout).
        const ours = new Set<Server>();
        await Promise.all(open.map(async ({ server }) => void ((await stopCalls(server)) && ours.add(server))));
        await Promise.all([...posts].filter(([, server]) => ours.has(server)).map(([res]) => new Promise((resolve) => (res.closed ? resolve(undefined) : res.once('close', resolve)))));
        sessions.clear();
        // Server.close() closes its transport, which aborts every request still running (other servers').
        await Promise.all(open.map(({ server }) => server.close().catch(() => undefined)));
        await new Promise<void>((resolve) => {
          httpServer.close(() => resolve());
          // Streams held open by clients (GET SSE streams, keep-alive sockets) would keep close() waiting.
          httpServer.closeAllConnections();
        });
      })();
      return closing;
    },
  };
}

/** A JSON-RPC error body without an id, as the SDK's transport answers transport-level errors. */
function reply(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** True when the `Host` header, and the `Origin` header if sent, name a loopback host. */
function fromLoopback(req: IncomingMessage): boolean {
  const hostHeader = req.headers.host;
  if (hostHeader === undefined || !isLoopback(hostName(`http://${hostHeader}`))) return false;
  const origin = req.headers.origin;
  return origin === undefined || origin === 'null' ? origin === undefined : isLoopback(hostName(origin));
}

function hostName(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return '';
  }
}
