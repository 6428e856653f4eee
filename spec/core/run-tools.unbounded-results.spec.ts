/**
 * Defect: error results were not bounded, and `maxResultChars` bounded each text block
 * rather than the whole result (case C20).
 */
import { getEventListeners } from 'node:events';
import * as v from 'valibot';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { defineTool, runTools, type ToolCall } from '../../lib/index.ts';
import { collect, gate, settle, text } from '../helpers.ts';

const one = (name: string): ToolCall[] => [{ id: 'a', name, arguments: {} }];
const quick = defineTool({ name: 'quick', input: v.object({}), execute: () => 'ok' });

describe('C20 unbounded error results, and a bound per block instead of per result', () => {
  const MARKER = /\[truncated: (\d+) chars, (\d+) cut; showing (\d+)\]/;

  function expectBounded(t: string, max: number, original: number): void {
    const m = MARKER.exec(t);
    expect(m, 'a truncation marker').not.toBeNull();
    expect(Number(m![1])).toBe(original);
    expect(Number(m![2])).toBe(original - max);
    expect(Number(m![3])).toBe(max);
    expect(t.length - m![0].length - 2).toBeLessThanOrEqual(max);
  }

  it('a thrown 5,000,000-char message is bounded to maxResultChars', async () => {
    const loud = defineTool({
      name: 'loud',
      input: v.object({}),
      execute: () => {
        throw new Error('E'.repeat(5_000_000));
      },
    });
    const { batch } = await collect(runTools(one('loud'), { tools: [loud], maxResultChars: 1000 }));
    expect(batch.messages[0]!.isError).toBe(true);
    expectBounded(text(batch.messages[0]!), 1000, 5_000_000);
  });

  it('a throwing afterToolCall’s 5,000,000-char message is bounded too', async () => {
    const { batch } = await collect(
      runTools(one('quick'), {
        tools: [quick],
        maxResultChars: 1000,
        afterToolCall: () => {
          throw new Error('A'.repeat(5_000_000));
        },
      }),
    );
    const t = text(batch.messages[0]!);
    expect(t.startsWith('Tool "quick" ran, but afterToolCall failed: ')).toBe(true);
    expect(t.length).toBeLessThan(1100);
  });

  it('a blocking beforeToolCall’s huge reason is bounded too', async () => {
    const { batch } = await collect(runTools(one('quick'), { tools: [quick], maxResultChars: 500, beforeToolCall: () => ({ block: true, reason: 'R'.repeat(100_000) }) }));
    expectBounded(text(batch.messages[0]!), 500, 100_000);
  });

  it('500 blocks of 1,000 chars are bounded as one result of 500,000 chars, head and tail kept, blocks kept apart', async () => {
    const blocks = Array.from({ length: 500 }, (_, i) => ({ type: 'text' as const, text: String(i % 10).repeat(1000) }));
    const many = defineTool({ name: 'many', input: v.object({}), execute: () => ({ content: blocks }) });
    const { events, batch } = await collect(runTools(one('many'), { tools: [many], maxResultChars: 1000 }));
    const message = batch.messages[0]!;
    expect(message.isError).toBe(false);
    expectBounded(text(message), 1000, 500_000);
    expect(message.content.length).toBeLessThanOrEqual(3);
    expect(text(message).startsWith('0'.repeat(750))).toBe(true);
    expect(text(message).endsWith('9'.repeat(250))).toBe(true);
    const end = events.find((e) => e.type === 'tool_execution_end')!;
    expect(end.type === 'tool_execution_end' && end.result.content).toEqual(message.content);
  });

  it('an image block between text blocks is kept', async () => {
    const content = [
      { type: 'text' as const, text: 'a'.repeat(800) },
      { type: 'image' as const, data: 'AAAA', mimeType: 'image/png' },
      { type: 'text' as const, text: 'b'.repeat(800) },
    ];
    const pic = defineTool({ name: 'pic', input: v.object({}), execute: () => ({ content }) });
    const { batch } = await collect(runTools(one('pic'), { tools: [pic], maxResultChars: 1000 }));
    expect(batch.messages[0]!.content.map((b) => b.type)).toEqual(['text', 'image', 'text']);
    const texts = batch.messages[0]!.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
    expectBounded(texts, 1000, 1600);
  });
});
