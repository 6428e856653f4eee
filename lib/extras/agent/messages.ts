/**
 * The agent loop's vocabulary, provider-neutral and free of the loop itself: the messages
 * of a conversation, the model seam (what a model function receives and may return), and
 * the events and result of a run. `agent-messages.ts` (Anthropic, OpenAI Chat) and
 * `openai-responses-messages.ts` (OpenAI Responses) convert the messages with these types
 * alone.
 *
 * @module
 */
import type { PausedBatchState, ToolApprovalRequest } from '../../core/approval/approval.ts';
import type { StateEnvelope } from '../../core/approval/state-envelope.ts';
import type { ToolEvent, ToolResultMessageOf } from '../../core/run/events.ts';
import type { ContentBlock, TextContent } from '../../core/tool/content.ts';
import type { Tool, ToolCall, ToolResultMessage } from '../../core/tool/tool.ts';

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

/**
 * The tool calls of an assistant message, in order, as `runTools` takes them (`incomplete`
 * kept: such a call is answered, never run). Never throws on a well-typed message.
 *
 * @example
 * ```ts
 * const batch = runTools(toolCallsOf(message), { tools });
 * ```
 */
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

/**
 * The text of an assistant message: its text blocks joined with `"\n"` (thinking and calls
 * left out); `''` when it has none.
 *
 * @example
 * ```ts
 * assistantText({ role: 'assistant', content: [{ type: 'text', text: 'Done.' }], stopReason: 'stop' }); // 'Done.'
 * ```
 */
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
  /**
   * Set when the model was not asked in this attempt: the reply comes from the run's
   * journal (`RunAgentOptions.journal`), where an earlier attempt of the same durable run
   * committed it (contract J8). A replayed reply has no `message_update` events. Absent otherwise.
   */
  replayed?: true;
}

/** The turn is over: its message (absent when the model gave none) and every result of its calls, in call order. */
export interface TurnEndEvent<T extends Tool = Tool, AfterDetails = unknown> {
  type: 'turn_end';
  turn: number;
  message: AssistantMessage | undefined;
  /** Typed per tool as the batch's messages (see {@link ToolResultMessageOf}). */
  toolResults: ToolResultMessageOf<T, AfterDetails>[];
}

/**
 * Why the run ended:
 * - `completed`: the model answered without tool calls;
 * - `terminated`: every result of the last batch asked to stop (`terminate: true`, contract
 *   O6), or `beforeToolCall` blocked one of its calls with `terminate: true` (P6);
 * - `max_turns`: `maxTurns` model turns were taken and the last one still called tools
 *   (those calls were run and answered);
 * - `aborted`: the run's signal aborted;
 * - `error`: the model threw, rejected, broke its stream, or returned something that is
 *   not an assistant message (`error` holds it);
 * - `paused`: a call of the last turn waits for a person's approval and no `approve`
 *   function answered it (`paused` holds the requests and the state to resume from).
 */
export type AgentEndReason = 'completed' | 'terminated' | 'max_turns' | 'aborted' | 'error' | 'paused';

/**
 * The state of a run that ended `paused`, as plain JSON — `JSON.stringify(state)` is its
 * serialization: `{ version: 2, kind: 'toolrun/paused-agent', payload, signature? }`, the
 * body ({@link PausedAgentBody}) as JSON text in `payload`. Treat it as opaque; `runAgent({
 * resume: { state, approvals, claim } })` checks it (a `ResumeError` when it cannot be
 * resumed). Signed (HMAC-SHA256 over the payload's exact text) when the run had a
 * `signingSecret`. Format 2 (a state of format 1 is refused with `version`).
 *
 * @example
 * ```ts
 * const result = await finish(runAgent({ model, tools, messages, signingSecret }));
 * if (result.reason === 'paused') await db.save(chatId, JSON.stringify(result.paused!.state));
 * // later, in any process:
 * runAgent({ model, tools, signingSecret, resume: { state: await db.load(chatId), approvals, claim } });
 * ```
 */
export type PausedAgentState = StateEnvelope<'toolrun/paused-agent'>;

/** The body of a {@link PausedAgentState}, the JSON text in its `payload`. */
export interface PausedAgentBody {
  /** The paused turn's number (1-based): `maxTurns` counts on from it when the run resumes. */
  readonly turn: number;
  /** The history before the paused turn: what {@link AgentResult.messages} held at the pause. */
  readonly messages: readonly AgentMessage[];
  /** The paused turn's assistant message: its tool calls are the paused batch's. */
  readonly message: AssistantMessage;
  /** The paused batch's own state (see `runTools`' `resume`); its expiry and id are the run's. */
  readonly batch: PausedBatchState;
}

/**
 * What a run that ended `paused` hands back: {@link AgentResult.paused}.
 *
 * @example
 * ```ts
 * const approvals = result.paused!.requests.map((request) => ({ approvalId: request.approvalId, approved: askPerson(request) }));
 * ```
 */
export interface PausedAgent {
  /** Every pending request of the paused turn's batch, in call order; never empty. */
  requests: ToolApprovalRequest[];
  /** What `runAgent({ model, tools, resume: { state, approvals } })` continues from. */
  state: PausedAgentState;
}

/** What `runAgent` returns (and `agent_end` carries). */
export interface AgentResult {
  /**
   * The whole history: the input messages, then each turn's assistant message and its tool
   * results. Valid to send to the provider again whatever the reason: every tool call has
   * exactly one result after it. For reason `paused`, the paused turn is not in it (its
   * message and results are in `paused.state` until the run resumes).
   */
  messages: AgentMessage[];
  reason: AgentEndReason;
  /** Model turns taken, the paused turn included; a resumed run counts on from the paused one. */
  turns: number;
  /** The model's failure, for reason `error`. */
  error?: unknown;
  /** For reason `paused`: the pending requests and the state to resume from. Absent otherwise. */
  paused?: PausedAgent;
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
 * The `runTools` events are typed from the tools as in {@link ToolEvent}: narrow on `type`,
 * then `toolName`, to get a tool's progress or details.
 *
 * @typeParam T - the union of the run's tools. @default Tool
 * @typeParam AfterDetails - the `details` type the run's `afterToolCall` may return. @default unknown
 */
export type AgentEvent<T extends Tool = Tool, AfterDetails = unknown> =
  | TurnStartEvent
  | MessageUpdateEvent
  | AgentMessageEvent
  | ToolEvent<T, AfterDetails>
  | TurnEndEvent<T, AfterDetails>
  | AgentEndEvent;
