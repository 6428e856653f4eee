/**
 * The one shape that flows between the five stages of seed 000:
 * prepare → execute → finalize → emit end → result message.
 *
 * A call that fails in prepare gets its {@link Outcome} at once, in the same shape as an
 * executed one (contract P2), so the last two stages never ask where it came from.
 *
 * @module
 */
import type { CallOutcome } from '../../tool/tool.ts';
import type { ToolResult } from '../../tool/tool.ts';
import { textContent } from '../../values/content.ts';

/**
 * How a call ended: its result (before the bound of `maxResultChars`), whether it is an
 * error, and why; `thrown`, the value thrown that made an error result, when a throw made it
 * (the tool's, a hook's), boxed so that a thrown `undefined` is kept (`undefined` when no
 * throw made it): for the call's trace (`CallTrace.end`) and the end event's `error` (O7).
 */
export class Outcome {
  constructor(
    public result: ToolResult,
    public isError: boolean,
    public outcome: CallOutcome,
    public thrown: { readonly value: unknown } | undefined = undefined,
  ) {}
}

/** `outcome` marked as made by a throw of `error` (for the call's trace), unless the run stopped first (`not_run`: no throw of its own). */
export function fromThrow(outcome: Outcome, error: unknown): Outcome {
  if (outcome.outcome !== 'not_run') outcome.thrown = { value: error };
  return outcome;
}

/** An outcome with one text block; `isError` is true for every outcome but `ok`. */
export function outcomeText(outcome: CallOutcome, text: string): Outcome {
  return new Outcome({ content: textContent(text) }, outcome !== 'ok', outcome);
}

/**
 * @internal An `Error` whose `details` the call's error result keeps (the result of an
 * ordinary throw has none). Thrown by the adapters for a peer that fails with data: a
 * LangChain `ToolMessage` with `status: 'error'` and an `artifact`. Not exported from the
 * package.
 */
export class ErrorWithDetails extends Error {
  constructor(
    message: string,
    readonly details: unknown,
  ) {
    super(message);
  }
}

/** The `details` of an {@link ErrorWithDetails}; `undefined` for anything else (never throws: a revoked Proxy is "anything else"). */
export function thrownDetails(error: unknown): unknown {
  try {
    return error instanceof ErrorWithDetails ? error.details : undefined;
  } catch {
    return undefined;
  }
}

/**
 * @internal Thrown by a tool's `needsApproval` to refuse the call outright, without asking
 * anyone: the call is `rejected` with this message as its text (an adapter's peer policy
 * that denies, such as ai 7's `toolApproval` status `'denied'`). Any other throw from the
 * rule is a problem in the tool definition (P4). Not exported from the package.
 */
export class RuleDenial extends Error {}

/** True for a {@link RuleDenial} (never throws: a revoked Proxy is not one). */
export function isRuleDenial(error: unknown): error is RuleDenial {
  try {
    return error instanceof RuleDenial;
  } catch {
    return false;
  }
}
