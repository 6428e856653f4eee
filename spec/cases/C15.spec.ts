import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { defineTool, runTools, type ToolCall } from '../../lib/index.ts';
import { text } from '../helpers.ts';
import { drive, endOf, expectInvariants, expectNoListeners, expectQuiescent, watchProcess, type ProcessWatch } from './harness.ts';

describe('C15 Arguments that are an object, a JSON-in-JSON string, or non-object JSON', () => {
  let watch: ProcessWatch;
  beforeEach(() => {
    vi.useFakeTimers();
    watch = watchProcess();
  });
  afterEach(() => {
    watch.dispose();
    vi.useRealTimers();
  });

  it('accepts objects, unwraps one level of string encoding, rejects non-objects in plain words', async () => {
    const received: [string, unknown][] = [];
    const readItem = defineTool({
      name: 'read_item',
      input: {
        type: 'object',
        properties: { id: { type: 'string' }, opts: { type: 'object' } },
        required: ['id'],
      },
      execute: (input, { toolCallId }) => {
        received.push([toolCallId, input]);
        return `item ${String(input.id)}`;
      },
    });
    const input: ToolCall[] = [
      { id: 'c1', name: 'read_item', arguments: { id: 'a' } },
      { id: 'c2', name: 'read_item', arguments: JSON.stringify(JSON.stringify({ id: 'a' })) },
      { id: 'c3', name: 'read_item', arguments: '[1,2]' },
      { id: 'c4', name: 'read_item', arguments: 'null' },
      { id: 'c5', name: 'read_item', arguments: '42' },
      { id: 'c6', name: 'read_item', arguments: '{"id":"a","opts":"{\\"deep\\":true}"}' },
    ];
    expect(input[1]!.arguments).toBe('"{\\"id\\":\\"a\\"}"');
    const controller = new AbortController();
    const driven = await drive(runTools(input, { tools: [readItem], signal: controller.signal }));
    expectInvariants(input, driven);
    const texts = driven.batch.messages.map(text);
    expect(driven.batch.messages.map((m) => m.isError)).toEqual([false, false, true, true, true, true]);
    // c2: documented policy — a JSON string holding a JSON object is unwrapped one level.
    expect(received).toEqual([
      ['c1', { id: 'a' }],
      ['c2', { id: 'a' }],
    ]);
    expect(texts[0]).toBe('item a');
    expect(texts[1]).toBe('item a');
    for (const i of [2, 3, 4]) {
      expect(texts[i]).toContain('must be a JSON object');
      expect(endOf(driven, `c${i + 1}`).outcome).toBe('rejected');
    }
    expect(texts[2]).toContain('got array [1,2]');
    expect(texts[3]).toContain('got null');
    expect(texts[4]).toContain('got number 42');
    // c6: no coercion of nested values; a schema error naming opts.
    expect(texts[5]).toContain('opts: expected object, got string');
    // No internal type or class names, no stack frames.
    for (const t of texts) {
      expect(t).not.toMatch(/TypeError|SyntaxError|ValidationError|\[object |\n\s+at /);
    }
    expectNoListeners(controller.signal);
    await expectQuiescent(driven, () => received.length);
    watch.expectClean();
  });
});
