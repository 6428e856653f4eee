/**
 * NotificationPacer (lib/mcp/server/pacer.ts): what a session sends to a slow client, against a
 * stand-in outlet whose backpressure the spec sets (an EventEmitter with the fields of a
 * Node Writable that the pacer reads). No timers: `drain` is emitted by the spec.
 */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { NotificationPacer, type PacedMessage } from '../../lib/mcp/server/pacer.ts';

class FakeOutlet extends EventEmitter {
  writableLength = 0;
  writableNeedDrain = false;
  writableEnded = false;
  destroyed = false;
}

function progress(token: number, n: number, message = `step ${n}`): PacedMessage {
  return { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: n, message } };
}

function setup(maxQueuedBytes = 1_000) {
  const outlet = new FakeOutlet();
  const sent: PacedMessage[] = [];
  const pacer = new NotificationPacer({
    send: async (message) => void sent.push(message),
    outletFor: () => outlet,
    queuedBytes: () => outlet.writableLength,
    maxQueuedBytes,
  });
  return { outlet, sent, pacer };
}

describe('NotificationPacer', () => {
  // Fails if progress were sent while the outlet waits for drain (sent would hold all 100).
  it('while the outlet waits for drain, progress is coalesced: the newest per token goes out on drain, the others are counted', async () => {
    const { outlet, sent, pacer } = setup();
    await pacer.send(progress(1, 1), { relatedRequestId: 1 });
    outlet.writableNeedDrain = true;
    for (let n = 2; n <= 100; n++) await pacer.send(progress(1, n), { relatedRequestId: 1 });
    await pacer.send(progress(2, 1), { relatedRequestId: 2 });
    expect(sent.map((m) => m.params?.progress)).toEqual([1]);
    expect(pacer.dropped).toBe(98); // 2…99 replaced by 100
    outlet.writableNeedDrain = false;
    outlet.emit('drain');
    expect(sent.map((m) => [m.params?.progressToken, m.params?.progress])).toEqual([[1, 1], [1, 100], [2, 1]]);
    expect(outlet.listenerCount('drain') + outlet.listenerCount('close')).toBe(0);
  });

  // Fails if a held progress went out after its call's response (a client would see progress for an answered request).
  it('a response drops the progress held for its request; responses and requests always go out', async () => {
    const { outlet, sent, pacer } = setup();
    outlet.writableNeedDrain = true;
    await pacer.send(progress(1, 1), { relatedRequestId: 7 });
    await pacer.send({ jsonrpc: '2.0', id: 7, result: { content: [] } });
    await pacer.send({ jsonrpc: '2.0', id: 1, method: 'sampling/createMessage', params: {} }, { relatedRequestId: 8 });
    outlet.writableNeedDrain = false;
    outlet.emit('drain');
    expect(sent.map((m) => m.id ?? m.method)).toEqual([7, 1]);
    expect(pacer.dropped).toBe(1);
  });

  // Fails if other notifications were queued past the ceiling.
  it('at the session’s ceiling other notifications are dropped and counted; a progress message is cut to 16,384 characters', async () => {
    const { outlet, sent, pacer } = setup(1_000);
    outlet.writableLength = 1_000;
    await pacer.send({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x' } });
    expect(sent).toEqual([]);
    expect(pacer.dropped).toBe(1);
    outlet.writableLength = 0;
    await pacer.send(progress(3, 1, 'y'.repeat(20_000)), { relatedRequestId: 3 });
    expect(sent[0]!.params!.message).toBe(`${'y'.repeat(16_384)}… [3616 more characters not sent]`);
  });

  // Fails if a progress for a closed outlet were sent or kept.
  it('progress for an outlet that closed is dropped; what was held is dropped when it closes', async () => {
    const { outlet, sent, pacer } = setup();
    outlet.writableNeedDrain = true;
    await pacer.send(progress(1, 1), { relatedRequestId: 1 });
    outlet.destroyed = true;
    outlet.emit('close');
    await pacer.send(progress(1, 2), { relatedRequestId: 1 });
    expect(sent).toEqual([]);
    expect(pacer.dropped).toBe(2);
    expect(pacer.heldBytes).toBe(0);
  });
});
