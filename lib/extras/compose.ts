/**
 * Composing tools: a tool that calls another tool in one line, wrappers that return a new
 * tool with the same types (`withTimeout`, `withRetry`, `mapProgress`), and
 * {@link pipeEvents}, which keeps a run's cleanup when its events go through ix operators.
 *
 * ```ts
 * const summarize = defineTool({
 *   name: 'summarize_file',
 *   input: v.object({ path: v.string() }),
 *   async *execute({ path }, ctx) {
 *     const file = yield* callTool(readFile, { path }, ctx);   // validated, progress forwarded
 *     return `first line: ${resultText(file).split('\n')[0]}`;
 *   },
 * });
 * ```
 *
 * Cancellation follows `lib/core/abort.ts`: a child gets its own `AbortController` fed by one
 * listener on the parent's signal, removed when the child is done — never
 * `AbortSignal.any`, whose dependants Node 20 never prunes on a long-lived signal
 * (`../shared/research/libraries.md` §3).
 *
 * @module
 */
import { retry } from 'abort-controller-x';
import { timeoutReason } from '../core/abort.ts';
import { parseArguments, validateArguments } from '../core/schema.ts';
import { isAsyncIterator } from '../core/stages/execute.ts';
import { closeWithoutWaiting } from '../core/streams/merge.ts';
import { describeValue, normalizeToolOutput, type ContentBlock, type Tool, type ToolContext, type ToolResult } from '../core/tool.ts';

/** The validated input type of a tool. */
export type ToolInputOf<T> = T extends Tool<infer I, unknown, unknown> ? I : never;
/** What a tool yields as progress (`never` for a tool without progress). */
export type ToolProgressOf<T> = T extends Tool<any, infer P, unknown> ? P : never;
/** What a tool's `execute` returns, before normalization. */
export type ToolOutputOf<T> = T extends Tool<any, unknown, infer O> ? O : never;

/**
 * What {@link callTool} returns for a tool whose `execute` returns `O`: the normalized
 * {@link ToolResult} (the rule of `normalizeToolOutput`). A tool that already returns
 * `ToolResult<D>` keeps its `details` type; any other output becomes `ToolResult<never>`
 * (content only).
 */
export type NormalizedOutput<O> = O extends ToolResult<infer D> ? ToolResult<D> : ToolResult<never>;

/**
 * Thrown by {@link callTool} when the arguments do not fit the child tool's schema (or
 * its `prepareArguments` throws). The message is the text a model would get for the same
 * call (contract P5): one line per issue with its dotted path, then the received
 * arguments. {@link withRetry} never retries it: the same arguments would fail again.
 */
export class ToolInputError extends Error {
  override readonly name = 'ToolInputError';
  /** @param toolName - the child tool whose input was rejected. */
  constructor(
    message: string,
    readonly toolName: string,
  ) {
    super(message);
  }
}

/** Options of {@link callTool}. */
export interface CallToolOptions {
  /**
   * The id the child's context carries.
   * @default the parent's `toolCallId`
   */
  toolCallId?: string;
  /**
   * The child's time limit in ms: its signal aborts with a `TimeoutError` DOMException
   * (the runtime's text: `Tool "x" timed out after N ms`) and, `graceMs` later at most,
   * `callTool` throws that reason.
   * @default the child tool's own `timeoutMs`, else none
   */
  timeoutMs?: number;
  /**
   * How long, in ms, to wait for a child that ignores its aborted signal (the parent's
   * abort or the timeout) before throwing the signal's reason and letting go of the child
   * (`return()` not awaited), as the runtime's `abortGraceMs` does.
   * @default 100
   */
  graceMs?: number;
}

/** Default of {@link CallToolOptions.graceMs}, in ms: the runtime's `abortGraceMs` default. */
const DEFAULT_GRACE_MS = 100;
/** Longest delay a Node timer honours, in ms; a longer limit means none. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * Calls `tool` from inside another tool's `execute`, as the runtime would: the arguments
 * are parsed and validated with the child's schema (after its `prepareArguments`), the
 * child runs with a signal derived from `context.signal`, its progress is yielded to the
 * caller, and its output comes back normalized into a {@link ToolResult}.
 *
 * Use it with `yield*` in an async-generator tool, so the child's progress becomes the
 * parent's: `const result = yield* callTool(child, args, ctx)`. In a plain async tool, drain
 * it (`for await` drops the return value; call `next()` until `done`).
 *
 * Cancellation: the child's signal is a child `AbortController` fed by one listener on
 * `context.signal` (removed when the child ends), so aborting the parent aborts the child
 * with the same reason. If the child does not stop within `graceMs`, `callTool` throws the
 * reason and lets go of the child. If the caller stops early (its generator is returned),
 * the child's signal aborts and its generator is returned too (not awaited), so its
 * `finally` runs.
 *
 * @param tool - the child tool.
 * @param args - its arguments, typed as its validated input (a field with a schema default
 *   is typed as required: pass it, or pass `unknown` data cast to the type — it is
 *   validated either way).
 * @param context - the calling tool's context; the child's context has the same `index`,
 *   `toolCallId` (unless `options.toolCallId`), its own `toolName` and a derived `signal`.
 * @returns the child's output, normalized; the child's `terminate` flag is kept in it but
 *   has no effect unless the parent returns it.
 * @throws {@link ToolInputError} when the arguments are invalid (P5 text); the child's own
 *   error when it throws; the `TimeoutError` DOMException when `timeoutMs` ran out; the
 *   parent signal's reason when it was already aborted, or when the child ignored it for
 *   `graceMs`.
 *
 * @example
 * ```ts
 * async *execute({ paths }, ctx) {
 *   const texts: string[] = [];
 *   for (const path of paths) texts.push(resultText(yield* callTool(readFile, { path }, ctx)));
 *   return texts.join('\n---\n');
 * }
 * ```
 */
export async function* callTool<I, P, O>(
  tool: Tool<I, P, O>,
  args: I,
  context: ToolContext,
  options: CallToolOptions = {},
): AsyncGenerator<P, NormalizedOutput<O>, undefined> {
  checkGraceMs('callTool', options.graceMs);
  const timeoutMs = options.timeoutMs ?? tool.timeoutMs;
  checkTimeoutMs('callTool', timeoutMs);
  context.signal.throwIfAborted();
  const input = await checkInput(tool, args);
  context.signal.throwIfAborted();
  const output = yield* invoke(tool, input, context, {
    timeoutMs,
    graceMs: options.graceMs ?? DEFAULT_GRACE_MS,
    toolCallId: options.toolCallId ?? context.toolCallId,
  });
  return normalizeToolOutput(output) as NormalizedOutput<O>;
}

/**
 * The text of a result's content: text blocks joined with `"\n"`, an image block as
 * `[image <mimeType>]`.
 */
export function resultText(result: { content: readonly ContentBlock[] }): string {
  return result.content.map((block) => (block.type === 'text' ? block.text : `[image ${block.mimeType}]`)).join('\n');
}

/**
 * A tool like `tool` (same name, schema, types, `executionMode`, `timeoutMs`) whose every
 * call is limited to `ms` wherever it runs — under `runTools`, through {@link callTool}, or
 * called directly. At `ms` the call's signal aborts with a `TimeoutError` DOMException
 * whose message is the runtime's (`Tool "x" timed out after N ms`); if the tool has not
 * ended `graceMs` later, it is let go of (`return()` not awaited). Either way the call
 * then fails with that `TimeoutError`, even if the tool returned something after the
 * timeout (its output is dropped).
 *
 * Under `runTools` the failure is an ordinary error result (`outcome: 'error'`), its text
 * `TimeoutError: Tool "x" timed out after N ms`; the tool's own `timeoutMs` (if any) still
 * applies as well and gives `outcome: 'timed_out'`. Use the wrapper for a limit on a
 * child called with `callTool`, or to make a limit part of the tool itself.
 *
 * @param ms - the limit, in ms (> 0).
 * @throws TypeError at once when `ms` or `options.graceMs` is not a valid number of ms.
 */
export function withTimeout<I, P, O>(tool: Tool<I, P, O>, ms: number, options: { graceMs?: number } = {}): Tool<I, P, O> {
  if (ms === undefined) throw new TypeError('withTimeout: ms is required');
  checkTimeoutMs('withTimeout', ms);
  checkGraceMs('withTimeout', options.graceMs);
  const graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
  return {
    ...tool,
    execute: (input: I, context: ToolContext) => invoke(tool, input, context, { timeoutMs: ms, graceMs, toolCallId: context.toolCallId }),
  };
}

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
 *   inner {@link withTimeout} is an ordinary failure and is retried.
 * - Every attempt gets the call's signal (through one child controller) and the same
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
export function withRetry<I, P, O>(tool: Tool<I, P, O>, options: RetryOptions): Tool<I, P, O> {
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
 * A tool like `tool` whose progress values go through `fn` (same name, schema, input and
 * output types; progress type `Q`). A tool without progress is returned unchanged in
 * behaviour. `fn` runs once per value, in order, before the value is yielded; a throw from
 * `fn` fails the call like a throw from the tool.
 *
 * @example
 * ```ts
 * const quietShell = mapProgress(shell, (chunk) => `${chunk.text.length} bytes`);
 * ```
 */
export function mapProgress<I, P, O, Q>(tool: Tool<I, P, O>, fn: (progress: P, context: ToolContext) => Q): Tool<I, Q, O> {
  if (typeof fn !== 'function') throw new TypeError(`mapProgress: fn must be a function, received ${describeValue(fn)}`);
  return {
    ...tool,
    execute: (input: I, context: ToolContext) => {
      const output = tool.execute(input, context);
      if (!isAsyncIterator(output)) return output as O | Promise<O>;
      return mapped(output as AsyncIterator<P, O, undefined>, fn, context);
    },
  };
}

/**
 * Runs `start(signal)` — a `runTools` or `runAgent` run — through `pipeline` (ix
 * operators, typically) and guarantees the run's cleanup when the consumer's loop ends,
 * whatever the operators do.
 *
 * Why it exists: a plain `for await (const e of from(runTools(...)).pipe(...))` closes
 * every tool on `break` or a throw as long as each operator iterates its source with
 * `for await` (ix's `map`, `filter`, `take`, `takeWhile`, `tap`, `scan`, `catchError`,
 * `withAbort`, `first`, `toArray`): the `return()` travels down to the run. Operators that
 * drive their source by hand and stop without calling `return()` — ix 7's `takeUntil` does
 * exactly that — leave the run suspended: tools keep their resources, their `finally`
 * never runs, their signals never abort (see `spec/extras/compose.spec.ts`). This helper sits at
 * the consumer's end of the pipeline: when the loop over it ends (done, `break`, throw),
 * it returns the run (not awaited) and aborts the signal it gave `start`, which reaches a
 * tool even while the run waits in an `await`.
 *
 * @param start - makes the run; pass it the signal (`(signal) => runTools(calls, { tools, signal })`).
 * @param pipeline - receives the run's events as an `AsyncIterable`: `(events) => from(events).pipe(...)`.
 * @param options.signal - an outer signal that aborts the run too (one listener, removed at the end).
 * @returns an async generator of what `pipeline` yields. Its return value is the run's own
 *   (`ToolBatch`, `AgentResult`) when the run finished, else `undefined` (ix drops return values).
 *
 * @example
 * ```ts
 * import { from } from 'ix/asynciterable';
 * import { filter, map, takeUntil } from 'ix/asynciterable/operators';
 *
 * const progress = pipeEvents(
 *   (signal) => runTools(calls, { tools, signal }),
 *   (events) => from(events).pipe(
 *     filter((e) => e.type === 'tool_execution_update'),
 *     map((e) => e.progress),
 *     takeUntil(() => userPressedStop),
 *   ),
 * );
 * for await (const p of progress) draw(p);
 * ```
 */
export async function* pipeEvents<T, Ret, R>(
  start: (signal: AbortSignal) => AsyncGenerator<T, Ret, undefined>,
  pipeline: (events: AsyncIterable<T>) => AsyncIterable<R>,
  options: { signal?: AbortSignal } = {},
): AsyncGenerator<R, Ret | undefined, undefined> {
  const controller = new AbortController();
  const outer = options.signal;
  const onOuterAbort = (): void => controller.abort(outer!.reason);
  if (outer !== undefined) {
    if (outer.aborted) controller.abort(outer.reason);
    else outer.addEventListener('abort', onOuterAbort, { once: true });
  }
  const run = start(controller.signal);
  let finished: { value: Ret } | undefined;
  async function* source(): AsyncGenerator<T, Ret, undefined> {
    const value = yield* run;
    finished = { value };
    return value;
  }
  const tapped = source();
  const events = pipeline(tapped)[Symbol.asyncIterator]();
  let pipelineDone = false;
  try {
    for (;;) {
      const step = await events.next();
      if (step.done === true) {
        pipelineDone = true;
        return finished?.value;
      }
      yield step.value;
    }
  } catch (error) {
    pipelineDone = true;
    throw error;
  } finally {
    outer?.removeEventListener('abort', onOuterAbort);
    // Not awaited: an operator whose return() waits for a parked source (ix's timeout)
    // would hang this consumer's break.
    if (!pipelineDone) closeWithoutWaiting(events);
    if (finished === undefined) {
      // The run is suspended at a yield (return() finishes it now: consumer exit, A5), or
      // parked in an await because an operator abandoned a pending next(): then return()
      // is queued behind that step, and the abort below is what reaches the tools.
      closeWithoutWaiting(tapped);
      closeWithoutWaiting(run);
      controller.abort(new DOMException('The consumer stopped iterating the event pipeline before the run ended', 'AbortError'));
    }
  }
}

// ---------------------------------------------------------------------------------------
// Internals

/** Parses, shims and validates `args` for `tool` as the runtime's prepare stage does; throws {@link ToolInputError}. */
async function checkInput<I>(tool: Tool<I, unknown, unknown>, args: unknown): Promise<I> {
  const parsed = parseArguments(args, tool.name);
  if (!parsed.ok) throw new ToolInputError(parsed.message, tool.name);
  let value: unknown = parsed.value;
  if (tool.prepareArguments !== undefined) {
    try {
      value = await tool.prepareArguments(value);
    } catch (error) {
      throw new ToolInputError(`Tool "${tool.name}" could not read its arguments: ${error instanceof Error ? error.message : String(error)}`, tool.name);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new ToolInputError(`Tool "${tool.name}" could not read its arguments: prepareArguments returned a non-object.`, tool.name);
    }
  }
  const checked = await validateArguments(tool.input, value as Record<string, unknown>, tool.name);
  if (!checked.ok) throw new ToolInputError(checked.message, tool.name);
  return checked.value as I;
}

/**
 * A child call's cancellation: its own controller, fed by one listener on the parent's
 * signal and by an optional timer; a grace timer after the abort. States only move
 * forward: running → aborted (parent or timeout) → expired (grace over) → disposed.
 */
class ChildLink {
  readonly #controller = new AbortController();
  readonly #parent: AbortSignal;
  readonly #onParentAbort = (): void => this.abort(this.#parent.reason, false);
  readonly #graceMs: number;
  #timedOut = false;
  #expired = false;
  #disposed = false;
  #timeoutTimer: ReturnType<typeof setTimeout> | undefined;
  #graceTimer: ReturnType<typeof setTimeout> | undefined;
  /** Rejects the step being waited for, if any, when the grace runs out. */
  #rejectPending: ((reason: unknown) => void) | undefined;

  constructor(parent: AbortSignal, toolName: string, timeoutMs: number | undefined, graceMs: number) {
    this.#parent = parent;
    this.#graceMs = graceMs;
    if (parent.aborted) {
      this.abort(parent.reason, false);
      return;
    }
    parent.addEventListener('abort', this.#onParentAbort, { once: true });
    if (timeoutMs !== undefined && timeoutMs <= MAX_TIMER_MS) {
      this.#timeoutTimer = setTimeout(() => this.abort(timeoutReason(toolName, timeoutMs), true), timeoutMs);
    }
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** True once the timeout fired (before any other abort). */
  get timedOut(): boolean {
    return this.#timedOut;
  }

  /** True once the grace after the abort ran out with the child still busy. */
  get expired(): boolean {
    return this.#expired;
  }

  /** Aborts the child once and starts the grace period. */
  abort(reason: unknown, timeout: boolean): void {
    if (this.#disposed || this.#controller.signal.aborted) return;
    this.#timedOut = timeout;
    clearTimeout(this.#timeoutTimer);
    this.#controller.abort(reason);
    if (this.#graceMs <= 0) this.#expire();
    else if (this.#graceMs <= MAX_TIMER_MS) this.#graceTimer = setTimeout(() => this.#expire(), this.#graceMs);
  }

  #expire(): void {
    if (this.#expired || this.#disposed) return;
    this.#expired = true;
    this.#rejectPending?.(this.#controller.signal.reason);
  }

  /** `promise`, unless the grace after an abort runs out first: then the signal's reason. */
  wait<T>(promise: PromiseLike<T>): Promise<T> {
    if (this.#expired) return Promise.reject(this.#controller.signal.reason);
    return new Promise<T>((resolve, reject) => {
      this.#rejectPending = reject;
      promise.then(
        (value) => {
          this.#rejectPending = undefined;
          resolve(value);
        },
        (error: unknown) => {
          this.#rejectPending = undefined;
          reject(error);
        },
      );
    });
  }

  /** Removes the parent listener and clears both timers; the signal stays as it is. */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    this.#rejectPending = undefined;
    this.#parent.removeEventListener('abort', this.#onParentAbort);
    clearTimeout(this.#timeoutTimer);
    clearTimeout(this.#graceTimer);
  }
}

/**
 * Runs a tool's `execute` with validated input under a {@link ChildLink}: yields its
 * progress, returns its raw output. Shared by `callTool` and `withTimeout`.
 */
async function* invoke<I, P, O>(
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
    const output = tool.execute(input, { toolCallId: options.toolCallId, toolName: tool.name, index: parent.index, signal: link.signal });
    if (!isAsyncIterator(output)) {
      const value = await link.wait(Promise.resolve(output as O | PromiseLike<O>));
      settled = true;
      if (link.timedOut) throw link.signal.reason;
      return value;
    }
    iterator = output as AsyncIterator<P, O, undefined>;
    for (;;) {
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
      link.abort(callerStopped(tool.name), false);
      if (iterator !== undefined) closeWithoutWaiting(iterator);
    }
    link.dispose();
  }
}

async function* mapped<P, O, Q>(iterator: AsyncIterator<P, O, undefined>, fn: (progress: P, context: ToolContext) => Q, context: ToolContext): AsyncGenerator<Q, O, undefined> {
  /** True once the inner tool returned or threw; a throw of `fn` leaves it to be returned. */
  let settled = false;
  try {
    for (;;) {
      let step: IteratorResult<P, O>;
      try {
        step = await iterator.next();
      } catch (error) {
        settled = true;
        throw error;
      }
      if (step.done === true) {
        settled = true;
        return step.value;
      }
      yield fn(step.value, context);
    }
  } finally {
    if (!settled) closeWithoutWaiting(iterator);
  }
}

/** How an attempt sequence ended. */
type End<R> = { ok: true; value: R } | { ok: false; error: unknown };

/**
 * Hands values from a producer (the attempts of `withRetry`) to the generator that yields
 * them: `put` resolves once the consumer asked for the next value, so the producer stays
 * one step ahead at most (as the merge's M3). After `close()`, `put` rejects with an
 * `AbortError`, which ends the attempt in flight.
 */
class Relay<P, R> {
  #item: { value: P; taken: () => void; dropped: (reason: unknown) => void } | undefined;
  #end: End<R> | undefined;
  #wake: (() => void) | undefined;
  #closed = false;
  /** The item handed to the consumer and not acknowledged yet. */
  #handed: { taken: () => void; dropped: (reason: unknown) => void } | undefined;

  put(value: P): Promise<void> {
    if (this.#closed) return Promise.reject(callerStopped('withRetry'));
    return new Promise<void>((taken, dropped) => {
      this.#item = { value, taken, dropped };
      this.#wake?.();
    });
  }

  finish(end: End<R>): void {
    this.#end ??= end;
    this.#wake?.();
  }

  /** Waits for the next value or the end; acknowledges the value handed out before. */
  async next(): Promise<{ value: P } | { end: End<R> }> {
    for (;;) {
      const item = this.#item;
      if (item !== undefined) {
        this.#item = undefined;
        this.#handed = item;
        return { value: item.value };
      }
      if (this.#end !== undefined) return { end: this.#end };
      await new Promise<void>((wake) => {
        this.#wake = wake;
      });
      this.#wake = undefined;
    }
  }

  /** The consumer asked for more: let the producer go on. */
  ack(): void {
    const handed = this.#handed;
    this.#handed = undefined;
    handed?.taken();
  }

  /** The consumer left: a waiting producer is told so, later `put`s reject. */
  close(reason: unknown): void {
    this.#closed = true;
    this.#handed?.dropped(reason);
    this.#item?.dropped(reason);
    this.#handed = undefined;
    this.#item = undefined;
  }
}

async function* retrying<I, P, O>(
  tool: Tool<I, P, O>,
  input: I,
  context: ToolContext,
  options: Pick<RetryOptions, 'retries' | 'backoff' | 'shouldRetry' | 'onRetry'>,
): AsyncGenerator<P, O, undefined> {
  // One child controller for every attempt and every backoff wait, fed by one listener.
  const link = new ChildLink(context.signal, tool.name, undefined, Infinity);
  const relay = new Relay<P, O>();
  const signal = link.signal;
  const attempts = retry(
    signal,
    async (attemptSignal) => {
      const iterator = invoke(tool, input, { ...contextFields(context), signal: attemptSignal }, { timeoutMs: undefined, graceMs: Infinity, toolCallId: context.toolCallId });
      /** True once the attempt's tool returned or threw; a rejected put() leaves it to be returned. */
      let settled = false;
      try {
        for (;;) {
          let step: IteratorResult<P, O>;
          try {
            step = await iterator.next();
          } catch (error) {
            settled = true;
            throw error;
          }
          if (step.done === true) {
            settled = true;
            return step.value;
          }
          await relay.put(step.value);
        }
      } finally {
        // The consumer left while this attempt waited in put(): invoke's cleanup stops the tool.
        if (!settled) closeWithoutWaiting(iterator);
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
  attempts.then(
    (value) => relay.finish({ ok: true, value }),
    (error: unknown) => relay.finish({ ok: false, error }),
  );
  let ended = false;
  try {
    for (;;) {
      const next = await relay.next();
      if ('end' in next) {
        ended = true;
        if (next.end.ok) return next.end.value;
        throw next.end.error;
      }
      yield next.value;
      relay.ack();
    }
  } finally {
    if (!ended) {
      // The caller left: abort the attempt in flight and any backoff wait, and release the
      // attempt waiting for its value to be taken (its put() rejects, so it stops).
      const reason = callerStopped(tool.name);
      link.abort(reason, false);
      relay.close(reason);
    }
    link.dispose();
  }
}

/** The reason a child's signal carries when its caller stopped before it ended. */
function callerStopped(toolName: string): DOMException {
  return new DOMException(`The caller stopped before tool "${toolName}" finished`, 'AbortError');
}

function contextFields(context: ToolContext): Omit<ToolContext, 'signal'> {
  return { toolCallId: context.toolCallId, toolName: context.toolName, index: context.index };
}

function checkTimeoutMs(where: string, ms: unknown): void {
  if (ms !== undefined && !(typeof ms === 'number' && ms > 0)) {
    throw new TypeError(`${where}: the time limit must be a positive number of ms, received ${describeValue(ms)}`);
  }
}

function checkGraceMs(where: string, ms: unknown): void {
  if (ms !== undefined && !(typeof ms === 'number' && ms >= 0)) {
    throw new TypeError(`${where}: graceMs must be a non-negative number of ms, received ${describeValue(ms)}`);
  }
}


