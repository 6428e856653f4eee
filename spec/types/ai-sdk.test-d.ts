/**
 * Type tests, AI SDK both ways, against the real `ai` 7 and `ai` 6 types:
 * - `toAISDKTools(tools)` is a `ToolSet` keyed by the tools' literal names whose
 *   `StaticToolCall` / `StaticToolResult` have each tool's input and output, as native `tool()`s;
 * - `fromAISDKTools(toolSet)` keeps each tool's key as its name, its input, its output as
 *   `details`, and a generator tool's preliminary-result type as progress, so `runTools`'
 *   events narrow on `toolName` like native tools.
 * Each `@ts-expect-error` is a mistake that must stay an error (the checker fails when it
 * compiles). Checked by vitest typecheck in `npm test` (nodenext) and under `bundler` by
 * spec/types/resolutions.spec.ts.
 */
import * as ai from 'ai';
import type * as ai6 from 'ai-v6';
import * as v from 'valibot';
import { describe, expectTypeOf, test } from 'vitest';
import { z } from 'zod';
import { defineTool, fromAISDKTools, runTools, toAISDKTools, type AISDKTool, type AISDKToolOutput, type Tool, type ToolResult } from '../../lib/index.ts';

const weather = defineTool({
  name: 'weather',
  input: v.object({ city: v.string() }),
  async *execute({ city }) {
    yield { step: `looking up ${city}` };
    return { city, temperature: 21 };
  },
});
const clock = defineTool({ name: 'clock', input: v.object({}), execute: () => 'noon' });

describe('toAISDKTools: a typed ToolSet', () => {
  const set = toAISDKTools([weather, clock]);
  // ai 6 reads images as `image-data` parts, not ai 7's `file` parts (item 8): its own set.
  const set6 = toAISDKTools([weather, clock], { aiVersion: 6 });

  test('keys are the literal names; the set is an ai 7 ToolSet, and with aiVersion 6 an ai 6 ToolSet', () => {
    expectTypeOf<keyof typeof set>().toEqualTypeOf<'weather' | 'clock'>();
    expectTypeOf(set).toExtend<ai.ToolSet>();
    expectTypeOf(set6).toExtend<ai6.ToolSet>();
    expectTypeOf<keyof typeof set6>().toEqualTypeOf<'weather' | 'clock'>();
    // @ts-expect-error no tool is named 'nope'
    set.nope;
  });

  test("generateText's static tool calls and results carry each tool's name, input and output", () => {
    type Call = ai.StaticToolCall<typeof set>;
    expectTypeOf<Call['toolName']>().toEqualTypeOf<'weather' | 'clock'>();
    expectTypeOf<Extract<Call, { toolName: 'weather' }>['input']>().toEqualTypeOf<{ city: string }>();
    expectTypeOf<Extract<Call, { toolName: 'clock' }>['input']>().toEqualTypeOf<{}>();
    type Result = ai.StaticToolResult<typeof set>;
    expectTypeOf<Extract<Result, { toolName: 'weather' }>['output']>().toEqualTypeOf<
      AISDKToolOutput<{ step: string }, { city: string; temperature: number }>
    >();
    type Result6 = ai6.StaticToolResult<typeof set6>;
    expectTypeOf<Extract<Result6, { toolName: 'weather' }>['input']>().toEqualTypeOf<{ city: string }>();
    const call = {} as Extract<Call, { toolName: 'weather' }>;
    // @ts-expect-error `city` is a string
    const n: number = call.input.city;
    expectTypeOf(n).toBeNumber();
  });

  test('tools whose names are not literal give a Record<string, …>, as before', () => {
    const loose: Tool[] = [weather, clock];
    expectTypeOf(toAISDKTools(loose)).toEqualTypeOf<Record<string, AISDKTool>>();
  });
});

describe('fromAISDKTools: names, inputs, outputs and progress kept', () => {
  const toolSet = {
    search: ai.tool({
      description: 'Search',
      inputSchema: z.object({ q: z.string(), limit: z.number().optional() }),
      execute: async ({ q }) => ({ hits: [q] }),
    }),
    stream: ai.tool({
      inputSchema: z.object({ n: z.number() }),
      async *execute({ n }) {
        yield { status: 'working' as const, done: n };
      },
    }),
  };
  const { tools } = fromAISDKTools(toolSet);

  test('each adapted tool has its key as its literal name and its input type', () => {
    type T = (typeof tools)[number];
    expectTypeOf<T['name']>().toEqualTypeOf<'search' | 'stream'>();
    type Search = Extract<T, { name: 'search' }>;
    expectTypeOf<Search>().toExtend<Tool<{ q: string; limit?: number | undefined }, unknown, ToolResult<{ hits: string[] }>, 'search'>>();
  });

  test("runTools' events narrow on the adapted names: details are the SDK output, progress the preliminary results", async () => {
    for await (const event of runTools([], { tools })) {
      if (event.type === 'tool_result' && event.toolName === 'search') {
        expectTypeOf(event.message.details).toEqualTypeOf<{ hits: string[] } | undefined>();
      }
      if (event.type === 'tool_execution_update' && event.toolName === 'stream') {
        expectTypeOf(event.progress).toEqualTypeOf<{ status: 'working'; done: number }>();
      }
      if (event.type === 'tool_execution_update') {
        // @ts-expect-error 'search' is a plain async function: it yields no progress, so no update names it
        if (event.toolName === 'search') expectTypeOf(event).toBeNever();
      }
    }
  });

  test('round trip: toolrun → AI SDK → toolrun keeps the name and the input type', () => {
    const back = fromAISDKTools(toAISDKTools([weather])).tools[0]!;
    expectTypeOf(back.name).toEqualTypeOf<'weather'>();
    expectTypeOf<Parameters<typeof back.execute>[0]>().toEqualTypeOf<{ city: string }>();
  });
});
