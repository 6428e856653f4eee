/**
 * Vercel AI SDK `ModelMessage`s (`ai` 6 and 7) adapter (contract F6).
 *
 * - {@link fromAISDKMessage}: the `tool-call` parts of an assistant `ModelMessage` →
 *   {@link ToolCall}s.
 * - {@link toAISDKMessages}: toolrun's results → the `role: 'tool'` message of
 *   `tool-result` parts that answers them, in call order.
 * - {@link toAISDKApprovalRequests} / {@link fromAISDKApprovalResponses}: a paused batch's
 *   (or paused `runAgent`'s) requests → ai 7's `tool-approval-request` parts, and the
 *   `tool-approval-response` parts a client sends back → `resume.approvals` (contract H10).
 *
 * For an application that keeps its history as AI SDK messages but runs the tool calls
 * with toolrun (e.g. `generateText` with tools that have no `execute`). Typed structurally:
 * the result is assignable to the `ai` package's `ModelMessage` (checked by a type test).
 *
 * @module
 */
import type { ToolApprovalRequest, ToolApprovalResponse } from '../core/approval/approval.ts';
import { ResumeError } from '../core/approval/resume-error.ts';
import type { ToolCall, ToolResultMessage } from '../core/tool/tool.ts';
import { describeValue } from '../core/values/guards.ts';
import { providerBlock } from '../core/values/content.ts';
import { asString, contentToText, toolName } from './shared.ts';
import { isObjectRecord } from '../core/values/guards.ts';

/** What {@link fromAISDKMessage} accepts: an assistant `ModelMessage` (`content` a string or an array of parts). */
export interface AISDKAssistantMessageInput {
  readonly role?: string | undefined;
  readonly content?: string | readonly unknown[] | undefined;
}

/** The major version of the `ai` package a converter writes parts for. */
export type AISDKVersion = 6 | 7;

/**
 * An image of a tool result, as `ai` `V` wants it in `content` output: ai 7's `file` part
 * with tagged data (`{ type: 'file', data: { type: 'data', data }, mediaType }`); ai 6's
 * `image-data` part, which ai 7 still reads but logs as deprecated
 * (`AISDK_DEP_TOOL_RESULT_IMAGE_DATA`).
 */
export type AISDKImageOutputPart<V extends AISDKVersion = 7> = V extends 6
  ? { type: 'image-data'; data: string; mediaType: string }
  : { type: 'file'; data: { type: 'data'; data: string }; mediaType: string };

/** The `output` of a `tool-result` part that {@link toAISDKMessages} writes (kinds of the SDK's `ToolResultOutput`) for `ai` `V`. */
export type AISDKToolResultOutput<V extends AISDKVersion = 7> =
  | { type: 'text'; value: string }
  | { type: 'error-text'; value: string }
  | { type: 'content'; value: Array<{ type: 'text'; text: string } | AISDKImageOutputPart<V>> };

/** A `tool-result` part. */
export interface AISDKToolResultPart<V extends AISDKVersion = 7> {
  type: 'tool-result';
  toolCallId: string;
  toolName: string;
  output: AISDKToolResultOutput<V>;
}

/** A `role: 'tool'` model message. */
export interface AISDKToolModelMessage<V extends AISDKVersion = 7> {
  role: 'tool';
  content: AISDKToolResultPart<V>[];
}

/** Options of {@link toAISDKMessages}. */
export interface ToAISDKMessagesOptions<V extends AISDKVersion = 7> {
  /**
   * The `ai` major version the messages are for: it decides how images are written
   * ({@link AISDKImageOutputPart}). ai 7 reads ai 6's `image-data` too, with a deprecation
   * warning; ai 6 does not read ai 7's `file` part.
   * @default 7
   */
  aiVersion?: V;
}

/**
 * Reads the tool calls of an AI SDK assistant message.
 *
 * Returns one {@link ToolCall} per `tool-call` part, in content order: `id` = `toolCallId`,
 * `name` = `toolName` (one that is not a string becomes `''`, never its `String()`: the call
 * is answered "no tool name", never run), `arguments` = `input` as is (an object after the SDK parsed it; the
 * raw text when it could not). Parts with `providerExecuted: true` (run by the provider,
 * e.g. a hosted web search) are skipped, as are text, reasoning, file and tool-result parts.
 * A string `content` holds no calls.
 *
 * @throws TypeError when `message` is not an object or `content` is neither a string nor an array.
 *
 * @example
 * ```ts
 * const { response } = await generateText({ model, messages, tools: definitionsOnly });
 * const assistant = response.messages[0];
 * const results: ToolResultMessage[] = [];
 * for await (const event of runTools(fromAISDKMessage(assistant), { tools })) {
 *   if (event.type === 'tool_result') results.push(event.message);
 * }
 * messages.push(...response.messages, ...toAISDKMessages(results));
 * ```
 */
export function fromAISDKMessage(message: AISDKAssistantMessageInput): ToolCall[] {
  if (!isObjectRecord(message)) throw new TypeError(`fromAISDKMessage: expected an assistant ModelMessage, received ${describeValue(message)}`);
  const content: unknown = message.content;
  if (typeof content === 'string') return [];
  if (!Array.isArray(content)) throw new TypeError(`fromAISDKMessage: expected \`content\` to be a string or an array of parts, received ${describeValue(content)}`);
  const calls: ToolCall[] = [];
  for (const part of content as unknown[]) {
    if (!isObjectRecord(part) || part.type !== 'tool-call' || part.providerExecuted === true) continue;
    const call: ToolCall = { id: asString(part.toolCallId), name: toolName(part.toolName) };
    if (part.input !== undefined) call.arguments = part.input;
    calls.push(call);
  }
  return calls;
}

/**
 * Builds the tool message that answers an assistant message's tool calls: one
 * `tool-result` part per result, in the order given (toolrun's results are in call order),
 * `toolCallId` and `toolName` copied from the result (F6).
 *
 * `output`: `{ type: 'error-text', value }` for an error result; `{ type: 'text', value }`
 * for text (blocks joined with `"\n"`; audio and resource blocks as the text
 * `contentBlockText` writes); `{ type: 'content', value: [text, file…] }` when the result
 * has images: ai 7's `{ type: 'file', data: { type: 'data', data }, mediaType }`, or
 * with `{ aiVersion: 6 }` ai 6's `{ type: 'image-data', data, mediaType }` (which ai 7 logs as
 * deprecated, `AISDK_DEP_TOOL_RESULT_IMAGE_DATA`). `details` is never sent.
 *
 * @throws TypeError for an `aiVersion` other than 6 or 7. (Unlike `toAnthropic`, the result
 *   messages are not checked at run time: a non-array `content` throws a `TypeError`.)
 *
 * @returns `[message]`, or `[]` when there are no results (an empty tool message is not valid).
 *
 * @example
 * ```ts
 * toAISDKMessages([{ role: 'tool', toolCallId: 'c1', toolName: 'get_time', content: [{ type: 'text', text: '12:00' }], isError: false }]);
 * // [{ role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'get_time', output: { type: 'text', value: '12:00' } }] }]
 * ```
 */
export function toAISDKMessages<V extends AISDKVersion = 7>(results: readonly ToolResultMessage[], options: ToAISDKMessagesOptions<V> = {}): AISDKToolModelMessage<V>[] {
  const version = aiSdkVersion('toAISDKMessages', options.aiVersion);
  if (results.length === 0) return [];
  return [
    {
      role: 'tool',
      content: results.map((result) => ({ type: 'tool-result', toolCallId: result.toolCallId, toolName: result.toolName, output: toolResultOutput(result, version) })),
    },
  ];
}

function toolResultOutput<V extends AISDKVersion>(result: ToolResultMessage, version: V): AISDKToolResultOutput<V> {
  if (result.isError) return { type: 'error-text', value: contentToText(result.content) };
  if (result.content.every((b) => b.type === 'text')) return { type: 'text', value: contentToText(result.content) };
  return {
    type: 'content',
    value: result.content.map(providerBlock).map((b) => (b.type === 'text' ? { type: 'text' as const, text: b.text } : aiSdkImagePart(b.data, b.mimeType, version))),
  };
}

// ---------------------------------------------------------------------------------------
// Approvals: a paused batch ↔ ai 7's tool-approval-request / tool-approval-response parts.

/**
 * ai 7's `tool-approval-request` part (the `ToolApprovalRequest` of its assistant content),
 * which is also the shape of the `tool-approval-request` chunk of its UI message stream.
 */
export interface AISDKToolApprovalRequestPart {
  type: 'tool-approval-request';
  /** toolrun's `approvalId`: random, the same across every pause of the call. */
  approvalId: string;
  toolCallId: string;
  /** Text for the person (toolrun's `reason`, from `beforeToolCall`); shown by `useChat` as the part's `approval.requestReason`. */
  reason?: string;
}

/** ai 7's `tool-approval-response` part (the `ToolApprovalResponse` of its tool content). */
export interface AISDKToolApprovalResponsePart {
  type: 'tool-approval-response';
  approvalId: string;
  approved: boolean;
  reason?: string;
}

/** What the approval converters read a pause's requests from: `ToolBatch.paused`, `AgentResult.paused`, or the requests themselves. */
export type PausedRequests = { readonly requests: readonly ToolApprovalRequest[] } | readonly ToolApprovalRequest[];

/** Longest `reason` a response may carry, in characters: it reaches the model in the denied call's result. */
const MAX_REASON_CHARS = 2_000;

/**
 * The AI SDK's approval-request parts for a paused batch or a paused `runAgent`: one
 * `tool-approval-request` part per pending request, in call order, with toolrun's
 * `approvalId` and the call's `toolCallId` (and the hook's `reason` when it gave one).
 *
 * Each part is two things in ai 7: an assistant `ModelMessage` content part (append the
 * parts to the assistant message that holds the calls' `tool-call` parts), and a UI message
 * stream chunk (`writer.write(part)` after the call's `tool-input-available` chunk), which
 * `useChat` turns into a tool part in state `approval-requested`. Answered with
 * `addToolApprovalResponse({ id: approvalId, approved, reason })`, it comes back as a
 * `tool-approval-response` part that {@link fromAISDKApprovalResponses} reads.
 *
 * @throws TypeError when `paused` holds no requests array.
 *
 * @example
 * ```ts
 * const batch = await drain(runTools(fromAISDKMessage(assistant), { tools }));
 * if (batch.paused) assistant.content.push(...toAISDKApprovalRequests(batch.paused));
 * ```
 */
export function toAISDKApprovalRequests(paused: PausedRequests): AISDKToolApprovalRequestPart[] {
  return requestsOf('toAISDKApprovalRequests', paused).map((request) => {
    const part: AISDKToolApprovalRequestPart = { type: 'tool-approval-request', approvalId: request.approvalId, toolCallId: request.toolCallId };
    if (request.reason !== undefined) part.reason = request.reason;
    return part;
  });
}

/**
 * Reads a person's answers, given as the AI SDK's `tool-approval-response` parts, into the
 * `approvals` that `runTools`' (or `runAgent`'s) `resume` takes, checked against the pause's
 * pending requests — the messages come from a client and are untrusted.
 *
 * `messages` is the conversation as `ModelMessage`s (what `convertToModelMessages` makes of
 * `useChat`'s UI messages). As the SDK reads them, only the last message counts, when it is
 * a `role: 'tool'` message: its `tool-approval-response` parts (provider-executed ones
 * skipped). A response whose call already has a result in that message (an answer given
 * before a resume that paused again, which the new pause no longer lists; its request part in
 * the history names the call) is skipped, as the SDK skips it — except beside ai's own
 * `execution-denied` result, which it writes next to every denial.
 *
 * Refused, with a {@link ResumeError} of code `approval` (nothing is resumed): a response
 * whose `approvalId` is not one of `paused`'s requests (and not settled as above); one whose
 * request part in the history names another `toolCallId` than the paused call's; two responses for one request;
 * a response without a string `approvalId` and a boolean `approved`; a `reason` that is not
 * a string or is longer than 2,000 characters. `runTools` checks the approvals again when it
 * resumes (contract H8).
 *
 * @returns One response per answered request, in call order; `[]` when the last message
 *   holds none (the batch then pauses again with the same requests).
 * @throws TypeError when `messages` is not an array or `paused` holds no requests array.
 *
 * @example
 * ```ts
 * const approvals = fromAISDKApprovalResponses(await convertToModelMessages(uiMessages), stored.paused);
 * const batch = await drain(runTools(stored.calls, { tools, resume: { state: stored.paused.state, approvals } }));
 * ```
 */
export function fromAISDKApprovalResponses(messages: readonly unknown[], paused: PausedRequests): ToolApprovalResponse[] {
  if (!Array.isArray(messages)) throw new TypeError(`fromAISDKApprovalResponses: expected the ModelMessages as an array, received ${describeValue(messages)}`);
  const requests = requestsOf('fromAISDKApprovalResponses', paused);
  const refuse = (message: string): never => {
    throw new ResumeError('approval', `fromAISDKApprovalResponses: ${message}`);
  };
  const last: unknown = messages.at(-1);
  if (!isObjectRecord(last) || last.role !== 'tool' || !Array.isArray(last.content)) return [];
  const byId = new Map(requests.map((request, order) => [request.approvalId, { request, order }]));
  // The request parts of the history, by approvalId (the last one wins, as in the SDK).
  const requestParts = new Map<string, Record<string, unknown>>();
  for (const message of messages as unknown[]) {
    if (!isObjectRecord(message) || message.role !== 'assistant' || !Array.isArray(message.content)) continue;
    for (const part of message.content as unknown[]) {
      if (isObjectRecord(part) && part.type === 'tool-approval-request' && typeof part.approvalId === 'string') requestParts.set(part.approvalId, part);
    }
  }
  const results = new Map<string, unknown>();
  for (const part of last.content as unknown[]) {
    if (isObjectRecord(part) && part.type === 'tool-result' && typeof part.toolCallId === 'string') results.set(part.toolCallId, part.output);
  }
  const answers = new Map<string, { order: number; response: ToolApprovalResponse }>();
  (last.content as unknown[]).forEach((part, i) => {
    if (!isObjectRecord(part) || part.type !== 'tool-approval-response' || part.providerExecuted === true) return;
    const where = `the last message's content[${i}]`;
    const { approvalId, approved, reason } = part;
    if (typeof approvalId !== 'string' || typeof approved !== 'boolean') refuse(`${where} must be { type: 'tool-approval-response', approvalId: string, approved: boolean, reason?: string }, received ${describeValue(part)}`);
    const id = approvalId as string;
    const asked = requestParts.get(id);
    // Settled in an earlier round (its call has a result here), as the SDK's collectToolApprovals skips it: an
    // answer given before a resume that paused again, which the new pause no longer lists. Skipping has no effect.
    const settled = (toolCallId: unknown): boolean => {
      const existing = typeof toolCallId === 'string' ? results.get(toolCallId) : undefined;
      return existing !== undefined && (approved === true || !isObjectRecord(existing) || existing.type !== 'execution-denied');
    };
    const pending = byId.get(id);
    if (pending === undefined) {
      if (asked !== undefined && settled(asked.toolCallId)) return;
      refuse(`${where} answers approvalId ${JSON.stringify(id.slice(0, 100))}, which no pending request of this pause has (pending: ${requests.map((r) => r.approvalId).join(', ')})`);
    }
    const { request, order } = pending!;
    if (asked !== undefined && asked.toolCallId !== request.toolCallId) {
      refuse(`${where} answers approvalId ${JSON.stringify(id)} for tool call ${describeValue(asked.toolCallId)}, but that request is for tool call ${JSON.stringify(request.toolCallId)} (${request.toolName})`);
    }
    if (settled(request.toolCallId)) return;
    if (answers.has(id)) refuse(`${where} answers approvalId ${JSON.stringify(id)} a second time`);
    if (reason !== undefined && typeof reason !== 'string') refuse(`${where} has a reason that is not a string: ${describeValue(reason)}`);
    if (typeof reason === 'string' && reason.length > MAX_REASON_CHARS) refuse(`${where} has a reason of ${reason.length} characters; at most ${MAX_REASON_CHARS} are accepted`);
    const response: ToolApprovalResponse = typeof reason === 'string' && reason !== '' ? { approvalId: id, approved: approved as boolean, reason } : { approvalId: id, approved: approved as boolean };
    answers.set(id, { order, response });
  });
  return [...answers.values()].sort((a, b) => a.order - b.order).map((a) => a.response);
}

function requestsOf(fn: string, paused: PausedRequests): readonly ToolApprovalRequest[] {
  const requests: unknown = Array.isArray(paused) ? paused : isObjectRecord(paused) ? paused.requests : undefined;
  if (!Array.isArray(requests)) throw new TypeError(`${fn}: expected a paused batch or agent ({ requests }) or its requests array, received ${describeValue(paused)}`);
  return requests as readonly ToolApprovalRequest[];
}

/** @internal The `aiVersion` option checked: 7 when absent; `where` names the caller in the error. */
export function aiSdkVersion<V extends AISDKVersion>(where: string, version: V | undefined): V {
  if (version === undefined) return 7 as V;
  if (version !== 6 && version !== 7) throw new TypeError(`${where}: options.aiVersion must be 6 or 7 (the ai package's major version), received ${describeValue(version)}`);
  return version;
}

/** @internal A base64 image as `ai` `version` wants it in tool-result `content` output. */
export function aiSdkImagePart<V extends AISDKVersion>(data: string, mediaType: string, version: V): AISDKImageOutputPart<V> {
  const part = version === 6 ? { type: 'image-data', data, mediaType } : { type: 'file', data: { type: 'data', data }, mediaType };
  return part as AISDKImageOutputPart<V>;
}
