import * as v from 'valibot';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { defineTool, runTools, type ToolCall } from '../../lib/index.ts';
import { text } from '../helpers.ts';
import { drive, endOf, expectInvariants, expectNoListeners, expectQuiescent, hang, sleep, watchProcess, type ProcessWatch } from './harness.ts';

const input: ToolCall[] = [
  { id: 'c1', name: 'hang_tool', arguments: '{}' },
  { id: 'c2', name: 'lookup', arguments: '{"q":"x"}' },
];

function tools(probe: { bodies: string[]; c1Signal?: AbortSignal }) {
  const hangTool = defineTool({
    name: 'hang_tool',
    input: v.object({}),
    timeoutMs: 200,
    async execute(_input, { signal, toolCallId }) {
      probe.bodies.push(toolCallId);
      probe.c1Signal = signal;
      return hang();
    },
  });
  const lookup = defineTool({
    name: 'lookup',
    input: v.object({ q: v.string() }),
    async execute(_input, { signal, toolCallId }) {
      probe.bodies.push(toolCallId);
      await sleep(50, signal);
      return 'ok';
    },
  });
  return [hangTool, lookup];
}

describe('C11 A hung tool ends with a timeout error result', () => {
  let watch: ProcessWatch;
  beforeEach(() => {
    vi.useFakeTimers();
    watch = watchProcess();
  });
  afterEach(() => {
    watch.dispose();
    vi.useRealTimers();
  });

  // Documented decision (timeoutMs): at the limit the call's signal aborts with a
  // TimeoutError, then the tool gets abortGraceMs to settle. The public case says "about 200 ms";
  // with abortGraceMs: 0 the hung call ends at exactly 200 ms, with the default grace
  // (100 ms) at 300 ms.
  it('abortGraceMs 0: ends at 200 ms with a TimeoutError on the signal and a result naming the tool and limit', async () => {
    const probe: { bodies: string[]; c1Signal?: AbortSignal } = { bodies: [] };
    const controller = new AbortController();
    const driven = await drive(runTools(input, { tools: tools(probe), signal: controller.signal, abortGraceMs: 0 }));
    expectInvariants(input, driven);
    const [m1, m2] = driven.batch.messages;
    expect(m1!.isError).toBe(true);
    expect(text(m1!)).toContain('timed out');
    expect(text(m1!)).toContain('200');
    expect(text(m1!)).toContain('timed out after 200 ms');
    expect(text(m1!)).toContain('hang_tool');
    expect(endOf(driven, 'c1').outcome).toBe('timed_out');
    expect(driven.timed.find((t) => t.event.type === 'tool_execution_end' && t.event.toolCallId === 'c1')!.at).toBe(200);
    // Distinct from a user abort.
    expect(probe.c1Signal!.aborted).toBe(true);
    expect((probe.c1Signal!.reason as DOMException).name).toBe('TimeoutError');
    expect(controller.signal.aborted).toBe(false);
    expect(driven.batch.aborted).toBe(false);
    expect(m2!.isError).toBe(false);
    expect(text(m2!)).toBe('ok');
    expect(driven.settledAt).toBe(200);
    expectNoListeners(controller.signal);
    await expectQuiescent(driven, () => probe.bodies);
    watch.expectClean();
  });

  it('default grace: the hung call ends by 300 ms (limit + abortGraceMs), not later', async () => {
    const probe: { bodies: string[]; c1Signal?: AbortSignal } = { bodies: [] };
    const driven = await drive(runTools(input, { tools: tools(probe) }));
    expectInvariants(input, driven);
    expect(endOf(driven, 'c1').outcome).toBe('timed_out');
    expect(text(driven.batch.messages[0]!)).toMatch(/hang_tool.*timed out after 200 ms/);
    expect(driven.settledAt).toBeLessThanOrEqual(300);
    expect(driven.settledAt).toBe(300);
    expect(text(driven.batch.messages[1]!)).toBe('ok');
    await expectQuiescent(driven, () => probe.bodies);
    watch.expectClean();
  });

  it('variant: progress does not reset the timer (total-time mode) — times out at 300 ms', async () => {
    const calls: ToolCall[] = [{ id: 'c3', name: 'chatty', arguments: '{}' }];
    let bodies = 0;
    const chatty = defineTool({
      name: 'chatty',
      input: v.object({}),
      async *execute(_input, { signal }) {
        bodies++;
        for (let t = 100; t <= 1000; t += 100) {
          await sleep(100, signal);
          yield { t };
        }
        return 'finished';
      },
    });
    const driven = await drive(runTools(calls, { tools: [chatty], timeoutMs: 300 }));
    expectInvariants(calls, driven);
    expect(driven.timed.filter((t) => t.event.type === 'tool_execution_update').map((t) => t.at)).toEqual([100, 200]);
    expect(endOf(driven, 'c3').outcome).toBe('timed_out');
    expect(text(driven.batch.messages[0]!)).toContain('timed out after 300 ms');
    expect(driven.settledAt).toBe(300);
    await expectQuiescent(driven, () => bodies);
    watch.expectClean();
  });
});
