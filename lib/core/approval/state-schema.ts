/**
 * The shape a paused batch's state body must have when it comes back (contract H8, H9): it
 * is attacker-controlled input, read with these valibot schemas and bounded by `LIMITS`.
 * `quickBody` is the same check written out by hand for speed: it accepts only what `Body`
 * accepts (and outputs unchanged, as a value), and leaves everything else to valibot.
 *
 * @module
 */
import * as v from 'valibot';

/** Limits on a state's body that comes back (attacker-controlled input, H9); its text is bounded by `maxStateChars`. */
export const LIMITS = {
  calls: 100_000,
  tools: 10_000,
  /** Characters of an approval id. */
  idChars: 1_000,
} as const;

/** A tool's digest: SHA-256 in hex. */
const DIGEST = /^[0-9a-f]{64}$/;
/** A version-00 W3C `traceparent`. */
const TRACEPARENT = /^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;
/** Longest `tracestate` kept. */
const TRACESTATE_CHARS = 512;
/** A `tracestate`'s characters: printable ASCII. */
const TRACESTATE = /^[\x20-\x7e]*$/;

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
/**
 * The paused batch span's W3C trace context: a version-00 `traceparent` and a
 * `tracestate` of printable ASCII within 512 characters, as `sanitizeTraceContext` keeps them.
 */
const TraceContext = v.strictObject({
  traceparent: v.pipe(v.string(), v.regex(TRACEPARENT)),
  tracestate: v.optional(v.pipe(v.string(), v.maxLength(TRACESTATE_CHARS), v.regex(TRACESTATE))),
});
export const Body = v.strictObject({
  id: v.pipe(v.string(), v.uuid()),
  expiresAt: v.pipe(v.number(), v.safeInteger(), v.minValue(1)),
  tools: v.record(Id, v.pipe(v.string(), v.regex(DIGEST))),
  released: v.pipe(v.number(), v.integer(), v.minValue(0)),
  terminating: v.pipe(v.number(), v.integer(), v.minValue(0)),
  blockTerminated: v.boolean(),
  calls: v.pipe(v.array(v.strictObject({ call: Call, result: v.optional(Message), request: v.optional(Request) })), v.maxLength(LIMITS.calls)),
  // H11; optional, so a state without standing decisions reads as having none.
  standing: v.optional(v.record(Id, v.strictObject({ approved: v.boolean(), reason: v.optional(v.string()) }))),
  // Optional: states paused untraced have none.
  traceContext: v.optional(TraceContext),
});
export type ReadState = v.InferOutput<typeof Body>;

// ---------------------------------------------------------------------------------------
// The same check, by hand.

/** A parsed JSON object (what `JSON.parse` makes: own data properties, no `undefined`). */
type Fields = Record<string, unknown>;

const isFields = (value: unknown): value is Fields => typeof value === 'object' && value !== null && !Array.isArray(value);
const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isInteger(value) && value >= 0;
const isId = (value: unknown): value is string => typeof value === 'string' && value.length <= LIMITS.idChars;
const isOptionalString = (value: unknown): boolean => value === undefined || typeof value === 'string';

/** How many keys `fields` has (a parsed object has only its own, all enumerable). */
function keyCount(fields: Fields): number {
  let count = 0;
  for (const _key in fields) count++;
  return count;
}

/**
 * True when `fields` is an object valibot's `record` passes unchanged: every key `isKey`
 * accepts, every value `isValue`. A record holding one of the three keys valibot's records
 * skip (`__proto__`, `constructor`, `prototype`) is left to valibot, which drops them: the
 * state scan refuses them before this runs anyway.
 */
function isRecordOf(fields: unknown, isKey: (key: string) => boolean, isValue: (value: unknown) => boolean): boolean {
  if (!isFields(fields)) return false;
  for (const key in fields) {
    if (key === '__proto__' || key === 'constructor' || key === 'prototype' || !isKey(key) || !isValue(fields[key])) return false;
  }
  return true;
}

/** A content block `Content`'s variant accepts: the member its `type` names, strict. */
function isBlock(block: unknown): boolean {
  if (!isFields(block)) return false;
  const type = block.type;
  const n = keyCount(block);
  if (type === 'text') return n === 2 && typeof block.text === 'string';
  if (type === 'image' || type === 'audio') return n === 3 && typeof block.data === 'string' && typeof block.mimeType === 'string';
  if (type === 'resource_link') {
    const { uri, name, title, description, mimeType, size } = block;
    if (typeof uri !== 'string' || typeof name !== 'string' || !isOptionalString(title) || !isOptionalString(description) || !isOptionalString(mimeType)) return false;
    if (size !== undefined && typeof size !== 'number') return false;
    const known = 3 + (title !== undefined ? 1 : 0) + (description !== undefined ? 1 : 0) + (mimeType !== undefined ? 1 : 0) + (size !== undefined ? 1 : 0);
    return n === known;
  }
  if (type === 'resource') {
    const resource = block.resource;
    if (n !== 2 || !isFields(resource)) return false;
    const { uri, mimeType, text, blob } = resource;
    // The union's two members are strict: a text resource has no blob, a blob resource no text.
    const value = text !== undefined ? text : blob;
    if (typeof uri !== 'string' || typeof value !== 'string' || !isOptionalString(mimeType)) return false;
    return keyCount(resource) === (mimeType !== undefined ? 3 : 2);
  }
  return false;
}

function isMessage(message: unknown): boolean {
  if (!isFields(message)) return false;
  const { role, toolCallId, toolName, content, isError, details, meta } = message;
  if (role !== 'tool' || typeof toolCallId !== 'string' || typeof toolName !== 'string' || typeof isError !== 'boolean' || !Array.isArray(content)) return false;
  for (const block of content as unknown[]) if (!isBlock(block)) return false;
  if (meta !== undefined && !isRecordOf(meta, () => true, () => true)) return false;
  return keyCount(message) === 5 + (details !== undefined ? 1 : 0) + (meta !== undefined ? 1 : 0);
}

function isRequest(request: unknown): boolean {
  if (!isFields(request)) return false;
  const { approvalId, toolCallId, toolName, index, input, reason, source } = request;
  if (!isId(approvalId) || approvalId.length < 1 || typeof toolCallId !== 'string' || typeof toolName !== 'string' || !isCount(index)) return false;
  if (input === undefined || (source !== 'tool' && source !== 'hook') || !isOptionalString(reason)) return false;
  return keyCount(request) === (reason !== undefined ? 7 : 6);
}

function isCall(call: unknown): boolean {
  if (!isFields(call)) return false;
  const { id, name, arguments: args, incomplete } = call;
  if (typeof id !== 'string' || typeof name !== 'string' || !isOptionalString(incomplete)) return false;
  return keyCount(call) === 2 + (args !== undefined ? 1 : 0) + (incomplete !== undefined ? 1 : 0);
}

function isEntry(entry: unknown): boolean {
  if (!isFields(entry) || !isCall(entry.call)) return false;
  const { result, request } = entry;
  if (result !== undefined && !isMessage(result)) return false;
  if (request !== undefined && !isRequest(request)) return false;
  return keyCount(entry) === 1 + (result !== undefined ? 1 : 0) + (request !== undefined ? 1 : 0);
}

const isDigest = (digest: unknown): boolean => typeof digest === 'string' && DIGEST.test(digest);

function isStanding(decision: unknown): boolean {
  if (!isFields(decision) || typeof decision.approved !== 'boolean') return false;
  const reason = decision.reason;
  return isOptionalString(reason) && keyCount(decision) === (reason !== undefined ? 2 : 1);
}

function isTraceContext(context: unknown): boolean {
  if (!isFields(context)) return false;
  const { traceparent, tracestate } = context;
  if (typeof traceparent !== 'string' || !TRACEPARENT.test(traceparent)) return false;
  if (tracestate === undefined) return keyCount(context) === 1;
  if (typeof tracestate !== 'string' || tracestate.length > TRACESTATE_CHARS || !TRACESTATE.test(tracestate)) return false;
  return keyCount(context) === 2;
}

/**
 * `body` itself when `Body` accepts it and would output it unchanged as a value (valibot
 * builds a copy with each object's keys in its schema's order; this check copies nothing);
 * otherwise `undefined`, and the caller asks valibot, which then decides (and names the
 * first issue). The same checks as `Body`, written out by hand: valibot builds a dataset per
 * value and an output object per object, ~2–4 µs per call of a paused batch, most of a
 * resume's reading (docs/adr/0014-paused-state.md). Never more lenient than `Body`:
 * spec/property/state-body.property.spec.ts compares the two on valid and mutated bodies.
 * `body` is `JSON.parse` output, owned by the caller alone: no `undefined`, no getters, and
 * nobody else holds it, so it is handed on without a copy (its keys in the order of the
 * text, which is the order `pause.ts` wrote them in).
 */
export function quickBody(body: unknown): ReadState | undefined {
  if (!isFields(body)) return undefined;
  const { id, expiresAt, tools, released, terminating, blockTerminated, calls, standing, traceContext } = body;
  if (typeof id !== 'string' || !v.UUID_REGEX.test(id)) return undefined;
  if (typeof expiresAt !== 'number' || !Number.isSafeInteger(expiresAt) || expiresAt < 1) return undefined;
  if (!isCount(released) || !isCount(terminating) || typeof blockTerminated !== 'boolean') return undefined;
  if (!Array.isArray(calls) || calls.length > LIMITS.calls) return undefined;
  if (!isRecordOf(tools, isId, isDigest)) return undefined;
  for (const entry of calls as unknown[]) if (!isEntry(entry)) return undefined;
  if (standing !== undefined && !isRecordOf(standing, isId, isStanding)) return undefined;
  if (traceContext !== undefined && !isTraceContext(traceContext)) return undefined;
  return keyCount(body) === 7 + (standing !== undefined ? 1 : 0) + (traceContext !== undefined ? 1 : 0) ? (body as ReadState) : undefined;
}
