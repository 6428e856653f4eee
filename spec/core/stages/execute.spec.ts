import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { defineTool, runTools, type ToolCall } from '../../../lib/index.ts';
import { collect, expectRunInvariants, text } from '../../helpers.ts';

describe('P4 any throw becomes that call’s error result, never the batch’s', () => {
  const throwers = [
    defineTool({
      name: 'sync_throw',
      input: v.object({}),
      execute: () => {
        throw new Error('sync kaput');
      },
    }),
    defineTool({
      name: 'async_throw',
      input: v.object({}),
      execute: async () => {
        throw new TypeError('async kaput');
      },
    }),
    defineTool({
      name: 'generator_throw',
      input: v.object({}),
      async *execute() {
        yield 'partial';
        throw new Error('generator kaput');
      },
    }),
    defineTool({
      name: 'non_error',
      input: v.object({}),
      execute: async () => {
        throw { code: 42 };
      },
    }),
    defineTool({
      name: 'string_throw',
      input: v.object({}),
      execute: () => {
        throw 'just a string';
      },
    }),
    defineTool({
      name: 'prepare_throw',
      input: v.object({}),
      prepareArguments: () => {
        throw new Error('cannot read old shape');
      },
      execute: () => 'never',
    }),
    defineTool({ name: 'fine', input: v.object({}), execute: () => 'fine' }),
  ];

  it('gives each thrower its own error text and leaves siblings untouched', async () => {
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown) => rejections.push(reason);
    process.on('unhandledRejection', onRejection);
    try {
      const input: ToolCall[] = throwers.map((t, i) => ({ id: `c${i}`, name: t.name, arguments: {} }));
      const { events, batch } = await collect(
        runTools(input, {
          tools: throwers,
          beforeToolCall: ({ toolCall }) => {
            if (toolCall.name === 'fine' && toolCall.id === 'nope') throw new Error('unused');
          },
        }),
      );
      expectRunInvariants(input, events, batch);
      expect(batch.messages.map((m) => [text(m), m.isError])).toEqual([
        ['sync kaput', true],
        ['TypeError: async kaput', true],
        ['generator kaput', true],
        ['{"code":42}', true],
        ['just a string', true],
        ['Tool "prepare_throw" could not read its arguments: cannot read old shape', true],
        ['fine', false],
      ]);
      await new Promise((r) => setImmediate(r));
      expect(rejections).toEqual([]);
    } finally {
      process.off('unhandledRejection', onRejection);
    }
  });

  it('turns a throwing beforeToolCall into that call’s error, without running its body', async () => {
    const ran: string[] = [];
    const tool = defineTool({
      name: 't',
      input: v.object({}),
      execute: (_i, { toolCallId }) => {
        ran.push(toolCallId);
        return 'ran';
      },
    });
    const { batch } = await collect(
      runTools(
        [
          { id: 'a', name: 't', arguments: {} },
          { id: 'b', name: 't', arguments: {} },
        ],
        {
          tools: [tool],
          beforeToolCall: async ({ index }) => {
            if (index === 0) throw new Error('policy service down');
          },
        },
      ),
    );
    expect(ran).toEqual(['b']);
    expect(text(batch.messages[0]!)).toBe('Tool call "t" was not run: beforeToolCall failed: policy service down');
  });
});

describe('result normalization and bounds (case C20)', () => {
  it('normalizes strings, objects and explicit results', async () => {
    const tools = [
      defineTool({ name: 's', input: v.object({}), execute: () => 'text' }),
      defineTool({ name: 'o', input: v.object({}), execute: () => ({ a: 1 }) }),
      defineTool({ name: 'u', input: v.object({}), execute: () => undefined }),
      defineTool({
        name: 'r',
        input: v.object({}),
        execute: () => ({ content: [{ type: 'image' as const, data: 'AAAA', mimeType: 'image/png' }], details: { w: 1 } }),
      }),
    ];
    const { batch } = await collect(runTools(tools.map((t) => ({ id: t.name, name: t.name, arguments: {} })), { tools }));
    expect(batch.messages.map((m) => m.content)).toEqual([
      [{ type: 'text', text: 'text' }],
      [{ type: 'text', text: '{"a":1}' }],
      [{ type: 'text', text: '' }],
      [{ type: 'image', data: 'AAAA', mimeType: 'image/png' }],
    ]);
    expect(batch.messages[3]!.details).toEqual({ w: 1 });
  });

  it('keeps the head and tail of a huge text around a marker stating its size', async () => {
    const dump = defineTool({ name: 'dump', input: v.object({}), execute: () => `HEAD${'a'.repeat(5_000_000)}TAIL` });
    const { batch } = await collect(runTools([{ id: '1', name: 'dump', arguments: {} }], { tools: [dump], maxResultChars: 20_000 }));
    const out = text(batch.messages[0]!);
    expect(out.startsWith('HEAD')).toBe(true);
    expect(out.endsWith('TAIL')).toBe(true);
    expect(out).toContain('[truncated: 5000008 chars, 4980008 cut; showing 20000]');
    expect(out.length).toBeLessThan(20_100);
    expect(batch.messages[0]!.isError).toBe(false);
  });
});
