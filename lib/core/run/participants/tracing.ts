/**
 * Tracing as a participant in the life of each call (contract T1–T3; the seam is
 * seams/lifecycle.ts, the outside interface seams/tracing.ts): the batch's trace from the
 * first `next()` to the end, each call's trace from its hand-out to its end, with its
 * progress. Only a run with `options.tracing` has this participant; the spans that prepare,
 * `execute` and `afterToolCall` run in are entered through the call's own trace
 * ({@link executeTraced}, `CallRecord.trace`), so an untraced call reads one field for them.
 *
 * @module
 */
import type { CallRecord } from '../call.ts';
import type { CallEnd, CallLifecycle } from '../../seams/lifecycle.ts';
import { executeToolCall } from '../stages/execute.ts';
import { Outcome } from '../stages/outcome.ts';
import { TracedBatch, TracedIterator, type BatchTraceEnd, type RunTracing, type TracedCall, type TraceHeaders } from '../../seams/tracing.ts';
import type { Tool } from '../../tool/tool.ts';

/** What the tracing participant reads of its run when the batch's trace starts and ends. */
interface TracedRun {
  readonly sequential: boolean;
  readonly options: { readonly traceContext?: TraceHeaders | undefined };
  readonly resumed: { readonly traceContext?: TraceHeaders | undefined } | undefined;
  readonly received: readonly unknown[];
  readonly abortChangedOutcome: boolean;
  readonly terminate: boolean;
}

export class TracingParticipant implements CallLifecycle<CallRecord, Outcome> {
  readonly #tracing: RunTracing;
  /** The batch's trace, from {@link start} to {@link end}; `undefined` before and after (then no call gets a trace). */
  #batch: TracedBatch | undefined;
  /** The W3C trace context of the batch's span when it paused, for its state. */
  pausedTraceContext: TraceHeaders | undefined;

  constructor(tracing: RunTracing) {
    this.#tracing = tracing;
  }

  /**
   * Starts the batch's trace: on the first `next()`, before any call is handed out; for a
   * resumed run, once its state is read (the paused batch's trace context is in it).
   */
  start(run: TracedRun): void {
    this.#batch = TracedBatch.start(this.#tracing, {
      traceContext: run.options.traceContext,
      mode: run.sequential ? 'sequential' : 'parallel',
      resumedFrom: run.resumed?.traceContext,
    });
  }

  /**
   * Ends the batch's trace (and the trace of every call still open: as interrupted, or as
   * pending approval when the batch paused); once. A paused batch's span context is read
   * first, for its state.
   */
  end(run: TracedRun, outcome: BatchTraceEnd['outcome'], error?: unknown): void {
    const batch = this.#batch;
    if (batch === undefined) return;
    this.#batch = undefined;
    if (outcome === 'paused') this.pausedTraceContext = batch.headers();
    const end: BatchTraceEnd = { outcome, calls: run.received.length, aborted: run.abortChangedOutcome, terminate: run.terminate };
    batch.end(error === undefined ? end : { ...end, error });
  }

  handOut(record: CallRecord, tool: Tool | undefined): boolean {
    this.answered(record, tool);
    return true;
  }

  answered(record: CallRecord, tool: Tool | undefined): void {
    const batch = this.#batch;
    if (batch === undefined) return;
    const call = record.call;
    record.trace = batch.startCall({ toolCallId: call.id, toolName: call.name, index: record.index, tool });
  }

  prepared(): undefined {
    return undefined;
  }

  progress(record: CallRecord, value: unknown): void {
    record.trace?.progress(value);
  }

  ended(record: CallRecord, end: CallEnd): void {
    record.trace?.end(end.outcome, end.isError, end.result, end.thrown?.value);
  }
}

/** Stage 2 of a traced call: `execute` in the call's span, and every later `next()` and `return()` of the tool too, across its suspensions. */
export function executeTraced(trace: TracedCall, record: CallRecord): Outcome | AsyncIterator<unknown, unknown, undefined> {
  const started = trace.run(executeToolCall, record);
  return started instanceof Outcome ? started : new TracedIterator(trace, started);
}
