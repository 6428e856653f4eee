/**
 * Stage 3, finalize (contract P3): `afterToolCall` sees every executed call's result —
 * success or throw — and overrides `content`, `details`, `meta`, `isError`, `terminate` field by
 * field, with no deep merge (seed 000).
 *
 * @module
 */
import { abortable } from 'abort-controller-x';
import type { CallRecord } from '../call.ts';
import type { RunToolsOptions } from '../options.ts';
import { textContent } from '../../values/content.ts';
import { readAfterAnswer } from '../../values/foreign.ts';
import { Outcome } from './outcome.ts';
import { isPromiseLike, thrownText } from '../../values/guards.ts';

/** What finalize reads of the run: nothing more. */
export interface FinalizeInput {
  readonly afterToolCall: RunToolsOptions['afterToolCall'];
  /** True once the run was aborted or the consumer left. */
  readonly stopped: boolean;
  /** Why the run stopped first: `run` (its signal) or `consumer` (the loop was left); `undefined` while running. */
  readonly cause: 'run' | 'timeout' | 'consumer' | undefined;
  /** The run's signal, handed to the hook (read only if the hook reads it). */
  readonly signal: AbortSignal;
  /** Set when the run's abort dropped a waiting hook's answer (it changed an outcome: `ToolBatch.aborted`). */
  abortChangedOutcome: boolean;
}

/**
 * Applies `afterToolCall` to an executed call. A throw from the hook makes the result an
 * error naming the hook, attached to this call only (case C3, C4). The hook is called for
 * every call whose tool ended before the run stopped (`record.runStoppedFirst` false),
 * however late the consumer takes its record; not for a call the stop caught running, nor
 * after the consumer left. A hook still waiting when the run stops is not waited for (its
 * overrides are dropped).
 */
export function finalizeToolCall(run: FinalizeInput, record: CallRecord, executed: Outcome): Outcome | Promise<Outcome> {
  const hook = run.afterToolCall;
  if (hook === undefined || record.runStoppedFirst || run.cause === 'consumer') return executed;
  let answer: unknown;
  try {
    answer = hook({
      toolCall: record.call,
      index: record.index,
      tool: record.tool!,
      args: record.args,
      get signal() {
        return run.signal;
      },
      result: executed.result,
      isError: executed.isError,
    });
  } catch (error) {
    return hookFailed(record, error);
  }
  if (!isPromiseLike(answer)) return override(record, executed, answer);
  return abortable(run.signal, Promise.resolve(answer)).then(
    (a) => override(record, executed, a),
    (error: unknown) => {
      if (!run.stopped) return hookFailed(record, error);
      // The hook was cut short by the stop: its overrides are dropped, so the abort changed this outcome.
      if (run.cause === 'run') run.abortChangedOutcome = true;
      return executed;
    },
  );
}

function override(record: CallRecord, base: Outcome, answer: unknown): Outcome {
  const read = readAfterAnswer(answer);
  if (!read.ok) return hookFailed(record, read.problem, false);
  const a = read.value;
  if (a === undefined) return base;
  const result: Outcome['result'] = { content: a.content ?? base.result.content };
  const details = a.details !== undefined ? a.details : base.result.details;
  if (details !== undefined) result.details = details;
  const meta = a.meta ?? base.result.meta;
  if (meta !== undefined) result.meta = meta;
  const terminate = a.terminate ?? base.result.terminate;
  if (terminate !== undefined) result.terminate = terminate;
  const isError = a.isError ?? base.isError;
  const outcome = isError === base.isError ? base.outcome : isError ? 'error' : 'ok';
  // Still the error a throw made (its text may be the hook's): the trace keeps what was thrown.
  return new Outcome(result, isError, outcome, isError && base.isError ? base.thrown : undefined);
}

/** The hook threw `error` (the trace records it), or answered what it cannot (`problem`, a text: no throw). */
function hookFailed(record: CallRecord, error: unknown, threw = true): Outcome {
  return new Outcome({ content: textContent(`Tool "${record.call.name}" ran, but afterToolCall failed: ${thrownText(error)}`) }, true, 'error', threw ? { value: error } : undefined);
}
