/**
 * Cancellation and time (contract A1–A6): {@link CancelScope}, the one cancellation scope of
 * the core. The run is a scope listening to the caller's signal; every executing call is a
 * child scope of the run, with its own timeout and grace period. Composition (`callTool`,
 * `pipeEvents`), the agent loop and the MCP server and client build theirs on it too.
 *
 * Why not `AbortSignal.any([runSignal, timeout])` per call: on Node 20 the parent's set of
 * dependants is never pruned, which retained 39–260 MB over 100,000 calls
 * (docs/contract.md, "Measured facts"). A scope that fans an abort out to its children
 * retains nothing.
 *
 * @module
 */
import { allowManyListeners } from '../values/platform.ts';
import { MAX_TIMER_MS } from '../values/defaults.ts';

export { MAX_TIMER_MS };

/** Why a scope aborted: the caller's signal (`run`), its own time limit, or the consumer leaving. */
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
 * A scope's states, in the only order they can come: `Open` → `Aborted` (with a cause) →
 * `Abandoned` (the grace period after the abort ran out) → `Closed` (timers cleared, off
 * its parent's list). A scope may skip states (a call that ends on its own goes from `Open`
 * to `Closed`), never go back.
 */
export const ScopeState = { Open: 0, Aborted: 1, Abandoned: 2, Closed: 3 } as const;
export type ScopeState = (typeof ScopeState)[keyof typeof ScopeState];

/**
 * One cancellation scope: an `AbortSignal` made only when someone reads it, an optional time
 * limit, a grace period after an abort, and the ordered list of child scopes an abort fans
 * out to.
 *
 * State, with its invariants:
 * - `state` only grows; every transition is one comparison against it, so repeating one
 *   (a second abort, a late close) is harmless.
 * - `cause` and `reason` are set once, on the transition to `Aborted`.
 * - `controller` exists only once `signal` was read; once it exists it is aborted exactly
 *   when the scope is (an abort before it existed is replayed on creation).
 * - the children are linked in the order they entered; a child is on the list from
 *   {@link enter} until it closes, so an abort reaches exactly the scopes still running,
 *   in call order (case C6 depends on it).
 * - at most one timer runs: the time limit while `Open`, the grace period while `Aborted`.
 *
 * Subclasses hear about transitions through {@link onAbort} and {@link onAbandon}.
 */
export class CancelScope {
  #state: ScopeState = ScopeState.Open;
  #cause: AbortCause | undefined;
  /** Grace period in ms after an abort, before `onAbandon` (A3); 0: at once; past `MAX_TIMER_MS`: never. */
  readonly #graceMs: number;
  #parent: CancelScope | undefined;
  #prev: CancelScope | undefined;
  #next: CancelScope | undefined;
  /**
   * What most scopes never need, made on first need: the signal's controller, the abort
   * reason, the timer, the child list, the foreign signal listened to. A tool call that
   * ends on its own without reading its signal allocates none of it.
   */
  #more: ScopeMore | undefined;

  /**
   * @param graceMs - how long, in ms, after an abort (not a consumer exit) `onAbandon`
   *   waits; 0: at once; `Infinity` (the default): never (a scope with nothing to abandon,
   *   like a run).
   */
  constructor(graceMs = Infinity) {
    this.#graceMs = graceMs;
  }

  #extra(): ScopeMore {
    return (this.#more ??= new ScopeMore());
  }

  /** The scope's signal; made on first read (most tool calls never read theirs). */
  get signal(): AbortSignal {
    const more = this.#extra();
    let controller = more.controller;
    if (controller === undefined) {
      controller = more.controller = new AbortController();
      // Concurrent hooks each wait on a run's signal (one listener per waiting hook, removed
      // when it settles): legitimate, so no MaxListenersExceededWarning.
      allowManyListeners(controller.signal);
      if (this.#cause !== undefined) controller.abort(more.reason);
    }
    return controller.signal;
  }

  /** Why the scope aborted, or `undefined` while it has not. */
  get cause(): AbortCause | undefined {
    return this.#cause;
  }

  /** The reason the signal carries (or will carry), once aborted. */
  get reason(): unknown {
    return this.#more?.reason;
  }

  /** Where the scope is in `Open` → `Aborted` → `Abandoned` → `Closed`. */
  get scopeState(): ScopeState {
    return this.#state;
  }

  /**
   * Links this scope as the last child of `parent`: a later abort of the parent reaches it.
   * A parent that already aborted aborts it at once, with the same cause and reason.
   */
  enter(parent: CancelScope): void {
    if (this.#parent !== undefined || this.#state === ScopeState.Closed) return;
    this.#parent = parent;
    const list = parent.#extra();
    const last = list.lastChild;
    this.#prev = last;
    if (last === undefined) list.firstChild = this;
    else last.#next = this;
    list.lastChild = this;
    if (parent.#cause !== undefined) this.abort(parent.#cause, parent.reason);
  }

  /**
   * Aborts with cause `timeout` and the reason `reason()` makes (a call passes one that makes
   * {@link timeoutReason}) after `ms` milliseconds, unless the scope aborts or closes first.
   * `undefined`, or a limit past `MAX_TIMER_MS`, is none; only an `Open` scope starts one.
   */
  limit(ms: number | undefined, reason: () => unknown): void {
    if (ms === undefined || ms > MAX_TIMER_MS || this.#state !== ScopeState.Open) return;
    this.#extra().timer = setTimeout(() => this.abort('timeout', reason()), ms);
  }

  /**
   * Listens to a foreign signal (the caller's): its abort aborts this scope with cause
   * `run`. One listener, removed by {@link close} (A6). An already aborted signal aborts
   * the scope at once.
   */
  listen(signal: AbortSignal | undefined): void {
    if (signal === undefined || this.#more?.foreign !== undefined || this.#state === ScopeState.Closed) return;
    if (signal.aborted) {
      this.abort('run', signal.reason);
      return;
    }
    const more = this.#extra();
    const onAbort = (): void => this.abort('run', signal.reason);
    more.foreign = signal;
    more.onForeignAbort = onAbort;
    signal.addEventListener('abort', onAbort, { once: true });
  }

  /**
   * Aborts the scope with `reason`, then every child still on its list, in order. The first
   * abort wins; a later one is ignored — except a consumer exit, which still cuts an ongoing
   * grace period short (nobody is left to wait for the result). After an abort by `run` or
   * `timeout` the grace period starts; a consumer exit closes the scope at once.
   */
  abort(cause: AbortCause, reason: unknown): void {
    if (this.#state !== ScopeState.Open) {
      if (cause === 'consumer' && this.#state !== ScopeState.Closed) {
        this.#abortChildren(cause, reason);
        this.close();
      }
      return;
    }
    this.#state = ScopeState.Aborted;
    this.#cause = cause;
    const more = this.#extra();
    more.reason = reason;
    clearTimeout(more.timer);
    more.timer = undefined;
    more.controller?.abort(reason);
    this.#abortChildren(cause, reason);
    this.onAbort(cause);
    if (cause === 'consumer') this.close();
    else if (this.#graceMs <= 0) this.#abandon();
    else if (this.#graceMs <= MAX_TIMER_MS) more.timer = setTimeout(() => this.#abandon(), this.#graceMs);
  }

  /** Clears the timer, leaves the parent's list, stops listening to a foreign signal. The signal stays as it is. */
  close(): void {
    if (this.#state === ScopeState.Closed) return;
    this.#state = ScopeState.Closed;
    const more = this.#more;
    if (more !== undefined) {
      clearTimeout(more.timer);
      more.timer = undefined;
      if (more.foreign !== undefined) more.foreign.removeEventListener('abort', more.onForeignAbort!);
      more.foreign = undefined;
      more.onForeignAbort = undefined;
    }
    const parent = this.#parent;
    if (parent === undefined) return;
    const list = parent.#more!;
    const prev = this.#prev;
    const next = this.#next;
    if (prev === undefined) list.firstChild = next;
    else prev.#next = next;
    if (next === undefined) list.lastChild = prev;
    else next.#prev = prev;
    this.#parent = this.#prev = this.#next = undefined;
  }

  /** Called once, on the transition to `Aborted`, after the signal and the children aborted. */
  protected onAbort(_cause: AbortCause): void {}

  /** Called once if the grace period after an abort ends before the scope closed (A3). */
  protected onAbandon(): void {}

  #abortChildren(cause: AbortCause, reason: unknown): void {
    // A child closes itself (leaves the list) on a consumer exit: read `next` first.
    for (let child = this.#more?.firstChild; child !== undefined; ) {
      const next = child.#next;
      child.abort(cause, reason);
      child = next;
    }
  }

  #abandon(): void {
    if (this.#state !== ScopeState.Aborted) return;
    this.#state = ScopeState.Abandoned;
    this.#more!.timer = undefined;
    this.onAbandon();
  }
}

/** The rarely needed part of a {@link CancelScope}. */
class ScopeMore {
  controller: AbortController | undefined = undefined;
  reason: unknown = undefined;
  /** The time limit while open, the grace period while aborted; at most one. */
  timer: ReturnType<typeof setTimeout> | undefined = undefined;
  /** Children in the order they entered; each links to its neighbours. */
  firstChild: CancelScope | undefined = undefined;
  lastChild: CancelScope | undefined = undefined;
  foreign: AbortSignal | undefined = undefined;
  onForeignAbort: (() => void) | undefined = undefined;
}
