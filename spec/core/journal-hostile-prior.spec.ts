/**
 * J9 for a journal row that is not what toolrun committed (a truncated, hand-edited or
 * hostile row of the engine's database): a replayed result's content blocks are checked like
 * a tool's, and a block that is not one stops the run with a JournalError naming the call and
 * the block, instead of replaying `null`, a number or a text block without text to the
 * model (or throwing an engine's own error out of the generator).
 */
import { describe, expect, it } from 'vitest';
import { defineTool, JournalError, runTools } from '../../lib/index.ts';
import type { ToolJournal } from '../../lib/core/seams/journal.ts';

const tool = defineTool({ name: 't', description: 'a tool', input: { type: 'object' }, execute: async () => 'ran' });

function journalWith(content: unknown): ToolJournal & { runs: number } {
  const journal = {
    runs: 0,
    open: () => ({
      prior: Promise.resolve({ state: 'ended', result: { message: { role: 'toolResult', toolCallId: 'a', toolName: 't', content, isError: false, timestamp: 0 }, outcome: 'ok' } }),
      idempotencyKey: 'k',
      progress() {},
      decide: async () => {},
      commit: async () => {
        journal.runs++;
      },
    }),
  };
  return journal as unknown as ToolJournal & { runs: number };
}

async function replay(content: unknown): Promise<{ error: unknown; events: string[] }> {
  const events: string[] = [];
  try {
    for await (const event of runTools([{ id: 'a', name: 't', arguments: {} }], { tools: [tool], journal: journalWith(content) })) events.push(event.type);
    return { error: undefined, events };
  } catch (error) {
    return { error, events };
  }
}

describe('J9 a hostile journal row: its content blocks are checked before they replay', () => {
  it.each([
    ['null', [null], /content\[0\] is null, not a content block/],
    ['a number after a good block', [{ type: 'text', text: 'ok' }, 5], /content\[1\] is a number \(5\), not a content block/],
    ['a text block whose text is a number', [{ type: 'text', text: 5 }], /content\[0\] is a text block whose text is a number \(5\)/],
    ['a block of no known type', [{ type: 'script', text: 'x' }], /content\[0\] is a block of type "script"/],
    ['an image without data', [{ type: 'image', data: 7, mimeType: 'image/png' }], /content\[0\] is an image block without base64 data/],
  ])('J9 %s: JournalError naming the block, no tool_result emitted', async (_name, content, pattern) => {
    const { error, events } = await replay(content);
    expect(error).toBeInstanceOf(JournalError);
    expect(String((error as Error).cause ?? '')).toMatch(pattern);
    expect(events).not.toContain('tool_result');
  });

  it('J9 a getter that throws in a row (an engine handing live objects): JournalError, not the getter\'s error', async () => {
    const { error } = await replay([
      {
        type: 'text',
        get text(): string {
          throw new Error('boom');
        },
      },
    ]);
    expect(error).toBeInstanceOf(JournalError);
  });

  it('J9 a well-formed row still replays without running the tool', async () => {
    const { error, events } = await replay([{ type: 'text', text: 'journaled' }]);
    expect(error).toBeUndefined();
    expect(events).toEqual(['tool_execution_start', 'tool_execution_end', 'tool_result']);
  });
});

describe('C20 a journaled result longer than maxResultChars is cut when it replays, like one run now', () => {
  it('C20 a 5,000,000-character journaled text replays cut to maxResultChars, in the end event and the tool_result', async () => {
    const ends: string[] = [];
    for await (const event of runTools([{ id: 'a', name: 't', arguments: {} }], { tools: [tool], journal: journalWith([{ type: 'text', text: 'x'.repeat(5_000_000) }]), maxResultChars: 10_000 })) {
      if (event.type === 'tool_execution_end') ends.push(JSON.stringify(event.result.content));
      if (event.type === 'tool_result') ends.push(JSON.stringify(event.message.content));
    }
    expect(ends).toHaveLength(2);
    for (const text of ends) {
      expect(text.length).toBeLessThan(11_000);
      expect(text).toContain('[truncated: 5000000 chars');
    }
  });
});
