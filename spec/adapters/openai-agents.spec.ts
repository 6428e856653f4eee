/**
 * The OpenAI Agents SDK adapter against the real `@openai/agents` package: tools made with
 * its `tool()` run through `runTools`.
 */
import { RunContext, tool, webSearchTool } from '@openai/agents';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { collect, gate, text } from '../helpers.ts';
import { fromOpenAIAgentsTools, runTools, type ToolCall, type ToolResultMessage } from '../../lib/index.ts';

async function results(calls: ToolCall[], options: Parameters<typeof runTools>[1]): Promise<ToolResultMessage[]> {
  return (await collect(runTools(calls, options))).batch.messages;
}

describe('fromOpenAIAgentsTools', () => {
  it('runs a zod tool() through invoke with the JSON text, the run context and a function_call item', async () => {
    const seen: unknown[] = [];
    const getWeather = tool({
      name: 'get_weather',
      description: 'Weather of a city',
      parameters: z.object({ city: z.string(), unit: z.enum(['c', 'f']).nullable() }),
      execute: async ({ city, unit }, runContext, details) => {
        seen.push(runContext?.context, details?.toolCall?.callId, details?.signal instanceof AbortSignal);
        return `${city}: 21${unit ?? 'c'}`;
      },
    });
    const { tools, skipped } = fromOpenAIAgentsTools([getWeather, webSearchTool()], { runContext: new RunContext({ user: 'ada' }) });
    expect(skipped).toEqual(['web_search']);
    expect(tools[0]!.description).toBe('Weather of a city');
    // Strict schema from zod: every property required, no extra ones.
    expect(tools[0]!.input).toMatchObject({ type: 'object', required: ['city', 'unit'], additionalProperties: false });
    const [ok, bad] = await results(
      [
        { id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo","unit":null}' },
        { id: 'call_2', name: 'get_weather', arguments: '{"city":"Oslo"}' },
      ],
      { tools },
    );
    expect([ok!.isError, text(ok!)]).toEqual([false, 'Oslo: 21c']);
    expect(seen).toEqual([{ user: 'ada' }, 'call_1', true]);
    // The strict schema requires `unit`: toolrun rejects the call before invoke (P5).
    expect(bad!.isError).toBe(true);
    expect(text(bad!)).toMatch(/unit/);
  });

  it('a JSON Schema tool (strict: false) and structured outputs (text and image items)', async () => {
    const shot = tool({
      name: 'screenshot',
      description: 'Takes a screenshot',
      strict: false,
      parameters: { type: 'object', properties: { note: { type: 'string' } }, required: [], additionalProperties: true },
      execute: async (input) => [
        { type: 'text', text: `note=${(input as { note?: string }).note ?? ''}` },
        { type: 'image', image: { data: 'iVBORw0KGgo=', mediaType: 'image/png' } },
      ],
    });
    const { tools } = fromOpenAIAgentsTools([shot]);
    const [r] = await results([{ id: 'c', name: 'screenshot', arguments: { note: 'hi' } }], { tools });
    expect(r!.content).toEqual([
      { type: 'text', text: 'note=hi' },
      { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
    ]);
  });

  it("a throw inside execute becomes the SDK's errorFunction text (not an error result); errorFunction: null makes it an error result", async () => {
    const failing = tool({ name: 'fail', description: 'fails', parameters: z.object({}), execute: async () => { throw new Error('disk full'); } });
    const raw = tool({ name: 'raw', description: 'fails', parameters: z.object({}), errorFunction: null, execute: async () => { throw new Error('disk full'); } });
    const { tools } = fromOpenAIAgentsTools([failing, raw]);
    const [a, b] = await results(
      [
        { id: '1', name: 'fail', arguments: '{}' },
        { id: '2', name: 'raw', arguments: '{}' },
      ],
      { tools },
    );
    expect([a!.isError, text(a!)]).toEqual([false, 'An error occurred while running the tool. Please try again.']);
    expect([b!.isError, text(b!)]).toEqual([true, 'disk full']);
  });

  it("H1: needsApproval is the adapted tool's own: deferred without approve (the batch pauses), asked with runTools' approve", async () => {
    const ran: string[] = [];
    const seen: unknown[] = [];
    const rm = tool({
      name: 'rm',
      description: 'remove',
      parameters: z.object({ path: z.string() }),
      needsApproval: async (runContext, { path }, callId) => {
        seen.push([runContext.context, callId]);
        return path.startsWith('/');
      },
      execute: async ({ path }) => {
        ran.push(path);
        return 'ok';
      },
    });
    const calls: ToolCall[] = [
      { id: '1', name: 'rm', arguments: '{"path":"/etc"}' },
      { id: '2', name: 'rm', arguments: '{"path":"tmp"}' },
    ];
    const { tools } = fromOpenAIAgentsTools([rm], { runContext: new RunContext({ user: 'ada' }) });
    const paused = (await collect(runTools(calls, { tools }))).batch;
    expect(paused.messages).toEqual([]);
    expect(paused.paused!.requests.map((r) => [r.toolCallId, r.source])).toEqual([['1', 'tool']]);
    expect(seen).toEqual([
      [{ user: 'ada' }, '1'],
      [{ user: 'ada' }, '2'],
    ]);
    expect(ran).toEqual(['tmp']);
    const denied = await results(calls, {
      tools,
      resume: { state: paused.paused!.state, approvals: [{ approvalId: paused.paused!.requests[0]!.approvalId, approved: false }] },
    });
    expect(denied.map((r) => r.isError)).toEqual([true, false]);
    expect(text(denied[0]!)).toMatch(/A person denied this call to tool "rm"/);
    expect(ran).toEqual(['tmp']);
    const r2 = await results(calls, { tools, approve: (request) => ({ approvalId: request.approvalId, approved: request.toolCallId === '1' }) });
    expect(r2.map((r) => r.isError)).toEqual([false, false]);
    expect(ran).toEqual(['tmp', '/etc', 'tmp']);
    expect(() => fromOpenAIAgentsTools([rm], { approve: () => true } as never)).toThrow(/options\.approve was removed/);
  });

  it('aborting the run aborts the invocation through details.signal (A2)', async () => {
    const started = gate();
    const wait = tool({
      name: 'wait',
      description: 'waits',
      parameters: z.object({}),
      errorFunction: null,
      execute: (_input, _ctx, details) =>
        new Promise<string>((_resolve, reject) => {
          started.open();
          details?.signal?.addEventListener('abort', () => reject(new Error('aborted by signal')));
        }),
    });
    const { tools } = fromOpenAIAgentsTools([wait]);
    const controller = new AbortController();
    const run = collect(runTools([{ id: 'w', name: 'wait', arguments: '{}' }], { tools, signal: controller.signal }));
    await started.promise;
    controller.abort();
    expect((await run).batch.messages[0]!.isError).toBe(true);
  });
});
