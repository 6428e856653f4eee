/**
 * What `registerDurableBatch` does with a person's decisions and with the batch's config
 * (docs/adr/0045-durable-approvals-pending-only.md): a decision answers only a request that is
 * pending when it is read — `sendApproval` refuses one that answers none, the workflow drops
 * (visibly) one that reached it anyway — and a recovered batch checks that the process running
 * it has the config the batch started with.
 *
 * @module
 */
import type { ToolApprovalRequest, ToolApprovalResponse } from '../core/approval/approval.ts';
import type { InterruptedCallPolicy } from '../core/seams/journal.ts';
import type { Tool } from '../core/tool/tool.ts';

/** How many dropped decisions the batch keeps in its `APPROVAL_DROPPED_EVENT` (the newest). */
export const KEEP_DROPPED = 100;
/** Longest `why` and `toolCallId` kept of a dropped decision, in characters (a message is untrusted input). */
const MAX_TEXT = 200;
/**
 * Most decisions one message may carry beyond the batch's pending requests: a longer one
 * (anything may be sent on the topic) is dropped whole, unread, so a message of any length
 * costs the workflow one entry, not one per decision.
 */
const MAX_EXTRA_DECISIONS = KEEP_DROPPED;

/**
 * A decision the batch received and dropped because it answers no pending request, as
 * `APPROVAL_DROPPED_EVENT` lists it, e.g. `{ index: 1, why: 'call 1 is not pending (pending: 3)' }`.
 */
export interface DroppedApproval {
  /** The decision's `index`, when it had an integer one. */
  readonly index?: number;
  /** The decision's `toolCallId`, when it had one (at most 200 characters). */
  readonly toolCallId?: string;
  /** Why it was dropped (at most 200 characters). */
  readonly why: string;
}

/** One decision refused by `sendApproval`: its position in the array sent, its call index, and why, e.g. `{ position: 0, index: 1, why: 'call 1 is not pending (pending: 3)' }`. */
export interface RefusedApproval {
  /** Its position in the `approvals` array passed to `sendApproval`. */
  readonly position: number;
  readonly index: number;
  readonly why: string;
}

/**
 * Thrown (rejected) by `sendApproval` when a decision answers no request the batch is waiting
 * for, as its `APPROVAL_EVENT` says at that moment: the call was decided already, is not
 * deferred (yet, or at all), the batch is not paused or has ended, or `toolCallId` names
 * another call. Nothing is sent then, not even the decisions that were pending.
 *
 * @example
 * ```ts
 * try {
 *   await sendApproval(workflowId, [{ index: 1, approved: true }]);
 * } catch (error) {
 *   if (error instanceof ApprovalNotPendingError) console.warn(error.refused.map((r) => r.why).join('; '));
 *   else throw error;
 * }
 * ```
 */
export class ApprovalNotPendingError extends Error {
  override readonly name = 'ApprovalNotPendingError';
  readonly workflowId: string;
  /** The decisions that answer no pending request. */
  readonly refused: readonly RefusedApproval[];
  /** The indexes of the requests that were pending when `sendApproval` read the event, in call order. */
  readonly pending: readonly number[];

  constructor(workflowId: string, refused: readonly RefusedApproval[], pending: readonly number[]) {
    super(`sendApproval: nothing sent to workflow ${JSON.stringify(workflowId)}: ${refused.map((r) => `approvals[${r.position}]: ${r.why}`).join('; ')}`);
    this.workflowId = workflowId;
    this.refused = refused;
    this.pending = pending;
  }
}

/**
 * Thrown by a durable batch's workflow (the workflow ends in DBOS's `ERROR` state with it)
 * when the process running it — a recovery may run in any process of the application — was
 * registered with another config than the process that started the batch: other tool names,
 * another `executionMode` of a tool, another `mode` or `interruptedCalls`. Running on would
 * read the journal against different tools or answer interrupted calls by another policy.
 *
 * @example
 * ```ts
 * const handle = DBOS.retrieveWorkflow(workflowId);
 * await handle.getResult().catch((error) => {
 *   if (error instanceof Error && error.name === 'DurableConfigMismatchError') alertOperator(error.message);
 * });
 * ```
 */
export class DurableConfigMismatchError extends Error {
  override readonly name = 'DurableConfigMismatchError';
  /** The config the batch started with, as it was journaled (JSON). */
  readonly recorded: string;
  /** This process's config of the batch (JSON). */
  readonly current: string;

  constructor(batchName: string, recorded: string, current: string) {
    super(
      `toolrun/dbos: durable batch ${JSON.stringify(batchName)} started with config ${recorded}, but this process registered it with ${current}: every process of the application must register it with the same tools (their names, executionMode and needsApproval), mode and interruptedCalls`,
    );
    this.recorded = recorded;
    this.current = current;
  }
}

/** What of a batch's config must be the same in every process that may run or recover it: what decides which journal operations a run issues and how it reads them. */
export function configFingerprint(tools: readonly Tool[], mode: string | undefined, interruptedCalls: InterruptedCallPolicy | undefined): string {
  // A tool that asks for approval in one process and not in another would run a deferred call
  // unasked on recovery; a function is known only as "a function".
  const asks = (tool: Tool): string => (tool?.needsApproval === true ? ' (needs approval)' : typeof tool?.needsApproval === 'function' ? ' (needs approval: a function)' : '');
  const names = tools.map((tool) => `${String(tool?.name)}${tool?.executionMode === 'sequential' ? ' (sequential)' : ''}${asks(tool)}`).sort();
  const policy = typeof interruptedCalls === 'function' ? 'a function' : (interruptedCalls ?? 'unknown');
  return JSON.stringify({ tools: names, mode: mode ?? 'parallel', interruptedCalls: policy });
}

/** The requests of an `APPROVAL_EVENT` value (anything another process wrote there): the well-formed ones. */
export function pendingOf(event: unknown): ToolApprovalRequest[] {
  if (!Array.isArray(event)) return [];
  return event.filter((r): r is ToolApprovalRequest => typeof r === 'object' && r !== null && Number.isInteger((r as ToolApprovalRequest).index));
}

/** Why decision `d` answers none of `pending` (or an earlier decision of the same message answered its call); `undefined` when it answers one. */
function mismatch(d: { index: number; toolCallId?: unknown }, pending: readonly ToolApprovalRequest[], taken: ReadonlySet<number>): string | undefined {
  const request = pending.find((r) => r.index === d.index);
  const list = pending.length === 0 ? 'none' : pending.map((r) => r.index).join(', ');
  if (request === undefined) return `call ${d.index} is not pending (pending: ${list})`;
  if (taken.has(d.index)) return `call ${d.index} is decided twice in one message`;
  if (typeof d.toolCallId === 'string' && d.toolCallId !== request.toolCallId) return `call ${d.index} is ${JSON.stringify(request.toolCallId.slice(0, 100))}, not ${JSON.stringify(d.toolCallId.slice(0, 100))}`;
  return undefined;
}

/**
 * `sendApproval`'s check: the decisions that answer no request of `pending` (what the batch's
 * `APPROVAL_EVENT` said just before), with why.
 */
export function refusedOf(approvals: readonly { index: number; toolCallId?: string }[], pending: readonly ToolApprovalRequest[]): RefusedApproval[] {
  const refused: RefusedApproval[] = [];
  const taken = new Set<number>();
  approvals.forEach((d, position) => {
    const why = mismatch(d, pending, taken);
    if (why === undefined) taken.add(d.index);
    else refused.push({ position, index: d.index, why });
  });
  return refused;
}

/**
 * A message the paused batch received on `APPROVAL_TOPIC` (untrusted: anything sent there),
 * matched against the requests pending now: each decision that answers one becomes that
 * request's response; every other one is dropped, with why.
 */
export function matchDecisions(message: unknown, pending: readonly ToolApprovalRequest[]): { accepted: ToolApprovalResponse[]; dropped: DroppedApproval[] } {
  const accepted: ToolApprovalResponse[] = [];
  const dropped: DroppedApproval[] = [];
  if (!Array.isArray(message)) return { accepted, dropped: [{ why: clip(`the message is not an array of decisions but ${message === null ? 'null' : typeof message}`) }] };
  if (message.length > pending.length + MAX_EXTRA_DECISIONS) {
    return { accepted, dropped: [{ why: `the message holds ${message.length} decisions, more than the ${pending.length} pending requests + ${MAX_EXTRA_DECISIONS}: dropped unread` }] };
  }
  const taken = new Set<number>();
  for (const d of message as unknown[]) {
    const decision = d as { index?: unknown; approved?: unknown; reason?: unknown; toolCallId?: unknown } | null;
    const index = typeof decision === 'object' && decision !== null && Number.isInteger(decision.index) ? (decision.index as number) : undefined;
    const toolCallId = typeof decision?.toolCallId === 'string' ? { toolCallId: clip(decision.toolCallId) } : {};
    if (index === undefined || typeof decision?.approved !== 'boolean') {
      dropped.push({ ...(index === undefined ? {} : { index }), ...toolCallId, why: 'not a decision { index, approved, reason? }' });
      continue;
    }
    const why = mismatch({ index, toolCallId: decision.toolCallId }, pending, taken);
    if (why !== undefined) {
      dropped.push({ index, ...toolCallId, why: clip(why) });
      continue;
    }
    taken.add(index);
    const request = pending.find((r) => r.index === index)!;
    accepted.push({ approvalId: request.approvalId, approved: decision.approved, ...(typeof decision.reason === 'string' ? { reason: decision.reason } : {}) });
  }
  return { accepted, dropped };
}

function clip(text: string): string {
  return text.length <= MAX_TEXT ? text : `${text.slice(0, MAX_TEXT - 1)}…`;
}
