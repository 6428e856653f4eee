/**
 * Issue 22 item 3 at run time: a plain return value (not a string, not `undefined`, not the
 * explicit `{ content }` form) is kept as the result's `details`, as `ToolDetailsOf` types it
 * (spec/types/events.test-d.ts); `tool_result` carries the call's `toolName` and `toolCallId`.
 * Fails if `readToolOutput` / `normalizeToolOutput` stop setting `details`, or run.ts stops
 * copying the name onto the event.
 */
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { defineTool, normalizeToolOutput, runTools } from '../../lib/index.ts';
import { collect } from '../helpers.ts';

describe('plain returns reach details; tool_result carries toolName', () => {
  it('an object, an array and a number are their own details; a string and undefined have none', async () => {
    const forecast = { city: 'Rome', temperature: 21 };
    const tools = [
      defineTool({ name: 'obj', input: v.object({}), execute: () => forecast }),
      defineTool({ name: 'arr', input: v.object({}), execute: async () => [1, 2] }),
      defineTool({ name: 'num', input: v.object({}), async *execute() { yield 'p'; return 7; } }),
      defineTool({ name: 'str', input: v.object({}), execute: () => 'noon' }),
      defineTool({ name: 'none', input: v.object({}), execute: () => undefined }),
    ];
    const calls = tools.map((t, i) => ({ id: `id${i}`, name: t.name, arguments: {} }));
    const { events, batch: result } = await collect(runTools(calls, { tools }));
    expect(result.messages.map((m) => m.details)).toEqual([forecast, [1, 2], 7, undefined, undefined]);
    expect(result.messages[0]!.details).toBe(forecast); // the value itself, not a copy
    expect(result.messages.map((m) => 'details' in m)).toEqual([true, true, true, false, false]);
    expect(result.messages[0]!.content).toEqual([{ type: 'text', text: '{"city":"Rome","temperature":21}' }]);
    const ends = events.filter((e) => e.type === 'tool_execution_end');
    expect(ends.find((e) => e.toolName === 'obj')?.result.details).toBe(forecast);
    const resultEvents = events.filter((e) => e.type === 'tool_result');
    expect(resultEvents.map((e) => [e.toolCallId, e.toolName])).toEqual(calls.map((c) => [c.id, c.name]));
    expect(resultEvents.every((e) => e.toolName === e.message.toolName && e.toolCallId === e.message.toolCallId)).toBe(true);
  });

  it('a call to an unknown tool has its name on tool_result too', async () => {
    const { events } = await collect(runTools([{ id: 'x', name: 'nope', arguments: {} }], { tools: [] }));
    const result = events.find((e) => e.type === 'tool_result');
    expect(result).toMatchObject({ toolCallId: 'x', toolName: 'nope', message: { toolName: 'nope', isError: true } });
  });

  it('normalizeToolOutput follows the same rule', () => {
    expect(normalizeToolOutput({ a: 1 })).toEqual({ content: [{ type: 'text', text: '{"a":1}' }], details: { a: 1 } });
    expect(normalizeToolOutput('x')).toEqual({ content: [{ type: 'text', text: 'x' }] });
  });
});
