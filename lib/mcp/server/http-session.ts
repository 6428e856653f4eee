/**
 * One Streamable HTTP session of `serveHttp`: its SDK server and transport, the HTTP
 * responses of it still open, and what ties a request to its POST: the call aborted when that
 * POST closes first, the stream of a cancelled request ended once its call has, and a resume
 * (`GET` with `Last-Event-ID`) of a stream that has ended answered without the SDK.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { takeOverCancellation } from './cancellation.ts';
import { BoundedEventStore } from './event-store.ts';
import { abortCall, callSettled, isCallRunning, stopCalls } from './mcp-server.ts';
import { NotificationPacer, type PacedMessage } from './pacer.ts';
import type { McpHttpOptions } from './serve-types.ts';
import type { SessionTable } from './sessions.ts';

/** One Streamable HTTP session: its SDK pair, and the HTTP responses of it still open. */
export interface Session {
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

/** What a new session needs of its endpoint. */
export interface SessionSettings {
  readonly table: SessionTable<Session>;
  readonly resumability: McpHttpOptions['resumability'];
  readonly maxQueuedBytes: number;
  /** Called when the session's transport closes, with the notifications its pacer dropped. */
  readonly closed: (droppedNotifications: number) => void;
}

/** A new session for `server`, owned by `principal`: in the table once the client's `initialize` is answered. */
export function openSession(server: Server, principal: string | undefined, settings: SessionSettings): Session {
  const { table, resumability } = settings;
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
    maxQueuedBytes: settings.maxQueuedBytes,
  });
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
  transport.send = (message, options) => sendPaced(session, message as PacedMessage, options);
  transport.onclose = () => {
    // DELETE, expiry or close(): the table forgets it; what it dropped stays counted.
    if (transport.sessionId !== undefined) table.delete(transport.sessionId);
    settings.closed(pacer.dropped);
    pacer.dropped = 0;
  };
  takeOverCancellation(server, transport);
  return session;
}

/** The session transport's `send`: through the pacer; an answer frees its request id and may end its POST's stream. */
function sendPaced(session: Session, message: PacedMessage, options: Parameters<StreamableHTTPServerTransport['send']>[1]): Promise<void> {
  const { method, id } = message;
  if (method !== undefined || id === undefined) return session.pacer.send(message, options);
  // Answered: its id is free again, and its POST closing no longer cancels anything.
  const res = session.requests.get(id);
  session.requests.delete(id);
  const batch = session.batches.get(id);
  if (batch !== undefined) {
    session.batches.delete(id);
    // The last answer of its POST: a resume of that stream replays up to it, then ends
    // (the SDK alone would hold the resume open: nothing answers that request again).
    if (batch.length === 1 || !batch.some((other) => session.batches.get(other) === batch)) session.store?.endsStream(message as JSONRPCMessage);
  }
  const sent = session.pacer.send(message, options);
  // The last answer of a batch whose other requests were cancelled: their stream can end now.
  return session.ended.size === 0 || res === undefined ? sent : sent.finally(() => endCancelled(session, res));
}

/**
 * The client cancelled request `id` (`notifications/cancelled`, read from a POST before the
 * SDK sees it). The SDK sends no response for it (the specification: SHOULD NOT), so the
 * stream of its POST would never end: it ends once the call has (its tool settled, or was
 * abandoned after the grace period), a turn of the event loop later than the SDK dropped
 * the result. Only for a running call of a `createMcpServer` server (of any other server
 * the end is not known).
 */
export function cancelled(session: Session, id: string | number): void {
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
}

/**
 * Ends the streams of the session's cancelled requests that have ended (`session.ended`)
 * of POST `res`, unless a request of that POST still waits for its answer. No response is
 * written: the SDK transport closes the request's stream (`closeSSEStream`: the POST's, or
 * a GET's that resumed it), then is handed the store's end marker, which releases what it
 * holds for the request; the store keeps an end event in its place, so that a resume of the
 * stream ends at once (see `resumeEnded`).
 */
function endCancelled(session: Session, res: ServerResponse): void {
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
}

/** Follows one response of a session: while open it keeps the session busy; if it closes before it finished, its calls are aborted. */
export function follow(table: SessionTable<Session>, res: ServerResponse, session: Session, ids: readonly (string | number)[]): void {
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
}

/** The POST of request `id` closed before its answer. */
function cancel(session: Session, id: string | number): void {
  const reason = new Error('the MCP client closed the connection of this request');
  // A toolrun server: abort the call (its result still goes to the SDK, which then finds
  // no stream and forgets the request). Any other server: as if the client had cancelled.
  if (!abortCall(session.server, id, reason)) {
    // The SDK sends no response for a cancelled request: its answer ends no stream.
    session.batches.delete(id);
    session.transport.onmessage?.({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: reason.message } });
  }
}

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
export async function resumeEnded(res: ServerResponse, sessionId: string, store: BoundedEventStore, lastEventId: string): Promise<void> {
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
