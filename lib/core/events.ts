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
 * @module
 */
import type { ContentBlock, ToolResultMessage } from './tool.ts';

/** toolrun began working on a call (its prepare stage starts next). `args` is the call's raw `arguments`. */
export interface ToolExecutionStartEvent {
  type: 'tool_execution_start';
  toolCallId: string;
  toolName: string;
  /** Position of the call in the assistant message (0-based); unique even when ids repeat. */
  index: number;
  args: unknown;
}

/** A value the tool yielded, delivered while the tool is still running (contract O5). */
export interface ToolExecutionUpdateEvent<Progress = unknown> {
  type: 'tool_execution_update';
  toolCallId: string;
  toolName: string;
  index: number;
  progress: Progress;
}

/** The call's final result (after `afterToolCall`), emitted in completion order (contract O3). */
export interface ToolExecutionEndEvent {
  type: 'tool_execution_end';
  toolCallId: string;
  toolName: string;
  index: number;
  result: { content: ContentBlock[]; details?: unknown; meta?: Record<string, unknown>; terminate?: boolean };
  isError: boolean;
  /** How the call ended; `ok` and `error` ran the tool, the others say why it did not finish normally. */
  outcome: CallOutcome;
}

/** The result message for the model, emitted in call order (contract O2). */
export interface ToolResultEvent {
  type: 'tool_result';
  index: number;
  message: ToolResultMessage;
}

/** Everything `runTools` yields. */
export type ToolEvent<Progress = unknown> =
  | ToolExecutionStartEvent
  | ToolExecutionUpdateEvent<Progress>
  | ToolExecutionEndEvent
  | ToolResultEvent;

/**
 * How a call ended:
 * - `ok`: the tool returned.
 * - `error`: the tool threw, or a hook made it an error.
 * - `rejected`: the call never ran: unknown tool, bad arguments, `prepareArguments` or
 *   `beforeToolCall` threw, or `beforeToolCall` blocked it.
 * - `not_run`: the run was aborted before the call started (contract A2).
 * - `interrupted`: the run was aborted while the call was running and the tool stopped.
 * - `abandoned`: the run was aborted, the tool did not stop within `abortGraceMs`; its
 *   outcome is unknown (contract A3).
 * - `timed_out`: the call hit its time limit (contract A4).
 */
export type CallOutcome = 'ok' | 'error' | 'rejected' | 'not_run' | 'interrupted' | 'abandoned' | 'timed_out';

/** What the `runTools` generator returns when it finishes (not when the consumer leaves early). */
export interface ToolBatch {
  /** One result per call, in call order (contract O6). */
  messages: ToolResultMessage[];
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
}
