/**
 * Stages 4 and 5: the `tool_execution_end` event and the result message, built from an
 * {@link Outcome} whatever stage produced it (contract P2).
 *
 * @module
 */
import type { ToolExecutionEndEvent } from '../events.ts';
import type { ToolCall, ToolResultMessage } from '../tool.ts';
import type { Outcome } from './outcome.ts';

/** The `tool_execution_end` event of call `index` (contract O3). */
export function toolExecutionEndEvent(index: number, call: ToolCall, outcome: Outcome): ToolExecutionEndEvent {
  return {
    type: 'tool_execution_end',
    toolCallId: call.id,
    toolName: call.name,
    index,
    result: outcome.result,
    isError: outcome.isError,
    outcome: outcome.outcome,
  };
}

/** The result message for the model. `terminate` stays on the outcome; `details` and `meta` are copied when present. */
export function createToolResultMessage(call: ToolCall, outcome: Outcome): ToolResultMessage {
  const message: ToolResultMessage = {
    role: 'tool',
    toolCallId: call.id,
    toolName: call.name,
    content: outcome.result.content,
    isError: outcome.isError,
  };
  if (outcome.result.details !== undefined) message.details = outcome.result.details;
  if (outcome.result.meta !== undefined) message.meta = outcome.result.meta;
  return message;
}
