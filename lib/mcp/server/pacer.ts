/**
 * What an MCP session may queue for a client that reads slowly, or not at all.
 *
 * The SDK's transports never refuse a message: over Streamable HTTP each one is enqueued on
 * the response's web stream, which the HTTP layer reads only as fast as the socket drains;
 * over stdio the SDK awaits `drain`, which holds the tool instead. Either way a tool that
 * yields faster than its client reads (a shell command printing 300 MB) grew the server by
 * the whole output. {@link NotificationPacer} sits in front of a transport's
 * `send` and keeps, per session:
 *
 * - **progress coalesced**: while the call's outlet (its POST's response, or stdout) has
 *   asked to wait for `drain` (or, for a response, has not sent its head yet: until then the
 *   SDK's queue is not read at all), or the session's queued bytes are at the ceiling, a progress
 *   notification is held instead of sent; a newer one for the same token replaces it (the
 *   older counts as dropped). On `drain` the newest is sent, so the client still sees the
 *   latest progress; one left when its call's response goes out is dropped (counted).
 * - **other notifications dropped** (counted) while the session is at the ceiling;
 * - **responses and server-to-client requests always sent**: they are bounded elsewhere
 *   (`maxResultChars`) and losing one would leave a call without an answer.
 * - **progress messages cut** to {@link MAX_PROGRESS_MESSAGE_CHARS} characters.
 *
 * Memory per session is then at most the ceiling, plus one message per outlet (the write
 * that crossed the high-water mark), plus one held progress per running call.
 *
 * @module
 */

/** Default of the per-session ceiling on queued bytes (`maxQueuedBytes`): 4 MiB. */
export const DEFAULT_MAX_QUEUED_BYTES = 4 * 1024 * 1024;
/** Longest `message` of a progress notification, in UTF-16 code units; longer ones are cut, saying by how much. */
const MAX_PROGRESS_MESSAGE_CHARS = 16 * 1024;

/** How often a progress held only by the session's ceiling (its own outlet is not backed up) is tried again, in ms. */
const CEILING_RETRY_MS = 25;

/** What may be sent to a response before its head is written (and its queue starts to be read), in bytes: 64 KiB. */
const PRE_HEAD_BYTES = 64 * 1024;

/** Where a session's messages are written: a POST's response, or stdout. Node's `ServerResponse` and `Writable` fit. */
export interface Outlet {
  /** Bytes written but not yet handed to the operating system. */
  readonly writableLength: number;
  /** True once a write returned false, until `drain`. */
  readonly writableNeedDrain: boolean;
  /** True once `end()` was called: nothing more can be written to it. */
  readonly writableEnded: boolean;
  /** True once destroyed (the connection closed). */
  readonly destroyed: boolean;
  /**
   * An HTTP response's: false until its head was written. Until then nothing is taken from
   * what is queued for it (the SDK's web stream, which the HTTP layer starts reading only
   * after the handler returned), so the outlet counts as backed up. `undefined` for a stream.
   */
  readonly headersSent?: boolean;
  once(event: 'drain' | 'close', listener: () => void): unknown;
  off(event: 'drain' | 'close', listener: () => void): unknown;
}

/** A JSON-RPC message as the SDK hands it to a transport's `send` (only these fields are read). */
export interface PacedMessage {
  method?: string;
  id?: string | number;
  params?: { progressToken?: string | number; message?: unknown; [key: string]: unknown };
  [key: string]: unknown;
}

/** The SDK's `TransportSendOptions`, as far as read here. */
export interface PacedSendOptions {
  relatedRequestId?: string | number;
  [key: string]: unknown;
}

type Send = (message: PacedMessage, options?: PacedSendOptions) => Promise<void>;

/** A progress notification waiting for its outlet to drain. */
interface Held {
  readonly message: PacedMessage;
  readonly options: PacedSendOptions | undefined;
  readonly outlet: Outlet;
}

/**
 * See the module comment. One per session.
 *
 * Invariants: `#held` has at most one entry per progress token, whose outlet was backed up
 * (or the session at its ceiling) when it was held; `#waiting` holds exactly the outlets
 * with a `drain` listener of ours, each at most once.
 */
export class NotificationPacer {
  /** Notifications not sent: progress replaced by a newer one or left at the call's end, others dropped at the ceiling. */
  dropped = 0;
  readonly #send: Send;
  readonly #outletFor: (requestId: string | number | undefined) => Outlet | undefined;
  readonly #queuedBytes: () => number;
  readonly #maxQueuedBytes: number;
  readonly #held = new Map<string | number, Held>();
  readonly #waiting = new Set<Outlet>();
  /** Per response whose head is not sent yet: the bytes sent to it so far (estimated). */
  readonly #beforeHead = new WeakMap<Outlet, number>();

  /**
   * @param send - the transport's own `send`.
   * @param outletFor - the outlet a message related to this request goes to (`undefined`
   *   request: the session's stream for unrelated messages); `undefined` when there is none.
   * @param queuedBytes - the session's bytes queued now, over all its outlets.
   * @param maxQueuedBytes - the ceiling on them.
   */
  constructor(options: { send: Send; outletFor: (requestId: string | number | undefined) => Outlet | undefined; queuedBytes: () => number; maxQueuedBytes: number }) {
    this.#send = options.send;
    this.#outletFor = options.outletFor;
    this.#queuedBytes = options.queuedBytes;
    this.#maxQueuedBytes = options.maxQueuedBytes;
  }

  /** Bytes of the progress notifications held (their message text, an estimate of their size). */
  get heldBytes(): number {
    let bytes = 0;
    for (const { message } of this.#held.values()) bytes += estimate(message);
    return bytes;
  }

  /** Sends, holds or drops `message`; see the module comment. Resolves at once for a held or dropped one. */
  send(message: PacedMessage, options?: PacedSendOptions): Promise<void> {
    const method = message.method;
    if (method === undefined) {
      // A response: a progress still held for its request would now arrive after it.
      if (message.id !== undefined && this.#held.size > 0) this.#forget(message.id);
      return this.#send(message, options);
    }
    if (message.id !== undefined) return this.#send(message, options); // a request to the client
    if (method === 'notifications/progress') return this.#progress(cutMessage(message), options);
    if (this.#queuedBytes() >= this.#maxQueuedBytes) {
      this.dropped++;
      return Promise.resolve();
    }
    return this.#send(message, options);
  }

  #progress(message: PacedMessage, options: PacedSendOptions | undefined): Promise<void> {
    const token = message.params?.progressToken;
    const outlet = this.#outletFor(options?.relatedRequestId);
    if (token === undefined || outlet === undefined) return this.#send(message, options);
    if (outlet.writableEnded || outlet.destroyed) {
      this.dropped++;
      return Promise.resolve();
    }
    // A newer notification supersedes the one held for the same token, sent or held.
    if (this.#held.delete(token)) this.dropped++;
    if (this.#takes(outlet, message)) return this.#send(message, options);
    this.#held.set(token, { message, options, outlet });
    this.#wait(outlet);
    return Promise.resolve();
  }

  /**
   * True when `outlet` may take `message` now. Before a response's head is sent, what is sent
   * stays in the SDK's queue; {@link PRE_HEAD_BYTES} of it are allowed (so a fast tool's
   * first notifications are not coalesced away while its client reads well), counted in
   * `#beforeHead`.
   */
  #takes(outlet: Outlet, message: PacedMessage): boolean {
    if (outlet.writableNeedDrain || this.#queuedBytes() >= this.#maxQueuedBytes) return false;
    if (outlet.headersSent !== false) return true;
    const bytes = (this.#beforeHead.get(outlet) ?? 0) + estimate(message);
    if (bytes > PRE_HEAD_BYTES) return false;
    this.#beforeHead.set(outlet, bytes);
    return true;
  }

  /**
   * Flushes `outlet` once it may take more: on `drain` when it asked for one; on the next
   * turn of the event loop while a response's head is not sent (nothing would say `drain`);
   * after {@link CEILING_RETRY_MS} when only the session's ceiling holds it (another outlet
   * must drain first). One wait per outlet at a time; its listeners go when it wakes.
   */
  #wait(outlet: Outlet): void {
    if (this.#waiting.has(outlet)) return;
    this.#waiting.add(outlet);
    let timer: ReturnType<typeof setTimeout> | undefined;
    let immediate: ReturnType<typeof setImmediate> | undefined;
    const wake = (): void => {
      clearTimeout(timer);
      clearImmediate(immediate);
      outlet.off('drain', wake);
      outlet.off('close', wake);
      this.#waiting.delete(outlet);
      this.#flush(outlet);
    };
    outlet.once('close', wake);
    if (outlet.headersSent === false) immediate = setImmediate(wake);
    else if (outlet.writableNeedDrain) outlet.once('drain', wake);
    else (timer = setTimeout(wake, CEILING_RETRY_MS)).unref();
  }

  /** Sends what is held for `outlet` while it takes more; drops it when the outlet closed. */
  #flush(outlet: Outlet): void {
    for (const [token, held] of this.#held) {
      if (held.outlet !== outlet) continue;
      if (outlet.writableEnded || outlet.destroyed) {
        this.#held.delete(token);
        this.dropped++;
        continue;
      }
      if (!this.#takes(outlet, held.message)) {
        this.#wait(outlet);
        return;
      }
      this.#held.delete(token);
      // A failed send is the transport's to report; the call goes on and ends on its own.
      this.#send(held.message, held.options).catch(() => undefined);
    }
  }

  #forget(requestId: string | number): void {
    for (const [token, held] of this.#held) {
      if (held.options?.relatedRequestId !== requestId) continue;
      this.#held.delete(token);
      this.dropped++;
    }
  }
}

/**
 * The size of a progress notification on the wire, roughly: its message text, its token and
 * the rest. The token is the client's (up to the 4 MiB of a request body): not counting it let
 * a client that sent a huge one and read nothing have ~500 copies of it queued.
 */
function estimate(message: PacedMessage): number {
  const params = message.params;
  const token = params?.progressToken;
  return 128 + (typeof params?.message === 'string' ? params.message.length : 0) + (typeof token === 'string' ? token.length : 0);
}

/** The notification with its `message` cut to {@link MAX_PROGRESS_MESSAGE_CHARS}, saying how much was left out. */
function cutMessage(message: PacedMessage): PacedMessage {
  const text = message.params?.message;
  if (typeof text !== 'string' || text.length <= MAX_PROGRESS_MESSAGE_CHARS) return message;
  const cut = `${text.slice(0, MAX_PROGRESS_MESSAGE_CHARS)}… [${text.length - MAX_PROGRESS_MESSAGE_CHARS} more characters not sent]`;
  return { ...message, params: { ...message.params, message: cut } };
}
