/**
 * `Channel`: the core's single-consumer push queue (used by the merge engine and the run's
 * outbox). FIFO order, wake-ups, closing, and that its storage is kept and bounded.
 */
import { describe, expect, it } from 'vitest';
import { Channel } from '../../../lib/core/streams/channel.ts';

describe('Channel: a single-consumer push queue', () => {
  it('hands items out in push order, across many growths of its ring', () => {
    const channel = new Channel<number>(2);
    const out: number[] = [];
    for (let i = 0; i < 1_000; i++) {
      channel.push(i);
      // Take one in three: the ring wraps and grows while holding items.
      if (i % 3 === 0) out.push(channel.take()!);
    }
    expect(channel.size).toBe(1_000 - out.length);
    for (let v = channel.take(); v !== undefined; v = channel.take()) out.push(v);
    expect(out).toEqual(Array.from({ length: 1_000 }, (_, i) => i));
    expect(channel.size).toBe(0);
    expect(channel.take()).toBeUndefined();
  });

  it('wait() resolves at the next push, and at once when an item already waits', async () => {
    const channel = new Channel<string>();
    let woke = false;
    const waiting = channel.wait().then(() => {
      woke = true;
    });
    await Promise.resolve();
    expect(woke).toBe(false);
    channel.push('a');
    await waiting;
    expect(woke).toBe(true);
    await channel.wait(); // an item waits: resolves without a push
    expect(channel.take()).toBe('a');
  });

  it('two wait() calls before a push share one promise; notify() wakes without an item', async () => {
    const channel = new Channel<string>();
    const first = channel.wait();
    expect(channel.wait()).toBe(first);
    channel.notify();
    await first;
    expect(channel.take()).toBeUndefined();
  });

  it('close() drops waiting items, wakes the consumer, and drops later pushes', async () => {
    const channel = new Channel<number>();
    channel.push(1);
    channel.take();
    const waiting = channel.wait();
    channel.push(2);
    channel.close();
    await waiting;
    expect(channel.closed).toBe(true);
    expect(channel.take()).toBeUndefined();
    expect(channel.push(3)).toBe(false);
    expect(channel.size).toBe(0);
    await channel.wait(); // closed: resolves at once
  });

  it('fills and drains 1,000 times, in order each time (the ring wraps at every offset)', () => {
    const channel = new Channel<number>(16);
    let misordered = 0;
    for (let round = 0; round < 1_000; round++) {
      const count = 1 + (round % 37);
      for (let i = 0; i < count; i++) channel.push(i);
      for (let i = 0; i < count; i++) if (channel.take() !== i) misordered++;
      expect(channel.take()).toBeUndefined();
    }
    expect(misordered).toBe(0);
    expect(channel.size).toBe(0);
  });
});
