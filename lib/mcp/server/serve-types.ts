/**
 * The shapes of `serveMcp`: its options, the running server it returns, its statistics and
 * what `close()` cut short. Types only, in a file of their own so that the transports
 * (http.ts, serve-stdio.ts) and `serveMcp` (serve.ts) name them without importing each other.
 *
 * @module
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { McpHttpAuth } from './auth.ts';
import type { EventStoreLimits } from './event-store.ts';
import type { McpServerOptions } from './mcp-server.ts';
import type { McpSessionLimits } from './sessions.ts';

/** Where `serveMcp` listens over Streamable HTTP, and how many sessions it keeps. */
export interface McpHttpOptions extends McpSessionLimits {
  /** The TCP port; `0` picks a free one (read it from {@link ServedMcp.url}). @default 0 */
  port?: number;
  /** The address to bind. Anything but a loopback address exposes the tools to the network. @default '127.0.0.1' */
  host?: string;
  /** The endpoint's path. @default '/mcp' */
  path?: string;
  /**
   * Authorization (MCP specification, "Basic → Authorization": the server is an OAuth 2.1
   * resource server): every request to the endpoint needs `Authorization: Bearer <token>`
   * that `auth.verifyToken` accepts. No token or a bad one: 401 with
   * `WWW-Authenticate: Bearer …, resource_metadata="<url>"`; a malformed header (not
   * `Bearer <b64token>`, over 8,192 characters): 400 `invalid_request`; a token without a
   * required scope: 403 `insufficient_scope`. The Protected Resource Metadata (RFC 9728) is
   * served at `/.well-known/oauth-protected-resource` and `/.well-known/oauth-protected-resource<path>`.
   * A session belongs to the principal that opened it. The tools see the caller as
   * `context.client.auth` (without the token). See {@link McpHttpAuth}, `staticTokenVerifier`.
   * @default none: anyone who reaches the port can call every tool (bind to loopback only)
   */
  auth?: McpHttpAuth;
  /**
   * The `Origin` values accepted besides the endpoint's own (its URL's origin, and on a
   * loopback address `http://localhost:<port>`, `http://127.0.0.1:<port>`, `http://[::1]:<port>`).
   * A request with any other `Origin` (a web page of another site, or of another port on
   * this machine) gets 403: the MCP specification requires servers to check it (DNS
   * rebinding). A request without `Origin` (not from a browser) is not refused for it.
   * Exact strings: scheme, host and port, no path (`'https://app.example.com'`).
   * @default []
   */
  allowedOrigins?: readonly string[];
  /**
   * Resumable SSE streams (MCP specification 2025-06-18, "Transports → Resumability and
   * redelivery"; SEP-1699 polling, 2025-11-25): each session keeps the messages written to
   * its SSE streams in a bounded store, every event carries an id, and a client whose stream
   * broke reconnects with `GET` and `Last-Event-ID` to get what it missed (clients of protocol
   * 2025-11-25 or later are sent a first, empty "priming" event with that id and `retry`).
   * A call whose POST stream closes is still aborted at once (the client is taken to be gone);
   * what a reconnecting client gets is what was sent, its `interrupted` result included.
   * `false` turns it off (no ids, nothing kept). Limits are per session; past them the oldest
   * events are dropped, and a resume from a dropped event is refused.
   * @default { maxEvents: 1_000, maxBytes: 4 MiB, retryMs: 1_000 }
   */
  resumability?: false | (EventStoreLimits & { /** The `retry` field of the priming event: how long a client waits before reconnecting, in ms. @default 1_000 */ retryMs?: number });
  /**
   * Per session, the most bytes queued for its client (written, not yet taken by the
   * socket) before progress is coalesced and other notifications are dropped (counted in
   * {@link McpServeStats.droppedNotifications}). Responses are never dropped.
   * @default 4 MiB (4,194,304)
   */
  maxQueuedBytes?: number;
  /**
   * How long, in ms, `close()` waits for the responses of the interrupted calls to reach
   * their clients before it cuts the connections still open.
   * @default 100 (`serveMcp`: its `abortGraceMs`)
   */
  closeGraceMs?: number;
  /** Per session, the most requests waiting for their answer; see {@link ServeMcpOptions.maxCallsPerSession}. @default 1_000 */
  maxCallsPerSession?: number;
  /** @internal The clock of the sessions' idle expiry, in ms (the specs inject one). @default Date.now */
  clock?: () => number;
}

/** Options of {@link serveMcp}: those of {@link createMcpServer}, plus the transport and its bounds. */
export interface ServeMcpOptions extends McpServerOptions {
  /**
   * Serve over Streamable HTTP with these settings; without it, serve one client over this
   * process's stdin and stdout (then nothing else may write to stdout).
   * @default stdio
   */
  http?: McpHttpOptions;
  /** Per session, the ceiling on bytes queued for a client that reads slowly; see {@link McpHttpOptions.maxQueuedBytes} (stdio too). @default 4 MiB */
  maxQueuedBytes?: number;
  /**
   * Over stdio, the largest message the client may send, in bytes (without the newline). A
   * larger request is answered with a JSON-RPC error (`-32600`) and the session goes on; a
   * larger line without a readable request id is dropped and logged. Memory stays bounded
   * whatever the line's length.
   * @default 10 MiB (10,485,760, the SDK's own limit)
   */
  maxMessageBytes?: number;
  /**
   * Per session, the most calls at once: a client cannot grow the server without bound by
   * starting calls it never waits for (each running call holds a few kB; 20,000 held 110 MB).
   * Over Streamable HTTP it counts the session's requests waiting for their answer (a POST
   * over the limit gets HTTP 429 with a JSON-RPC error body); over stdio its running
   * `tools/call` requests (one more is answered with a JSON-RPC error, `-32000`). Both name the
   * limit; the calls already running go on.
   * @default 1_000
   */
  maxCallsPerSession?: number;
  /**
   * Where the server's own notes go, one line each: a dropped oversized message, a transport
   * error. Must not throw.
   * @default a line `toolrun: serveMcp: …` on stderr
   */
  log?: (line: string) => void;
}

/** What a running server holds now, and what it dropped or refused since it started. */
export interface McpServeStats {
  /** Sessions open (Streamable HTTP); 0 or 1 over stdio. */
  sessions: number;
  /** `tools/call` requests running now. */
  runningCalls: number;
  /**
   * Over Streamable HTTP, JSON-RPC requests whose POST is open, waiting for its answer; a
   * request the client cancelled (`notifications/cancelled`) counts until its call has ended
   * and the server has ended its stream. 0 over stdio.
   */
  pendingRequests: number;
  /** Bytes written to clients and not yet taken by their sockets (or stdout), over all sessions, plus held progress. */
  queuedBytes: number;
  /** Notifications not sent to a slow client: progress replaced by a newer one, others over the ceiling. */
  droppedNotifications: number;
  /** Sessions closed for being idle longer than `sessionIdleMs`. */
  expiredSessions: number;
  /** New sessions refused (503) because `maxSessions` were open. */
  refusedSessions: number;
  /** Over stdio, messages over `maxMessageBytes` that were not read. */
  oversizedMessages: number;
  /**
   * Over stdio, responses not written because the bytes queued for a client that does not
   * read its stdout were already over twice `maxQueuedBytes` (each is logged with its request
   * id; that request gets no answer). 0 over HTTP, where a response goes to its own POST.
   */
  droppedResponses: number;
  /** Over stdio, true while the server does not read requests because what it wrote is over `maxQueuedBytes` (backpressure); false over HTTP. */
  readingPaused: boolean;
}

/** What `close()` cut short. */
export interface McpCloseSummary {
  /** Calls that were running and were aborted (each answered with its interrupted result when its client was still there). */
  interruptedCalls: number;
  /** Sessions closed (1 over stdio). */
  closedSessions: number;
  /** HTTP connections still open after the grace period, closed without waiting. */
  cutConnections: number;
}

/** A running MCP server. */
export interface ServedMcp {
  /** The endpoint's URL, e.g. `http://127.0.0.1:41234/mcp`; `undefined` over stdio. */
  readonly url: URL | undefined;
  /** How many clients are connected now (Streamable HTTP sessions; 0 or 1 over stdio). */
  readonly sessions: number;
  /** What the server holds now and what it dropped; see {@link McpServeStats}. */
  stats(): McpServeStats;
  /**
   * Stops serving: new requests get 503; every running call is aborted (its tool's `finally`
   * runs, contract A3) and its client gets its result, the interrupted text of `runTools`;
   * then every session and the HTTP server with its open connections are closed. Resolves
   * within about twice the grace period (`abortGraceMs`: the tools', then the responses'),
   * whatever is in flight, with what it cut. Idempotent (later calls get the same summary).
   */
  close(): Promise<McpCloseSummary>;
}
