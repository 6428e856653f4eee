/**
 * docs/tools.md, section 2: tools whose input is a plain JSON Schema (from a JSON file, a
 * recorded request, another framework), and BFCL function definitions through the dialect
 * converter and the name map. `spec/docs/examples.spec.ts` runs this file; run it yourself
 * with `npx tsx docs/examples/json-schema-tools.ts`.
 */
import { pathToFileURL } from 'node:url';
// #region json-schema
import { defineTool, runTools, type Tool, type ToolResultMessage } from 'toolrun';

// Definitions as they come from a JSON file: OpenAI-style, draft-07 JSON Schema.
const definitions = [
  {
    name: 'get_weather',
    description: 'Current weather for a location',
    parameters: {
      type: 'object',
      properties: {
        location: { type: 'string', description: 'City and country, e.g. Bogotá, Colombia' },
        unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
      },
      required: ['location'],
      additionalProperties: false,
    },
  },
] as const;

const implementations: Record<string, (args: Record<string, unknown>) => string> = {
  get_weather: ({ location, unit = 'celsius' }) => `${String(location)}: 21 degrees ${String(unit)}`,
};

export const jsonTools: Tool[] = definitions.map((definition) =>
  defineTool({
    name: definition.name,
    description: definition.description,
    input: definition.parameters, // validated (JSON Schema); `execute` gets Record<string, unknown>
    execute: (args) => implementations[definition.name]!(args),
  }),
);

export async function runJsonTools(): Promise<ToolResultMessage[]> {
  const calls = [
    { id: 'call_1', name: 'get_weather', arguments: '{"location":"Bogotá, Colombia"}' },
    { id: 'call_2', name: 'get_weather', arguments: '{"location":"Lima","unit":"kelvin"}' },
  ];
  const results: ToolResultMessage[] = [];
  for await (const event of runTools(calls, { tools: jsonTools })) {
    if (event.type === 'tool_result') results.push(event.message);
  }
  // call_2 → 'Invalid arguments for tool "get_weather":\n- unit: must be one of "celsius", "fahrenheit" …'
  return results;
}
// #endregion json-schema

// #region bfcl
import { bfclGroundTruthArguments, convertBfclSchema, fromOpenAIChat, providerToolNames, toOpenAIChatTools } from 'toolrun';

// One BFCL function definition: "dict" and "float" are BFCL's dialect, not JSON Schema.
const bfclFunction = {
  name: 'math.power',
  description: 'Calculate the power of one number raised to another.',
  parameters: {
    type: 'dict',
    properties: {
      base: { type: 'integer', description: 'The base number.' },
      exponent: { type: 'integer', description: 'The exponent.' },
      mod: { type: 'float', description: 'The modulus. Default is None.' },
    },
    required: ['base', 'exponent'],
  },
};

export const power = defineTool({
  name: bfclFunction.name,
  description: bfclFunction.description,
  input: convertBfclSchema(bfclFunction.parameters), // { type: 'object', … mod: { type: 'number' } }
  execute: ({ base, exponent, mod }) => {
    const value = Number(base) ** Number(exponent);
    return typeof mod === 'number' ? value % mod : value;
  },
});

// "math.power" is not a name OpenAI accepts: map it (documented rule: "." → "_"), keep the map.
export const names = providerToolNames([power]);
export const bfclChatTools = toOpenAIChatTools([power], { names }); // function.name: "math_power"

export async function runBfcl(): Promise<ToolResultMessage[]> {
  // The model calls the name it was given...
  const completion = {
    role: 'assistant',
    tool_calls: [
      { id: 'call_a', type: 'function', function: { name: 'math_power', arguments: JSON.stringify(bfclGroundTruthArguments({ base: [2], exponent: [3], mod: [''] })) } },
      { id: 'call_b', type: 'function', function: { name: 'math_power', arguments: '{"base":3,"exponent":5,"mod":7}' } },
    ],
  };
  // ...and the map turns it back into toolrun's name before running.
  const results: ToolResultMessage[] = [];
  for await (const event of runTools(names.restoreCalls(fromOpenAIChat(completion)), { tools: [power] })) {
    if (event.type === 'tool_result') results.push(event.message);
  }
  return results; // "8" and "5", results named "math.power"
}
// #endregion bfcl

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(await runJsonTools());
  console.log(JSON.stringify(bfclChatTools, null, 2), await runBfcl());
}
