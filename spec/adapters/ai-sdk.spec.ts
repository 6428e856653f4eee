/**
 * The Vercel AI SDK adapter against the real `ai` package, versions 6 and 7 (both installed:
 * `ai` is 7, `ai-v6` is `ai@6` under another name), with the SDK's own mock language model.
 */
import * as ai7 from 'ai';
import * as ai7test from 'ai/test';
import * as ai6 from 'ai-v6';
import * as ai6test from 'ai-v6/test';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { collect, gate, text } from '../helpers.ts';
import { defineTool, runTools, type ToAISDKToolsOptions, type Tool, type ToolCall, type ToolResultMessage } from '../../lib/index.ts';
import { fromAISDKTools, toAISDKTools } from '../../lib/index.ts';

const versions = [
  { label: 'ai 7', ai: ai7 as unknown as typeof ai6, test: ai7test as unknown as typeof ai6test, aiVersion: 7 as const },
  { label: 'ai 6', ai: ai6, test: ai6test, aiVersion: 6 as const },
];

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

async function results(calls: ToolCall[], options: Parameters<typeof runTools>[1]): Promise<ToolResultMessage[]> {
  return (await collect(runTools(calls, options))).batch.messages;
}

describe.each(versions)('fromAISDKTools ($label)', ({ ai }) => {
  it('runs a tool({ inputSchema: zod }) with the validated input and maps ToolContext onto execute options', async () => {
    const seen: unknown[] = [];
    const history = [{ role: 'user', content: 'weather?' }];
    const { tools } = fromAISDKTools(
      {
        weather: ai.tool({
          description: 'Weather of a city',
          inputSchema: z.object({ city: z.string(), days: z.number().default(1) }),
          execute: async (input, options) => {
            seen.push(input, options.toolCallId, options.messages, options.abortSignal instanceof AbortSignal);
            return { city: input.city, days: input.days, temp: 21 };
          },
        }),
      },
      { messages: () => history },
    );
    expect(tools.map((t) => [t.name, t.description])).toEqual([['weather', 'Weather of a city']]);
    const [ok, bad] = await results(
      [
        { id: 'c1', name: 'weather', arguments: '{"city":"Oslo"}' },
        { id: 'c2', name: 'weather', arguments: { city: 3 } },
      ],
      { tools },
    );
    expect(ok!.isError).toBe(false);
    expect(text(ok!)).toBe('{"city":"Oslo","days":1,"temp":21}');
    expect(ok!.details).toEqual({ city: 'Oslo', days: 1, temp: 21 });
    expect(seen).toEqual([{ city: 'Oslo', days: 1 }, 'c1', history, true]);
    // zod rejected the second call before execute (P5).
    expect(bad!.isError).toBe(true);
    expect(text(bad!)).toMatch(/city/);
  });

  it('validates with a jsonSchema() wrapper (Ajv) and with a jsonSchema(…, { validate }) / zodSchema() wrapper (its validate) (P5)', async () => {
    const calls: unknown[] = [];
    const { tools } = fromAISDKTools({
      plain: ai.tool({
        inputSchema: ai.jsonSchema<{ n: number }>({ type: 'object', properties: { n: { type: 'number' } }, required: ['n'] }),
        execute: async ({ n }) => n * 2,
      }),
      lazy: ai.tool({
        // A lazy schema: a function that returns a jsonSchema() wrapper.
        inputSchema: (() => ai.jsonSchema<{ n: number }>({ type: 'object', properties: { n: { type: 'number' } }, required: ['n'] })) as never,
        execute: async ({ n }: { n: number }) => n + 1,
      }),
      zodded: ai.tool({
        inputSchema: ai.zodSchema(z.object({ s: z.string().transform((s) => s.toUpperCase()) })),
        execute: async ({ s }) => {
          calls.push(s);
          return s;
        },
      }),
    });
    const [l1, l2] = await results(
      [
        { id: 'l1', name: 'lazy', arguments: { n: 1 } },
        { id: 'l2', name: 'lazy', arguments: {} },
      ],
      { tools },
    );
    expect([l1!.isError, text(l1!), l2!.isError]).toEqual([false, '2', true]);
    const [a, b, c, d] = await results(
      [
        { id: '1', name: 'plain', arguments: { n: 4 } },
        { id: '2', name: 'plain', arguments: { n: 'x' } },
        { id: '3', name: 'zodded', arguments: { s: 'hi' } },
        { id: '4', name: 'zodded', arguments: { s: 1 } },
      ],
      { tools },
    );
    expect([a!.isError, text(a!)]).toEqual([false, '8']);
    expect(b!.isError).toBe(true);
    expect(text(b!)).toMatch(/n/);
    expect([c!.isError, text(c!)]).toEqual([false, 'HI']);
    expect(d!.isError).toBe(true);
    expect(calls).toEqual(['HI']);
  });

  it('an async-iterable execute: each value is progress, the last is the result', async () => {
    const step = gate();
    const { tools } = fromAISDKTools({
      count: ai.tool({
        inputSchema: z.object({}),
        async *execute() {
          yield { status: 'loading' };
          await step.promise;
          yield { status: 'done', value: 42 };
        },
      }),
    });
    const run = runTools([{ id: 'a', name: 'count', arguments: {} }], { tools });
    const progress: unknown[] = [];
    let result: ToolResultMessage | undefined;
    for await (const event of run) {
      if (event.type === 'tool_execution_update') {
        progress.push(event.progress);
        if (progress.length === 1) step.open();
      }
      if (event.type === 'tool_result') result = event.message;
    }
    expect(progress).toEqual([{ status: 'loading' }, { status: 'done', value: 42 }]);
    expect(text(result!)).toBe('{"status":"done","value":42}');
  });

  it('toModelOutput decides the content; error-text becomes an error result', async () => {
    const { tools } = fromAISDKTools({
      shot: ai.tool({
        inputSchema: z.object({ fail: z.boolean() }),
        execute: async ({ fail }) => ({ fail }),
        toModelOutput: ({ output }) =>
          (output as { fail: boolean }).fail
            ? { type: 'error-text', value: 'camera offline' }
            : { type: 'content', value: [{ type: 'text', text: 'a cat' }, { type: 'image-data', data: 'iVBORw0KGgo=', mediaType: 'image/png' }] },
      }),
    });
    const [ok, failed] = await results(
      [
        { id: '1', name: 'shot', arguments: { fail: false } },
        { id: '2', name: 'shot', arguments: { fail: true } },
      ],
      { tools },
    );
    expect(ok!.content).toEqual([
      { type: 'text', text: 'a cat' },
      { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
    ]);
    expect([failed!.isError, text(failed!)]).toEqual([true, 'camera offline']);
  });

  it("H1: needsApproval is the adapted tool's own: deferred without approve (the batch pauses, then resumes), asked with runTools' approve", async () => {
    const ran: string[] = [];
    const set = {
      rm: ai.tool({
        inputSchema: z.object({ path: z.string() }),
        needsApproval: async ({ path }) => path.startsWith('/'),
        execute: async ({ path }) => {
          ran.push(path);
          return 'removed';
        },
      }),
      ls: ai.tool({ inputSchema: z.object({}), needsApproval: false, execute: async () => 'a b' }),
    };
    const calls: ToolCall[] = [
      { id: '1', name: 'rm', arguments: { path: '/etc' } },
      { id: '2', name: 'rm', arguments: { path: 'tmp' } },
      { id: '3', name: 'ls', arguments: {} },
    ];
    const { tools } = fromAISDKTools(set);
    // `needsApproval: false` leaves no rule on the tool: its calls pay for no approval step.
    expect(tools.map((t) => typeof t.needsApproval)).toEqual(['function', 'undefined']);
    const paused = (await collect(runTools(calls, { tools }))).batch;
    // Call 1 waits for a person; calls 2 and 3 ran, their results kept in the state (call order).
    expect(paused.messages).toEqual([]);
    expect(paused.paused!.requests.map((r) => [r.toolCallId, r.source, r.input])).toEqual([['1', 'tool', { path: '/etc' }]]);
    expect(ran).toEqual(['tmp']);
    const resumed = await results(calls, {
      tools,
      resume: { state: JSON.stringify(paused.paused!.state), approvals: [{ approvalId: paused.paused!.requests[0]!.approvalId, approved: true }] },
    });
    expect(resumed.map(text)).toEqual(['removed', 'removed', 'a b']);
    expect(ran).toEqual(['tmp', '/etc']);
    ran.length = 0;
    const asked: unknown[] = [];
    const r2 = await results(calls, {
      tools,
      approve: (request) => {
        asked.push([request.toolCallId, request.input]);
        return { approvalId: request.approvalId, approved: false };
      },
    });
    expect(asked).toEqual([['1', { path: '/etc' }]]);
    expect(text(r2[0]!)).toMatch(/A person denied this call to tool "rm"/);
    expect(ran).toEqual(['tmp']);
  });

  it('H1: the removed approve option is a TypeError that says where the function goes now', () => {
    const set = { ls: ai.tool({ inputSchema: z.object({}), execute: async () => 'a b' }) };
    expect(() => fromAISDKTools(set, { approve: () => true } as never)).toThrow(/options\.approve was removed.*pass your approval function to runTools/);
  });

  it('a non-object input schema (z.string()) is a TypeError naming the tool; tools without execute are skipped', () => {
    expect(() => fromAISDKTools({ shout: ai.tool({ inputSchema: z.string(), execute: async (s: string) => s }) })).toThrow(
      /fromAISDKTools: .*"shout"/,
    );
    expect(() => fromAISDKTools({ raw: ai.tool({ inputSchema: ai.jsonSchema<string>({ type: 'string' }), execute: async (s: string) => s }) })).toThrow(
      /tool "raw" has an input schema of type string "string"/,
    );
    const { tools, skipped } = fromAISDKTools({ client: ai.tool({ inputSchema: z.object({}), outputSchema: z.string() }) });
    expect([tools, skipped]).toEqual([[], ['client']]);
  });

  it('the execute options carry the call signal: aborting the run aborts the AI SDK tool (A2)', async () => {
    const started = gate();
    const { tools } = fromAISDKTools({
      wait: ai.tool({
        inputSchema: z.object({}),
        execute: (_input, { abortSignal }) =>
          new Promise((_resolve, reject) => {
            started.open();
            abortSignal?.addEventListener('abort', () => reject(new Error('stopped by signal')));
          }),
      }),
    });
    const controller = new AbortController();
    const run = collect(runTools([{ id: 'w', name: 'wait', arguments: {} }], { tools, signal: controller.signal }));
    await started.promise;
    controller.abort();
    const { batch } = await run;
    expect(batch.messages[0]!.isError).toBe(true);
  });
});

describe.each(versions)('toAISDKTools ($label)', ({ ai, test, aiVersion }) => {
  /** toAISDKTools for the version under test (its image parts differ), typed as ai 6's ToolSet as `ai` is here. */
  const aiTools = (tools: readonly Tool[], options: ToAISDKToolsOptions = {}): ai6.ToolSet => toAISDKTools(tools, { ...options, aiVersion }) as unknown as ai6.ToolSet;
  const add = defineTool({
    name: 'add',
    description: 'Adds two numbers',
    input: z.object({ a: z.number(), b: z.number() }),
    async *execute({ a, b }) {
      yield { adding: [a, b] };
      return String(a + b);
    },
  });

  function toolCallingModel(args: string) {
    let step = 0;
    return new test.MockLanguageModelV3({
      doGenerate: async () => {
        step++;
        if (step === 1) {
          return {
            content: [{ type: 'tool-call', toolCallId: 'call-1', toolName: 'add', input: args }],
            finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
            usage,
            warnings: [],
          };
        }
        return { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
      },
    });
  }

  it('generateText runs the tool through runTools and the result reaches the next step', async () => {
    const model = toolCallingModel('{"a":2,"b":3}');
    const result = await ai.generateText({ model, tools: aiTools([add]), prompt: 'add', stopWhen: ai.stepCountIs(3) });
    expect(result.text).toBe('done');
    expect(result.steps[0]!.toolResults[0]!.output).toEqual({ type: 'result', content: [{ type: 'text', text: '5' }] });
    // The second model call's prompt carries the tool result as toModelOutput wrote it.
    const prompt = model.doGenerateCalls[1]!.prompt;
    const toolMessage = prompt.find((m) => m.role === 'tool');
    expect(toolMessage?.content).toEqual([expect.objectContaining({ type: 'tool-result', toolCallId: 'call-1', toolName: 'add', output: { type: 'text', value: '5' } })]);
    // The tool definition sent to the model is the tool's JSON Schema.
    const sent = model.doGenerateCalls[0]!.tools?.[0] as { name: string; inputSchema: { properties: object } } | undefined;
    expect(sent?.name).toBe('add');
    expect(Object.keys(sent!.inputSchema.properties)).toEqual(['a', 'b']);
  });

  it("H1: a tool's needsApproval holds inside generateText: without approve it is not run and the model is told why; approve decides", async () => {
    let sent = 0;
    const send = defineTool({
      name: 'add',
      input: z.object({ a: z.number(), b: z.number() }),
      needsApproval: ({ a }) => a > 1,
      execute: ({ a, b }) => {
        sent++;
        return String(a + b);
      },
    });
    // Fails if the call ran (sent > 0) or ended with toolrun's "gave no result" instead of the approval text.
    const unasked = toolCallingModel('{"a":2,"b":3}');
    await ai.generateText({ model: unasked, tools: aiTools([send]), prompt: 'add', stopWhen: ai.stepCountIs(3) });
    const told = unasked.doGenerateCalls[1]!.prompt.find((m) => m.role === 'tool')?.content[0] as { output: { type: string; value: string } };
    expect(told.output.type).toBe('error-text');
    expect(told.output.value).toMatch(/needs a person's approval, and no one could be asked here, so it was not run/);
    expect(sent).toBe(0);
    const asked: unknown[] = [];
    const approving = toolCallingModel('{"a":2,"b":3}');
    const result = await ai.generateText({
      model: approving,
      tools: aiTools([send], { approve: (request) => (asked.push(request.input), { approvalId: request.approvalId, approved: true }) }),
      prompt: 'add',
      stopWhen: ai.stepCountIs(3),
    });
    expect(result.steps[0]!.toolResults[0]!.output).toEqual({ type: 'result', content: [{ type: 'text', text: '5' }] });
    expect([asked, sent]).toEqual([[{ a: 2, b: 3 }], 1]);
  });

  it("invalid arguments are rejected by the tool's own schema and reach the model as an error (P5)", async () => {
    const model = toolCallingModel('{"a":"two","b":3}');
    const result = await ai.generateText({ model, tools: aiTools([add]), prompt: 'add', stopWhen: ai.stepCountIs(3) });
    const errorPart = result.steps[0]!.content.find((p) => p.type === 'tool-error');
    expect(errorPart).toBeDefined();
    const toolMessage = model.doGenerateCalls[1]!.prompt.find((m) => m.role === 'tool');
    const output = (toolMessage?.content[0] as { output: { type: string; value: string } }).output;
    expect(output.type).toBe('error-text');
    expect(output.value).toMatch(/a/);
  });

  it("the SDK's abortSignal aborts the toolrun call's signal (A2)", async () => {
    const started = gate();
    const aborted = gate<unknown>();
    const wait = defineTool({
      name: 'add',
      input: z.object({ a: z.number(), b: z.number() }),
      execute: (_input, { signal }) =>
        new Promise<string>((_resolve, reject) => {
          signal.addEventListener('abort', () => {
            aborted.open(signal.reason);
            reject(signal.reason);
          });
          started.open();
        }),
    });
    const controller = new AbortController();
    const model = toolCallingModel('{"a":1,"b":2}');
    const running = ai.generateText({ model, tools: aiTools([wait]), prompt: 'add', abortSignal: controller.signal, stopWhen: ai.stepCountIs(3) });
    await started.promise;
    controller.abort(new Error('user pressed stop'));
    expect(((await aborted.promise) as Error).message).toBe('user pressed stop');
    await running.catch(() => undefined);
  });

  it('streamText: progress arrives as preliminary tool results, then the final one', async () => {
    let step = 0;
    const model = new test.MockLanguageModelV3({
      doStream: async () => {
        step++;
        const parts =
          step === 1
            ? [
                { type: 'tool-call', toolCallId: 'call-1', toolName: 'add', input: '{"a":1,"b":1}' },
                { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage },
              ]
            : [
                { type: 'text-start', id: 't' },
                { type: 'text-delta', id: 't', delta: 'ok' },
                { type: 'text-end', id: 't' },
                { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage },
              ];
        return { stream: test.convertArrayToReadableStream(parts as never[]) };
      },
    });
    const stream = ai.streamText({ model, tools: aiTools([add]), prompt: 'add', stopWhen: ai.stepCountIs(3) });
    const seen: unknown[] = [];
    for await (const part of stream.fullStream) {
      if (part.type === 'tool-result') seen.push([part.preliminary ?? false, part.output]);
    }
    expect(seen).toEqual([
      [true, { type: 'progress', progress: { adding: [1, 1] } }],
      [true, { type: 'result', content: [{ type: 'text', text: '2' }] }],
      [false, { type: 'result', content: [{ type: 'text', text: '2' }] }],
    ]);
  });
});

describe('types against ai 7 (the versions above run ai 7 through ai 6 types)', () => {
  it('ai 7 tools fit fromAISDKTools and toAISDKTools fits ai 7 generateText', () => {
    const set = { echo: ai7.tool({ inputSchema: z.object({ s: z.string() }), execute: async ({ s }) => s, needsApproval: true }) };
    const { tools } = fromAISDKTools(set, { context: { user: 'u' } });
    const toolSet: ai7.ToolSet = toAISDKTools(tools);
    const v6Set: ai6.ToolSet = toAISDKTools(tools, { aiVersion: 6 });
    expect(Object.keys(toolSet)).toEqual(['echo']);
    expect(Object.keys(v6Set)).toEqual(['echo']);
    const model = new ai7test.MockLanguageModelV4({});
    // Typechecks only: ai 7's generateText takes the converted ToolSet.
    const call = () => ai7.generateText({ model, tools: toAISDKTools(tools), prompt: 'x' });
    expect(typeof call).toBe('function');
  });
});
