/**
 * The stream of calls of a run whose calls come from an async iterable (contract S4): read
 * one call at a time, as the run asks, and let go of when the run stops. The run appends
 * each call it delivers to its `received` calls and hands them out as they arrive.
 *
 * @module
 */
import type { ToolCall } from '../tool/tool.ts';

/** What a read of the stream posts to the run's mailbox: a call (or the end), or the stream's failure. */
export type StreamNote = { kind: 'input'; result: IteratorResult<ToolCall, unknown> } | { kind: 'input-error'; error: unknown };

/** Where a read's settling is posted: the run (`Run.post`), so it is acted on in turn. */
interface StreamOwner {
  post(call: undefined, note: StreamNote): void;
}

export class CallStream {
  /** The async iterable of calls, until its iterator is made on the first read (nothing is opened for a run never iterated). */
  #source: AsyncIterable<ToolCall> | undefined;
  /** Its iterator, while it may still deliver; `undefined` once done, failed, or let go of (S4). */
  #input: AsyncIterator<ToolCall, unknown, undefined> | undefined;
  /** True while one `next()` of `#input` is outstanding (at most one). */
  #reading = false;
  readonly #owner: StreamOwner;

  constructor(source: AsyncIterable<ToolCall>, owner: StreamOwner) {
    this.#source = source;
    this.#owner = owner;
  }

  /** True while the stream may still deliver a call. */
  get open(): boolean {
    return this.#input !== undefined || this.#source !== undefined;
  }

  /** Asks for the next call, unless a read is outstanding; returns the error when the stream could not even be opened. */
  read(): { error: unknown } | undefined {
    if (this.#source !== undefined) {
      // The iterator is made on the first read, so a run never iterated opens no stream.
      const source = this.#source;
      this.#source = undefined;
      try {
        this.#input = source[Symbol.asyncIterator]();
      } catch (error) {
        return { error };
      }
    }
    const input = this.#input;
    if (input === undefined || this.#reading) return undefined;
    this.#reading = true;
    let read: Promise<IteratorResult<ToolCall, unknown>>;
    try {
      read = input.next();
    } catch (error) {
      read = Promise.reject(error);
    }
    const owner = this.#owner;
    Promise.resolve(read).then(
      (result) => owner.post(undefined, { kind: 'input', result }),
      (error: unknown) => owner.post(undefined, { kind: 'input-error', error }),
    );
    return undefined;
  }

  /** A read settled with `result`: the call it delivered, or `undefined` (the stream ended, or was let go of). */
  delivered(result: IteratorResult<ToolCall, unknown>): ToolCall | undefined {
    this.#reading = false;
    // A read that settles after the run stopped reading (abort, consumer exit) is
    // dropped: what the run answers must not depend on when the stream settles (S4).
    if (this.#input === undefined) return undefined;
    if (result.done === true) {
      this.#input = undefined;
      return undefined;
    }
    return coerceCall(result.value);
  }

  /** A read failed: true when the run is to act on it; false when the run had let go of the stream. */
  failed(): boolean {
    this.#reading = false;
    // After a stop, the stream's error is a consequence of letting it go (often the
    // AbortError of a request aborted with the same signal): the run returns its batch.
    if (this.#input === undefined) return false;
    this.#input = undefined;
    return true;
  }

  /** Lets go of the stream: it is not read further. */
  stop(): void {
    this.#source = undefined;
    const input = this.#input;
    if (input === undefined) return;
    this.#input = undefined;
    // The model's stream is not read further; its own cleanup runs (not awaited: it may be
    // parked in a network read). Called from a microtask, so that a `return` that throws
    // synchronously (a foreign iterator) ends in the catch instead of in the run's caller.
    void Promise.resolve()
      .then(() => input.return?.())
      .catch(() => {});
  }
}

/** A call that arrived on an async stream: kept even when malformed, so it still gets its result (O1). */
function coerceCall(raw: unknown): ToolCall {
  const call: ToolCall = { id: '', name: '', arguments: undefined };
  try {
    const c = (typeof raw === 'object' && raw !== null ? raw : {}) as Partial<ToolCall>;
    const id = c.id;
    const name = c.name;
    call.id = typeof id === 'string' ? id : '';
    call.name = typeof name === 'string' ? name : '';
    call.arguments = c.arguments;
    // A stream adapter's cut-off mark must survive, or a truncated call would run (case C16).
    const incomplete = c.incomplete;
    if (typeof incomplete === 'string') call.incomplete = incomplete;
    // The provider's item, for an adapter whose peer takes it (ToolCall.providerItem).
    const providerItem = c.providerItem;
    if (providerItem !== undefined) call.providerItem = providerItem;
  } catch {
    // An unreadable call (a revoked Proxy) is kept as a nameless call: it is answered (O1).
  }
  return call;
}
