/**
 * Type tests: LangChain.js and OpenAI Agents SDK tools moved into toolrun
 * keep what their own types carry. LangChain's `tool()` keeps the literal name (`NameT`) and
 * the input; the Agents SDK's `tool()` keeps the input and output, and types every name as
 * `string` (so the adapted name is `string` too: nothing is invented). Each `@ts-expect-error`
 * must stay an error. Checked by vitest typecheck in `npm test`.
 */
import * as lc from '@langchain/core/tools';
import * as agents from '@openai/agents';
import { describe, expectTypeOf, test } from 'vitest';
import { z } from 'zod';
import { fromLangChainTools, fromOpenAIAgentsTools, runTools, toAISDKTools } from '../../lib/index.ts';

describe('fromLangChainTools keeps names and inputs', () => {
  const search = lc.tool(async ({ q }) => `found ${q}`, { name: 'search', description: 'Search', schema: z.object({ q: z.string() }) });
  const add = lc.tool(async ({ a, b }) => String(a + b), { name: 'add', description: 'Add', schema: z.object({ a: z.number(), b: z.number() }) });
  const tools = fromLangChainTools([search, add]);

  test('names are literal and inputs typed', () => {
    expectTypeOf<(typeof tools)[number]['name']>().toEqualTypeOf<'search' | 'add'>();
    type Add = Extract<(typeof tools)[number], { name: 'add' }>;
    expectTypeOf<Parameters<Add['execute']>[0]>().toEqualTypeOf<{ a: number; b: number }>();
  });

  test('events narrow on the adapted names; and the set goes on to the AI SDK typed', async () => {
    for await (const event of runTools([], { tools })) {
      // @ts-expect-error no adapted tool is named 'serch' (a typo is caught)
      if (event.type === 'tool_execution_update' && event.toolName === 'serch') break;
    }
    const set = toAISDKTools(tools);
    expectTypeOf<keyof typeof set>().toEqualTypeOf<'search' | 'add'>();
    expectTypeOf<Parameters<typeof set.add.execute>[0]>().toEqualTypeOf<{ a: number; b: number }>();
  });
});

describe('fromOpenAIAgentsTools keeps inputs and outputs', () => {
  const weather = agents.tool({
    name: 'weather',
    description: 'Weather',
    parameters: z.object({ city: z.string() }),
    execute: async ({ city }) => ({ city, sunny: true }),
  });
  const { tools } = fromOpenAIAgentsTools([weather]);

  test("input from the SDK's parameters, details from invoke's output, name string as the SDK types it", () => {
    type T = (typeof tools)[number];
    expectTypeOf<Parameters<T['execute']>[0]>().toEqualTypeOf<{ city: string }>();
    expectTypeOf<T['name']>().toEqualTypeOf<string>();
    expectTypeOf<T>().toExtend<{ execute(...args: never[]): unknown }>();
    // @ts-expect-error the input is { city: string }, not a number
    expectTypeOf<Parameters<T['execute']>[0]>().toEqualTypeOf<number>();
  });

  test("result details are what invoke resolves to (the SDK's tool() types it string)", async () => {
    for await (const event of runTools([], { tools })) {
      if (event.type === 'tool_result' && event.toolName === 'weather') {
        expectTypeOf(event.message.details).toEqualTypeOf<string | undefined>();
      }
    }
  });
});
