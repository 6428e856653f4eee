/**
 * A7 through composition: a child tool that yields in a tight loop, run by `callTool` or
 * `withTimeout` inside a parent tool that never yields itself, still meets its own timeout;
 * and a run read through `pipeEvents` and ix operators still meets its calls' timeouts. Each
 * loop stops reading after `GIVE_UP_MS` of wall time, so a regression (no timer fires) fails
 * instead of hanging the worker.
 */
import { filter, map } from 'ix/asynciterable/operators';
import { from } from 'ix/asynciterable';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { callTool, defineTool, pipeEvents, runTools, withTimeout, type ToolBatch } from '../../lib/index.ts';
import { text as textOf } from '../helpers.ts';

const GIVE_UP_MS = 10_000;

const spin = defineTool({
  name: 'spin',
  input: v.object({}),
  timeoutMs: 300,
  async *execute() {
    for (let i = 0; ; i++) yield i;
  },
});


async function settleBounded(run: AsyncGenerator<unknown, ToolBatch, undefined>): Promise<ToolBatch | 'gave up'> {
  const started = Date.now();
  for (;;) {
    const step = await run.next();
    if (step.done === true) return step.value;
    if (Date.now() - started > GIVE_UP_MS) {
      await run.return(undefined as never);
      return 'gave up';
    }
  }
}

describe('A7 composition: a spinning child does not stop the clock', () => {
  it('A7: callTool of a spinning child, drained by a parent that never yields, throws the child TimeoutError', async () => {
    let timerFired = false;
    setTimeout(() => (timerFired = true), 50);
    const parent = defineTool({
      name: 'parent',
      input: v.object({}),
      async execute(_input, ctx) {
        let steps = 0;
        try {
          // Drains the child without yielding: only the child-call loop's own turn keeps time going.
          const started = Date.now();
          for await (const _progress of callTool(spin, {}, ctx, { timeoutMs: 200, graceMs: 50 })) {
            if (++steps % 1024 === 0 && Date.now() - started > GIVE_UP_MS) return 'gave up';
          }
          return 'the child ended by itself';
        } catch (error) {
          return `child stopped after ${steps > 0 ? 'some' : 'no'} steps: ${(error as Error).name}`;
        }
      },
    });
    const batch = await settleBounded(runTools([{ id: 'p1', name: 'parent', arguments: {} }], { tools: [parent] }));
    expect(batch).not.toBe('gave up');
    expect(textOf((batch as ToolBatch).messages[0]!)).toBe('child stopped after some steps: TimeoutError');
    expect(timerFired).toBe(true);
  });

  it('A7: withTimeout around a spinning tool gives the timeout result', async () => {
    const limited = withTimeout(spin, 150, { graceMs: 50 });
    const batch = await settleBounded(runTools([{ id: 'w1', name: 'spin', arguments: {} }], { tools: [limited] }));
    expect(batch).not.toBe('gave up');
    const message = (batch as ToolBatch).messages[0]!;
    expect(message.isError).toBe(true);
    expect(textOf(message)).toContain('timed out');
  });

  it('A7: a run read through pipeEvents and ix operators ends at the spinning call timeout', async () => {
    let timerFired = false;
    setTimeout(() => (timerFired = true), 50);
    const started = Date.now();
    const results: string[] = [];
    const piped = pipeEvents(
      (signal) => runTools([{ id: 'c1', name: 'spin', arguments: {} }], { tools: [spin], signal, abortGraceMs: 50 }),
      (events) =>
        from(events).pipe(
          filter((e) => e.type === 'tool_result' || Date.now() - started > GIVE_UP_MS),
          map((e) => (e.type === 'tool_result' ? textOf(e.message) : 'gave up')),
        ),
    );
    for await (const text of piped) {
      results.push(text);
      if (text === 'gave up') break;
    }
    expect(results).toHaveLength(1);
    expect(results[0]).toContain('Tool "spin" timed out after 300 ms');
    expect(timerFired).toBe(true);
  });
});
