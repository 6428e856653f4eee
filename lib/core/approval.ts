/**
 * Human approval that survives a process boundary (contract H1–H9): the request and response
 * types, the paused batch and its JSON state, and everything done with that state — building
 * it when a batch pauses, signing it, and reading it back (structure, version, signature,
 * single use, tools, calls, approvals) before a resumed run starts.
 *
 * The envelope (signing, bounded reading) is `state-envelope.ts`, single use `claims.ts`.
 *
 * Portable: Web Crypto (`globalThis.crypto.subtle`, `crypto.randomUUID`) only, no `node:`
 * import.
 *
 * @module
 */
import * as v from 'valibot';
import { inputJsonSchema } from './json-schema.ts';
import { processClaims, type StateClaim } from './claims.ts';
import { ResumeError } from './resume-error.ts';
import { openState, sealState, type StateEnvelope } from './state-envelope.ts';
import { describeValue, type Tool, type ToolCall, type ToolResultMessage } from './tool.ts';

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
  /** What `runTools(calls, { tools, resume: { state, approvals, claim } })` continues from; plain JSON. */
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
 * The body of a paused batch's state, the JSON text in {@link PausedBatchState.payload}.
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
}

/**
 * The state of a paused batch (contract H4, H9): JSON only, `JSON.stringify(state)` is its
 * serialization — `{ version: 2, kind: 'toolrun/paused-batch', payload, signature? }`, the
 * body ({@link PausedBatchBody}) as JSON text in `payload`, and with `signingSecret` the
 * HMAC-SHA256 of exactly that text. Treat it as opaque; it is checked when it comes back.
 * Format 2 since issue 19 (a version 1 state is refused with code `version`).
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
}

/** Limits on a state's body that comes back (attacker-controlled input, H9); its text is bounded by `maxStateChars`. */
const LIMITS = {
  calls: 100_000,
  tools: 10_000,
  /** Characters of an approval id. */
  idChars: 1_000,
} as const;

/** The texts a person denying a call gives the model (H5). */
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

/** A JSON copy of `value` (what survives `JSON.stringify`); a value JSON cannot hold becomes its description. */
function jsonCopy(value: unknown): unknown {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? null : (JSON.parse(text) as unknown);
  } catch {
    return describeValue(value);
  }
}

/** The result message as JSON; `details`/`meta` JSON cannot hold are dropped (docs/decisions.md). */
function messageCopy(message: ToolResultMessage): ToolResultMessage {
  try {
    return JSON.parse(JSON.stringify(message)) as ToolResultMessage;
  } catch {
    return { role: 'tool', toolCallId: message.toolCallId, toolName: message.toolName, content: message.content, isError: message.isError };
  }
}

/** JSON text with every object's keys sorted: the same value always gives the same text. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null)).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const keys = Object.keys(value).sort();
    const parts: string[] = [];
    for (const key of keys) {
      const item = (value as Record<string, unknown>)[key];
      if (item !== undefined) parts.push(`${JSON.stringify(key)}:${canonicalJson(item)}`);
    }
    return `{${parts.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function hex(bytes: ArrayBuffer): string {
  let text = '';
  for (const byte of new Uint8Array(bytes)) text += byte.toString(16).padStart(2, '0');
  return text;
}

async function sha256(text: string): Promise<string> {
  return hex(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
}

/** Per tool name, the SHA-256 of its input JSON Schema (canonical JSON). */
async function toolDigests(tools: ReadonlyMap<string, Tool>): Promise<Record<string, string>> {
  const digests: Record<string, string> = {};
  for (const [name, tool] of tools) {
    let schema: unknown;
    try {
      schema = inputJsonSchema(tool.input, name);
    } catch {
      // A Standard Schema with no converter: its vendor is all that can be compared.
      schema = { unconvertible: (tool.input as { '~standard'?: { vendor?: unknown } })['~standard']?.vendor ?? null };
    }
    digests[name] = await sha256(canonicalJson(schema));
  }
  return digests;
}

/** What the run hands over when it pauses. */
export interface PauseParts {
  readonly calls: readonly ToolCall[];
  readonly tools: ReadonlyMap<string, Tool>;
  /** The released results, in call order. */
  readonly released: readonly ToolResultMessage[];
  /** Results of calls that ended after the first unreleased one, by index. */
  readonly held: ReadonlyMap<number, ToolResultMessage>;
  /** The deferred calls' requests, by index. */
  readonly requests: ReadonlyMap<number, ToolApprovalRequest>;
  readonly terminating: number;
  readonly blockTerminated: boolean;
  readonly signingSecret: string | Uint8Array | undefined;
  /** How long the state can be resumed, in ms from now (`stateTtlMs`). */
  readonly ttlMs: number;
}

/** Builds (and signs, with a secret) the state of a batch that paused (H3, H4, H9). */
export async function pausedBatch(parts: PauseParts): Promise<PausedBatch> {
  const calls: PausedCall[] = [];
  const requests: ToolApprovalRequest[] = [];
  parts.calls.forEach((raw, index) => {
    const call: ToolCall = { id: raw.id, name: raw.name };
    if (raw.arguments !== undefined) call.arguments = jsonCopy(raw.arguments);
    if (raw.incomplete !== undefined) call.incomplete = raw.incomplete;
    const message = index < parts.released.length ? parts.released[index] : parts.held.get(index);
    const request = parts.requests.get(index);
    if (message !== undefined) calls.push({ call, result: messageCopy(message) });
    else if (request !== undefined) {
      calls.push({ call, request });
      requests.push(request);
    } else calls.push({ call });
  });
  const body: PausedBatchBody = {
    id: crypto.randomUUID(),
    // Clamped: a huge stateTtlMs must not write an expiry the reader refuses as malformed.
    expiresAt: Math.min(Date.now() + parts.ttlMs, Number.MAX_SAFE_INTEGER),
    tools: await toolDigests(parts.tools),
    released: parts.released.length,
    terminating: parts.terminating,
    blockTerminated: parts.blockTerminated,
    calls,
  };
  return { requests, state: await sealState('toolrun/paused-batch', body, parts.signingSecret) };
}

// --- reading a state back

const Id = v.pipe(v.string(), v.maxLength(LIMITS.idChars));
const Content = v.array(
  v.variant('type', [
    v.strictObject({ type: v.literal('text'), text: v.string() }),
    v.strictObject({ type: v.literal('image'), data: v.string(), mimeType: v.string() }),
    v.strictObject({ type: v.literal('audio'), data: v.string(), mimeType: v.string() }),
    v.strictObject({
      type: v.literal('resource_link'),
      uri: v.string(),
      name: v.string(),
      title: v.optional(v.string()),
      description: v.optional(v.string()),
      mimeType: v.optional(v.string()),
      size: v.optional(v.number()),
    }),
    v.strictObject({
      type: v.literal('resource'),
      resource: v.union([
        v.strictObject({ uri: v.string(), mimeType: v.optional(v.string()), text: v.string() }),
        v.strictObject({ uri: v.string(), mimeType: v.optional(v.string()), blob: v.string() }),
      ]),
    }),
  ]),
);
const Message = v.strictObject({
  role: v.literal('tool'),
  toolCallId: v.string(),
  toolName: v.string(),
  content: Content,
  isError: v.boolean(),
  details: v.optional(v.unknown()),
  meta: v.optional(v.record(v.string(), v.unknown())),
});
const Request = v.strictObject({
  approvalId: v.pipe(Id, v.minLength(1)),
  toolCallId: v.string(),
  toolName: v.string(),
  index: v.pipe(v.number(), v.integer(), v.minValue(0)),
  input: v.unknown(),
  reason: v.optional(v.string()),
  source: v.picklist(['tool', 'hook']),
});
const Call = v.strictObject({
  id: v.string(),
  name: v.string(),
  arguments: v.optional(v.unknown()),
  incomplete: v.optional(v.string()),
});
const Body = v.strictObject({
  id: v.pipe(v.string(), v.uuid()),
  expiresAt: v.pipe(v.number(), v.safeInteger(), v.minValue(1)),
  tools: v.record(Id, v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/))),
  released: v.pipe(v.number(), v.integer(), v.minValue(0)),
  terminating: v.pipe(v.number(), v.integer(), v.minValue(0)),
  blockTerminated: v.boolean(),
  calls: v.pipe(v.array(v.strictObject({ call: Call, result: v.optional(Message), request: v.optional(Request) })), v.maxLength(LIMITS.calls)),
});
type ReadState = v.InferOutput<typeof Body>;

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
  const state = await parseState(input.resume.state, input.signingSecret, input.maxChars);
  const now = Date.now();
  if (now >= state.expiresAt) {
    throw new ResumeError('expired', `this state (id ${state.id}) expired at ${new Date(state.expiresAt).toISOString()}, ${now - state.expiresAt} ms ago (stateTtlMs of the paused run); it can no longer be resumed`);
  }
  checkTools(state, await toolDigests(input.tools));
  checkCalls(state, input.calls);
  const pending = new Map<number, { request: ToolApprovalRequest; decision: ToolApprovalResponse | undefined }>();
  const byId = new Map<string, number>();
  const results = new Map<number, ToolResultMessage>();
  state.calls.forEach((entry, index) => {
    if (entry.result !== undefined) results.set(index, entry.result as ToolResultMessage);
    if (entry.request !== undefined) {
      const request = entry.request as ToolApprovalRequest;
      pending.set(index, { request, decision: undefined });
      byId.set(request.approvalId, index);
    }
  });
  const approvals: unknown = input.resume.approvals ?? [];
  if (!Array.isArray(approvals)) throw new ResumeError('approval', `resume.approvals must be an array of { approvalId, approved }, received ${describeValue(approvals)}`);
  for (const [i, response] of (approvals as unknown[]).entries()) {
    const id = typeof response === 'object' && response !== null ? (response as { approvalId?: unknown }).approvalId : undefined;
    const approved = typeof response === 'object' && response !== null ? (response as { approved?: unknown }).approved : undefined;
    if (typeof id !== 'string' || typeof approved !== 'boolean') {
      throw new ResumeError('approval', `resume.approvals[${i}] must be { approvalId: string, approved: boolean, reason?: string }, received ${describeValue(response)}`);
    }
    const index = byId.get(id);
    if (index === undefined) {
      throw new ResumeError('approval', `resume.approvals[${i}] answers approvalId ${JSON.stringify(id)}, which no pending request of this state has (pending: ${[...byId.keys()].join(', ')})`);
    }
    const slot = pending.get(index)!;
    if (slot.decision !== undefined) throw new ResumeError('approval', `resume.approvals[${i}] answers approvalId ${JSON.stringify(id)} a second time`);
    const reason = (response as { reason?: unknown }).reason;
    slot.decision = typeof reason === 'string' && reason !== '' ? { approvalId: id, approved, reason } : { approvalId: id, approved };
  }
  await claim(state.id, state.expiresAt, input.resume.claim);
  return { released: state.released, terminating: state.terminating, blockTerminated: state.blockTerminated, results, pending };
}

/** Bounds, verifies (with a secret), parses and validates a state; every failure is a ResumeError. */
async function parseState(given: unknown, secret: string | Uint8Array | undefined, maxChars: number): Promise<ReadState> {
  const hint = ' (it is a paused agent run: resume it with runAgent, not runTools)';
  const body = await openState(given, { kind: 'toolrun/paused-batch', maxChars, secret, otherKindHint: hint });
  const parsed = v.safeParse(Body, body);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const path = v.getDotPath(issue) ?? '(root)';
    throw new ResumeError('malformed', `resume.state is malformed at ${path}: ${issue.message}`);
  }
  const state = parsed.output;
  checkConsistent(state);
  return state;
}

/** The rules a state built by `pausedBatch` always keeps: a state that breaks one was edited. */
function checkConsistent(state: ReadState): void {
  const calls = state.calls;
  const bad = (what: string): never => {
    throw new ResumeError('malformed', `resume.state is inconsistent: ${what}`);
  };
  if (Object.keys(state.tools).length > LIMITS.tools) bad(`it lists ${Object.keys(state.tools).length} tools, more than ${LIMITS.tools}`);
  if (state.released >= calls.length) bad(`released is ${state.released} for ${calls.length} calls (a paused batch has an unreleased call)`);
  let ended = 0;
  let pending = 0;
  const ids = new Set<string>();
  calls.forEach((entry, index) => {
    const { call, result, request } = entry;
    if (result !== undefined && request !== undefined) bad(`call ${index} has both a result and a request`);
    if (index < state.released && result === undefined) bad(`call ${index} is released but has no result`);
    if (index === state.released && result !== undefined) bad(`call ${index} has a result but was not released`);
    if (result !== undefined) {
      ended++;
      if (result.toolCallId !== call.id || result.toolName !== call.name) bad(`the result of call ${index} is not that call's`);
    }
    if (request !== undefined) {
      pending++;
      if (request.index !== index || request.toolCallId !== call.id || request.toolName !== call.name) bad(`the request of call ${index} is not that call's`);
      if (!Object.hasOwn(state.tools, call.name)) bad(`call ${index} waits for approval for tool "${call.name}", which the state's tools do not list`);
      if (ids.has(request.approvalId)) bad(`approvalId ${JSON.stringify(request.approvalId)} appears twice`);
      ids.add(request.approvalId);
    }
  });
  if (pending === 0) bad('no call waits for approval');
  if (state.terminating > ended) bad(`terminating is ${state.terminating} for ${ended} ended calls`);
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
    const same =
      given.id === stored.id &&
      given.name === stored.name &&
      given.incomplete === stored.incomplete &&
      canonicalJson(jsonCopy(given.arguments) ?? null) === canonicalJson(stored.arguments ?? null);
    if (!same) throw new ResumeError('calls', `call ${i} (${JSON.stringify(given.name)}, id ${JSON.stringify(given.id)}) is not the paused batch's call ${i} (${JSON.stringify(stored.name)}, id ${JSON.stringify(stored.id)}); resume with the same calls`);
  }
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
