/**
 * `runTools`: wires the stages, the scheduler, the merge and the reorder buffer.
 *
 * Data flow:
 *
 * ```
 * calls ─▶ scheduleCalls ─▶ one CallSource per call ─▶ mergeGenerators ─▶ runTools loop
 *            (P1, S2, S3)     prepare → execute →        (M1–M6,            ├─ start / update: as they come (O5)
 *                             finalize                   concurrency S1)    ├─ end: completion order (O3)
 *                                                                           └─ ReorderBuffer ─▶ tool_result: call order (O2)
 * ```
 *
 * @module
 */
import { consumerExitReason } from './abort.ts';
import type { ToolBatch, ToolEvent } from './events.ts';
import type { RunToolsOptions } from './options.ts';
import { checkRunToolsArguments, RunState } from './run-state.ts';
import { scheduleCalls } from './scheduler.ts';
import { notRunText } from './stages/prepare.ts';
import { finalizedText, type Finalized } from './stages/outcome.ts';
import { createToolResultMessage, toolExecutionEndEvent } from './stages/result.ts';
import { closeWithoutWaiting, mergeGenerators } from './streams/merge.ts';
import { ReorderBuffer } from './streams/reorder-buffer.ts';
import type { ToolCall, ToolResultMessage } from './tool.ts';

/**
 * Runs the tool calls of one assistant message.
 *
 * Returns an async generator of {@link ToolEvent}s; its return value is the
 * {@link ToolBatch}: every result message in call order, and whether the batch asks the
 * agent loop to stop. Every call gets exactly one `tool_result`, whatever happens —
 * success, throw, unknown tool, bad arguments, block, timeout, abort — unless the consumer
 * leaves the loop early (O1). No failure of a tool or a hook is thrown out of the
 * generator (P4).
 *
 * @param calls - the calls in the order the model wrote them: an array, any iterable, or
 *   an async iterable of calls still arriving from a stream (S4).
 * @param options - the tools and how to run them; see {@link RunToolsOptions}.
 * @throws TypeError at once, before anything starts, when `calls` or `options` are
 *   malformed (not iterable, a call without a string name or id, duplicate tool names, a
 *   bad `maxConcurrency`…); the message names the field and the value received.
 *
 * @example
 * ```ts
 * const run = runTools(fromAnthropic(message), { tools: [readFile, shell], signal });
 * for await (const event of run) {
 *   if (event.type === 'tool_execution_update') draw(event.toolCallId, event.progress);
 *   if (event.type === 'tool_result') history.push(event.message);
 * }
 * ```
 */
export function runTools(
  calls: Iterable<ToolCall> | AsyncIterable<ToolCall>,
  options: RunToolsOptions,
): AsyncGenerator<ToolEvent, ToolBatch, undefined> {
  checkRunToolsArguments(calls, options);
  const list = Symbol.asyncIterator in calls ? calls : Array.isArray(calls) ? calls : Array.from(calls as Iterable<ToolCall>);
  const run = new RunState(options);
  if (Array.isArray(list)) run.received = list;
  return runBatch(run, list);
}

async function* runBatch(run: RunState, calls: Iterable<ToolCall> | AsyncIterable<ToolCall>): AsyncGenerator<ToolEvent, ToolBatch, undefined> {
  const merged = mergeGenerators<ToolEvent, Finalized>(scheduleCalls(run, calls), { concurrency: run.concurrency });
  const order = new ReorderBuffer<ToolResultMessage>();
  const messages: ToolResultMessage[] = [];
  let handedOut = 0;
  let terminating = 0;
  let completed = false;
  try {
    for (;;) {
      const step = await merged.next();
      if (step.done === true) break;
      const item = step.value;
      if (!item.done) {
        if (item.value.type === 'tool_execution_start') handedOut++;
        yield item.value;
        continue;
      }
      // Stage 4: the end event, in completion order (O3); stage 5: results in call order (O2).
      const finalized = item.value;
      run.markEnded(finalized.index);
      if (finalized.result.terminate === true && !finalized.isError) terminating++;
      yield toolExecutionEndEvent(finalized);
      order.push(finalized.index, createToolResultMessage(finalized));
      for (let message = order.shift(); message !== undefined; message = order.shift()) {
        messages.push(message);
        yield { type: 'tool_result', index: messages.length - 1, message };
      }
    }
    // Calls the scheduler never handed out because the run stopped: answered, never run (A2).
    for (let index = handedOut; index < run.received.length; index++) {
      const call = run.received[index]!;
      const finalized = finalizedText(index, call, 'not_run', notRunText(call));
      yield { type: 'tool_execution_start', toolCallId: call.id, toolName: call.name, index, args: call.arguments };
      run.markEnded(index);
      yield toolExecutionEndEvent(finalized);
      const message = createToolResultMessage(finalized);
      messages.push(message);
      yield { type: 'tool_result', index, message };
    }
    completed = true;
    return {
      messages,
      terminate: messages.length > 0 && terminating === messages.length,
      aborted: run.abort.cause === 'run',
    };
  } finally {
    if (!completed) {
      // The consumer left (break, throw, return()) or something failed: stop every tool,
      // then close the merge, which returns every source without awaiting it (A5, M5).
      run.abort.abort('consumer', consumerExitReason());
      closeWithoutWaiting(merged);
    }
    run.dispose();
  }
}
