import * as v from 'valibot';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { defineTool, runTools, type RunToolsOptions, type ToolCall, type ToolEvent } from '../../lib/index.ts';
import { ofType, text } from '../helpers.ts';
import { drive, endOf, expectInvariants, expectNoListeners, expectQuiescent, sleep, watchProcess, type ProcessWatch } from './harness.ts';

const input: ToolCall[] = [1, 2, 3, 4, 5].map((i) => ({ id: `c${i}`, name: 'lookup', arguments: `{"q":"${i}"}` }));

/** ci sleeps 10*i ms and returns "r"+i; records bodies, finally blocks and signals. */
function lookupTool() {
  const probe = { bodies: [] as string[], finallies: [] as string[], signals: new Map<string, AbortSignal>() };
  const tool = defineTool({
    name: 'lookup',
    input: v.object({ q: v.string() }),
    async *execute({ q }, { signal, toolCallId }) {
      probe.bodies.push(toolCallId);
      probe.signals.set(toolCallId, signal);
      try {
        await sleep(10 * Number(q), signal);
        return `r${q}`;
      } finally {
        probe.finallies.push(toolCallId);
      }
    },
  });
  return { tool, probe };
}

describe('C3 An after-hook that throws must not lose the other results or deadlock', () => {
  let watch: ProcessWatch;
  beforeEach(() => {
    vi.useFakeTimers();
    watch = watchProcess();
  });
  afterEach(() => {
    watch.dispose();
    vi.useRealTimers();
  });

  it('turns an afterToolCall throw into c2’s error result and keeps the other four', async () => {
    const { tool, probe } = lookupTool();
    const controller = new AbortController();
    const options: RunToolsOptions = {
      tools: [tool],
      signal: controller.signal,
      afterToolCall: ({ toolCall }) => {
        if (toolCall.id === 'c2') throw new Error('after-hook boom');
      },
    };
    const driven = await drive(runTools(input, options));
    expectInvariants(input, driven);
    expect(driven.batch.messages.map((m) => [m.toolCallId, m.isError, text(m)])).toEqual([
      ['c1', false, 'r1'],
      ['c2', true, 'Tool "lookup" ran, but afterToolCall failed: after-hook boom'],
      ['c3', false, 'r3'],
      ['c4', false, 'r4'],
      ['c5', false, 'r5'],
    ]);
    expect(endOf(driven, 'c2').outcome).toBe('error');
    expect(ofType(driven.events, 'tool_execution_start')).toHaveLength(5);
    expect(ofType(driven.events, 'tool_execution_end')).toHaveLength(5);
    expect(driven.settledAt).toBe(50);
    expectNoListeners(controller.signal);
    await expectQuiescent(driven, () => probe.bodies);
    watch.expectClean();
  });

  it('an async afterToolCall rejection is attached to c2 only as well', async () => {
    const { tool, probe } = lookupTool();
    const driven = await drive(
      runTools(input, {
        tools: [tool],
        afterToolCall: async ({ toolCall }) => {
          await Promise.resolve();
          if (toolCall.id === 'c2') throw new Error('after-hook boom');
        },
      }),
    );
    expectInvariants(input, driven);
    expect(driven.batch.messages.map((m) => m.isError)).toEqual([false, true, false, false, false]);
    expect(text(driven.batch.messages[1]!)).toContain('after-hook boom');
    expect(driven.settledAt).toBe(50);
    await expectQuiescent(driven, () => probe.bodies);
    watch.expectClean();
  });

  it('variant: the consumer’s end-event handler throws — the error reaches the caller, every running tool is stopped', async () => {
    // toolrun has no event listeners: the consumer's loop body is the listener. Documented
    // decision (runTools, contract O1 "consumer exit excepted", A5): a consumer that throws
    // leaves the loop, so every running tool's signal aborts and every generator gets
    // return(); no result follows. The public case's "c2 must never be missing" applies to the
    // after-hook variant above; here the consumer itself chose to stop reading.
    const { tool, probe } = lookupTool();
    const controller = new AbortController();
    const run = runTools(input, { tools: [tool], signal: controller.signal });
    const seen: ToolEvent[] = [];
    const boom = new Error('listener boom');
    let thrown: unknown;
    const consumer = (async () => {
      try {
        for await (const event of run) {
          seen.push(event);
          if (event.type === 'tool_execution_end' && event.toolCallId === 'c2') throw boom;
        }
      } catch (error) {
        thrown = error;
      }
    })();
    await vi.advanceTimersByTimeAsync(20);
    await consumer;
    expect(thrown).toBe(boom);
    // c1 and c2 had ended; c3…c5 were running and are stopped, each with its finally run.
    expect(ofType(seen, 'tool_result').map((r) => r.message.toolCallId)).toEqual(['c1']);
    for (const id of ['c3', 'c4', 'c5']) {
      const signal = probe.signals.get(id)!;
      expect(signal.aborted, id).toBe(true);
      expect((signal.reason as Error).name).toBe('AbortError');
    }
    await vi.advanceTimersByTimeAsync(0);
    expect([...probe.finallies].sort()).toEqual(['c1', 'c2', 'c3', 'c4', 'c5']);
    expect(await run.next()).toEqual({ done: true, value: undefined });
    expectNoListeners(controller.signal);
    const bodies = probe.bodies.length;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(probe.bodies).toHaveLength(bodies);
    expect(vi.getTimerCount()).toBe(0);
    watch.expectClean();
  });

  it('variant: beforeToolCall throws for c2 — its body never runs, it gets an error, the others run', async () => {
    const { tool, probe } = lookupTool();
    const driven = await drive(
      runTools(input, {
        tools: [tool],
        beforeToolCall: async ({ toolCall }) => {
          if (toolCall.id === 'c2') throw new Error('before-hook boom');
        },
      }),
    );
    expectInvariants(input, driven);
    expect(probe.bodies).toEqual(['c1', 'c3', 'c4', 'c5']);
    expect(driven.batch.messages.map((m) => [m.toolCallId, m.isError])).toEqual([
      ['c1', false],
      ['c2', true],
      ['c3', false],
      ['c4', false],
      ['c5', false],
    ]);
    expect(text(driven.batch.messages[1]!)).toContain('beforeToolCall failed: before-hook boom');
    expect(endOf(driven, 'c2').outcome).toBe('rejected');
    expect(driven.batch.messages.filter((m) => !m.isError).map(text)).toEqual(['r1', 'r3', 'r4', 'r5']);
    expect(driven.settledAt).toBe(50);
    await expectQuiescent(driven, () => probe.bodies);
    watch.expectClean();
  });
});
