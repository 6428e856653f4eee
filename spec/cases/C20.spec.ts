import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { defineTool, runTools, type ToolCall } from '../../lib/index.ts';
import { text } from '../helpers.ts';
import { drive, expectInvariants, expectNoListeners, expectQuiescent, watchProcess, type ProcessWatch } from './harness.ts';

describe('C20 Huge tool output is bounded before it becomes a result', () => {
  let watch: ProcessWatch;
  beforeEach(() => {
    vi.useFakeTimers();
    watch = watchProcess();
  });
  afterEach(() => {
    watch.dispose();
    vi.useRealTimers();
  });

  it('keeps head and tail around a marker with the original size; small results are untouched', async () => {
    const big = `HEAD${'a'.repeat(5_000_000)}TAIL`;
    const small = 's'.repeat(100);
    const obj = { rows: Array.from({ length: 100_000 }, (_, i) => ({ i, text: 'row-of-a-large-result' })) };
    const objJson = JSON.stringify(obj);
    expect(objJson.length).toBeGreaterThan(3_000_000);
    const dump = defineTool({ name: 'dump', input: { type: 'object' }, execute: () => big });
    const dumpSmall = defineTool({ name: 'dump_small', input: { type: 'object' }, execute: async () => small });
    const dumpObj = defineTool({ name: 'dump_obj', input: { type: 'object' }, async *execute() {
      yield 'serializing';
      return obj;
    } });
    const input: ToolCall[] = [
      { id: 'c1', name: 'dump', arguments: '{}' },
      { id: 'c2', name: 'dump_small', arguments: '{}' },
      { id: 'c3', name: 'dump_obj', arguments: '{}' },
    ];
    const controller = new AbortController();
    const driven = await drive(runTools(input, { tools: [dump, dumpSmall, dumpObj], signal: controller.signal, maxResultChars: 20_000 }));
    expectInvariants(input, driven);
    const [m1, m2, m3] = driven.batch.messages;
    const marker1 = '[truncated: 5000008 chars, 4980008 cut; showing 20000]';
    expect(m1!.isError).toBe(false);
    expect(text(m1!)).toContain(marker1);
    expect(text(m1!).length).toBeLessThanOrEqual(20_000 + marker1.length + 2);
    expect(text(m1!).startsWith('HEAD')).toBe(true);
    expect(text(m1!).endsWith('TAIL')).toBe(true);
    expect(m2!.isError).toBe(false);
    expect(text(m2!)).toBe(small);
    const marker3 = `[truncated: ${objJson.length} chars, ${objJson.length - 20_000} cut; showing 20000]`;
    expect(m3!.isError).toBe(false);
    expect(text(m3!)).toContain(marker3);
    expect(text(m3!).length).toBeLessThanOrEqual(20_000 + marker3.length + 2);
    expect(text(m3!).startsWith('{"rows":[{"i":0,')).toBe(true);
    expect(text(m3!).endsWith('}]}')).toBe(true);
    // The end events carry the same bounded content as the results.
    for (const e of driven.events) {
      if (e.type === 'tool_execution_end') for (const b of e.result.content) expect(b.type === 'text' ? b.text.length : 0).toBeLessThan(20_100);
    }
    expectNoListeners(controller.signal);
    await expectQuiescent(driven, () => 0);
    watch.expectClean();
  });
});
