/**
 * `ReorderBuffer`: turns completion order into call order (contract B1–B3).
 *
 * @module
 */

/** Options of {@link ReorderBuffer}. */
export interface ReorderBufferOptions {
  /**
   * How many indices the buffer will see; an index at or past it is rejected (B3).
   * `Infinity` when the count is not known in advance (calls still streaming in).
   * @default Infinity
   */
  size?: number;
}

/**
 * Accepts `(index, value)` pairs in any order and hands the values out in index order,
 * each as soon as every lower index has arrived (B1).
 *
 * State, with its invariants:
 * - `next`: the lowest index not yet handed out.
 * - `ready`: values at `next`, `next+1`, … that arrived and wait for `shift()`; a FIFO in
 *   `#ready[#readyHead … #readyTail)`. The array keeps its length when it empties (the two
 *   indices go back to 0): truncating it would free its backing store, and the next push
 *   would allocate a new one — for every value, in the common case of one value at a time.
 * - `held`: values that arrived ahead of a gap; every key is greater than `#frontier` (the
 *   index the next value in order will have: it is never held), and none is ready. Only
 *   these are held (B2).
 *
 * Cost: O(1) amortized per item (B2). The common case — the value for `next` — touches
 * no map at all.
 *
 * @example
 * ```ts
 * const buffer = new ReorderBuffer<string>({ size: 3 });
 * buffer.push(2, 'c');             // held: 0 and 1 are missing
 * buffer.push(0, 'a');             // 'a' ready
 * buffer.shift();                  // 'a'
 * buffer.push(1, 'b');             // 'b', then 'c' ready
 * [...buffer.drain()];             // ['b', 'c']
 * ```
 */
export class ReorderBuffer<T> {
  readonly #size: number;
  readonly #held = new Map<number, T>();
  readonly #ready: (T | undefined)[] = [];
  #readyHead = 0;
  #readyTail = 0;
  /** Index the next value pushed into `ready` will have. */
  #frontier = 0;

  /** @throws TypeError when `size` is not a non-negative integer or `Infinity`. */
  constructor(options: ReorderBufferOptions = {}) {
    const size = options.size ?? Infinity;
    if (!(size === Infinity || (Number.isInteger(size) && size >= 0))) {
      throw new TypeError(`ReorderBuffer: options.size must be a non-negative integer or Infinity, received ${String(size)}`);
    }
    this.#size = size;
  }

  /** The lowest index not yet handed out by `shift()`/`drain()`. */
  get next(): number {
    return this.#frontier - (this.#readyTail - this.#readyHead);
  }

  /** How many values wait ahead of a gap. */
  get held(): number {
    return this.#held.size;
  }

  /** How many values are ready to be taken in order. */
  get readyCount(): number {
    return this.#readyTail - this.#readyHead;
  }

  /**
   * The values waiting ahead of a gap, as `[index, value]` pairs in no particular order: what
   * is held, for a caller that must save it (runTools keeps the results of a paused batch's
   * calls that ended ahead of a call waiting for approval). Reading them changes nothing.
   *
   * @example
   * ```ts
   * const buffer = new ReorderBuffer<string>();
   * buffer.push(2, 'c');
   * [...buffer.heldEntries()];       // [[2, 'c']]
   * ```
   */
  heldEntries(): IterableIterator<[number, T]> {
    return this.#held.entries();
  }

  /**
   * Adds the value for `index`; returns how many values are now ready.
   *
   * @throws RangeError for an index that is not an integer in `[0, size)`, or that was
   *   already pushed (B3). The message carries the index and the buffer's state.
   */
  push(index: number, value: T): number {
    if (!Number.isInteger(index) || index < 0 || index >= this.#size) {
      throw new RangeError(
        `ReorderBuffer: index ${String(index)} is out of range [0, ${this.#size}) (next expected: ${this.#frontier})`,
      );
    }
    if (index !== this.#frontier) {
      // The frontier itself is never held (it would have moved past it), so only an index
      // below it or a held one can be a repeat.
      if (index < this.#frontier || this.#held.has(index)) {
        throw new RangeError(`ReorderBuffer: index ${index} was already pushed (next expected: ${this.#frontier}, held: ${this.#held.size})`);
      }
      this.#held.set(index, value);
      return this.readyCount;
    }
    this.#ready[this.#readyTail++] = value;
    this.#frontier++;
    if (this.#held.size > 0) {
      let v: T | undefined;
      while ((v = this.#held.get(this.#frontier)) !== undefined || this.#held.has(this.#frontier)) {
        this.#held.delete(this.#frontier);
        this.#ready[this.#readyTail++] = v;
        this.#frontier++;
      }
    }
    return this.#readyTail - this.#readyHead;
  }

  /** Takes the next value in index order, or `undefined` when it has not arrived yet. */
  shift(): T | undefined {
    if (this.#readyHead === this.#readyTail) return undefined;
    const value = this.#ready[this.#readyHead] as T;
    // The slot is cleared so the buffer does not keep a taken value alive.
    this.#ready[this.#readyHead++] = undefined;
    if (this.#readyHead === this.#readyTail) this.#readyHead = this.#readyTail = 0;
    return value;
  }

  /** Takes every ready value, in index order. */
  *drain(): Generator<T, void, undefined> {
    while (this.readyCount > 0) yield this.shift() as T;
  }
}
