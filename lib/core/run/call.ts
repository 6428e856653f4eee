/**
 * `CallRecord`: everything the run knows about one tool call, from the moment it is handed
 * out to its `tool_result`. It is also the call's cancellation scope (a child of the run's):
 * its signal, its time limit and its grace period live on the same object, so a call costs
 * one record, not a record plus a scope. It is also its tool's merge slot (streams/merge.ts):
 * the steps of a generator or promise tool are queued as the record itself. What only some
 * calls need (an approval request, a trace, a journal entry, a pull mark) lives on a side
 * object made when the first of them is set (`CallRecord.extras`).
 *
 * @module
 */
import { CancelScope, timeoutReason, type AbortCause } from '../streams/abort.ts';
import type { ToolApprovalRequest } from '../approval/approval.ts';
import { Step, type MergeSlot, type Settler } from '../streams/merge.ts';
import type { Tool, ToolCall, ToolContext, ToolResultMessage } from '../tool/tool.ts';
import { callClient, NO_CLIENT } from '../values/client.ts';
import type { ToolClient } from '../tool/client.ts';
import type { PullMark } from './outbox.ts';
import type { JournaledCall } from './journaled-call.ts';
import type { TraceHeaders, TracedCall } from '../seams/tracing.ts';

/**
 * A call's states, in the only order they can come (contract O4, S3, H3):
 *
 * ```
 * Queued ─▶ Preparing ─▶ [Waiting: exclusive gate, S3] ─▶ Running ─▶ Finalizing ─▶ Ended ─▶ Released
 *               ├── rejected / not run ─────────────────────────────────────────▶ Ended
 *               └─▶ Deferred (waits for a person) ─── run aborted: not run ─────▶ Ended
 * ```
 *
 * `Queued`: received, not handed out. `Preparing`: `tool_execution_start` emitted, prepare
 * (P1) under way. `Deferred`: prepare ended with "needs approval" and nobody answered (H3):
 * the call waits, without a slot (S1), until the batch pauses (a resumed run makes a new
 * record for it) or the run is aborted. `Waiting`: prepared, an exclusive tool waiting for
 * every earlier call to end (S3). `Running`: the tool executes. `Finalizing`: the tool
 * settled, `afterToolCall` under way (P3). `Ended`: `tool_execution_end` emitted (O3).
 * `Released`: `tool_result` emitted (O2) — nothing more happens for this call.
 */
export const CallState = { Queued: 0, Preparing: 1, Deferred: 2, Waiting: 3, Running: 4, Finalizing: 5, Ended: 6, Released: 7 } as const;
export type CallState = (typeof CallState)[keyof typeof CallState];

/** The run-side hooks a call's scope reports to. */
export interface CallOwner {
  /** The run's options: the call's context reads `client` from them. */
  readonly options: { readonly client?: ToolClient | undefined };
  /** True once the run was aborted or the consumer left. */
  readonly stopped: boolean;
  /** The call's grace period after an abort ran out with its tool still busy (A3). */
  abandoned(record: CallRecord): void;
}

/**
 * The run's merge engine calls this when a tool settles: what had stopped it is noted at
 * once and its timers cleared. The record may be taken much later (a slow consumer), and an
 * abort in between must not be blamed on a call that had already ended.
 */
export function noteSettled(record: CallRecord | undefined): void {
  if (record === undefined || record.state !== CallState.Running) return;
  record.stoppedBy = record.cause;
  record.runStoppedFirst = record.owner.stopped;
  record.close();
}

/**
 * One call. Invariants, beside each field below; the state only moves forward, through
 * {@link CallRecord.advance}, one comparison per transition — so a late event (a step of an
 * abandoned tool, a hook that answered after the stop) finds the call past the state it
 * would act in, and is dropped.
 */
export class CallRecord extends CancelScope implements MergeSlot<CallRecord | undefined> {
  /** Where the call is; only {@link advance} changes it. */
  #state: CallState = CallState.Queued;
  /** The tool the call names, looked up once when handed out; `undefined`: unknown tool. */
  tool: Tool | undefined;
  /** The validated arguments; set when prepare succeeded, cleared when the call ended. */
  args: unknown;
  /** The call's time limit in ms (the tool's own, or the run's), if any (A4). */
  timeoutMs: number | undefined;
  // --- the merge slot (MergeSlot): used only for a generator or promise tool, from the
  // moment it is handed to the run's merge engine (`iterator` set) until it settles
  // (`iterator` cleared).
  step: Step = Step.Value;
  value: unknown = undefined;
  prev: MergeSlot<CallRecord | undefined> | undefined = undefined;
  next: MergeSlot<CallRecord | undefined> | undefined = undefined;
  iterator: AsyncIterator<unknown, unknown, undefined> | undefined = undefined;
  settler: Settler<CallRecord | undefined> | undefined = undefined;
  /**
   * What had aborted the call's signal when its tool settled (`undefined`: nothing, it ended
   * on its own). Noted when the tool settles, not when its record is taken: the consumer
   * may take it much later, and an abort in between is not this call's.
   */
  stoppedBy: AbortCause | undefined;
  /** Whether the run had stopped (abort, consumer exit) when the tool settled or was abandoned (decides `afterToolCall`, P3). */
  runStoppedFirst = false;
  /** The result message, from the call's end to its release (O2); a call ahead of a gap keeps it while the reorder buffer holds the call (release.ts). */
  message: ToolResultMessage | undefined;
  /**
   * The fields few calls need (an approval, a trace, a journal entry, a pull mark), made on
   * the first one set: a plain call carries one field for the four. Read them through the
   * accessors below; the run's hot path reads `extras` itself (one load, no call).
   */
  extras: CallExtras | undefined = undefined;
  /**
   * When the record was made, in epoch ms (`Date.now()`): the call's hand-out, the moment
   * its `tool_execution_start` is emitted (`ToolExecutionEndEvent.startedAt`, contract O7).
   */
  readonly startedAt = Date.now();

  constructor(
    /** Position in the batch: unique even when ids repeat (O1). */
    readonly index: number,
    readonly call: ToolCall,
    graceMs: number,
    readonly owner: CallOwner,
  ) {
    super(graceMs);
  }

  /** The request of a call that needs approval, from the moment it is asked for until it is answered (H1, H3); `undefined` for most calls. */
  get approval(): ToolApprovalRequest | undefined {
    return this.extras?.approval;
  }
  set approval(request: ToolApprovalRequest | undefined) {
    if (request !== undefined || this.extras !== undefined) (this.extras ??= new CallExtras()).approval = request;
  }

  /** The call's trace, from its hand-out to its end; `undefined` when the run is not traced (contract T1). */
  get trace(): TracedCall | undefined {
    return this.extras?.trace;
  }
  set trace(trace: TracedCall | undefined) {
    if (trace !== undefined || this.extras !== undefined) (this.extras ??= new CallExtras()).trace = trace;
  }

  /** The call's journal entry, from its hand-out on; `undefined` when the run has no journal (J1), and for a call the run answered without handing it out. */
  get journal(): JournaledCall | undefined {
    return this.extras?.journal;
  }
  set journal(journaled: JournaledCall | undefined) {
    if (journaled !== undefined || this.extras !== undefined) (this.extras ??= new CallExtras()).journal = journaled;
  }

  /** The tool's pull mark (M3), made on its first update and queued again after each later one; `undefined` for a tool that never yielded. */
  get pullMark(): PullMark<CallRecord | undefined> | undefined {
    return this.extras?.pullMark;
  }
  set pullMark(mark: PullMark<CallRecord | undefined> | undefined) {
    if (mark !== undefined || this.extras !== undefined) (this.extras ??= new CallExtras()).pullMark = mark;
  }

  /** Where the call is (read only: {@link advance} is the one writer). */
  get state(): CallState {
    return this.#state;
  }

  /** The merge record's tag: the call itself. */
  get tag(): CallRecord {
    return this;
  }

  /** The merge record's slot: the call itself. */
  get slot(): CallRecord {
    return this;
  }

  /**
   * Moves the call to `to` if that is forward; returns false (and changes nothing) when the
   * call is already there or past it.
   */
  advance(to: CallState): boolean {
    if (to <= this.#state) return false;
    this.#state = to;
    return true;
  }

  /** Starts the call's time limit (A4): its signal aborts with a `TimeoutError` reason. */
  startTimeout(): void {
    const ms = this.timeoutMs;
    if (ms !== undefined) this.limit(ms, () => timeoutReason(this.call.name, ms));
  }

  protected override onAbandon(): void {
    this.owner.abandoned(this);
  }
}

/** The rarely set fields of a {@link CallRecord}; see `CallRecord.extras`. */
class CallExtras {
  approval: ToolApprovalRequest | undefined = undefined;
  trace: TracedCall | undefined = undefined;
  journal: JournaledCall | undefined = undefined;
  pullMark: PullMark<CallRecord | undefined> | undefined = undefined;
}

/** The `ToolContext` a tool receives: its call's fields, and a `signal` made when the tool first reads it. */
export class CallContext implements ToolContext {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly index: number;
  /** An own field (not a getter), so that a wrapper spreading the context keeps it. */
  readonly toolCall: ToolCall;
  readonly #record: CallRecord;
  /** The run's client bound to this call's signal, made on the first read. */
  #client: ToolClient | undefined;
  constructor(record: CallRecord) {
    this.toolCallId = record.call.id;
    this.toolName = record.call.name;
    this.index = record.index;
    this.toolCall = record.call;
    this.#record = record;
  }
  get signal(): AbortSignal {
    return this.#record.signal;
  }
  get traceContext(): TraceHeaders | undefined {
    return this.#record.trace?.headers();
  }
  get idempotencyKey(): string | undefined {
    return this.#record.journal?.entry.idempotencyKey;
  }
  get client(): ToolClient {
    const client = this.#record.owner.options.client;
    if (client === undefined) return NO_CLIENT;
    return (this.#client ??= callClient(client, () => this.#record.signal));
  }
}
