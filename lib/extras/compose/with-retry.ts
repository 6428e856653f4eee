/**
 * `withRetry`: a tool that runs again when a call fails, with exponential backoff
 * (abort-controller-x's `retry`).
 *
 * @module
 */
import { retry } from 'abort-controller-x';
import { Channel } from '../../core/streams/channel.ts';
import { describeValue } from '../../core/values/guards.ts';
import { whenSettled, type Settled } from '../../core/values/settled.ts';
import type { Tool, ToolContext } from '../../core/tool/tool.ts';
import { ToolInputError } from './call-tool.ts';
import { callerStopped, ChildLink, InnerSteps, invoke } from './child-call.ts';

/** Options of {@link withRetry}. */
export interface RetryOptions {
  /** How many times to try again after the first failure (so at most `retries + 1` attempts). */
  retries: number;
  /**
   * Exponential backoff with jitter, from abort-controller-x's `retry`: before retry *n*
   * (1-based) it waits a random time between half and all of
   * `min(maxDelayMs, baseMs * 2^(n-1))` ms; the wait ends at once when the call's signal
   * aborts.
   * @default { baseMs: 1000, maxDelayMs: 30_000 } (abort-controller-x's defaults)
   */
  backoff?: { baseMs?: number; maxDelayMs?: number };
  /**
   * Decides whether an error is worth another attempt. Never consulted for an abort (an
   * `AbortError`, or any error once the call's signal aborted) or a {@link ToolInputError}:
   * those are never retried.
   * @default every other error is retried
   */
  shouldRetry?: (error: unknown, attempt: number) => boolean;
  /** Called before each wait, with the error, the failed attempt (0-based) and the wait in ms. Must not throw. */
  onRetry?: (error: unknown, attempt: number, delayMs: number) => void;
}

/**
 * A tool like `tool` (same name, schema and types) that runs again when a call fails,
 * with exponential backoff, using abort-controller-x's `retry`.
 *
 * - Never retried: an abort (the call's signal aborted — run abort, timeout, consumer exit —
 *   or the tool threw an `AbortError`) and a {@link ToolInputError}. A `TimeoutError` from an
 *   inner `withTimeout` is an ordinary failure and is retried.
 * - Every attempt gets the call's signal (through one child `CancelScope`) and the same
 *   validated input. Progress of every attempt, failed ones included, is forwarded as it
 *   comes, with backpressure (an attempt is pulled one step ahead of the consumer).
 * - When the attempts run out, the last error is thrown.
 *
 * Retrying runs the tool's side effects again: wrap idempotent tools.
 *
 * @throws TypeError at once when `retries` is not a non-negative integer, or a backoff
 *   field is not a non-negative number.
 *
 * @example
 * ```ts
 * const fetchPage = withRetry(withTimeout(fetchTool, 10_000), { retries: 2, backoff: { baseMs: 500 } });
 * ```
 */
export function withRetry<I, P, O, N extends string>(tool: Tool<I, P, O, N>, options: RetryOptions): Tool<I, P, O, N> {
  const { retries, backoff = {}, shouldRetry, onRetry } = options ?? ({} as RetryOptions);
  if (!(Number.isInteger(retries) && retries >= 0)) {
    throw new TypeError(`withRetry: options.retries must be a non-negative integer, received ${describeValue(retries)}`);
  }
  for (const key of ['baseMs', 'maxDelayMs'] as const) {
    const value = backoff[key];
    if (value !== undefined && !(typeof value === 'number' && value >= 0)) {
      throw new TypeError(`withRetry: options.backoff.${key} must be a non-negative number of ms, received ${describeValue(value)}`);
    }
  }
  return {
    ...tool,
    execute: (input: I, context: ToolContext) =>
      retrying(tool, input, context, {
        retries,
        backoff,
        ...(shouldRetry === undefined ? {} : { shouldRetry }),
        ...(onRetry === undefined ? {} : { onRetry }),
      }),
  };
}

/**
 * The attempts run in abort-controller-x's `retry` and push their progress into a
 * {@link Channel} with `highWaterMark: 0`: an attempt's tool is pulled again only once the
 * consumer asked for the next value (one step ahead, as the merge's M3). The attempts'
 * end closes the channel.
 */
async function* retrying<I, P, O>(
  tool: Tool<I, P, O>,
  input: I,
  context: ToolContext,
  options: Pick<RetryOptions, 'retries' | 'backoff' | 'shouldRetry' | 'onRetry'>,
): AsyncGenerator<P, O, undefined> {
  // One child scope for every attempt and every backoff wait, fed by one listener.
  const link = new ChildLink(context.signal, tool.name, undefined, Infinity);
  const channel = new Channel<P>({ highWaterMark: 0 });
  /** How the attempts ended; set before the channel closes. */
  let end: Settled<O> | undefined;
  const signal = link.signal;
  const attempts = retry(
    signal,
    async (attemptSignal) => {
      // A spread copies no getter: the trace context and the client are passed on by hand.
      const attemptContext: ToolContext = {
        ...context,
        signal: attemptSignal,
        get traceContext() {
          return context.traceContext;
        },
        client: context.client,
        // Every attempt is the same call: one key (J5).
        get idempotencyKey() {
          return context.idempotencyKey;
        },
      };
      const iterator = invoke(tool, input, attemptContext, { timeoutMs: undefined, graceMs: Infinity, toolCallId: context.toolCallId });
      // A consumer that left leaves the attempt's tool to be returned (invoke's cleanup stops it).
      const steps = new InnerSteps(iterator);
      try {
        for (;;) {
          const step = await steps.next();
          if (step.done === true) return step.value;
          if (!channel.push(step.value)) await channel.ready();
          // The consumer left while this attempt waited: end it (the signal aborted already).
          if (channel.closed) throw callerStopped(tool.name);
        }
      } finally {
        steps.release();
      }
    },
    {
      maxAttempts: options.retries,
      ...(options.backoff?.baseMs === undefined ? {} : { baseMs: options.backoff.baseMs }),
      ...(options.backoff?.maxDelayMs === undefined ? {} : { maxDelayMs: options.backoff.maxDelayMs }),
      onError(error, attempt, delayMs) {
        // Rethrowing here stops the retries (abort-controller-x's contract); an AbortError
        // never gets here (`retry` rethrows it first).
        if (signal.aborted || error instanceof ToolInputError) throw error;
        if (options.shouldRetry !== undefined && !options.shouldRetry(error, attempt)) throw error;
        options.onRetry?.(error, attempt, delayMs);
      },
    },
  );
  whenSettled(attempts, (settled) => {
    end = settled;
    channel.close();
  });
  let ended = false;
  try {
    for await (const value of channel) yield value;
    ended = true;
    if (end!.ok) return end!.value;
    throw end!.error;
  } finally {
    // The caller left: abort the attempt in flight and any backoff wait; the `for await`
    // exit already closed the channel, which releases an attempt waiting on ready().
    if (!ended) link.stop(callerStopped(tool.name));
    link.dispose();
  }
}
