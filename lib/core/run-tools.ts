/**
 * `runTools`: the run loop. It hands the scheduler's events to the consumer, feeds it the
 * merge engine's records, and cleans up however the run ends.
 *
 * Data flow:
 *
 * ```
 * calls ─▶ Scheduler ──── prepare (serial, P1) ───▶ tool generators ─▶ MergeEngine (M1–M6)
 *            ▲  hands out (S1–S4)                                          │ records
 *            └──────────── handle(record): update / end / finalize ◀──────┘
 *                              │ outbox: start, update (live, O5), end (completion order, O3),
 *                              │ tool_result via ReorderBuffer (call order, O2)
 *                              ▼
 *                     runTools ── for await ──▶ consumer
 * ```
 *
 * One async generator stands between a tool's step and the consumer: the tools' steps go
 * straight into the merge engine's queue, and the loop below turns them into events.
 *
 * @module
 */
import { consumerExitReason, MAX_TIMER_MS } from './abort.ts';
import type { ToolBatch, ToolEvent } from './events.ts';
import type { RunToolsOptions } from './options.ts';
import { checkRunToolsArguments, RunState } from './run-state.ts';
import { Scheduler } from './scheduler.ts';
import { Slot } from './streams/merge.ts';
import type { ToolCall } from './tool.ts';

/**
 * Runs the tool calls of one assistant message.
 *
 * Returns an async generator of {@link ToolEvent}s; its return value is the
 * {@link ToolBatch}: every result message in call order, whether the batch asks the agent
 * loop to stop, and whether the run was aborted. Every call gets exactly one
 * `tool_result`, whatever happens — success, throw, unknown tool, bad arguments, block,
 * timeout, abort — unless the consumer leaves the loop early (O1). No failure of a tool or
 * a hook is thrown out of the generator (P4).
 *
 * @param calls - the calls in the order the model wrote them: an array, any iterable, or
 *   an async iterable of calls still arriving from a stream (S4).
 * @param options - the tools and how to run them; see {@link RunToolsOptions}.
 * @throws TypeError at once, before anything starts, when `calls` or `options` are
 *   malformed (not iterable, a call without a string name or id, duplicate tool names, a
 *   bad `maxConcurrency`…); the message names the field and the value received. The
 *   generator itself throws only the error of an async `calls` iterable, after answering
 *   every call it had received.
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
  const list = isSyncIterable(calls) && !Array.isArray(calls) ? Array.from(calls) : calls;
  checkRunToolsArguments(list, options);
  const run = new RunState(options);
  const scheduler = new Scheduler(run, list);
  run.onStop = () => scheduler.engine.notify();
  return runLoop(run, scheduler);
}

function isSyncIterable(value: unknown): value is Iterable<ToolCall> {
  return typeof value === 'object' && value !== null && Symbol.iterator in value && !(Symbol.asyncIterator in value);
}

async function* runLoop(run: RunState, scheduler: Scheduler): AsyncGenerator<ToolEvent, ToolBatch, undefined> {
  const { engine, outbox } = scheduler;
  let completed = false;
  try {
    run.abort.attach();
    for (;;) {
      // Hand every pending event to the consumer; a Slot marks a tool to pull once the
      // update before it has been taken (one step ahead of the consumer).
      while (scheduler.outboxHead < outbox.length) {
        const item = outbox[scheduler.outboxHead]!;
        outbox[scheduler.outboxHead++] = undefined as never;
        if (item instanceof Slot) engine.pull(item);
        else yield item;
      }
      outbox.length = 0;
      scheduler.outboxHead = 0;

      const record = engine.take();
      if (record !== undefined) {
        scheduler.handle(record);
        continue;
      }
      scheduler.pump();
      if (outbox.length > 0) continue;
      if (scheduler.finished) break;
      await engine.wait();
    }
    completed = true;
    if (scheduler.inputError !== undefined) throw scheduler.inputError.error;
    return {
      messages: scheduler.messages,
      terminate: scheduler.messages.length > 0 && scheduler.terminating === scheduler.messages.length,
      aborted: run.abortChangedOutcome,
    };
  } finally {
    run.dispose();
    if (!completed) {
      // The consumer left (break, throw, return()): abort every tool, call every generator's
      // return(), and wait for their cleanup (`finally` blocks) — but never longer than the
      // grace period: a generator parked in an await that ignores its signal cannot be
      // unwound, and must not hang the consumer's break (A5, M5).
      run.abort.abort('consumer', consumerExitReason());
      const cleanups = scheduler.close();
      if (cleanups.length > 0) await waitAtMost(Promise.all(cleanups), run.abortGraceMs);
    }
  }
}

/** Waits for `promise` (which never rejects), or `ms` milliseconds, whichever comes first; the timer is cleared either way. */
async function waitAtMost(promise: Promise<unknown>, ms: number): Promise<void> {
  if (ms <= 0) return;
  if (ms > MAX_TIMER_MS) {
    await promise;
    return;
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const elapsed = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  try {
    await Promise.race([promise, elapsed]);
  } finally {
    clearTimeout(timer);
  }
}
