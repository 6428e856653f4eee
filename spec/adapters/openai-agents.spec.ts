/**
 * The OpenAI Agents SDK adapter against the real SDK: tools made with its `tool()` (from
 * `@openai/agents-core`, which `@openai/agents` re-exports) run through `runTools`.
 */
// `@openai/agents` re-exports these from `@openai/agents-core` (the same functions: spec/adapters/openai-agents.slow.spec.ts);
// the core alone loads in half the CPU (0.5 s against 1.0 s per worker of `npm test`).
import { hostedMcpTool, RunContext, tool } from '@openai/agents-core';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { collect, gate, text } from '../helpers.ts';
import { fromOpenAIAgentsTools, fromOpenAIResponses, runTools, toolJsonSchema, type ToolCall, type ToolResultMessage } from '../../lib/index.ts';

async function results(calls: ToolCall[] | AsyncIterable<ToolCall>, options: Parameters<typeof runTools>[1]): Promise<ToolResultMessage[]> {
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
    // A hosted tool (run by OpenAI, not here) is skipped by name.
    const hosted = hostedMcpTool({ serverLabel: 'docs', serverUrl: 'https://mcp.example.com' });
    const { tools, skipped } = fromOpenAIAgentsTools([getWeather, hosted], { runContext: new RunContext({ user: 'ada' }) });
    expect(skipped).toEqual(['hosted_mcp']);
    expect(tools[0]!.description).toBe('Weather of a city');
    // The model is sent the SDK's strict schema from zod, unchanged: every property required, no extra ones.
    expect(toolJsonSchema(tools[0]!)).toMatchObject({ type: 'object', required: ['city', 'unit'], additionalProperties: false });
    const { $schema: _draft, ...sent } = getWeather.parameters as Record<string, unknown>;
    expect(toolJsonSchema(tools[0]!)).toEqual(sent);
    const [ok, bad] = await results(
      [
        { id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo","unit":null}' },
        { id: 'call_2', name: 'get_weather', arguments: '{"city":"Oslo"}' },
      ],
      { tools },
    );
    expect([ok!.isError, text(ok!)]).toEqual([false, 'Oslo: 21c']);
    expect(seen).toEqual([{ user: 'ada' }, 'call_1', true]);
    // `unit` is nullable, not optional: absent, the SDK's own zod parse refuses it, and the
    // SDK's default errorFunction answers (a plain result, as in the SDK).
    expect([bad!.isError, text(bad!)]).toEqual([false, 'An error occurred while running the tool. Please try again.']);
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

describe('fromOpenAIAgentsTools validates as the SDK does', () => {
  it("the SDK's own parser decides: {\"test\":\"test\"} for a z.object({}) tool runs with the unknown key stripped", async () => {
    const seen: unknown[] = [];
    const empty = tool({ name: 'empty', description: 'no parameters', parameters: z.object({}), execute: async (input) => { seen.push(input); return 'ran'; } });
    const { tools } = fromOpenAIAgentsTools([empty]);
    // The SDK's strict schema refuses the key: a check against it (the bug) refused the call.
    expect(empty.parameters).toMatchObject({ additionalProperties: false });
    const [r] = await results([{ id: 'c', name: 'empty', arguments: '{"test":"test"}' }], { tools });
    expect([r!.isError, text(r!)]).toEqual([false, 'ran']);
    // Fails if toolrun refused it, or handed execute the unknown key (zod strips it).
    expect(seen).toEqual([{}]);
  });

  it('an optional zod key may be absent (the strict schema makes it required and nullable); unknown keys nested in objects pass too', async () => {
    const seen: unknown[] = [];
    const search = tool({
      name: 'search',
      description: 'search',
      parameters: z.object({ q: z.string(), limit: z.number().optional(), filter: z.object({ lang: z.string() }).optional() }),
      execute: async (input) => { seen.push(input); return 'ok'; },
    });
    const { tools } = fromOpenAIAgentsTools([search]);
    const out = await results(
      [
        { id: '1', name: 'search', arguments: '{"q":"x"}' },
        { id: '2', name: 'search', arguments: '{"q":"y","limit":null,"filter":{"lang":"en","region":"eu"},"page":2}' },
      ],
      { tools },
    );
    expect(out.map((m) => [m.isError, text(m)])).toEqual([[false, 'ok'], [false, 'ok']]);
    // What the SDK's parser made of them: nulls of optional keys dropped, unknown keys stripped at every level.
    expect(seen).toEqual([{ q: 'x' }, { q: 'y', filter: { lang: 'en' } }]);
  });

  it('P5 a missing required key or a wrong type is an error result naming what to fix; invoke is not called', async () => {
    let invoked = 0;
    const weather = tool({ name: 'weather', description: 'weather', parameters: z.object({ city: z.string(), days: z.number() }), execute: async () => { invoked++; return 'sunny'; } });
    const { tools } = fromOpenAIAgentsTools([weather]);
    const [missing, wrong] = await results(
      [
        { id: 'm', name: 'weather', arguments: '{"days":2,"extra":true}' },
        { id: 'w', name: 'weather', arguments: '{"city":"Oslo","days":"two"}' },
      ],
      { tools },
    );
    // Fails if the lenient check dropped the required keys too (invoke would answer the SDK's vague text).
    expect(missing!.isError).toBe(true);
    expect(text(missing!)).toMatch(/Invalid arguments for tool "weather":\n- city: /);
    expect(text(missing!)).toMatch(/Fix these and call the tool again/);
    expect(wrong!.isError).toBe(true);
    expect(text(wrong!)).toMatch(/- days: .*number/);
    expect(invoked).toBe(0);
  });

  it("a strict JSON Schema tool gets the arguments as the SDK's runner would (unknown keys kept, its null normalized); strict: false is checked as declared (the SDK only JSON.parses)", async () => {
    const seen: unknown[] = [];
    const strictJson = tool({
      name: 'note',
      description: 'note',
      parameters: { type: 'object', properties: { text: { type: 'string' }, tag: { type: 'string' } }, required: ['text'], additionalProperties: false },
      execute: async (input) => { seen.push(input); return 'noted'; },
    });
    const loose = tool({
      name: 'loose',
      description: 'loose',
      strict: false,
      parameters: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'], additionalProperties: true },
      execute: async () => 'ran',
    });
    const { tools } = fromOpenAIAgentsTools([strictJson, loose]);
    const out = await results(
      [
        { id: '1', name: 'note', arguments: '{"text":"hi","tag":null,"x":1}' },
        { id: '2', name: 'note', arguments: '{"tag":"t"}' },
        { id: '3', name: 'loose', arguments: '{"x":1}' },
      ],
      { tools },
    );
    expect(out.map((m) => m.isError)).toEqual([false, true, true]);
    expect(seen).toEqual([{ text: 'hi', x: 1 }]);
    expect(text(out[1]!)).toMatch(/- text: /);
    expect(text(out[2]!)).toMatch(/Invalid arguments for tool "loose"/);
  });
});

describe("fromOpenAIAgentsTools hands invoke the model's own call item", () => {
  function recorder() {
    const items: unknown[] = [];
    const echo = tool({ name: 'echo', description: 'echo', parameters: z.object({ say: z.string() }), execute: async ({ say }, _ctx, details) => { items.push(details?.toolCall); return say; } });
    return { items, tools: fromOpenAIAgentsTools([echo]).tools };
  }

  it("F3 a call read from a Responses output: details.toolCall is its function_call item in the SDK's shape (callId, id, status, providerData)", async () => {
    const { items, tools } = recorder();
    const output = [
      { type: 'reasoning', id: 'rs_1', summary: [] },
      { type: 'function_call', id: 'fc_9', call_id: 'call_9', name: 'echo', arguments: '{"say":"hi"}', status: 'completed' },
    ];
    const [r] = await results(fromOpenAIResponses(output), { tools });
    expect(text(r!)).toBe('hi');
    // Fails if the item were synthesized (no id fc_9, no status) or passed in the Responses shape (call_id).
    expect(items).toEqual([{ type: 'function_call', id: 'fc_9', callId: 'call_9', name: 'echo', status: 'completed', arguments: '{"say":"hi"}', providerData: { type: 'function_call', id: 'fc_9' } }]);
  });

  it('an Agents SDK item given as providerItem is passed as it is (the same object)', async () => {
    const { items, tools } = recorder();
    const item = { type: 'function_call' as const, id: 'fc_1', callId: 'call_1', name: 'echo', arguments: '{"say":"yo"}', status: 'completed' as const, providerData: { x: 1 } };
    await results([{ id: 'call_1', name: 'echo', arguments: item.arguments, providerItem: item }], { tools });
    expect(items[0]).toBe(item);
  });

  it('F3 calls streamed into runTools (an async iterable, as fromOpenAIResponsesStream gives) keep their item', async () => {
    const { items, tools } = recorder();
    const item = { type: 'function_call', id: 'fc_s', call_id: 'call_s', name: 'echo', arguments: '{"say":"s"}', status: 'completed' };
    async function* stream(): AsyncGenerator<ToolCall> {
      yield { id: 'call_s', name: 'echo', arguments: item.arguments, providerItem: item };
    }
    await results(stream(), { tools });
    // Fails if the run's reading of streamed calls dropped the field.
    expect(items).toEqual([expect.objectContaining({ id: 'fc_s', callId: 'call_s', status: 'completed' })]);
  });

  it('a call without the provider item (Anthropic, hand-made): an item is made from the call, callId = its id, arguments = the validated JSON', async () => {
    const { items, tools } = recorder();
    await results([{ id: 'toolu_1', name: 'echo', arguments: { say: 'x' } }], { tools });
    expect(items).toEqual([{ type: 'function_call', callId: 'toolu_1', name: 'echo', arguments: '{"say":"x"}' }]);
  });
});

describe('the fast suite keeps the SDK quiet (spec/setup/quiet-peers.ts)', () => {
  // The setup file replaces the SDK's trace processors through this key without importing the
  // SDK. Fails if the SDK stops keeping its provider there: the setup would then leave the
  // SDK's 5 s export loop running into later files, whose fake timers would count it.
  it("the SDK, once imported, keeps its trace provider (with setProcessors) on globalThis under the key the setup reads", () => {
    const provider = (globalThis as Record<symbol, unknown>)[Symbol.for('openai.agents.core.traceProvider')];
    expect(typeof (provider as { setProcessors?: unknown } | undefined)?.setProcessors).toBe('function');
  });
});
