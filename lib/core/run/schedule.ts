/**
 * `Schedule`: a run's scheduling — which call is handed out when, and when an exclusive call
 * may start (contract S1–S4, P1, H3). It holds the queue of calls (the caller's array, or
 * the calls a stream delivered so far: {@link CallStream}) and the counts and gates of the
 * hand-out; the run ({@link ScheduleOwner}, run.ts) does each hand-out and each answer, and
 * tells the schedule when a call is handed out, deferred or ended (why a class of its own:
 * docs/adr/0040-run-keeps-the-life-of-a-call.md).
 *
 * The rules it keeps:
 * - prepare is serial in call order (P1): the next call is handed out only once the
 *   previous one is prepared; execution starts as soon as a call's own prepare is done;
 * - at most `concurrency` calls are handed out and not ended (S1);
 * - sequential mode: one call at a time, and the next is handed out only after the
 *   consumer has taken the previous call's `tool_result` (S2);
 * - an exclusive tool (`executionMode: 'sequential'`) starts only when every earlier call
 *   has ended, and no later call is handed out until it has ended (S3);
 * - calls from an async iterable are handed out as they arrive (S4);
 * - a call deferred for approval (H3) frees its slot; in parallel mode later calls are
 *   still prepared (those needing approval are deferred too), in sequential mode nothing
 *   after it is, and an exclusive call after it is held unprepared with everything after
 *   it; the run is finished — paused — when nothing is running and only deferred and held
 *   calls are left.
 *
 * @module
 */
import type { AbortCause } from '../streams/abort.ts';
import { CallState, type CallRecord } from './call.ts';
import { CallStream, type StreamNote } from './call-stream.ts';
import type { Resumption } from './participants/resumption.ts';
import { HAND_OUT_SLICE } from '../values/defaults.ts';
import type { Tool, ToolCall } from '../tool/tool.ts';

/** What the schedule needs of its run: the hand-out and the answers themselves, and what gates them. */
export interface ScheduleOwner {
  readonly tools: ReadonlyMap<string, Tool>;
  /** Most calls handed out and not ended: 1 in sequential mode (S1, S2). */
  readonly concurrency: number;
  readonly sequential: boolean;
  /** The deferred calls (H3), once there is one. */
  readonly approvals: { readonly paused: boolean; stop(): CallRecord[] } | undefined;
  /** Set when the run's abort cut a stream of calls short (`ToolBatch.aborted`). */
  abortChangedOutcome: boolean;
  /** Where a read of the stream of calls is posted (`Run.post`). */
  post(call: undefined, note: StreamNote): void;
  /** The journal's first failure (J9): once set, nothing more is handed out. */
  readonly journalError: unknown;
  /** Hands out call `index` (stage 1). */
  handOut(index: number): void;
  /** Answers call `index`, never handed out, `not_run` (A2). */
  answerNotRun(index: number): void;
  /** Ends a handed-out call that must not run (deferred, or an exclusive call waiting its turn) `not_run` (A2). */
  answer(record: CallRecord): void;
}

/** One run's scheduling. Each field carries its invariant. */
export class Schedule {
  readonly #owner: ScheduleOwner;
  /** The run's in-order release: commits called and not settled (J3) hold the next call in sequential mode. */
  readonly #release: { readonly committing: number };
  readonly #concurrency: number;
  readonly #sequential: boolean;
  /** `received[i]` is call i, in call order: the caller's array, or the calls the stream delivered so far (appended before they are handed out). */
  readonly received: ToolCall[];
  /** The stream of calls when they come from an async iterable (S4); `undefined` for an array. */
  readonly #stream: CallStream | undefined;
  /** The error the calls' stream threw, if it did: rethrown once every received call is answered. */
  inputError: { error: unknown } | undefined;
  /** A resumed run (H5): the calls that ended before the pause, carried instead of handed out. */
  #resumed: Resumption | undefined;
  /** The index of the next call to hand out; every lower one has been handed out. */
  #next = 0;
  /** Calls handed out and not ended; never more than `#concurrency`. */
  #active = 0;
  /** A call whose prepare is pending (asynchronous): nothing else is handed out meanwhile (P1). */
  #preparing: CallRecord | undefined;
  /** An exclusive call handed out and not ended: nothing after it is handed out (S3). */
  #exclusive: CallRecord | undefined;
  /**
   * True once a deferral stopped the hand-out (H3): sequential mode, a deferred exclusive
   * call, or an exclusive call after a deferred one. Calls from `#next` on are held
   * unprepared until the batch resumes; the run still reads a stream of calls to its end.
   */
  #holding = false;

  constructor(owner: ScheduleOwner, release: { readonly committing: number }, calls: readonly ToolCall[] | AsyncIterable<ToolCall>) {
    this.#owner = owner;
    this.#release = release;
    this.#concurrency = owner.concurrency;
    this.#sequential = owner.sequential;
    if (Array.isArray(calls)) this.received = calls as ToolCall[];
    else {
      this.received = [];
      this.#stream = new CallStream(calls as AsyncIterable<ToolCall>, owner);
    }
  }

  /** The exclusive call handed out and not ended, if any (S3): it waits for its turn, and the release wakes it. */
  get exclusive(): CallRecord | undefined {
    return this.#exclusive;
  }

  /** True when nothing handed out is left unended, no call can arrive, and every call is handed out or held (H3). */
  get idle(): boolean {
    return this.#active === 0 && this.#stream?.open !== true && (this.#next === this.received.length || this.#holding);
  }

  /** A resumed run (H5) starts after the calls released before the pause; the ended ones after them are carried. */
  resumeFrom(released: number, resumed: Resumption): void {
    this.#next = released;
    this.#resumed = resumed;
  }

  /** Hands out calls while the rules allow. Called when the outbox is empty and the run has not stopped. */
  pump(): void {
    const owner = this.#owner;
    const received = this.received;
    // At most HAND_OUT_SLICE calls per pass: their events are delivered before the next slice.
    // S2 with a journal: the previous result is taken once its commit settled (it is emitted then).
    for (let handed = 0; this.#preparing === undefined && this.#exclusive === undefined && !this.#holding && this.#active < this.#concurrency && (!this.#sequential || this.#release.committing === 0); handed++) {
      if (handed === HAND_OUT_SLICE) return;
      if (this.#next === received.length) {
        this.#read();
        return;
      }
      // H3: an exclusive call after a deferred one needs it ended: held, with all after it.
      if (owner.approvals?.paused === true && owner.tools.get(received[this.#next]!.name)?.executionMode === 'sequential') {
        this.#holding = true;
        break;
      }
      // A resumed run: a call that ended before the pause is not handed out again (H5).
      if (this.#resumed !== undefined && this.#resumed.carry(this.#next)) {
        this.#next++;
        continue;
      }
      owner.handOut(this.#next++);
      if (owner.journalError !== undefined) return;
      // S2: the next call waits until the consumer has taken this one's result.
      if (this.#sequential) return;
    }
    // Held calls are not prepared, but a stream of calls is read to its end: the state keeps every call.
    if (this.#holding) this.#read();
  }

  /** The run stopped (`cause`): nothing more is handed out, and every call not ended is answered (A2). */
  stop(cause: AbortCause): void {
    // A stream of calls cut by the run's abort: calls that would have come are not in the batch.
    if (cause === 'run' && this.#stream?.open === true) this.#owner.abortChangedOutcome = true;
    this.#stream?.stop();
    // An exclusive call waiting for the calls before it must not start after a stop.
    const waiting = this.#exclusive;
    if (waiting !== undefined && waiting.state === CallState.Waiting) this.#owner.answer(waiting);
    // Deferred calls never ran: not paused, every call is answered (H3, A2).
    this.#answerDeferred();
    this.#holding = false;
    // Calls never handed out are answered now, as never run (A2).
    while (this.#next < this.received.length) {
      const index = this.#next++;
      if (this.#resumed?.carry(index) !== true) this.#owner.answerNotRun(index);
    }
  }

  /** Call `record` is handed out and holds a slot (S1); an exclusive one bars every later call until it ends (S3). */
  handedOut(record: CallRecord, exclusive: boolean): void {
    this.#active++;
    if (exclusive) this.#exclusive = record;
  }

  /** `record`'s prepare is pending (P1) — nothing else is handed out — or, `undefined`, it settled. */
  preparing(record: CallRecord | undefined): void {
    this.#preparing = record;
  }

  /** `record` was deferred (H3): its slot is free; a deferred exclusive call, or any in sequential mode, holds every later call. */
  deferred(record: CallRecord): void {
    this.#active--;
    if (this.#exclusive === record) {
      this.#exclusive = undefined;
      this.#holding = true;
    }
    if (this.#sequential) this.#holding = true;
  }

  /** `record` ended: its slot is free, and it no longer bars the hand-out. */
  ended(record: CallRecord): void {
    this.#active--;
    if (this.#preparing === record) this.#preparing = undefined;
    if (this.#exclusive === record) this.#exclusive = undefined;
  }

  /** A read of the stream delivered `result`: the call it carries, if any, joins the queue (S4). */
  delivered(result: IteratorResult<ToolCall, unknown>): void {
    const delivered = this.#stream!.delivered(result);
    if (delivered !== undefined) this.received.push(delivered);
  }

  /** The stream of calls threw `error` (S4): the calls already received are answered; nothing more is handed out. */
  failed(error: unknown): void {
    if (!this.#stream!.failed()) return;
    this.inputError = { error };
    // The generator will throw, not pause: deferred calls are answered too (H3).
    this.#answerDeferred();
    this.#holding = false;
    while (this.#next < this.received.length) this.#owner.answerNotRun(this.#next++);
  }

  /** The consumer left: the stream of calls is not read further. */
  closeStream(): void {
    this.#stream?.stop();
  }

  /** Deferred calls of a run that stops: each takes a slot again and ends `not_run` (A2) — the batch is aborted, not paused (H3). */
  #answerDeferred(): void {
    const deferred = this.#owner.approvals?.stop();
    if (deferred === undefined) return;
    for (const record of deferred) {
      this.#active++;
      this.#owner.answer(record);
    }
  }

  /** Asks the stream of calls, if any, for its next call (S4). */
  #read(): void {
    const failed = this.#stream?.read();
    if (failed !== undefined) this.inputError = failed;
  }
}
