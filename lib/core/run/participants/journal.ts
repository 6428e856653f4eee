/**
 * The journal as a participant in the life of each call (contract J1–J10; the seam is
 * seams/lifecycle.ts, the engine's interface seams/journal.ts): a call's entry is opened as
 * it is handed out, in call order (J1), its progress is handed to the entry (J7), and what
 * its end carries becomes what is committed (J3). Only a run with `options.journal` has this
 * participant. The journaled prepare (the entry's prior, J4, J5) is a stage of its own
 * (stages/journal.ts); the commit is called by the in-order release as the call ends, and
 * the call's `tool_result` waits for it there (release.ts).
 *
 * @module
 */
import type { CallRecord } from '../call.ts';
import type { CallEnd, CallLifecycle } from '../../seams/lifecycle.ts';
import type { ToolJournal } from '../../seams/journal.ts';
import { openEntry, unknownOutcome } from '../stages/journal.ts';
import type { Outcome } from '../stages/outcome.ts';
import type { JournalInput } from '../stages/prepare.ts';

export class JournalParticipant implements CallLifecycle<CallRecord, Outcome> {
  readonly #run: JournalInput;
  readonly #journal: ToolJournal;

  constructor(run: JournalInput, journal: ToolJournal) {
    this.#run = run;
    this.#journal = journal;
  }

  /** J1: the entry is opened now, synchronously, as the call is handed out in call order; false when that failed (J9). */
  handOut(record: CallRecord): boolean {
    record.journal = openEntry(this.#run, this.#journal, record);
    return record.journal !== undefined;
  }

  /** A call answered without being handed out has no entry. */
  answered(): void {}

  /** J5: interrupted in an earlier attempt, and nothing proved it never ran (prepare clears `unknown` for a rejection the run itself decided, or an approval not given). */
  prepared(record: CallRecord): Outcome | undefined {
    return record.journal?.unknown === true ? unknownOutcome(record.call) : undefined;
  }

  /** J7: a value replayed from the entry is not handed to it again. */
  progress(record: CallRecord, value: unknown, replayed: boolean): void {
    if (!replayed) record.journal?.progress(value);
  }

  /** J3: what is committed is what the call's end and result events carry; a replayed call commits nothing. */
  ended(record: CallRecord, end: CallEnd): void {
    const journaled = record.journal;
    if (journaled === undefined || end.replayed) return;
    const { message, outcome, result } = end;
    journaled.result = result.terminate === undefined ? { message, outcome } : { message, outcome, terminate: result.terminate };
  }
}
