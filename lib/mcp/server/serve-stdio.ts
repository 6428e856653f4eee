/**
 * `serveMcp` over stdio: one client on this process's stdin and stdout, through toolrun's own
 * stdio transport (lib/mcp/server/stdio.ts), with backpressure towards a client that does not
 * read, and the same refusals as over HTTP for a reused request id or too many calls.
 *
 * @module
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { takeOverCancellation, type RequestIdGuard } from './cancellation.ts';
import { isCallRunning, runningCallCount, stopCalls } from './mcp-server.ts';
import { NotificationPacer, type Outlet, type PacedMessage, type PacedSendOptions } from './pacer.ts';
import { idInUse, INVALID_REQUEST, tooManyCalls } from './request-guards.ts';
import type { McpCloseSummary, ServedMcp } from './serve-types.ts';
import { StdioServerTransport } from './stdio.ts';

/** What `serveMcp` passes on to {@link serveStdio}. */
interface StdioOptions {
  maxQueuedBytes: number;
  maxMessageBytes: number | undefined;
  maxCalls: number;
  log: (line: string) => void;
}

/** Serves `server` over stdin and stdout. */
export async function serveStdio(server: Server, options: StdioOptions): Promise<ServedMcp> {
  let connected = 1;
  const transport = new StdioServerTransport(options.maxMessageBytes === undefined ? {} : { maxMessageBytes: options.maxMessageBytes });
  const stdout = transport.stdout as Outlet & NodeJS.WritableStream;
  const writer = backpressuredWriter(transport, stdout, options);
  const pacer: NotificationPacer = new NotificationPacer({
    send: (message) => writer.write(message),
    outletFor: () => stdout,
    queuedBytes: () => stdout.writableLength + pacer.heldBytes,
    maxQueuedBytes: options.maxQueuedBytes,
  });
  const send = (message: PacedMessage, sendOptions?: PacedSendOptions): Promise<void> => pacer.send(message, sendOptions);
  transport.send = send as StdioServerTransport['send'];
  transport.onerror = (error) => options.log(error.message);
  takeOverCancellation(server, transport, stdioRequestGuard(server, options.maxCalls, send), true);
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
      droppedResponses: writer.droppedResponses,
      readingPaused: writer.readingPaused,
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

/**
 * The transport's `send` for a client that may not read its stdout: while what is queued for
 * it is over the ceiling, no more requests are read (backpressure: its own writes block once
 * the pipe is full); a response that would queue past twice the ceiling is dropped, logged and
 * counted, so memory stays bounded even for requests read before reading stopped.
 */
function backpressuredWriter(transport: StdioServerTransport, stdout: Outlet & NodeJS.WritableStream, options: StdioOptions): { write(message: PacedMessage): Promise<void>; readonly droppedResponses: number; readonly readingPaused: boolean } {
  const sendNow = transport.send.bind(transport);
  let droppedResponses = 0;
  let readingPaused = false;
  const resume = (): void => {
    readingPaused = false;
    transport.resumeReading();
  };
  return {
    write(message) {
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
    },
    get droppedResponses() {
      return droppedResponses;
    },
    get readingPaused() {
      return readingPaused;
    },
  };
}

/**
 * A request with the id of a call still running is refused before the SDK sees it: there it
 * would take the first call's place, which could then no longer be cancelled. The ids read
 * in this turn of the event loop count too (a call registers a few promise steps after it
 * was read, and one chunk of stdin holds many lines); nothing is kept longer than that.
 * Calls over maxCalls are refused the same way: the calls read this turn that are not yet
 * registered count too (a `tools/call` served directly registers at once and leaves this
 * set at the next check; one that takes the SDK's path registers a few promise steps later).
 */
function stdioRequestGuard(server: Server, maxCalls: number, send: (message: PacedMessage) => Promise<void>): RequestIdGuard {
  const readThisTurn = new Set<string | number>();
  const unregisteredCalls = new Set<string | number>();
  return (id, method) => {
    const isCall = method === 'tools/call';
    for (const pending of unregisteredCalls) if (isCallRunning(server, pending)) unregisteredCalls.delete(pending);
    const refusal =
      isCallRunning(server, id) || readThisTurn.has(id)
        ? { code: INVALID_REQUEST, message: idInUse(id) }
        : isCall && runningCallCount(server) + unregisteredCalls.size >= maxCalls
          ? { code: -32000, message: tooManyCalls(maxCalls) }
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
  };
}
