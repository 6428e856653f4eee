/**
 * The events `runTools` yields and the value it returns.
 *
 * Per call the order is always (contract O4):
 *
 * ```
 * tool_execution_start → tool_execution_update* → tool_execution_end → tool_result
 * ```
 *
 * Across calls, `tool_execution_end` comes in completion order (O3) and `tool_result` in
 * call order (O2), each released as soon as every earlier call has ended.
 *
 * A call deferred for a person's approval (contract H3) gets `tool_execution_start →
 * tool_approval_request` in the run that pauses, and its end and result in the run that
 * resumes it (after a new `tool_execution_start`).
 *
 * @module
 */
import type { PausedBatch, ToolApprovalRequest } from '../approval/approval.ts';
import type { ContentBlock } from '../tool/content.ts';
import type { CallOutcome, Tool, ToolDetailsOf, ToolResultMessage } from '../tool/tool.ts';

/**
 * toolrun began working on a call (its prepare stage starts next). `args` is the call's raw
 * `arguments`, as the model sent them: not validated yet, hence `unknown` for every tool.
 */
export interface ToolExecutionStartEvent<Name extends string = string> {
  type: 'tool_execution_start';
  toolCallId: string;
  /** The name the model used: it may be a name no tool has (that call ends `rejected`). */
  toolName: Name;
  /** Position of the call in the assistant message (0-based); unique even when ids repeat. */
  index: number;
  args: unknown;
}

/** A value the tool yielded, delivered while the tool is still running (contract O5). */
export interface ToolExecutionUpdateEvent<Progress = unknown, Name extends string = string> {
  type: 'tool_execution_update';
  toolCallId: string;
  /** The tool that yielded `progress` (only a tool of the run yields: never an unknown name). */
  toolName: Name;
  index: number;
  progress: Progress;
}

/** The call's final result (after `afterToolCall`), emitted in completion order (contract O3). */
export interface ToolExecutionEndEvent<Details = unknown, Name extends string = string> {
  type: 'tool_execution_end';
  toolCallId: string;
  toolName: Name;
  index: number;
  /** `details`: the tool's own (see {@link ToolDetailsOf}) or an `afterToolCall` override; absent for a call that did not run. */
  result: { content: ContentBlock[]; details?: Details; meta?: Record<string, unknown>; terminate?: boolean };
  isError: boolean;
  /** How the call ended; `ok` and `error` ran the tool, the others say why it did not finish normally. */
  outcome: CallOutcome;
  /**
   * When this run emitted the call's `tool_execution_start`, in epoch ms (`Date.now()`),
   * contract O7. The span `endedAt - startedAt` covers the whole call: prepare (validation,
   * hooks, an `approve` answer), execution and `afterToolCall`. Wall-clock, not monotonic:
   * comparable across processes and with span and log timestamps; a clock step during the
   * call shows in the difference. For a call resumed after a pause it is the resumed run's
   * start; for a `replayed` call, the replay's (nothing ran: the journal keeps no times).
   */
  startedAt: number;
  /** When this run emitted this event, in epoch ms (`Date.now()`), contract O7. */
  endedAt: number;
  /**
   * The value itself that was thrown when the outcome came from a throw (contract O7): what
   * the tool threw (`error`, and an `interrupted` or `timed_out` call whose tool rejected
   * with its signal's reason), or what a hook or a function of the tool's definition threw
   * (`prepareArguments`, an async schema, `needsApproval`, `approve`, `beforeToolCall`,
   * `afterToolCall`). The key is absent when nothing threw (`'error' in event` tells a
   * thrown `undefined` apart) and for a `replayed` call (the journal keeps the text only).
   * Kept when `afterToolCall` rewrote the result.
   *
   * It may be anything a `throw` can carry — an `Error` with a `cause`, a plain object, a
   * revoked Proxy — and it is here for the application (an adapter that rethrows the peer's
   * own error, a log): toolrun never puts it into what the model sees (`result.content`
   * holds its text), into a result message, into a paused batch's `state` or a journal.
   * Do not serialize it whole either: read what you need from it (`toEventStream` sends only
   * an `Error`'s `name` and `message`).
   *
   * @example
   * ```ts
   * if (event.type === 'tool_execution_end' && event.error instanceof RangeError) metrics.count('range_error', event.toolName);
   * ```
   */
  error?: unknown;
  /**
   * Set when the call was not run in this attempt: its result comes from the run's journal
   * (`RunToolsOptions.journal`), where an earlier attempt of the same durable run committed
   * it (contract J4). Absent otherwise.
   */
  replayed?: true;
}

/**
 * A call needs a person's approval and no `approve` function answered it: it is deferred,
 * and the batch will end paused with this request pending (contract H3). Emitted right after
 * the call's `tool_execution_start`, in the run that defers it and again in each resumed run
 * in which it is still pending (same `approvalId`).
 *
 * @example
 * ```ts
 * if (event.type === 'tool_approval_request') console.log(`${event.toolName} waits for approval: ${event.request.approvalId}`);
 * ```
 */
export interface ToolApprovalRequestEvent<Name extends string = string> {
  type: 'tool_approval_request';
  toolCallId: string;
  toolName: Name;
  index: number;
  request: ToolApprovalRequest;
}

/** The result message for the model, emitted in call order (contract O2). */
export interface ToolResultEvent<Details = unknown, Name extends string = string> {
  type: 'tool_result';
  /** The id of the call this answers (`message.toolCallId`). */
  toolCallId: string;
  /**
   * The name the model used (`message.toolName`), as on the other events of the call:
   * narrowing on it narrows `message.details` too (`if (event.toolName === 'read_file') event.message.details`).
   */
  toolName: Name;
  index: number;
  message: ToolResultMessage<Details, Name>;
}

/**
 * Everything `runTools` yields, for a run whose tools are the union `T`, discriminated by
 * `type` and then by `toolName`:
 *
 * - `tool_execution_update` of tool `N`: `progress` is that tool's `Progress`;
 * - `tool_execution_end` / `tool_result` of tool `N`: `details` is that tool's
 *   {@link ToolDetailsOf} its `Output` (or `AfterDetails`, what the run's `afterToolCall`
 *   may set instead);
 * - `tool_execution_start`: `args` is `unknown` (what the model sent, not yet validated);
 * - a call to a name no tool has (the model can send anything) is its own branch, with
 *   `toolName: string`: it is rejected before it runs, so it yields no update and its
 *   results carry no `details`.
 *
 * `ToolEvent` without arguments is the event of any run (`progress` and `details` `unknown`).
 *
 * @typeParam T - the union of the run's tools (`(typeof tools)[number]`). @default Tool
 * @typeParam AfterDetails - the `details` type an `afterToolCall` hook returns (`never`: no hook, or one that sets no details). @default unknown
 *
 * @example
 * ```ts
 * for await (const event of runTools(calls, { tools: [readFile, shell] })) {
 *   if (event.type === 'tool_execution_update' && event.toolName === 'shell') draw(event.progress); // shell's progress type
 * }
 * ```
 */
export type ToolEvent<T extends Tool = Tool, AfterDetails = unknown> =
  | ToolExecutionStartEvent
  | ToolApprovalRequestEvent
  | KnownToolEvent<T, AfterDetails>
  | ToolExecutionEndEvent<never, string>
  | ToolResultEvent<never, string>;

/** The update, end and result events of each tool of the union `T` (distributive): the part of {@link ToolEvent} typed by the tools. */
export type KnownToolEvent<T extends Tool, AfterDetails = unknown> =
  T extends Tool<never, infer Progress, infer Output, infer Name>
    ?
        | ToolExecutionUpdateEvent<Progress, Name>
        | ToolExecutionEndEvent<ToolDetailsOf<Output> | AfterDetails, Name>
        | ToolResultEvent<ToolDetailsOf<Output> | AfterDetails, Name>
    : never;

/**
 * The result message of a call in a run whose tools are the union `T`: one member per tool,
 * discriminated by `toolName`, plus the unknown-name member (no `details`).
 */
export type ToolResultMessageOf<T extends Tool = Tool, AfterDetails = unknown> =
  | (T extends Tool<never, unknown, infer Output, infer Name> ? ToolResultMessage<ToolDetailsOf<Output> | AfterDetails, Name> : never)
  | ToolResultMessage<never, string>;

/** What the `runTools` generator returns when it finishes (not when the consumer leaves early). */
export interface ToolBatch<T extends Tool = Tool, AfterDetails = unknown> {
  /**
   * One result per call, in call order (contract O6); typed per tool as in
   * {@link ToolResultMessageOf}. For a paused batch: only the results released before the
   * pause, the calls from the first one on up to the first unanswered one (H3).
   */
  messages: ToolResultMessageOf<T, AfterDetails>[];
  /**
   * True when every result asked to terminate and none is an error (contract O6), or when
   * `beforeToolCall` blocked a call with `terminate: true` (contract P6).
   */
  terminate: boolean;
  /**
   * True when the run's signal changed the batch: a call ended `not_run`, `interrupted` or
   * `abandoned` because of it, an `afterToolCall` still waiting when it aborted had its
   * overrides dropped, or it stopped the reading of a stream of calls (S4) before the
   * stream ended. False when the signal aborted only after every call had its outcome and
   * every call had arrived (the batch is what it would have been without the abort), and
   * false when only timeouts stopped calls.
   */
  aborted: boolean;
  /**
   * Set when the batch ended paused (contract H3): some calls wait for a person's approval.
   * Holds the requests, in call order, and the state to resume from (`runTools(calls,
   * { tools, resume: { state, approvals } })`). Absent otherwise. A paused batch's
   * `terminate` is false: it is decided by the batch that completes.
   */
  paused?: PausedBatch;
}
