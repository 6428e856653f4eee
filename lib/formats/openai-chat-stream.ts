/**
 * OpenAI Chat Completions streaming → tool calls as each completes (contract S4, F2;
 * case C16). Also for the OpenAI-compatible providers recorded in
 * `../shared/corpus/openai-chat/` (Writer, llama-stack).
 *
 * Chunk flow (recorded in `openai-chat/openllmetry__openai_streaming_parallel.json`,
 * `…writer_streaming_seven_tool_calls.json`, `llama-stack__function_call_ordering_2.json`):
 *
 * ```
 * {choices: [{delta: {role: 'assistant'}}]}
 * {choices: [{delta: {tool_calls: [{index: 0, id, type: 'function', function: {name, arguments: ''}}]}}]}
 * {choices: [{delta: {tool_calls: [{index: 0, function: {arguments: '{"lo'}}]}}]}          × n
 * {choices: [{delta: {tool_calls: [{index: 1, id, …}]}}]}                                   (next call)
 * {choices: [{delta: {}, finish_reason: 'tool_calls'}]}
 * {choices: [], usage}                                                                      (optional)
 * [DONE]
 * ```
 *
 * @module
 */
import type { ToolCall } from '../core/tool/tool.ts';
import { asString, toolCallId } from './shared.ts';
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

/** Finish reasons that mean the model finished its message. */
const FINISHED = new Set(['tool_calls', 'stop', 'function_call']);

/**
 * Yields the tool calls of a streamed Chat Completions message, each as soon as its
 * arguments are complete, while the message is still streaming — hand it to `runTools`
 * and each call starts mid-message (contract S4).
 *
 * `stream` is what the `openai` SDK gives — `client.chat.completions.create({ ...params,
 * stream: true })` or `client.chat.completions.stream(params)` — or the raw SSE body, or
 * recorded `{ data }` events (see {@link ProviderStream}). Only the first choice
 * (`index: 0`) is read.
 *
 * Calls are assembled by `delta.tool_calls[].index`: the first delta of an index brings
 * `id` and `function.name`; later ones bring `function.arguments` fragments (`null`s, as
 * llama-stack and Writer send them, are skipped). `arguments` is the joined raw text, as
 * in the non-streamed `tool_calls` (so `runTools` reports invalid JSON in its own words),
 * or `{}` when nothing was sent. A call is yielded:
 * - when a later index has started **and** its text parses as JSON — so when indices
 *   interleave (allowed by the format, not seen in any recording), a call that is not yet
 *   complete waits, and calls are still yielded in call order;
 * - else at the choice's `finish_reason`.
 *
 * Out-of-order chunks (the rule is in `stream-calls.ts`): an index
 * reused with a new `id` starts a new call — never merged into the first. The earlier call
 * keeps its text if it is complete JSON (servers that send each call whole at index 0);
 * else both are yielded `incomplete`, never run. Fragments for a call already yielded, and a
 * call that starts after `finish_reason`, are not added to any running call: the late call
 * is yielded `incomplete` at once (O1). The message ends at `finish_reason`: a call with no
 * argument text by then is a no-argument call (`{}`). A `function.name` that is not a
 * string leaves the name `''` (answered "no tool name", never run).
 *
 * The message's end: `finish_reason` `tool_calls`, `stop` or `function_call`: the rest are
 * yielded as they are. `length` (the output limit), `content_filter` or another reason: a
 * call whose text parses runs, the others are yielded with `incomplete` naming the reason
 * (`the output limit (finish_reason "length")`), never run. A break — the stream throws, a
 * chunk carries `error`, or it ends without a `finish_reason`: likewise, then the error is
 * thrown (the source's own, or a {@link StreamBrokenError}); `runTools` answers every call
 * it received first, then rethrows it.
 *
 * After `finish_reason` the stream is read to its end (a usage chunk may follow), and the
 * generator returns the {@link ToolCallStreamEnd} that `onMessageEnd` received. Partial
 * JSON is never repaired (case C16).
 *
 * @throws TypeError at once when `stream` is not iterable or `options` is malformed.
 *
 * @example
 * ```ts
 * const stream = await openai.chat.completions.create({ model, messages, tools: definitions, stream: true }, { signal });
 * const results: ToolResultMessage[] = [];
 * for await (const event of runTools(fromOpenAIChatStream(stream), { tools, signal })) {
 *   if (event.type === 'tool_result') results.push(event.message);
 * }
 * ```
 */
export function fromOpenAIChatStream(stream: ProviderStream, options: ToolCallStreamOptions = {}): AsyncGenerator<ToolCall, ToolCallStreamEnd, undefined> {
  checkStreamArguments('fromOpenAIChatStream', stream, options);
  return driveToolCallStream(stream, new OpenAIChatAssembler(), options);
}

class OpenAIChatAssembler extends StreamAssembler {
  readonly provider = 'OpenAI Chat Completions';
  readonly stopEvent = 'a choice with finish_reason';
  protected readonly objectArguments = false;
  /** Calls by `tool_calls[].index`. */
  readonly #byIndex = new Map<number, PendingCall>();

  push(chunk: unknown): void {
    if (!isObjectRecord(chunk)) return;
    if (isObjectRecord(chunk.error) && !Array.isArray(chunk.choices)) {
      throw new StreamBrokenError(`an error chunk: ${asString(chunk.error.message) || JSON.stringify(chunk.error)}`, chunk);
    }
    if (!Array.isArray(chunk.choices)) return;
    const choice: unknown = (chunk.choices as unknown[]).find((c) => isObjectRecord(c) && (c.index === 0 || c.index === undefined));
    if (!isObjectRecord(choice)) return; // a usage chunk (`choices: []`), or another choice
    const delta = choice.delta;
    if (isObjectRecord(delta) && Array.isArray(delta.tool_calls)) {
      for (const part of delta.tool_calls as unknown[]) if (isObjectRecord(part)) this.#part(part);
    }
    const finish = choice.finish_reason;
    if (typeof finish === 'string') {
      this.stopReason = finish;
      this.ending = { stopReason: finish, cut: FINISHED.has(finish) ? undefined : cutReason(finish) };
    }
  }

  #part(part: Record<string, unknown>): void {
    const index = typeof part.index === 'number' ? part.index : this.#indexWithoutOne(part);
    let call = this.#byIndex.get(index);
    const id = toolCallId(part.id) || undefined; // a number is its text; null, '' and the rest: no id
    if (call !== undefined && id !== undefined && call.id !== '' && id !== call.id) {
      // The index is reused with a new id: a new call. Some providers send every call at
      // index 0, each whole in one chunk; then the earlier call is complete JSON and is kept.
      // If it is not, its remaining fragments and the new call's cannot be told apart: both
      // are answered incomplete, never run.
      const reason = `the stream reusing index ${index} for a new tool call (id ${JSON.stringify(id)}) before call ${JSON.stringify(call.id)} was complete`;
      const kept = this.orphan(call, reason);
      call = this.#start(index);
      if (!kept) this.breakCall(call, reason);
    }
    call ??= this.#start(index);
    if (call.id === '' && id !== undefined) call.id = id;
    const fn = part.function;
    if (isObjectRecord(fn)) {
      // A name that is not a string stays '' (no tool has that name): never coerced.
      if (call.name === '' && typeof fn.name === 'string') call.name = fn.name;
      if (typeof fn.arguments === 'string') appendArguments(call, fn.arguments); // ignored once sealed
    }
  }

  /** A new call at `index`: the model has moved past every call before it (or, interleaving, not yet: the JSON check in isReady decides). */
  #start(index: number): PendingCall {
    // The calls before the last were marked already.
    const previous = this.calls.at(-1);
    if (previous !== undefined) previous.later = true;
    const call = this.add(pendingCall('', ''));
    this.#byIndex.set(index, call);
    return call;
  }

  /** A provider that omits `index`: a new non-empty `id` starts a new call, anything else continues the last one. */
  #indexWithoutOne(part: Record<string, unknown>): number {
    const last = this.calls.at(-1);
    const lastIndex = this.#byIndex.size - 1;
    if (last === undefined) return 0;
    if (typeof part.id === 'string' && part.id !== '' && part.id !== last.id) return lastIndex + 1;
    return lastIndex;
  }

  /**
   * A later call has started and this call's text is one complete JSON value. (Text that
   * is not complete JSON waits for the finish: it is then passed raw, and `runTools` says
   * it is not valid JSON.)
   */
  protected isReady(call: PendingCall): boolean {
    return call.later && completeJson(call) !== undefined;
  }

  protected completeOnCut(call: PendingCall): boolean {
    return completeJson(call, true) !== undefined;
  }

  /** Chat has no per-call end event: when the model finished, each call's text is what it sent. */
  protected unfinishedOnEnd(): string | undefined {
    return undefined;
  }
}

function cutReason(reason: string): string {
  if (reason === 'length') return 'the output limit (finish_reason "length")';
  if (reason === 'content_filter') return 'the content filter (finish_reason "content_filter")';
  return `the message ending early (finish_reason "${reason}")`;
}
