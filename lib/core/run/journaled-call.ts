/**
 * What the run keeps of one journaled call's entry, from its hand-out to its commit
 * (contract J1–J10); the stage that reads the prior is `stages/journal.ts`.
 *
 * @module
 */
import type { JournaledDecision, JournaledResult, JournalEntry, JournalPrior } from '../seams/journal.ts';
import { thrownText } from '../values/guards.ts';
import { emitWarning } from '../values/platform.ts';

/** An `'ended'` prior. */
export type EndedPrior = Extract<JournalPrior, { state: 'ended' }>;


/**
 * What the run keeps of one call's journal entry, from its hand-out to its commit. Made only
 * for a journaled run (`CallRecord.journal`); a run without a journal has none.
 */
export class JournaledCall {
  /** The call's entry, from `journal.open`. */
  readonly entry: JournalEntry;
  /** A decision an earlier attempt journaled (from the prior): used instead of asking `approve` again (J6). */
  decision: JournaledDecision | undefined;
  /**
   * True for a `'started'` call under the `'unknown'` policy (J5): answered "outcome unknown"
   * once prepared, unless the run proves no earlier attempt ran it — the run itself rejected
   * it before any application or tool code ran (unknown tool, arguments cut off, not JSON, or
   * failing a synchronous schema: `prepare.ts` `decidedByRun`), it needs approval and no
   * decision was journaled, or the journaled decision denied it — which clears this.
   */
  unknown = false;
  /** The prior of an `'ended'` call: replayed, never committed (J4). */
  replay: EndedPrior | undefined;
  /** What is committed: set when the call ends, and committed then (release.ts `place`). */
  result: JournaledResult | undefined;
  /** False while the call's commit is pending: its `tool_result` waits for it (J3). */
  ready = true;
  /** True once `entry.progress` threw: it is not called again. */
  #progressBroken = false;

  constructor(entry: JournalEntry) {
    this.entry = entry;
  }

  /** Hands a progress value to the entry (J7): not awaited; a throw is reported once and the call's later values are not kept. */
  progress(value: unknown): void {
    const keep = this.entry.progress;
    if (keep === undefined || this.#progressBroken) return;
    try {
      keep.call(this.entry, value);
    } catch (error) {
      this.#progressBroken = true;
      emitWarning(`toolrun: a journal entry's progress threw; the call's later progress is not journaled: ${thrownText(error)}`);
    }
  }
}
