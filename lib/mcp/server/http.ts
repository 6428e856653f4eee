/**
 * `serveMcp` over Streamable HTTP (MCP specification, revision 2025-06-18, "Base protocol →
 * Transports"): {@link serveHttp}, and {@link HttpEndpoint}, one method per route and per
 * guard. A request passes, in order: the metadata route (public), the endpoint's path, the
 * `Host` and `Origin` checks, the shutdown, authorization; then its method's route: `POST`
 * (its body read, bounded), `GET` (the session's SSE stream, or a resume), `DELETE` (the
 * session ends) and any other method with a session (the SDK answers it).
 *
 * @module
 */
import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { authorize, endpointAuth, type EndpointAuth } from './auth.ts';
import { cancelled, follow, openSession, resumeEnded, type Session } from './http-session.ts';
import { runningCallCount, stopCalls } from './mcp-server.ts';
import { DEFAULT_MAX_QUEUED_BYTES } from './pacer.ts';
import { cancelledIds, checkMaxCalls, hostIsLoopback, idInUse, idTaken, INVALID_REQUEST, isLoopback, MAX_BODY_BYTES, pathOf, readBody, reply, requestIds, tooManyCalls } from './request-guards.ts';
import type { McpCloseSummary, McpHttpOptions, McpServeStats, ServedMcp } from './serve-types.ts';
import { SessionTable } from './sessions.ts';

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
  const endpoint = new HttpEndpoint(newServer, http);
  const httpServer: HttpServer = createHttpServer((req, res) => endpoint.serve(req, res));
  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(http.port ?? 0, endpoint.host, () => {
      httpServer.off('error', reject);
      resolve();
    });
  });
  const url = endpoint.listening(httpServer);
  return {
    url,
    get sessions() {
      return endpoint.table.size;
    },
    stats: () => endpoint.stats(),
    close: () => endpoint.close(),
  };
}

/** Refused: the guard answered the request already. */
const REFUSED = Symbol('refused');

/** One route: a handler of the requests of one method to the endpoint, past the guards. */
type Route = (this: HttpEndpoint, req: IncomingMessage, res: ServerResponse, principal: string | undefined) => Promise<void>;

/** The endpoint of {@link serveHttp}: its state, its routes and its guards. */
class HttpEndpoint {
  readonly host: string;
  readonly table: SessionTable<Session>;
  readonly #newServer: () => Server;
  readonly #http: McpHttpOptions;
  readonly #path: string;
  readonly #maxQueuedBytes: number;
  readonly #closeGraceMs: number;
  readonly #maxCalls: number;
  readonly #loopback: boolean;
  readonly #allowedOrigins: ReadonlySet<string>;
  /** The endpoint's authorization, once its URL is known (set right after `listen`). */
  #guard: EndpointAuth | undefined;
  /** The origins a request may come from (set right after `listen`). */
  #ownOrigins: ReadonlySet<string> = new Set();
  /** `Host` and `Origin` values already judged (a client sends the same on every request); bounded: cleared when full. */
  readonly #seenHosts = new Map<string, boolean>();
  /** Every response still open: close() waits for them. */
  readonly #responses = new Set<ServerResponse>();
  #closing: Promise<McpCloseSummary> | undefined;
  #droppedByClosed = 0;
  #httpServer: HttpServer | undefined;
  #sweeper: ReturnType<typeof setInterval> | undefined;

  constructor(newServer: () => Server, http: McpHttpOptions) {
    this.#newServer = newServer;
    this.#http = http;
    this.host = http.host ?? '127.0.0.1';
    this.#path = http.path ?? '/mcp';
    this.#maxQueuedBytes = http.maxQueuedBytes ?? DEFAULT_MAX_QUEUED_BYTES;
    this.#closeGraceMs = http.closeGraceMs ?? 100;
    this.#maxCalls = checkMaxCalls(http.maxCallsPerSession);
    this.#loopback = isLoopback(this.host);
    this.#allowedOrigins = new Set(http.allowedOrigins ?? []);
    if (http.auth !== undefined) endpointAuth(http.auth, new URL(`http://127.0.0.1${this.#path}`));
    this.table = new SessionTable<Session>(http, http.clock);
  }

  /** Once the HTTP server listens: the endpoint's URL, its own origins, its authorization, the idle sweeper. */
  listening(httpServer: HttpServer): URL {
    this.#httpServer = httpServer;
    // Idle sessions expire on this timer too, not only when a new client arrives.
    const idleMs = this.table.idleMs;
    this.#sweeper = Number.isFinite(idleMs) ? setInterval(() => this.table.sweep(), Math.min(idleMs, 60_000)) : undefined;
    this.#sweeper?.unref();
    const address = httpServer.address() as AddressInfo;
    const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    const url = new URL(`http://${shownHost}:${address.port}${this.#path}`);
    this.#ownOrigins = new Set([url.origin, ...(this.#loopback ? ['localhost', '127.0.0.1', '[::1]'].map((name) => `http://${name}:${address.port}`) : [])]);
    if (this.#http.auth !== undefined) this.#guard = endpointAuth(this.#http.auth, url);
    return url;
  }

  /** The HTTP server's request listener. */
  serve(req: IncomingMessage, res: ServerResponse): void {
    this.#responses.add(res);
    res.once('close', () => this.#responses.delete(res));
    this.#route(req, res).catch((error: unknown) => {
      if (!res.headersSent) reply(res, 500, `internal error: ${error instanceof Error ? error.message : String(error)}`);
      else res.end();
    });
  }

  async #route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const pathname = pathOf(req.url);
    if (this.#isMetadataRequest(req, pathname)) return this.#metadata(req, res);
    if (pathname !== this.#path) return reply(res, 404, `no MCP endpoint at ${JSON.stringify(pathname.slice(0, 200))}; it is ${this.#path}`);
    if (!this.#hostAllowed(req, res) || !this.#originAllowed(req, res) || !this.#open(res)) return;
    const principal = await this.#authorized(req, res);
    if (principal === REFUSED) return;
    const route = ROUTES.get(req.method ?? '') ?? HttpEndpoint.prototype.other;
    return await route.call(this, req, res, principal);
  }

  #isMetadataRequest(req: IncomingMessage, pathname: string): boolean {
    return this.#guard !== undefined && this.#guard.metadataPaths.includes(pathname) && (req.method === 'GET' || req.method === 'HEAD');
  }

  /** `GET`/`HEAD /.well-known/oauth-protected-resource[path]`: the Protected Resource Metadata (RFC 9728). */
  #metadata(req: IncomingMessage, res: ServerResponse): void {
    // Public by design (RFC 9728): it names no secret; any origin may read it.
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=3600', 'access-control-allow-origin': '*' }).end(req.method === 'HEAD' ? undefined : this.#guard!.metadata);
  }

  /** On a loopback address, the `Host` must name a loopback host (DNS rebinding). */
  #hostAllowed(req: IncomingMessage, res: ServerResponse): boolean {
    if (!this.#loopback || hostIsLoopback(req, this.#seenHosts)) return true;
    reply(res, 403, 'Host is not a loopback address');
    return false;
  }

  /** An `Origin`, when sent, must be the endpoint's own or in `allowedOrigins`. */
  #originAllowed(req: IncomingMessage, res: ServerResponse): boolean {
    const origin = req.headers.origin;
    if (origin === undefined || this.#ownOrigins.has(origin) || this.#allowedOrigins.has(origin)) return true;
    reply(res, 403, `Origin ${JSON.stringify(origin.slice(0, 200))} is not allowed: only the endpoint's own origin and http.allowedOrigins may call it`);
    return false;
  }

  /** After `close()`, every request gets 503. */
  #open(res: ServerResponse): boolean {
    if (this.#closing === undefined) return true;
    reply(res, 503, 'the server is shutting down');
    return false;
  }

  /** With `http.auth`, the bearer token: the caller's principal, or {@link REFUSED} (answered). */
  async #authorized(req: IncomingMessage, res: ServerResponse): Promise<string | undefined | typeof REFUSED> {
    if (this.#guard === undefined) return undefined;
    const verdict = await authorize(req, this.#guard, Date.now);
    if (!verdict.ok) {
      // The body is not read: unread, Node drains or drops it with the connection.
      res.writeHead(verdict.status, verdict.headers).end(verdict.body);
      return REFUSED;
    }
    // Where the SDK's HTTP transport reads it from, to hand it to the request handlers (`extra.authInfo`).
    (req as IncomingMessage & { auth?: unknown }).auth = verdict.auth;
    return verdict.principal;
  }

  /** `POST /mcp`: JSON-RPC messages, of a session or (without `Mcp-Session-Id`) a new client's `initialize`. */
  async post(req: IncomingMessage, res: ServerResponse, principal: string | undefined): Promise<void> {
    const read = await readBody(req, MAX_BODY_BYTES);
    if (read === 'too large') return reply(res, 413, `Payload Too Large: Request body must not exceed ${MAX_BODY_BYTES} bytes`, -32000);
    const body = read.json;
    if (body === undefined) return reply(res, 400, 'Parse error: Invalid JSON', -32700);
    const ids = requestIds(body);
    // For the SDK's HTTP layer, which would read the (already read) body again.
    (req as IncomingMessage & { rawBody?: Buffer }).rawBody = read.raw;
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId !== 'string') return await this.#initialize(req, res, principal, body, ids);
    const session = this.#session(res, sessionId, principal);
    if (session === undefined) return;
    // Before the SDK sees it: there the second request of an id takes the first's stream,
    // whose POST then never gets its answer, and its call can no longer be cancelled.
    const taken = idTaken(ids, session.requests);
    if (taken !== undefined) return reply(res, 400, idInUse(taken), INVALID_REQUEST);
    if (ids.length > 0 && session.requests.size + ids.length > this.#maxCalls) return reply(res, 429, tooManyCalls(this.#maxCalls));
    this.#hold(res, sessionId, session, ids);
    for (const id of cancelledIds(body)) cancelled(session, id);
    return await session.transport.handleRequest(req, res, body);
  }

  /** `GET /mcp`: the session's SSE stream; with `Last-Event-ID`, a resume of a stream that broke. */
  async get(req: IncomingMessage, res: ServerResponse, principal: string | undefined): Promise<void> {
    const held = this.#heldSession(req, res, principal);
    if (held === undefined) return;
    const { sessionId, session } = held;
    const lastEventId = req.headers['last-event-id'];
    if (typeof lastEventId === 'string' && session.store?.hasEnded(lastEventId)) return await resumeEnded(res, sessionId, session.store, lastEventId);
    session.stream = res;
    return await session.transport.handleRequest(req, res);
  }

  /** `DELETE /mcp` (the session ends), and any other method of a session: the SDK's transport answers it. */
  async other(req: IncomingMessage, res: ServerResponse, principal: string | undefined): Promise<void> {
    const held = this.#heldSession(req, res, principal);
    if (held !== undefined) await held.session.transport.handleRequest(req, res);
  }

  /** The session named by a request without a body (`Mcp-Session-Id`), held while `res` is open; `undefined` when answered (400, 404). */
  #heldSession(req: IncomingMessage, res: ServerResponse, principal: string | undefined): { sessionId: string; session: Session } | undefined {
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId !== 'string') return void reply(res, 400, 'Bad Request: no Mcp-Session-Id header');
    const session = this.#session(res, sessionId, principal);
    if (session === undefined) return undefined;
    this.#hold(res, sessionId, session, []);
    return { sessionId, session };
  }

  /** Session `sessionId` of `principal`, or `undefined` when answered 404. */
  #session(res: ServerResponse, sessionId: string, principal: string | undefined): Session | undefined {
    const session = this.table.get(sessionId);
    // Another principal's session is answered as an unknown one: its id opens nothing, and
    // the answer does not tell whether such a session exists.
    if (session !== undefined && session.principal === principal) return session;
    reply(res, 404, 'Session not found', -32001);
    return undefined;
  }

  /** `res` is a request of `session`: it keeps the session busy while open. */
  #hold(res: ServerResponse, sessionId: string, session: Session, ids: readonly (string | number)[]): void {
    this.table.hold(sessionId);
    follow(this.table, res, session, ids);
  }

  /** A new client's first POST: it must be `initialize` (the transport checks and answers 400 otherwise). */
  async #initialize(req: IncomingMessage, res: ServerResponse, principal: string | undefined, body: unknown, ids: readonly (string | number)[]): Promise<void> {
    const table = this.table;
    table.sweep();
    if (!table.hasRoom()) {
      table.refused++;
      return reply(res, 503, `too many MCP sessions: ${table.max} are open (maxSessions); close one (DELETE) or wait until one has been idle for ${table.idleMs} ms`);
    }
    const session = openSession(this.#newServer(), principal, {
      table,
      resumability: this.#http.resumability,
      maxQueuedBytes: this.#maxQueuedBytes,
      closed: (dropped) => void (this.#droppedByClosed += dropped),
    });
    follow(table, res, session, ids);
    await session.server.connect(session.transport);
    await session.transport.handleRequest(req, res, body);
    // Not initialized (a bad first request): nothing refers to this pair any more.
    if (session.transport.sessionId === undefined || table.get(session.transport.sessionId) !== session) await session.server.close();
  }

  stats(): McpServeStats {
    let runningCalls = 0;
    let pendingRequests = 0;
    let queuedBytes = 0;
    let dropped = this.#droppedByClosed;
    for (const res of this.#responses) queuedBytes += res.writableLength;
    for (const session of this.table.values()) {
      runningCalls += runningCallCount(session.server);
      pendingRequests += session.requests.size;
      queuedBytes += session.pacer.heldBytes;
      dropped += session.pacer.dropped;
    }
    const { table } = this;
    return { sessions: table.size, runningCalls, pendingRequests, queuedBytes, droppedNotifications: dropped, expiredSessions: table.expired, refusedSessions: table.refused, oversizedMessages: 0, droppedResponses: 0, readingPaused: false };
  }

  close(): Promise<McpCloseSummary> {
    this.#closing ??= this.#shutDown();
    return this.#closing;
  }

  async #shutDown(): Promise<McpCloseSummary> {
    clearInterval(this.#sweeper);
    const open = this.table.drain();
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
    const pending = [...this.#responses].filter((res) => !res.closed);
    const flushed = Promise.all(pending.map((res) => new Promise((resolve) => res.once('close', resolve))));
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([flushed, new Promise((resolve) => (timer = setTimeout(resolve, this.#closeGraceMs)))]);
    clearTimeout(timer);
    const cutConnections = [...this.#responses].filter((res) => !res.closed).length;
    const httpServer = this.#httpServer!;
    await new Promise<void>((resolve) => {
      httpServer.close(() => resolve());
      // Streams held open by clients (GET SSE streams, keep-alive sockets) would keep close() waiting.
      httpServer.closeAllConnections();
    });
    return { interruptedCalls, closedSessions: open.length, cutConnections };
  }
}

/** The route of each method; any other method goes to {@link HttpEndpoint.other}. */
const ROUTES: ReadonlyMap<string, Route> = new Map([
  ['POST', HttpEndpoint.prototype.post],
  ['GET', HttpEndpoint.prototype.get],
  ['DELETE', HttpEndpoint.prototype.other],
]);
