/**
 * One child call of a tool made by another tool (`callTool`, `withTimeout`, `withRetry`):
 * its cancellation and the loop that runs it.
 *
 * Cancellation is the runtime's own {@link CancelScope} (timeout, grace period, forward-only
 * states), fed by one listener on the parent's signal — never `AbortSignal.any`, whose
 * dependants Node 20 never prunes on a long-lived signal (docs/contract.md, "Measured facts").
 *
 * @module
 */
import { CancelScope, ScopeState, timeoutReason } from '../../core/streams/abort.ts';
import { DEFAULTS } from '../../core/values/defaults.ts';
import { closeWithoutWaiting } from '../../core/streams/merge.ts';
import { turnClock } from '../../core/streams/turn.ts';
import { describeValue } from '../../core/values/guards.ts';
import { type Tool, type ToolContext } from '../../core/tool/tool.ts';
import { isAsyncIterator } from '../../core/values/guards.ts';

/** Default grace after an abort, in ms: the runtime's `abortGraceMs` default. */
export const DEFAULT_GRACE_MS: number = DEFAULTS.abortGraceMs;

/** The core's scope, telling the link when the grace after an abort ran out. */
class ChildScope extends CancelScope {
  onGraceOver: (() => void) | undefined;
  protected override onAbandon(): void {
    this.onGraceOver?.();
  }
}

/**
 * A {@link CancelScope} tied to a parent signal: the parent's abort becomes the child's
 * (`cause: 'run'`), and {@link ChildLink.wait} gives up on a step once the grace after an
 * abort ran out.
 */
export class ChildLink {
  readonly #scope: ChildScope;
  /** Rejects the step being waited for, if any, when the grace runs out. */
  #rejectPending: ((reason: unknown) => void) | undefined;

  constructor(parent: AbortSignal, toolName: string, timeoutMs: number | undefined, graceMs: number) {
    this.#scope = new ChildScope(graceMs);
    this.#scope.onGraceOver = () => this.#rejectPending?.(this.#scope.signal.reason);
    this.#scope.listen(parent);
    this.#scope.limit(timeoutMs, () => timeoutReason(toolName, timeoutMs!));
  }

  get signal(): AbortSignal {
    return this.#scope.signal;
  }

  /** True once the timeout fired (before any other abort). */
  get timedOut(): boolean {
    return this.#scope.cause === 'timeout';
  }

  /** True once the grace after the abort ran out with the child still busy. */
  get expired(): boolean {
    return this.#scope.scopeState === ScopeState.Abandoned;
  }

  /** `promise`, unless the grace after an abort runs out first: then the signal's reason. */
  wait<T>(promise: PromiseLike<T>): Promise<T> {
    if (this.expired) return Promise.reject(this.signal.reason);
    return new Promise<T>((resolve, reject) => {
      this.#rejectPending = reject;
      promise.then(resolve, reject);
    }).finally(() => (this.#rejectPending = undefined));
  }

  /** The caller stopped: aborts the child's signal (if nothing did yet), without grace. */
  stop(reason: unknown): void {
    this.#scope.abort('consumer', reason);
  }

  /** Removes the parent listener and clears the timers; the signal stays as it is. */
  dispose(): void {
    this.#scope.close();
  }
}

/**
 * Steps an inner tool's iterator for a wrapper, remembering whether it settled (returned or
 * threw). `release()`, called from the wrapper's `finally`, returns an unsettled iterator
 * without waiting: the wrapper's consumer left, or the wrapper itself threw, and a stuck tool
 * must not hold that exit (M5's reasoning).
 */
export class InnerSteps<P, O> {
  #settled = false;
  constructor(readonly iterator: AsyncIterator<P, O, undefined>) {}

  async next(): Promise<IteratorResult<P, O>> {
    try {
      const step = await this.iterator.next();
      if (step.done === true) this.#settled = true;
      return step;
    } catch (error) {
      this.#settled = true;
      throw error;
    }
  }

  release(): void {
    if (!this.#settled) closeWithoutWaiting(this.iterator);
  }
}

/**
 * Runs a tool's `execute` with validated input under a {@link ChildLink}: yields its
 * progress, returns its raw output. Shared by `callTool`, `withTimeout` and `withRetry`.
 */
export async function* invoke<I, P, O>(
  tool: Tool<I, P, O>,
  input: I,
  parent: ToolContext,
  options: { timeoutMs: number | undefined; graceMs: number; toolCallId: string },
): AsyncGenerator<P, O, undefined> {
  const link = new ChildLink(parent.signal, tool.name, options.timeoutMs, options.graceMs);
  let iterator: AsyncIterator<P, O, undefined> | undefined;
  /** True once the child returned or threw: nothing of it is left to stop. */
  let settled = false;
  try {
    const output = tool.execute(input, {
      toolCallId: options.toolCallId,
      toolName: tool.name,
      index: parent.index,
      signal: link.signal,
      // The caller's trace context (read only if the child reads it): its spans are the caller's call span's.
      get traceContext() {
        return parent.traceContext;
      },
      // The caller's client: a child's log lines and questions go where the caller's go.
      client: parent.client,
      // The caller's key (J5): the child runs as part of the caller's call.
      get idempotencyKey() {
        return parent.idempotencyKey;
      },
    });
    if (!isAsyncIterator(output)) {
      const value = await link.wait(Promise.resolve(output as O | PromiseLike<O>));
      settled = true;
      if (link.timedOut) throw link.signal.reason;
      return value;
    }
    iterator = output as AsyncIterator<P, O, undefined>;
    for (;;) {
      // A child that never awaits a timer or I/O must not stop its own timeout, or any timer (A7).
      if (turnClock.tick()) await turnClock.turn();
      // Progress yielded during the grace after an abort is still forwarded, as the runtime does.
      const step = await link.wait(iterator.next());
      if (step.done === true) {
        settled = true;
        if (link.timedOut) throw link.signal.reason;
        return step.value;
      }
      yield step.value;
    }
  } catch (error) {
    // A rejection from wait() is the child's own throw, unless the grace ran out.
    if (!link.expired) settled = true;
    // Once the timeout fired, whatever the tool did next is the timeout's consequence.
    if (link.timedOut) throw link.signal.reason;
    throw error;
  } finally {
    if (!settled) {
      // The caller stopped early, or the child is let go of after its grace: abort its
      // signal (if nothing did yet) and return its generator without awaiting it — a child
      // parked in an await would otherwise hang the caller (the merge's M5 rule).
      link.stop(callerStopped(tool.name));
      if (iterator !== undefined) closeWithoutWaiting(iterator);
    }
    link.dispose();
  }
}

/** The reason a child's signal carries when its caller stopped before it ended. */
export function callerStopped(toolName: string): DOMException {
  return new DOMException(`The caller stopped before tool "${toolName}" finished`, 'AbortError');
}

export function checkTimeoutMs(where: string, ms: unknown): void {
  if (ms !== undefined && !(typeof ms === 'number' && ms > 0)) {
    throw new TypeError(`${where}: the time limit must be a positive number of ms, received ${describeValue(ms)}`);
  }
}

export function checkGraceMs(where: string, ms: unknown): void {
  if (ms !== undefined && !(typeof ms === 'number' && ms >= 0)) {
    throw new TypeError(`${where}: graceMs must be a non-negative number of ms, received ${describeValue(ms)}`);
  }
}
