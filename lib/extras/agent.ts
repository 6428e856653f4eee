/**
 * The agent loop: model turn, tool batch, model turn, … until the model answers without
 * tool calls — the outer loop around `runTools` that seed 000 calls `runLoop`.
 *
 * ```
 * runAgent ─ turn 1: model(messages) ─▶ assistant message ─▶ runTools(its calls) ─▶ results
 *          ─ turn 2: model(messages + message + results) ─▶ …
 *          ─ agent_end { reason: completed | terminated | max_turns | aborted | error }
 * ```
 *
 * Messages are provider-neutral ({@link AgentMessage}); `lib/formats/agent-messages.ts`
 * converts them to and from Anthropic and OpenAI Chat.
 *
 * @module
 */
import { abortable } from 'abort-controller-x';
import type { ToolProgressOf } from './compose.ts';
import type { ToolBatch, ToolEvent } from '../core/events.ts';
import type { RunToolsOptions } from '../core/options.ts';
import { runTools } from '../core/run-tools.ts';
import { notRunText } from '../core/stages/prepare.ts';
import { isPromiseLike } from '../core/stages/execute.ts';
import { closeWithoutWaiting, mergeGenerators } from '../core/streams/merge.ts';
import { describeValue, textContent, type ContentBlock, type TextContent, type Tool, type ToolCall, type ToolResultMessage } from '../core/tool.ts';

// ---------------------------------------------------------------------------------------
// Messages

/** A tool call inside an assistant message (pi-ai's `toolCall` block; Anthropic `tool_use`, OpenAI `tool_calls[]`). */
export interface ToolCallContent {
  type: 'toolCall';
  id: string;
  name: string;
  /** An object, or the raw JSON text (OpenAI); validated when the call runs. */
  arguments?: unknown;
  /** Set when the message was cut off before this call's arguments were complete: never run (case C16). */
  incomplete?: string;
}

/**
 * Model reasoning kept in the history. Anthropic requires the `thinking` blocks of an
 * assistant message with tool calls to be sent back unchanged (with their `signature`);
 * OpenAI Chat has no such block and drops it.
 */
export interface ThinkingContent {
  type: 'thinking';
  thinking: string;
  /** Anthropic's signature of the block. */
  signature?: string;
  /** The data of an Anthropic `redacted_thinking` block (then `thinking` is `''`). */
  redacted?: string;
}

/** What an assistant message may hold. */
export type AssistantContent = TextContent | ThinkingContent | ToolCallContent;

/**
 * Why the model stopped writing (pi-ai's terms): `stop` it finished; `toolUse` it wants its
 * tool calls run; `length` the output limit cut it; `error` the provider failed;
 * `aborted` the run's signal stopped it (a partial message).
 */
export type StopReason = 'stop' | 'toolUse' | 'length' | 'error' | 'aborted';

/** A model's reply, provider-neutral. Its tool calls are the `toolCall` blocks, in order. */
export interface AssistantMessage {
  role: 'assistant';
  content: AssistantContent[];
  stopReason?: StopReason;
}

/** A user's message: text, or text and image blocks. */
export interface UserMessage {
  role: 'user';
  content: string | ContentBlock[];
}

/** Everything in an agent's history. Tool results are `runTools`' own {@link ToolResultMessage}s. */
export type AgentMessage = UserMessage | AssistantMessage | ToolResultMessage;

/** The tool calls of an assistant message, in order, as `runTools` takes them. */
export function toolCallsOf(message: AssistantMessage): ToolCall[] {
  const calls: ToolCall[] = [];
  for (const block of message.content) {
    if (block.type !== 'toolCall') continue;
    const call: ToolCall = { id: block.id, name: block.name };
    if (block.arguments !== undefined) call.arguments = block.arguments;
    if (block.incomplete !== undefined) call.incomplete = block.incomplete;
    calls.push(call);
  }
  return calls;
}

/** The text of an assistant message: its text blocks joined with `"\n"` (thinking and calls left out). */
export function assistantText(message: AssistantMessage): string {
  return message.content
    .filter((block): block is TextContent => block.type === 'text')
    .map((block) => block.text)
    .join('\n');
}

// ---------------------------------------------------------------------------------------
// The model seam

/**
 * One item of a streamed model reply:
 * - `text_delta`: more text of the message (shown live as `message_update`);
 * - `tool_call`: a complete tool call, runnable now — `runAgent` hands it to `runTools` at
 *   once, so it starts while the model is still writing (contract S4);
 * - a bare {@link ToolCall} (no `type` field) counts as a `tool_call`: a stream adapter such
 *   as `fromAnthropicStream(stream)` can be the model's whole stream;
 * - `stop`: why the model stopped (else taken from an adapter's return value, or `toolUse` /
 *   `stop` by whether calls came).
 * Other `type`s are ignored. When the stream's generator *returns* an
 * {@link AssistantMessage} (e.g. `fromAnthropicMessage(await stream.finalMessage())` after
 * `yield* fromAnthropicStream(stream)`), that message goes into the history instead of the
 * one assembled from the events — provided its tool calls are exactly those streamed (same
 * ids, same order): it keeps what the events do not carry, such as thinking signatures.
 */
export type ModelStreamEvent =
  | { type: 'text_delta'; text: string }
  | { type: 'tool_call'; call: ToolCall }
  | { type: 'stop'; stopReason: StopReason };

/** A streamed model reply: events and calls as they come (see {@link ModelStreamEvent}). */
export type ModelStream = AsyncIterable<ModelStreamEvent | ToolCall>;

/** What a model function may return: a message or a stream, or a promise of either (an `async` model function). */
export type ModelReply = AssistantMessage | ModelStream | PromiseLike<AssistantMessage | ModelStream>;

/** What the model function receives besides the history. */
export interface ModelContext {
  /** Aborted when the run's signal aborts or the consumer stops iterating `runAgent`: pass it to the provider's request. */
  signal: AbortSignal;
  /** The turn number, 1-based. */
  turn: number;
  /** The tools of the run, e.g. for `toAnthropicTools(tools)`. */
  tools: readonly Tool[];
}

/**
 * The model: the history so far (a fresh array each turn; do not keep it) → the assistant's
 * reply. Calls a provider, replays a recording, or plays a script. A throw (or rejection,
 * or a stream error) ends the run with reason `error`; an abort ends it with `aborted`.
 *
 * @example
 * ```ts
 * const model: AgentModel = async (messages, { signal, tools }) =>
 *   fromAnthropicMessage(await anthropic.messages.create(
 *     { model: 'claude-sonnet-4-5', max_tokens: 4096, messages: toAnthropicMessages(messages), tools: toAnthropicTools(tools) },
 *     { signal },
 *   ));
 * ```
 */
export type AgentModel = (messages: readonly AgentMessage[], context: ModelContext) => ModelReply;

// ---------------------------------------------------------------------------------------
// Events

/** A turn begins: the model is about to be called. */
export interface TurnStartEvent {
  type: 'turn_start';
  turn: number;
}

/** More text of the assistant message, while a streamed reply is still arriving. */
export interface MessageUpdateEvent {
  type: 'message_update';
  turn: number;
  /** The new text (a delta, not the whole text so far). */
  text: string;
}

/**
 * The assistant message of this turn is complete (or, with `stopReason: 'aborted'`, what
 * had arrived when the run was aborted). With a streamed reply, the turn's
 * `tool_execution_*` events can come before it: calls start while the model still writes.
 */
export interface AgentMessageEvent {
  type: 'message';
  turn: number;
  message: AssistantMessage;
}

/** The turn is over: its message (absent when the model gave none) and every result of its calls, in call order. */
export interface TurnEndEvent {
  type: 'turn_end';
  turn: number;
  message: AssistantMessage | undefined;
  toolResults: ToolResultMessage[];
}

/**
 * Why the run ended:
 * - `completed`: the model answered without tool calls;
 * - `terminated`: every result of the last batch asked to stop (`terminate: true`, contract O6);
 * - `max_turns`: `maxTurns` model turns were taken and the last one still called tools
 *   (those calls were run and answered);
 * - `aborted`: the run's signal aborted;
 * - `error`: the model threw, rejected, broke its stream, or returned something that is
 *   not an assistant message (`error` holds it).
 */
export type AgentEndReason = 'completed' | 'terminated' | 'max_turns' | 'aborted' | 'error';

/** What `runAgent` returns (and `agent_end` carries). */
export interface AgentResult {
  /**
   * The whole history: the input messages, then each turn's assistant message and its tool
   * results. Valid to send to the provider again whatever the reason: every tool call has
   * exactly one result after it.
   */
  messages: AgentMessage[];
  reason: AgentEndReason;
  /** Model turns taken. */
  turns: number;
  /** The model's failure, for reason `error`. */
  error?: unknown;
}

/** The last event of a run that was not left early. */
export interface AgentEndEvent extends AgentResult {
  type: 'agent_end';
}

/**
 * Everything `runAgent` yields: turn-level events around the `runTools` events of each
 * turn's batch. Per turn: `turn_start`, (`message_update`*), `message`, the batch's
 * `tool_execution_*` / `tool_result` events, `turn_end`; then one `agent_end`.
 *
 * @typeParam Progress - the union of the tools' progress types.
 */
export type AgentEvent<Progress = unknown> =
  | TurnStartEvent
  | MessageUpdateEvent
  | AgentMessageEvent
  | ToolEvent<Progress>
  | TurnEndEvent
  | AgentEndEvent;

// ---------------------------------------------------------------------------------------
// runAgent

/** Options of {@link runAgent}: the agent's own, plus every `runTools` option but `tools` and `signal`, applied to each batch. */
export interface RunAgentOptions<T extends readonly Tool[] = readonly Tool[]> extends Omit<RunToolsOptions, 'tools' | 'signal'> {
  /** The model; see {@link AgentModel}. */
  model: AgentModel;
  /** The tools the model may call. */
  tools: T;
  /** The conversation so far (not modified). */
  messages: readonly AgentMessage[];
  /**
   * Most model turns; the run ends with reason `max_turns` after the last one's tool batch.
   * A positive integer or `Infinity`.
   * @default 10 (the OpenAI Agents SDK's default)
   */
  maxTurns?: number;
  /** Aborts the model call in flight and the running tools; the run ends with reason `aborted`. */
  signal?: AbortSignal;
}

/** Default of {@link RunAgentOptions.maxTurns}. */
export const DEFAULT_MAX_TURNS = 10;

/**
 * Runs an agent: calls the model, runs the tool calls of its reply with `runTools`, feeds
 * the results back, and repeats until the model answers without tool calls, a batch asks
 * to terminate, `maxTurns` is reached, the signal aborts, or the model fails — never by
 * throwing: the returned {@link AgentResult} says why, and its history is always valid to
 * send again.
 *
 * - Abort during a tool batch: `runTools` answers every call (interrupted or not run),
 *   the results join the history. Abort during the model call: no message is added (a
 *   streamed reply keeps what had arrived, `stopReason: 'aborted'`, with every call in it
 *   answered). The run puts one listener on `signal` and removes it when it ends.
 * - A streamed reply (an async iterable) starts each complete call at once (S4); calls
 *   the run could not take before an abort are answered as not run.
 * - Leaving the loop early (`break`) aborts the model call and the running tools (A5);
 *   nothing more is yielded.
 *
 * @throws TypeError at once when an option is malformed (no model function, a bad
 *   `maxTurns`, `messages` not an array, or anything `runTools` would reject).
 *
 * @example
 * ```ts
 * const run = runAgent({ model, tools: codingTools({ root }), messages: [{ role: 'user', content: 'Where is runTools defined?' }], signal });
 * for (let step = await run.next(); ; step = await run.next()) {
 *   if (step.done) { history = step.value.messages; break; }
 *   if (step.value.type === 'message') print(assistantText(step.value.message));
 * }
 * ```
 */
export function runAgent<const T extends readonly Tool[]>(
  options: RunAgentOptions<T>,
): AsyncGenerator<AgentEvent<ToolProgressOf<T[number]>>, AgentResult, undefined> {
  checkRunAgentOptions(options);
  return agentLoop(options) as AsyncGenerator<AgentEvent<ToolProgressOf<T[number]>>, AgentResult, undefined>;
}

function checkRunAgentOptions(options: unknown): asserts options is RunAgentOptions {
  if (options === null || typeof options !== 'object') throw new TypeError(`runAgent: options must be an object, received ${describeValue(options)}`);
  const o = options as Record<string, unknown>;
  if (typeof o.model !== 'function') throw new TypeError(`runAgent: options.model must be a function (messages, context) => reply, received ${describeValue(o.model)}`);
  if (!Array.isArray(o.messages)) throw new TypeError(`runAgent: options.messages must be an array of messages, received ${describeValue(o.messages)}`);
  const max = o.maxTurns;
  if (max !== undefined && !(max === Infinity || (Number.isInteger(max) && (max as number) > 0))) {
    throw new TypeError(`runAgent: options.maxTurns must be a positive integer or Infinity, received ${describeValue(max)}`);
  }
  if (o.signal !== undefined && !(o.signal instanceof AbortSignal)) {
    throw new TypeError(`runAgent: options.signal must be an AbortSignal, received ${describeValue(o.signal)}`);
  }
  // Everything runTools checks (tools, mode, hooks…), with runTools' own messages.
  runTools([], { ...(o as unknown as RunToolsOptions), signal: undefined as never }).return(undefined as never).catch(() => {});
}

/** How one turn went. */
interface TurnOutcome {
  message: AssistantMessage | undefined;
  results: ToolResultMessage[];
  terminate: boolean;
  /** The model failed (reason `error`). */
  error?: { error: unknown };
}

async function* agentLoop(options: RunAgentOptions): AsyncGenerator<AgentEvent, AgentResult, undefined> {
  const { model, tools, messages, maxTurns = DEFAULT_MAX_TURNS, signal: caller, ...batchOptions } = options;
  const history: AgentMessage[] = [...messages];
  // One internal controller: the model and every batch get its signal. It follows the
  // caller's signal through one listener (A6), and aborts when the consumer leaves.
  const controller = new AbortController();
  const onCallerAbort = (): void => controller.abort(caller!.reason);
  if (caller !== undefined) {
    if (caller.aborted) controller.abort(caller.reason);
    else caller.addEventListener('abort', onCallerAbort, { once: true });
  }
  const signal = controller.signal;
  let turn = 0;
  let completed = false;
  try {
    let reason: AgentEndReason;
    let error: { error: unknown } | undefined;
    for (;;) {
      if (signal.aborted) {
        reason = 'aborted';
        break;
      }
      turn++;
      yield { type: 'turn_start', turn };
      const outcome = yield* runTurn(model, history, { turn, tools, signal, batchOptions });
      if (outcome.message !== undefined) history.push(outcome.message);
      history.push(...outcome.results);
      yield { type: 'turn_end', turn, message: outcome.message, toolResults: outcome.results };
      if (signal.aborted) {
        reason = 'aborted';
        break;
      }
      if (outcome.error !== undefined) {
        reason = 'error';
        error = outcome.error;
        break;
      }
      if (outcome.results.length === 0) {
        reason = outcome.message?.stopReason === 'aborted' ? 'aborted' : 'completed';
        break;
      }
      if (outcome.terminate) {
        reason = 'terminated';
        break;
      }
      if (turn >= maxTurns) {
        reason = 'max_turns';
        break;
      }
    }
    const result: AgentResult = { messages: history, reason, turns: turn };
    if (error !== undefined) result.error = error.error;
    yield { type: 'agent_end', ...result };
    completed = true;
    return result;
  } finally {
    caller?.removeEventListener('abort', onCallerAbort);
    // The consumer left: the model call in flight and the running tools are stopped (A5).
    if (!completed && !signal.aborted) {
      controller.abort(new DOMException('The consumer stopped iterating runAgent before the run ended', 'AbortError'));
    }
  }
}

interface TurnSetup {
  turn: number;
  tools: readonly Tool[];
  signal: AbortSignal;
  batchOptions: Omit<RunToolsOptions, 'tools' | 'signal'>;
}

/** One turn: the model's reply, then its tool batch. Yields the turn's events; returns what happened. */
async function* runTurn(model: AgentModel, history: readonly AgentMessage[], setup: TurnSetup): AsyncGenerator<AgentEvent, TurnOutcome, undefined> {
  const { turn, tools, signal } = setup;
  let reply: ModelReply;
  try {
    reply = model([...history], { signal, turn, tools });
  } catch (error) {
    return { message: undefined, results: [], terminate: false, error: { error } };
  }
  if (isAsyncIterable(reply) && !isPromiseLike(reply)) return yield* streamedTurn(reply as ModelStream, setup);

  let resolved: AssistantMessage | ModelStream;
  try {
    resolved = await abortable(signal, Promise.resolve(reply as AssistantMessage | PromiseLike<AssistantMessage | ModelStream>));
  } catch (error) {
    if (signal.aborted) return { message: undefined, results: [], terminate: false };
    return { message: undefined, results: [], terminate: false, error: { error } };
  }
  // An async model function that resolves to a stream.
  if (isAsyncIterable(resolved)) return yield* streamedTurn(resolved as ModelStream, setup);
  let message: AssistantMessage;
  try {
    message = checkAssistantMessage(resolved);
  } catch (error) {
    return { message: undefined, results: [], terminate: false, error: { error } };
  }
  yield { type: 'message', turn, message };
  const calls = toolCallsOf(message);
  if (calls.length === 0) return { message, results: [], terminate: false };
  const batch: ToolBatch = yield* runTools(calls, { ...setup.batchOptions, tools, signal });
  return { message, results: batch.messages, terminate: batch.terminate };
}

/**
 * A streamed turn: the model's stream and the tool batch run side by side through one
 * merge — `runTools` reads the calls from a channel as the stream delivers them (S4).
 */
async function* streamedTurn(stream: ModelStream, setup: TurnSetup): AsyncGenerator<AgentEvent, TurnOutcome, undefined> {
  const { turn, tools, signal } = setup;
  const channel = new CallChannel();
  const builder = new MessageBuilder();
  const reading = readModelStream(stream, turn, signal, channel, builder);
  const batchRun = runTools(channel, { ...setup.batchOptions, tools, signal });
  const merged = mergeGenerators<AgentEvent, StreamEnd | ToolBatch>([reading, batchRun]);
  let streamEnd: StreamEnd | undefined;
  let batch: ToolBatch | undefined;
  let message: AssistantMessage | undefined;
  let finished = false;
  try {
    for (;;) {
      const step = await merged.next();
      if (step.done === true) break;
      const item = step.value;
      if (!item.done) {
        yield item.value;
      } else if (item.index === 0) {
        streamEnd = item.value as StreamEnd;
        if (streamEnd.kind === 'ended') {
          message = builder.message(streamEnd.stopReason, streamEnd.final);
          yield { type: 'message', turn, message };
        }
      } else {
        batch = item.value as ToolBatch;
      }
    }
    finished = true;
  } finally {
    if (!finished) closeWithoutWaiting(merged);
  }
  const results = [...batch!.messages];
  // Calls the stream delivered after runTools stopped reading (an abort): answered here,
  // as not run, with the events runTools would have given them (A2, O1).
  const streamed = builder.calls;
  for (let index = results.length; index < streamed.length; index++) {
    const call = streamed[index]!;
    const result: ToolResultMessage = { role: 'tool', toolCallId: call.id, toolName: call.name, content: textContent(notRunText(call)), isError: true };
    yield { type: 'tool_execution_start', toolCallId: call.id, toolName: call.name, index, args: call.arguments };
    yield { type: 'tool_execution_end', toolCallId: call.id, toolName: call.name, index, result: { content: result.content }, isError: true, outcome: 'not_run' };
    yield { type: 'tool_result', index, message: result };
    results.push(result);
  }
  if (streamEnd!.kind !== 'ended') {
    // Aborted or broken mid-stream: keep what arrived (its calls are all answered), unless nothing did.
    const partial = builder.message(streamEnd!.kind === 'aborted' ? 'aborted' : 'error');
    if (partial.content.length > 0) {
      message = partial;
      yield { type: 'message', turn, message };
    }
  }
  const outcome: TurnOutcome = { message, results, terminate: batch!.terminate && results.length === batch!.messages.length };
  if (streamEnd!.kind === 'error') outcome.error = { error: streamEnd!.error };
  return outcome;
}

/** How a model stream ended. */
type StreamEnd =
  | { kind: 'ended'; stopReason: StopReason | undefined; final: AssistantMessage | undefined }
  | { kind: 'aborted' }
  | { kind: 'error'; error: unknown };

/**
 * Reads the model's stream: text deltas become `message_update` events, calls go to the
 * channel (and the message). Never throws: an abort or a failure is its return value.
 * Each `next()` is raced with the signal, so a stream that ignores it cannot hold the run.
 */
async function* readModelStream(
  stream: AsyncIterable<ModelStreamEvent | ToolCall>,
  turn: number,
  signal: AbortSignal,
  channel: CallChannel,
  builder: MessageBuilder,
): AsyncGenerator<AgentEvent, StreamEnd, undefined> {
  let iterator: AsyncIterator<ModelStreamEvent | ToolCall, unknown, undefined> | undefined;
  let settled = false;
  let stopReason: StopReason | undefined;
  try {
    iterator = stream[Symbol.asyncIterator]() as AsyncIterator<ModelStreamEvent | ToolCall, unknown, undefined>;
    for (;;) {
      let step: IteratorResult<ModelStreamEvent | ToolCall, unknown>;
      try {
        step = await abortable(signal, iterator.next());
      } catch (error) {
        if (signal.aborted) return { kind: 'aborted' };
        settled = true;
        return { kind: 'error', error };
      }
      if (step.done === true) {
        settled = true;
        const final = isAssistantMessage(step.value) ? step.value : undefined;
        return { kind: 'ended', stopReason: stopReason ?? final?.stopReason ?? stopReasonOfStreamEnd(step.value), final };
      }
      const item = step.value as ModelStreamEvent | ToolCall | null;
      if (item === null || typeof item !== 'object') continue;
      if (!('type' in item) || item.type === undefined) {
        const call = item as ToolCall;
        builder.call(call);
        channel.push(call);
      } else if (item.type === 'tool_call') {
        builder.call(item.call);
        channel.push(item.call);
      } else if (item.type === 'text_delta' && typeof item.text === 'string') {
        builder.text(item.text);
        yield { type: 'message_update', turn, text: item.text };
      } else if (item.type === 'stop') {
        stopReason = item.stopReason;
      }
    }
  } catch (error) {
    settled = true;
    return { kind: 'error', error };
  } finally {
    channel.end();
    // Not awaited: a stream parked in a network read would hold the run (merge's M5 rule).
    if (!settled && iterator !== undefined) closeWithoutWaiting(iterator);
  }
}

/** A stream adapter's return value (`ToolCallStreamEnd`) → a stop reason. */
function stopReasonOfStreamEnd(value: unknown): StopReason | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const status = (value as { status?: unknown }).status;
  if (status === 'truncated') return 'length';
  if (status === 'broken') return 'error';
  return undefined;
}

/** Builds the assistant message of a streamed reply: text deltas and calls, in arrival order. */
class MessageBuilder {
  readonly content: AssistantContent[] = [];
  readonly calls: ToolCall[] = [];

  text(delta: string): void {
    const last = this.content.at(-1);
    if (last?.type === 'text') last.text += delta;
    else this.content.push({ type: 'text', text: delta });
  }

  call(call: ToolCall): void {
    this.calls.push(call);
    const block: ToolCallContent = { type: 'toolCall', id: call.id, name: call.name };
    if (call.arguments !== undefined) block.arguments = call.arguments;
    if (call.incomplete !== undefined) block.incomplete = call.incomplete;
    this.content.push(block);
  }

  /**
   * The message: `final` (the stream's return value) when it holds exactly the calls that
   * were streamed — same ids, same order — since it is the provider's own (thinking
   * signatures included); else the one assembled from the stream.
   */
  message(stopReason: StopReason | undefined, final?: AssistantMessage): AssistantMessage {
    const reason = stopReason ?? (this.calls.length > 0 ? 'toolUse' : 'stop');
    if (final !== undefined) {
      const ids = toolCallsOf(final).map((call) => call.id);
      if (ids.length === this.calls.length && ids.every((id, i) => id === this.calls[i]!.id)) return { ...final, content: [...final.content], stopReason: reason };
    }
    return { role: 'assistant', content: [...this.content], stopReason: reason };
  }
}

/**
 * The calls of a streamed reply, as an async iterable for `runTools` (one reader).
 * Invariant: `#wake` is set only while the reader waits on an empty queue.
 */
class CallChannel implements AsyncIterableIterator<ToolCall> {
  readonly #queue: ToolCall[] = [];
  #ended = false;
  #wake: (() => void) | undefined;

  push(call: ToolCall): void {
    if (this.#ended) return;
    this.#queue.push(call);
    this.#wake?.();
  }

  end(): void {
    this.#ended = true;
    this.#wake?.();
  }

  async next(): Promise<IteratorResult<ToolCall, undefined>> {
    for (;;) {
      const call = this.#queue.shift();
      if (call !== undefined) return { done: false, value: call };
      if (this.#ended) return { done: true, value: undefined };
      await new Promise<void>((wake) => {
        this.#wake = wake;
      });
      this.#wake = undefined;
    }
  }

  /** runTools stopped reading (abort, consumer exit): later calls are not queued. */
  async return(): Promise<IteratorResult<ToolCall, undefined>> {
    this.#ended = true;
    this.#queue.length = 0;
    this.#wake?.();
    return { done: true, value: undefined };
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}

/** Checks the model's reply is an assistant message; throws a TypeError that shows what came instead. */
function checkAssistantMessage(value: unknown): AssistantMessage {
  if (typeof value !== 'object' || value === null || (value as { role?: unknown }).role !== 'assistant' || !Array.isArray((value as { content?: unknown }).content)) {
    throw new TypeError(
      `runAgent: the model must return an assistant message { role: 'assistant', content: [...] } (convert provider replies with fromAnthropicMessage / fromOpenAIChatMessage), received ${describeValue(value)}`,
    );
  }
  return value as AssistantMessage;
}

function isAssistantMessage(value: unknown): value is AssistantMessage {
  return typeof value === 'object' && value !== null && (value as { role?: unknown }).role === 'assistant' && Array.isArray((value as { content?: unknown }).content);
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}


/**
 * A model that plays a script: reply *i* for the *i*-th call, whatever the history — for
 * tests, demos and replays of recorded conversations. An entry may be a message, or a
 * function of the history and context (to answer from the tool results, to stream, or to
 * wait on the signal).
 *
 * @throws (from the model call, ending the run with reason `error`) an `Error` naming the
 *   turn when the script has no reply left.
 *
 * @example
 * ```ts
 * const model = scriptedModel([
 *   { role: 'assistant', content: [{ type: 'toolCall', id: 't1', name: 'read_file', arguments: { path: 'README.md' } }] },
 *   { role: 'assistant', content: [{ type: 'text', text: 'The README says hello.' }] },
 * ]);
 * ```
 */
export function scriptedModel(script: ReadonlyArray<AssistantMessage | AgentModel>): AgentModel & { readonly calls: number } {
  let calls = 0;
  const model = (messages: readonly AgentMessage[], context: ModelContext): ModelReply => {
    const entry = script[calls++];
    if (entry === undefined) throw new Error(`scriptedModel: no reply left for turn ${context.turn} (the script has ${script.length})`);
    return typeof entry === 'function' ? entry(messages, context) : structuredClone(entry);
  };
  Object.defineProperty(model, 'calls', { get: () => calls, enumerable: true });
  return model as AgentModel & { readonly calls: number };
}
