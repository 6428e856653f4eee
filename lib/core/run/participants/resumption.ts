/**
 * A resumed batch (contract H5; the checks of its state are approval/resume.ts): the calls
 * that ended before the pause are not handed out again — each one's stored result is
 * carried, released in call order when the frontier reaches it, with no new start or end
 * event (they were emitted before the pause). Only a resumed run has it; the run's
 * scheduling asks it for each call it would hand out (run/schedule.ts).
 *
 * @module
 */
import type { ResumePlan } from '../../approval/approval.ts';
import { CallRecord, CallState, type CallOwner } from '../call.ts';
import type { ToolCall, ToolResultMessage } from '../../tool/tool.ts';

/** What a resumed batch needs of its run: its calls, and stage 5 (release in call order). */
interface ResumedRun extends CallOwner {
  readonly received: readonly ToolCall[];
  readonly graceMs: number;
  release(record: CallRecord, message: ToolResultMessage): void;
}

export class Resumption {
  readonly #plan: ResumePlan;
  readonly #run: ResumedRun;

  constructor(plan: ResumePlan, run: ResumedRun) {
    this.#plan = plan;
    this.#run = run;
  }

  /** Carries call `index` when it ended before the pause: its stored result is released in call order. False when it did not end before the pause. */
  carry(index: number): boolean {
    const message = this.#plan.results.get(index);
    if (message === undefined) return false;
    const run = this.#run;
    const record = new CallRecord(index, run.received[index]!, run.graceMs, run);
    record.advance(CallState.Ended);
    run.release(record, message);
    return true;
  }
}
