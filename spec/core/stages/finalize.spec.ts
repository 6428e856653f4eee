import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { defineTool, runTools, type AfterToolCallContext } from '../../../lib/index.ts';
import { collect, ofType, text } from '../../helpers.ts';

const ok = defineTool({ name: 'ok', input: v.object({}), execute: () => ({ content: [{ type: 'text' as const, text: 'orig' }], details: { d: 1 } }) });
const boom = defineTool({
  name: 'boom',
  input: v.object({}),
  execute: () => {
    throw new Error('failed');
  },
});

describe('P3 afterToolCall runs for every executed call and overrides field by field', () => {
  it('sees successes and throws, but not calls that never ran', async () => {
    const seen: Array<[string, boolean]> = [];
    await collect(
      runTools(
        [
          { id: 'a', name: 'ok', arguments: {} },
          { id: 'b', name: 'boom', arguments: {} },
          { id: 'c', name: 'unknown', arguments: {} },
        ],
        {
          tools: [ok, boom],
          afterToolCall: (ctx: AfterToolCallContext) => {
            seen.push([ctx.toolCall.id, ctx.isError]);
          },
        },
      ),
    );
    expect(seen.sort()).toEqual([
      ['a', false],
      ['b', true],
    ]);
  });

  it('replaces only the fields it returns, with no deep merge', async () => {
    const { batch, events } = await collect(
      runTools(
        [
          { id: 'a', name: 'ok', arguments: {} },
          { id: 'b', name: 'boom', arguments: {} },
        ],
        {
          tools: [ok, boom],
          afterToolCall: ({ toolCall }) =>
            toolCall.id === 'a' ? { details: { replaced: true } } : { isError: false, content: [{ type: 'text', text: 'recovered' }] },
        },
      ),
    );
    expect(batch.messages[0]).toMatchObject({ content: [{ type: 'text', text: 'orig' }], details: { replaced: true }, isError: false });
    expect(batch.messages[1]).toMatchObject({ content: [{ type: 'text', text: 'recovered' }], isError: false });
    expect(ofType(events, 'tool_execution_end').find((e) => e.toolCallId === 'b')!.outcome).toBe('ok');
  });

  it('turns a throwing afterToolCall into that call’s error only (case C3)', async () => {
    const { batch } = await collect(
      runTools(
        ['1', '2', '3'].map((id) => ({ id, name: 'ok', arguments: {} })),
        {
          tools: [ok],
          afterToolCall: async ({ toolCall }) => {
            if (toolCall.id === '2') throw new Error('after-hook boom');
          },
        },
      ),
    );
    expect(batch.messages.map((m) => [text(m), m.isError])).toEqual([
      ['orig', false],
      ['Tool "ok" ran, but afterToolCall failed: after-hook boom', true],
      ['orig', false],
    ]);
  });

  it('can make a batch terminate', async () => {
    const { batch } = await collect(runTools([{ id: 'a', name: 'ok', arguments: {} }], { tools: [ok], afterToolCall: () => ({ terminate: true }) }));
    expect(batch.terminate).toBe(true);
  });
});
