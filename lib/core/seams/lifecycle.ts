/**
 * The life of a call, as a feature beside the run sees it: the one seam through which the
 * journal (J) and tracing (T) take part in a run, each as a participant in its own file
 * (`run/participants/`). The run calls every participant at fixed points of each call's life
 * — hand-out, progress, end — in the order they were registered; a feature that needs the
 * life of a call implements this interface and gets a file of its own, instead of a branch
 * inside the run's methods.
 *
 * The plain run (no journal, no tracing) has no participants and calls none: the run keeps
 * `undefined` instead of an empty list, so its hot path pays one load per point and makes
 * no closure.
 *
 * ```
 * hand-out ─ handOut(call, tool) ─▶ tool_execution_start ─▶ prepare ─ prepared(call) ─▶ execute … finalize
 *    │                                  each update: progress(call, value, replayed)
 *    └─ (run stopped first: answered(call, tool))
 * end ─ ended(call, end) ─▶ tool_execution_end ─▶ release in call order
 * ```
 *
 * `Call` is the run's own record of a call (`run/call.ts`) and `Answer` the outcome a
 * participant may give a prepared call instead (`run/stages/outcome.ts`): this room names
 * no room below it, so the types are parameters.
 *
 * @module
 */
import type { CallOutcome, Tool, ToolResult, ToolResultMessage } from '../tool/tool.ts';

/** How a call ended, as {@link CallLifecycle.ended} is told: what its `tool_execution_end` and `tool_result` carry. */
export interface CallEnd {
  readonly outcome: CallOutcome;
  readonly isError: boolean;
  readonly result: ToolResult;
  /** The `tool_result` message of the call, as released. */
  readonly message: ToolResultMessage;
  /** True for a call whose end was replayed from its journal (J4): nothing ran, nothing is committed. */
  readonly replayed: boolean;
  /** What a throw that made the outcome threw (O7, T2); absent when no throw made it. */
  readonly thrown: { readonly value: unknown } | undefined;
}

/**
 * A participant in the life of each call of a run. Each method is called synchronously by
 * the run, in call order for hand-outs; none may throw (each participant turns its own
 * failures into a warning or, for the journal, a journal failure the run acts on).
 */
export interface CallLifecycle<Call, Answer> {
  /**
   * The call is handed out (stage 1 begins), before its `tool_execution_start`. Returns
   * false when the call must not go on: the participant failed in a way that stops the run
   * (a journal that could not open its entry, J9).
   */
  handOut(call: Call, tool: Tool | undefined): boolean;
  /** The run answers the call without handing it out (`not_run` after a stop, A2): it gets a start and an end, nothing else. */
  answered(call: Call, tool: Tool | undefined): void;
  /**
   * The call is prepared (stage 1 is over; not for a call replayed from the journal): an
   * answer replaces the prepared outcome (the journal's "outcome unknown" of an interrupted
   * call, J5); `undefined` leaves it.
   */
  prepared(call: Call): Answer | undefined;
  /** One progress value of the call, as its `tool_execution_update` carries it; `replayed` for a value replayed from the journal (J4). */
  progress(call: Call, value: unknown, replayed: boolean): void;
  /** The call ended (stage 4), just before its `tool_execution_end`. */
  ended(call: Call, end: CallEnd): void;
}
