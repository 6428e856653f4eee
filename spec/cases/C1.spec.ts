import * as v from 'valibot';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { defineTool, runTools, type ToolCall } from '../../lib/index.ts';
import { ofType, text } from '../helpers.ts';
import { drive, expectInvariants, expectNoListeners, expectQuiescent, sleep, watchProcess, type ProcessWatch } from './harness.ts';

const input: ToolCall[] = [
  { id: 'c1', name: 'lookup', arguments: '{"q":"alpha"}' },
  { id: 'c2', name: 'read_item', arguments: '{"id":"b"}' },
  { id: 'c3', name: 'lookup', arguments: '{"q":"gamma"}' },
];
const resultOf: Record<string, string> = { alpha: 'R1', b: 'R2', gamma: 'R3' };

/** The batch, with `delays[key]` ms of (abort-aware) sleep per call. */
async function runWith(delays: Record<string, number>) {
  let bodies = 0;
  const lookup = defineTool({
    name: 'lookup',
    input: v.object({ q: v.string() }),
    async execute({ q }, { signal }) {
      bodies++;
      await sleep(delays[q]!, signal);
      return resultOf[q]!;
    },
  });
  const readItem = defineTool({
    name: 'read_item',
    input: v.object({ id: v.string() }),
    async execute({ id }, { signal }) {
      bodies++;
      await sleep(delays[id]!, signal);
      return resultOf[id]!;
    },
  });
  const controller = new AbortController();
  const driven = await drive(runTools(input, { tools: [lookup, readItem], signal: controller.signal }));
  expectInvariants(input, driven);
  expectNoListeners(controller.signal);
  await expectQuiescent(driven, () => bodies);
  return driven;
}

describe('C1 Parallel results must be emitted in call order, not completion order', () => {
  let watch: ProcessWatch;
  beforeEach(() => {
    vi.useFakeTimers();
    watch = watchProcess();
  });
  afterEach(() => {
    watch.dispose();
    vi.useRealTimers();
  });

  it('releases results in call order with each call’s own id, ends in completion order, in parallel', async () => {
    const driven = await runWith({ alpha: 300, b: 50, gamma: 150 });
    const messages = driven.batch.messages;
    expect(messages.map((m) => [m.toolCallId, m.isError, text(m)])).toEqual([
      ['c1', false, 'R1'],
      ['c2', false, 'R2'],
      ['c3', false, 'R3'],
    ]);
    // end events in completion order: c2 (50), c3 (150), c1 (300).
    const ends = driven.timed.filter((t) => t.event.type === 'tool_execution_end');
    expect(ends.map((t) => [(t.event as { toolCallId: string }).toolCallId, t.at])).toEqual([
      ['c2', 50],
      ['c3', 150],
      ['c1', 300],
    ]);
    // The calls overlapped: the batch took as long as its slowest call, not the sum.
    expect(driven.settledAt).toBe(300);
    expect(driven.settledAt).toBeLessThan(500);
    // No result is held back past the moment its prefix completed, and none comes early.
    const results = driven.timed.filter((t) => t.event.type === 'tool_result').map((t) => t.at);
    expect(results).toEqual([300, 300, 300]);
    watch.expectClean();
  });

  it('serializes byte-identically when the delays are reversed (50/300/150)', async () => {
    const first = await runWith({ alpha: 300, b: 50, gamma: 150 });
    const second = await runWith({ alpha: 50, b: 300, gamma: 150 });
    expect(JSON.stringify(second.batch.messages)).toBe(JSON.stringify(first.batch.messages));
    // …while the completion order really differed: c1, c3, c2 this time.
    expect(ofType(second.events, 'tool_execution_end').map((e) => e.toolCallId)).toEqual(['c1', 'c3', 'c2']);
    // Result 0 is released as soon as call 0 ended (O2), not at the end of the batch.
    expect(second.timed.find((t) => t.event.type === 'tool_result')!.at).toBe(50);
    watch.expectClean();
  });
});
