/**
 * Watching a batch: a generator that passes a `runTools` run through unchanged and tells a
 * {@link BatchSink} each event with the time it saw it. The recorder (a JSON Lines file) and
 * the live inspector (a {@link Timeline}) are sinks.
 *
 * @module
 */
import type { ToolBatch, ToolEvent } from '../core/run/events.ts';
import { Timeline } from './timeline.ts';

/** Where a watched batch's events go, each with its time (epoch ms). */
export interface BatchSink {
  begin(batch: number, label: string, t: number): void;
  event(batch: number, t: number, event: ToolEvent): void;
  end(batch: number, t: number, outcome: { aborted: boolean; paused: number }): void;
}

/** A {@link Timeline} as a sink. */
export function timelineSink(timeline: Timeline): BatchSink {
  return {
    begin: (batch, label, t) => timeline.beginBatch(batch, label, t),
    event: (batch, t, event) => timeline.event(batch, t, event),
    end: (batch, t, outcome) => timeline.endBatch(batch, t, outcome),
  };
}

/**
 * `run` as it is — same events, same return value, same `return()`/`throw()` — with each
 * event told to `sink`. The batch begins at the first `next()` (calls wait for a slot from
 * then on) and ends when `run` returns, throws, or the consumer leaves.
 *
 * Why a sink that throws is ignored: watching must never change the run it watches.
 */
export async function* watchRun<E extends ToolEvent, B extends ToolBatch>(run: AsyncGenerator<E, B, undefined>, sink: BatchSink, batch: number, label: string): AsyncGenerator<E, B, undefined> {
  const tell = (f: () => void): void => {
    try {
      f();
    } catch {
      // see above
    }
  };
  tell(() => sink.begin(batch, label, Date.now()));
  let outcome = { aborted: false, paused: 0 };
  try {
    for (;;) {
      const step = await run.next();
      if (step.done === true) {
        outcome = { aborted: step.value.aborted === true, paused: step.value.paused?.requests.length ?? 0 };
        return step.value;
      }
      tell(() => sink.event(batch, Date.now(), step.value));
      yield step.value;
    }
  } finally {
    tell(() => sink.end(batch, Date.now(), outcome));
    // The consumer left early: let the run answer its calls and stop (what `for await` would do).
    await run.return(undefined as never);
  }
}
