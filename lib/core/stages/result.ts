/**
 * Stages 4 and 5: the `tool_execution_end` event and the result message, built from an
 * outcome's three fields (result, isError, outcome) whatever stage produced it (contract P2).
 *
 * @module
 */
import type { CallOutcome, ToolExecutionEndEvent } from '../events.ts';
import type { ToolCall, ToolResult, ToolResultMessage } from '../tool.ts';

/** The `tool_execution_end` event of call `index` (contract O3). */
export function toolExecutionEndEvent(index: number, call: ToolCall, result: ToolResult, isError: boolean, outcome: CallOutcome): ToolExecutionEndEvent {
  return {
    type: 'tool_execution_end',
    toolCallId: call.id,
    toolName: call.name,
    index,
    result,
    isError,
    outcome,
  };
}

/** The result message for the model. `terminate` stays on the outcome; `details` and `meta` are copied when present. */
export function createToolResultMessage(call: ToolCall, result: ToolResult, isError: boolean): ToolResultMessage {
  const message: ToolResultMessage = {
    role: 'tool',
    toolCallId: call.id,
    toolName: call.name,
    content: result.content,
    isError,
  };
  if (result.details !== undefined) message.details = result.details;
  if (result.meta !== undefined) message.meta = result.meta;
  return message;
}
