/**
 * `Channel`: the one single-consumer push queue of the core. Producers `push()` items from
 * anywhere (promise callbacks, timers, synchronous code); one consumer `take()`s them in
 * push order and, when none is left, `wait()`s for the next push or `notify()`.
 *
 * It is the queue under the merge engine (every settled step of every tool goes through it)
 * and the run's outbox, and is meant for any other single-consumer stream of the project
 * (composition, the agent loop, MCP progress, a shell's output).
 *
 * State, with its invariants:
 * - `buffer` is a ring of `capacity` slots (a power of two); the items are at
 *   `head, head+1, … head+size-1` (mod capacity), every other slot is `undefined` (no
 *   taken item is kept alive). Its storage is kept when it empties: a queue that fills and
 *   drains every turn allocates nothing after warm-up.
 * - `wake` is set only while the consumer waits on an empty, open channel.
 * - once `closed`, the channel is empty and stays empty: later pushes are dropped.
 *
 * Cost: O(1) per `push` and `take` (amortized over the doubling of the ring).
 *
 * @example
 * ```ts
 * const channel = new Channel<string>();
 * setTimeout(() => channel.push('tick'), 10);
 * for (;;) {
 *   const item = channel.take();
 *   if (item !== undefined) { console.log(item); break; }
 *   await channel.wait();
 * }
 * ```
 *
 * @module
 */
export class Channel<T> {
  #buffer: (T | undefined)[];
  #mask: number;
  #head = 0;
  #size = 0;
  #wake: (() => void) | undefined;
  #waiting: Promise<void> | undefined;
  #closed = false;

  /** @param capacity - initial ring size, rounded up to a power of two. @default 16 */
  constructor(capacity = 16) {
    let c = 1;
    while (c < capacity) c *= 2;
    this.#buffer = new Array<T | undefined>(c).fill(undefined);
    this.#mask = c - 1;
  }

  /** How many items wait to be taken. */
  get size(): number {
    return this.#size;
  }

  /** True once `close()` was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Adds an item and wakes the consumer. Returns false (the item is dropped) once closed. */
  push(item: T): boolean {
    if (this.#closed) return false;
    if (this.#size === this.#buffer.length) this.#grow();
    this.#buffer[(this.#head + this.#size) & this.#mask] = item;
    this.#size++;
    if (this.#wake !== undefined) this.notify();
    return true;
  }

  /** Takes the oldest item, or `undefined` when none waits. */
  take(): T | undefined {
    if (this.#size === 0) return undefined;
    const head = this.#head;
    const item = this.#buffer[head];
    this.#buffer[head] = undefined;
    this.#head = (head + 1) & this.#mask;
    this.#size--;
    return item;
  }

  /**
   * Resolves at the next `push()`, `notify()` or `close()` — at once when an item already
   * waits or the channel is closed. One consumer: a second `wait()` before the first
   * resolved gets the same promise.
   */
  wait(): Promise<void> {
    if (this.#size > 0 || this.#closed) return Promise.resolve();
    return (this.#waiting ??= new Promise<void>((resolve) => {
      this.#wake = resolve;
    }));
  }

  /** Wakes a waiting consumer without an item (its owner has news of its own). */
  notify(): void {
    const wake = this.#wake;
    if (wake === undefined) return;
    this.#wake = undefined;
    this.#waiting = undefined;
    wake();
  }

  /** Drops every waiting item; the channel stays open. */
  clear(): void {
    while (this.#size > 0) this.take();
  }

  /** Drops every waiting item and every later push, and wakes the consumer. */
  close(): void {
    this.#closed = true;
    this.clear();
    this.notify();
  }

  #grow(): void {
    const old = this.#buffer;
    const grown = new Array<T | undefined>(old.length * 2).fill(undefined);
    for (let i = 0; i < this.#size; i++) grown[i] = old[(this.#head + i) & this.#mask];
    this.#buffer = grown;
    this.#head = 0;
    this.#mask = grown.length - 1;
  }
}
