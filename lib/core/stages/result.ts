/**
 * Stages 4 and 5: the `tool_execution_end` event and the result message, built from a
 * {@link Finalized} outcome whatever stage produced it (contract P2).
 *
 * @module
 */
import type { ToolExecutionEndEvent } from '../events.ts';
import type { ToolResultMessage } from '../tool.ts';
import type { Finalized } from './outcome.ts';

/** The `tool_execution_end` event of a finalized call (contract O3). */
export function toolExecutionEndEvent(finalized: Finalized): ToolExecutionEndEvent {
  return {
    type: 'tool_execution_end',
    toolCallId: finalized.call.id,
    toolName: finalized.call.name,
    index: finalized.index,
    result: finalized.result,
    isError: finalized.isError,
    outcome: finalized.outcome,
  };
}

/** The result message for the model. `terminate` stays on the outcome; `details` is copied when present. */
export function createToolResultMessage(finalized: Finalized): ToolResultMessage {
  const message: ToolResultMessage = {
    role: 'tool',
    toolCallId: finalized.call.id,
    toolName: finalized.call.name,
    content: finalized.result.content,
    isError: finalized.isError,
  };
  if (finalized.result.details !== undefined) message.details = finalized.result.details;
  return message;
}
