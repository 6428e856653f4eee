/**
 * `mergeGenerators`: interleaves many async generators into one stream, keeping their
 * return values (contract M1–M6).
 *
 * How it works: every active source has at most one `next()` outstanding. When it settles,
 * a record goes onto one shared FIFO queue and the single waiting consumer is woken. There
 * is no `Promise.race` over the sources, so an item costs the same with 10 sources or
 * 100,000 (M2). A source is pulled again only after the consumer has taken its previous
 * item (M3). ix's `merge` races all sources per item, drops return values and closes no
 * source on break or error (`../shared/research/libraries.md` §1); this is why the project
 * writes its own.
 *
 * @module
 */

/** One item of a merged stream: a value a source yielded, or (`done: true`) its return value. */
export type MergeItem<Y, R> =
  | { index: number; done: false; value: Y }
  | { index: number; done: true; value: R };

/** Options of {@link mergeGenerators}. */
export interface MergeOptions {
  /**
   * Most sources active at once; the next source is taken from `sources` when one finishes
   * (M4). `Infinity` allowed.
   * @default Infinity
   */
  concurrency?: number;
  /**
   * Aborting it ends the merge: every started, unfinished source gets `return()` (not
   * awaited) and the merge throws `signal.reason` (M5).
   */
  signal?: AbortSignal;
}

type Source<Y, R> = AsyncIterator<Y, R, undefined> | AsyncIterable<Y>;
type SourceList<Y, R> = Iterable<Source<Y, R>> | AsyncIterable<Source<Y, R>>;

/** A settled step of a source, waiting in the queue for the consumer. */
interface Settled {
  slot: Slot;
  result: IteratorResult<unknown, unknown> | undefined;
  error: unknown;
  failed: boolean;
}

/**
 * One active source. The two handlers are made once per source, not once per item.
 * Invariant: `pulling` is true exactly while a `next()` of this source is outstanding.
 */
interface Slot {
  index: number;
  iterator: AsyncIterator<unknown, unknown, undefined>;
  finished: boolean;
  onValue: (result: IteratorResult<unknown, unknown>) => void;
  onError: (error: unknown) => void;
}

/**
 * Interleaves async generators (or any async iterators) into one async generator.
 *
 * Yields `{ index, done: false, value }` for each value a source yields, and
 * `{ index, done: true, value }` once per source with its return value (M1). `index` is
 * the source's position in `sources`. Items of one source keep their order; across sources
 * they come in the order they were produced.
 *
 * - Cost per item is O(1) whatever the number of active sources (M2), and it works with
 *   100,000 sources (M6).
 * - Each source is pulled at most one step ahead of the consumer (M3).
 * - `sources` may be an array, a lazy iterable or an async iterable (pulled only when a
 *   slot is free); at most `concurrency` sources are active (M4).
 * - If a source throws, the merge returns every other started source and rethrows that
 *   error. When the consumer stops early (break, throw, `return()`) or `signal` aborts,
 *   every started, unfinished source gets `return()` — not awaited, because `return()` on
 *   a generator parked in an `await` queues behind that `await` and could hang the
 *   consumer's `break` forever (M5). The `sources` iterator itself is returned the same way.
 *
 * @throws the first error a source throws; `signal.reason` when `signal` aborts;
 *   a `TypeError` when `concurrency` is not a positive integer or `Infinity`.
 *
 * @example
 * ```ts
 * for await (const item of mergeGenerators([a(), b()], { concurrency: 2 })) {
 *   if (item.done) results[item.index] = item.value;
 *   else console.log(`source ${item.index} yielded`, item.value);
 * }
 * ```
 */
export function mergeGenerators<Y, R>(
  sources: SourceList<Y, R>,
  options: MergeOptions = {},
): AsyncGenerator<MergeItem<Y, R>, void, undefined> {
  const concurrency = options.concurrency ?? Infinity;
  if (!(concurrency === Infinity || (Number.isInteger(concurrency) && concurrency > 0))) {
    throw new TypeError(`mergeGenerators: options.concurrency must be a positive integer or Infinity, received ${String(concurrency)}`);
  }
  if (sources === null || typeof sources !== 'object') {
    throw new TypeError(`mergeGenerators: sources must be an iterable or async iterable, received ${sources === null ? 'null' : typeof sources}`);
  }
  return run(sources as SourceList<unknown, unknown>, concurrency, options.signal) as AsyncGenerator<MergeItem<Y, R>, void, undefined>;
}

async function* run(
  sources: SourceList<unknown, unknown>,
  concurrency: number,
  signal: AbortSignal | undefined,
): AsyncGenerator<MergeItem<unknown, unknown>, void, undefined> {
  // Queue of settled steps; `head` is the next to hand out. Compacted when half consumed.
  let queue: Settled[] = [];
  let head = 0;
  // The consumer's wake-up call, set only while it waits on an empty queue.
  let wake: (() => void) | undefined;
  const notify = (): void => {
    if (wake !== undefined) {
      const w = wake;
      wake = undefined;
      w();
    }
  };

  // Started, unfinished sources, for cleanup. A Set: removal is O(1) when one finishes.
  const active = new Set<Slot>();
  let nextIndex = 0;

  const isAsync = Symbol.asyncIterator in sources;
  const syncSources = isAsync ? undefined : (sources as Iterable<Source<unknown, unknown>>)[Symbol.iterator]();
  const asyncSources = isAsync
    ? (sources as AsyncIterable<Source<unknown, unknown>>)[Symbol.asyncIterator]()
    : undefined;
  let sourcesDone = false;
  // True while a `next()` on an async `sources` is outstanding (only one at a time).
  let sourcesPending = false;
  let sourcesError: { error: unknown } | undefined;
  let aborted = false;

  const push = (record: Settled): void => {
    queue.push(record);
    notify();
  };

  const start = (source: Source<unknown, unknown>): void => {
    const iterator = toIterator(source);
    const slot: Slot = {
      index: nextIndex++,
      iterator,
      finished: false,
      onValue: (result) => push({ slot, result, error: undefined, failed: false }),
      onError: (error) => push({ slot, result: undefined, error, failed: true }),
    };
    active.add(slot);
    pull(slot);
  };

  const pull = (slot: Slot): void => {
    let step: Promise<IteratorResult<unknown, unknown>>;
    try {
      step = slot.iterator.next();
    } catch (error) {
      // A hand-written iterator whose next() throws synchronously fails like a rejection.
      slot.onError(error);
      return;
    }
    step.then(slot.onValue, slot.onError);
  };

  const onSource = (result: IteratorResult<Source<unknown, unknown>, unknown>): void => {
    sourcesPending = false;
    if (result.done) sourcesDone = true;
    else {
      try {
        start(result.value);
        // A new source found room: take the next one while there is still room.
        fill();
      } catch (error) {
        sourcesDone = true;
        sourcesError = { error };
      }
    }
    notify();
  };
  const onSourceError = (error: unknown): void => {
    sourcesPending = false;
    sourcesDone = true;
    sourcesError = { error };
    notify();
  };

  // Takes sources while there is room. Synchronous `sources` are read at once; an async one
  // has one `next()` outstanding at a time.
  const fill = (): void => {
    while (!sourcesDone && active.size < concurrency) {
      if (syncSources !== undefined) {
        const r = syncSources.next();
        if (r.done) sourcesDone = true;
        else start(r.value);
      } else {
        if (!sourcesPending) {
          sourcesPending = true;
          asyncSources!.next().then(onSource, onSourceError);
        }
        return;
      }
    }
  };

  const onAbort = (): void => {
    aborted = true;
    notify();
  };

  try {
    if (signal !== undefined) {
      signal.throwIfAborted();
      signal.addEventListener('abort', onAbort, { once: true });
    }
    fill();
    for (;;) {
      if (aborted) throw signal!.reason;
      if (head === queue.length) {
        if (sourcesError !== undefined) throw sourcesError.error;
        if (active.size === 0 && sourcesDone) return;
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        continue;
      }
      const record = queue[head]!;
      queue[head++] = undefined as unknown as Settled;
      if (head > 1024 && head * 2 > queue.length) {
        queue = queue.slice(head);
        head = 0;
      }
      const slot = record.slot;
      if (record.failed) {
        slot.finished = true;
        active.delete(slot);
        throw record.error;
      }
      const result = record.result!;
      if (result.done === true) {
        slot.finished = true;
        active.delete(slot);
        yield { index: slot.index, done: true, value: result.value };
        // The slot is reused only after the consumer took the return value, so a run with
        // `concurrency: 1` never starts source i+1 before source i's end reached the consumer.
        fill();
      } else {
        yield { index: slot.index, done: false, value: result.value };
        pull(slot);
      }
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
    for (const slot of active) closeWithoutWaiting(slot.iterator);
    active.clear();
    if (asyncSources !== undefined && !sourcesDone) closeWithoutWaiting(asyncSources);
    if (syncSources !== undefined && !sourcesDone) {
      try {
        syncSources.return?.();
      } catch {
        // A failing return() of the sources list changes nothing for the consumer.
      }
    }
  }
}

function toIterator(source: Source<unknown, unknown>): AsyncIterator<unknown, unknown, undefined> {
  if (typeof (source as AsyncIterator<unknown>).next === 'function') return source as AsyncIterator<unknown, unknown, undefined>;
  if (source !== null && typeof source === 'object' && Symbol.asyncIterator in source) {
    return (source as AsyncIterable<unknown>)[Symbol.asyncIterator]() as AsyncIterator<unknown, unknown, undefined>;
  }
  throw new TypeError(`mergeGenerators: each source must be an async iterator or async iterable, received ${typeof source}`);
}

/**
 * Calls `return()` without awaiting it. Awaiting would hang when the source is parked in an
 * `await` that never settles: its `return()` is queued behind that pending step. Its
 * rejection, if any, is swallowed on purpose: the consumer already left or failed.
 */
export function closeWithoutWaiting(iterator: { return?: (value?: never) => unknown }): void {
  try {
    const r = iterator.return?.();
    if (r !== undefined && typeof (r as Promise<unknown>).then === 'function') {
      (r as Promise<unknown>).then(undefined, ignore);
    }
  } catch {
    // A synchronous throw from return() is as uninteresting here as a rejection.
  }
}

function ignore(): void {}
