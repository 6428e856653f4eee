import * as v from 'valibot';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { defineTool, runTools, type ToolCall } from '../../lib/index.ts';
import { ofType, text } from '../helpers.ts';
import { drive, endOf, expectInvariants, expectNoListeners, expectQuiescent, watchProcess, type ProcessWatch } from './harness.ts';

describe('C18 Unknown tool name', () => {
  let watch: ProcessWatch;
  beforeEach(() => {
    vi.useFakeTimers();
    watch = watchProcess();
  });
  afterEach(() => {
    watch.dispose();
    vi.useRealTimers();
  });

  it('answers a hallucinated and an empty name with the available tools; start and end are emitted', async () => {
    const bodies: string[] = [];
    const lookup = defineTool({
      name: 'lookup',
      input: v.object({ q: v.string() }),
      execute: ({ q }, { toolCallId }) => {
        bodies.push(toolCallId);
        return `found ${q}`;
      },
    });
    const readItem = defineTool({ name: 'read_item', input: v.object({ id: v.string() }), execute: ({ id }) => id });
    const input: ToolCall[] = [
      { id: 'c1', name: 'lookup', arguments: '{"q":"a"}' },
      { id: 'c2', name: 'web_search', arguments: '{"q":"x"}' },
      { id: 'c3', name: '', arguments: '{}' },
    ];
    const before: string[] = [];
    const after: string[] = [];
    const controller = new AbortController();
    // drive() rethrows if the stream throws: an unknown tool must not end it.
    const driven = await drive(
      runTools(input, {
        tools: [lookup, readItem],
        signal: controller.signal,
        beforeToolCall: ({ toolCall }) => {
          before.push(toolCall.id);
        },
        afterToolCall: ({ toolCall }) => {
          after.push(toolCall.id);
        },
      }),
    );
    expectInvariants(input, driven);
    const [m1, m2, m3] = driven.batch.messages;
    expect(m1!.isError).toBe(false);
    expect(text(m1!)).toBe('found a');
    expect(m2!.isError).toBe(true);
    expect(text(m2!)).toContain('No tool named "web_search". Available tools: lookup, read_item');
    expect(m3!.isError).toBe(true);
    expect(text(m3!)).toContain('no tool name');
    expect(text(m3!)).toContain('Available tools: lookup, read_item');
    // The UI sees c2 and c3 start and end, so it never shows them as running.
    expect(ofType(driven.events, 'tool_execution_start').map((e) => e.toolCallId)).toEqual(['c1', 'c2', 'c3']);
    expect(endOf(driven, 'c2').outcome).toBe('rejected');
    expect(endOf(driven, 'c3').outcome).toBe('rejected');
    expect(bodies).toEqual(['c1']);
    // Consistent hook policy: both hooks fire for the executed call, neither for unknown tools.
    expect(before).toEqual(['c1']);
    expect(after).toEqual(['c1']);
    expectNoListeners(controller.signal);
    await expectQuiescent(driven, () => [bodies, before, after]);
    watch.expectClean();
  });
});
