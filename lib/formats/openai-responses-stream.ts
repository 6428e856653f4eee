/**
 * OpenAI Responses API streaming → tool calls as each completes (contract S4, F3; case
 * C16).
 *
 * Event flow for function calls (OpenAI "Streaming API responses" docs; the `openai`
 * SDK's `ResponseStreamEvent` types — the corpus has no streamed Responses recording):
 *
 * ```
 * response.created / response.in_progress
 * response.output_item.added {output_index, item: {type: 'function_call', id: 'fc_…', call_id: 'call_…', name, arguments: ''}}
 * response.function_call_arguments.delta {item_id, output_index, delta}          × n
 * response.function_call_arguments.done  {item_id, output_index, arguments}
 * response.output_item.done {output_index, item: {…, arguments, status: 'completed'}}
 * … more items …
 * response.completed {response}    or  response.incomplete {response: {incomplete_details: {reason}}}
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
  driveToolCallStream,
  pendingCall,
  replaceArguments,
  StreamAssembler,
  StreamBrokenError,
  type PendingCall,
  type ToolCallStreamEnd,
  type ToolCallStreamOptions,
} from './stream-calls.ts';
import { isObjectRecord } from '../core/values/guards.ts';

/**
 * Yields the function calls of a streamed Responses API response, each as soon as its
 * item is done, while the response is still streaming — hand it to `runTools` and each
 * call starts mid-response (contract S4).
 *
 * `stream` is what the `openai` SDK gives — `client.responses.create({ ...params, stream:
 * true })` or `client.responses.stream(params)` — or the raw SSE body, or recorded
 * `{ event, data }` pairs (see {@link ProviderStream}).
 *
 * A `function_call` output item becomes `{ id: call_id, name, arguments }` — keyed by
 * `call_id`, never the item id `fc_…` (F3) — with `arguments` the raw JSON text (the
 * `response.function_call_arguments.delta` fragments joined, replaced by the final text of
 * `…arguments.done` / `output_item.done` when those come), or `{}` when empty, and
 * `providerItem` the done item itself (the item `fromOpenAIResponses` keeps). Other items
 * (messages, reasoning, built-in tool calls) are not calls. A call is yielded at its
 * `response.output_item.done` when the item's `status` is `completed` (or absent), in
 * output order.
 *
 * Out-of-order events (the rule is in `stream-calls.ts`): an
 * `output_item.done` before (or without) its `output_item.added` is the whole call and runs
 * with the done item's arguments; the late `added` is a repeat. Deltas and
 * `…arguments.done` after the item is done are ignored; so is a second `done`. At
 * `response.completed`, an item never done and absent from the final `output` is yielded
 * `incomplete` (its deltas may be partial), never run with them or with `{}`. A call that
 * starts after the end event is yielded `incomplete` at once (O1). A `name` that is not a
 * string becomes `''` (answered "no tool name", never run).
 *
 * The response's end: `response.completed`: any call not yet done is taken from the final
 * `response.output`, else yielded `incomplete` (see above). `response.incomplete` (`max_output_tokens`,
 * `content_filter`): calls whose item was done and completed run; the others — and an
 * item done with `status: "incomplete"` — are yielded with `incomplete` naming the reason
 * (`the output limit (response incomplete: "max_output_tokens")`), never run — not with
 * `{}`, as one runner did (corpus SOURCES.md, section C). A break — the stream throws, an
 * `error` or `response.failed` event, or it ends without `response.completed` /
 * `response.incomplete`: likewise, then the error is thrown (the source's own, or a
 * {@link StreamBrokenError}); `runTools` answers every call it received first, then
 * rethrows it.
 *
 * After the end event the stream is read to its end, and the generator returns the
 * {@link ToolCallStreamEnd} that `onMessageEnd` received; its `stopReason` is
 * `"completed"`, the incomplete reason, or `"failed"`.
 *
 * @throws TypeError at once when `stream` is not iterable or `options` is malformed.
 *
 * @example
 * ```ts
 * const stream = await openai.responses.create({ model, input, tools: definitions, stream: true }, { signal });
 * const results: ToolResultMessage[] = [];
 * for await (const event of runTools(fromOpenAIResponsesStream(stream), { tools, signal })) {
 *   if (event.type === 'tool_result') results.push(event.message);
 * }
 * input.push(...toOpenAIResponses(results));
 * ```
 */
export function fromOpenAIResponsesStream(
  stream: ProviderStream,
  options: ToolCallStreamOptions = {},
): AsyncGenerator<ToolCall, ToolCallStreamEnd, undefined> {
  checkStreamArguments('fromOpenAIResponsesStream', stream, options);
  return driveToolCallStream(stream, new OpenAIResponsesAssembler(), options);
}

class OpenAIResponsesAssembler extends StreamAssembler {
  readonly provider = 'OpenAI Responses';
  readonly stopEvent = 'response.completed or response.incomplete';
  protected readonly objectArguments = false;
  /** Calls by item id (`fc_…`), and by output index for events that name only that. */
  readonly #byItem = new Map<string, PendingCall>();
  readonly #byOutput = new Map<number, PendingCall>();

  push(event: unknown): void {
    if (!isObjectRecord(event)) return;
    switch (event.type) {
      case 'response.output_item.added': {
        const item = event.item;
        if (!isObjectRecord(item) || item.type !== 'function_call') return;
        // A second announcement of an item already seen (or already done) adds nothing.
        if (typeof item.id === 'string' && this.#byItem.has(item.id)) return;
        this.#announce(item, event.output_index);
        return;
      }
      case 'response.function_call_arguments.delta': {
        const call = this.#find(event);
        if (call !== undefined && typeof event.delta === 'string') appendArguments(call, event.delta); // ignored once the item is done
        return;
      }
      case 'response.function_call_arguments.done': {
        const call = this.#find(event);
        if (call !== undefined && typeof event.arguments === 'string') replaceArguments(call, event.arguments); // ignored once done
        return;
      }
      case 'response.output_item.done': {
        const item = event.item;
        if (!isObjectRecord(item) || item.type !== 'function_call') return;
        // Done before (or without) its `added`: the done item carries the whole call, so it is
        // taken from it — the later `added` is then a repeat and ignored.
        const call = (typeof item.id === 'string' ? this.#byItem.get(item.id) : this.#find(event)) ?? this.#announce(item, event.output_index);
        this.#settle(call, item);
        return;
      }
      case 'response.completed':
        this.#fromFinalOutput(event.response);
        this.#end('completed', undefined);
        return;
      case 'response.incomplete': {
        const response = isObjectRecord(event.response) ? event.response : {};
        const details = isObjectRecord(response.incomplete_details) ? response.incomplete_details : {};
        const reason = typeof details.reason === 'string' ? details.reason : 'incomplete';
        this.#end(reason, cutReason(reason));
        return;
      }
      case 'response.failed': {
        this.stopReason = 'failed';
        const response = isObjectRecord(event.response) ? event.response : {};
        const error = isObjectRecord(response.error) ? response.error : {};
        throw new StreamBrokenError(`response.failed: ${asString(error.code) || 'error'}: ${asString(error.message) || '(no message)'}`, event);
      }
      case 'error':
        throw new StreamBrokenError(`an error event: ${asString(event.code) || 'error'}: ${asString(event.message) || '(no message)'}`, event);
      default:
        return;
    }
  }

  protected isReady(call: PendingCall): boolean {
    return call.closed && !call.cut;
  }

  protected completeOnCut(call: PendingCall): boolean {
    return call.closed && !call.cut;
  }

  /** The response completed, but this item was never done (and not in the final output), or was done `incomplete`. */
  protected unfinishedOnEnd(call: PendingCall): string | undefined {
    if (call.cut) return 'the response marking this function_call item "incomplete"';
    if (!call.closed) return 'the stream completing the response without this function_call item being done (no response.output_item.done)';
    return undefined;
  }

  /** A new call for a `function_call` item, keyed by its item id and output index. */
  #announce(item: Record<string, unknown>, outputIndex: unknown): PendingCall {
    const call = this.add(pendingCall(toolCallId(item.call_id), toolName(item.name), typeof item.arguments === 'string' ? item.arguments : ''));
    if (typeof item.id === 'string') this.#byItem.set(item.id, call);
    if (typeof outputIndex === 'number') this.#byOutput.set(outputIndex, call);
    return call;
  }

  #find(event: Record<string, unknown>): PendingCall | undefined {
    if (typeof event.item_id === 'string') {
      const byItem = this.#byItem.get(event.item_id);
      if (byItem !== undefined) return byItem;
    }
    return typeof event.output_index === 'number' ? this.#byOutput.get(event.output_index) : undefined;
  }

  /** The item is done: its final fields win over what the deltas assembled. A second `done` changes nothing. */
  #settle(call: PendingCall, item: Record<string, unknown>): void {
    if (call.sealed) return;
    if (typeof item.arguments === 'string') replaceArguments(call, item.arguments);
    if (typeof item.call_id === 'string' && item.call_id !== '') call.id = item.call_id;
    if (typeof item.name === 'string' && item.name !== '') call.name = item.name;
    call.closed = true;
    call.sealed = true;
    call.cut = item.status === 'incomplete';
    // The whole item, as a non-streamed response gives it (fromOpenAIResponses): the call's providerItem.
    call.providerItem = item;
  }

  /** `response.completed` carries every item: a call whose `output_item.done` was not seen is settled from it (and added, if never announced). */
  #fromFinalOutput(response: unknown): void {
    if (!isObjectRecord(response) || !Array.isArray(response.output)) return;
    for (const item of response.output as unknown[]) {
      if (!isObjectRecord(item) || item.type !== 'function_call' || typeof item.id !== 'string') continue;
      // Never announced by output_item.added (a proxy that forwards only the final response).
      const call = this.#byItem.get(item.id) ?? this.#announce(item, undefined);
      this.#settle(call, item);
    }
  }

  #end(reason: string, cut: string | undefined): void {
    this.stopReason = reason;
    this.ending = { stopReason: reason, cut };
  }
}

function cutReason(reason: string): string {
  if (reason === 'max_output_tokens') return 'the output limit (response incomplete: "max_output_tokens")';
  if (reason === 'content_filter') return 'the content filter (response incomplete: "content_filter")';
  return `the response ending incomplete ("${reason}")`;
}
