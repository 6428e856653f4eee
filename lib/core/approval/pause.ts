/**
 * Building the state of a batch that paused for approval (contract H3, H4, H9): every call,
 * its result or its request, the tools' schema digests, signed with a secret when given.
 *
 * @module
 */
import { standingDecision, type PausedBatch, type PausedBatchBody, type PausedCall, type StandingDecision, type ToolApprovalRequest } from './approval.ts';
import { sealState } from './state-envelope.ts';
import { jsonCopy, messageCopy, toolDigests } from './state-json.ts';
import type { Tool, ToolCall, ToolResultMessage } from '../tool/tool.ts';
import type { TraceHeaders } from '../seams/tracing.ts';

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
  /** The run's standing decisions (H11), by tool name. */
  readonly standing: ReadonlyMap<string, StandingDecision>;
  readonly signingSecret: string | Uint8Array | undefined;
  /** How long the state can be resumed, in ms from now (`stateTtlMs`). */
  readonly ttlMs: number;
  /** The W3C trace context of the batch's span (`TracedBatch.headers`), when the run was traced. */
  readonly traceContext: TraceHeaders | undefined;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * Builds (and signs, with a secret) the state of a batch that paused (H3, H4, H9). The body
 * is built of JSON copies only, shared with nothing the application holds (a request it was
 * handed is copied, its input too): it is exactly what `JSON.parse` of the payload gives, so
 * `sealState` keeps it with the state object for a resume from that object in this process
 * (`state-envelope.ts`). Not kept when a call's `incomplete` is not a string (the body would
 * hold the application's value; the payload is then parsed as usual).
 */
export async function pausedBatch(parts: PauseParts): Promise<PausedBatch> {
  const calls: PausedCall[] = [];
  const requests: ToolApprovalRequest[] = [];
  let keep = true;
  parts.calls.forEach((raw, index) => {
    const call: ToolCall = { id: raw.id, name: raw.name };
    if (raw.arguments !== undefined) call.arguments = jsonCopy(raw.arguments);
    if (raw.incomplete !== undefined) {
      call.incomplete = raw.incomplete;
      if (typeof raw.incomplete !== 'string') keep = false;
    }
    const message = index < parts.released.length ? parts.released[index] : parts.held.get(index);
    const request = parts.requests.get(index);
    if (message !== undefined) calls.push({ call, result: messageCopy(message) });
    else if (request !== undefined) {
      calls.push({ call, request: { ...request, input: jsonCopy(request.input) } });
      requests.push(request);
    } else calls.push({ call });
  });
  const body: Mutable<PausedBatchBody> = {
    id: crypto.randomUUID(),
    // Clamped: a huge stateTtlMs must not write an expiry the reader refuses as malformed.
    expiresAt: Math.min(Date.now() + parts.ttlMs, Number.MAX_SAFE_INTEGER),
    tools: await toolDigests(parts.tools),
    released: parts.released.length,
    terminating: parts.terminating,
    blockTerminated: parts.blockTerminated,
    calls,
    ...(parts.standing.size > 0 ? { standing: Object.fromEntries([...parts.standing].map(([tool, d]) => [tool, standingDecision(d.approved, d.reason)])) } : {}),
  };
  // Plain strings in the signed body: the resumed run's trace links to (or continues) this one.
  const traceparent = parts.traceContext?.traceparent;
  if (traceparent !== undefined) {
    const tracestate = parts.traceContext!.tracestate;
    body.traceContext = tracestate === undefined ? { traceparent } : { traceparent, tracestate };
  }
  return { requests, state: await sealState('toolrun/paused-batch', body, parts.signingSecret, keep) };
}
