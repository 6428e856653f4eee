import * as v from 'valibot';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { defineTool, runTools, type ToolCall } from '../../lib/index.ts';
import { text } from '../helpers.ts';
import { drive, endOf, expectInvariants, expectNoListeners, expectQuiescent, sleep, watchProcess, type ProcessWatch } from './harness.ts';

describe('C13 Invalid JSON arguments give an error result for that call only', () => {
  let watch: ProcessWatch;
  beforeEach(() => {
    vi.useFakeTimers();
    watch = watchProcess();
  });
  afterEach(() => {
    watch.dispose();
    vi.useRealTimers();
  });

  it('answers each garbage call with the parser’s message and position; the valid call runs', async () => {
    const input: ToolCall[] = [
      { id: 'c1', name: 'lookup', arguments: '{"{"q":"x"}' },
      { id: 'c2', name: 'read_item', arguments: '{"id":"b"}' },
      { id: 'c3', name: 'lookup', arguments: '{"q": "x",}' },
    ];
    const bodies: string[] = [];
    const hooks: string[] = [];
    const lookup = defineTool({
      name: 'lookup',
      input: v.object({ q: v.string() }),
      execute: ({ q }, { toolCallId }) => {
        bodies.push(toolCallId);
        return q;
      },
    });
    const readItem = defineTool({
      name: 'read_item',
      input: v.object({ id: v.string() }),
      async execute({ id }, { signal, toolCallId }) {
        bodies.push(toolCallId);
        await sleep(10, signal);
        return `item ${id}`;
      },
    });
    const controller = new AbortController();
    // drive() rethrows if the generator throws: nothing may escape the batch.
    const driven = await drive(
      runTools(input, {
        tools: [lookup, readItem],
        signal: controller.signal,
        beforeToolCall: ({ toolCall }) => {
          hooks.push(toolCall.id);
        },
      }),
    );
    expectInvariants(input, driven);
    const [m1, m2, m3] = driven.batch.messages;
    expect(m1!.isError).toBe(true);
    expect(text(m1!)).toContain('are not valid JSON');
    expect(text(m1!)).toMatch(/at position \d+/);
    expect(text(m1!)).toContain('Expected \':\' after property name in JSON at position 4');
    // The raw text is quoted back, bounded.
    expect(text(m1!)).toContain('{"{"q":"x"}');
    expect(text(m1!).length).toBeLessThan(1_000);
    expect(m2!.isError).toBe(false);
    expect(text(m2!)).toBe('item b');
    expect(m3!.isError).toBe(true);
    expect(text(m3!)).toContain('are not valid JSON');
    expect(text(m3!)).toMatch(/at position \d+/);
    expect(endOf(driven, 'c1').outcome).toBe('rejected');
    expect(endOf(driven, 'c3').outcome).toBe('rejected');
    // No body and no before-hook for the garbage calls.
    expect(bodies).toEqual(['c2']);
    expect(hooks).toEqual(['c2']);
    expect(driven.batch.aborted).toBe(false);
    expectNoListeners(controller.signal);
    await expectQuiescent(driven, () => [bodies, hooks]);
    watch.expectClean();
  });

  it('bounds the quoted raw text of a huge invalid argument string to a few hundred characters', async () => {
    const huge = `{"q":"${'x'.repeat(50_000)}`;
    const input: ToolCall[] = [{ id: 'c1', name: 'lookup', arguments: huge }];
    const lookup = defineTool({ name: 'lookup', input: v.object({ q: v.string() }), execute: ({ q }) => q });
    const driven = await drive(runTools(input, { tools: [lookup] }));
    expectInvariants(input, driven);
    const message = text(driven.batch.messages[0]!);
    expect(message).toContain('not valid JSON');
    expect(message.length).toBeLessThan(1_000);
    expect(message).toContain(`(${huge.length} chars in all)`);
    await expectQuiescent(driven, () => 0);
    watch.expectClean();
  });
});
