/**
 * `InOrderRelease`: stage 5 of a run — each ended call's `tool_result`, in call order
 * (contract O2), through a {@link ReorderBuffer}; the batch's `terminate` (O6, P6); and in a
 * journaled run, each result's commit before its event (J3).
 *
 * ```
 * Run.#end(call i) ─ place(record) ─▶ (journaled: commit now) ─▶ ReorderBuffer ─ calls 0…i all ended ─▶ release: state Released,
 *                                                                 (held ahead of a gap)                messages[i], tool_result → outbox
 *                                                                                                      (journaled: once its commit settled)
 * ```
 *
 * Why a journaled call is committed when it ends and not when it is released: a result held
 * ahead of a gap — behind a slow call, or behind a call deferred for approval, where it then
 * waits in the paused batch's state for as long as the person takes — lives only in this
 * process until it is committed; a crash meanwhile would lose a call that had finished. The
 * engine's operations are still issued in call order, at `open` (J1): a commit only settles
 * what `open` issued, so its moment does not change an engine's sequence.
 *
 * It decides nothing about which call runs when: the run's scheduling reads {@link next}
 * (the frontier) to let an exclusive call start (S3).
 *
 * @module
 */
import type { ResumePlan } from '../approval/approval.ts';
import { CallState, type CallRecord } from './call.ts';
import type { CallOutcome } from '../tool/tool.ts';
import type { ToolResultEvent } from './events.ts';
import type { JournalError, JournalOperation, ToolJournal } from '../seams/journal.ts';
import type { Outbox } from './outbox.ts';
import type { JournaledCall } from './journaled-call.ts';
import { ReorderBuffer } from '../streams/reorder-buffer.ts';
import type { ToolResultMessage } from '../tool/tool.ts';
import { isPromiseLike } from '../values/guards.ts';

/** The notes release posts to the run's mailbox: a call's commit settled (J3). */
export type CommitNote = { kind: 'committed' } | { kind: 'commit-failed'; error: unknown };

/** What release needs of the run. */
export interface ReleaseOwner {
  readonly outbox: Outbox<CallRecord | undefined>;
  /** The batch's journal; `undefined`: results are emitted as they are released. */
  readonly journal: ToolJournal | undefined;
  /** The journal's first failure (J9): once set, nothing more is committed or emitted. */
  readonly journalError: JournalError | undefined;
  journalFailed(record: CallRecord, operation: JournalOperation, error: unknown): unknown;
  /** Posts a note to the run's mailbox; it comes back through {@link InOrderRelease.committed} or {@link InOrderRelease.commitFailed}. */
  post(record: CallRecord, note: CommitNote): void;
}

/** One run's in-order release. Each field carries its invariant. */
export class InOrderRelease {
  readonly #owner: ReleaseOwner;
  /**
   * Result messages released so far, in call order. Its length is the lowest index whose
   * call has not ended: results are released the moment every earlier call has ended, so
   * "released" and "ended below" are the same frontier.
   */
  readonly messages: ToolResultMessage[] = [];
  /**
   * Ended calls (their `message` set) by index, until every earlier call has ended (O2).
   * Its `next` is `messages.length`; only calls ahead of a gap are held in it.
   */
  readonly #buffer = new ReorderBuffer<CallRecord>();
  /** How many ended results asked to terminate and are not errors (O6). */
  #terminating = 0;
  /** True once `beforeToolCall` blocked a call with `terminate: true` (P6); only goes from false to true. */
  #blockTerminated = false;
  // --- the journal (J3): used only when the owner's `journal` is set
  /** Commits called and not settled, of calls released or not: the run is not finished while above 0. */
  #committing = 0;
  /** Results released whose own commit, or an earlier result's, had not settled: in call order, from `#unsentHead` on; each is emitted once its own commit and every earlier one settled. */
  #unsent: { event: ToolResultEvent; journaled: JournaledCall | undefined }[] | undefined;
  #unsentHead = 0;

  constructor(owner: ReleaseOwner) {
    this.#owner = owner;
  }

  /** The lowest index not released: every call below it has ended and been released. */
  get next(): number {
    return this.messages.length;
  }

  /** Commits called and not settled (J3): a result waits, and in sequential mode so does the next call. */
  get committing(): number {
    return this.#committing;
  }

  /** True when the batch asks the agent loop to stop: every result asked, none is an error (O6), or a blocking hook asked (P6). */
  get terminate(): boolean {
    return this.#blockTerminated || (this.messages.length > 0 && this.#terminating === this.messages.length);
  }

  /** What a paused batch keeps of release (H4): the counts, and the results held ahead of a gap. */
  pausedParts(): { terminating: number; blockTerminated: boolean; held: Map<number, ToolResultMessage> } {
    const held = new Map<number, ToolResultMessage>();
    for (const [index, record] of this.#buffer.heldEntries()) held.set(index, record.message!);
    return { terminating: this.#terminating, blockTerminated: this.#blockTerminated, held };
  }

  /**
   * A resumed run (H5): the results released before the pause are the batch's first messages
   * (no event: the consumer had them); the frontier starts after them.
   */
  resumeFrom(plan: ResumePlan): void {
    for (let i = 0; i < plan.released; i++) {
      this.messages.push(plan.results.get(i)!);
      // The buffer's frontier moves past the released calls (they have no record).
      this.#buffer.push(i, undefined as unknown as CallRecord);
      this.#buffer.shift();
    }
    this.#terminating = plan.terminating;
    this.#blockTerminated = plan.blockTerminated;
  }

  /** Counts an ended call's `terminate` (O6, P6); a replayed call counts like one run now (J4). */
  countTerminate(terminate: boolean | undefined, isError: boolean, kind: CallOutcome): void {
    if (terminate !== true) return;
    if (!isError) this.#terminating++;
    // A rejected outcome carries terminate only when beforeToolCall blocked with it (P6).
    else if (kind === 'rejected') this.#blockTerminated = true;
  }

  /**
   * An ended call (`record` already `Ended`): in a journaled run its commit is called now
   * (J3); its `tool_result` comes now if every earlier call has ended, else when they have (O2).
   */
  place(record: CallRecord, message: ToolResultMessage): void {
    record.message = message;
    if (this.#owner.journal !== undefined) this.#commit(record);
    // The common case — the next in call order — is released at once, the buffer holding nothing.
    if (this.#buffer.push(record.index, record) === 0) return;
    for (let ready = this.#buffer.shift(); ready !== undefined; ready = this.#buffer.shift()) this.#release(ready);
  }

  #release(record: CallRecord): void {
    const message = record.message!;
    record.message = undefined;
    record.advance(CallState.Released);
    const event: ToolResultEvent = { type: 'tool_result', toolCallId: message.toolCallId, toolName: message.toolName, index: this.messages.length, message };
    this.messages.push(message);
    if (this.#owner.journal === undefined) this.#owner.outbox.push(event);
    else this.#releaseJournaled(record, event);
  }

  /**
   * J3: an ended call's commit, called as it ends (in completion order), so that no result
   * lives only in memory while it waits for an earlier call — or for a person, in a paused
   * batch's state. Replayed calls, and calls answered without an entry, commit nothing;
   * nothing is committed once the journal failed.
   */
  #commit(record: CallRecord): void {
    const owner = this.#owner;
    const journaled = record.journal;
    if (owner.journalError !== undefined || journaled === undefined || journaled.result === undefined) return;
    let settled: unknown;
    try {
      settled = journaled.entry.commit(journaled.result);
    } catch (error) {
      owner.journalFailed(record, 'commit', error);
      return;
    }
    if (!isPromiseLike(settled)) return;
    journaled.ready = false;
    this.#committing++;
    Promise.resolve(settled).then(
      () => owner.post(record, { kind: 'committed' }),
      (error: unknown) => owner.post(record, { kind: 'commit-failed', error }),
    );
  }

  /**
   * Release in a journaled run (J3): the call's `tool_result` is emitted once its own commit
   * (called when it ended) and every earlier result's have settled, in call order.
   */
  #releaseJournaled(record: CallRecord, event: ToolResultEvent): void {
    const owner = this.#owner;
    if (owner.journalError !== undefined) return;
    const journaled = record.journal;
    const unsent = this.#unsent;
    if ((unsent === undefined || this.#unsentHead === unsent.length) && (journaled === undefined || journaled.ready)) {
      owner.outbox.push(event);
      return;
    }
    (this.#unsent ??= []).push({ event, journaled });
  }

  /** `record`'s commit settled (J3): results up to the next pending commit are emitted. */
  committed(record: CallRecord): void {
    record.journal!.ready = true;
    this.#committing--;
    this.#flush();
  }

  /** `record`'s commit failed: the journal failed (J9). */
  commitFailed(record: CallRecord, error: unknown): void {
    this.#committing--;
    this.#owner.journalFailed(record, 'commit', error);
  }

  /** Emits the held results whose commits (and every earlier one) settled, in call order (J3). */
  #flush(): void {
    const unsent = this.#unsent;
    if (unsent === undefined || this.#owner.journalError !== undefined) return;
    while (this.#unsentHead < unsent.length) {
      const item = unsent[this.#unsentHead]!;
      if (item.journaled !== undefined && !item.journaled.ready) return;
      this.#owner.outbox.push(item.event);
      this.#unsentHead++;
    }
    unsent.length = 0;
    this.#unsentHead = 0;
  }
}
