/**
 * docs/tools.md, section 1: tools defined in code with valibot, zod and arktype, sent to a
 * model as tool definitions, and run. `spec/docs/examples.spec.ts` runs this file; run it
 * yourself with `npx tsx docs/examples/schema-tools.ts`.
 */
import { pathToFileURL } from 'node:url';
// #region define
import { type } from 'arktype';
import * as v from 'valibot';
import { z } from 'zod';
import { defineTool } from 'toolrun';

// valibot: the default. `days` has a default, so the model may leave it out.
export const forecast = defineTool({
  name: 'forecast',
  description: 'Weather forecast for a city, 1 to 7 days',
  input: v.object({
    city: v.pipe(v.string(), v.minLength(1)),
    days: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(7)), 3),
  }),
  async *execute({ city, days }) {
    yield `looking up ${city}`; // progress: a tool_execution_update event
    return `${city}: sunny for the next ${days} days`;
  },
});

// zod 4: any Standard Schema works the same way.
export const convert = defineTool({
  name: 'convert_temperature',
  description: 'Convert a temperature from Celsius',
  input: z.object({ celsius: z.number(), to: z.enum(['fahrenheit', 'kelvin']) }),
  execute: ({ celsius, to }) => (to === 'kelvin' ? celsius + 273.15 : (celsius * 9) / 5 + 32),
});

// arktype: its types are Standard Schemas too.
export const distance = defineTool({
  name: 'distance_km',
  description: 'Straight-line distance between two cities',
  input: type({ from: 'string', to: 'string' }),
  execute: ({ from, to }) => ({ content: [{ type: 'text', text: `${from} → ${to}: 1,105 km` }] }),
});

export const tools = [forecast, convert, distance];
// #endregion define

// #region definitions
import { toAnthropicTools, toOpenAIChatTools, toOpenAIResponsesTools } from 'toolrun';

// The `tools` field of the request, from the same list: one JSON Schema per tool.
export const anthropicTools = toAnthropicTools(tools); // [{ name, description, input_schema }, …]
export const chatTools = toOpenAIChatTools(tools); // [{ type: 'function', function: { name, description, parameters } }, …]
export const responsesTools = toOpenAIResponsesTools(tools); // [{ type: 'function', name, description, parameters, strict: false }, …]
// #endregion definitions

// #region run
import { fromAnthropic, runTools, toAnthropic, type ToolResultMessage } from 'toolrun';

/** What the model answered (an Anthropic Messages response), with one call that breaks its schema. */
export const response = {
  role: 'assistant',
  content: [
    { type: 'text', text: 'Let me check.' },
    { type: 'tool_use', id: 'toolu_1', name: 'forecast', input: { city: 'Rome' } },
    { type: 'tool_use', id: 'toolu_2', name: 'convert_temperature', input: { celsius: 21, to: 'kelvin' } },
    { type: 'tool_use', id: 'toolu_3', name: 'distance_km', input: { from: 'Rome' } },
  ],
} as const;

export async function runResponse(): Promise<ReturnType<typeof toAnthropic>> {
  const results: ToolResultMessage[] = [];
  for await (const event of runTools(fromAnthropic(response), { tools })) {
    if (event.type === 'tool_execution_update') console.log(`  ${event.toolName}: ${String(event.progress)}`);
    if (event.type === 'tool_result') results.push(event.message);
  }
  // toolu_3 is an error result: "Invalid arguments for tool "distance_km": - to: to must be a string (was missing) …"
  return toAnthropic(results); // the user message to send next
}
// #endregion run

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(JSON.stringify(anthropicTools, null, 2));
  console.log(JSON.stringify(await runResponse(), null, 2));
}
