/**
 * `pipeEvents`: a run's events through ix operators, with the run's cleanup kept.
 *
 * @module
 */
import { CancelScope } from '../../core/streams/abort.ts';
import { closeWithoutWaiting } from '../../core/streams/merge.ts';

/**
 * Runs `start(signal)` — a `runTools` or `runAgent` run — through `pipeline` (ix
 * operators, typically) and guarantees the run's cleanup when the consumer's loop ends,
 * whatever the operators do.
 *
 * Why it exists: a plain `for await (const e of from(runTools(...)).pipe(...))` closes
 * every tool on `break` or a throw as long as each operator iterates its source with
 * `for await` (ix's `map`, `filter`, `take`, `takeWhile`, `tap`, `scan`, `catchError`,
 * `withAbort`, `first`, `toArray`): the `return()` travels down to the run. Operators that
 * drive their source by hand and stop without calling `return()` — ix 7's `takeUntil` does
 * exactly that — leave the run suspended: tools keep their resources, their `finally`
 * never runs, their signals never abort (see `spec/extras/compose.spec.ts`). This helper sits at
 * the consumer's end of the pipeline: when the loop over it ends (done, `break`, throw),
 * it returns the run (not awaited) and aborts the signal it gave `start`, which reaches a
 * tool even while the run waits in an `await`.
 *
 * @param start - makes the run; pass it the signal (`(signal) => runTools(calls, { tools, signal })`).
 * @param pipeline - receives the run's events as an `AsyncIterable`: `(events) => from(events).pipe(...)`.
 * @param options.signal - an outer signal that aborts the run too (one listener, removed at the end).
 * @returns an async generator of what `pipeline` yields. Its return value is the run's own
 *   (`ToolBatch`, `AgentResult`) when the run finished, else `undefined` (ix drops return values).
 *
 * @example
 * ```ts
 * import { from } from 'ix/asynciterable';
 * import { filter, map, takeUntil } from 'ix/asynciterable/operators';
 *
 * const progress = pipeEvents(
 *   (signal) => runTools(calls, { tools, signal }),
 *   (events) => from(events).pipe(
 *     filter((e) => e.type === 'tool_execution_update'),
 *     map((e) => e.progress),
 *     takeUntil(() => userPressedStop),
 *   ),
 * );
 * for await (const p of progress) draw(p);
 * ```
 */
export async function* pipeEvents<T, Ret, R>(
  start: (signal: AbortSignal) => AsyncGenerator<T, Ret, undefined>,
  pipeline: (events: AsyncIterable<T>) => AsyncIterable<R>,
  options: { signal?: AbortSignal } = {},
): AsyncGenerator<R, Ret | undefined, undefined> {
  // The run's scope: follows the outer signal through one listener, removed by close() (A6).
  const scope = new CancelScope();
  scope.listen(options.signal);
  let run: AsyncGenerator<T, Ret, undefined>;
  try {
    run = start(scope.signal);
  } catch (error) {
    scope.close(); // no run to follow the outer signal for
    throw error;
  }
  let finished: { value: Ret } | undefined;
  async function* source(): AsyncGenerator<T, Ret, undefined> {
    const value = yield* run;
    finished = { value };
    return value;
  }
  const tapped = source();
  const events = pipeline(tapped)[Symbol.asyncIterator]();
  let pipelineDone = false;
  try {
    for (;;) {
      const step = await events.next();
      if (step.done === true) {
        pipelineDone = true;
        return finished?.value;
      }
      yield step.value;
    }
  } catch (error) {
    pipelineDone = true;
    throw error;
  } finally {
    // Not awaited: an operator whose return() waits for a parked source (ix's timeout)
    // would hang this consumer's break.
    if (!pipelineDone) closeWithoutWaiting(events);
    if (finished === undefined) {
      // The run is suspended at a yield (return() finishes it now: consumer exit, A5), or
      // parked in an await because an operator abandoned a pending next(): then return()
      // is queued behind that step, and the abort below is what reaches the tools.
      closeWithoutWaiting(tapped);
      closeWithoutWaiting(run);
      scope.abort('consumer', new DOMException('The consumer stopped iterating the event pipeline before the run ended', 'AbortError'));
    }
    scope.close();
  }
}
