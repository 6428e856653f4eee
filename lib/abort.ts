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
const MAX_TIMER_MS = 2_147_483_647;

/** Why a call's signal aborted. */
export type AbortCause = 'run' | 'timeout' | 'consumer';

/** Thrown by {@link CallScope.guard} when a tool did not settle within the grace period. */
export const ABANDONED: unique symbol = Symbol('toolrun.abandoned');

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
  readonly #controller = new AbortController();
  readonly #graceMs: number;
  #cause: AbortCause | undefined;
  #abandoned = false;
  #disposed = false;
  #timeoutTimer: ReturnType<typeof setTimeout> | undefined;
  #graceTimer: ReturnType<typeof setTimeout> | undefined;
  /** The step being guarded, if any: settles it when the grace period ends. */
  #waiter: ((abandoned: typeof ABANDONED) => void) | undefined;

  /**
   * @param toolName - for the timeout reason's message.
   * @param timeoutMs - per-call limit in ms, or `undefined` for none.
   * @param graceMs - how long, in ms, `guard` keeps waiting after an abort (A3).
   */
  constructor(
    readonly toolName: string,
    readonly timeoutMs: number | undefined,
    graceMs: number,
  ) {
    this.#graceMs = graceMs;
    if (timeoutMs !== undefined && timeoutMs <= MAX_TIMER_MS) {
      this.#timeoutTimer = setTimeout(() => this.abort('timeout', timeoutReason(toolName, timeoutMs)), timeoutMs);
    }
  }

  /** The signal the tool receives as `ctx.signal`. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Why the signal aborted, or `undefined` while it has not. */
  get cause(): AbortCause | undefined {
    return this.#cause;
  }

  /** True once the grace period after an abort ran out with the tool still busy. */
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
      if (cause === 'consumer') this.#abandon();
      return;
    }
    this.#cause = cause;
    clearTimeout(this.#timeoutTimer);
    this.#controller.abort(reason);
    if (cause === 'consumer' || this.#graceMs <= 0) this.#abandon();
    else if (this.#graceMs <= MAX_TIMER_MS) this.#graceTimer = setTimeout(() => this.#abandon(), this.#graceMs);
  }

  #abandon(): void {
    if (this.#abandoned || this.#disposed) return;
    this.#abandoned = true;
    clearTimeout(this.#graceTimer);
    const waiter = this.#waiter;
    this.#waiter = undefined;
    waiter?.(ABANDONED);
  }

  /**
   * Waits for one step of the tool (a `next()` or its promise), but not past the grace
   * period after an abort: then it rejects with {@link ABANDONED}. The step's own rejection
   * passes through. Only one step is guarded at a time (a call runs one step at a time).
   */
  guard<T>(step: Promise<T>): Promise<T> {
    if (this.#abandoned) {
      // Keep a late rejection of the step from surfacing as unhandled.
      step.then(undefined, ignore);
      return Promise.reject(ABANDONED);
    }
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      this.#waiter = (abandoned) => {
        if (settled) return;
        settled = true;
        reject(abandoned);
      };
      step.then(
        (value) => {
          if (settled) return;
          settled = true;
          this.#waiter = undefined;
          resolve(value);
        },
        (error: unknown) => {
          if (settled) return;
          settled = true;
          this.#waiter = undefined;
          reject(error);
        },
      );
    });
  }

  /** Clears both timers. Called once the call has its outcome; the signal stays as it is. */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    this.#waiter = undefined;
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

  constructor(caller: AbortSignal | undefined) {
    this.#caller = caller;
    // Concurrent afterToolCall hooks each wait on this internal signal (one listener per
    // waiting hook, removed when it settles): legitimate, so no MaxListenersExceededWarning.
    setMaxListeners(0, this.#controller.signal);
    if (caller === undefined) return;
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
  }

  /** Removes the listener from the caller's signal. Call once when the run ends, however it ends. */
  dispose(): void {
    this.#caller?.removeEventListener('abort', this.#onCallerAbort);
  }
}

function ignore(): void {}
