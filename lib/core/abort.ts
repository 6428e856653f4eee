/**
 * Cancellation and time (contract A1–A6): the run's one listener on the caller's signal,
 * a child `AbortController` per call, per-call timeouts, and the grace period after which
 * a tool that ignores its signal is abandoned.
 *
 * Why not `AbortSignal.any([runSignal, timeout])` per call: on Node 20 the parent's set of
 * dependants is never pruned, which retained 39–260 MB over 100,000 calls
 * (`../shared/research/libraries.md` §3). A plain child controller fed by one listener
 * retains nothing.
 *
 * @module
 */

import { setMaxListeners } from 'node:events';

/** Longest delay a Node timer honours, in ms; a longer limit (or `Infinity`) means none. */
export const MAX_TIMER_MS = 2_147_483_647;

/** Why a call's signal aborted. */
export type AbortCause = 'run' | 'timeout' | 'consumer';

/** The reason a call's signal carries when the consumer stopped iterating `runTools` (A5). */
export function consumerExitReason(): DOMException {
  return new DOMException('The consumer stopped iterating runTools before this call ended', 'AbortError');
}

/** The reason a call's signal carries when it hits its time limit (A4). */
export function timeoutReason(toolName: string, timeoutMs: number): DOMException {
  return new DOMException(`Tool "${toolName}" timed out after ${timeoutMs} ms`, 'TimeoutError');
}

/**
 * The cancellation state of one executing call.
 *
 * States only move forward: running → aborted (with a cause) → abandoned (grace over) →
 * disposed. Each transition checks the current state first, so repeating one is harmless.
 */
export class CallScope {
  /**
   * Made on first read of `signal`: most tool calls finish without looking at their signal,
   * and an `AbortController` is the most expensive object of a call on Node 20.
   */
  #controller: AbortController | undefined;
  #reason: unknown;
  readonly #graceMs: number;
  #cause: AbortCause | undefined;
  #abandoned = false;
  #disposed = false;
  #timeoutTimer: ReturnType<typeof setTimeout> | undefined;
  #graceTimer: ReturnType<typeof setTimeout> | undefined;
  readonly #onAbandon: () => void;

  /**
   * @param toolName - for the timeout reason's message.
   * @param timeoutMs - per-call limit in ms, or `undefined` for none.
   * @param graceMs - how long, in ms, the tool may take to settle after an abort (A3).
   * @param onAbandon - called once if the grace period ends first (not after a consumer exit).
   */
  constructor(
    readonly toolName: string,
    readonly timeoutMs: number | undefined,
    graceMs: number,
    onAbandon: () => void,
  ) {
    this.#graceMs = graceMs;
    this.#onAbandon = onAbandon;
    if (timeoutMs !== undefined && timeoutMs <= MAX_TIMER_MS) {
      this.#timeoutTimer = setTimeout(() => this.abort('timeout', timeoutReason(toolName, timeoutMs)), timeoutMs);
    }
  }

  /** The signal the tool receives as `ctx.signal`. */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#cause !== undefined) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  /** Why the signal aborted, or `undefined` while it has not. */
  get cause(): AbortCause | undefined {
    return this.#cause;
  }

  /** True once the grace period after an abort ran out with the tool still busy (or the consumer left). */
  get abandoned(): boolean {
    return this.#abandoned;
  }

  /**
   * Aborts the call's signal with `reason` and starts the grace period. The first abort
   * wins; later ones are ignored (a timeout after a run abort changes nothing). A consumer
   * exit has no grace: nobody is left to wait for the result.
   */
  abort(cause: AbortCause, reason: unknown): void {
    if (this.#disposed) {
      return;
    }
    if (this.#cause !== undefined) {
      // A consumer exit still cuts an ongoing grace period short.
      if (cause === 'consumer') this.dispose();
      return;
    }
    this.#cause = cause;
    this.#reason = reason;
    clearTimeout(this.#timeoutTimer);
    this.#controller?.abort(reason);
    // Nobody waits for the result after a consumer exit: no grace, no outcome.
    if (cause === 'consumer') this.dispose();
    else if (this.#graceMs <= 0) this.#abandon();
    else if (this.#graceMs <= MAX_TIMER_MS) this.#graceTimer = setTimeout(() => this.#abandon(), this.#graceMs);
  }

  #abandon(): void {
    if (this.#abandoned || this.#disposed) return;
    this.#abandoned = true;
    this.#onAbandon();
  }

  /** Clears both timers. Called once the call has its outcome; the signal stays as it is. */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    clearTimeout(this.#timeoutTimer);
    clearTimeout(this.#graceTimer);
  }
}

/**
 * The run's cancellation: one internal controller fed by at most one listener on the
 * caller's signal (A6), plus the set of executing calls it fans an abort out to.
 * Hooks get {@link RunAbort.signal}: it aborts on a run abort and on consumer exit.
 */
export class RunAbort {
  readonly #controller = new AbortController();
  readonly #caller: AbortSignal | undefined;
  readonly #onCallerAbort = (): void => this.abort('run', this.#caller!.reason);
  /** Executing calls. Invariant: a scope is here from its first tool step until its outcome. */
  readonly running = new Set<CallScope>();
  #cause: AbortCause | undefined;
  #attached = false;
  readonly #onStop: () => void;

  /** @param onStop - called once when the run aborts or the consumer leaves, after every call's signal aborted. */
  constructor(caller: AbortSignal | undefined, onStop: () => void) {
    this.#caller = caller;
    this.#onStop = onStop;
    // Concurrent afterToolCall hooks each wait on this internal signal (one listener per
    // waiting hook, removed when it settles): legitimate, so no MaxListenersExceededWarning.
    setMaxListeners(0, this.#controller.signal);
  }

  /**
   * Starts listening to the caller's signal (or aborts at once if it already has). Called
   * on the run's first `next()`, not when `runTools` is called: a run that is never
   * iterated, or closed before its first `next()`, never holds the signal (A6).
   */
  attach(): void {
    const caller = this.#caller;
    if (caller === undefined || this.#attached) return;
    this.#attached = true;
    if (caller.aborted) this.abort('run', caller.reason);
    else caller.addEventListener('abort', this.#onCallerAbort, { once: true });
  }

  /** Aborted on a run abort or a consumer exit. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** `'run'` after the caller's signal aborted, `'consumer'` after the consumer left; else `undefined`. */
  get cause(): AbortCause | undefined {
    return this.#cause;
  }

  /** Aborts the run once: the internal signal, then every executing call. */
  abort(cause: 'run' | 'consumer', reason: unknown): void {
    if (this.#cause !== undefined) {
      if (cause === 'consumer') for (const scope of this.running) scope.abort('consumer', reason);
      return;
    }
    this.#cause = cause;
    this.#controller.abort(reason);
    for (const scope of this.running) scope.abort(cause, reason);
    this.#onStop();
  }

  /** Removes the listener from the caller's signal. Call once when the run ends, however it ends. */
  dispose(): void {
    this.#caller?.removeEventListener('abort', this.#onCallerAbort);
  }
}
