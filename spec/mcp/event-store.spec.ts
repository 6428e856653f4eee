/**
 * The bounded event store behind resumable SSE streams (lib/mcp/server/event-store.ts): what it
 * keeps, what it replays, and that it never holds more than its limits.
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { BoundedEventStore } from '../../lib/mcp/server/event-store.ts';

const note = (n: number): JSONRPCMessage => ({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: n } });

async function replay(store: BoundedEventStore, after: string): Promise<{ stream: string; sent: [string, JSONRPCMessage][] }> {
  const sent: [string, JSONRPCMessage][] = [];
  const stream = await store.replayEventsAfter(after, { send: async (id, message) => void sent.push([id, message]) });
  return { stream, sent };
}

describe('BoundedEventStore (resumable SSE streams)', () => {
  // Fails if events of another stream are replayed, the priming event's empty message is resent, or the order changes.
  it('replays the events of the same stream after the given id, in order, without the empty priming message', async () => {
    const store = new BoundedEventStore();
    const priming = await store.storeEvent('a', {} as JSONRPCMessage);
    const a1 = await store.storeEvent('a', note(1));
    await store.storeEvent('b', note(2));
    const a3 = await store.storeEvent('a', note(3));
    expect(await replay(store, priming)).toEqual({ stream: 'a', sent: [[a1, note(1)], [a3, note(3)]] });
    expect(await replay(store, a1)).toEqual({ stream: 'a', sent: [[a3, note(3)]] });
    expect(await store.getStreamIdForEventId(a3)).toBe('a');
  });

  // Fails if the store grows past either limit (memory per session unbounded), or a dropped id still resumes.
  it('keeps at most maxEvents events and maxBytes of JSON, dropping the oldest; a dropped or unknown id is refused', async () => {
    const store = new BoundedEventStore({ maxEvents: 100, maxBytes: 5_000 });
    const first = await store.storeEvent('s', note(0));
    // 1,000 events: ten times maxEvents (was 10,000: 0.4 s of CPU for the same check).
    // The largest size and byte count after any store, checked once after the loop.
    let mostEvents = 0;
    let mostBytes = 0;
    for (let i = 1; i < 1_000; i++) {
      await store.storeEvent('s', note(i));
      mostEvents = Math.max(mostEvents, store.size);
      mostBytes = Math.max(mostBytes, store.bytes);
    }
    expect(mostEvents).toBeLessThanOrEqual(100);
    expect(mostBytes).toBeLessThanOrEqual(5_000);
    await expect(replay(store, first)).rejects.toThrow(/not kept/);
    await expect(replay(store, 'nope')).rejects.toThrow(/not kept/);
    await expect(replay(store, `s.${'9'.repeat(400)}`)).rejects.toThrow(/not kept/);
    const big = await store.storeEvent('s', { jsonrpc: '2.0', method: 'x', params: { data: 'x'.repeat(6_000) } });
    await expect(replay(store, big)).rejects.toThrow(/not kept/);
    expect(store.bytes).toBeLessThanOrEqual(5_000);
    const bySize = new BoundedEventStore({ maxEvents: 1_000, maxBytes: 1_000 });
    for (let i = 0; i < 1_000; i++) await bySize.storeEvent('s', note(i));
    expect(bySize.bytes).toBeLessThanOrEqual(1_000);
    expect(bySize.size).toBeLessThan(1_000 / 60);
  });
  // Fails if the end marker were kept or replayed as a response (the client would get one for
  // a cancelled id), if hasEnded answered for another stream or an event after the end, or if
  // end events escaped the maxEvents bound.
  it('an end marker is kept as an end event of its stream: never replayed, and hasEnded says the stream ended after an event', async () => {
    const store = new BoundedEventStore({ maxEvents: 4 });
    const priming = await store.storeEvent('a', {} as JSONRPCMessage);
    const a1 = await store.storeEvent('a', note(1));
    const b1 = await store.storeEvent('b', note(2));
    expect(store.hasEnded(priming)).toBe(false);
    const end = await store.storeEvent('a', store.endMarker(7));
    expect(store.hasEnded(priming)).toBe(true);
    expect(store.hasEnded(a1)).toBe(true);
    expect(store.hasEnded(b1)).toBe(false);
    expect(store.hasEnded(end)).toBe(true); // the end itself: nothing more comes
    expect(store.hasEnded('nope.1')).toBe(false);
    expect(await replay(store, priming)).toEqual({ stream: 'a', sent: [[a1, note(1)]] });
    // The same response object not made by endMarker is an ordinary event.
    const plain: JSONRPCMessage = { jsonrpc: '2.0', id: 7, result: {} };
    const kept = await store.storeEvent('b', plain);
    expect(await replay(store, b1)).toEqual({ stream: 'b', sent: [[kept, plain]] });
    for (let i = 0; i < 10; i++) await store.storeEvent('c', store.endMarker(i));
    expect(store.size).toBe(4);
    expect(store.bytes).toBe(0);
  });
  // Fails if a response marked by endsStream were not followed by an end event (hasEnded false:
  // the SDK would hold the resume open), were not replayed itself, or if the mark leaked to
  // another message or stream.
  it('a response marked by endsStream is kept and replayed, then its stream has ended', async () => {
    const store = new BoundedEventStore();
    const priming = await store.storeEvent('a', {} as JSONRPCMessage);
    const b1 = await store.storeEvent('b', note(1));
    const response: JSONRPCMessage = { jsonrpc: '2.0', id: 2, result: { content: [] } };
    store.endsStream(response);
    const kept = await store.storeEvent('a', response);
    expect(store.hasEnded(priming)).toBe(true);
    expect(store.hasEnded(kept)).toBe(true); // a resume from the response itself: 204
    expect(store.hasEnded(b1)).toBe(false);
    expect(await replay(store, priming)).toEqual({ stream: 'a', sent: [[kept, response]] });
    expect(await replay(store, kept)).toEqual({ stream: 'a', sent: [] });
    // Marked once: the same object stored again is an ordinary event.
    const again = await store.storeEvent('b', response);
    expect(store.hasEnded(b1)).toBe(false);
    expect(await replay(store, b1)).toEqual({ stream: 'b', sent: [[again, response]] });
  });
});
