/**
 * Anthropic Messages streaming → tool calls as each completes (contract S4, F1; case C16).
 *
 * Event flow of a streamed message (Anthropic "Streaming messages" docs; recorded in
 * `../shared/corpus/anthropic/openllmetry__anthropic_tools_streaming_legacy.json` and
 * `anthropic/vercel-ai__anthropic-tool-no-args.chunks.jsonl`):
 *
 * ```
 * message_start
 * content_block_start {index, content_block: {type: 'tool_use', id, name, input: {}}}
 * content_block_delta {index, delta: {type: 'input_json_delta', partial_json}}   × n
 * content_block_stop  {index}
 * … more blocks …
 * message_delta {delta: {stop_reason}}
 * message_stop
 * ```
 *
 * @module
 */
import type { ToolCall } from '../core/tool/tool.ts';
import { asString, toolCallId, toolName } from './shared.ts';
import type { ProviderStream } from './sse.ts';
import {
  appendArguments,
  checkStreamArguments,
  completeJson,
  driveToolCallStream,
  pendingCall,
  StreamAssembler,
  StreamBrokenError,
  type PendingCall,
  type ToolCallStreamEnd,
  type ToolCallStreamOptions,
} from './stream-calls.ts';
import { isObjectRecord } from '../core/values/guards.ts';

/** Stop reasons that mean the model finished its message. */
const FINISHED = new Set(['tool_use', 'end_turn', 'pause_turn']);

/**
 * Yields the tool calls of a streamed Anthropic assistant message, each as soon as its
 * arguments are complete, while the message is still streaming — hand it to `runTools`
 * and each call starts mid-message (contract S4).
 *
 * `stream` is what `@anthropic-ai/sdk` gives — `client.messages.stream(params)` or
 * `client.messages.create({ ...params, stream: true })` — or the raw SSE body (string or
 * `Uint8Array` chunks, e.g. a `fetch` body), or recorded `{ event, data }` pairs (see
 * {@link ProviderStream}).
 *
 * A `tool_use` block becomes `{ id, name, arguments }`, `arguments` being the parsed
 * object of its joined `input_json_delta.partial_json` fragments — equal to the `input`
 * of the non-streamed message — or `{}` when the fragments join to `""` (a no-argument
 * call, corpus "Format observations" 2). Other blocks (text, thinking, `server_tool_use`,
 * …) are not calls. When a call is yielded:
 * - at its `content_block_stop`, when the fragments parse as JSON;
 * - else (an empty or unparsable text) when, after its `content_block_stop`, the next
 *   content block starts, or at the message's end, because a `max_tokens` cut also ends
 *   with `content_block_stop`.
 *
 * Out-of-order events (the rule is in `stream-calls.ts`): blocks may
 * interleave — each call is assembled by its `index` and goes only once its own
 * `content_block_stop` arrived, never with `{}` because a later block started; deltas after a
 * block's stop are ignored. A second `content_block_start` at an index whose block is still
 * open: the open call keeps its text only if it is already complete JSON, else it is
 * yielded `incomplete`; the new call is yielded `incomplete` either way (the deltas and stop
 * that follow cannot be told apart), never run. A block never closed when the model says it
 * finished runs only if its text is complete JSON, else it is `incomplete`. A `tool_use`
 * block after the stop event is yielded `incomplete` at once: every call seen gets a result
 * (O1). A `name` that is not a string becomes `''` (answered "no tool name", never run).
 *
 * The message's end:
 * - `message_delta` with `stop_reason` `tool_use`, `end_turn` or `pause_turn` (or a
 *   `message_stop` without a reason): the rest are yielded as they are — unparsable text
 *   raw, so `runTools` tells the model it is not valid JSON — except a block never closed
 *   whose text is not complete JSON, which is `incomplete` (see above);
 * - any other `stop_reason` (`max_tokens`, `model_context_window_exceeded`, `refusal`,
 *   `stop_sequence`): a call whose text parses is complete and runs; the others are
 *   yielded with `incomplete` naming the reason (e.g. `the output limit (stop_reason
 *   "max_tokens")`), which `runTools` answers with the cut-off error, never running them;
 * - a break — the stream throws, an `error` event (overloaded…), or the stream ends
 *   without `message_delta`/`message_stop`: likewise, flagged `the stream breaking (…)` or
 *   `the stream ending early, …`; then the error is thrown (the source's own, or a
 *   {@link StreamBrokenError}) — `runTools` answers every call it received first, then
 *   rethrows it.
 *
 * After the stop event the stream is read to its end (so the SDK's `finalMessage()` still
 * resolves), and the generator returns the {@link ToolCallStreamEnd} that `onMessageEnd`
 * received. Partial JSON is never repaired (case C16).
 *
 * @throws TypeError at once when `stream` is not iterable or `options` is malformed.
 *
 * @example
 * ```ts
 * const stream = anthropic.messages.stream({ model, max_tokens, messages, tools: definitions }, { signal });
 * let end: ToolCallStreamEnd | undefined;
 * const results: ToolResultMessage[] = [];
 * for await (const event of runTools(fromAnthropicStream(stream, { onMessageEnd: (e) => (end = e) }), { tools, signal })) {
 *   if (event.type === 'tool_result') results.push(event.message);
 * }
 * messages.push({ role: 'assistant', content: (await stream.finalMessage()).content }, toAnthropic(results));
 * ```
 */
export function fromAnthropicStream(stream: ProviderStream, options: ToolCallStreamOptions = {}): AsyncGenerator<ToolCall, ToolCallStreamEnd, undefined> {
  checkStreamArguments('fromAnthropicStream', stream, options);
  return driveToolCallStream(stream, new AnthropicAssembler(), options);
}

class AnthropicAssembler extends StreamAssembler {
  readonly provider = 'Anthropic';
  readonly stopEvent = 'message_delta with a stop_reason, or message_stop';
  protected readonly objectArguments = true;
  /** The `tool_use` blocks by content block index: the latest block started at each index. */
  readonly #blocks = new Map<number, PendingCall>();

  push(event: unknown): void {
    if (!isObjectRecord(event)) return;
    switch (event.type) {
      case 'content_block_start': {
        // A new block marks the latest tool call `later` (the ones before it were marked when
        // it started): once closed, that call may go even with an empty or unparsable text
        // (isReady). A call whose block is still open is not done: it waits for its own stop.
        const previous = this.calls.at(-1);
        if (previous !== undefined) previous.later = true;
        const index = typeof event.index === 'number' ? event.index : undefined;
        // A second start at an index whose block is still open: the deltas and the stop that
        // follow cannot be told apart, so the open call is kept only if its JSON was already
        // complete, and the new one is never run.
        const open = index === undefined ? undefined : this.#blocks.get(index);
        const duplicate = open !== undefined && !open.closed && !open.sealed;
        const reason = `the stream starting a second content block at index ${index} while block ${index} was still open`;
        if (duplicate) this.orphan(open, reason);
        const block = event.content_block;
        if (!isObjectRecord(block) || block.type !== 'tool_use') {
          if (index !== undefined) this.#blocks.delete(index);
          return;
        }
        const call = this.add(pendingCall(toolCallId(block.id), toolName(block.name), '', block.input));
        if (duplicate) this.breakCall(call, reason);
        if (index !== undefined) this.#blocks.set(index, call);
        return;
      }
      case 'content_block_delta': {
        const call = this.#block(event.index);
        const delta = event.delta;
        if (call !== undefined && isObjectRecord(delta) && delta.type === 'input_json_delta' && typeof delta.partial_json === 'string') {
          appendArguments(call, delta.partial_json); // ignored once the call is sealed (closed, yielded or broken)
        }
        return;
      }
      case 'content_block_stop': {
        const call = this.#block(event.index);
        if (call !== undefined && !call.sealed) {
          call.closed = true;
          call.sealed = true;
        }
        return;
      }
      case 'message_delta': {
        const reason = isObjectRecord(event.delta) ? event.delta.stop_reason : undefined;
        if (typeof reason === 'string') this.#end(reason);
        return;
      }
      case 'message_stop':
        if (this.ending === undefined) this.#end(null);
        return;
      case 'error': {
        const error = isObjectRecord(event.error) ? event.error : {};
        throw new StreamBrokenError(`an error event: ${asString(error.type) || 'error'}: ${asString(error.message) || '(no message)'}`, event);
      }
      default:
        return; // message_start, ping, text and thinking deltas: nothing about tool calls
    }
  }

  /**
   * Closed by its `content_block_stop`, and either complete JSON or followed by another
   * block (an empty text is then a no-argument call; an unparsable one is passed raw). A
   * block that is still open never goes, even when later blocks have started (interleaved
   * blocks): its fragments may still be coming.
   */
  protected isReady(call: PendingCall): boolean {
    return call.closed && (call.later || completeJson(call) !== undefined);
  }

  protected completeOnCut(call: PendingCall): boolean {
    return completeJson(call, true) !== undefined;
  }

  /** The model finished, but this block was never closed: its text is used only when it is one complete JSON value. */
  protected unfinishedOnEnd(call: PendingCall): string | undefined {
    if (call.closed || completeJson(call, true) !== undefined) return undefined;
    return 'the stream ending the message before this tool_use block was closed (no content_block_stop)';
  }

  #block(index: unknown): PendingCall | undefined {
    return typeof index === 'number' ? this.#blocks.get(index) : undefined;
  }

  #end(reason: string | null): void {
    this.stopReason = reason;
    this.ending = { stopReason: reason, cut: reason === null || FINISHED.has(reason) ? undefined : cutReason(reason) };
  }
}

function cutReason(reason: string): string {
  if (reason === 'max_tokens') return 'the output limit (stop_reason "max_tokens")';
  if (reason === 'model_context_window_exceeded') return `the model's context window limit (stop_reason "model_context_window_exceeded")`;
  return `the message ending early (stop_reason "${reason}")`;
}
