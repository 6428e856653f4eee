/**
 * A byte-bounded text buffer that keeps the head and the tail of a stream and counts what
 * it dropped in between (case C20: one tool result must never outgrow the model's context).
 *
 * @module
 */

/** What {@link BoundedOutput.render} returns. */
export interface RenderedOutput {
  /** The kept text: everything when nothing was cut, else head + marker + tail. */
  text: string;
  /** Bytes of UTF-8 input that are not in `text` (0 when nothing was cut). */
  truncatedBytes: number;
  /** Bytes of UTF-8 input received in total. */
  totalBytes: number;
}

/**
 * Keeps at most `maxBytes` bytes of everything pushed into it: the first
 * `floor(maxBytes / 2)` bytes and the last `maxBytes - floor(maxBytes / 2)` bytes. Memory
 * stays at most `maxBytes` whatever is pushed (the tail is a ring buffer), so a command
 * that prints gigabytes costs no more than one that prints `maxBytes` (case C20).
 *
 * Text is stored as UTF-8; {@link render} moves each cut to a character boundary, so the
 * result never holds half a character.
 *
 * @example
 * ```ts
 * const out = new BoundedOutput(10);
 * out.push('HEAD' + 'a'.repeat(100) + 'TAIL');
 * out.render().text; // 'HEADa\n[... 98 bytes cut ...]\naTAIL' (marker shortened here)
 * ```
 */
export class BoundedOutput {
  /** The byte budget given to the constructor. */
  readonly maxBytes: number;
  readonly #headLimit: number;
  readonly #tailLimit: number;
  /** Holds the first `#headBytes` bytes received; allocated on first push. */
  #head: Buffer | undefined;
  #headBytes = 0;
  /** Ring buffer of the last bytes received; `#ringPos` is where the next byte goes. */
  #ring: Buffer | undefined;
  #ringPos = 0;
  /** Bytes in the ring (at most `#tailLimit`). */
  #ringBytes = 0;
  #totalBytes = 0;

  /**
   * @param maxBytes - the byte budget, a positive integer.
   * @throws RangeError if `maxBytes` is not a positive integer.
   */
  constructor(maxBytes: number) {
    if (!Number.isInteger(maxBytes) || maxBytes < 1) {
      throw new RangeError(`BoundedOutput: maxBytes must be a positive integer, received ${String(maxBytes)}`);
    }
    this.maxBytes = maxBytes;
    this.#headLimit = Math.floor(maxBytes / 2);
    this.#tailLimit = maxBytes - this.#headLimit;
  }

  /** Bytes received so far. */
  get totalBytes(): number {
    return this.#totalBytes;
  }

  /** Bytes held in memory right now; never more than {@link maxBytes}. */
  get retainedBytes(): number {
    return this.#headBytes + this.#ringBytes;
  }

  /** Appends a chunk (a string is encoded as UTF-8). */
  push(chunk: string | Uint8Array): void {
    let bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    this.#totalBytes += bytes.length;
    const headRoom = this.#headLimit - this.#headBytes;
    if (headRoom > 0 && bytes.length > 0) {
      const part = bytes.subarray(0, headRoom);
      this.#head ??= Buffer.allocUnsafe(this.#headLimit);
      this.#head.set(part, this.#headBytes);
      this.#headBytes += part.length;
      bytes = bytes.subarray(part.length);
    }
    if (bytes.length > 0) this.#pushTail(bytes);
  }

  #pushTail(bytes: Uint8Array): void {
    const limit = this.#tailLimit;
    this.#ring ??= Buffer.allocUnsafe(limit);
    if (bytes.length >= limit) {
      this.#ring.set(bytes.subarray(bytes.length - limit), 0);
      this.#ringPos = 0;
      this.#ringBytes = limit;
      return;
    }
    const first = Math.min(bytes.length, limit - this.#ringPos);
    this.#ring.set(bytes.subarray(0, first), this.#ringPos);
    if (first < bytes.length) this.#ring.set(bytes.subarray(first), 0);
    this.#ringPos = (this.#ringPos + bytes.length) % limit;
    this.#ringBytes = Math.min(limit, this.#ringBytes + bytes.length);
  }

  /** The tail bytes in arrival order. */
  #tailBytes(): Buffer {
    const ring = this.#ring;
    if (ring === undefined || this.#ringBytes === 0) return Buffer.alloc(0);
    if (this.#ringBytes < this.#tailLimit) return ring.subarray(0, this.#ringBytes);
    return Buffer.concat([ring.subarray(this.#ringPos), ring.subarray(0, this.#ringPos)]);
  }

  /**
   * The kept text. When bytes were dropped, a marker line between head and tail states how
   * many bytes were cut, the total, and how much of each end is shown.
   */
  render(): RenderedOutput {
    const head = this.#head?.subarray(0, this.#headBytes) ?? Buffer.alloc(0);
    const tail = this.#tailBytes();
    const total = this.#totalBytes;
    if (head.length + tail.length === total) {
      return { text: Buffer.concat([head, tail]).toString('utf8'), truncatedBytes: 0, totalBytes: total };
    }
    const headEnd = completeUtf8Prefix(head);
    const tailStart = firstUtf8Boundary(tail);
    const keptHead = head.subarray(0, headEnd);
    const keptTail = tail.subarray(tailStart);
    const cut = total - keptHead.length - keptTail.length;
    const marker =
      `[... ${cut} bytes cut: the output was ${total} bytes, over the ${this.maxBytes}-byte limit; ` +
      `showing the first ${keptHead.length} and the last ${keptTail.length} bytes ...]`;
    const before = keptHead.toString('utf8');
    const after = keptTail.toString('utf8');
    const text = `${before}${before.endsWith('\n') || before === '' ? '' : '\n'}${marker}\n${after}`;
    return { text, truncatedBytes: cut, totalBytes: total };
  }
}

/** Length of the longest prefix of `bytes` that ends on a UTF-8 character boundary. */
export function completeUtf8Prefix(bytes: Uint8Array): number {
  const len = bytes.length;
  // Walk back over at most 3 continuation bytes (10xxxxxx) to the lead byte of the last character.
  let lead = len - 1;
  while (lead >= 0 && lead > len - 4 && ((bytes[lead] ?? 0) & 0xc0) === 0x80) lead--;
  if (lead < 0) return 0;
  const b = bytes[lead] ?? 0;
  const size = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
  return lead + size > len ? lead : len;
}

/** Index of the first byte of `bytes` that starts a UTF-8 character (skips at most 3 continuation bytes). */
export function firstUtf8Boundary(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length && i < 3 && ((bytes[i] ?? 0) & 0xc0) === 0x80) i++;
  return i;
}
