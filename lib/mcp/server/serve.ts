/**
 * `serveMcp`: toolrun tools served as an MCP server over stdio or Streamable HTTP: the SDK's
 * (`@modelcontextprotocol/sdk` 1.x) Streamable HTTP transport, and a stdio transport of our
 * own with a per-message limit (lib/mcp/server/stdio.ts). Around them, what a server in
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
import { randomUUID } from 'node:crypto';
import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Tool } from '../../core/tool.ts';
import { authorize, endpointAuth, type EndpointAuth, type McpHttpAuth } from './auth.ts';
import { BoundedEventStore, type EventStoreLimits } from './event-store.ts';
import { DEFAULT_MAX_QUEUED_BYTES, NotificationPacer, type Outlet, type PacedMessage, type PacedSendOptions } from './pacer.ts';
import { abortAllCalls, abortCall, callSettled, createMcpServer, hostCancels, isCallRunning, runningCallCount, serveCall, stopCalls, type McpServerOptions } from './mcp-server.ts';
import { SessionTable, type McpSessionLimits } from './sessions.ts';
import { StdioServerTransport } from './stdio.ts';

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

/**
 * Serves `tools` as an MCP server, over Streamable HTTP when `options.http` is given, else
 * over stdio. Resolves once the server is listening.
 *
 * What each call does is {@link createMcpServer}'s: it runs through `runTools` (same error
 * texts, timeouts and grace as in process), yields become `notifications/progress`,
 * `notifications/cancelled` aborts the call, `perTool[name].output` adds `outputSchema` and
 * `structuredContent`.
 *
 * Lifetimes and bounds (docs/tools.md, "Serving tools over MCP"): a call whose client is gone
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

async function serveStdio(server: Server, options: { maxQueuedBytes: number; maxMessageBytes: number | undefined; maxCalls: number; log: (line: string) => void }): Promise<ServedMcp> {
  let connected = 1;
  const transport = new StdioServerTransport(options.maxMessageBytes === undefined ? {} : { maxMessageBytes: options.maxMessageBytes });
  const stdout = transport.stdout as Outlet & NodeJS.WritableStream;
  const sendNow = transport.send.bind(transport);
  // A client that does not read its stdout (issue 20): while what is queued for it is over
  // the ceiling, no more requests are read (backpressure: its own writes block once the pipe
  // is full); a response that would queue past twice the ceiling is dropped, logged and
  // counted, so memory stays bounded even for requests read before reading stopped.
  let droppedResponses = 0;
  let readingPaused = false;
  const resume = (): void => {
    readingPaused = false;
    transport.resumeReading();
  };
  const write = (message: PacedMessage): Promise<void> => {
    if (message.method === undefined && stdout.writableLength >= 2 * options.maxQueuedBytes) {
      droppedResponses++;
      options.log(`serveMcp: stdout: the client is not reading (${stdout.writableLength} bytes queued, over twice maxQueuedBytes ${options.maxQueuedBytes}); the response to request ${JSON.stringify(message.id)} was dropped`);
      return Promise.resolve();
    }
    const sent = sendNow(message as Parameters<typeof sendNow>[0]);
    if (!readingPaused && stdout.writableLength >= options.maxQueuedBytes) {
      readingPaused = true;
      transport.pauseReading();
      stdout.once('drain', resume);
    }
    return sent;
  };
  const pacer: NotificationPacer = new NotificationPacer({
    send: (message) => write(message),
    outletFor: () => stdout,
    queuedBytes: () => stdout.writableLength + pacer.heldBytes,
    maxQueuedBytes: options.maxQueuedBytes,
  });
  const send = (message: PacedMessage, sendOptions?: PacedSendOptions): Promise<void> => pacer.send(message, sendOptions);
  transport.send = send as StdioServerTransport['send'];
  transport.onerror = (error) => options.log(error.message);
  // A request with the id of a call still running is refused before the SDK sees it: there it
  // would take the first call's place, which could then no longer be cancelled. The ids read
  // in this turn of the event loop count too (a call registers a few promise steps after it
  // was read, and one chunk of stdin holds many lines); nothing is kept longer than that.
  // Calls over maxCalls are refused the same way: the calls read this turn that are not yet
  // registered count too (a `tools/call` served directly registers at once and leaves this
  // set at the next check; one that takes the SDK's path registers a few promise steps later).
  const readThisTurn = new Set<string | number>();
  const unregisteredCalls = new Set<string | number>();
  takeOverCancellation(
    server,
    transport,
    (id, method) => {
      const isCall = method === 'tools/call';
      for (const pending of unregisteredCalls) if (isCallRunning(server, pending)) unregisteredCalls.delete(pending);
      const refusal =
        isCallRunning(server, id) || readThisTurn.has(id)
          ? { code: INVALID_REQUEST, message: idInUse(id) }
          : isCall && runningCallCount(server) + unregisteredCalls.size >= options.maxCalls
            ? { code: -32000, message: tooManyCalls(options.maxCalls) }
            : undefined;
      if (refusal !== undefined) {
        void send({ jsonrpc: '2.0', id, error: refusal }).catch(() => undefined);
        return 'refused';
      }
      if (readThisTurn.size === 0) {
        queueMicrotask(() => {
          readThisTurn.clear();
          unregisteredCalls.clear();
        });
      }
      readThisTurn.add(id);
      if (isCall) unregisteredCalls.add(id);
      return undefined;
    },
    true,
  );
  server.onclose = () => void (connected = 0);
  let closing: Promise<McpCloseSummary> | undefined;
  const served: ServedMcp = {
    url: undefined,
    get sessions() {
      return connected;
    },
    stats: () => ({
      sessions: connected,
      runningCalls: runningCallCount(server),
      pendingRequests: 0,
      queuedBytes: stdout.writableLength + pacer.heldBytes,
      droppedNotifications: pacer.dropped,
      expiredSessions: 0,
      refusedSessions: 0,
      oversizedMessages: transport.oversized,
      droppedResponses,
      readingPaused,
    }),
    close() {
      closing ??= (async () => {
        const interruptedCalls = (await stopCalls(server)) ?? 0;
        // The SDK writes a handler's response a few promise steps after the handler resolves;
        // one turn of the event loop lets those steps run before close() drops unsent responses.
        await new Promise((resolve) => setImmediate(resolve));
        await server.close();
        return { interruptedCalls, closedSessions: 1, cutConnections: 0 };
      })();
      return closing;
    },
  };
  // The client left (stdin ended, stdout broke): its calls end now, not when the process does.
  transport.onend = () => void served.close();
  await server.connect(transport);
  return served;
}

/** One Streamable HTTP session: its SDK pair, and the HTTP responses of it still open. */
interface Session {
  readonly transport: StreamableHTTPServerTransport;
  readonly server: Server;
  readonly pacer: NotificationPacer;
  /** The POST response each JSON-RPC request of this session is answered on, while open. */
  readonly requests: Map<string | number, ServerResponse>;
  /** Every response of this session still open (POSTs and the GET stream). */
  readonly open: Set<ServerResponse>;
  /** The GET stream's response, while open: where notifications unrelated to a request go. */
  stream: ServerResponse | undefined;
  /** The session's event store (`undefined` when resumability is off). */
  readonly store: BoundedEventStore | undefined;
  /** Requests the client cancelled whose call has ended, with their POST's response, waiting for the other requests of that POST (a batch) to be answered before its stream ends. */
  readonly ended: Map<string | number, ServerResponse>;
  /** Each request not yet answered (nor cancelled) with the ids of its POST (one array per POST, kept after the POST closed): the last of them answered ends that stream, for a resume. */
  readonly batches: Map<string | number, readonly (string | number)[]>;
  /** The SDK transport's own `send` (ours paces and counts). */
  readonly sdkSend: StreamableHTTPServerTransport['send'];
  /** Who opened it (`auth.principal`), when the endpoint has authorization: only that principal may use it. */
  readonly principal: string | undefined;
  close(): Promise<void>;
}

/** The SDK's limit on a request body (`DEFAULT_MAX_REQUEST_BODY_SIZE`), read before the SDK sees the request. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

/**
 * Hosts MCP servers over Streamable HTTP, one `Server` from `newServer` per session (called
 * when a client's first request arrives without a session id). Exported for hosting any SDK
 * server on the same terms as `serveMcp` (sessions with their cap and idle expiry, 404 for
 * an unknown session, the loopback Host/Origin check, a call aborted when its POST's
 * connection closes, the per-session ceiling on queued bytes); the specs host a reference
 * server with it.
 *
 * @param newServer - makes a fresh, unconnected SDK `Server` (for an SDK `McpServer`: its
 *   `.server`). Set its `onclose` to release what it holds when its session ends.
 * @param http - port, host, path, session limits; see {@link McpHttpOptions}.
 * @throws TypeError for a bad `maxSessions`, `sessionIdleMs` or `maxCallsPerSession`; the `listen` error
 *   (`EADDRINUSE`, `EACCES`…) when the port cannot be bound.
 *
 * @example
 * ```ts
 * const host = await serveHttp(() => createMcpServer(tools), { port: 3000, maxSessions: 50 });
 * ```
 */
export async function serveHttp(newServer: () => Server, http: McpHttpOptions): Promise<ServedMcp> {
  const host = http.host ?? '127.0.0.1';
  const path = http.path ?? '/mcp';
  const maxQueuedBytes = http.maxQueuedBytes ?? DEFAULT_MAX_QUEUED_BYTES;
  const closeGraceMs = http.closeGraceMs ?? 100;
  const maxCalls = checkMaxCalls(http.maxCallsPerSession);
  const loopback = isLoopback(host);
  const allowedOrigins = new Set(http.allowedOrigins ?? []);
  if (http.auth !== undefined) endpointAuth(http.auth, new URL(`http://127.0.0.1${path}`));
  /** The endpoint's authorization, once its URL is known (set right after `listen`). */
  let guard: EndpointAuth | undefined;
  /** The origins a request may come from (set right after `listen`). */
  let ownOrigins: ReadonlySet<string> = new Set();
  /** `Host` and `Origin` values already judged (a client sends the same on every request); bounded: cleared when full. */
  const seenHosts = new Map<string, boolean>();
  const table = new SessionTable<Session>(http, http.clock);
  /** Every response still open, with its session (undefined: an `initialize` POST not yet a session): close() waits for them. */
  const responses = new Set<ServerResponse>();
  let closing: Promise<McpCloseSummary> | undefined;
  let droppedByClosed = 0;

  const openSession = (principal: string | undefined): Session => {
    const server = newServer();
    const resumability = http.resumability;
    const store = resumability === false ? undefined : new BoundedEventStore(resumability);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => table.add(id, session),
      ...(resumability === false ? {} : { eventStore: store!, retryInterval: resumability?.retryMs ?? 1_000 }),
    });
    const requests = new Map<string | number, ServerResponse>();
    const open = new Set<ServerResponse>();
    const queuedBytes = (): number => {
      let bytes = pacer.heldBytes;
      for (const res of open) bytes += res.writableLength;
      return bytes;
    };
    const send = transport.send.bind(transport);
    const pacer: NotificationPacer = new NotificationPacer({
      send: (message, options) => send(message as Parameters<typeof send>[0], options),
      outletFor: (requestId) => (requestId === undefined ? session.stream : requests.get(requestId)),
      queuedBytes,
      maxQueuedBytes,
    });
    transport.send = (message, options) => {
      const { method, id } = message as PacedMessage;
      if (method !== undefined || id === undefined) return pacer.send(message as PacedMessage, options);
      // Answered: its id is free again, and its POST closing no longer cancels anything.
      const res = requests.get(id);
      requests.delete(id);
      const batch = session.batches.get(id);
      if (batch !== undefined) {
        session.batches.delete(id);
        // The last answer of its POST: a resume of that stream replays up to it, then ends
        // (the SDK alone would hold the resume open: nothing answers that request again).
        if (batch.length === 1 || !batch.some((other) => session.batches.get(other) === batch)) store?.endsStream(message as JSONRPCMessage);
      }
      const sent = pacer.send(message as PacedMessage, options);
      // The last answer of a batch whose other requests were cancelled: their stream can end now.
      return session.ended.size === 0 || res === undefined ? sent : sent.finally(() => endCancelled(session, res));
    };
    let closed: Promise<void> | undefined;
    const session: Session = {
      transport,
      server,
      pacer,
      requests,
      open,
      stream: undefined,
      store,
      ended: new Map(),
      batches: new Map(),
      sdkSend: send,
      principal,
      close: () =>
        (closed ??= (async () => {
          await stopCalls(server);
          await server.close().catch(() => undefined);
        })()),
    };
    transport.onclose = () => {
      // DELETE, expiry or close(): the table forgets it; what it dropped stays counted.
      if (transport.sessionId !== undefined) table.delete(transport.sessionId);
      droppedByClosed += pacer.dropped;
      pacer.dropped = 0;
    };
    takeOverCancellation(server, transport);
    return session;
  };

  /**
   * The client cancelled request `id` (`notifications/cancelled`, read from a POST before the
   * SDK sees it). The SDK sends no response for it (the specification: SHOULD NOT), so the
   * stream of its POST would never end: it ends once the call has (its tool settled, or was
   * abandoned after the grace period), a turn of the event loop later than the SDK dropped
   * the result. Only for a running call of a `createMcpServer` server (of any other server
   * the end is not known).
   */
  const cancelled = (session: Session, id: string | number): void => {
    // The SDK sends no response for a cancelled request: its answer ends no stream.
    session.batches.delete(id);
    const res = session.requests.get(id);
    if (res === undefined || !isCallRunning(session.server, id)) return;
    void callSettled(session.server, id).then(() =>
      setImmediate(() => {
        // Its POST may have closed meanwhile (a GET may have resumed its stream): it still
        // ends, unless a new request took the id.
        const now = session.requests.get(id);
        if (now !== undefined && now !== res) return;
        session.ended.set(id, res);
        endCancelled(session, res);
      }),
    );
  };

  /**
   * Ends the streams of the session's cancelled requests that have ended (`session.ended`)
   * of POST `res`, unless a request of that POST still waits for its answer. No response is
   * written: the SDK transport closes the request's stream (`closeSSEStream`: the POST's, or
   * a GET's that resumed it), then is handed the store's end marker, which releases what it
   * holds for the request; the store keeps an end event in its place, so that a resume of the
   * stream ends at once (see `resumeEnded`).
   */
  const endCancelled = (session: Session, res: ServerResponse): void => {
    for (const [id, other] of session.requests) if (other === res && !session.ended.has(id)) return;
    for (const [id, of] of [...session.ended]) {
      if (of !== res) continue;
      session.ended.delete(id);
      if (session.requests.get(id) === res) session.requests.delete(id);
      session.transport.closeSSEStream(id);
      // Straight to the SDK, not through the pacer: the stream is closed, nothing is written.
      const marker: JSONRPCMessage = session.store?.endMarker(id) ?? { jsonrpc: '2.0', id, result: {} };
      void session.sdkSend(marker).catch(() => undefined);
    }
  };

  /** Follows one response of a session: while open it keeps the session busy; if it closes before it finished, its calls are aborted. */
  const follow = (res: ServerResponse, session: Session, ids: readonly (string | number)[]): void => {
    session.open.add(res);
    for (const id of ids) {
      session.requests.set(id, res);
      session.batches.set(id, ids);
    }
    res.once('close', () => {
      session.open.delete(res);
      if (session.stream === res) session.stream = undefined;
      // Held in the table by hold() or, for the initialize POST, by add().
      const sessionId = session.transport.sessionId;
      if (sessionId !== undefined) table.release(sessionId);
      for (const id of ids) {
        if (session.requests.get(id) !== res) continue;
        session.requests.delete(id);
        // The client is gone before its answer: the call ends now (its tool's signal aborts).
        if (!res.writableFinished) cancel(session, id);
      }
    });
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const pathname = pathOf(req.url);
    if (guard !== undefined && guard.metadataPaths.includes(pathname) && (req.method === 'GET' || req.method === 'HEAD')) {
      // Public by design (RFC 9728): it names no secret; any origin may read it.
      return void res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=3600', 'access-control-allow-origin': '*' }).end(req.method === 'HEAD' ? undefined : guard.metadata);
    }
    if (pathname !== path) return reply(res, 404, `no MCP endpoint at ${new URL(req.url ?? '/', 'http://localhost').pathname}; it is ${path}`);
    if (loopback && !hostIsLoopback(req, seenHosts)) return reply(res, 403, 'Host is not a loopback address');
    const origin = req.headers.origin;
    if (origin !== undefined && !ownOrigins.has(origin) && !allowedOrigins.has(origin)) return reply(res, 403, `Origin ${JSON.stringify(origin.slice(0, 200))} is not allowed: only the endpoint's own origin and http.allowedOrigins may call it`);
    if (closing !== undefined) return reply(res, 503, 'the server is shutting down');
    let principal: string | undefined;
    if (guard !== undefined) {
      const verdict = await authorize(req, guard, Date.now);
      if (!verdict.ok) {
        // The body is not read: unread, Node drains or drops it with the connection.
        res.writeHead(verdict.status, verdict.headers).end(verdict.body);
        return;
      }
      principal = verdict.principal;
      // Where the SDK's HTTP transport reads it from, to hand it to the request handlers (`extra.authInfo`).
      (req as IncomingMessage & { auth?: unknown }).auth = verdict.auth;
    }
    let body: unknown;
    let ids: (string | number)[] = [];
    if (req.method === 'POST') {
      const read = await readBody(req, MAX_BODY_BYTES);
      if (read === 'too large') return reply(res, 413, `Payload Too Large: Request body must not exceed ${MAX_BODY_BYTES} bytes`, -32000);
      body = read.json;
      if (body === undefined) return reply(res, 400, 'Parse error: Invalid JSON', -32700);
      ids = requestIds(body);
      // For the SDK's HTTP layer, which would read the (already read) body again.
      (req as IncomingMessage & { rawBody?: Buffer }).rawBody = read.raw;
    }
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const session = table.get(sessionId);
      // Another principal's session is answered as an unknown one: its id opens nothing, and
      // the answer does not tell whether such a session exists.
      if (session === undefined || session.principal !== principal) return reply(res, 404, 'Session not found', -32001);
      // Before the SDK sees it: there the second request of an id takes the first's stream,
      // whose POST then never gets its answer, and its call can no longer be cancelled.
      const taken = idTaken(ids, session.requests);
      if (taken !== undefined) return reply(res, 400, idInUse(taken), INVALID_REQUEST);
      if (ids.length > 0 && session.requests.size + ids.length > maxCalls) return reply(res, 429, tooManyCalls(maxCalls));
      table.hold(sessionId);
      follow(res, session, ids);
      const lastEventId = req.headers['last-event-id'];
      if (req.method === 'GET' && typeof lastEventId === 'string' && session.store?.hasEnded(lastEventId)) return await resumeEnded(res, sessionId, session.store, lastEventId);
      if (req.method === 'GET') session.stream = res;
      for (const id of cancelledIds(body)) cancelled(session, id);
      return await session.transport.handleRequest(req, res, body);
    }
    if (req.method !== 'POST') return reply(res, 400, 'Bad Request: no Mcp-Session-Id header');
    // A new client: its first POST must be `initialize` (the transport checks and answers 400 otherwise).
    table.sweep();
    if (!table.hasRoom()) {
      table.refused++;
      return reply(res, 503, `too many MCP sessions: ${table.max} are open (maxSessions); close one (DELETE) or wait until one has been idle for ${table.idleMs} ms`);
    }
    const session = openSession(principal);
    follow(res, session, ids);
    await session.server.connect(session.transport);
    await session.transport.handleRequest(req, res, body);
    // Not initialized (a bad first request): nothing refers to this pair any more.
    if (session.transport.sessionId === undefined || table.get(session.transport.sessionId) !== session) await session.server.close();
  };

  const cancel = (session: Session, id: string | number): void => {
    const reason = new Error('the MCP client closed the connection of this request');
    // A toolrun server: abort the call (its result still goes to the SDK, which then finds
    // no stream and forgets the request). Any other server: as if the client had cancelled.
    if (!abortCall(session.server, id, reason)) {
      // The SDK sends no response for a cancelled request: its answer ends no stream.
      session.batches.delete(id);
      session.transport.onmessage?.({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: reason.message } });
    }
  };

  const httpServer: HttpServer = createHttpServer((req, res) => {
    responses.add(res);
    res.once('close', () => responses.delete(res));
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
  // Idle sessions expire on this timer too, not only when a new client arrives.
  const sweeper = Number.isFinite(table.idleMs) ? setInterval(() => table.sweep(), Math.min(table.idleMs, 60_000)) : undefined;
  sweeper?.unref();
  const address = httpServer.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = new URL(`http://${shownHost}:${address.port}${path}`);
  ownOrigins = new Set([url.origin, ...(loopback ? ['localhost', '127.0.0.1', '[::1]'].map((name) => `http://${name}:${address.port}`) : [])]);
  if (http.auth !== undefined) guard = endpointAuth(http.auth, url);
  return {
    url,
    get sessions() {
      return table.size;
    },
    stats() {
      let runningCalls = 0;
      let pendingRequests = 0;
      let queuedBytes = 0;
      let dropped = droppedByClosed;
      for (const res of responses) queuedBytes += res.writableLength;
      for (const session of table.values()) {
        runningCalls += runningCallCount(session.server);
        pendingRequests += session.requests.size;
        queuedBytes += session.pacer.heldBytes;
        dropped += session.pacer.dropped;
      }
      return { sessions: table.size, runningCalls, pendingRequests, queuedBytes, droppedNotifications: dropped, expiredSessions: table.expired, refusedSessions: table.refused, oversizedMessages: 0, droppedResponses: 0, readingPaused: false };
    },
    close() {
      closing ??= (async () => {
        clearInterval(sweeper);
        const open = table.drain();
        // First every running call of our servers ends with its interrupted result, and that
        // result is handed to its stream: closing first would abort the requests, and the SDK
        // sends no response for an aborted request (its client would wait for its own timeout).
        const counts = await Promise.all(open.map(({ server }) => stopCalls(server)));
        const interruptedCalls = counts.reduce<number>((sum, n) => sum + (n ?? 0), 0);
        // The SDK writes a response a few promise steps after its handler resolved.
        await new Promise((resolve) => setImmediate(resolve));
        // Server.close() closes its transport: every stream still open ends (after what was
        // written to it), and the requests of other servers are aborted.
        await Promise.all(open.map(({ server }) => server.close().catch(() => undefined)));
        // The responses get the grace period to reach their clients; a client that does not
        // read (or a stream a client holds open) does not hold close() any longer than that.
        const pending = [...responses].filter((res) => !res.closed);
        const flushed = Promise.all(pending.map((res) => new Promise((resolve) => res.once('close', resolve))));
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([flushed, new Promise((resolve) => (timer = setTimeout(resolve, closeGraceMs)))]);
        clearTimeout(timer);
        const cutConnections = [...responses].filter((res) => !res.closed).length;
        await new Promise<void>((resolve) => {
          httpServer.close(() => resolve());
          // Streams held open by clients (GET SSE streams, keep-alive sockets) would keep close() waiting.
          httpServer.closeAllConnections();
        });
        return { interruptedCalls, closedSessions: open.length, cutConnections };
      })();
      return closing;
    },
  };
}

/** JSON-RPC's "Invalid Request" code. */
const INVALID_REQUEST = -32600;

/** The error text for a request whose id a request of the same session still waits on. */
function idInUse(id: string | number): string {
  return `request id ${JSON.stringify(id)} is already in use by a request of this session that has not been answered; send each request with an id not in use`;
}

/** The first of `ids` that is in `open` or comes twice in `ids`; `undefined` when none. */
function idTaken(ids: readonly (string | number)[], open: ReadonlyMap<string | number, unknown>): string | number | undefined {
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i]!;
    if (open.has(id) || ids.indexOf(id) < i) return id;
  }
  return undefined;
}

/** Default of {@link ServeMcpOptions.maxCallsPerSession}. */
const DEFAULT_MAX_CALLS_PER_SESSION = 1_000;

function checkMaxCalls(max: number | undefined): number {
  if (max === undefined) return DEFAULT_MAX_CALLS_PER_SESSION;
  if (!(Number.isInteger(max) && max > 0)) throw new TypeError(`serveMcp: maxCallsPerSession must be a positive integer, received ${String(max)}`);
  return max;
}

/** The error text for a call over {@link ServeMcpOptions.maxCallsPerSession}. */
function tooManyCalls(max: number): string {
  return `too many calls at once in this MCP session: ${max} are waiting for their answer (maxCallsPerSession); wait for one to end, or cancel one, then call again`;
}

/** Sees each request (its id and method) before the SDK does; `'refused'`: the host answered it, the SDK never sees it. */
type RequestIdGuard = (id: string | number, method: string) => 'refused' | undefined;

/** The part of an SDK transport {@link takeOverCancellation} hooks into. */
interface HookableTransport {
  onmessage?: ((message: never, extra?: never) => void) | undefined;
  onclose?: (() => void) | undefined;
}

/**
 * For a server made by `createMcpServer`: this host delivers its cancellations (see
 * `hostCancels`), so no call listens to a per-request signal of the SDK. A
 * `notifications/cancelled` aborts its call before the SDK sees it (the call's response is
 * then dropped, as the specification asks); the transport closing aborts every call. A plain
 * JSON-RPC request ({@link isPlainRequest}) goes straight to the SDK's request entry; with
 * `direct` (stdio), a `tools/call` is served by `serveCall`, past the SDK's request machinery.
 * `onmessage` is wrapped once the SDK set it (`connect`), hence the setter. Does nothing for
 * any other server.
 */
function takeOverCancellation(server: Server, transport: HookableTransport, guard?: RequestIdGuard, direct = false): void {
  if (!hostCancels(server)) return;
  const closed = transport.onclose;
  transport.onclose = () => {
    abortAllCalls(server, new Error('the MCP connection closed'));
    closed?.();
  };
  let deliver: ((message: never, extra?: never) => void) | undefined;
  // The SDK's request entry (`Protocol._onrequest`, 1.x): what its own `onmessage` calls for a request.
  const onRequest = (server as unknown as { _onrequest?: unknown })._onrequest;
  const request = typeof onRequest === 'function' ? (onRequest as (message: never, extra?: never) => void) : undefined;
  const sniff = (message: never, extra?: never): void => {
    const m = message as { method?: unknown; id?: unknown; params?: { requestId?: unknown; reason?: unknown } };
    if (m.method === 'notifications/cancelled') {
      const id = m.params?.requestId;
      if (typeof id === 'string' || typeof id === 'number') abortCall(server, id, typeof m.params?.reason === 'string' ? m.params.reason : 'cancelled by the client', true);
    } else if (guard !== undefined && typeof m.method === 'string' && (typeof m.id === 'string' || typeof m.id === 'number') && guard(m.id, m.method) === 'refused') {
      return;
    } else if (request !== undefined && deliver !== undefined && isPlainRequest(m)) {
      // Past the SDK's sorting of messages, which tries the message as a result and as an
      // error response first (two zod parses that fail, building their issues: 12-14 µs in a
      // tight loop on the loaded bench machine; issue 20), to the same request entry;
      // over stdio, a `tools/call` past the SDK's request machinery too (serveCall).
      if (!(direct && m.method === 'tools/call' && serveCall(server, m as { id: string | number }))) request.call(server, message, extra);
      return;
    }
    deliver?.(message, extra);
  };
  // The SDK's HTTP transport forwards `onmessage` to an inner transport through an accessor:
  // that accessor gets the sniffer; a transport with a plain field reads it through ours.
  let setInner: ((handler: unknown) => void) | undefined;
  for (let proto = Object.getPrototypeOf(transport) as object | null; proto !== null && setInner === undefined; proto = Object.getPrototypeOf(proto) as object | null) {
    setInner = Object.getOwnPropertyDescriptor(proto, 'onmessage')?.set;
  }
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    get: () => (deliver === undefined ? undefined : sniff),
    set: (handler: typeof deliver) => {
      deliver = handler;
      setInner?.call(transport, handler === undefined ? undefined : sniff);
    },
  });
}

/**
 * @internal True for a message the SDK (1.x) would take as a JSON-RPC request, checked without zod: only
 * the keys `jsonrpc` ("2.0"), `id` (a string or a safe integer), `method` (a string) and
 * `params` (absent, or an object whose `_meta`, if any, is an object with at most a string or
 * integer `progressToken` and no related task). Every such message fails the SDK's strict
 * result and error response schemas (it has a `method`) and passes its request schema, so
 * the SDK would hand it to `_onrequest`. Anything else (false) takes the SDK's own way.
 */
export function isPlainRequest(m: Record<string, unknown>): boolean {
  if (m.jsonrpc !== '2.0' || typeof m.method !== 'string') return false;
  const id = m.id;
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return false;
  for (const key in m) if (key !== 'jsonrpc' && key !== 'id' && key !== 'method' && key !== 'params') return false;
  const params = m.params;
  if (params === undefined) return true;
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return false;
  const meta = (params as { _meta?: unknown })._meta;
  if (meta === undefined) return true;
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) return false;
  const { progressToken } = meta as { progressToken?: unknown };
  return (progressToken === undefined || typeof progressToken === 'string' || Number.isSafeInteger(progressToken)) && (meta as Record<string, unknown>)[RELATED_TASK_META_KEY] === undefined;
}

/** The `_meta` key of a request that belongs to a task (MCP tasks); such a request takes the SDK's own way. */
const RELATED_TASK_META_KEY = 'io.modelcontextprotocol/related-task';

/**
 * Answers a resume (`GET` with `Last-Event-ID`) of a stream that has ended: without a response
 * (its request was cancelled, see `endCancelled`), or with the last answer of its POST
 * (`endsStream`): what the store holds after that event, then the end, instead of the SDK's
 * stream that would stay open for a response that never comes. With
 * nothing to replay the answer is 204 No Content, the SSE specification's way to tell a client
 * to stop reconnecting (a stream that merely ends would have the SDK's client, or an
 * EventSource, reconnect at the retry interval for as long as it lives); with events, 200 and
 * those events, and the client's next resume from the last of them gets the 204.
 */
async function resumeEnded(res: ServerResponse, sessionId: string, store: BoundedEventStore, lastEventId: string): Promise<void> {
  let events = '';
  await store.replayEventsAfter(lastEventId, {
    send: (eventId, message) => {
      events += `event: message\nid: ${eventId}\ndata: ${JSON.stringify(message)}\n\n`;
      return Promise.resolve();
    },
  });
  if (events === '') return void res.writeHead(204, { 'mcp-session-id': sessionId }).end();
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', 'mcp-session-id': sessionId }).end(events);
}

/** Reads a request body of at most `max` bytes: its bytes and JSON (`undefined` when it is not JSON), or 'too large' (the rest is not read). */
async function readBody(req: IncomingMessage, max: number): Promise<{ raw: Buffer; json: unknown } | 'too large'> {
  if (Number(req.headers['content-length']) > max) return 'too large';
  const parts: Buffer[] = [];
  let bytes = 0;
  // Events rather than `for await`: an async iterator costs a few promises per chunk.
  const ended = await new Promise<boolean>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      bytes += chunk.length;
      if (bytes <= max) return void parts.push(chunk);
      req.off('data', onData);
      req.pause();
      resolve(false);
    };
    req.on('data', onData);
    req.once('end', () => resolve(true));
    req.once('error', reject);
  });
  if (!ended) return 'too large';
  const raw = parts.length === 1 ? parts[0]! : Buffer.concat(parts, bytes);
  try {
    return { raw, json: JSON.parse(raw.toString('utf8')) as unknown };
  } catch {
    return { raw, json: undefined };
  }
}

/** The ids of the JSON-RPC requests in a POST body (one message or a batch). */
function requestIds(body: unknown): (string | number)[] {
  const ids: (string | number)[] = [];
  for (const message of Array.isArray(body) ? body : [body]) {
    if (typeof message !== 'object' || message === null) continue;
    const { id, method } = message as { id?: unknown; method?: unknown };
    if (typeof method === 'string' && (typeof id === 'string' || typeof id === 'number')) ids.push(id);
  }
  return ids;
}

/** The request ids of the `notifications/cancelled` in a POST body (one message or a batch). */
function cancelledIds(body: unknown): (string | number)[] {
  const ids: (string | number)[] = [];
  if (body === undefined) return ids;
  for (const message of Array.isArray(body) ? body : [body]) {
    const { method, params } = (typeof message === 'object' && message !== null ? message : {}) as { method?: unknown; params?: { requestId?: unknown } };
    const id = method === 'notifications/cancelled' && typeof params === 'object' && params !== null ? params.requestId : undefined;
    if (typeof id === 'string' || typeof id === 'number') ids.push(id);
  }
  return ids;
}

/** A JSON-RPC error body without an id, as the SDK's transport answers transport-level errors. */
function reply(res: ServerResponse, status: number, message: string, code = -32000): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

/** @internal True for a loopback host name or address (`localhost`, `127.x.x.x`, `::1`, bracketed or not). */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** True when the `Host` header names a loopback host. `seen` caches the verdicts (at most 64). */
function hostIsLoopback(req: IncomingMessage, seen: Map<string, boolean>): boolean {
  const hostHeader = req.headers.host;
  return hostHeader !== undefined && judged(seen, `h ${hostHeader}`, () => isLoopback(hostName(`http://${hostHeader}`)));
}

function judged(seen: Map<string, boolean>, key: string, judge: () => boolean): boolean {
  let verdict = seen.get(key);
  if (verdict === undefined) {
    // Header values come from clients: the cache must not grow with them.
    if (seen.size >= 64) seen.clear();
    seen.set(key, (verdict = judge()));
  }
  return verdict;
}

/** The path of a request target (`/mcp?x` → `/mcp`), without building a URL (a few µs per request). */
function pathOf(target: string | undefined): string {
  if (target === undefined) return '/';
  const query = target.indexOf('?');
  const path = query === -1 ? target : target.slice(0, query);
  // Anything unusual (absolute form, escapes, dot segments) is left to URL's rules.
  return path.startsWith('/') && !path.includes('%') && !path.includes('.') ? path : new URL(target, 'http://localhost').pathname;
}

function hostName(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return '';
  }
}
