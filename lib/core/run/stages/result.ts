/**
 * Stages 4 and 5: the `tool_execution_end` event and the result message, built from an
 * outcome's three fields (result, isError, outcome) whatever stage produced it (contract P2).
 *
 * @module
 */
import type { CallOutcome } from '../../tool/tool.ts';
import type { ToolExecutionEndEvent } from '../events.ts';
import type { ToolCall, ToolResult, ToolResultMessage } from '../../tool/tool.ts';

/** What the end event reads of a call record. */
interface Ended {
  readonly index: number;
  readonly call: ToolCall;
  readonly startedAt: number;
}

/**
 * The `tool_execution_end` event of a call (contract O3): its times (O7: `startedAt` from the
 * record, `endedAt` now, epoch ms) and, when its outcome came from a throw (`thrown`, the
 * outcome's box), the thrown value as `error` (the key is absent otherwise).
 */
export function toolExecutionEndEvent(
  record: Ended,
  result: ToolResult,
  isError: boolean,
  outcome: CallOutcome,
  thrown: { readonly value: unknown } | undefined,
): ToolExecutionEndEvent {
  const call = record.call;
  const end: ToolExecutionEndEvent = {
    type: 'tool_execution_end',
    toolCallId: call.id,
    toolName: call.name,
    index: record.index,
    result,
    isError,
    outcome,
    startedAt: record.startedAt,
    endedAt: Date.now(),
  };
  if (thrown !== undefined) end.error = thrown.value;
  return end;
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
