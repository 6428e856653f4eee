/**
 * The tracing seam: what the core tells a tracing implementation ({@link RunTracing}) about
 * a batch and its calls, and the guards that keep a faulty implementation from changing a
 * run.
 *
 * The core imports no tracing library. `toolrun/otel` implements {@link RunTracing} with
 * `@opentelemetry/api`; any other implementation works the same way. With
 * `RunToolsOptions.tracing` unset nothing of this module runs: the run checks one field per
 * call and allocates nothing.
 *
 * Guarantee (contract T1): tracing never changes what a run yields or returns. Every call
 * into the implementation is guarded: a throw is reported once per batch with a
 * `ToolrunWarning` and the run goes on; a `run` that throws, does not call its function,
 * calls it twice, or swallows its throw still has the function called exactly once, and
 * the function's own value or throw is what the core gets.
 *
 * @module
 */
import type { CallOutcome } from '../tool/tool.ts';
import { emitWarning } from '../values/platform.ts';
import type { Tool, ToolResult } from '../tool/tool.ts';
import { thrownText } from '../values/guards.ts';

/** W3C Trace Context headers: `traceparent` and, when there is one, `tracestate`. */
export type TraceHeaders = Readonly<Record<string, string>>;

/** What {@link RunTracing.startBatch} is told about a batch. */
export interface BatchTraceStart {
  /**
   * W3C trace context the batch continues (`RunToolsOptions.traceContext`): its span is
   * then a child of that remote span instead of the active context's.
   */
  readonly traceContext: TraceHeaders | undefined;
  /** `'parallel'` or `'sequential'` (`RunToolsOptions.mode`). */
  readonly mode: 'parallel' | 'sequential';
  /**
   * For a resumed batch (`RunToolsOptions.resume`), the W3C trace context of the paused
   * batch's span, as its state carries it ({@link BatchTrace.headers} at the pause; checked
   * like `traceContext`); `undefined` for a fresh batch, or a state paused untraced or
   * written without one. `toolrun/otel` links the new batch span to it, or continues it.
   */
  readonly resumedFrom: TraceHeaders | undefined;
}

/** What {@link BatchTrace.startCall} is told about a call. */
export interface CallTraceStart {
  /** The call's id as the model sent it (untrusted: may be empty, repeated, long). */
  readonly toolCallId: string;
  /** The tool name as the model sent it (untrusted: may name no tool). */
  readonly toolName: string;
  /** The call's position in the batch. */
  readonly index: number;
  /** The tool the name resolved to; `undefined` for an unknown tool. */
  readonly tool: Tool | undefined;
}

/** How a batch ended, for {@link BatchTrace.end}. */
export interface BatchTraceEnd {
  /**
   * `completed`: every call answered and the batch returned; `consumer_exit`: the consumer
   * left the loop early (`break`, `return()`, `throw()`); `input_error`: the async iterable
   * of calls threw (its error is `error`); `failed`: an unexpected internal error (`error`);
   * `paused`: the batch ended paused for approval (contract H3); the calls waiting for
   * approval end first, with the outcome `pending_approval` (they run, or not, in the
   * resumed batch, whose trace is told where this one paused: {@link BatchTraceStart.resumedFrom}).
   */
  readonly outcome: 'completed' | 'paused' | 'consumer_exit' | 'input_error' | 'failed';
  /** How many calls the batch received. */
  readonly calls: number;
  /** `ToolBatch.aborted` (only for `completed`). */
  readonly aborted: boolean;
  /** `ToolBatch.terminate` (only for `completed`). */
  readonly terminate: boolean;
  readonly error?: unknown;
}

/**
 * A tracing implementation, given to `runTools` as `options.tracing` (and to `runAgent`,
 * `createMcpServer`, `serveMcp`). `openTelemetry()` from `toolrun/otel` is one.
 *
 * The core calls, in this order: {@link RunTracing.startBatch} on the first `next()` of
 * the run; {@link BatchTrace.startCall} when a call is handed out (its
 * `tool_execution_start`); {@link CallTrace.run} around every step of the call's own code
 * (prepare and `beforeToolCall`, `execute`, each `next()` and `return()` of its generator,
 * `afterToolCall`); {@link CallTrace.progress} for each value it yields;
 * {@link CallTrace.end} at its `tool_execution_end` (or when the consumer left first); and
 * {@link BatchTrace.end} once. None of these may throw (a throw is reported with
 * `emitWarning` and ignored, contract T1).
 *
 * @example
 * ```ts
 * // A tracing that logs each call's outcome: no spans, no context.
 * const logging: RunTracing = {
 *   startBatch: () => ({
 *     startCall: (call) => ({
 *       run: (fn, arg) => fn(arg),
 *       progress: () => {},
 *       end: (outcome) => console.log(call.toolName, outcome),
 *       headers: () => undefined,
 *     }),
 *     end: () => {},
 *   }),
 * };
 * ```
 */
export interface RunTracing {
  /**
   * Starts a batch's trace; `undefined` when there is nothing to trace for this batch (an
   * implementation with no exporter behind it): the batch then runs untraced, at the cost of
   * an untraced run, and its calls' `traceContext` is `undefined`.
   */
  startBatch(batch: BatchTraceStart): BatchTrace | undefined;
}

/** One batch's trace (a span, for OpenTelemetry). */
export interface BatchTrace {
  /**
   * Starts the trace of one call (a child span of the batch's), when the call is handed out,
   * before its hooks and its tool run. Called once per call, in call order. A throw, or a
   * value that is not a {@link CallTrace}, leaves that call untraced; the call still runs
   * (tracing never changes a result).
   */
  startCall(call: CallTraceStart): CallTrace;
  /**
   * Ends the batch's trace, once, when the batch ends: completed, paused for approval, left
   * by its consumer, or failed ({@link BatchTraceEnd.outcome}). A throw is ignored.
   */
  end(end: BatchTraceEnd): void;
  /**
   * The W3C trace context headers of the batch's span, read once when the batch pauses
   * (before {@link BatchTrace.end}): the paused state carries them (as plain strings,
   * covered by its signature), and the resumed batch is started with them as
   * {@link BatchTraceStart.resumedFrom}. Only a well-formed `traceparent` (and `tracestate`)
   * is kept. Optional: without it a paused state carries no trace context.
   */
  headers?(): TraceHeaders | undefined;
}

/**
 * How a call's trace ended, for {@link CallTrace.end}: the call's outcome, or
 * `pending_approval` for a call still waiting for approval when its batch paused (it is not
 * an outcome of the call: the resumed batch runs it, or not, under a trace of its own).
 */
export type CallTraceOutcome = CallOutcome | 'pending_approval';

/** One call's trace (a span, for OpenTelemetry). */
export interface CallTrace {
  /**
   * Calls `fn(arg)` with the call's span as the active context and returns what it returns
   * (or throws what it throws); called synchronously, once. The core passes a module-level
   * function and its argument, so a step costs no closure.
   */
  run<A, R>(fn: (arg: A) => R, arg: A): R;
  /** A value the tool yielded (`tool_execution_update.progress`), in order. */
  progress(value: unknown): void;
  /**
   * The call ended with `outcome`; `result` is its final, bounded result (after
   * `afterToolCall`). Called once. A call still running when the consumer left ends with
   * `interrupted` and `result` `undefined`; a call waiting for approval when the batch
   * paused, with `pending_approval`, `isError` false and `result` `undefined`.
   *
   * `thrown` is the value thrown that made this error result, when it came from a throw: the
   * tool's own (whatever the outcome: an `error`, or a `timed_out` / `interrupted` call that
   * rejected with its signal's reason), or what a hook or a function of the tool's definition
   * threw (`prepareArguments`, an async schema, `needsApproval`, `approve`, `beforeToolCall`,
   * `afterToolCall`): the same value as `tool_execution_end`'s `error`. `undefined`
   * for a success, and for an error result no throw made (arguments refused, an unknown tool,
   * a tool that returned an error, a call not run or abandoned); `afterToolCall` turning the
   * error into a success drops it. Read it, never keep it: it is the application's object.
   */
  end(outcome: CallTraceOutcome, isError: boolean, result: ToolResult | undefined, thrown?: unknown): void;
  /** The W3C trace context headers of the call's span (`ToolContext.traceContext`), or `undefined`. */
  headers(): TraceHeaders | undefined;
}

/**
 * A batch's tracing as the core sees it: the implementation's {@link BatchTrace} behind
 * guards, and the calls whose span is still open (ended with the batch if the consumer
 * leaves first).
 *
 * Invariants: `open` holds exactly the calls started and not ended; `warned` only goes
 * from false to true (one warning per batch).
 */
export class TracedBatch {
  readonly #batch: BatchTrace;
  readonly open = new Set<TracedCall>();
  #warned = false;
  #ended = false;

  private constructor(batch: BatchTrace) {
    this.#batch = batch;
  }

  /**
   * Starts the batch's trace; `undefined` when the implementation says there is nothing to
   * trace (it returned `undefined`), or (with a warning) when it throws or returns something
   * else that is not a {@link BatchTrace}.
   */
  static start(tracing: RunTracing, start: BatchTraceStart): TracedBatch | undefined {
    let batch: BatchTrace | undefined;
    try {
      batch = tracing.startBatch(start);
      if (batch === undefined) return undefined;
      if (typeof batch !== 'object' || batch === null || typeof batch.startCall !== 'function') throw new TypeError('startBatch returned no BatchTrace');
    } catch (error) {
      emitWarning(`toolrun: tracing.startBatch failed; the batch runs untraced: ${thrownText(error)}`);
      return undefined;
    }
    return new TracedBatch(batch);
  }

  /** Reports a failure of the implementation, once per batch. */
  warn(what: string, error: unknown): void {
    if (this.#warned) return;
    this.#warned = true;
    emitWarning(`toolrun: tracing ${what} threw and was ignored (further tracing failures of this batch are not reported): ${thrownText(error)}`);
  }

  /** Starts a call's trace; `undefined` when the implementation fails. */
  startCall(call: CallTraceStart): TracedCall | undefined {
    let trace: CallTrace;
    try {
      trace = this.#batch.startCall(call);
      if (typeof trace !== 'object' || trace === null || typeof trace.run !== 'function') throw new TypeError('startCall returned no CallTrace');
    } catch (error) {
      this.warn('startCall', error);
      return undefined;
    }
    const traced = new TracedCall(this, trace);
    this.open.add(traced);
    return traced;
  }

  /**
   * The batch span's W3C headers, for a paused state: well formed (`sanitizeTraceContext`),
   * else `undefined`; `undefined` too when the implementation has no `headers` or fails.
   */
  headers(): TraceHeaders | undefined {
    try {
      return typeof this.#batch.headers === 'function' ? sanitizeTraceContext(this.#batch.headers()) : undefined;
    } catch (error) {
      this.warn('headers', error);
      return undefined;
    }
  }

  /**
   * Ends every call still open — as `pending_approval` when the batch paused (only the calls
   * waiting for approval are open then), else as `interrupted` — then the batch; only the
   * first call counts.
   */
  end(end: BatchTraceEnd): void {
    if (this.#ended) return;
    this.#ended = true;
    const paused = end.outcome === 'paused';
    for (const call of this.open) {
      if (paused) call.end('pending_approval', false, undefined);
      else call.end('interrupted', true, undefined);
    }
    try {
      this.#batch.end(end);
    } catch (error) {
      this.warn('end', error);
    }
  }
}

/** The states of one {@link TracedCall.run}: not entered, running `fn`, `fn` returned, `fn` threw. */
const Phase = { Idle: 0, Entered: 1, Returned: 2, Threw: 3 } as const;
type Phase = (typeof Phase)[keyof typeof Phase];

/**
 * A call's tracing as the core sees it: the implementation's {@link CallTrace} behind
 * guards. `run` is re-entrant (a hook may start another step of the same call only in
 * theory, but the state is saved and restored around each run anyway).
 */
export class TracedCall {
  readonly #batch: TracedBatch;
  readonly #trace: CallTrace;
  #ended = false;
  #headers: TraceHeaders | undefined | null = null;
  // The step in flight: set by `run`, read by `#step` (one bound function per call, not per step).
  #fn: ((arg: unknown) => unknown) | undefined;
  #phase: Phase = Phase.Idle;
  #value: unknown;
  readonly #step: (arg: unknown) => unknown;

  constructor(batch: TracedBatch, trace: CallTrace) {
    this.#batch = batch;
    this.#trace = trace;
    this.#step = (arg) => {
      // Called at most once per run: a second call (a faulty implementation) gets the first's answer.
      // A call after `run` returned (a deferred call of a faulty implementation) does nothing.
      if (this.#fn === undefined) return undefined;
      if (this.#phase !== Phase.Idle) return this.#answer();
      this.#phase = Phase.Entered;
      try {
        this.#value = this.#fn!(arg);
        this.#phase = Phase.Returned;
      } catch (error) {
        this.#value = error;
        this.#phase = Phase.Threw;
      }
      return this.#answer();
    };
  }

  /** `fn(arg)` with the call's span active: `fn` is called exactly once, and its own value or throw is the answer (T1). */
  run<A, R>(fn: (arg: A) => R, arg: A): R {
    const outerFn = this.#fn;
    const outerPhase = this.#phase;
    const outerValue = this.#value;
    this.#fn = fn as (arg: unknown) => unknown;
    this.#phase = Phase.Idle;
    this.#value = undefined;
    try {
      try {
        this.#trace.run(this.#step, arg);
      } catch (error) {
        // The implementation's own throw (before or after `fn`), not `fn`'s: `#step` caught that.
        this.#batch.warn('run', error);
      }
      if (this.#phase === Phase.Idle) {
        // It never called `fn`: run it untraced.
        this.#batch.warn('run', new Error('run() returned without calling the step it was given'));
        this.#step(arg);
      }
      return this.#answer() as R;
    } finally {
      this.#fn = outerFn;
      this.#phase = outerPhase;
      this.#value = outerValue;
    }
  }

  #answer(): unknown {
    if (this.#phase === Phase.Threw) throw this.#value;
    return this.#value;
  }

  progress(value: unknown): void {
    if (this.#ended) return;
    try {
      this.#trace.progress(value);
    } catch (error) {
      this.#batch.warn('progress', error);
    }
  }

  end(outcome: CallTraceOutcome, isError: boolean, result: ToolResult | undefined, thrown?: unknown): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#batch.open.delete(this);
    try {
      this.#trace.end(outcome, isError, result, thrown);
    } catch (error) {
      this.#batch.warn('end', error);
    }
  }

  /** The call span's W3C headers, computed on the first read; `undefined` when there are none or the implementation fails. */
  headers(): TraceHeaders | undefined {
    if (this.#headers !== null) return this.#headers;
    let headers: TraceHeaders | undefined;
    try {
      headers = checkTraceHeaders(this.#trace.headers());
    } catch (error) {
      this.#batch.warn('headers', error);
    }
    this.#headers = headers;
    return headers;
  }
}

/** Longest `tracestate` passed on, in characters (W3C Trace Context: 32 members; 512 is what every vendor must accept). */
const MAX_TRACESTATE_LENGTH = 512;

/** A version-00 `traceparent`: lowercase hex trace id (32), parent id (16), flags (2). */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;
/** `tracestate`: printable ASCII only (list members, `,`, `=`, spaces). */
const TRACESTATE = /^[\x20-\x7e]*$/;

/**
 * The W3C trace context of untrusted headers (an MCP request's `_meta`, a caller's value):
 * `{ traceparent, tracestate? }` when `traceparent` is a well-formed version-00 header with
 * non-zero ids, else `undefined`. `tracestate` is kept only when it is printable ASCII of at
 * most `MAX_TRACESTATE_LENGTH` (512) characters. Nothing else is copied.
 *
 * @example
 * ```ts
 * sanitizeTraceContext({ traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', x: 'y' });
 * // { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' }
 * ```
 */
export function sanitizeTraceContext(headers: unknown): TraceHeaders | undefined {
  if (typeof headers !== 'object' || headers === null) return undefined;
  let traceparent: unknown;
  let tracestate: unknown;
  try {
    traceparent = (headers as Record<string, unknown>).traceparent;
    tracestate = (headers as Record<string, unknown>).tracestate;
  } catch {
    return undefined;
  }
  if (typeof traceparent !== 'string' || traceparent.length !== 55) return undefined;
  const match = TRACEPARENT.exec(traceparent);
  if (match === null || /^0+$/.test(match[1]!) || /^0+$/.test(match[2]!)) return undefined;
  if (typeof tracestate === 'string' && tracestate !== '' && tracestate.length <= MAX_TRACESTATE_LENGTH && TRACESTATE.test(tracestate)) {
    return { traceparent, tracestate };
  }
  return { traceparent };
}

/** What an implementation's `headers()` gave, if it is a record of strings (a copy); else `undefined`. */
function checkTraceHeaders(value: unknown): TraceHeaders | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const headers: Record<string, string> = {};
  let any = false;
  for (const [key, v] of Object.entries(value)) {
    if (typeof v === 'string') {
      headers[key] = v;
      any = true;
    }
  }
  return any ? Object.freeze(headers) : undefined;
}

/** Checks `options.tracing` and `options.traceContext` of `runTools` (a `TypeError` naming the field and value). */
export function checkTracingOptions(tracing: unknown, traceContext: unknown, describe: (value: unknown) => string): void {
  if (tracing !== undefined && (typeof tracing !== 'object' || tracing === null || typeof (tracing as RunTracing).startBatch !== 'function')) {
    throw new TypeError(`runTools: options.tracing must be a RunTracing (an object with a startBatch method, e.g. openTelemetry() from toolrun/otel), received ${describe(tracing)}`);
  }
  if (traceContext === undefined) return;
  if (typeof traceContext !== 'object' || traceContext === null || Array.isArray(traceContext)) {
    throw new TypeError(`runTools: options.traceContext must be an object of W3C trace context headers ({ traceparent, tracestate? }), received ${describe(traceContext)}`);
  }
  for (const [key, value] of Object.entries(traceContext)) {
    if (typeof value !== 'string') throw new TypeError(`runTools: options.traceContext.${key} must be a string, received ${describe(value)}`);
  }
}

/**
 * A traced call's tool as the merge engine sees it: each `next()` and `return()` of the
 * tool's iterator runs in the call's span, so whatever the tool does between two yields
 * (an `await`ed request, a span of its own) belongs to the call, across its suspensions.
 * Made only for a traced call: an untraced tool is merged as it is.
 */
export class TracedIterator implements AsyncIterator<unknown, unknown, undefined> {
  readonly #trace: TracedCall;
  readonly #iterator: AsyncIterator<unknown, unknown, undefined>;
  constructor(trace: TracedCall, iterator: AsyncIterator<unknown, unknown, undefined>) {
    this.#trace = trace;
    this.#iterator = iterator;
  }
  next(): Promise<IteratorResult<unknown, unknown>> {
    return this.#trace.run(nextOf, this.#iterator);
  }
  return(): Promise<IteratorResult<unknown, unknown>> {
    return this.#trace.run(returnOf, this.#iterator);
  }
}

function nextOf(iterator: AsyncIterator<unknown, unknown, undefined>): Promise<IteratorResult<unknown, unknown>> {
  return iterator.next();
}

function returnOf(iterator: AsyncIterator<unknown, unknown, undefined>): Promise<IteratorResult<unknown, unknown>> {
  // A hand-written iterator may have no return(): there is nothing to clean up then.
  return typeof iterator.return === 'function' ? iterator.return() : (undefined as unknown as Promise<IteratorResult<unknown, unknown>>);
}
