/**
 * A bounded, in-memory event store for one Streamable HTTP session: what makes an SSE stream
 * resumable (MCP specification 2025-06-18, "Transports → Resumability and redelivery"; the
 * polling of SEP-1699, 2025-11-25). The SDK's transport stores every message it writes to a
 * stream here, tells the client each one's event id, and on a `GET` with `Last-Event-ID`
 * replays that stream's events after it.
 *
 * Why our own: the SDK ships an in-memory store only as an example (not an export), and it
 * keeps every event for ever. This one keeps, per session, at most `maxEvents` events and
 * `maxBytes` of their JSON text, dropping the oldest first; a `Last-Event-ID` that was
 * dropped (or never given) is refused, and the client learns it cannot resume.
 *
 * It also remembers which streams ended without a response: a request the client cancelled
 * (`notifications/cancelled`) gets none (the specification: SHOULD NOT), so serveMcp ends its
 * stream itself once the call has ended, and hands the SDK an {@link BoundedEventStore.endMarker}
 * to release the request; the store keeps an empty end event in its place, and
 * {@link BoundedEventStore.hasEnded} tells serveMcp that a resume of that stream has nothing
 * more to wait for.
 *
 * @module
 */
import type { EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** Bounds of the event store `serveMcp` keeps for each session, to resume its streams. */
export interface EventStoreLimits {
  /** Most events kept. @default 1_000 */
  maxEvents?: number;
  /** Most characters of JSON text kept over all events (a message longer than this alone is not kept). @default 4 MiB (4_194_304) */
  maxBytes?: number;
}

/** One stored event. Invariant: `seq` strictly increases along the store's queue; `json` is `''` only for an end event (its stream ended without a response). */
interface StoredEvent {
  seq: number;
  streamId: string;
  json: string;
  /** Its stream ends with it: an end event, or the last response of its stream ({@link BoundedEventStore.endsStream}). */
  ends: boolean;
}

/** @internal The bounded store; event ids are `<streamId>.<seq>`. */
export class BoundedEventStore implements EventStore {
  readonly #maxEvents: number;
  readonly #maxBytes: number;
  /** The events kept, oldest first; `#head` is the index of the oldest still kept (an array queue without shifting). */
  #events: StoredEvent[] = [];
  #head = 0;
  /** Characters of JSON held by `#events[#head..]`. */
  #bytes = 0;
  /** The next event's number; event numbers are never reused. */
  #seq = 0;
  /** The messages made by {@link endMarker} not yet stored. */
  readonly #markers = new WeakSet<object>();
  /** The responses given to {@link endsStream} not yet stored. */
  readonly #last = new WeakSet<object>();

  constructor(limits: EventStoreLimits = {}) {
    this.#maxEvents = limits.maxEvents ?? 1_000;
    this.#maxBytes = limits.maxBytes ?? 4 * 1024 * 1024;
  }

  /** How many events are kept now. */
  get size(): number {
    return this.#events.length - this.#head;
  }

  /** Characters of JSON kept now. */
  get bytes(): number {
    return this.#bytes;
  }

  /**
   * A response for `requestId` that is never kept nor replayed: given to the SDK transport's
   * `send` after the request's stream was closed, it releases what the SDK holds for the
   * request, and this store records that the stream ended (an end event, 0 bytes).
   */
  endMarker(requestId: string | number): JSONRPCMessage {
    const marker: JSONRPCMessage = { jsonrpc: '2.0', id: requestId, result: {} };
    this.#markers.add(marker);
    return marker;
  }

  /**
   * Marks `response` as the last message of its stream (the last answer of its POST): once
   * stored, its stream has ended ({@link hasEnded}), so that a resume replays up to it and then
   * ends; the SDK would replay it and then hold the resume open for an answer that never comes.
   */
  endsStream(response: JSONRPCMessage): void {
    this.#last.add(response);
  }

  /** True when the stream of event `lastEventId` has ended: that event or one after it of the same stream is an end event or its last response; false when not, or the event is not kept. */
  hasEnded(lastEventId: string): boolean {
    const at = this.#indexOf(lastEventId);
    if (at === undefined) return false;
    const streamId = this.#events[at]!.streamId;
    for (let i = at; i < this.#events.length; i++) {
      const event = this.#events[i]!;
      if (event.ends && event.streamId === streamId) return true;
    }
    return false;
  }

  storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const seq = this.#seq++;
    const marker = this.#markers.delete(message);
    const last = this.#last.delete(message);
    let json = marker ? '' : JSON.stringify(message);
    // A message bigger than the whole store is sent but not kept: its id then resumes nothing.
    // A last response that big is kept as an end event: a resume of its stream ends.
    if (json.length > this.#maxBytes && last) json = '';
    if (json.length <= this.#maxBytes) {
      this.#events.push({ seq, streamId, json, ends: marker || last });
      this.#bytes += json.length;
      while (this.size > this.#maxEvents || this.#bytes > this.#maxBytes) this.#bytes -= this.#events[this.#head++]!.json.length;
      // Compact once the dropped prefix is as long as what is kept: amortized O(1) per event.
      if (this.#head > 64 && this.#head * 2 > this.#events.length) {
        this.#events = this.#events.slice(this.#head);
        this.#head = 0;
      }
    }
    return Promise.resolve(`${streamId}.${seq}`);
  }

  getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    return Promise.resolve(this.#find(eventId)?.streamId);
  }

  async replayEventsAfter(lastEventId: string, { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> }): Promise<string> {
    const last = this.#find(lastEventId);
    if (last === undefined) throw new Error(`cannot resume after event ${JSON.stringify(lastEventId.slice(0, 100))}: not kept (unknown, or dropped to keep the store within its bounds)`);
    // A snapshot: events stored while replaying go out on the stream itself.
    const after = this.#events.slice(this.#head).filter((event) => event.seq > last.seq && event.streamId === last.streamId);
    for (const event of after) {
      // An end event marks where the stream ended; it carries no message.
      if (event.json === '') continue;
      const message = JSON.parse(event.json) as JSONRPCMessage;
      // The priming event's empty message only marks a position; there is nothing to resend.
      if (Object.keys(message).length > 0) await send(`${event.streamId}.${event.seq}`, message);
    }
    return last.streamId;
  }

  /** The kept event with this id (binary search by number: ids come from the client). */
  #find(eventId: string): StoredEvent | undefined {
    const at = this.#indexOf(eventId);
    return at === undefined ? undefined : this.#events[at];
  }

  /** The index in `#events` of the kept event with this id. */
  #indexOf(eventId: string): number | undefined {
    if (typeof eventId !== 'string' || eventId.length > 200) return undefined;
    const dot = eventId.lastIndexOf('.');
    const seq = Number(eventId.slice(dot + 1));
    if (dot < 0 || !Number.isSafeInteger(seq)) return undefined;
    let lo = this.#head;
    let hi = this.#events.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const event = this.#events[mid]!;
      if (event.seq === seq) return event.streamId === eventId.slice(0, dot) ? mid : undefined;
      if (event.seq < seq) lo = mid + 1;
      else hi = mid - 1;
    }
    return undefined;
  }
}
