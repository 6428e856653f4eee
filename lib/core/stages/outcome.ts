/**
 * The shapes that flow between the five stages of seed 000:
 * prepare → execute → finalize → emit end → result message.
 *
 * A call that fails in prepare gets its {@link Finalized} outcome at once, in the same shape
 * as an executed one (contract P2), so the last two stages never ask where it came from.
 *
 * @module
 */
import type { CallOutcome } from '../events.ts';
import type { Tool, ToolCall, ToolResult } from '../tool.ts';
import { textContent } from '../tool.ts';
import { thrownText } from './foreign.ts';

/** A call that passed prepare: ready to execute. */
export interface Prepared {
  kind: 'prepared';
  index: number;
  call: ToolCall;
  tool: Tool;
  /** The validated arguments (after `prepareArguments`, validation and `beforeToolCall`). */
  args: unknown;
}

/** What execute produced, before `afterToolCall`. */
export interface Executed {
  result: ToolResult;
  isError: boolean;
  outcome: CallOutcome;
}

/** A call's final outcome: what `tool_execution_end` and the result message carry. */
export interface Finalized extends Executed {
  kind: 'finalized';
  index: number;
  call: ToolCall;
}

/** An outcome with one text block; `isError` is true for every outcome but `ok`. */
export function finalizedText(index: number, call: ToolCall, outcome: CallOutcome, text: string): Finalized {
  return { kind: 'finalized', index, call, outcome, isError: outcome !== 'ok', result: { content: textContent(text) } };
}

/** A text for a thrown value (see {@link thrownText}: never throws). */
export const errorText = thrownText;
