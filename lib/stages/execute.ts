/**
 * Stage 2, execute: runs a prepared call's tool under its own {@link CallScope} and turns
 * every way it can end into an {@link Executed} value (contract P4, A1–A4).
 *
 * @module
 */
import { ABANDONED, CallScope } from '../abort.ts';
import type { ToolExecutionUpdateEvent } from '../events.ts';
import { closeWithoutWaiting } from '../streams/merge.ts';
import type { RunState } from '../run-state.ts';
import { normalizeToolOutput, textContent, type ToolContext } from '../tool.ts';
import { errorText, type Executed, type Prepared } from './outcome.ts';

/**
 * Executes a prepared call as an async generator: yields a `tool_execution_update` event
 * for every value the tool yields (O5), returns how the call ended. Never throws: a
 * synchronous throw, a rejection, a non-Error value all become `outcome: 'error'` (P4).
 *
 * When the call's signal aborts (run abort, its timeout), the tool gets `abortGraceMs` to
 * settle; a tool that does not is abandoned: its result is synthesized and its generator
 * gets `return()` without being awaited (A3). Anything it does later is dropped.
 */
export async function* executePreparedToolCall(
  run: RunState,
  prepared: Prepared,
): AsyncGenerator<ToolExecutionUpdateEvent, Executed, undefined> {
  const { call, tool, index } = prepared;
  const scope = new CallScope(call.name, tool.timeoutMs ?? run.options.timeoutMs, run.abortGraceMs);
  const context: ToolContext = { toolCallId: call.id, toolName: call.name, signal: scope.signal };
  run.abort.running.add(scope);
  run.setInProgress(call.id, true);
  let iterator: AsyncIterator<unknown, unknown, undefined> | undefined;
  let finished = false;
  try {
    const output: unknown = tool.execute(prepared.args, context);
    if (isAsyncIterator(output)) {
      iterator = output;
      for (;;) {
        const step = await scope.guard(iterator.next());
        if (step.done === true) {
          finished = true;
          return ok(step.value, run.maxResultChars);
        }
        yield { type: 'tool_execution_update', toolCallId: call.id, toolName: call.name, index, progress: step.value };
      }
    }
    const value = isPromiseLike(output) ? await scope.guard(Promise.resolve(output)) : output;
    return ok(value, run.maxResultChars);
  } catch (error) {
    finished = error !== ABANDONED;
    return failed(scope, call.name, error);
  } finally {
    // A generator that did not finish (abandoned, or the consumer left while it was
    // suspended at a yield) is told to stop; its finally blocks run (A5).
    if (iterator !== undefined && !finished) closeWithoutWaiting(iterator);
    scope.dispose();
    run.abort.running.delete(scope);
    run.setInProgress(call.id, false);
  }
}

function ok(value: unknown, maxChars: number): Executed {
  return { result: boundResult(normalizeToolOutput(value), maxChars), isError: false, outcome: 'ok' };
}

/** Classifies a throw: the tool's own failure, or the consequence of an abort or a timeout. */
function failed(scope: CallScope, toolName: string, error: unknown): Executed {
  const cause = scope.cause;
  if (error === ABANDONED) {
    const text =
      cause === 'timeout'
        ? `Tool "${toolName}" timed out after ${scope.timeoutMs} ms and did not stop when asked; its outcome is unknown and it may still be running.`
        : `Interrupted: the run was aborted while tool "${toolName}" was running, and the tool did not confirm cancellation; its outcome is unknown (it may have finished or had partial effects).`;
    return errorExecuted(cause === 'timeout' ? 'timed_out' : 'abandoned', text);
  }
  if (cause === 'timeout') {
    return errorExecuted('timed_out', `Tool "${toolName}" timed out after ${scope.timeoutMs} ms and was stopped.`);
  }
  if (cause !== undefined) {
    return errorExecuted(
      'interrupted',
      `Interrupted: the run was aborted while tool "${toolName}" was running; it stopped before finishing and may have had partial effects.`,
    );
  }
  // An AbortError the tool raised on its own (its fetch timed out, say) is an ordinary
  // failure: the run was not cancelled (case C10, variant V).
  return errorExecuted('error', errorText(error));
}

function errorExecuted(outcome: Executed['outcome'], text: string): Executed {
  return { result: { content: textContent(text) }, isError: true, outcome };
}

/**
 * Bounds each text block to `maxChars` characters, keeping its head and tail around a
 * marker that states the original size (case C20).
 */
export function boundResult<R extends { content: { type: string }[] }>(result: R, maxChars: number): R {
  let changed = false;
  const content = result.content.map((block) => {
    if (block.type !== 'text') return block;
    const text = (block as unknown as { text: unknown }).text;
    if (typeof text !== 'string' || text.length <= maxChars) return block;
    changed = true;
    const tail = Math.floor(maxChars / 4);
    const head = maxChars - tail;
    const marker = `\n[truncated: ${text.length} chars; showing ${maxChars}]\n`;
    return { ...block, text: text.slice(0, head) + marker + text.slice(text.length - tail) };
  });
  return changed ? { ...result, content } : result;
}

function isAsyncIterator(value: unknown): value is AsyncIterator<unknown, unknown, undefined> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as AsyncIterator<unknown>).next === 'function' &&
    Symbol.asyncIterator in value
  );
}

/** True for promises and other thenables. */
export function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as PromiseLike<unknown>).then === 'function';
}
