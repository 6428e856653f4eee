/**
 * The server side of MCP over stdio, with a per-message size limit: what `serveMcp` uses
 * instead of the SDK's `StdioServerTransport`.
 *
 * The SDK's transport (1.x) appends stdin to one buffer until a newline arrives. A line over
 * its 10 MiB limit makes it throw from the `data` handler: the server process died ("exit 13,
 * unsettled top-level await") and the whole session was lost; a 200 MB line with no newline
 * was held whole. {@link StdioServerTransport} reads with the line reader of
 * `McpStdioTransport` (lib/mcp/client/stdio.ts) instead, which never holds more than the limit:
 *
 * | the client sends | the SDK's transport | this transport |
 * | --- | --- | --- |
 * | a request over the limit | throws: the server exits | answers that request with a JSON-RPC error (its id read from the line's first or last 256 bytes); the session goes on |
 * | an oversized line whose id cannot be read (a notification, a response) | (same) | reports it to `onerror` (serveMcp logs it on stderr) and drops it |
 * | a line with no newline, of any size | held whole | only its size and edges are kept, until its newline |
 * | a line that is not JSON | `onerror` | `onerror` |
 * | a message the protocol layer throws on (nested too deep for its error text's `JSON.stringify`) | `onerror`, skipped | `onerror`, skipped |
 *
 * Writing: each message is one `write` of its JSON and a newline; `send` resolves at once (it
 * does not wait for `drain`): what may queue for a client that does not read is bounded by
 * `serveMcp` (lib/mcp/server/serve-stdio.ts): `NotificationPacer` (lib/mcp/server/pacer.ts) coalesces and drops
 * notifications at the ceiling, reading stops ({@link StdioServerTransport.pauseReading}) while
 * stdout is over it, and a response that would queue past twice the ceiling is dropped.
 * stdin ending (the client closed it) or stdout failing (`EPIPE`) is reported to `onend`.
 *
 * @module
 */
import type { Readable, Writable } from 'node:stream';
import { DEFAULT_MAX_MESSAGE_BYTES, LineReader, messageId } from '../stdio-lines.ts';
import { isObjectRecord } from '../../core/values/guards.ts';

/** JSON-RPC's "Invalid Request" code: the message could not be taken as a request. */
const INVALID_REQUEST = -32600;

/** A JSON-RPC message, as the SDK's `Transport` passes it (validated by the SDK's protocol layer). */
type Message = Record<string, unknown>;

/**
 * See the module comment. Implements the SDK's `Transport` interface (start, send, close,
 * onmessage, onerror, onclose).
 */
export class StdioServerTransport {
  onmessage?: (message: Message) => void;
  onerror?: (error: Error) => void;
  onclose?: () => void;
  /** The client left: stdin ended or closed, or stdout failed. Called once. */
  onend?: () => void;
  /** Oversized messages dropped since the start (answered with an error or reported). */
  oversized = 0;

  readonly #stdin: Readable;
  readonly #stdout: Writable;
  readonly #maxBytes: number;
  readonly #reader: LineReader;
  #state: 'new' | 'started' | 'closed' = 'new';
  #ended = false;

  constructor(options: { stdin?: Readable; stdout?: Writable; maxMessageBytes?: number } = {}) {
    this.#stdin = options.stdin ?? process.stdin;
    this.#stdout = options.stdout ?? process.stdout;
    this.#maxBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    if (!(Number.isInteger(this.#maxBytes) && this.#maxBytes > 0)) throw new TypeError(`serveMcp: maxMessageBytes must be a positive integer, received ${String(this.#maxBytes)}`);
    this.#reader = new LineReader(this.#maxBytes, (line) => this.#line(line), (bytes, head, tail) => this.#oversizedLine(bytes, head, tail));
  }

  /** Stops reading stdin (backpressure: the client is not reading what was written); lines already read are still handled. */
  pauseReading(): void {
    if (this.#state === 'started') this.#stdin.pause();
  }

  /** Reads stdin again after {@link pauseReading}. */
  resumeReading(): void {
    if (this.#state === 'started') this.#stdin.resume();
  }

  /** The stream messages are written to: the session's outlet for the pacer. */
  get stdout(): Writable {
    return this.#stdout;
  }

  start(): Promise<void> {
    if (this.#state !== 'new') throw new Error('StdioServerTransport: already started');
    this.#state = 'started';
    this.#stdin.on('data', this.#onData);
    this.#stdin.on('error', this.#onError);
    this.#stdin.on('end', this.#onEnd);
    this.#stdin.on('close', this.#onEnd);
    this.#stdout.on('error', this.#onStdoutError);
    return Promise.resolve();
  }

  send(message: Message): Promise<void> {
    if (this.#state !== 'started' || !this.#stdout.writable) return Promise.reject(new Error('Not connected'));
    this.#stdout.write(`${JSON.stringify(message)}\n`);
    return Promise.resolve();
  }

  close(): Promise<void> {
    if (this.#state === 'closed') return Promise.resolve();
    this.#state = 'closed';
    this.#stdin.off('data', this.#onData);
    this.#stdin.off('error', this.#onError);
    this.#stdin.off('end', this.#onEnd);
    this.#stdin.off('close', this.#onEnd);
    this.#stdout.off('error', this.#onStdoutError);
    // Paused, so that a stdin nothing else reads does not keep the process alive.
    if (this.#stdin.listenerCount('data') === 0) this.#stdin.pause();
    this.onclose?.();
    return Promise.resolve();
  }

  readonly #onData = (chunk: Buffer | string): void => {
    this.#reader.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  };

  readonly #onError = (error: Error): void => {
    this.onerror?.(error);
  };

  readonly #onEnd = (): void => {
    if (this.#ended) return;
    this.#ended = true;
    this.onend?.();
  };

  readonly #onStdoutError = (error: Error): void => {
    this.onerror?.(error);
    this.#onEnd();
  };

  #line(line: string): void {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      this.onerror?.(new Error(`serveMcp: stdin: a line that is not JSON was skipped (${line.length} characters: ${JSON.stringify(line.slice(0, 80))})`));
      return;
    }
    if (!isObjectRecord(message)) {
      this.onerror?.(new Error(`serveMcp: stdin: a line that is not a JSON-RPC message was skipped (${JSON.stringify(line.slice(0, 80))})`));
      return;
    }
    try {
      this.onmessage?.(message);
    } catch (error) {
      // The SDK's protocol layer throws synchronously for some messages it refuses: its error
      // text for a message it cannot classify, or a response or progress for an id it never
      // sent, holds the message's JSON.stringify, which overflows the stack for a deeply
      // nested one. Thrown from here it would leave the `data` handler and end the process
      // (the SDK's own transport catches it too).
      this.onerror?.(new Error(`serveMcp: stdin: a message the server could not handle was skipped (${error instanceof Error ? `${error.name}: ${error.message}` : String(error)})`));
    }
  }

  #oversizedLine(bytes: number, head: string, tail: string): void {
    this.oversized++;
    const text = `The message of ${bytes} bytes is over this server's limit of ${this.#maxBytes} bytes per message; it was not read. The session goes on.`;
    const id = messageId(head, tail);
    // A response (to a request of ours) cannot be answered: only a request gets an error back.
    const isRequest = /^\s*\{[^{]*"method"\s*:/.test(head);
    if (id === undefined || !isRequest) {
      this.onerror?.(new Error(`serveMcp: stdin: ${text} It was dropped (no request id to answer).`));
      return;
    }
    this.onerror?.(new Error(`serveMcp: stdin: ${text} Request ${JSON.stringify(id)} was answered with an error.`));
    void this.send({ jsonrpc: '2.0', id, error: { code: INVALID_REQUEST, message: text } }).catch(() => undefined);
  }
}
