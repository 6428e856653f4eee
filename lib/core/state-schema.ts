/**
 * The shape a paused batch's state body must have when it comes back (contract H8, H9): it
 * is attacker-controlled input, read with these valibot schemas and bounded by `LIMITS`.
 * `quickBody` is the same check written out by hand for speed: it accepts only what `Body`
 * accepts, with the same output, and leaves everything else to valibot.
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
 * The paused batch span's W3C trace context (issue 22): a version-00 `traceparent` and a
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
  // Since issue 22 (H11); optional, so a state paused before it reads as having none.
  standing: v.optional(v.record(Id, v.strictObject({ approved: v.boolean(), reason: v.optional(v.string()) }))),
  // Optional: states paused untraced, or before issue 22, have none.
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

/** How many keys `fields` has (a parsed object has only its own, all enumerable). */
function keyCount(fields: Fields): number {
  let count = 0;
  for (const _key in fields) count++;
  return count;
}

/**
 * A valibot `record` of `fields` (the keys `isKey` accepts, each value read by `read`), or
 * `undefined`. The three keys valibot's records skip (`__proto__`, `constructor`, `prototype`)
 * are left to valibot: the state scan refuses them before this runs anyway.
 */
function recordOf<T>(fields: unknown, isKey: (key: string) => boolean, read: (value: unknown) => T | undefined): Record<string, T> | undefined {
  if (!isFields(fields)) return undefined;
  const out: Record<string, T> = {};
  for (const key in fields) {
    if (key === '__proto__' || key === 'constructor' || key === 'prototype' || !isKey(key)) return undefined;
    const value = read(fields[key]);
    if (value === undefined) return undefined;
    out[key] = value;
  }
  return out;
}

/** A content block as `Content`'s variant outputs it: the member its `type` names, strict. */
function blockOf(block: Fields): Fields | undefined {
  const type = block.type;
  const n = keyCount(block);
  if (type === 'text') return n === 2 && typeof block.text === 'string' ? { type, text: block.text } : undefined;
  if (type === 'image' || type === 'audio') {
    return n === 3 && typeof block.data === 'string' && typeof block.mimeType === 'string' ? { type, data: block.data, mimeType: block.mimeType } : undefined;
  }
  if (type === 'resource_link') {
    const { uri, name, title, description, mimeType, size } = block;
    if (typeof uri !== 'string' || typeof name !== 'string') return undefined;
    const out: Fields = { type, uri, name };
    let known = 3;
    if (title !== undefined) {
      if (typeof title !== 'string') return undefined;
      out.title = title;
      known++;
    }
    if (description !== undefined) {
      if (typeof description !== 'string') return undefined;
      out.description = description;
      known++;
    }
    if (mimeType !== undefined) {
      if (typeof mimeType !== 'string') return undefined;
      out.mimeType = mimeType;
      known++;
    }
    if (size !== undefined) {
      if (typeof size !== 'number') return undefined;
      out.size = size;
      known++;
    }
    return n === known ? out : undefined;
  }
  if (type === 'resource') {
    const resource = block.resource;
    if (n !== 2 || !isFields(resource)) return undefined;
    const { uri, mimeType, text, blob } = resource;
    // The union's two members are strict: a text resource has no blob, a blob resource no text.
    const body = text !== undefined ? 'text' : 'blob';
    const value = text !== undefined ? text : blob;
    if (typeof uri !== 'string' || typeof value !== 'string') return undefined;
    if (mimeType !== undefined && typeof mimeType !== 'string') return undefined;
    if (keyCount(resource) !== (mimeType !== undefined ? 3 : 2)) return undefined;
    return { type, resource: mimeType !== undefined ? { uri, mimeType, [body]: value } : { uri, [body]: value } };
  }
  return undefined;
}

function messageOf(message: unknown): Fields | undefined {
  if (!isFields(message)) return undefined;
  const { role, toolCallId, toolName, content, isError, details, meta } = message;
  if (role !== 'tool' || typeof toolCallId !== 'string' || typeof toolName !== 'string' || typeof isError !== 'boolean' || !Array.isArray(content)) return undefined;
  const blocks: Fields[] = [];
  for (const block of content as unknown[]) {
    const read = isFields(block) ? blockOf(block) : undefined;
    if (read === undefined) return undefined;
    blocks.push(read);
  }
  const out: Fields = { role, toolCallId, toolName, content: blocks, isError };
  let known = 5;
  if (details !== undefined) {
    out.details = details;
    known++;
  }
  if (meta !== undefined) {
    const read = recordOf(meta, () => true, (value) => value);
    if (read === undefined) return undefined;
    out.meta = read;
    known++;
  }
  return keyCount(message) === known ? out : undefined;
}

function requestOf(request: unknown): Fields | undefined {
  if (!isFields(request)) return undefined;
  const { approvalId, toolCallId, toolName, index, input, reason, source } = request;
  if (!isId(approvalId) || approvalId.length < 1 || typeof toolCallId !== 'string' || typeof toolName !== 'string' || !isCount(index)) return undefined;
  if (input === undefined || (source !== 'tool' && source !== 'hook')) return undefined;
  if (reason !== undefined && typeof reason !== 'string') return undefined;
  if (keyCount(request) !== (reason !== undefined ? 7 : 6)) return undefined;
  return reason !== undefined ? { approvalId, toolCallId, toolName, index, input, reason, source } : { approvalId, toolCallId, toolName, index, input, source };
}

function callOf(call: unknown): Fields | undefined {
  if (!isFields(call)) return undefined;
  const { id, name, arguments: args, incomplete } = call;
  if (typeof id !== 'string' || typeof name !== 'string') return undefined;
  const out: Fields = { id, name };
  let known = 2;
  if (args !== undefined) {
    out.arguments = args;
    known++;
  }
  if (incomplete !== undefined) {
    if (typeof incomplete !== 'string') return undefined;
    out.incomplete = incomplete;
    known++;
  }
  return keyCount(call) === known ? out : undefined;
}

function entryOf(entry: unknown): Fields | undefined {
  if (!isFields(entry)) return undefined;
  const call = callOf(entry.call);
  if (call === undefined) return undefined;
  const out: Fields = { call };
  let known = 1;
  if (entry.result !== undefined) {
    const result = messageOf(entry.result);
    if (result === undefined) return undefined;
    out.result = result;
    known++;
  }
  if (entry.request !== undefined) {
    const request = requestOf(entry.request);
    if (request === undefined) return undefined;
    out.request = request;
    known++;
  }
  return keyCount(entry) === known ? out : undefined;
}

function standingOf(decision: unknown): Fields | undefined {
  if (!isFields(decision) || typeof decision.approved !== 'boolean') return undefined;
  const reason = decision.reason;
  if (reason !== undefined && typeof reason !== 'string') return undefined;
  if (keyCount(decision) !== (reason !== undefined ? 2 : 1)) return undefined;
  return reason !== undefined ? { approved: decision.approved, reason } : { approved: decision.approved };
}

function traceContextOf(context: unknown): Fields | undefined {
  if (!isFields(context)) return undefined;
  const { traceparent, tracestate } = context;
  if (typeof traceparent !== 'string' || !TRACEPARENT.test(traceparent)) return undefined;
  if (tracestate === undefined) return keyCount(context) === 1 ? { traceparent } : undefined;
  if (typeof tracestate !== 'string' || tracestate.length > TRACESTATE_CHARS || !TRACESTATE.test(tracestate)) return undefined;
  return keyCount(context) === 2 ? { traceparent, tracestate } : undefined;
}

/**
 * What `v.parse(Body, body)` returns, for a body `Body` accepts that this check can read;
 * otherwise `undefined`, and the caller asks valibot, which then decides (and names the
 * first issue). The same checks as `Body`, written out by hand: valibot builds a dataset
 * per value and an output object per object, ~2–4 µs per call of a paused batch, most of a
 * resume's reading (docs/bench/findings.md, issue 23). Never more lenient than `Body`,
 * with the same output, key order included (each object is built in its schema's order, as
 * valibot builds it): spec/property/state-body.property.spec.ts compares the two on valid
 * and mutated bodies. `body` is `JSON.parse` output: no `undefined`, no getters.
 */
export function quickBody(body: unknown): ReadState | undefined {
  if (!isFields(body)) return undefined;
  const { id, expiresAt, tools, released, terminating, blockTerminated, calls, standing, traceContext } = body;
  if (typeof id !== 'string' || !v.UUID_REGEX.test(id)) return undefined;
  if (typeof expiresAt !== 'number' || !Number.isSafeInteger(expiresAt) || expiresAt < 1) return undefined;
  if (!isCount(released) || !isCount(terminating) || typeof blockTerminated !== 'boolean') return undefined;
  if (!Array.isArray(calls) || calls.length > LIMITS.calls) return undefined;
  const readTools = recordOf(tools, isId, (digest) => (typeof digest === 'string' && DIGEST.test(digest) ? digest : undefined));
  if (readTools === undefined) return undefined;
  const readCalls: Fields[] = [];
  for (const entry of calls as unknown[]) {
    const read = entryOf(entry);
    if (read === undefined) return undefined;
    readCalls.push(read);
  }
  const out: Fields = { id, expiresAt, tools: readTools, released, terminating, blockTerminated, calls: readCalls };
  let known = 7;
  if (standing !== undefined) {
    const read = recordOf(standing, isId, standingOf);
    if (read === undefined) return undefined;
    out.standing = read;
    known++;
  }
  if (traceContext !== undefined) {
    const read = traceContextOf(traceContext);
    if (read === undefined) return undefined;
    out.traceContext = read;
    known++;
  }
  return keyCount(body) === known ? (out as ReadState) : undefined;
}
