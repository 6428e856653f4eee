/**
 * Scheduling (contract S1–S4, P1): which call is prepared when, and when it may execute.
 *
 * The scheduler is the list of sources that `mergeGenerators` reads, one async generator
 * per call. The merge's `concurrency` is the cap (S1; 1 in sequential mode, S2). This list
 * adds the two orderings the cap cannot express:
 *
 * - prepare is serial in call order (P1): source i+1 is handed out only once call i is
 *   prepared;
 * - an exclusive tool (`executionMode: 'sequential'`, S3) executes only once every earlier
 *   call has ended, and the list hands out no later call until it has ended.
 *
 * All waits are promises woken by `RunState`; nothing polls, so a call waiting behind an
 * exclusive tool costs no CPU.
 *
 * States of one call, only moving forward:
 * `queued` (not handed out) < `preparing` < `waiting` (exclusive gate) < `running` <
 * `ended` (its `tool_execution_end` is out) < `released` (its `tool_result` is out).
 *
 * @module
 */
import type { ToolEvent } from './events.ts';
import type { RunState } from './run-state.ts';
import { executePreparedToolCall, isPromiseLike } from './stages/execute.ts';
import { finalizeExecutedToolCall } from './stages/finalize.ts';
import { finalizedText, type Finalized } from './stages/outcome.ts';
import { notRunText, prepareToolCall } from './stages/prepare.ts';
import type { ToolCall } from './tool.ts';

/** The work of one call, as a merge source: yields its events, returns its final outcome. */
export type CallSource = AsyncGenerator<ToolEvent, Finalized, undefined>;

/**
 * The merge's list of sources: one {@link CallSource} per call, in call order, handed out
 * as the orderings above allow. Stops handing out when the run stops; the calls it did
 * not hand out are answered by `runTools` as not run (A2).
 */
export async function* scheduleCalls(run: RunState, calls: Iterable<ToolCall> | AsyncIterable<ToolCall>): AsyncGenerator<CallSource, void, undefined> {
  if (Array.isArray(calls)) {
    for (let index = 0; index < calls.length; index++) {
      if (run.stopped) return;
      yield callSource(run, index, calls[index] as ToolCall);
      await afterHandOut(run, index, calls[index] as ToolCall);
    }
    return;
  }
  for await (const raw of calls as AsyncIterable<ToolCall>) {
    if (run.stopped) return;
    const call = coerceCall(raw);
    const index = run.received.push(call) - 1;
    yield callSource(run, index, call);
    await afterHandOut(run, index, call);
  }
}

/** Waits until call `index` is prepared and, for an exclusive tool, has ended. */
async function afterHandOut(run: RunState, index: number, call: ToolCall): Promise<void> {
  const prepared = run.waitUntil(() => run.prepared > index);
  if (prepared !== undefined) await prepared;
  if (isExclusive(run, call)) {
    const ended = run.waitUntil(() => run.firstUnended > index);
    if (ended !== undefined) await ended;
  }
}

function isExclusive(run: RunState, call: ToolCall): boolean {
  return run.tools.get(call.name)?.executionMode === 'sequential';
}

/**
 * One call through the five stages. The prepare stage starts at once (synchronously when
 * it can), then `tool_execution_start` is yielded, so a batch without asynchronous hooks
 * prepares call i+1 without waiting for the consumer.
 */
async function* callSource(run: RunState, index: number, call: ToolCall): CallSource {
  const pending = prepareToolCall(run, index, call);
  if (!isPromiseLike(pending)) run.markPrepared();
  yield { type: 'tool_execution_start', toolCallId: call.id, toolName: call.name, index, args: call.arguments };
  let prepared = pending;
  if (isPromiseLike(prepared)) {
    try {
      prepared = await prepared;
    } finally {
      run.markPrepared();
    }
  }
  if (prepared.kind === 'finalized') return prepared;
  if (prepared.tool.executionMode === 'sequential') {
    const gate = run.waitUntil(() => run.firstUnended >= index);
    if (gate !== undefined) await gate;
  }
  if (run.stopped) return finalizedText(index, call, 'not_run', notRunText(call));
  const executed = yield* executePreparedToolCall(run, prepared);
  const finalized = finalizeExecutedToolCall(run, prepared, executed);
  return isPromiseLike(finalized) ? await finalized : finalized;
}

/** A call that arrived on an async stream: kept even when malformed, so it still gets its result (O1). */
function coerceCall(raw: unknown): ToolCall {
  const c = (typeof raw === 'object' && raw !== null ? raw : {}) as Partial<ToolCall>;
  return {
    id: typeof c.id === 'string' ? c.id : '',
    name: typeof c.name === 'string' ? c.name : '',
    arguments: c.arguments,
  };
}
