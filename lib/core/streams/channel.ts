/**
 * `Channel`: the one single-consumer push queue of the project. Any number of producers
 * `push` values (promise callbacks, timers, synchronous code); one consumer reads them in push
 * order, in either of two ways:
 * - as an async iterator (`for await`, `next()`, `return()`): composition, the agent loop, MCP
 *   progress, the shell tool's output;
 * - synchronously, on a hot path: `take()` what waits, and when nothing does, `await wait()`
 *   for the next `push()`, `notify()` or end — the merge engine and the run's outbox, where
 *   every tool step passes and a promise per item would cost too much.
 *
 * ```
 * producer ─ push(v) ─▶ [ buffer ] ─▶ next() ─▶ the one consumer
 *          ◀─ false: at the high-water mark; await ready() before pushing more
 * close(error?) ends it: the consumer reads what is buffered, then done (or the error)
 * return() (the consumer left): buffer dropped, later pushes ignored, ready() resolves
 * ```
 *
 * Backpressure is a signal, not a block: `push` never waits and never drops on its own;
 * it returns `false` once the buffer reached `highWaterMark`, and {@link Channel.ready}
 * resolves when the producer may go on. With `highWaterMark: 0` a producer that waits on
 * `ready()` runs in lockstep with the consumer: it is released only while the consumer is
 * waiting for a value, as a merge source is pulled at most one step ahead (contract M3).
 *
 * One consumer only: `next()` must not be called again before the previous call settled (a
 * second pending call is rejected with a `TypeError`, contract Q1), and a consumer uses either
 * `next()` or `take()`/`wait()`, not both.
 *
 * Cost: O(1) per `push` and per read (amortized over the doubling of the ring); the ring keeps
 * its storage when it empties, so a queue that fills and drains every turn allocates nothing
 * after warm-up.
 *
 * @module
 */

/** Options of {@link Channel}. */
export interface ChannelOptions {
  /**
   * How many values may wait in the buffer before `push` returns `false`; `0` means a
   * producer waiting on `ready()` is released only while the consumer waits for a value.
   * A non-negative integer or `Infinity`.
   * @default 1
   */
  highWaterMark?: number;
  /** Initial ring size (rounded up to a power of two); it doubles when full. @default 4 */
  capacity?: number;
}

/**
 * Lifecycle; states only move forward. `Open`: values may be pushed. `Closing`: `close()`
 * was called, buffered values are still read, then the end (or the error). `Done`: the end
 * was read, or the consumer left; nothing more is buffered or handed out.
 */
const State = { Open: 0, Closing: 1, Done: 2 } as const;
type State = (typeof State)[keyof typeof State];

/**
 * See the module comment.
 *
 * @example
 * ```ts
 * const channel = new Channel<number>({ highWaterMark: 16 });
 * (async () => {
 *   for (let i = 0; i < 100 && !channel.closed; i++) if (!channel.push(i)) await channel.ready();
 *   channel.close();
 * })();
 * for await (const n of channel) console.log(n);
 * ```
 */
export class Channel<T> implements AsyncIterableIterator<T, undefined, undefined> {
  /**
   * A ring of slots: the buffered values are `#size` slots from `#head` on, wrapping around.
   * Its length is a power of two that only grows, so a channel that fills and drains over
   * and over reuses the same storage; a read slot is cleared at once.
   */
  #slots: Array<T | undefined>;
  #head = 0;
  #size = 0;
  readonly #highWaterMark: number;
  #state: State = State.Open;
  /** Set by `close(error)`: what the consumer's `next()` rejects with after the buffer. */
  #error: { error: unknown } | undefined;
  /** Invariant: set only while the consumer waits in `next()` on an empty buffer. */
  #waiting: ((step: IteratorResult<T, undefined>) => void) | undefined;
  #rejectWaiting: ((error: unknown) => void) | undefined;
  /** Producers waiting in `ready()`; released together when the channel wants more or ends. */
  #readyWaiters: Array<() => void> = [];
  /** Invariant: set only while a `take()` consumer waits in `wait()`; cleared when woken. */
  #wake: (() => void) | undefined;
  #woken: Promise<void> | undefined;

  constructor(options: ChannelOptions = {}) {
    const hwm = options.highWaterMark ?? 1;
    if (!(hwm === Infinity || (Number.isInteger(hwm) && hwm >= 0))) {
      throw new TypeError(`Channel: highWaterMark must be a non-negative integer or Infinity, received ${String(hwm)}`);
    }
    this.#highWaterMark = hwm;
    let capacity = 4;
    while (capacity < (options.capacity ?? 4)) capacity *= 2;
    this.#slots = new Array<T | undefined>(capacity);
  }

  /** Values buffered and not read yet. */
  get size(): number {
    return this.#size;
  }

  /** True once `close()` was called or the consumer left: pushes are ignored. */
  get closed(): boolean {
    return this.#state !== State.Open;
  }

  /**
   * Hands `value` to the waiting consumer or buffers it. Ignored once {@link closed}.
   * @returns `true` while the producer may go on pushing; `false` when the buffer reached
   *   the high-water mark (await {@link ready}) or the channel is closed.
   */
  push(value: T): boolean {
    if (this.#state !== State.Open) return false;
    const waiting = this.#waiting;
    if (waiting !== undefined) {
      this.#waiting = this.#rejectWaiting = undefined;
      waiting({ done: false, value });
      return this.#wantsMore();
    }
    // Queued at the ring's tail (runTools pushes four items per call through here).
    if (this.#size === this.#slots.length) this.#grow();
    this.#slots[(this.#head + this.#size) & (this.#slots.length - 1)] = value;
    this.#size++;
    if (this.#wake !== undefined) this.notify();
    return this.#wantsMore();
  }

  /** Takes the oldest buffered value, or `undefined` when none waits (the `take()` consumer). */
  take(): T | undefined {
    if (this.#size === 0) return undefined;
    const slots = this.#slots;
    const head = this.#head;
    const value = slots[head] as T;
    slots[head] = undefined; // let go of the value now
    this.#head = (head + 1) & (slots.length - 1);
    this.#size--;
    if (this.#readyWaiters.length > 0 && this.#wantsMore()) this.#releaseProducers();
    return value;
  }

  /**
   * Resolves at the next `push()`, `notify()`, `close()` or `return()` — at once when a value
   * already waits or the channel is closed (the `take()` consumer). A second `wait()` before
   * the first resolved gets the same promise.
   */
  wait(): Promise<void> {
    if (this.#size > 0 || this.#state !== State.Open) return Promise.resolve();
    return (this.#woken ??= new Promise<void>((resolve) => {
      this.#wake = resolve;
    }));
  }

  /** Wakes a consumer waiting in `wait()` without a value (its owner has news of its own). */
  notify(): void {
    const wake = this.#wake;
    if (wake === undefined) return;
    this.#wake = undefined;
    this.#woken = undefined;
    wake();
  }

  /**
   * Resolves once the producer may push again: the buffer is below the high-water mark
   * (with `highWaterMark: 0`, the consumer waits for a value), or the channel is closed —
   * check {@link closed} after it. Never rejects.
   */
  ready(): Promise<void> {
    if (this.#state !== State.Open || this.#wantsMore()) return Promise.resolve();
    return new Promise<void>((resolve) => this.#readyWaiters.push(resolve));
  }

  /**
   * Ends the channel: the consumer reads the buffered values, then the end — or, with an
   * `error` argument, a rejection with it. Later pushes are ignored; a second close is too.
   */
  close(...error: [] | [unknown]): void {
    if (this.#state !== State.Open) return;
    this.#state = State.Closing;
    if (error.length > 0) this.#error = { error: error[0] };
    this.#releaseProducers();
    if (this.#waiting !== undefined) this.#finish();
    this.notify();
  }

  /**
   * The next value; waits while the buffer is empty and the channel open.
   *
   * Rejects with a `TypeError`, and changes nothing, when called while an earlier `next()`
   * still waits (contract Q1): a channel has one consumer. Without the check the second call
   * would take the first one's place and the first would never settle.
   */
  next(): Promise<IteratorResult<T, undefined>> {
    if (this.#size > 0) return Promise.resolve({ done: false, value: this.take() as T });
    if (this.#state !== State.Open) return this.#end();
    if (this.#waiting !== undefined) {
      return Promise.reject(new TypeError('Channel: next() was called while an earlier next() is already waiting; a Channel has one consumer, which awaits each next() before the following one'));
    }
    return new Promise<IteratorResult<T, undefined>>((resolve, reject) => {
      this.#waiting = resolve;
      this.#rejectWaiting = reject;
      // An empty buffer and a waiting consumer: a lockstep producer may go on.
      this.#releaseProducers();
    });
  }

  /**
   * The consumer leaves: buffered values are dropped, producers released, later pushes
   * ignored, a `wait()` resolves.
   */
  return(): Promise<IteratorResult<T, undefined>> {
    this.#state = State.Done;
    this.#slots.fill(undefined);
    this.#size = 0;
    this.#error = undefined;
    this.#releaseProducers();
    if (this.#waiting !== undefined) this.#finish();
    this.notify();
    return Promise.resolve({ done: true, value: undefined });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** Doubles the ring (when it is full), unwrapping the values in order. */
  #grow(): void {
    const capacity = this.#slots.length;
    const grown = new Array<T | undefined>(capacity * 2);
    for (let i = 0; i < this.#size; i++) grown[i] = this.#slots[(this.#head + i) & (capacity - 1)];
    this.#slots = grown;
    this.#head = 0;
  }

  #wantsMore(): boolean {
    return this.#size < this.#highWaterMark || (this.#size === 0 && this.#waiting !== undefined);
  }

  #releaseProducers(): void {
    if (this.#readyWaiters.length === 0) return;
    const waiters = this.#readyWaiters;
    this.#readyWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /** Settles the waiting consumer with the end (the buffer is empty). */
  #finish(): void {
    const resolve = this.#waiting!;
    const reject = this.#rejectWaiting!;
    this.#waiting = this.#rejectWaiting = undefined;
    this.#end().then(resolve, reject);
  }

  /** The end, once: the close error (read once), then done forever. */
  #end(): Promise<IteratorResult<T, undefined>> {
    this.#state = State.Done;
    const error = this.#error;
    this.#error = undefined;
    return error === undefined ? Promise.resolve({ done: true, value: undefined }) : Promise.reject(error.error);
  }
}
