/**
 * A promise's outcome as a value, for code that starts a promise, streams something else
 * while it runs (a channel of progress), and reads the outcome once the stream ends.
 *
 * @module
 */

/** How a promise settled: its value or what it rejected with. */
export type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

/**
 * @internal Calls `then` once `promise` settles, with the outcome as a {@link Settled}. Takes
 * the rejection itself, so a promise nobody awaits any more (a generator abandoned mid-call)
 * leaves no unhandled rejection.
 */
export function whenSettled<T>(promise: PromiseLike<T>, then: (settled: Settled<T>) => void): void {
  promise.then(
    (value) => then({ ok: true, value }),
    (error: unknown) => then({ ok: false, error }),
  );
}
