/**
 * A7: a generator that yields without ever awaiting a timer or I/O does not stop the run's
 * clock. Without the turn clock (lib/core/streams/turn.ts) the microtask queue never empties,
 * so no timer fires: not the call's timeout, not its grace period, not the consumer's own
 * `setTimeout` — not even vitest's test timeout. Each loop here is therefore bounded by
 * itself (`bounded`: it stops reading after `GIVE_UP_EVENTS` events), so a regression fails
 * with a wrong result instead of hanging the worker. The bound is a count, not a time: a loaded
 * machine slows the spinning tool and the clock alike, so it holds at any load. What is asserted is that the run ends, with the timeout's result, and that the
 * consumer's timer fired while the tool was spinning.
 */
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { defineTool, mergeGenerators, runTools, type ToolBatch, type ToolEvent } from '../../lib/index.ts';
import { text as textOf } from '../helpers.ts';

/**
 * Events after which a loop stops reading: with the turn clock a spinning call ends after its
 * timeout and grace (about 0.4 s of spinning: some 10^5 to 10^6 events); without it, never.
 */
const GIVE_UP_EVENTS = 10_000_000;

/** A tool that yields in a tight loop and ignores its signal; counts its `finally`. */
function spinner(name = 'spin', timeoutMs: number | undefined = 300) {
  const counts = { finally: 0, yields: 0 };
  const tool = defineTool({
    name,
    input: v.object({}),
    timeoutMs,
    async *execute() {
      try {
        for (;;) yield ++counts.yields;
      } finally {
        counts.finally++;
      }
    },
  });
  return { tool, counts };
}

/** A consumer timer armed before the run: `fired` turns true when it runs. */
function consumerTimer(ms = 50) {
  const timer = { fired: false, firedAfterYields: -1 };
  setTimeout(() => (timer.fired = true), ms);
  return timer;
}


/** Reads `run` with `for await`, giving up after GIVE_UP_EVENTS events; its events, and whether it gave up. */
async function bounded(run: AsyncGenerator<ToolEvent, ToolBatch, undefined>, onEvent: (event: ToolEvent) => void = () => {}) {
  let seen = 0;
  const events: ToolEvent[] = [];
  for await (const event of run) {
    if (event.type !== 'tool_execution_update') events.push(event);
    onEvent(event);
    if (++seen > GIVE_UP_EVENTS) {
      await run.return(undefined as never);
      return { events, gaveUp: true };
    }
  }
  return { events, gaveUp: false };
}

describe('A7 a generator that yields without awaiting does not stop the run clock', () => {
  it('A7: consumed with for await, the spinning call ends at its timeout (A4, A3) and the consumer timer fires meanwhile', async () => {
    const { tool, counts } = spinner();
    const timer = consumerTimer();
    let yieldsWhenTimerFired = -1;
    const { events, gaveUp } = await bounded(runTools([{ id: 'c1', name: 'spin', arguments: {} }], { tools: [tool], abortGraceMs: 100 }), () => {
      if (timer.fired && yieldsWhenTimerFired < 0) yieldsWhenTimerFired = counts.yields;
    });
    expect(gaveUp).toBe(false);
    // The consumer's timer fired while the tool was still yielding (the tool had yielded, and went on).
    expect(timer.fired).toBe(true);
    expect(yieldsWhenTimerFired).toBeGreaterThan(0);
    expect(counts.yields).toBeGreaterThan(yieldsWhenTimerFired);
    const end = events.find((e) => e.type === 'tool_execution_end');
    expect(end?.type === 'tool_execution_end' && end.outcome).toBe('timed_out');
    const result = events.find((e) => e.type === 'tool_result');
    expect(result?.type === 'tool_result' && textOf(result.message)).toContain('Tool "spin" timed out after 300 ms');
    // It ignored its signal, so the grace period (A3) ended it: its generator was returned.
    expect(counts.finally).toBe(1);
  });

  it('A7: consumed with a run.next() loop, the spinning call ends at its timeout', async () => {
    const { tool } = spinner();
    const timer = consumerTimer();
    const run = runTools([{ id: 'c1', name: 'spin', arguments: {} }], { tools: [tool] });
    let updates = 0;
    let step = await run.next();
    while (step.done !== true && updates < GIVE_UP_EVENTS) {
      if (step.value.type === 'tool_execution_update') updates++;
      step = await run.next();
    }
    expect(step.done).toBe(true);
    expect(timer.fired).toBe(true);
    expect(updates).toBeGreaterThan(0);
    const batch = step.value as ToolBatch;
    expect(batch.messages[0]!.isError).toBe(true);
    expect(textOf(batch.messages[0]!)).toContain('timed out after 300 ms');
  });

  it('A7: a sibling call awaiting its own timer ends with its result while another call spins, and two spinning runs both end', async () => {
    const { tool: spinA } = spinner('spin_a', 300);
    const { tool: spinB } = spinner('spin_b', 400);
    const nap = defineTool({
      name: 'nap',
      input: v.object({}),
      execute: () => new Promise<string>((resolve) => setTimeout(() => resolve('rested'), 20)),
    });
    const runA = bounded(
      runTools(
        [
          { id: 'a1', name: 'spin_a', arguments: {} },
          { id: 'a2', name: 'nap', arguments: {} },
        ],
        { tools: [spinA, nap] },
      ),
    );
    const runB = bounded(runTools([{ id: 'b1', name: 'spin_b', arguments: {} }], { tools: [spinB] }));
    const [a, b] = await Promise.all([runA, runB]);
    expect(a.gaveUp || b.gaveUp).toBe(false);
    const outcomes = [...a.events, ...b.events].flatMap((e) => (e.type === 'tool_execution_end' ? [`${e.toolCallId}:${e.outcome}`] : []));
    expect(outcomes.sort()).toEqual(['a1:timed_out', 'a2:ok', 'b1:timed_out']);
    // The nap ended while spin_a was still running: its end came first.
    const ends = a.events.flatMap((e) => (e.type === 'tool_execution_end' ? [e.toolCallId] : []));
    expect(ends).toEqual(['a2', 'a1']);
  });

  it("A7: the run's own signal, aborted by a consumer timer, stops a spinning call (A1, A3)", async () => {
    const { tool } = spinner('spin', undefined);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const { events, gaveUp } = await bounded(runTools([{ id: 'c1', name: 'spin', arguments: {} }], { tools: [tool], signal: controller.signal, abortGraceMs: 50 }));
    expect(gaveUp).toBe(false);
    const end = events.find((e) => e.type === 'tool_execution_end');
    expect(end?.type === 'tool_execution_end' && end.outcome).toBe('abandoned'); // it ignored the abort: the grace period (A3) ended it
  });

  it('A7: mergeGenerators over a spinning source ends when its signal times out', async () => {
    async function* spin() {
      for (let i = 0; ; i++) yield i;
    }
    let items = 0;
    const merged = mergeGenerators([spin(), spin()], { signal: AbortSignal.timeout(100) });
    const error = await (async () => {
      try {
        for await (const _item of merged) {
          items++;
          if (items > GIVE_UP_EVENTS) return 'gave up';
        }
        return 'ended';
      } catch (e) {
        return e;
      }
    })();
    expect((error as Error).name).toBe('TimeoutError');
    expect(items).toBeGreaterThan(0);
  });
});
