/**
 * Human approval that survives a process boundary (contract H1–H9): the request and response
 * types, the paused batch and its JSON state (types only), the standing decisions (H11), and
 * what the prepare stage makes: an approval request and the text a denied call's result gives.
 *
 * Split by concern: building the state when a batch pauses is `pause.ts`; the JSON copies and
 * digests both sides compare are `state-json.ts`; the shape a state must have when it comes
 * back is `state-schema.ts`; reading it back (structure, version, signature, single use,
 * tools, calls, approvals) before a resumed run starts is `resume.ts`. The envelope (signing,
 * bounded reading) is `state-envelope.ts`, single use `claims.ts`.
 *
 * Portable: `crypto.randomUUID` (Web Crypto) only, no `node:` import.
 *
 * @module
 */
import type { StateClaim } from './claims.ts';
import { jsonCopy } from './state-json.ts';
import type { StateEnvelope } from './state-envelope.ts';
import type { ToolCall, ToolResultMessage } from '../tool/tool.ts';
import type { TraceHeaders } from '../seams/tracing.ts';

export { ResumeError, type ResumeErrorCode } from './resume-error.ts';

/**
 * One call waiting for a person's decision, as the `approve` option, the
 * `tool_approval_request` event and `ToolBatch.paused.requests` give it (contract H1).
 *
 * @example
 * ```ts
 * // { approvalId: '5d0c…', toolCallId: 'call_1', toolName: 'delete_file', index: 1,
 * //   input: { path: 'notes.txt' }, source: 'tool' }
 * ```
 */
export interface ToolApprovalRequest {
  /** Identifies this request: random, made once when the call is deferred, the same across every pause and resume of the call. */
  approvalId: string;
  /** The id of the call, as the model wrote it (may be empty or repeated: use `index`). */
  toolCallId: string;
  toolName: string;
  /** Position of the call in the batch (0-based). */
  index: number;
  /** The validated input the tool would receive, as JSON: what the person approves. */
  input: unknown;
  /** Text for the person, from `beforeToolCall`'s `reason` (source `'hook'`); absent for the tool's own rule. */
  reason?: string;
  /** What asked for approval: the tool's `needsApproval`, or `beforeToolCall` answering `{ needsApproval: true }`. */
  source: 'tool' | 'hook';
}

/**
 * A person's decision on one {@link ToolApprovalRequest} (contract H2, H5).
 *
 * @example
 * ```ts
 * const decision: ToolApprovalResponse = { approvalId: request.approvalId, approved: false, reason: 'Not on a Friday.' };
 * ```
 */
export interface ToolApprovalResponse {
  /** The `approvalId` of the request this answers. */
  approvalId: string;
  /** `true` runs the call; `false` gives it an error result saying a person denied it. */
  approved: boolean;
  /** With `approved: false`: why, told to the model in the call's error result. */
  reason?: string;
  /**
   * `true` makes the decision stand for the tool, as the OpenAI Agents SDK's `alwaysApprove` /
   * `alwaysReject` do (contract H11): every other request for a call of the same tool name in
   * this run is answered with it, without asking — the calls after it in this batch, the
   * batch's resumes (the decision travels in the paused state), and, in `runAgent`, the
   * batches of later turns. A call's own decision in a resume's `approvals` wins over it.
   * @default false: the decision answers this request only
   */
  always?: boolean;
}

/**
 * A decision that stands for every later request of one tool for the rest of a run (H11),
 * kept by tool name in a paused batch's state (`PausedBatchBody.standing`). Made by a
 * {@link ToolApprovalResponse} with `always: true`.
 *
 * @example
 * ```ts
 * const standing: StandingDecision = { approved: false, reason: 'no payments today' };
 * ```
 */
export interface StandingDecision {
  /** `true`: later calls of the tool run unasked; `false`: they are rejected unasked. */
  readonly approved: boolean;
  /** The person's reason; a rejected call's result quotes it to the model. */
  readonly reason?: string;
}

/**
 * Answers approval requests within the run (a terminal prompt, a rule table): the
 * `approve` option of `runTools`. `undefined` is "no answer now": the call is deferred and
 * the batch pauses with its request pending (contract H2). Its wait ends when the run is
 * aborted (the call ends `not_run`); a throw, or an answer without a boolean `approved`,
 * becomes that call's error result (P4).
 *
 * @example
 * ```ts
 * const approve: ToolApprovalHandler = async (request) => ({ approvalId: request.approvalId, approved: await ask(`Run ${request.toolName}?`) });
 * ```
 */
export type ToolApprovalHandler = (
  request: ToolApprovalRequest,
  context: { signal: AbortSignal },
) => ToolApprovalResponse | undefined | Promise<ToolApprovalResponse | undefined>;

/**
 * A batch that ended paused (`ToolBatch.paused`, contract H3): the requests a person must
 * answer, in call order, and the state to resume from.
 *
 * @example
 * ```ts
 * const batch = await drain(runTools(calls, { tools }));
 * if (batch.paused) await fs.writeFile('state.json', JSON.stringify(batch.paused.state));
 * ```
 */
export interface PausedBatch {
  /** Every pending request, in call order; never empty. */
  requests: ToolApprovalRequest[];
  /**
   * What `runTools(calls, { tools, resume: { state, approvals, claim } })` continues from;
   * plain JSON. In the process that paused, a resume from this very object (not a copy, not
   * its text) reads the body its `payload` was written from instead of parsing the payload
   * again, after the same checks, once: the object carries that body (about 1.4 times the
   * payload's length in bytes for a 1,000-call batch; held weakly) for as long as the
   * application keeps it.
   */
  state: PausedBatchState;
}

/**
 * One call of a paused batch, in the state's body (`calls`): the call as the model wrote it,
 * and either its result (it ended before the pause), its pending request, or neither (it was
 * held, not prepared: it is prepared when the batch resumes).
 */
export interface PausedCall {
  readonly call: ToolCall;
  readonly result?: ToolResultMessage;
  readonly request?: ToolApprovalRequest;
}

/**
 * The body of a paused batch's state, the JSON text in the `payload` of its {@link PausedBatchState}.
 * Read it for display only (what ran before the pause); a resume reads it itself.
 */
export interface PausedBatchBody {
  /** Random (a UUID); claimed once when the state is resumed (contract H7). */
  readonly id: string;
  /** When the state stops being resumable, in ms since the epoch: pause time + `stateTtlMs` (H7). */
  readonly expiresAt: number;
  /** Per tool name, the SHA-256 (hex) of its input JSON Schema: the resumed run must have the same tools (H8). */
  readonly tools: Readonly<Record<string, string>>;
  /** How many results, from the first call on, were delivered as `tool_result` before the pause. */
  readonly released: number;
  /** How many of the ended calls' results asked to terminate and are not errors (O6). */
  readonly terminating: number;
  /** True when `beforeToolCall` blocked an ended call with `terminate: true` (P6). */
  readonly blockTerminated: boolean;
  /** Every call of the batch, in call order. */
  readonly calls: readonly PausedCall[];
  /** Decisions given with `always: true` (H11), by tool name; absent when there are none. */
  readonly standing?: Readonly<Record<string, StandingDecision>>;
  /**
   * The W3C trace context (`traceparent`, `tracestate`) of the paused batch's span, when the
   * run was traced (`tracing` whose batch trace has `headers`, as `toolrun/otel`'s has): the
   * resumed batch's span links to it, or continues it. Absent from states paused untraced
   * or written without one (they resume unlinked).
   */
  readonly traceContext?: { readonly traceparent: string; readonly tracestate?: string };
}

/**
 * The state of a paused batch (contract H4, H9): JSON only, `JSON.stringify(state)` is its
 * serialization — `{ version: 2, kind: 'toolrun/paused-batch', payload, signature? }`, the
 * body ({@link PausedBatchBody}) as JSON text in `payload`, and with `signingSecret` the
 * HMAC-SHA256 of exactly that text. Treat it as opaque; it is checked when it comes back.
 * Format version 2 (a state of format version 1 is refused with code `version`).
 */
export type PausedBatchState = StateEnvelope<'toolrun/paused-batch'>;

/**
 * The `resume` option of `runTools` (contract H5).
 *
 * @example
 * ```ts
 * runTools(calls, { tools, resume: { state: await fs.readFile('state.json', 'utf8'), approvals: [{ approvalId, approved: true }] } });
 * ```
 */
export interface ResumeOptions {
  /** The paused batch's state, as an object or as its JSON text. */
  state: PausedBatchState | string;
  /** Decisions on some or all pending requests; a request with none stays pending (the batch pauses again). @default [] */
  approvals?: readonly ToolApprovalResponse[];
  /**
   * Claims the state's id for this resume, once, in the application's own store (a database
   * row, a file created exclusively, `inMemoryClaim()` for one process): `false` makes
   * the resume fail with `already_resumed`, a throw with `claim` (nothing consumed: retry).
   * Asked after every other check passed. Required with `signingSecret` (a `TypeError`
   * without it); see {@link StateClaim}.
   * @default none: a second resume is refused within this process only (H7)
   */
  claim?: StateClaim;
}

// ---------------------------------------------------------------------------------------
// Inside the core.

/** What a resumed run starts from, once its state has passed every check. */
export interface ResumePlan {
  readonly released: number;
  readonly terminating: number;
  readonly blockTerminated: boolean;
  /** Results of calls that ended before the pause, by index (the released ones included). */
  readonly results: ReadonlyMap<number, ToolResultMessage>;
  /** Pending requests by index, with the decision the resume brings (`undefined`: none yet). */
  readonly pending: ReadonlyMap<number, { request: ToolApprovalRequest; decision: ToolApprovalResponse | undefined }>;
  /** The standing decisions (H11): the state's, then those the resume's approvals gave with `always`. */
  readonly standing: ReadonlyMap<string, StandingDecision>;
  /** The paused batch span's W3C trace context, when the state has a well-formed one. */
  readonly traceContext: TraceHeaders | undefined;
}

/**
 * Where a run keeps its standing decisions (H11): a `Map` the run reads and writes, passed
 * under this key by `runAgent` so that one map spans every turn's batch. Internal (not
 * exported from the package); a plain `runTools` makes its own.
 */
export const STANDING_DECISIONS = Symbol('toolrun.standingDecisions');

/** The standing decision as JSON-ready fields (no `reason` key when there is none). */
export function standingDecision(approved: boolean, reason: string | undefined): StandingDecision {
  return reason === undefined ? { approved } : { approved, reason };
}

/** The text of the error result a call denied by a person gets (H2, H5), quoting their reason. */
export function deniedText(toolName: string, reason: string | undefined): string {
  return (
    `A person denied this call to tool "${toolName}", so it was not run.` +
    (reason === undefined ? '' : ` Their reason: ${JSON.stringify(reason)}.`) +
    ' Do not try it again unless the user asks you to.'
  );
}

/** A new request for `record`'s call; `input` is a JSON copy of the validated input. */
export function approvalRequest(call: ToolCall, index: number, input: unknown, source: 'tool' | 'hook', reason: string | undefined): ToolApprovalRequest {
  const request: ToolApprovalRequest = { approvalId: crypto.randomUUID(), toolCallId: call.id, toolName: call.name, index, input: jsonCopy(input), source };
  if (reason !== undefined) request.reason = reason;
  return request;
}
