/**
 * Reading a paused batch's state back (contract H5–H9): bounded, verified (with a secret),
 * parsed against `state-schema.ts`, checked for consistency, expiry, the same tools and calls,
 * the approvals given; only then is its id consumed (single use, `claims.ts`).
 *
 * @module
 */
import { standingDecision, type ResumeOptions, type ResumePlan, type StandingDecision, type ToolApprovalRequest, type ToolApprovalResponse } from './approval.ts';
import { processClaims, type StateClaim } from './claims.ts';
import { ResumeError } from './resume-error.ts';
import { openStateBody } from './state-envelope.ts';
import { canonicalJson, jsonCopy, toolDigests } from './state-json.ts';
import { Body, LIMITS, quickBody, type ReadState } from './state-schema.ts';
import { describeValue } from '../values/guards.ts';
import type { Tool, ToolCall, ToolResultMessage } from '../tool/tool.ts';
import { sanitizeTraceContext } from '../seams/tracing.ts';

/** What a resume is checked against. */
export interface ResumeInput {
  readonly resume: ResumeOptions;
  readonly tools: ReadonlyMap<string, Tool>;
  readonly calls: readonly ToolCall[];
  readonly signingSecret: string | Uint8Array | undefined;
  /** Longest state text read (`maxStateChars`). */
  readonly maxChars: number;
}

/**
 * Checks a state given to `resume` and turns it into the plan the run starts from; throws a
 * {@link ResumeError} (and nothing else) when it cannot be resumed. Only once every check
 * has passed is the state's id consumed (H7).
 */
export async function readResume(input: ResumeInput): Promise<ResumePlan> {
  try {
    return await checkResume(input);
  } catch (error) {
    if (error instanceof ResumeError) throw error;
    // A state nested past the stack's depth (a RangeError while it is walked), a value whose reading throws.
    throw new ResumeError('malformed', `resume could not be read: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

async function checkResume(input: ResumeInput): Promise<ResumePlan> {
  const state = await openStateBody(input.resume.state, Body, { kind: 'toolrun/paused-batch', maxChars: input.maxChars, secret: input.signingSecret, otherKindHint: OTHER_KIND_HINT, quick: quickBody });
  const { results, pending, byId } = readCalls(state);
  const now = Date.now();
  if (now >= state.expiresAt) {
    throw new ResumeError('expired', `this state (id ${state.id}) expired at ${new Date(state.expiresAt).toISOString()}, ${now - state.expiresAt} ms ago (stateTtlMs of the paused run); it can no longer be resumed`);
  }
  checkTools(state, await toolDigests(input.tools));
  checkCalls(state, input.calls);
  const approvals: unknown = input.resume.approvals ?? [];
  if (!Array.isArray(approvals)) throw new ResumeError('approval', `resume.approvals must be an array of { approvalId, approved }, received ${describeValue(approvals)}`);
  const standing = new Map<string, StandingDecision>();
  if (state.standing !== undefined) for (const [tool, d] of Object.entries(state.standing)) standing.set(tool, standingDecision(d.approved, d.reason));
  /** The standing decisions this resume gives (H11), by tool name, with the index of the response that gave each. */
  const given = new Map<string, { decision: StandingDecision; at: number }>();
  for (let i = 0; i < approvals.length; i++) {
    const response: unknown = approvals[i];
    const id = typeof response === 'object' && response !== null ? (response as { approvalId?: unknown }).approvalId : undefined;
    const approved = typeof response === 'object' && response !== null ? (response as { approved?: unknown }).approved : undefined;
    const always = typeof response === 'object' && response !== null ? (response as { always?: unknown }).always : undefined;
    if (typeof id !== 'string' || typeof approved !== 'boolean' || (always !== undefined && typeof always !== 'boolean')) {
      throw new ResumeError('approval', `resume.approvals[${i}] must be { approvalId: string, approved: boolean, reason?: string, always?: boolean }, received ${describeValue(response)}`);
    }
    const index = byId.get(id);
    if (index === undefined) {
      throw new ResumeError('approval', `resume.approvals[${i}] answers approvalId ${JSON.stringify(id)}, which no pending request of this state has (pending: ${[...byId.keys()].join(', ')})`);
    }
    const slot = pending.get(index)!;
    if (slot.decision !== undefined) throw new ResumeError('approval', `resume.approvals[${i}] answers approvalId ${JSON.stringify(id)} a second time`);
    const reason = (response as { reason?: unknown }).reason;
    slot.decision = typeof reason === 'string' && reason !== '' ? { approvalId: id, approved, reason } : { approvalId: id, approved };
    if (always === true) {
      const tool = slot.request.toolName;
      const earlier = given.get(tool);
      if (earlier !== undefined && earlier.decision.approved !== approved) {
        throw new ResumeError('approval', `resume.approvals[${earlier.at}] and [${i}] both give tool "${tool}" a decision with always: true, one approving and one denying; give at most one`);
      }
      given.set(tool, { decision: standingDecision(approved, slot.decision.reason), at: i });
    }
  }
  for (const [tool, { decision }] of given) standing.set(tool, decision);
  // A pending call with no decision of its own takes its tool's standing decision (H11).
  if (standing.size > 0) {
    for (const slot of pending.values()) {
      const decision = slot.decision === undefined ? standing.get(slot.request.toolName) : undefined;
      if (decision !== undefined) slot.decision = { approvalId: slot.request.approvalId, ...decision };
    }
  }
  await claim(state.id, state.expiresAt, input.resume.claim);
  // Only a context with non-zero ids is passed on (the schema checked its form).
  const traceContext = sanitizeTraceContext(state.traceContext);
  return { released: state.released, terminating: state.terminating, blockTerminated: state.blockTerminated, results, pending, standing, traceContext };
}

const OTHER_KIND_HINT = ' (it is a paused agent run: resume it with runAgent, not runTools)';

/** A pending request of the plan, with the decision the resume brings. */
type PendingSlot = { request: ToolApprovalRequest; decision: ToolApprovalResponse | undefined };

/**
 * Checks the rules a state built by `pausedBatch` always keeps (a state that breaks one was
 * edited: code `malformed`), and in the same pass over the calls collects what the plan
 * needs: the stored results and the pending requests by index, the requests' indexes by
 * approvalId (which also finds an approvalId given twice).
 */
function readCalls(state: ReadState): { results: Map<number, ToolResultMessage>; pending: Map<number, PendingSlot>; byId: Map<string, number> } {
  const calls = state.calls;
  const bad = (what: string): never => {
    throw new ResumeError('malformed', `resume.state is inconsistent: ${what}`);
  };
  if (Object.keys(state.tools).length > LIMITS.tools) bad(`it lists ${Object.keys(state.tools).length} tools, more than ${LIMITS.tools}`);
  if (state.released >= calls.length) bad(`released is ${state.released} for ${calls.length} calls (a paused batch has an unreleased call)`);
  const results = new Map<number, ToolResultMessage>();
  const pending = new Map<number, PendingSlot>();
  const byId = new Map<string, number>();
  let ended = 0;
  for (let index = 0; index < calls.length; index++) {
    const { call, result, request } = calls[index]!;
    if (result !== undefined && request !== undefined) bad(`call ${index} has both a result and a request`);
    if (index < state.released && result === undefined) bad(`call ${index} is released but has no result`);
    if (index === state.released && result !== undefined) bad(`call ${index} has a result but was not released`);
    if (result !== undefined) {
      ended++;
      if (result.toolCallId !== call.id || result.toolName !== call.name) bad(`the result of call ${index} is not that call's`);
      results.set(index, result as ToolResultMessage);
    }
    if (request !== undefined) {
      if (request.index !== index || request.toolCallId !== call.id || request.toolName !== call.name) bad(`the request of call ${index} is not that call's`);
      if (!Object.hasOwn(state.tools, call.name)) bad(`call ${index} waits for approval for tool "${call.name}", which the state's tools do not list`);
      if (byId.has(request.approvalId)) bad(`approvalId ${JSON.stringify(request.approvalId)} appears twice`);
      byId.set(request.approvalId, index);
      pending.set(index, { request: request as ToolApprovalRequest, decision: undefined });
    }
  }
  if (pending.size === 0) bad('no call waits for approval');
  for (const name of Object.keys(state.standing ?? {})) if (!Object.hasOwn(state.tools, name)) bad(`a standing decision names tool "${name}", which the state's tools do not list`);
  if (state.terminating > ended) bad(`terminating is ${state.terminating} for ${ended} ended calls`);
  return { results, pending, byId };
}

function checkTools(state: ReadState, digests: Record<string, string>): void {
  const missing = Object.keys(state.tools).filter((name) => !Object.hasOwn(digests, name));
  const added = Object.keys(digests).filter((name) => !Object.hasOwn(state.tools, name));
  const changed = Object.keys(state.tools).filter((name) => Object.hasOwn(digests, name) && digests[name] !== state.tools[name]);
  if (missing.length + added.length + changed.length === 0) return;
  const parts: string[] = [];
  if (missing.length > 0) parts.push(`missing: ${missing.join(', ')}`);
  if (added.length > 0) parts.push(`not in the paused run: ${added.join(', ')}`);
  if (changed.length > 0) parts.push(`input schema changed: ${changed.join(', ')}`);
  throw new ResumeError('tools', `the tools of this run are not those of the paused run (${parts.join('; ')}); resume with the same tools`);
}

function checkCalls(state: ReadState, calls: readonly ToolCall[]): void {
  if (calls.length !== state.calls.length) {
    throw new ResumeError('calls', `the paused batch has ${state.calls.length} calls, and ${calls.length} were passed; resume with the same calls`);
  }
  for (let i = 0; i < calls.length; i++) {
    const given = calls[i]!;
    const stored = state.calls[i]!.call;
    const same = given.id === stored.id && given.name === stored.name && given.incomplete === stored.incomplete && sameArguments(given.arguments, stored.arguments);
    if (!same) throw new ResumeError('calls', `call ${i} (${JSON.stringify(given.name)}, id ${JSON.stringify(given.id)}) is not the paused batch's call ${i} (${JSON.stringify(stored.name)}, id ${JSON.stringify(stored.id)}); resume with the same calls`);
  }
}

/**
 * True when a call's arguments are those stored at the pause (JSON copies compared as
 * canonical JSON: key order does not matter). The common case is answered by walking the
 * two values side by side ({@link sameData}); when that cannot tell, the stored arguments,
 * being the JSON copy of the same value, give the same `JSON.stringify` text for the same
 * arguments; only different texts (keys in another order, a value JSON cannot hold) are
 * compared canonically.
 */
function sameArguments(given: unknown, stored: unknown): boolean {
  if (sameData(given, stored)) return true;
  try {
    if (JSON.stringify(given) === JSON.stringify(stored)) return true;
  } catch {
    // A value JSON.stringify cannot write (a BigInt, a cycle): jsonCopy describes it.
  }
  return canonicalJson(jsonCopy(given) ?? null) === canonicalJson(stored ?? null);
}

/**
 * True when `given` is plain data — strings, finite numbers, booleans, `null`, arrays, and
 * objects of `Object.prototype` (or none) without `toJSON` — equal to `stored` (parsed JSON),
 * key order aside: then its JSON copy is `stored`. False when it is not, or not only, plain
 * data (the caller then compares JSON texts). The walk follows `stored`, whose nesting the
 * state's scan bounded, so a cycle in `given` cannot make it run on.
 */
function sameData(given: unknown, stored: unknown): boolean {
  if (given === null || typeof given !== 'object') return typeof given === 'number' ? Number.isFinite(given) && given === stored : (typeof given === 'string' || typeof given === 'boolean' || given === null) && given === stored;
  if (stored === null || typeof stored !== 'object' || (given as { toJSON?: unknown }).toJSON !== undefined) return false;
  if (Array.isArray(given)) {
    if (!Array.isArray(stored) || given.length !== stored.length) return false;
    for (let i = 0; i < given.length; i++) if (!sameData(given[i], stored[i])) return false;
    return true;
  }
  const proto: unknown = Object.getPrototypeOf(given);
  if ((proto !== Object.prototype && proto !== null) || Array.isArray(stored)) return false;
  let keys = 0;
  for (const key in given) {
    if (!Object.hasOwn(stored, key) || !sameData((given as Record<string, unknown>)[key], (stored as Record<string, unknown>)[key])) return false;
    keys++;
  }
  for (const _key in stored) keys--;
  return keys === 0;
}

/**
 * Consumes the state's id (H7): refused when this process consumed it already; then the
 * application's store, when it gave `claim`; only once that said yes is the id marked here.
 * So a `claim` that throws or is refused leaves nothing marked: the resume can be retried.
 */
async function claim(id: string, expiresAt: number, claimInStore: StateClaim | undefined): Promise<void> {
  const again = (): never => {
    throw new ResumeError('already_resumed', `this state (id ${id}) was already resumed in this process; a paused batch resumes once`);
  };
  if (processClaims.has(id)) again();
  if (claimInStore !== undefined) {
    let claimed: unknown;
    try {
      claimed = await claimInStore(id, { expiresAt });
    } catch (error) {
      throw new ResumeError('claim', `resume.claim threw for state ${id}, so the state was not resumed and nothing was consumed (retry the resume): ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    if (claimed !== true) throw new ResumeError('already_resumed', `resume.claim refused state ${id} (it answered ${describeValue(claimed)}): it was already resumed`);
  }
  // Synchronous with the check above when there is no store; after an awaited store, a second resume in this process may have won.
  if (!processClaims.claim(id, expiresAt, Date.now())) again();
}
