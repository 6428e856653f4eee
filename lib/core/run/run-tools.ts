/**
 * `runTools`: the entry point, and the generator the consumer iterates.
 *
 * One call, from `runTools` to its `tool_result` (the files in the order a call meets them):
 *
 * ```
 * runTools(calls, options)          run-tools.ts   checks the arguments (options.ts), builds the Run
 *   └─ RunGenerator.next()          run-tools.ts   first next(): listen to options.signal (A6)
 *        └─ Run.pump()              run.ts         Schedule (schedule.ts) hands out call i when S1–S3
 *                                                  and P1 allow; Run.handOut (run.ts):
 *             CallRecord            call.ts          one record per call, states Queued → … → Released
 *             tool_execution_start                   → outbox
 *             prepareToolCall       run/stages/prepare.ts  stage 1: lookup, parse, prepareArguments, validate,
 *                                                      beforeToolCall (P1, P2, P5) → undefined or an Outcome
 *             #execute              run.ts           stage 2: the record enters the run's cancel scope
 *                                                    (abort.ts), starts its timeout, calls executeToolCall
 *                                                    (run/stages/execute.ts): a generator or promise → MergeEngine
 *                                                    (streams/merge.ts); a plain value → an Outcome at once
 *        tool steps ─▶ MergeEngine, the run's mailbox (with the run's notes) ─▶ Run.handle(record)
 *             a yielded value  → tool_execution_update → outbox (live, O5), then a PullMark (outbox.ts, M3)
 *             returned / threw → returnedOutcome / thrownOutcome → an Outcome
 *                                  (a usable result, no afterToolCall, not stopped: straight to #end)
 *             #finalize             run.ts           stage 3: afterToolCall (run/stages/finalize.ts, P3)
 *             #end                  run.ts           stage 4: bound (C20), tool_execution_end → outbox (O3)
 *             release               run.ts           stage 5: InOrderRelease (release.ts, on ReorderBuffer):
 *                                                    tool_result → outbox once every earlier call ended (O2)
 *        RunGenerator               run-tools.ts   takes the outbox's events (Outbox.take pulls the
 *                                                  PullMarks on the way), one event per next()
 * ```
 *
 * Every foreign value on the way (what a tool, hook or schema returns or throws) is read by
 * `values/foreign.ts` and never makes the run throw (P4). Cancellation (abort.ts): the run
 * is a `CancelScope` listening to the caller's signal; each running call is a child scope
 * with its own timeout and grace period (A1–A4). Leaving the loop aborts every call, returns
 * every generator and waits for their cleanup up to `abortGraceMs` (A5). Tracing
 * (seams/tracing.ts, only with `options.tracing`): the run starts a batch trace on the first
 * `next()`, each call a trace at its start, and runs the call's prepare, `execute`, every
 * generator step and `afterToolCall` inside it (T1–T2).
 *
 * @module
 */
import { consumerExitReason, MAX_TIMER_MS, type CancelScope } from '../streams/abort.ts';
import { readResume } from '../approval/resume.ts';
import { DEFAULTS } from '../values/defaults.ts';
import type { ToolBatch, ToolEvent } from './events.ts';
import type { JournalError } from '../seams/journal.ts';
import { checkRunToolsArguments, type RunToolsOptions } from './options.ts';
import { Run } from './run.ts';
import type { Tool, ToolCall } from '../tool/tool.ts';

/**
 * Runs the tool calls of one assistant message.
 *
 * Returns an async generator of {@link ToolEvent}s; its return value is the
 * {@link ToolBatch}: every result message in call order, whether the batch asks the agent
 * loop to stop, and whether the run's abort changed an outcome. Every call gets exactly one
 * `tool_result`, whatever happens — success, throw, unknown tool, bad arguments, block,
 * timeout, abort — unless the consumer leaves the loop early (O1). No failure of a tool, a
 * hook or a schema is thrown out of the generator (P4).
 *
 * A call may wait for a person's approval (its tool's `needsApproval`, or `beforeToolCall`
 * answering `{ needsApproval: true }`, with no `approve` option to answer at once): the
 * batch then ends **paused** — `ToolBatch.paused` holds the requests and a JSON state, and
 * `runTools(calls, { tools, resume: { state, approvals } })`, here or in another process,
 * finishes it (contract H1–H9). O1 then holds across the pause and its resume.
 *
 * Nothing starts, and nothing is attached to `options.signal`, before the first `next()`
 * (A6). Leaving the loop (`break`, `throw()`, `return()`) aborts every running call and
 * completes once their cleanup has run or `abortGraceMs` has passed (A5).
 *
 * @param calls - the calls in the order the model wrote them: an array, any iterable, or
 *   an async iterable of calls still arriving from a stream (S4).
 * @param options - the tools and how to run them; see {@link RunToolsOptions}.
 * @throws TypeError at once, before anything starts, when `calls` or `options` are
 *   malformed (not iterable, a call without a string name or id, duplicate tool names, a
 *   bad `maxConcurrency`…); the message names the field and the value received. The
 *   generator itself throws only the error of an async `calls` iterable, after answering
 *   every call it had received, and — for `resume` — a `ResumeError` from its first
 *   `next()` when the state cannot be resumed (H7–H9), before any call is touched.
 *
 * @example
 * ```ts
 * const run = runTools(fromAnthropic(message), { tools: [readFile, shell], signal });
 * for await (const event of run) {
 *   if (event.type === 'tool_execution_update') draw(event.toolCallId, event.progress);
 *   if (event.type === 'tool_result') history.push(event.message);
 * }
 * ```
 */
export function runTools<const T extends readonly Tool[], AfterDetails = never>(
  calls: Iterable<ToolCall> | AsyncIterable<ToolCall>,
  options: RunToolsOptions<T, AfterDetails>,
): AsyncGenerator<ToolEvent<T[number], AfterDetails>, ToolBatch<T[number], AfterDetails>, undefined> {
  const list = isSyncIterable(calls) && !Array.isArray(calls) ? Array.from(calls) : calls;
  checkRunToolsArguments(list, options);
  // Type-level only: the events are the tools' own (a call's progress and details come from its tool).
  return new RunGenerator(new Run(list as readonly ToolCall[] | AsyncIterable<ToolCall>, options)) as unknown as AsyncGenerator<
    ToolEvent<T[number], AfterDetails>,
    ToolBatch<T[number], AfterDetails>,
    undefined
  >;
}

/**
 * @internal `runTools` for a host that owns a cancellation scope for the run already (the
 * MCP server: one scope per request, a child of the server's scope): the run enters
 * `parent` at once, as its child, instead of listening to `options.signal` (which must be
 * unset). An abort of `parent` (or of its own parents) aborts the run with the same cause
 * and reason; the run leaves `parent`'s list when it closes. No `AbortController` and no
 * listener are made for the run (an `abort` listener is a tenth of a served MCP call's cost). The
 * arguments are not checked: the host checks its options once, up front.
 */
export function runToolsInScope(calls: readonly ToolCall[], options: RunToolsOptions, parent: CancelScope): AsyncGenerator<ToolEvent, ToolBatch, undefined> {
  // Not checked here: the host checked its options once (checkRunToolsArguments) and builds
  // well-formed calls (the MCP server: its SDK validated the request).
  const run = new Run(calls, options);
  run.enter(parent);
  return new RunGenerator(run);
}

/** The reason a call's signal carries when the run's journal failed (J9). */
function journalFailedReason(): DOMException {
  return new DOMException("The run's journal failed, so the run stopped before this call ended", 'AbortError');
}

function isSyncIterable(value: unknown): value is Iterable<ToolCall> {
  return typeof value === 'object' && value !== null && Symbol.iterator in value && !(Symbol.asyncIterator in value);
}

/** The generator's states, forward only: not started → running → done. */
const Life = { Fresh: 0, Running: 1, Done: 2 } as const;
type Life = (typeof Life)[keyof typeof Life];

const Request = { Next: 0, Return: 1, Throw: 2 } as const;
type Request = (typeof Request)[keyof typeof Request];

type Result = IteratorResult<ToolEvent, ToolBatch>;

/** What `next()` gives after the generator finished (O4); an async generator's `value` is `undefined` then, whatever its return type. */
const DONE = Object.freeze({ done: true, value: undefined }) as unknown as IteratorReturnResult<ToolBatch>;

/**
 * The async generator `runTools` returns, written by hand rather than as an
 * `async function*`: when events are already waiting, `next()` hands one out as an already
 * resolved promise, without resuming a generator body (a third of the per-call cost at
 * N = 1,000).
 *
 * It keeps an async generator's contract: requests (`next`, `return`, `throw`) are
 * answered in the order they were made, one at a time; after it finished (returned, threw,
 * or was closed) every `next()` gives `{ done: true, value: undefined }` (O4).
 */
class RunGenerator implements AsyncGenerator<ToolEvent, ToolBatch, undefined> {
  readonly #run: Run;
  #life: Life = Life.Fresh;
  /** Requests made while an earlier one is still being answered. */
  #inFlight = 0;
  /** Settles (never rejects) when the last request made so far has been answered. */
  #last: Promise<unknown> | undefined;

  constructor(run: Run) {
    this.#run = run;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.return(undefined as never);
  }

  next(): Promise<Result> {
    // The common case, two of a plain call's three events: the generator is running, no
    // request is being answered, no journal failure, and an event already waits. It is
    // handed out at once — what #request → #answer → #step would do, without the three calls.
    if (this.#inFlight === 0 && this.#life === Life.Running) {
      const run = this.#run;
      if (run.journalError === undefined) {
        const event = run.outbox.take();
        if (event !== undefined) return Promise.resolve({ done: false, value: event });
      }
    }
    return this.#request(Request.Next, undefined);
  }

  return(value?: ToolBatch | PromiseLike<ToolBatch>): Promise<Result> {
    return this.#request(Request.Return, value);
  }

  throw(error?: unknown): Promise<Result> {
    return this.#request(Request.Throw, error);
  }

  #request(kind: Request, argument: unknown): Promise<Result> {
    if (this.#inFlight === 0) {
      let answer: Result | Promise<Result>;
      try {
        answer = this.#answer(kind, argument);
      } catch (error) {
        return Promise.reject(error);
      }
      if (!(answer instanceof Promise)) return Promise.resolve(answer);
      this.#track(answer);
      return answer;
    }
    const answer = this.#last!.then(() => this.#answer(kind, argument));
    this.#track(answer);
    return answer;
  }

  #track(answer: Promise<unknown>): void {
    this.#inFlight++;
    const settled = (): void => {
      this.#inFlight--;
    };
    this.#last = answer.then(settled, settled);
  }

  #answer(kind: Request, argument: unknown): Result | Promise<Result> {
    if (this.#life === Life.Done) {
      if (kind === Request.Throw) throw argument;
      return kind === Request.Return ? { done: true, value: argument as ToolBatch } : DONE;
    }
    if (this.#life === Life.Fresh) {
      if (kind !== Request.Next) {
        // Closed before its first next(): nothing was started or attached (A6).
        this.#life = Life.Done;
        this.#run.close();
        if (kind === Request.Throw) throw argument;
        return { done: true, value: argument as ToolBatch };
      }
      this.#life = Life.Running;
      // A resumed run checks its state first (async: Web Crypto); a bad one throws a ResumeError, nothing started (H6–H9).
      if (this.#run.options.resume !== undefined) return this.#resume();
      this.#run.listen(this.#run.options.signal);
      this.#run.tracing?.start(this.#run);
    }
    if (kind !== Request.Next) return this.#leave(kind, argument);
    const ready = this.#step();
    return ready !== undefined ? ready : this.#drive();
  }

  /** The first `next()` of a resumed run: the state is checked and applied, then the run starts (H5). */
  async #resume(): Promise<Result> {
    const run = this.#run;
    const options = run.options;
    try {
      run.applyResume(await readResume({ resume: options.resume!, tools: run.tools, calls: run.received, signingSecret: options.signingSecret, maxChars: options.maxStateChars ?? DEFAULTS.maxStateChars }));
    } catch (error) {
      this.#life = Life.Done;
      run.close();
      throw error;
    }
    run.listen(options.signal);
    // Traced once the state is read: the batch's span is told where the paused one was.
    run.tracing?.start(run);
    const ready = this.#step();
    return ready !== undefined ? ready : this.#drive();
  }

  /** Hands out the next event if one can be had without waiting; `undefined` when the run must wait. */
  #step(): Result | Promise<Result> | undefined {
    const run = this.#run;
    const { outbox, engine } = run;
    try {
      for (;;) {
        // J9: a journal failure stops the run before anything more is handed out.
        if (run.journalError !== undefined) return this.#failJournal(run.journalError);
        const event = outbox.take();
        if (event !== undefined) return { done: false, value: event };
        const record = engine.take();
        if (record !== undefined) {
          run.handle(record);
          continue;
        }
        run.pump();
        if (outbox.size > 0) continue;
        if (run.finished) return this.#finish();
        return undefined;
      }
    } catch (error) {
      if (this.#life !== Life.Done) {
        // Not expected (every foreign failure is a result): still, never leave tools running.
        this.#life = Life.Done;
        run.abort('consumer', consumerExitReason());
        run.closeSources();
        run.close();
        run.tracing?.end(run, 'failed', error);
      }
      throw error;
    }
  }

  async #drive(): Promise<Result> {
    for (;;) {
      await this.#run.engine.wait();
      const ready = this.#step();
      if (ready !== undefined) return ready;
    }
  }

  /** Every call answered: the batch (O6), or the error of the calls' stream (S4); or the paused batch (H3), once its state is built. */
  #finish(): Result | Promise<Result> {
    const run = this.#run;
    this.#life = Life.Done;
    run.close();
    if (run.inputError !== undefined) {
      run.tracing?.end(run, 'input_error', run.inputError.error);
      throw run.inputError.error;
    }
    if (!run.paused) {
      run.tracing?.end(run, 'completed');
      return { done: true, value: { messages: run.messages, terminate: run.terminate, aborted: run.abortChangedOutcome } };
    }
    run.tracing?.end(run, 'paused');
    return run.approvals!.pausedBatch().then((paused) => ({ done: true, value: { messages: run.messages, terminate: false, aborted: false, paused } }));
  }

  /**
   * The journal failed (J9): the run stops as if the consumer had left — every tool aborted
   * and returned, their cleanup waited for up to the grace period (A5) — and the generator
   * throws the {@link JournalError}. Nothing more is journaled or emitted.
   */
  async #failJournal(error: JournalError): Promise<never> {
    const run = this.#run;
    this.#life = Life.Done;
    run.abort('consumer', journalFailedReason());
    const cleanups = run.closeSources();
    run.close();
    if (cleanups.length > 0) await waitAtMost(Promise.all(cleanups), run.graceMs);
    run.tracing?.end(run, 'failed', error);
    throw error;
  }

  /**
   * The consumer left (`return()`, `throw()`, `break`): abort every tool, call every
   * generator's `return()`, and wait for their cleanup (`finally` blocks) — never longer
   * than the grace period: a generator parked in an await that ignores its signal cannot
   * be unwound, and must not hang the consumer's exit (A5, M5).
   */
  async #leave(kind: Request, argument: unknown): Promise<Result> {
    const run = this.#run;
    this.#life = Life.Done;
    run.abort('consumer', consumerExitReason());
    const cleanups = run.closeSources();
    run.close();
    if (cleanups.length > 0) await waitAtMost(Promise.all(cleanups), run.graceMs);
    // After the clean-ups: spans a generator's `finally` made are inside the batch's span.
    run.tracing?.end(run, 'consumer_exit');
    if (kind === Request.Throw) throw argument;
    return { done: true, value: (await argument) as ToolBatch };
  }
}

/** Waits for `promise` (which never rejects), or `ms` milliseconds, whichever comes first; the timer is cleared either way. */
async function waitAtMost(promise: Promise<unknown>, ms: number): Promise<void> {
  if (ms <= 0) return;
  if (ms > MAX_TIMER_MS) {
    await promise;
    return;
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const elapsed = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  try {
    await Promise.race([promise, elapsed]);
  } finally {
    clearTimeout(timer);
  }
}
