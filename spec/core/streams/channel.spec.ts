/**
 * Channel (lib/core/streams/channel.ts): the single-consumer push channel behind the
 * relays of withRetry, the streamed turn's calls and the MCP bridge's progress.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Channel } from '../../../lib/core/streams/channel.ts';
import { settle } from '../../helpers.ts';

/** Tracks whether a promise settled, without awaiting it. */
function track(promise: Promise<unknown>): { readonly settled: boolean } {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  return {
    get settled() {
      return settled;
    },
  };
}

describe('Channel: values in push order to one consumer', () => {
  it('buffers pushes from several producers and hands them out in push order; a waiting consumer gets the next push', async () => {
    const channel = new Channel<string>({ highWaterMark: Infinity });
    channel.push('a1');
    channel.push('b1');
    expect(channel.size).toBe(2);
    expect(await channel.next()).toEqual({ done: false, value: 'a1' });
    expect(await channel.next()).toEqual({ done: false, value: 'b1' });
    const waiting = channel.next();
    const state = track(waiting);
    await settle(2);
    expect(state.settled).toBe(false);
    channel.push('a2');
    expect(await waiting).toEqual({ done: false, value: 'a2' });
    expect(channel.size).toBe(0);
  });

  it('keeps the order across many fill/drain cycles (a model check over random interleavings)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(fc.constant('push' as const), fc.constant('read' as const)), { maxLength: 200 }), async (ops) => {
        const channel = new Channel<number>({ highWaterMark: Infinity });
        const model: number[] = [];
        let n = 0;
        // Step by step in plain code, the differences from the model asserted once per case.
        const broken: string[] = [];
        for (const op of ops) {
          if (op === 'push') {
            channel.push(n);
            model.push(n++);
          } else if (model.length > 0) {
            const want = model.shift();
            const got = await channel.next();
            if (got.done === true || got.value !== want) broken.push(`next() gave ${JSON.stringify(got)}, the model ${want}`);
          }
          if (channel.size !== model.length) broken.push(`size ${channel.size}, the model ${model.length}`);
        }
        expect(broken).toEqual([]);
        channel.close();
        const rest: number[] = [];
        for await (const value of channel) rest.push(value);
        expect(rest).toEqual(model);
      }),
      { numRuns: 50 },
    );
  });
});

describe('Channel: close', () => {
  it('close() without an error: the buffer is read first, then done, forever; later pushes are ignored', async () => {
    const channel = new Channel<number>();
    channel.push(1);
    channel.close();
    expect(channel.closed).toBe(true);
    expect(channel.push(2)).toBe(false);
    expect(await channel.next()).toEqual({ done: false, value: 1 });
    expect(await channel.next()).toEqual({ done: true, value: undefined });
    expect(await channel.next()).toEqual({ done: true, value: undefined });
  });

  it('close(error): the buffer is read first, then next() rejects with the error once; a waiting consumer is woken', async () => {
    const failure = new Error('stream broke');
    const channel = new Channel<number>();
    channel.push(1);
    channel.close(failure);
    expect(await channel.next()).toEqual({ done: false, value: 1 });
    await expect(channel.next()).rejects.toBe(failure);
    expect(await channel.next()).toEqual({ done: true, value: undefined });

    const idle = new Channel<number>();
    const waiting = idle.next();
    idle.close(failure);
    await expect(waiting).rejects.toBe(failure);
  });

  it('close(undefined) is an error too: undefined is what next() rejects with', async () => {
    const channel = new Channel<number>();
    channel.close(undefined);
    await expect(channel.next()).rejects.toBeUndefined();
  });
});

describe('Channel: backpressure signal', () => {
  it('push returns false at the high-water mark; ready() resolves once the consumer read below it', async () => {
    const channel = new Channel<number>({ highWaterMark: 2 });
    expect(channel.push(1)).toBe(true);
    expect(channel.push(2)).toBe(false);
    expect(channel.push(3)).toBe(false); // never blocks, never drops: the producer decides
    const ready = channel.ready();
    const state = track(ready);
    await channel.next();
    await settle(2);
    expect(state.settled).toBe(false); // still 2 buffered
    await channel.next();
    await ready;
    expect(channel.size).toBe(1);
    await channel.ready(); // below the mark: at once
  });

  it('highWaterMark 0: a producer waiting on ready() is released only while the consumer waits (lockstep, M3)', async () => {
    const channel = new Channel<number>({ highWaterMark: 0 });
    let pulled = 0;
    const producer = (async () => {
      for (let i = 0; i < 3; i++) {
        pulled++;
        channel.push(i);
        await channel.ready();
        if (channel.closed) return;
      }
      channel.close();
    })();
    await settle();
    expect(pulled).toBe(1); // one value ahead of a consumer that has not asked yet
    expect(await channel.next()).toEqual({ done: false, value: 0 });
    await settle();
    expect(pulled).toBe(1); // the consumer holds value 0 and has not asked again
    const values: number[] = [];
    for await (const value of channel) values.push(value);
    await producer;
    expect(values).toEqual([1, 2]);
    expect(pulled).toBe(3);
  });

  it('ready() resolves when the channel is closed or the consumer leaves (check closed after it)', async () => {
    const closing = new Channel<number>({ highWaterMark: 1 });
    closing.push(1);
    const waitingForClose = closing.ready();
    closing.close();
    await waitingForClose;
    expect(closing.closed).toBe(true);

    const left = new Channel<number>({ highWaterMark: 1 });
    left.push(1);
    const waitingForReturn = left.ready();
    await left.return();
    await waitingForReturn;
    expect(left.closed).toBe(true);
  });

  it('rejects a malformed high-water mark at once', () => {
    expect(() => new Channel({ highWaterMark: -1 })).toThrow('Channel: highWaterMark must be a non-negative integer or Infinity, received -1');
    expect(() => new Channel({ highWaterMark: 1.5 })).toThrow(TypeError);
  });
});

describe('Channel: the consumer leaves', () => {
  it('break out of for await calls return(): the buffer is dropped, pushes are ignored, a close error is never raised', async () => {
    const channel = new Channel<number>({ highWaterMark: Infinity });
    channel.push(1);
    channel.push(2);
    channel.push(3);
    for await (const value of channel) {
      expect(value).toBe(1);
      break;
    }
    expect(channel.closed).toBe(true);
    expect(channel.size).toBe(0);
    expect(channel.push(4)).toBe(false);
    channel.close(new Error('too late'));
    expect(await channel.next()).toEqual({ done: true, value: undefined });
  });

  it('return() while the consumer waits in next(): that next() ends done', async () => {
    const channel = new Channel<number>();
    const waiting = channel.next();
    await channel.return();
    expect(await waiting).toEqual({ done: true, value: undefined });
  });
});

describe('Q1 Channel: one consumer, enforced', () => {
  // Fails if next() no longer checks for a pending call: before the check, the second call
  // replaced the first one's resolver, so the first stayed pending forever.
  it('Q1: a second next() while one is pending rejects with a TypeError; the pending one still gets the next value', async () => {
    const channel = new Channel<string>();
    const first = channel.next();
    const firstState = track(first);
    await expect(channel.next()).rejects.toThrow(TypeError);
    await expect(channel.next()).rejects.toThrow(/already waiting; a Channel has one consumer/);
    channel.push('a');
    await settle(2);
    expect(firstState.settled).toBe(true);
    expect(await first).toEqual({ done: false, value: 'a' });
    // The rule is about overlapping calls only: once the first settled, next() works again.
    channel.push('b');
    expect(await channel.next()).toEqual({ done: false, value: 'b' });
  });

  it('Q1: the refused call changes nothing: close() still ends the pending next() with its error', async () => {
    const channel = new Channel<number>();
    const first = channel.next();
    await expect(channel.next()).rejects.toThrow(TypeError);
    channel.close(new Error('source failed'));
    await expect(first).rejects.toThrow('source failed');
    expect(await channel.next()).toEqual({ done: true, value: undefined });
  });
});

describe('Channel, read with take()/wait() (the merge engine and the outbox)', () => {
  it('hands items out in push order, across many growths of its ring', () => {
    const channel = new Channel<number>({ highWaterMark: Infinity, capacity: 2 });
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

  it('return() drops waiting items, wakes the consumer, and drops later pushes', async () => {
    const channel = new Channel<number>();
    channel.push(1);
    channel.take();
    const waiting = channel.wait();
    channel.push(2);
    void channel.return();
    await waiting;
    expect(channel.closed).toBe(true);
    expect(channel.take()).toBeUndefined();
    expect(channel.push(3)).toBe(false);
    expect(channel.size).toBe(0);
    await channel.wait(); // closed: resolves at once
  });

  it('close() wakes a consumer in wait(); it takes what was buffered, then nothing', async () => {
    const channel = new Channel<number>({ highWaterMark: Infinity });
    channel.push(1);
    channel.take();
    const waiting = channel.wait();
    channel.push(2);
    channel.close();
    await waiting;
    expect(channel.take()).toBe(2);
    expect(channel.take()).toBeUndefined();
    expect(channel.push(3)).toBe(false);
    await channel.wait(); // closed: resolves at once
  });

  it('fills and drains 1,000 times, in order each time (the ring wraps at every offset)', () => {
    const channel = new Channel<number>({ highWaterMark: Infinity, capacity: 16 });
    let misordered = 0;
    for (let round = 0; round < 1_000; round++) {
      const count = 1 + (round % 37);
      for (let i = 0; i < count; i++) channel.push(i);
      for (let i = 0; i < count; i++) if (channel.take() !== i) misordered++;
      if (channel.take() !== undefined) misordered++;
    }
    expect(misordered).toBe(0);
    expect(channel.size).toBe(0);
  });
});
