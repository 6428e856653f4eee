/**
 * A toolrun run as the AI SDK's UI message stream (contract W5): what `useChat` renders as
 * `tool-*` parts, live — the call's input, each progress as a preliminary output, then the
 * output, the error or the denial, and approval requests (ai 7's chunk types, written
 * structurally: this file loads no `ai` code; `ai` stays an optional peer).
 *
 * @module
 */
import type { ToolApprovalResponse } from '../core/approval/approval.ts';
import type { ToolEvent } from '../core/run/events.ts';
import { isObjectRecord, thrownText } from '../core/values/guards.ts';
import type { ToolResultMessage } from '../core/tool/tool.ts';
import { describeValue } from '../core/values/guards.ts';
import type { PausedRequests } from '../formats/ai-sdk-messages.ts';
import { contentToText } from '../formats/shared.ts';

/**
 * The chunks of ai 7's `UIMessageChunk` union that {@link toUIMessageStream} writes (each
 * assignable to `UIMessageChunk`, checked by a type test).
 */
export type AISDKUIMessageChunk =
  | { type: 'tool-input-available'; toolCallId: string; toolName: string; input: unknown }
  | { type: 'tool-output-available'; toolCallId: string; output: unknown; preliminary?: boolean }
  | { type: 'tool-output-error'; toolCallId: string; errorText: string }
  | { type: 'tool-output-denied'; toolCallId: string }
  | { type: 'tool-approval-request'; approvalId: string; toolCallId: string; reason?: string }
  | { type: 'start-step' }
  | { type: 'finish-step' }
  | { type: 'text-start'; id: string }
  | { type: 'text-delta'; id: string; delta: string }
  | { type: 'text-end'; id: string }
  | { type: 'error'; errorText: string };

/** The result of a call as {@link ToUIMessageStreamOptions.toOutput} receives it. */
export type UIToolResult = Pick<ToolResultMessage, 'toolCallId' | 'toolName' | 'content' | 'details' | 'isError'>;

/** Options of {@link toUIMessageStream}. */
export interface ToUIMessageStreamOptions<R = unknown> {
  /**
   * Set when the run resumes a pause whose requests the client got from an earlier stream:
   * the calls' `tool-input-available` chunks are not written again (the client's message
   * has the parts, in state `approval-responded`), a call whose request was answered
   * `approved: false` ends with `tool-output-denied`, and a resumed `runAgent`'s first
   * turn's text is not written again.
   */
  resume?: { paused: PausedRequests; approvals: readonly ToolApprovalResponse[] };
  /**
   * The `output` of a call that ended well (the part's `output`).
   * @default the result's text (its text blocks joined), as `toAISDKMessages` sends it
   */
  toOutput?: (result: UIToolResult) => unknown;
  /**
   * The `output` of a preliminary `tool-output-available` chunk, from one progress value.
   * @default the progress value itself
   */
  toPreliminaryOutput?: (progress: unknown, toolName: string) => unknown;
  /**
   * The `errorText` of the `error` chunk written when a `runAgent` run ends with reason
   * `error` (the model failed). The browser sees it: the default hides the server's error.
   * @default () => 'An error occurred.' (what `ai`'s own streams send)
   */
  onError?: (error: unknown) => string;
  /**
   * Called with the run's final value (the `ToolBatch`, the `AgentResult`) when it finished,
   * before the stream closes: the place to keep a pause (`batch.paused`) for the next request.
   * Not called when the stream was cancelled. Must not throw; if it does, the stream errors.
   */
  onFinish?: (value: R) => void;
}

/**
 * The UI message stream chunks for a `runTools` batch or a `runAgent` run, pulled from the
 * run as the client reads: write it with `createUIMessageStreamResponse({ stream })`, or
 * `writer.merge(toUIMessageStream(run))` inside `createUIMessageStream`'s `execute`.
 *
 * Per call: `tool-input-available` (its `tool_execution_start`), a preliminary
 * `tool-output-available` per progress (`useChat` shows the part in state
 * `output-available` with `preliminary: true`), then at its `tool_execution_end`
 * `tool-output-available`, `tool-output-error` (its result's text as `errorText`) or
 * `tool-output-denied` (a person said no: see `options.resume`). A deferred call's
 * `tool_approval_request` becomes `tool-approval-request` (state `approval-requested`),
 * answered in the browser with `addToolApprovalResponse`; read the answers back with
 * `fromAISDKApprovalResponses(modelMessages, paused)` and resume with
 * `toUIMessageStream(runTools(calls, { tools, resume }), { resume: { paused, approvals } })`.
 * A `runAgent` run also gives each turn a step (`start-step`, `finish-step`) and the
 * assistant's text (`text-start`, `text-delta`, `text-end`).
 *
 * Cancelling the stream (the client went away) leaves the run (`return()`, contract A5):
 * its tools' signals abort.
 *
 * @throws TypeError when `run` is not an async iterable or iterator.
 *
 * @example
 * ```ts
 * import { createUIMessageStreamResponse } from 'ai';
 * export const POST = async (request: Request) =>
 *   createUIMessageStreamResponse({ stream: toUIMessageStream(runTools(calls, { tools, signal: request.signal })) });
 * ```
 */
export function toUIMessageStream<R = unknown>(run: AsyncIterable<unknown> | AsyncIterator<unknown, R>, options: ToUIMessageStreamOptions<R> = {}): ReadableStream<AISDKUIMessageChunk> {
  const iterator = iteratorOf(run) as AsyncIterator<unknown, R>;
  const toOutput = options.toOutput ?? ((result: UIToolResult) => contentToText(result.content));
  const toPreliminary = options.toPreliminaryOutput ?? ((progress: unknown) => progress);
  const onError = options.onError ?? (() => 'An error occurred.');
  const denied = new Set<string>();
  if (options.resume !== undefined) {
    const requests = Array.isArray(options.resume.paused) ? options.resume.paused : (options.resume.paused as { requests: readonly { approvalId: string; toolCallId: string }[] }).requests;
    const no = new Set(options.resume.approvals.filter((a) => a.approved === false).map((a) => a.approvalId));
    for (const request of requests) if (no.has(request.approvalId)) denied.add(request.toolCallId);
  }
  const resumed = options.resume !== undefined;
  let firstTurn = true;
  let textId: string | undefined;
  let textSent = false;
  return new ReadableStream<AISDKUIMessageChunk>(
    {
      async pull(stream) {
        // Until a chunk is written: a pull that enqueues nothing is not called again (WHATWG streams).
        for (;;) {
          const step = await iterator.next();
          if (step.done === true) {
            options.onFinish?.(step.value);
            return void stream.close();
          }
          const chunks = chunksOf(step.value);
          for (const chunk of chunks) stream.enqueue(chunk);
          if (chunks.length > 0) return;
        }
      },
      async cancel() {
        await iterator.return?.().catch(() => {});
      },
    },
    { highWaterMark: 1 },
  );

  function chunksOf(value: unknown): AISDKUIMessageChunk[] {
    if (!isObjectRecord(value)) return [];
    const event = value as ToolEvent | AgentLikeEvent;
    switch (event.type) {
      case 'tool_execution_start':
        return resumed ? [] : [{ type: 'tool-input-available', toolCallId: event.toolCallId, toolName: event.toolName, input: event.args ?? {} }];
      case 'tool_execution_update':
        return [{ type: 'tool-output-available', toolCallId: event.toolCallId, output: toPreliminary(event.progress, event.toolName), preliminary: true }];
      case 'tool_approval_request': {
        const chunk: Extract<AISDKUIMessageChunk, { type: 'tool-approval-request' }> = { type: 'tool-approval-request', approvalId: event.request.approvalId, toolCallId: event.toolCallId };
        if (event.request.reason !== undefined) chunk.reason = event.request.reason;
        return [chunk];
      }
      case 'tool_execution_end': {
        if (event.outcome === 'rejected' && denied.has(event.toolCallId)) return [{ type: 'tool-output-denied', toolCallId: event.toolCallId }];
        if (event.isError) return [{ type: 'tool-output-error', toolCallId: event.toolCallId, errorText: contentToText(event.result.content) }];
        const result: UIToolResult = { toolCallId: event.toolCallId, toolName: event.toolName, content: event.result.content, isError: false };
        if (event.result.details !== undefined) result.details = event.result.details;
        return [{ type: 'tool-output-available', toolCallId: event.toolCallId, output: toOutput(result) }];
      }
      case 'turn_start':
        textId = `text-${event.turn}`;
        textSent = false;
        return [{ type: 'start-step' }];
      case 'message_update':
        if (resumed && firstTurn) return [];
        return textChunks(event.text);
      case 'message': {
        const skip = resumed && firstTurn;
        if (skip) return [];
        const out: AISDKUIMessageChunk[] = [];
        if (!textSent) {
          const text = event.message.content.filter((b) => b.type === 'text').map((b) => b.text ?? '').join('\n');
          if (text !== '') out.push(...textChunks(text));
        }
        if (textSent && textId !== undefined) out.push({ type: 'text-end', id: textId });
        return out;
      }
      case 'turn_end':
        firstTurn = false;
        return [{ type: 'finish-step' }];
      case 'agent_end':
        return event.reason === 'error' ? [{ type: 'error', errorText: safeText(onError, event.error) }] : [];
      default:
        return [];
    }
  }

  function textChunks(text: string): AISDKUIMessageChunk[] {
    const id = (textId ??= 'text');
    const out: AISDKUIMessageChunk[] = [];
    if (!textSent) out.push({ type: 'text-start', id });
    textSent = true;
    out.push({ type: 'text-delta', id, delta: text });
    return out;
  }
}

/** The agent loop's events this bridge reads (typed here by shape: the adapters sit below the loop, docs/architecture.md). */
type AgentLikeEvent =
  | { type: 'turn_start'; turn: number }
  | { type: 'message_update'; turn: number; text: string }
  | { type: 'message'; turn: number; message: { content: readonly { type: string; text?: string }[] } }
  | { type: 'turn_end'; turn: number }
  | { type: 'agent_end'; reason: string; error?: unknown };

function safeText(onError: (error: unknown) => string, error: unknown): string {
  try {
    const text = onError(error);
    return typeof text === 'string' ? text : thrownText(text);
  } catch (thrown) {
    return thrownText(thrown);
  }
}

function iteratorOf(run: AsyncIterable<unknown> | AsyncIterator<unknown>): AsyncIterator<unknown> {
  if (isObjectRecord(run) && typeof (run as AsyncIterator<unknown>).next === 'function') return run as AsyncIterator<unknown>;
  if (run !== null && typeof run === 'object' && typeof (run as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function') return (run as AsyncIterable<unknown>)[Symbol.asyncIterator]();
  throw new TypeError(`toUIMessageStream: expected a run (runTools or runAgent: an async iterable of events), received ${describeValue(run)}`);
}
