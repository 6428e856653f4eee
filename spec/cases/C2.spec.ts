import * as v from 'valibot';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { defineTool, runTools, type ToolCall } from '../../lib/index.ts';
import { text } from '../helpers.ts';
import { drive, endOf, expectInvariants, expectNoListeners, expectQuiescent, sleep, watchProcess, type ProcessWatch } from './harness.ts';

describe('C2 One failing call must not cancel its siblings', () => {
  let watch: ProcessWatch;
  beforeEach(() => {
    vi.useFakeTimers();
    watch = watchProcess();
  });
  afterEach(() => {
    watch.dispose();
    vi.useRealTimers();
  });

  it('keeps the siblings running with live signals and returns all three results', async () => {
    const input: ToolCall[] = [
      { id: 'c1', name: 'lookup', arguments: '{"q":"a"}' },
      { id: 'c2', name: 'fetch_page', arguments: '{"url":"x"}' },
      { id: 'c3', name: 'lookup', arguments: '{"q":"c"}' },
    ];
    let bodies = 0;
    const abortedAtFinish: Record<string, boolean> = {};
    const lookup = defineTool({
      name: 'lookup',
      input: v.object({ q: v.string() }),
      async execute({ q }, { signal, toolCallId }) {
        bodies++;
        await sleep(100, signal);
        abortedAtFinish[toolCallId] = signal.aborted;
        return `ok${q === 'a' ? 1 : 3}`;
      },
    });
    const fetchPage = defineTool({
      name: 'fetch_page',
      input: v.object({ url: v.string() }),
      async execute(_input, { signal }) {
        bodies++;
        await sleep(20, signal);
        throw new Error('upstream 503');
      },
    });
    const controller = new AbortController();
    // drive() rethrows if the generator rejects: execute() must resolve.
    const driven = await drive(runTools(input, { tools: [lookup, fetchPage], signal: controller.signal }));
    expectInvariants(input, driven);
    expect(driven.batch.messages.map((m) => [m.toolCallId, m.isError])).toEqual([
      ['c1', false],
      ['c2', true],
      ['c3', false],
    ]);
    expect(text(driven.batch.messages[0]!)).toBe('ok1');
    expect(text(driven.batch.messages[1]!)).toContain('upstream 503');
    expect(text(driven.batch.messages[2]!)).toBe('ok3');
    expect(endOf(driven, 'c2').outcome).toBe('error');
    expect(abortedAtFinish).toEqual({ c1: false, c3: false });
    expect(driven.batch.aborted).toBe(false);
    expect(driven.settledAt).toBe(100);
    expectNoListeners(controller.signal);
    await expectQuiescent(driven, () => bodies);
    watch.expectClean();
  });
});
