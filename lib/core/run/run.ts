/**
 * `Run`: the one record of a run — its calls, the life of each call through the five
 * stages, and its cancellation scope (every running call is a child scope). Beside it, each
 * in its own file: its settings ({@link RunSettings}), its scheduling, S1–S4, P1, H3
 * ({@link Schedule}), in-order release and `terminate` ({@link InOrderRelease}), what the
 * consumer is handed ({@link Outbox}), and the participants (participants/). The journal
 * and tracing take part through one seam, {@link CallLifecycle} (seams/lifecycle.ts), called
 * at a call's hand-out (or `answered`, unhanded), once it is prepared, at each progress
 * value and at its end, and nowhere else; a plain run has no participant and calls none.
 * Approval is {@link Approvals} (made on the first deferral) and, for a resumed batch,
 * {@link Resumption}; `onInProgressChange` is {@link InProgress}.
 *
 * Nothing polls: the run acts on the records of its mailbox — its merge engine, where each
 * tool's settled step and each of the run's own notes ({@link RunNote}: a hook settled, a
 * call arrived, a grace period ran out) are queued in the order they happened — through
 * {@link Run.handle}, and on {@link Run.pump}, which the run generator calls whenever the
 * consumer has taken every pending event. Everything the consumer is to see goes into
 * {@link Run.outbox}.
 *
 * Words (one per idea, here and in the stages; docs/architecture.md has the same list):
 * - **hand out**: a call leaves the queue — its `tool_execution_start`, then stage 1
 *   (`handOut`). Scheduling is when calls are handed out and when an exclusive call starts.
 * - the five stages, one verb each: **prepare** (`prepareToolCall`), **execute** (the
 *   tool's `execute` is called: `#execute`, `executeToolCall`; the call is then `Running`),
 *   **finalize** (`afterToolCall`: `#finalize`, `finalizeToolCall`), **end**
 *   (`tool_execution_end`, state `Ended`: `#end`, `#emitEnd`), **release** (`tool_result`
 *   in call order, state `Released`: `release`, `InOrderRelease`).
 * - **settle**: a promise, or a tool, settles — a tool when it returns or throws
 *   (`#toolSettled`); its outcome is then `returnedOutcome`, `thrownOutcome` or, when it did
 *   not settle within its grace period, `abandonedOutcome`.
 * - **answer**: the run gives a call an outcome without executing it (`not_run` after a
 *   stop: `answerNotRun`, `answer`).
 * - **defer**: a call waits for a person's approval (H3). **hold**: kept back until an
 *   earlier call lets it go — a call held unprepared behind a deferral (`Schedule`), a
 *   result held in the reorder buffer ahead of a gap (O2).
 * - **stop**: the run's signal aborted or the consumer left (`stopped`); nothing new starts.
 *   **finish**: the batch — every call answered, or deferred or held, and no more can
 *   arrive (`finished`); the generator returns.
 * - **close**: a scope leaves its parent and clears its timers; **detach**: the merge
 *   engine lets go of a source (`MergeEngine.detach`, `closeSources` for all of them).
 * - **post**: the run queues one of its notes to its own mailbox (`Run.post`).
 *
 * @module
 */
import type { AbortCause } from '../streams/abort.ts';
import { RunSettings } from './settings.ts';
import type { ResumePlan } from '../approval/approval.ts';
import { Approvals } from './participants/approval.ts';
import { InProgress } from './participants/in-progress.ts';
import { CallRecord, CallState, noteSettled, type CallOwner } from './call.ts';
import { JournalError, type JournalOperation } from '../seams/journal.ts';
import { InOrderRelease, type CommitNote, type ReleaseOwner } from './release.ts';
import type { RunToolsOptions } from './options.ts';
import { abandonedOutcome, boundResult, executeToolCall, readCallTimeout, returnedOutcome, thrownOutcome } from './stages/execute.ts';
import { finalizeToolCall, type FinalizeInput } from './stages/finalize.ts';
import { Problem, readToolOutput } from '../values/foreign.ts';
import { prepareStage, REPLAYED, replayedEnd } from './stages/journal.ts';
import { JournalParticipant } from './participants/journal.ts';
import { executeTraced, TracingParticipant } from './participants/tracing.ts';
import type { CallLifecycle } from '../seams/lifecycle.ts';
import { Participants } from './participants/all.ts';
import { Outcome, outcomeText } from './stages/outcome.ts';
import { DEFERRED, notRun, type JournalInput, type Prepared } from './stages/prepare.ts';
import { createToolResultMessage, toolExecutionEndEvent } from './stages/result.ts';
import { Outbox, PullMark } from './outbox.ts';
import type { StreamNote } from './call-stream.ts';
import { Schedule, type ScheduleOwner } from './schedule.ts';
import { Resumption } from './participants/resumption.ts';
import { MergeEngine, Step, type MergeRecord } from '../streams/merge.ts';
import type { CallOutcome, Tool, ToolCall, ToolResult, ToolResultMessage } from '../tool/tool.ts';
import { isPromiseLike, thrownText } from '../values/guards.ts';

/**
 * The run's notes: what happened to the run itself, outside its tools' steps — a call's
 * asynchronous prepare, `afterToolCall` or journal commit settled, a call's grace period ran
 * out (A3), the stream of calls delivered or failed (S4). The run posts each to its mailbox
 * ({@link Run.post}) rather than acting in the promise callback, so it acts on notes and
 * tool steps alike in the order they happened, from one place ({@link Run.handle}).
 */
type RunNote =
  | { kind: 'prepared'; outcome: Prepared | typeof REPLAYED }
  | CommitNote
  | { kind: 'finalized'; outcome: Outcome }
  | { kind: 'abandoned' }
  | StreamNote;

/** One run (its settings: settings.ts). Each field carries its invariant. */
export class Run extends RunSettings implements JournalInput, FinalizeInput, CallOwner, ReleaseOwner, ScheduleOwner {
  // --- the calls and their scheduling (S1–S4, P1, H3): schedule.ts
  /** `received[i]` is call i, in call order: the caller's array, or the calls a stream delivered so far (appended before they are handed out). */
  readonly received: ToolCall[];
  readonly #schedule: Schedule;
  /** The calls deferred for approval (H3), made on the first deferral: a run that defers none has none. */
  approvals: Approvals | undefined;
  /** The plan of a resumed run, once its state passed every check (H5); `undefined` for a fresh run. */
  resumed: ResumePlan | undefined;

  // --- release in call order (O2, O6, J3)
  /** Each ended call's `tool_result` in call order, the batch's `terminate`, and journaled commits (release.ts). */
  readonly #inOrder: InOrderRelease;
  /** True once the run's signal changed the batch (`ToolBatch.aborted`): an outcome, or a stream of calls cut short; only goes from false to true. */
  abortChangedOutcome = false;

  /** The journal's first failure (J9, only with a `journal`); once set, nothing more is journaled or emitted, and the generator throws it. */
  journalError: JournalError | undefined;

  // --- channels
  /**
   * The run's mailbox: its merge engine, which queues every settled tool step (M1–M3), and
   * the run's own notes ({@link RunNote}, `Step.Note`), in the order they happened.
   */
  readonly engine: MergeEngine<CallRecord | undefined>;
  /** What the consumer is handed next, in order (O3–O5), with the pull marks of generator tools (M3). */
  readonly outbox: Outbox<CallRecord | undefined>;

  /** The executing calls, for `onInProgressChange`; `undefined` when the option is unset. */
  readonly #inProgress: InProgress | undefined;

  // --- the participants in each call's life (seams/lifecycle.ts)
  /** Tracing (T1), when `options.tracing` is set: the batch's trace and each call's. */
  readonly tracing: TracingParticipant | undefined;
  /** The journal (when set) then tracing, in the order they are called; `undefined` for a plain run, which calls none. */
  readonly #participants: Participants | undefined;

  constructor(calls: readonly ToolCall[] | AsyncIterable<ToolCall>, options: RunToolsOptions) {
    super(options);
    this.#inOrder = new InOrderRelease(this);
    this.#schedule = new Schedule(this, this.#inOrder, calls);
    this.received = this.#schedule.received;
    this.engine = new MergeEngine<CallRecord | undefined>(noteSettled);
    this.outbox = new Outbox(this.engine);
    if (options.tracing !== undefined) this.tracing = new TracingParticipant(options.tracing);
    this.#participants = Participants.of(this.journal === undefined ? undefined : new JournalParticipant(this, this.journal), this.tracing);
    if (options.onInProgressChange !== undefined) this.#inProgress = new InProgress(options.onInProgressChange);
  }

  /** Result messages released so far, in call order (O6). */
  get messages(): ToolResultMessage[] {
    return this.#inOrder.messages;
  }

  /** True once every call has been answered — or is deferred or held (H3) — and no more can arrive. */
  get finished(): boolean {
    return this.#inOrder.committing === 0 && this.#schedule.idle;
  }

  /** The error the calls' stream threw, if it did: rethrown once every received call is answered. */
  get inputError(): { error: unknown } | undefined {
    return this.#schedule.inputError;
  }

  /** True when the finished run has calls waiting for approval: the batch ends paused (H3). */
  get paused(): boolean {
    return this.approvals?.paused === true;
  }

  /** Starts a resumed run from its checked plan (H5): the results released before the pause are the batch's first messages (no event: the consumer had them); the others are carried ({@link Resumption}). */
  applyResume(plan: ResumePlan): void {
    this.resumed = plan;
    this.#inOrder.resumeFrom(plan);
    for (const [tool, decision] of plan.standing) this.standing.set(tool, decision);
    this.#schedule.resumeFrom(plan.released, new Resumption(plan, this));
  }

  /** True when the batch asks the agent loop to stop: every result asked, none is an error (O6), or a blocking hook asked (P6). */
  get terminate(): boolean {
    return this.#inOrder.terminate;
  }

  /** Wakes the run generator when the run stops (it may be waiting on the engine). */
  protected override onAbort(_cause: AbortCause): void {
    this.engine.notify();
  }

  /** Hands out calls while the rules allow (schedule.ts), or answers them once the run stopped. Called when the outbox is empty. */
  pump(): void {
    // After a journal failure nothing more is opened (J9): the generator throws.
    if (this.journalError !== undefined) return;
    const cause = this.cause;
    if (cause === undefined) this.#schedule.pump();
    else this.#schedule.stop(cause);
  }

  /** Prepare ended with "needs approval" and no answer (H3): the call waits, without a slot. */
  #defer(record: CallRecord): void {
    if (!record.advance(CallState.Deferred)) return;
    this.#schedule.deferred(record);
    (this.approvals ??= new Approvals(this, this.#inOrder)).defer(record);
  }

  /** Reacts to one record of the mailbox: a tool's step, or one of the run's notes. */
  handle(record: MergeRecord<CallRecord | undefined>): void {
    const call = record.tag;
    if (record.step === Step.Note) {
      this.#handleNote(call, record.value as RunNote);
      return;
    }
    if (call === undefined || call.state !== CallState.Running) return;
    switch (record.step) {
      case Step.Value:
        this.#progress(call, record.value, false);
        this.outbox.pullAfter((call.pullMark ??= new PullMark(call)));
        return;
      case Step.Done:
        this.#returned(call, record.value);
        return;
      default:
        this.#finalize(call, thrownOutcome(call, record.value, call.stoppedBy));
    }
  }

  /** A call's grace period after an abort ran out with its tool still busy (A3): its outcome is synthesized. */
  abandoned(call: CallRecord): void {
    call.runStoppedFirst = this.stopped;
    this.post(call, { kind: 'abandoned' });
  }

  /** Posts a note about `call` (or the run, `undefined`) to the mailbox: it is read in turn, after every step queued before it. */
  post(call: CallRecord | undefined, note: RunNote): void {
    this.engine.post(call, note);
  }

  /** The consumer left: stop reading calls, let go of every running tool; the settling of each tool's `return()`, for the generator to wait on for at most the grace period (A5). */
  closeSources(): Promise<unknown>[] {
    this.#schedule.closeStream();
    return this.engine.close();
  }

  /** Acts on one of the run's notes. */
  #handleNote(call: CallRecord | undefined, note: RunNote): void {
    switch (note.kind) {
      case 'prepared':
        if (call !== undefined && call.state === CallState.Preparing) {
          this.#schedule.preparing(undefined);
          this.#afterPrepare(call, note.outcome);
        }
        return;
      case 'committed':
        this.#inOrder.committed(call!);
        return;
      case 'commit-failed':
        this.#inOrder.commitFailed(call!, note.error);
        return;
      case 'finalized':
        if (call !== undefined && call.state === CallState.Finalizing) this.#end(call, note.outcome);
        return;
      case 'abandoned':
        if (call !== undefined && call.state === CallState.Running) {
          this.engine.detach(call);
          this.#finalize(call, abandonedOutcome(call));
        }
        return;
      case 'input':
        this.#schedule.delivered(note.result);
        return;
      case 'input-error':
        this.#schedule.failed(note.error);
    }
  }

  /** Stage 1 for call `index`: `tool_execution_start`, then prepare (P1, P2). */
  handOut(index: number): void {
    const call = this.received[index]!;
    const tool = this.tools.get(call.name);
    const record = new CallRecord(index, call, this.graceMs, this);
    if (this.#participants?.handOut(record, tool) === false) return;
    record.tool = tool;
    // A tool's limit that is a function of its input is read in #execute, once validated.
    const own = tool?.timeoutMs;
    record.timeoutMs = own === undefined ? this.options.timeoutMs : typeof own === 'number' ? own : undefined;
    record.advance(CallState.Preparing);
    const exclusive = tool?.executionMode === 'sequential';
    this.#schedule.handedOut(record, exclusive);
    this.outbox.push({ type: 'tool_execution_start', toolCallId: call.id, toolName: call.name, index, args: call.arguments });
    const prepared = prepareStage(this, record);
    if (isPromiseLike(prepared)) {
      this.#schedule.preparing(record);
      prepared.then(
        (outcome) => this.post(record, { kind: 'prepared', outcome }),
        // prepareToolCall turns every failure into an outcome; this is a last line of defence (P4).
        (error: unknown) => this.post(record, { kind: 'prepared', outcome: outcomeText('rejected', thrownText(error)) }),
      );
      return;
    }
    // The plain call (prepared at once, may run, no journal entry, not exclusive) goes straight to stage 2.
    if (prepared === undefined && record.extras?.journal === undefined && !exclusive) this.#execute(record);
    else this.#afterPrepare(record, prepared);
  }

  #afterPrepare(record: CallRecord, prepared: Prepared | typeof REPLAYED): void {
    if (prepared === REPLAYED) {
      this.#replay(record);
      return;
    }
    const outcome = this.#participants?.prepared(record) ?? prepared;
    if (outcome !== undefined) {
      if (outcome === DEFERRED) this.#defer(record);
      else this.#end(record, outcome);
      return;
    }
    // S3: an exclusive call waits until every earlier call has ended; release wakes it.
    if (this.#schedule.exclusive === record && this.#inOrder.next < record.index) {
      record.advance(CallState.Waiting);
      return;
    }
    this.#execute(record);
  }

  /** Stage 2: starts the tool (A1: its own signal; A4: its own timer). */
  #execute(record: CallRecord): void {
    const own = record.tool!.timeoutMs;
    const refused = this.stopped ? notRun(record.call) : typeof own === 'function' ? readCallTimeout(record, own) : undefined;
    if (refused !== undefined) {
      this.#end(record, refused);
      return;
    }
    if (!record.advance(CallState.Running)) return;
    record.enter(this);
    if (record.timeoutMs !== undefined) record.startTimeout();
    this.#inProgress?.change(record.call.id, true);
    const trace = record.extras?.trace;
    const started = trace === undefined ? executeToolCall(record) : executeTraced(trace, record);
    if (started instanceof Outcome) this.#finalize(record, started);
    else this.engine.attach(record, started);
  }

  /**
   * The tool returned `value`. The common case — it ended on its own, it returned a usable
   * result, and there is no `afterToolCall` to see it — goes straight to stage 4, with no
   * `Outcome` object (what `returnedOutcome` and finalize would give is this very result).
   */
  #returned(record: CallRecord, value: unknown): void {
    if (record.stoppedBy === undefined && this.afterToolCall === undefined) {
      const read = readToolOutput(value);
      if (!(read instanceof Problem)) {
        if (this.#toolSettled(record)) this.#end(record, read);
        return;
      }
    }
    this.#finalize(record, returnedOutcome(record, value, record.stoppedBy));
  }

  /** The tool settled (returned, threw, or was abandoned): the call moves to `Finalizing`; false when it was already past `Running`. */
  #toolSettled(record: CallRecord): boolean {
    if (!record.advance(CallState.Finalizing)) return false;
    record.close();
    this.#inProgress?.change(record.call.id, false);
    return true;
  }

  /** Stage 3: the tool settled with `executed`; it goes through `afterToolCall` (P3). */
  #finalize(record: CallRecord, executed: Outcome): void {
    if (!this.#toolSettled(record)) return;
    const finalized =
      record.trace === undefined || this.afterToolCall === undefined
        ? finalizeToolCall(this, record, executed)
        : record.trace.run(() => finalizeToolCall(this, record, executed), undefined);
    if (finalized instanceof Outcome) {
      this.#end(record, finalized);
      return;
    }
    finalized.then(
      (outcome) => this.post(record, { kind: 'finalized', outcome }),
      (error: unknown) => this.post(record, { kind: 'finalized', outcome: outcomeText('error', thrownText(error)) }),
    );
  }

  /**
   * Stages 4 and 5 for the call's outcome: `tool_execution_end` now (O3), `tool_result` when
   * every earlier call has ended (O2). A plain `ToolResult` is an `ok` outcome: the common
   * case, a tool that returned a usable result with nothing to finalize, makes no `Outcome`
   * (and no throw made it). An outcome a throw made carries the thrown value (`Outcome.thrown`)
   * on to the end event's `error` and the call's trace (O7, T2).
   */
  #end(record: CallRecord, ended: Outcome | ToolResult): void {
    if (!record.advance(CallState.Ended)) return;
    const outcome = ended instanceof Outcome ? ended : undefined;
    const isError = outcome === undefined ? false : outcome.isError;
    const kind: CallOutcome = outcome === undefined ? 'ok' : outcome.outcome;
    // One bound over the whole text of every result, errors and hook overrides included (C20).
    const result = boundResult(outcome === undefined ? (ended as ToolResult) : outcome.result, this.maxResultChars);
    this.#emitEnd(record, result, isError, kind, createToolResultMessage(record.call, result, isError), false, outcome?.thrown);
  }

  /** A call whose prior is `'ended'` (J4): its journaled progress, end (replayed) and result, nothing run, nothing committed. */
  #replay(record: CallRecord): void {
    if (!record.advance(CallState.Ended)) return;
    const { progress, result, message, outcome } = replayedEnd(record.journal!, this.maxResultChars);
    if (progress !== undefined) for (const value of progress) this.#progress(record, value, true);
    this.#emitEnd(record, result, message.isError, outcome, message, true);
  }

  /** One progress value of a running (or replayed) call: to each participant, then its `tool_execution_update`. */
  #progress(record: CallRecord, value: unknown, replayed: boolean): void {
    this.#participants?.progress(record, value, replayed);
    const call = record.call;
    this.outbox.push({ type: 'tool_execution_update', toolCallId: call.id, toolName: call.name, index: record.index, progress: value });
  }

  /**
   * Stage 4 for a call already `Ended` (run now or replayed): its slot freed, `tool_execution_end`
   * emitted (with `thrown`'s value as its `error`, and to the trace, when a throw made the outcome); then stage 5.
   */
  #emitEnd(record: CallRecord, result: ToolResult, isError: boolean, kind: CallOutcome, message: ToolResultMessage, replayed: boolean, thrown?: { readonly value: unknown }): void {
    record.args = undefined;
    this.#schedule.ended(record);
    this.#inOrder.countTerminate(result.terminate, isError, kind);
    // ToolBatch.aborted: the run's abort decided this outcome (docs/adr/0001-every-call-is-answered.md).
    if (!replayed && this.cause === 'run' && (kind === 'not_run' || kind === 'interrupted' || kind === 'abandoned')) this.abortChangedOutcome = true;
    const end = toolExecutionEndEvent(record, result, isError, kind, thrown);
    if (replayed) end.replayed = true;
    this.outbox.push(end);
    this.#participants?.ended(record, { outcome: kind, isError, result, message, replayed, thrown });
    this.release(record, message);
  }

  /** Stage 5 for an ended call: released in call order (release.ts); an exclusive call waiting for its turn may go then (S3). */
  release(record: CallRecord, message: ToolResultMessage): void {
    this.#inOrder.place(record, message);
    const waiting = this.#schedule.exclusive;
    if (waiting !== undefined && waiting.state === CallState.Waiting && this.#inOrder.next === waiting.index) this.#execute(waiting);
  }

  /** The journal failed on `operation` for `record` (J9): noted once; the generator stops the run and throws it. */
  journalFailed(record: CallRecord, operation: JournalOperation, error: unknown): Outcome {
    if (this.journalError === undefined) {
      const call = record.call;
      this.journalError = new JournalError(operation, record.index, `call ${record.index} (tool ${JSON.stringify(call.name.slice(0, 100))}, id ${JSON.stringify(call.id.slice(0, 100))})`, error);
      this.engine.notify();
    }
    return notRun(record.call);
  }

  /** A call the run stopped before it was handed out: start, end and result, never run (A2). */
  answerNotRun(index: number): void {
    const call = this.received[index]!;
    const record = new CallRecord(index, call, this.graceMs, this);
    record.advance(CallState.Preparing);
    this.#schedule.handedOut(record, false);
    this.#participants?.answered(record, this.tools.get(call.name));
    this.outbox.push({ type: 'tool_execution_start', toolCallId: call.id, toolName: call.name, index, args: call.arguments });
    this.#end(record, notRun(call));
  }

  /** A handed-out call that must not run now — deferred, or an exclusive call waiting its turn, once the run stopped or its stream of calls failed — ends `not_run` (A2). */
  answer(record: CallRecord): void {
    this.#end(record, notRun(record.call));
  }
}
