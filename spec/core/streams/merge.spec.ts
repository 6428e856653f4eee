import { getEventListeners } from 'node:events';
import { merge as ixMerge } from 'ix/asynciterable';
import { describe, expect, it } from 'vitest';
import { mergeManySources } from './many-sources.ts';
import { MergeEngine, mergeGenerators, Step, type MergeItem } from '../../../lib/core/streams/merge.ts';
import { gate, settle } from '../../helpers.ts';

async function* counted(label: string, n: number, log: string[], returnValue: string = `${label}:done`) {
  try {
    for (let i = 0; i < n; i++) {
      log.push(`${label} produces ${i}`);
      yield `${label}${i}`;
    }
    return returnValue;
  } finally {
    log.push(`${label} finally`);
  }
}

async function drain<Y, R>(it: AsyncIterable<MergeItem<Y, R>>): Promise<MergeItem<Y, R>[]> {
  const out: MergeItem<Y, R>[] = [];
  for await (const item of it) out.push(item);
  return out;
}

describe('M1 interleaves sources and keeps their return values', () => {
  it('yields every value tagged with its source index, then each return value', async () => {
    const log: string[] = [];
    const items = await drain(mergeGenerators([counted('a', 2, log), counted('b', 3, log)]));
    expect(items.filter((i) => !i.done).map((i) => [i.index, i.value]).sort()).toEqual(
      [[0, 'a0'], [0, 'a1'], [1, 'b0'], [1, 'b1'], [1, 'b2']].sort(),
    );
    expect(items.filter((i) => i.done)).toEqual(
      expect.arrayContaining([
        { index: 0, done: true, value: 'a:done' },
        { index: 1, done: true, value: 'b:done' },
      ]),
    );
    // Values of one source keep their order, and its return value comes last.
    const ofB = items.filter((i) => i.index === 1).map((i) => i.value);
    expect(ofB).toEqual(['b0', 'b1', 'b2', 'b:done']);
  });

  it('delivers items in the order they were produced across sources', async () => {
    const g1 = gate<string>();
    const g2 = gate<string>();
    async function* slow() {
      yield await g1.promise;
    }
    async function* fast() {
      yield await g2.promise;
    }
    const merged = mergeGenerators([slow(), fast()]);
    const first = merged.next();
    g2.open('fast');
    expect((await first).value).toEqual({ index: 1, done: false, value: 'fast' });
    expect((await merged.next()).value).toEqual({ index: 1, done: true, value: undefined });
    g1.open('slow');
    expect((await merged.next()).value).toEqual({ index: 0, done: false, value: 'slow' });
    await merged.return(undefined);
  });

  it('ix merge, by contrast, drops the return values (why toolrun has its own)', async () => {
    const log: string[] = [];
    const values: unknown[] = [];
    for await (const v of ixMerge(counted('a', 1, log), counted('b', 1, log))) values.push(v);
    expect(values).not.toContain('a:done');
  });
});

/**
 * M2, measured: the operations per delivered item while `stuck` sources sit idle with a step
 * outstanding. Counted: promise subscriptions (`then` calls — what `Promise.race` makes on
 * every candidate, and what a merge makes to pull a source) and the keyed-collection calls a
 * merge could spend per source (`Map`/`WeakMap` `get`/`set`, `Set` `add`/`delete` — ix's
 * `safeRace` subscribes once per promise but does a `WeakMap.get` and a `Set.add` per
 * candidate per item). Counted by wrapping those methods only while the items flow; no clock.
 */
async function operationsPerItem(merge: (sources: AsyncIterator<number>[]) => AsyncIterable<unknown>, stuck: number, items = 200): Promise<number> {
  const never = new Promise<IteratorResult<number>>(() => {});
  const idle = (): AsyncIterator<number> => ({ next: () => never });
  async function* busy() {
    for (let i = 0; ; i++) yield i;
  }
  const sources = [...Array.from({ length: stuck }, idle), busy()];
  const iterator = merge(sources)[Symbol.asyncIterator]();
  await iterator.next(); // warm-up: every source started
  const counted: [object, string][] = [
    [Promise.prototype, 'then'],
    [Map.prototype, 'get'],
    [Map.prototype, 'set'],
    [WeakMap.prototype, 'get'],
    [WeakMap.prototype, 'set'],
    [Set.prototype, 'add'],
    [Set.prototype, 'delete'],
  ];
  const originals = counted.map(([proto, key]) => (proto as Record<string, (...a: unknown[]) => unknown>)[key]!);
  let operations = 0;
  counted.forEach(([proto, key], k) => {
    const original = originals[k]!;
    (proto as Record<string, unknown>)[key] = function (this: unknown, ...args: unknown[]) {
      operations++;
      return original.apply(this, args);
    };
  });
  try {
    for (let i = 0; i < items; i++) await iterator.next();
  } finally {
    counted.forEach(([proto, key], k) => {
      (proto as Record<string, unknown>)[key] = originals[k];
    });
  }
  void iterator.return?.();
  return operations / items;
}

/** The check of M2: per-item work with 2,000 idle sources is that with 10, within one operation. */
async function expectConstantPerItem(merge: (sources: AsyncIterator<number>[]) => AsyncIterable<unknown>, idle = 2_000): Promise<void> {
  const few = await operationsPerItem(merge, 10);
  const many = await operationsPerItem(merge, idle);
  expect(many - few, `operations per item: ${few} with 10 idle sources, ${many} with ${idle}`).toBeLessThan(1);
}

/** A merge that races every pending source per item, as ix's does: the check must catch it. */
async function* raceMerge(sources: AsyncIterator<number>[]): AsyncGenerator<number, void, undefined> {
  const pending = new Map<number, Promise<{ i: number; r: IteratorResult<number> }>>();
  const pull = (i: number): void => {
    pending.set(i, sources[i]!.next().then((r) => ({ i, r })));
  };
  sources.forEach((_, i) => pull(i));
  while (pending.size > 0) {
    const { i, r } = await Promise.race(pending.values());
    if (r.done === true) pending.delete(i);
    else {
      pull(i);
      yield r.value;
    }
  }
}

describe('M2 cost per item does not depend on how many sources are active', () => {
  it('mergeGenerators: the operations per item with 2,000 idle sources are those with 10', async () => {
    await expectConstantPerItem((sources) => mergeGenerators<number, unknown>(sources));
  });

  it('the check catches a Promise.race merge: a small one written here, and ix’s merge', async () => {
    // 200 idle sources: a merge that touches every pending source per item already costs ~200
    // operations more per item than with 10 (2,000 made this case 0.5 s of CPU).
    await expect(expectConstantPerItem(raceMerge, 200)).rejects.toThrow(/operations per item/);
    const ix = (sources: AsyncIterator<number>[]): AsyncIterable<unknown> => {
      const [first, ...rest] = sources.map((s) => ({ [Symbol.asyncIterator]: () => s }));
      return ixMerge(first!, ...rest);
    };
    await expect(expectConstantPerItem(ix, 200)).rejects.toThrow(/operations per item/);
  });

  it('delivers one item with 20,000 stuck sources active without touching them', async () => {
    // Each stuck source counts how often its next() is called: never twice while a step is outstanding.
    let nextCalls = 0;
    const never = new Promise<IteratorResult<number>>(() => {});
    const stuck = (): AsyncIterator<number> => ({
      next() {
        nextCalls++;
        return never;
      },
    });
    const sources: AsyncIterator<number>[] = Array.from({ length: 20_000 }, stuck);
    async function* busy() {
      for (let i = 0; i < 1_000; i++) yield i;
    }
    const merged = mergeGenerators<number, unknown>([...sources, busy()]);
    let busyItems = 0;
    for await (const item of merged) {
      if (item.index === 20_000 && !item.done) busyItems++;
      if (item.done) break;
    }
    expect(busyItems).toBe(1_000);
    expect(nextCalls).toBe(20_000); // one pending next() per stuck source, never more
  });
});

describe('M3 each source is pulled at most one step ahead of the consumer', () => {
  it('does not produce a second value before the first is taken', async () => {
    const log: string[] = [];
    const merged = mergeGenerators([counted('a', 5, log)]);
    const first = await merged.next();
    expect(first.value).toMatchObject({ value: 'a0' });
    await settle();
    expect(log).toEqual(['a produces 0']);
    await merged.next();
    await settle();
    expect(log).toEqual(['a produces 0', 'a produces 1']);
    await merged.return(undefined);
  });
});

describe('M4 concurrency caps active sources; sources may be lazy or async', () => {
  it('never has more than `concurrency` sources active, and starts the next when one finishes', async () => {
    let active = 0;
    let peak = 0;
    const gates = Array.from({ length: 6 }, () => gate());
    async function* worker(i: number) {
      active++;
      peak = Math.max(peak, active);
      try {
        await gates[i]!.promise;
        return i;
      } finally {
        active--;
      }
    }
    function* lazy() {
      for (let i = 0; i < 6; i++) yield worker(i);
    }
    const merged = mergeGenerators(lazy(), { concurrency: 2 });
    const done: number[] = [];
    const consuming = (async () => {
      for await (const item of merged) if (item.done) done.push(item.value);
    })();
    await settle();
    expect(active).toBe(2);
    gates[1]!.open();
    await settle();
    expect(active).toBe(2); // source 2 took the free slot
    for (const g of gates) g.open();
    await consuming;
    expect(peak).toBe(2);
    expect(done.sort()).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('reads an async iterable of sources only when there is room', async () => {
    let handedOut = 0;
    async function* sources() {
      for (let i = 0; i < 4; i++) {
        handedOut++;
        yield (async function* () {
          return i;
        })();
      }
    }
    const merged = mergeGenerators(sources(), { concurrency: 1 });
    const first = await merged.next();
    expect(first.value).toEqual({ index: 0, done: true, value: 0 });
    expect(handedOut).toBe(1);
    const rest = await drain(merged);
    expect(rest.map((r) => r.value)).toEqual([1, 2, 3]);
  });

  it('rejects a concurrency that is not a positive integer', () => {
    expect(() => mergeGenerators([], { concurrency: 0 })).toThrow(/concurrency must be a positive integer or Infinity, received 0/);
    expect(() => mergeGenerators([], { concurrency: 1.5 })).toThrow(TypeError);
  });
});

describe('M5 cleanup: a throwing source closes the others; consumer exit and abort return every source', () => {
  it('closes the other sources and rethrows when one throws', async () => {
    const log: string[] = [];
    async function* bad() {
      yield 'x';
      throw new Error('bad source');
    }
    const stuck = gate();
    async function* parked() {
      try {
        yield 'p';
        await stuck.promise;
      } finally {
        log.push('parked finally');
      }
    }
    await expect(drain(mergeGenerators([bad(), counted('a', 100, log), parked()]))).rejects.toThrow('bad source');
    await settle();
    expect(log).toContain('a finally');
    // `parked` is stuck in an await: return() was called but cannot run before it resumes.
    stuck.open();
    await settle();
    expect(log).toContain('parked finally');
  });

  it('returns every started source on break, without waiting for one parked in an await', async () => {
    const log: string[] = [];
    const returned: string[] = [];
    const never = new Promise<never>(() => {});
    async function* hung() {
      try {
        yield 'h';
        await never;
      } finally {
        log.push('hung finally');
      }
    }
    const hungGen = hung();
    const original = hungGen.return.bind(hungGen);
    hungGen.return = (v) => {
      returned.push('hung');
      return original(v);
    };
    const merged = mergeGenerators([counted('a', 10, log), hungGen]);
    let n = 0;
    for await (const item of merged) {
      if (!item.done && ++n === 3) break; // must not hang on `hung`
    }
    expect(returned).toEqual(['hung']);
    await settle();
    expect(log).toContain('a finally');
  });

  it('throws the abort reason and returns every source when the signal aborts', async () => {
    const controller = new AbortController();
    const log: string[] = [];
    async function* waiting() {
      try {
        await new Promise(() => {});
      } finally {
        log.push('never runs: parked');
      }
    }
    const merged = mergeGenerators([waiting(), counted('a', 1, log)], { signal: controller.signal });
    const pending = drain(merged);
    await settle();
    controller.abort(new Error('stop'));
    await expect(pending).rejects.toThrow('stop');
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});

describe('M6 works for 100,000 sources in one merge', () => {
  // The same merge at a tenth of the size; 100,000 sources (about 1.3 s of CPU) are
  // spec/core/streams/merge.slow.spec.ts, in npm run test:slow. Fails if a finished source's
  // return value is lost or counted twice.
  it('merges 10,000 sources of 2 items each', async () => {
    const { values, returns, sum } = await mergeManySources(10_000);
    expect(values).toBe(10_000);
    expect(returns).toBe(10_000);
    expect(sum).toBe(-((10_000 * 9_999) / 2));
  });
});

describe('M1 a source’s callbacks serve another source only once nothing of it can still arrive', () => {
  const pending = (): AsyncIterator<unknown, unknown, undefined> => ({ next: () => new Promise<never>(() => {}) });

  it('a foreign thenable that calls back twice: the second call is dropped, not taken for the next source', async () => {
    let fulfil: ((result: IteratorResult<unknown, unknown>) => void) | undefined;
    const foreign = {
      next: () => ({
        then(onFulfilled: (result: IteratorResult<unknown, unknown>) => void) {
          fulfil = onFulfilled;
        },
      }),
    } as unknown as AsyncIterator<unknown, unknown, undefined>;
    const engine = new MergeEngine<string>();
    engine.add('a', foreign);
    fulfil!({ done: true, value: 'a returned' });
    const first = engine.take()!;
    expect([first.tag, first.step, first.value]).toEqual(['a', Step.Done, 'a returned']);
    engine.add('b', pending());
    fulfil!({ done: true, value: 'a again' });
    await settle();
    expect(engine.take()).toBeUndefined();
    expect(engine.activeCount).toBe(1);
  });

  it('a source let go of: its late step is dropped, not taken for the next source', async () => {
    let fulfil: ((result: IteratorResult<unknown, unknown>) => void) | undefined;
    const late = { next: () => new Promise<IteratorResult<unknown, unknown>>((resolve) => (fulfil = resolve)), return: () => Promise.resolve({ done: true as const, value: undefined }) };
    const engine = new MergeEngine<string>();
    const slot = engine.add('a', late);
    engine.detach(slot);
    engine.add('b', pending());
    fulfil!({ done: true, value: 'a late' });
    await settle();
    expect(engine.take()).toBeUndefined();
    expect(engine.activeCount).toBe(1);
  });

  it('sources that end one after another each get their own steps (the callbacks are reused)', async () => {
    const engine = new MergeEngine<number>();
    const seen: unknown[] = [];
    for (let i = 0; i < 5; i++) {
      engine.add(i, (async function* () {
        yield `${i}:0`;
        return `${i}:done`;
      })());
      for (let steps = 0; steps < 2; ) {
        const record = engine.take();
        if (record === undefined) {
          await engine.wait();
          continue;
        }
        steps++;
        seen.push([record.tag, record.value]);
        if (record.step === Step.Value) engine.pull(record.slot!);
      }
    }
    expect(seen).toEqual([0, 1, 2, 3, 4].flatMap((i) => [[i, `${i}:0`], [i, `${i}:done`]]));
  });
});
