/**
 * The merge combinator (contract M1–M6): many async iterators in, one stream of their
 * steps out, in the order they were produced, return values kept.
 *
 * How it works: every active source has at most one `next()` outstanding. When it settles,
 * the source's slot (its own record) goes onto one shared FIFO queue — a {@link Channel} —
 * and the single waiting consumer is woken. There is no `Promise.race` over the sources, so
 * an item costs the same with 10 sources or 100,000 (M2, measured by its spec). ix's `merge` races every source per item, drops return values and closes
 * no source on break or error (docs/contract.md, "Measured facts"): this is why the
 * project writes its own.
 *
 * Two layers:
 * - {@link MergeEngine}: the queue, the sources and their cleanup, driven by synchronous
 *   calls. `runTools` drives it directly, so a tool's step reaches the consumer without a
 *   generator in between.
 * - {@link mergeGenerators}: the public combinator, an async generator over the engine.
 *
 * @module
 */
import { Channel } from './channel.ts';
import { turnClock } from './turn.ts';

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

/**
 * What a settled record says about its source: it yielded `value` (`Value`), returned it
 * (`Done`), threw it (`Error`); or the record is a note the engine's owner posted (`Note`:
 * runTools' own events — a hook settled, a call arrived, a grace period ran out — queued
 * with the tools' steps so the owner acts on everything in the order it happened).
 */
export const Step = { Value: 0, Done: 1, Error: 2, Note: 3 } as const;
export type Step = (typeof Step)[keyof typeof Step];

/** A settled step, waiting in the queue for the consumer. */
export interface MergeRecord<T = unknown> {
  step: Step;
  /** The source's tag, or for a `Note` the tag the owner passed. */
  readonly tag: T;
  /** The source; `undefined` for a `Note`. */
  readonly slot: MergeSlot<T> | undefined;
  value: unknown;
}

/**
 * One active source, and its own merge record: a source has at most one `next()`
 * outstanding, so at most one of its steps waits in the queue at a time, and the slot can
 * carry it (`step`, `value`) without a record object per step. The engine's owner may
 * bring its own object as the slot (runTools' call record is one), so a source costs no
 * object of its own; {@link Slot} is the plain one.
 *
 * Invariants: `iterator` is set by {@link MergeEngine.attach} and cleared once, when the
 * source returned, threw, or was let go of (it has finished); while it is set the slot is on
 * the engine's active list. `tag` is the owner's (the source's index, a call's record).
 * `settler` is set by {@link MergeEngine.attach}.
 */
export interface MergeSlot<T = unknown> extends MergeRecord<T> {
  step: Step;
  value: unknown;
  /** Neighbours on the engine's active list (in the order the sources started). */
  prev: MergeSlot<T> | undefined;
  next: MergeSlot<T> | undefined;
  /** The source, while it is active; `undefined` before it was attached and once it finished. */
  iterator: AsyncIterator<unknown, unknown, undefined> | undefined;
  /** Where the source's settled `next()` goes; the engine's, lent to the slot while it is active. */
  settler: Settler<T> | undefined;
}

const nativeThen = Promise.prototype.then;

/**
 * The two callbacks a source's `next()` settles into, and the slot they serve now. Made by
 * the engine and lent to one active slot at a time: when a source ends by its own step
 * (it returned or threw), nothing of it is pending any more, so the engine lends the same
 * callbacks to the next source it starts — a batch pays for as many as ran at once, not one
 * pair per source. A settler is never lent again once its slot was let go of (a step may
 * still come), or once a `next()` gave something other than a native promise (a foreign
 * thenable might call back twice).
 */
export class Settler<T = unknown> {
  slot: MergeSlot<T> | undefined = undefined;
  /** False once this settler must not serve another slot. */
  reusable = true;
  readonly onValue: (result: IteratorResult<unknown, unknown>) => void;
  readonly onError: (error: unknown) => void;

  constructor(engine: MergeEngine<T>) {
    this.onValue = (result) => {
      let done: unknown;
      let value: unknown;
      try {
        done = result.done;
        value = result.value;
      } catch (error) {
        // An iterator result with a throwing getter (a hand-written iterator): a failed step.
        if (this.slot !== undefined) engine.settled(this.slot, Step.Error, error);
        return;
      }
      if (this.slot !== undefined) engine.settled(this.slot, done === true ? Step.Done : Step.Value, value);
    };
    this.onError = (error) => {
      if (this.slot !== undefined) engine.settled(this.slot, Step.Error, error);
    };
  }
}

/** The plain {@link MergeSlot}: a tag, and the merge fields. */
export class Slot<T = unknown> implements MergeSlot<T> {
  step: Step = Step.Value;
  value: unknown = undefined;
  prev: MergeSlot<T> | undefined = undefined;
  next: MergeSlot<T> | undefined = undefined;
  iterator: AsyncIterator<unknown, unknown, undefined> | undefined = undefined;
  settler: Settler<T> | undefined = undefined;

  constructor(readonly tag: T) {}

  get slot(): Slot<T> {
    return this;
  }
}

/**
 * The merge's state: active sources and the queue of their settled steps.
 *
 * Invariants: the active list holds exactly the slots whose `iterator` is set (`activeCount` of
 * them); a step of a finished slot is never queued (late steps of a source let go of are
 * dropped); the queue is a {@link Channel}, whose single consumer is the engine's owner.
 */
export class MergeEngine<T = unknown> {
  /**
   * @param onEnd - called synchronously when a source returns or throws, before its record
   *   is queued: the owner can note what held at that moment (the consumer may take the
   *   record much later).
   */
  constructor(readonly onEnd?: (tag: T) => void) {}

  readonly #queue = new Channel<MergeRecord<T>>({ highWaterMark: Infinity, capacity: 16 });
  /** Settlers free to lend (see {@link Settler}). */
  readonly #spare: Settler<T>[] = [];
  #first: MergeSlot<T> | undefined;
  #last: MergeSlot<T> | undefined;
  #active = 0;

  /** How many sources are active (started, not finished). */
  get activeCount(): number {
    return this.#active;
  }

  /** Starts a source: pulls its first step at once. */
  add(tag: T, iterator: AsyncIterator<unknown, unknown, undefined>): Slot<T> {
    const slot = new Slot(tag);
    this.attach(slot, iterator);
    return slot;
  }

  /** Starts a source on a slot the owner made (not attached before): pulls its first step at once. */
  attach(slot: MergeSlot<T>, iterator: AsyncIterator<unknown, unknown, undefined>): void {
    slot.iterator = iterator;
    const settler = this.#spare.pop() ?? new Settler(this);
    settler.slot = slot;
    slot.settler = settler;
    const last = this.#last;
    slot.prev = last;
    if (last === undefined) this.#first = slot;
    else last.next = slot;
    this.#last = slot;
    this.#active++;
    this.pull(slot);
  }

  /**
   * Asks a source for its next step (after the consumer took the previous one: M3). After
   * too long without a macrotask turn the step waits for one, so timers keep firing (A7,
   * turn.ts).
   */
  pull(slot: MergeSlot<T>): void {
    const iterator = slot.iterator;
    if (iterator === undefined) return;
    if (turnClock.tick()) {
      turnClock.later(() => this.pull(slot));
      return;
    }
    const settler = slot.settler!;
    try {
      const step = iterator.next();
      if (!(step instanceof Promise) || step.then !== nativeThen) settler.reusable = false;
      step.then(settler.onValue, settler.onError);
    } catch (error) {
      settler.reusable = false;
      // A hand-written iterator whose next() throws synchronously, or returns no promise,
      // fails like a rejection.
      this.settled(slot, Step.Error, error);
    }
  }

  /** @internal A source's step settled. */
  settled(slot: MergeSlot<T>, step: Step, value: unknown): void {
    if (slot.iterator === undefined || this.#queue.closed) return;
    if (step !== Step.Value) {
      this.#finish(slot);
      // Its own last step: nothing of the source is pending, its settler may serve another.
      const settler = slot.settler!;
      slot.settler = undefined;
      if (settler.reusable) {
        settler.slot = undefined;
        this.#spare.push(settler);
      }
      this.onEnd?.(slot.tag);
    }
    slot.step = step;
    slot.value = value;
    this.#queue.push(slot);
  }

  /** Queues a note of the owner's own (`Step.Note`, `value` the note) behind the steps already queued, and wakes the consumer. */
  post(tag: T, note: unknown): void {
    this.#queue.push({ step: Step.Note, tag, slot: undefined, value: note });
  }

  /** Takes the oldest record, or `undefined` when none is waiting. */
  take(): MergeRecord<T> | undefined {
    return this.#queue.take();
  }

  /** Resolves at the next settled step, pushed record or `notify()` (at once if a record waits). */
  wait(): Promise<void> {
    return this.#queue.wait();
  }

  /** Wakes a waiting consumer, if any. */
  notify(): void {
    this.#queue.notify();
  }

  /**
   * Lets go of a source that has not finished: it counts as finished, its late steps are
   * dropped, and it gets `return()` without being awaited (see {@link closeWithoutWaiting}).
   */
  detach(slot: MergeSlot<T>): void {
    const iterator = slot.iterator;
    if (iterator === undefined) return;
    this.#finish(slot);
    closeWithoutWaiting(iterator);
  }

  /**
   * Lets go of every active source and drops whatever comes later. Returns the settling of
   * each source's `return()` (never rejecting): the owner may wait on them for a while (A5)
   * or not at all (M5).
   */
  close(): Promise<unknown>[] {
    const returns: Promise<unknown>[] = [];
    for (let slot = this.#first; slot !== undefined; ) {
      const next = slot.next;
      const iterator = slot.iterator!;
      slot.iterator = undefined;
      slot.prev = slot.next = undefined;
      const settled = closeWithoutWaiting(iterator);
      if (settled !== undefined) returns.push(settled);
      slot = next;
    }
    this.#first = this.#last = undefined;
    this.#active = 0;
    void this.#queue.return(); // drop what waits and every later push, wake the consumer
    return returns;
  }

  #finish(slot: MergeSlot<T>): void {
    slot.iterator = undefined;
    const prev = slot.prev;
    const next = slot.next;
    if (prev === undefined) this.#first = next;
    else prev.next = next;
    if (next === undefined) this.#last = prev;
    else next.prev = prev;
    slot.prev = slot.next = undefined;
    this.#active--;
  }
}

/** One source of {@link mergeGenerators}: an async iterator (a generator) returning `R`, or an async iterable. */
export type MergeSource<Y, R> = AsyncIterator<Y, R, undefined> | AsyncIterable<Y>;
/** What {@link mergeGenerators} takes: the sources, as an array or any (async) iterable of them. */
export type MergeSourceList<Y, R> = Iterable<MergeSource<Y, R>> | AsyncIterable<MergeSource<Y, R>>;
type Source<Y, R> = MergeSource<Y, R>;
type SourceList<Y, R> = MergeSourceList<Y, R>;

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
 * - `sources` may be an array, a lazy iterable or an async iterable (read only when a
 *   slot is free); at most `concurrency` sources are active (M4). A finished source's
 *   slot is reused once the consumer has taken its return value.
 * - If a source throws, the merge returns every other started source and rethrows that
 *   error. When the consumer stops early (break, throw, `return()`) or `signal` aborts,
 *   every started, unfinished source gets `return()` — not awaited, because `return()` on
 *   a generator parked in an `await` queues behind that `await` and could hang the
 *   consumer's `break` forever (M5). The `sources` iterator itself is returned the same way.
 *
 * @throws the first error a source (or `sources`) throws; `signal.reason` when `signal`
 *   aborts; a `TypeError` at once when `concurrency` is not a positive integer or
 *   `Infinity`, or `sources` is not iterable.
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
  sources: MergeSourceList<Y, R>,
  options: MergeOptions = {},
): AsyncGenerator<MergeItem<Y, R>, void, undefined> {
  const concurrency = options.concurrency ?? Infinity;
  if (!(concurrency === Infinity || (Number.isInteger(concurrency) && concurrency > 0))) {
    throw new TypeError(`mergeGenerators: options.concurrency must be a positive integer or Infinity, received ${String(concurrency)}`);
  }
  if (sources === null || typeof sources !== 'object' || !(Symbol.iterator in sources || Symbol.asyncIterator in sources)) {
    throw new TypeError(`mergeGenerators: sources must be an iterable or async iterable of async iterators, received ${sources === null ? 'null' : typeof sources}`);
  }
  return run(sources as SourceList<unknown, unknown>, concurrency, options.signal) as AsyncGenerator<MergeItem<Y, R>, void, undefined>;
}

async function* run(
  sources: SourceList<unknown, unknown>,
  concurrency: number,
  signal: AbortSignal | undefined,
): AsyncGenerator<MergeItem<unknown, unknown>, void, undefined> {
  const engine = new MergeEngine<number>();
  let nextIndex = 0;
  const syncSources = Symbol.asyncIterator in sources ? undefined : (sources as Iterable<Source<unknown, unknown>>)[Symbol.iterator]();
  const asyncSources = syncSources === undefined ? (sources as AsyncIterable<Source<unknown, unknown>>)[Symbol.asyncIterator]() : undefined;
  let sourcesDone = false;
  let sourcesPending = false;
  let failure: { error: unknown } | undefined;
  let aborted = false;

  const start = (source: Source<unknown, unknown>): void => {
    engine.add(nextIndex++, toIterator(source));
  };
  // Reads sources while there is room: a synchronous list at once, an async one with one
  // next() outstanding at a time.
  const fill = (): void => {
    while (!sourcesDone && failure === undefined && engine.activeCount < concurrency) {
      if (syncSources !== undefined) {
        const r = syncSources.next();
        if (r.done === true) sourcesDone = true;
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
  const onSource = (r: IteratorResult<Source<unknown, unknown>, unknown>): void => {
    sourcesPending = false;
    if (r.done === true) sourcesDone = true;
    else {
      try {
        start(r.value);
        fill();
      } catch (error) {
        failure = { error };
      }
    }
    engine.notify();
  };
  const onSourceError = (error: unknown): void => {
    sourcesPending = false;
    failure = { error };
    engine.notify();
  };
  const onAbort = (): void => {
    aborted = true;
    engine.notify();
  };

  try {
    if (signal !== undefined) {
      signal.throwIfAborted();
      signal.addEventListener('abort', onAbort, { once: true });
    }
    fill();
    for (;;) {
      if (aborted) throw signal!.reason;
      const record = engine.take();
      if (record === undefined) {
        if (failure !== undefined) throw failure.error;
        if (engine.activeCount === 0 && sourcesDone && !sourcesPending) return;
        await engine.wait();
        continue;
      }
      const index = record.tag;
      if (record.step === Step.Error) throw record.value;
      if (record.step === Step.Done) {
        yield { index, done: true, value: record.value };
        fill();
      } else {
        yield { index, done: false, value: record.value };
        engine.pull(record.slot!);
      }
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
    engine.close();
    if (!sourcesDone) {
      if (asyncSources !== undefined) closeWithoutWaiting(asyncSources);
      else {
        try {
          syncSources!.return?.();
        } catch {
          // A failing return() of the sources list changes nothing for the consumer.
        }
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
 *
 * @returns a promise that fulfils (never rejects) once `return()` settled, for an owner that
 *   wants to wait a bounded time (runTools, A5); `undefined` when there is nothing to wait for.
 */
export function closeWithoutWaiting(iterator: { return?: (...args: never[]) => unknown }): Promise<unknown> | undefined {
  try {
    const r = iterator.return?.();
    if (r !== undefined && r !== null && typeof (r as Promise<unknown>).then === 'function') {
      return Promise.resolve(r as Promise<unknown>).then(undefined, ignore);
    }
  } catch {
    // A synchronous throw from return() is as uninteresting here as a rejection.
  }
  return undefined;
}

function ignore(): void {}
