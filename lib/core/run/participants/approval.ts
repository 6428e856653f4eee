/**
 * Approval as a participant in the run (contract H1–H11; the requests, decisions and the
 * paused batch's state are the approval/ room): the calls deferred for a person's decision,
 * their `tool_approval_request` events, and the paused batch made of them. The run makes
 * this participant on its first deferral, so a run that defers nothing has none; what a
 * deferral does to scheduling (a freed slot, calls held behind it) stays with the run's
 * scheduling (`Run.#defer`, `Schedule.deferred`, schedule.ts); a resumed batch's carried
 * results are `Resumption` (resumption.ts).
 *
 * @module
 */
import type { PausedBatch, StandingDecision, ToolApprovalRequest } from '../../approval/approval.ts';
import { pausedBatch } from '../../approval/pause.ts';
import { CallState, type CallRecord } from '../call.ts';
import type { Outbox } from '../outbox.ts';
import type { RunToolsOptions } from '../options.ts';
import type { TraceHeaders } from '../../seams/tracing.ts';
import type { Tool, ToolCall, ToolResultMessage } from '../../tool/tool.ts';
import { DEFAULTS } from '../../values/defaults.ts';

/** What the approval participant reads of its run. */
interface ApprovalRun {
  readonly outbox: Outbox<CallRecord | undefined>;
  readonly received: readonly ToolCall[];
  readonly tools: ReadonlyMap<string, Tool>;
  readonly standing: Map<string, StandingDecision>;
  readonly options: RunToolsOptions;
  readonly tracing: { readonly pausedTraceContext: TraceHeaders | undefined } | undefined;
}

/** What the paused batch keeps of the run's in-order release (release.ts): the results released, and those held ahead of a gap (H4). */
interface ReleasedParts {
  readonly messages: ToolResultMessage[];
  pausedParts(): { terminating: number; blockTerminated: boolean; held: Map<number, ToolResultMessage> };
}

export class Approvals {
  readonly #run: ApprovalRun;
  readonly #release: ReleasedParts;
  /** Calls deferred for approval, in call order (H3); emptied when the run stops (they end `not_run`). */
  #deferred: CallRecord[] = [];

  constructor(run: ApprovalRun, release: ReleasedParts) {
    this.#run = run;
    this.#release = release;
  }

  /** True while calls wait for approval: a finished run with some is paused (H3). */
  get paused(): boolean {
    return this.#deferred.length > 0;
  }

  /** The call is deferred (H3): kept for the paused batch, and its `tool_approval_request` emitted. */
  defer(record: CallRecord): void {
    this.#deferred.push(record);
    const call = record.call;
    this.#run.outbox.push({ type: 'tool_approval_request', toolCallId: call.id, toolName: call.name, index: record.index, request: record.approval! });
  }

  /** The run stops, or its stream of calls failed: the calls still deferred, which the run answers `not_run` (A2) — the batch is not paused. */
  stop(): CallRecord[] {
    const deferred = this.#deferred.filter((record) => record.state === CallState.Deferred);
    this.#deferred = [];
    return deferred;
  }

  /** The paused batch: its requests and its state (H3, H4), signed with `signingSecret` when given (H9). */
  pausedBatch(): Promise<PausedBatch> {
    const run = this.#run;
    const { held, terminating, blockTerminated } = this.#release.pausedParts();
    const requests = new Map<number, ToolApprovalRequest>();
    for (const record of this.#deferred) requests.set(record.index, record.approval!);
    return pausedBatch({
      calls: run.received,
      tools: run.tools,
      released: this.#release.messages,
      held,
      requests,
      terminating,
      blockTerminated,
      standing: run.standing,
      signingSecret: run.options.signingSecret,
      ttlMs: run.options.stateTtlMs ?? DEFAULTS.stateTtlMs,
      traceContext: run.tracing?.pausedTraceContext,
    });
  }
}
