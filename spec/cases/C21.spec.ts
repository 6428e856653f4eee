import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { defineTool, runTools, type ToolCall } from '../../lib/index.ts';
import { ofType, text } from '../helpers.ts';
import { drive, expectInvariants, expectNoListeners, expectQuiescent, sleep, sleepIgnoring, watchProcess, type Driven, type ProcessWatch } from './harness.ts';

const input: ToolCall[] = [
  { id: 'c1', name: 'slow_scan', arguments: '{}' },
  { id: 'c2', name: 'quick', arguments: '{}' },
];

function tools() {
  const slowScan = defineTool({
    name: 'slow_scan',
    input: { type: 'object' },
    async *execute(_input, { signal }) {
      yield { pct: 0 };
      await sleep(100, signal);
      yield { pct: 50 };
      await sleep(100, signal);
      yield { pct: 100 };
      await sleep(10, signal);
      return 'done';
    },
  });
  const quick = defineTool({
    name: 'quick',
    input: { type: 'object' },
    async execute(_input, { signal }) {
      await sleep(20, signal);
      return 'q';
    },
  });
  return [slowScan, quick];
}

function expectAllDelivered(driven: Driven): void {
  expectInvariants(input, driven);
  const progress = ofType(driven.events, 'tool_execution_update');
  expect(progress.map((e) => [e.toolCallId, e.progress])).toEqual([
    ['c1', { pct: 0 }],
    ['c1', { pct: 50 }],
    ['c1', { pct: 100 }],
  ]);
  const lastProgress = driven.events.lastIndexOf(progress[2]!);
  const endC1 = driven.events.findIndex((e) => e.type === 'tool_execution_end' && e.toolCallId === 'c1');
  expect(endC1).toBeGreaterThan(lastProgress);
  expect(ofType(driven.events, 'tool_execution_end')).toHaveLength(2);
  expect(driven.batch.messages.map((m) => [m.toolCallId, m.isError, text(m)])).toEqual([
    ['c1', false, 'done'],
    ['c2', false, 'q'],
  ]);
}

describe('C21 Progress must stream live, merged across calls, and never be dropped', () => {
  let watch: ProcessWatch;
  beforeEach(() => {
    vi.useFakeTimers();
    watch = watchProcess();
  });
  afterEach(() => {
    watch.dispose();
    vi.useRealTimers();
  });

  it('consumer A (fast) gets each progress at its yield time, and end(c2) at 20 ms before pct 50', async () => {
    const controller = new AbortController();
    const driven = await drive(runTools(input, { tools: tools(), signal: controller.signal }));
    expectAllDelivered(driven);
    const at = (test: (t: Driven['timed'][number]) => boolean) => driven.timed.filter(test).map((t) => t.at);
    expect(at((t) => t.event.type === 'tool_execution_update')).toEqual([0, 100, 200]);
    const endC2 = driven.timed.findIndex((t) => t.event.type === 'tool_execution_end' && t.event.toolCallId === 'c2');
    const pct50 = driven.timed.findIndex((t) => t.event.type === 'tool_execution_update' && (t.event.progress as { pct: number }).pct === 50);
    expect(driven.timed[endC2]!.at).toBe(20);
    expect(endC2).toBeLessThan(pct50);
    expect(at((t) => t.event.type === 'tool_execution_end' && t.event.toolCallId === 'c1')).toEqual([210]);
    expect(driven.settledAt).toBe(210);
    expectNoListeners(controller.signal);
    await expectQuiescent(driven, () => driven.events.length);
    watch.expectClean();
  });

  it('consumer B (50 ms per event, backpressure) still sees every progress and both ends', async () => {
    let handled = 0;
    const driven = await drive(runTools(input, { tools: tools() }), {
      onEvent: async () => {
        await sleepIgnoring(50);
        handled++;
      },
    });
    expectAllDelivered(driven);
    expect(handled).toBe(driven.events.length);
    await expectQuiescent(driven, () => handled);
    watch.expectClean();
  });
});
