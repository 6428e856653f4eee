/**
 * Stage 3, finalize (contract P3): `afterToolCall` sees every executed call's result —
 * success or throw — and overrides `content`, `details`, `isError`, `terminate` field by
 * field, with no deep merge (seed 000).
 *
 * @module
 */
import { abortable } from 'abort-controller-x';
import type { RunState } from '../run-state.ts';
import { textContent } from '../tool.ts';
import { isPromiseLike } from './execute.ts';
import { readAfterAnswer } from './foreign.ts';
import { errorText, type Executed, type Finalized, type Prepared } from './outcome.ts';

/**
 * Applies `afterToolCall` to an executed call. A throw from the hook makes the result an
 * error naming the hook, attached to this call only (case C3, C4). The hook is called for
 * every call whose tool ended before the run stopped (`runStoppedFirst` false), however
 * late the consumer takes its record; not for a call the stop caught running, nor after
 * the consumer left. A hook still waiting when the run stops is not waited for (its
 * overrides are dropped).
 */
export function finalizeExecutedToolCall(run: RunState, prepared: Prepared, executed: Executed, runStoppedFirst: boolean): Finalized | Promise<Finalized> {
  const hook = run.options.afterToolCall;
  const { index, call } = prepared;
  const base: Finalized = { kind: 'finalized', index, call, ...executed };
  if (hook === undefined || runStoppedFirst || run.abort.cause === 'consumer') return base;
  let answer: ReturnType<typeof hook>;
  try {
    answer = hook({
      toolCall: call,
      index,
      tool: prepared.tool,
      args: prepared.args,
      signal: run.abort.signal,
      result: executed.result,
      isError: executed.isError,
    });
  } catch (error) {
    return hookFailed(base, error);
  }
  if (!isPromiseLike(answer)) return override(base, answer);
  return abortable(run.abort.signal, Promise.resolve(answer)).then(
    (a) => override(base, a),
    (error: unknown) => {
      if (!run.stopped) return hookFailed(base, error);
      // The hook was cut short by the stop: its overrides are dropped, so the abort changed this outcome.
      if (run.abort.cause === 'run') run.abortChangedOutcome = true;
      return base;
    },
  );
}

function override(base: Finalized, answer: unknown): Finalized {
  const read = readAfterAnswer(answer);
  if (!read.ok) return hookFailed(base, read.problem);
  const a = read.value;
  if (a === undefined) return base;
  const result: Finalized['result'] = { content: a.content ?? base.result.content };
  const details = a.details !== undefined ? a.details : base.result.details;
  if (details !== undefined) result.details = details;
  const terminate = a.terminate ?? base.result.terminate;
  if (terminate !== undefined) result.terminate = terminate;
  const isError = a.isError ?? base.isError;
  const outcome = isError === base.isError ? base.outcome : isError ? 'error' : 'ok';
  return { kind: 'finalized', index: base.index, call: base.call, result, isError, outcome };
}

function hookFailed(base: Finalized, error: unknown): Finalized {
  return {
    ...base,
    result: { content: textContent(`Tool "${base.call.name}" ran, but afterToolCall failed: ${errorText(error)}`) },
    isError: true,
    outcome: 'error',
  };
}
