/**
 * The LangChain.js adapter against the real `@langchain/core`: `tool()` with zod and with
 * JSON Schema, and a `StructuredTool` subclass, run through `runTools`.
 */
import { StructuredTool, tool } from '@langchain/core/tools';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { collect, gate, text } from '../helpers.ts';
import { fromLangChainTools, runTools, type ToolCall, type ToolResultMessage } from '../../lib/index.ts';

async function results(calls: ToolCall[], options: Parameters<typeof runTools>[1]): Promise<ToolResultMessage[]> {
  return (await collect(runTools(calls, options))).batch.messages;
}

class Multiply extends StructuredTool {
  name = 'multiply';
  description = 'Multiplies two numbers';
  schema = z.object({ a: z.number(), b: z.number().default(2) });
  override async _call({ a, b }: { a: number; b: number }): Promise<string> {
    return String(a * b);
  }
}

describe('fromLangChainTools', () => {
  it('runs tool() with zod (defaults applied once, by LangChain) and a StructuredTool; bad arguments are rejected first (P5)', async () => {
    const seen: unknown[] = [];
    const greet = tool(
      async ({ name }, config) => {
        seen.push(config.toolCall?.id, config.signal instanceof AbortSignal, config.configurable);
        return `hello ${name}`;
      },
      { name: 'greet', description: 'Greets', schema: z.object({ name: z.string().transform((s) => s.toUpperCase()) }) },
    );
    const tools = fromLangChainTools([greet, new Multiply()], { config: { configurable: { thread: 't1' } } });
    expect(tools.map((t) => t.name)).toEqual(['greet', 'multiply']);
    const [a, b, c] = await results(
      [
        { id: 'c1', name: 'greet', arguments: '{"name":"ada"}' },
        { id: 'c2', name: 'multiply', arguments: { a: 3 } },
        { id: 'c3', name: 'multiply', arguments: { a: 'x' } },
      ],
      { tools },
    );
    expect(text(a!)).toBe('hello ADA');
    expect(seen).toEqual(['c1', true, { thread: 't1' }]);
    expect(text(b!)).toBe('6');
    expect(c!.isError).toBe(true);
    expect(text(c!)).toMatch(/a/);
  });

  it('a JSON Schema tool with content_and_artifact: content → blocks, artifact → details', async () => {
    const chart = tool(
      async ({ q }: { q: string }) => [
        [
          { type: 'text', text: `chart of ${q}` },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
        ],
        { rows: 3 },
      ],
      {
        name: 'chart',
        description: 'Draws a chart',
        schema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
        responseFormat: 'content_and_artifact',
      },
    );
    const [r] = await results([{ id: 'c', name: 'chart', arguments: { q: 'sales' } }], { tools: fromLangChainTools([chart]) });
    expect(r!.content).toEqual([
      { type: 'text', text: 'chart of sales' },
      { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
    ]);
    expect(r!.details).toEqual({ rows: 3 });
  });

  it('a throw is an error result with its message', async () => {
    const boom = tool(async () => { throw new Error('no network'); }, { name: 'boom', description: 'fails', schema: z.object({}) });
    const [r] = await results([{ id: 'c', name: 'boom', arguments: {} }], { tools: fromLangChainTools([boom]) });
    expect([r!.isError, text(r!)]).toEqual([true, 'no network']);
  });

  it("aborting the run aborts the signal the LangChain function gets as config.signal (A2); one that never ends is abandoned (A3, spec/adapters/abort.spec.ts)", async () => {
    const started = gate();
    const sawAbort = gate();
    const never = tool(
      async (_input, config) => {
        config.signal?.addEventListener('abort', () => sawAbort.open());
        started.open();
        return new Promise<string>(() => {});
      },
      { name: 'never', description: 'hangs', schema: z.object({}) },
    );
    const controller = new AbortController();
    const run = collect(runTools([{ id: 'n', name: 'never', arguments: {} }], { tools: fromLangChainTools([never]), signal: controller.signal }));
    await started.promise;
    controller.abort();
    // Fails (the spec times out) if the function's config.signal is not the call's.
    await sawAbort.promise;
    const { events, batch } = await run;
    expect(events.flatMap((e) => (e.type === 'tool_execution_end' ? [e.outcome] : []))).toEqual(['abandoned']);
    expect(batch.messages[0]!.isError).toBe(true);
  });

  it('a non-object schema (z.string()) is a TypeError naming the tool', () => {
    const shout = tool(async (s: string) => s.toUpperCase(), { name: 'shout', description: 'shouts', schema: z.string() });
    expect(() => fromLangChainTools([shout as never])).toThrow(/fromLangChainTools: .*"shout"/);
  });
});
