/**
 * Scheduling (contract S1–S4, P1) and the life of each call through the five stages.
 *
 * The scheduler hands calls out in call order and drives each one:
 *
 * ```
 * queued ─▶ preparing ─▶ (waiting: exclusive gate) ─▶ running ─▶ finalizing ─▶ ended ─▶ released
 *              │ rejected / not run ─────────────────────────────────────────▶ ended
 * ```
 *
 * States only move forward; a transition first checks the current state, so a late
 * record (a step of an abandoned tool, a hook that answered after the abort) is a no-op.
 *
 * Rules:
 * - prepare is serial in call order (P1): the next call is handed out only once the
 *   previous one is prepared; execution starts as soon as a call's own prepare is done;
 * - at most `maxConcurrency` calls are handed out and not ended (S1);
 * - sequential mode: one call at a time, and the next is handed out only after the
 *   consumer has taken the previous call's `tool_result` (S2);
 * - an exclusive tool (`executionMode: 'sequential'`) starts only when every earlier call
 *   has ended, and no later call is handed out until it has ended (S3);
 * - calls from an async iterable are handed out as they arrive (S4).
 *
 * Nothing polls: the scheduler acts on records from the merge engine (a tool step, a
 * settled hook, a call arriving) and on `pump()`, which the run loop calls whenever the
 * consumer has taken every pending event.
 *
 * @module
 */
import { CallScope, type AbortCause } from './abort.ts';
import type { ToolEvent } from './events.ts';
import type { RunState } from './run-state.ts';
import { boundResult, executedAbandoned, executedFromReturn, executedFromThrow, isPromiseLike, startExecution } from './stages/execute.ts';
import { finalizeExecutedToolCall } from './stages/finalize.ts';
import { errorText, finalizedText, type Executed, type Finalized, type Prepared } from './stages/outcome.ts';
import { notRunText, prepareToolCall } from './stages/prepare.ts';
import { createToolResultMessage, toolExecutionEndEvent } from './stages/result.ts';
import { MergeEngine, Slot, Step, type MergeRecord } from './streams/merge.ts';
import { ReorderBuffer } from './streams/reorder-buffer.ts';
import type { ToolCall, ToolResultMessage } from './tool.ts';

/** Most calls handed out in one `pump()` pass. */
const HAND_OUT_SLICE = 64;

type Phase = 'preparing' | 'waiting' | 'running' | 'finalizing' | 'ended';

/** One call's state. Invariant: `scope` and `slot` are set only while `phase` is `running`. */
export class CallState {
  phase: Phase = 'preparing';
  /** What had stopped the call when its tool settled (`undefined`: nothing, it ended on its own). */
  stoppedBy: AbortCause | undefined;
  /** Whether the run had stopped (abort, consumer exit) when the tool settled or was abandoned. */
  runStoppedFirst = false;
  prepared: Prepared | undefined;
  scope: CallScope | undefined;
  slot: Slot<CallState | undefined> | undefined;
  constructor(
    readonly index: number,
    readonly call: ToolCall,
  ) {}
}

/** Records the scheduler pushes to the engine itself (hooks settling, input arriving, grace over). */
type Note =
  | { kind: 'prepared'; result: Prepared | Finalized }
  | { kind: 'finalized'; result: Finalized }
  | { kind: 'abandoned' }
  | { kind: 'input'; result: IteratorResult<ToolCall, unknown> }
  | { kind: 'input-error'; error: unknown };

/**
 * Runs one batch: hands out calls, reacts to merge records, and queues the events for the
 * run loop in `outbox` (events, and `Slot`s to pull once the events before them are taken).
 */
export class Scheduler {
  /**
   * When a tool settles, what had stopped it is noted at once and its timers cleared: the
   * record may be taken much later (a slow consumer), and an abort in between must not be
   * blamed on a call that had already ended.
   */
  readonly engine = new MergeEngine<CallState | undefined>((state) => {
    if (state?.scope === undefined) return;
    state.stoppedBy = state.scope.cause;
    state.runStoppedFirst = this.#run.stopped;
    state.scope.dispose();
  });
  /** Events for the consumer, and pull markers (`Slot`) that follow an update (M3-style backpressure). */
  readonly outbox: (ToolEvent | Slot<CallState | undefined>)[] = [];
  outboxHead = 0;
  /** Result messages released so far, in call order. */
  readonly messages: ToolResultMessage[] = [];
  /** How many results asked to terminate the batch (and are not errors). */
  terminating = 0;
  /** The error the calls' async iterable threw, if it did. */
  inputError: { error: unknown } | undefined;

  readonly #run: RunState;
  readonly #order = new ReorderBuffer<ToolResultMessage>();
  /** The index of the next call to hand out. */
  #next = 0;
  /** Calls handed out and not ended. */
  #active = 0;
  /** A call whose prepare is still pending: nothing else is handed out meanwhile (P1). */
  #preparing: CallState | undefined;
  /** An exclusive call handed out and not ended: nothing after it is handed out (S3). */
  #exclusive: CallState | undefined;
  /** The async iterable of calls, until its iterator is made on the first read. */
  #source: AsyncIterable<ToolCall> | undefined;
  /** The async iterator of calls, while it may still deliver (S4). */
  #input: AsyncIterator<ToolCall, unknown, undefined> | undefined;
  #reading = false;

  constructor(run: RunState, calls: readonly ToolCall[] | AsyncIterable<ToolCall>) {
    this.#run = run;
    if (Array.isArray(calls)) run.received = calls as ToolCall[];
    else this.#source = calls as AsyncIterable<ToolCall>;
  }

  /** True once every call has been answered and no more can arrive. */
  get finished(): boolean {
    return this.#active === 0 && this.#input === undefined && this.#source === undefined && this.#next === this.#run.received.length;
  }

  /** Hands out calls while the rules allow. Call when the outbox is empty. */
  pump(): void {
    const run = this.#run;
    if (run.stopped) {
      this.#stopInput();
      this.#settleWaiting();
      // Calls never handed out are answered now, as never run (A2).
      while (this.#next < run.received.length) this.#answerNotRun(this.#next++);
      return;
    }
    const sequential = run.options.mode === 'sequential';
    // At most HAND_OUT_SLICE calls per pass: the run loop delivers their events before the
    // next slice, so a 100,000-call batch does not keep every call's state alive at once
    // (the young-generation gc copies all of it; see docs/bench/findings.md).
    for (let handed = 0; this.#preparing === undefined && this.#exclusive === undefined && this.#active < run.concurrency; handed++) {
      if (handed === HAND_OUT_SLICE) return;
      if (this.#next === run.received.length) {
        this.#readInput();
        return;
      }
      this.#handOut(new CallState(this.#next, run.received[this.#next]!));
      this.#next++;
      // S2: the next call waits until the consumer has taken this one's result.
      if (sequential) return;
    }
  }

  /** Reacts to one record of the merge engine. */
  handle(record: MergeRecord<CallState | undefined>): void {
    const state = record.tag;
    if (record.step === Step.External) {
      this.#note(state, record.value as Note);
      return;
    }
    if (state === undefined || state.phase !== 'running') return;
    const { call } = state;
    switch (record.step) {
      case Step.Value:
        this.outbox.push({ type: 'tool_execution_update', toolCallId: call.id, toolName: call.name, index: state.index, progress: record.value });
        this.outbox.push(record.slot!);
        return;
      case Step.Done:
        this.#executed(state, executedFromReturn(state.scope!, call.name, record.value, state.stoppedBy));
        return;
      default:
        this.#executed(state, executedFromThrow(state.scope!, call.name, record.value, state.stoppedBy));
    }
  }

  /**
   * The consumer left: stop reading calls, let go of every running tool. Returns the
   * settling of each tool's `return()`, for the run loop to wait on for at most the grace
   * period (A5).
   */
  close(): Promise<unknown>[] {
    this.#stopInput();
    return this.engine.close();
  }

  #note(state: CallState | undefined, note: Note): void {
    switch (note.kind) {
      case 'prepared':
        if (state !== undefined && state.phase === 'preparing') {
          this.#preparing = undefined;
          this.#afterPrepare(state, note.result);
        }
        return;
      case 'finalized':
        if (state !== undefined && state.phase === 'finalizing') this.#complete(state, note.result);
        return;
      case 'abandoned':
        if (state !== undefined && state.phase === 'running') {
          this.engine.release(state.slot!);
          this.#executed(state, executedAbandoned(state.scope!, state.call.name));
        }
        return;
      case 'input':
        this.#reading = false;
        // A read that settles after the run stopped reading (abort, consumer exit) is
        // dropped: what the run answers must not depend on when the stream settles (S4).
        if (this.#input === undefined) return;
        if (note.result.done === true) this.#input = undefined;
        else this.#run.received.push(coerceCall(note.result.value));
        return;
      case 'input-error':
        // S4: the calls already received are answered; nothing more is handed out.
        this.#reading = false;
        // After a stop, the stream's error is a consequence of letting it go (often the
        // AbortError of a request aborted with the same signal): the run returns its batch.
        if (this.#input === undefined) return;
        this.#input = undefined;
        this.inputError = { error: note.error };
        while (this.#next < this.#run.received.length) this.#answerNotRun(this.#next++);
        return;
    }
  }

  /** Stage 1 for a call: `tool_execution_start`, then prepare (P1, P2). */
  #handOut(state: CallState): void {
    const run = this.#run;
    const { call, index } = state;
    this.#active++;
    if (run.tools.get(call.name)?.executionMode === 'sequential') this.#exclusive = state;
    this.outbox.push({ type: 'tool_execution_start', toolCallId: call.id, toolName: call.name, index, args: call.arguments });
    const prepared = prepareToolCall(run, index, call);
    if (isPromiseLike(prepared)) {
      this.#preparing = state;
      prepared.then(
        (result) => this.engine.push(state, { kind: 'prepared', result } satisfies Note),
        // prepareToolCall turns every failure into an outcome; this is a last line of defence (P4).
        (error: unknown) => this.engine.push(state, { kind: 'prepared', result: finalizedText(index, call, 'rejected', errorText(error)) } satisfies Note),
      );
      return;
    }
    this.#afterPrepare(state, prepared);
  }

  #afterPrepare(state: CallState, result: Prepared | Finalized): void {
    if (result.kind === 'finalized') {
      this.#complete(state, result);
      return;
    }
    state.prepared = result;
    if (this.#exclusive === state && this.#run.firstUnended < state.index) {
      state.phase = 'waiting'; // woken by #complete once every earlier call has ended
      return;
    }
    this.#execute(state);
  }

  /** Stage 2: starts the tool (A1: its own signal; A4: its own timer). */
  #execute(state: CallState): void {
    const run = this.#run;
    const prepared = state.prepared!;
    if (run.stopped) {
      this.#complete(state, finalizedText(state.index, state.call, 'not_run', notRunText(state.call)));
      return;
    }
    state.phase = 'running';
    const scope = new CallScope(state.call.name, prepared.tool.timeoutMs ?? run.options.timeoutMs, run.abortGraceMs, () => {
      state.runStoppedFirst = run.stopped;
      this.engine.push(state, { kind: 'abandoned' } satisfies Note);
    });
    state.scope = scope;
    run.abort.running.add(scope);
    if (run.options.onInProgressChange !== undefined) run.setInProgress(state.call.id, true);
    const started = startExecution(prepared, scope);
    if (started.kind === 'ended') this.#executed(state, started.executed);
    else state.slot = this.engine.add(state, started.iterator);
  }

  /** Stage 3: the tool's outcome goes through `afterToolCall` (P3). */
  #executed(state: CallState, executed: Executed): void {
    const run = this.#run;
    const scope = state.scope!;
    scope.dispose();
    run.abort.running.delete(scope);
    if (run.options.onInProgressChange !== undefined) run.setInProgress(state.call.id, false);
    state.scope = undefined;
    state.slot = undefined;
    state.phase = 'finalizing';
    const finalized = finalizeExecutedToolCall(run, state.prepared!, executed, state.runStoppedFirst);
    if (isPromiseLike(finalized)) {
      finalized.then(
        (result) => this.engine.push(state, { kind: 'finalized', result } satisfies Note),
        (error: unknown) =>
          this.engine.push(state, { kind: 'finalized', result: { ...finalizedText(state.index, state.call, 'error', errorText(error)) } } satisfies Note),
      );
    }
    else this.#complete(state, finalized);
  }

  /** Stages 4 and 5: `tool_execution_end` now (O3), `tool_result` when every earlier call has ended (O2). */
  #complete(state: CallState, finalized: Finalized): void {
    const run = this.#run;
    state.phase = 'ended';
    state.prepared = undefined;
    this.#active--;
    if (this.#preparing === state) this.#preparing = undefined;
    if (this.#exclusive === state) this.#exclusive = undefined;
    run.markEnded(state.index);
    // One bound over the whole text of every result, errors and hook overrides included (C20).
    finalized.result = boundResult(finalized.result, run.maxResultChars);
    if (finalized.result.terminate === true && !finalized.isError) this.terminating++;
    // ToolBatch.aborted: the run's abort decided this outcome (see docs/decisions.md).
    if (run.abort.cause === 'run' && (finalized.outcome === 'not_run' || finalized.outcome === 'interrupted' || finalized.outcome === 'abandoned')) {
      run.abortChangedOutcome = true;
    }
    this.outbox.push(toolExecutionEndEvent(finalized));
    this.#order.push(state.index, createToolResultMessage(finalized));
    for (let message = this.#order.shift(); message !== undefined; message = this.#order.shift()) {
      this.outbox.push({ type: 'tool_result', index: this.messages.length, message });
      this.messages.push(message);
    }
    // An exclusive call waiting for its turn may go now (S3).
    const waiting = this.#exclusive;
    if (waiting !== undefined && waiting.phase === 'waiting' && run.firstUnended === waiting.index) this.#execute(waiting);
  }

  /** A call the run stopped before it was handed out: start, end and result, never run (A2). */
  #answerNotRun(index: number): void {
    const call = this.#run.received[index]!;
    const state = new CallState(index, call);
    this.#active++;
    this.outbox.push({ type: 'tool_execution_start', toolCallId: call.id, toolName: call.name, index, args: call.arguments });
    this.#complete(state, finalizedText(index, call, 'not_run', notRunText(call)));
  }

  #readInput(): void {
    if (this.#source !== undefined) {
      // The iterator is made on the first read, so a run never iterated opens no stream.
      const source = this.#source;
      this.#source = undefined;
      try {
        this.#input = source[Symbol.asyncIterator]();
      } catch (error) {
        this.#input = undefined;
        this.inputError = { error };
        return;
      }
    }
    const input = this.#input;
    if (input === undefined || this.#reading) return;
    this.#reading = true;
    input.next().then(
      (result) => this.engine.push(undefined, { kind: 'input', result } satisfies Note),
      (error: unknown) => this.engine.push(undefined, { kind: 'input-error', error } satisfies Note),
    );
  }

  #stopInput(): void {
    this.#source = undefined;
    const input = this.#input;
    if (input === undefined) return;
    this.#input = undefined;
    // The model's stream is not read further; its own cleanup runs (not awaited: it may be
    // parked in a network read).
    void Promise.resolve()
      .then(() => input.return?.())
      .catch(() => {});
  }

  /** An exclusive call waiting for the calls before it must not start after a stop. */
  #settleWaiting(): void {
    const waiting = this.#exclusive;
    if (waiting !== undefined && waiting.phase === 'waiting' && this.#run.stopped) {
      this.#complete(waiting, finalizedText(waiting.index, waiting.call, 'not_run', notRunText(waiting.call)));
    }
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
  } catch {
    // An unreadable call (a revoked Proxy) is kept as a nameless call: it is answered (O1).
  }
  return call;
}
