/**
 * The shape a paused batch's state body must have when it comes back (contract H8, H9): it
 * is attacker-controlled input, read with these valibot schemas and bounded by `LIMITS`.
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
  traceparent: v.pipe(v.string(), v.regex(/^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/)),
  tracestate: v.optional(v.pipe(v.string(), v.maxLength(512), v.regex(/^[\x20-\x7e]*$/))),
});
export const Body = v.strictObject({
  id: v.pipe(v.string(), v.uuid()),
  expiresAt: v.pipe(v.number(), v.safeInteger(), v.minValue(1)),
  tools: v.record(Id, v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/))),
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
