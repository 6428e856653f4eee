/**
 * Tool definitions for the model (`toAnthropicTools`, `toOpenAIChatTools`,
 * `toOpenAIResponsesTools`), the JSON Schema of each kind of input, and the reversible
 * tool-name map.
 *
 * Evidence against the corpus: toolrun tools built from the `tools` field of every recorded
 * request regenerate that field exactly — except the recorded fields toolrun never writes,
 * listed below per file and asserted to be there.
 */
import type Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  convertBfclSchema,
  defineTool,
  PROVIDER_TOOL_NAME,
  providerToolNames,
  runTools,
  toAnthropicTools,
  toolJsonSchema,
  toOpenAIChatTools,
  toOpenAIResponsesTools,
  type JsonSchema,
  type Tool,
  type ToolCall,
} from '../../lib/index.ts';
import { collect } from '../helpers.ts';
import { corpusSkipNote, hasCorpus, readCorpusJson, readCorpusLines } from './corpus.ts';

const execute = () => 'ok';

describe('toolJsonSchema: the JSON Schema of every kind of input', () => {
  const expected = { type: 'object', properties: { city: { type: 'string' }, days: { type: 'number' } }, required: ['city'] };

  // arktype's cases are in spec/schemas/input-schemas.spec.ts, the one fast spec that loads
  // arktype (0.6 s of CPU in each worker that imports it).
  it('valibot (via @valibot/to-json-schema) and zod 4: the input side, no $schema', () => {
    const valibot = toolJsonSchema({ name: 'v', input: v.object({ city: v.string(), days: v.optional(v.number(), 3) }) });
    const zod = toolJsonSchema({ name: 'z', input: z.object({ city: z.string(), days: z.number().default(3) }) });
    // A field with a default is optional for the model (input side); the default is kept.
    expect(valibot).toEqual({ ...expected, properties: { ...expected.properties, days: { type: 'number', default: 3 } } });
    expect(zod).toEqual({ ...expected, properties: { ...expected.properties, days: { type: 'number', default: 3 } } });
    for (const schema of [valibot, zod]) expect(schema).not.toHaveProperty('$schema');
  });

  it('a JSON Schema input is sent as is: the same object, $schema and all', () => {
    const input = { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: {} };
    expect(toolJsonSchema({ name: 'j', input })).toBe(input);
  });

  it('converts once per schema object', () => {
    const input = v.object({ q: v.string() });
    expect(toolJsonSchema({ name: 'a', input })).toBe(toolJsonSchema({ name: 'b', input }));
  });

  it('a schema that cannot be converted is a TypeError naming the tool and quoting the library', () => {
    let thrown: unknown;
    try {
      toolJsonSchema({ name: 'when', input: v.object({ at: v.date() }) });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(TypeError);
    expect((thrown as TypeError).message).toBe(
      'tool "when": its input schema (valibot) cannot be converted to JSON Schema: The "date" schema cannot be converted to JSON Schema. ' +
        'Describe the input with JSON-compatible types only, or pass the JSON Schema yourself with the `jsonSchema` option.',
    );
    expect(() => toolJsonSchema({ name: 'when', input: z.object({ at: z.date() }) })).toThrow(/^tool "when": its input schema \(zod\) cannot be converted to JSON Schema: Date cannot be represented in JSON Schema/);
  });

  it('a library without a converter (zod 3 shape) and a non-object schema are TypeErrors too', () => {
    const zod3Like = { '~standard': { version: 1, vendor: 'zod', validate: (value: unknown) => ({ value }) } } as const;
    expect(() => toolJsonSchema({ name: 'old', input: zod3Like })).toThrow(/^tool "old": its input schema \(a zod Standard Schema\) has no JSON Schema converter.*A classic zod 3 schema carries none: wrap it as withJsonSchema\(schema, zodToJsonSchema\)/);
    expect(() => toolJsonSchema({ name: 'str', input: v.string() })).toThrow(/^tool "str": its input schema must describe an object .*converts to \{"type":"string"\}/);
  });
});

describe('toAnthropicTools, toOpenAIChatTools, toOpenAIResponsesTools', () => {
  const tools: Tool[] = [
    defineTool({ name: 'forecast', description: 'Weather for a city', input: v.object({ city: v.string() }), execute }),
    defineTool({ name: 'now', input: { type: 'object', properties: {} }, execute }),
  ];
  const citySchema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };

  it('Anthropic: { name, description?, input_schema }; fits the SDK’s Tool type', () => {
    const definitions: Anthropic.Tool[] = toAnthropicTools(tools);
    expect(definitions).toEqual([
      { name: 'forecast', description: 'Weather for a city', input_schema: citySchema },
      { name: 'now', input_schema: { type: 'object', properties: {} } },
    ]);
    expect(definitions[1]).not.toHaveProperty('description');
  });

  it('Chat Completions: { type: "function", function: { … } }, strict only when asked; fits the SDK type', () => {
    const plain: OpenAI.Chat.ChatCompletionTool[] = toOpenAIChatTools(tools);
    expect(plain).toEqual([
      { type: 'function', function: { name: 'forecast', description: 'Weather for a city', parameters: citySchema } },
      { type: 'function', function: { name: 'now', parameters: { type: 'object', properties: {} } } },
    ]);
    expect(toOpenAIChatTools(tools, { strict: true }).map((d) => d.function.strict)).toEqual([true, true]);
    expect(toOpenAIChatTools(tools, { strict: (tool) => (tool.name === 'now' ? false : undefined) }).map((d) => d.function.strict)).toEqual([undefined, false]);
  });

  it('Responses: flat { type, name, description?, parameters, strict }, strict always present (false by default); fits the SDK type', () => {
    const definitions: OpenAI.Responses.FunctionTool[] = toOpenAIResponsesTools(tools);
    expect(definitions).toEqual([
      { type: 'function', name: 'forecast', description: 'Weather for a city', parameters: citySchema, strict: false },
      { type: 'function', name: 'now', parameters: { type: 'object', properties: {} }, strict: false },
    ]);
    expect(toOpenAIResponsesTools(tools, { strict: true }).map((d) => d.strict)).toEqual([true, true]);
  });

  it('the jsonSchema option supplies a schema the library cannot convert', () => {
    // A plain Tool object: defineTool refuses a schema that cannot become a tool definition.
    const when: Tool = { name: 'when', input: v.object({ at: v.date() }), execute };
    expect(() => toAnthropicTools([when])).toThrow(/^toAnthropicTools: tool "when": its input schema \(valibot\) cannot be converted/);
    const schema = { type: 'object', properties: { at: { type: 'string', format: 'date-time' } } } as const;
    expect(toAnthropicTools([when], { jsonSchema: (tool) => (tool.name === 'when' ? schema : undefined) })).toEqual([{ name: 'when', input_schema: schema }]);
  });

  it('rejects duplicate names, a JSON Schema that is not an object schema, and a bad strict option', () => {
    expect(() => toOpenAIChatTools([tools[0]!, tools[0]!])).toThrow(/^toOpenAIChatTools: two tools are named "forecast"/);
    expect(() => toAnthropicTools([{ name: 'x', input: { type: 'string' }, execute } satisfies Tool])).toThrow(
      /^toAnthropicTools: tool "x" has an input JSON Schema without type "object" at the top \(got string "string"\)/,
    );
    expect(() => toOpenAIResponsesTools(tools, { strict: 'yes' as unknown as boolean })).toThrow(/options\.strict must be a boolean or a function/);
  });
});

describe('tool names providers reject: an error by default, a documented reversible map on request', () => {
  const named = (...names: string[]): Tool[] => names.map((name) => defineTool({ name, input: { type: 'object' }, execute }));

  it('rejects spotify.play with an error that says the rule and the way out', () => {
    for (const convert of [toAnthropicTools, toOpenAIChatTools, toOpenAIResponsesTools]) {
      expect(() => convert(named('spotify.play'))).toThrow(/tool "spotify\.play" has a name providers reject: .*\^\[a-zA-Z0-9_-\]\{1,64\}\$.*providerToolNames\(tools\).*names\.restoreCalls\(calls\)/);
    }
  });

  it('providerToolNames: invalid characters → "_", valid names kept and reserved, collisions and long names get a hash', () => {
    const long = `${'x'.repeat(70)}.y`;
    const names = providerToolNames(['spotify.play', 'math.factorial', 'ok_name', 'a.b', 'a_b', 'a/b', long, '', 'é'].map((name) => ({ name })));
    expect([...names.renamed]).toEqual([
      ['spotify.play', 'spotify_play'],
      ['math.factorial', 'math_factorial'],
      ['a.b', expect.stringMatching(/^a_b_[0-9a-f]{8}$/)],
      ['a/b', expect.stringMatching(/^a_b_[0-9a-f]{8}$/)],
      [long, expect.stringMatching(/^x{55}_[0-9a-f]{8}$/)],
      ['', 'tool'],
      ['é', '_'],
    ]);
    expect(names.toProvider('a.b')).not.toBe(names.toProvider('a/b'));
    expect(names.toProvider('ok_name')).toBe('ok_name');
    expect(names.toProvider('a_b')).toBe('a_b');
    for (const sent of names.renamed.values()) expect(sent).toMatch(PROVIDER_TOOL_NAME);
    for (const [original, sent] of names.renamed) expect(names.fromProvider(sent)).toBe(original);
    expect(names.fromProvider('unknown')).toBe('unknown');
    // Deterministic: the same list gives the same map.
    expect([...providerToolNames(named('a.b', 'a_b', 'a/b')).renamed]).toEqual([...providerToolNames(named('a.b', 'a_b', 'a/b')).renamed]);
    expect(() => providerToolNames(named('x', 'x'))).toThrow(/two tools are named "x"/);
  });

  it('round trip: definitions under mapped names, the model’s calls mapped back, runTools finds the tools', async () => {
    const tools = named('spotify.play', 'weather');
    const names = providerToolNames(tools);
    expect(toOpenAIChatTools(tools, { names }).map((d) => d.function.name)).toEqual(['spotify_play', 'weather']);
    expect(toAnthropicTools(tools, { names }).map((d) => d.name)).toEqual(['spotify_play', 'weather']);
    const fromModel: ToolCall[] = [
      { id: 'c1', name: 'spotify_play', arguments: '{}' },
      { id: 'c2', name: 'weather', arguments: '{}' },
    ];
    const calls = names.restoreCalls(fromModel);
    expect(calls.map((c) => c.name)).toEqual(['spotify.play', 'weather']);
    expect(calls[1]).toBe(fromModel[1]); // unchanged calls are the same objects
    const { batch } = await collect(runTools(calls, { tools }));
    expect(batch.messages.map((m) => [m.toolCallId, m.toolName, m.isError])).toEqual([
      ['c1', 'spotify.play', false],
      ['c2', 'weather', false],
    ]);
  });
});

/** BFCL functions (of 833 in the four parallel categories) whose names need the map. */
const RENAMED_BFCL_FUNCTIONS = 416;

/** Recorded fields toolrun never writes: file → what, and how to remove it from the recorded value before comparing. */
const RECORDED_EXTRAS: Record<string, { what: string; strip: (definition: any) => void }> = {
  'openai-chat/llama-stack__function_call_ordering_2.json': {
    what: 'llama-stack repeats `type: "function"` inside `function`, and sends `strict: null`',
    strip: (d) => {
      expect(d.function.type).toBe('function');
      expect(d.function.strict).toBeNull();
      delete d.function.type;
      delete d.function.strict;
    },
  },
  'openai-responses/pydantic-ai__bedrock_mantle_reused_call_ids.json': {
    what: 'pydantic-ai sends `description: null` for tools without a description (toolrun omits the field)',
    strip: (d) => {
      expect(d.description).toBeNull();
      delete d.description;
    },
  },
};

const RECORDED: Array<{ file: string; format: 'anthropic' | 'openai-chat' | 'openai-responses' }> = [
  { file: 'anthropic/crewai__anthropic_parallel_native_tool_calling_agent_kickoff.json', format: 'anthropic' },
  { file: 'anthropic/openinference__anthropic_multiple_tool_calling.json', format: 'anthropic' },
  { file: 'anthropic/openllmetry__anthropic_tools_streaming_legacy.json', format: 'anthropic' },
  { file: 'anthropic/pydantic-ai__anthropic_multiple_parallel_tool_calls.json', format: 'anthropic' },
  { file: 'openai-chat/crewai__openai_max_usage_count_multi_turn.json', format: 'openai-chat' },
  { file: 'openai-chat/crewai__openai_parallel_native_tool_calling_agent_kickoff.json', format: 'openai-chat' },
  { file: 'openai-chat/llama-stack__function_call_ordering_2.json', format: 'openai-chat' },
  { file: 'openai-chat/openllmetry__openai_streaming_parallel.json', format: 'openai-chat' },
  { file: 'openai-chat/openllmetry__writer_chat_seven_tool_calls.json', format: 'openai-chat' },
  { file: 'openai-chat/openllmetry__writer_streaming_seven_tool_calls.json', format: 'openai-chat' },
  { file: 'openai-chat/pydantic-ai__deepseek_two_calls.json', format: 'openai-chat' },
  { file: 'openai-chat/pydantic-ai__openai_chat_hitl_two_calls.json', format: 'openai-chat' },
  { file: 'openai-responses/pydantic-ai__bedrock_mantle_reused_call_ids.json', format: 'openai-responses' },
  { file: 'openai-responses/pydantic-ai__openai_responses_model_retry.json', format: 'openai-responses' },
];

/** The distinct `tools` arrays of a cassette's requests, in order. */
function recordedToolLists(file: string): any[][] {
  const doc = readCorpusJson(file) as { interactions: Array<{ request?: { body?: { tools?: any[] } } }> };
  const seen = new Map<string, any[]>();
  for (const interaction of doc.interactions) {
    const tools = interaction.request?.body?.tools;
    if (Array.isArray(tools)) seen.set(JSON.stringify(tools), tools);
  }
  return [...seen.values()];
}

describe.skipIf(!hasCorpus)(`round trip against the tools field of recorded requests${corpusSkipNote}`, () => {
  it.each(RECORDED)('$file: tools built from the recorded definitions regenerate them', ({ file, format }) => {
    const lists = recordedToolLists(file);
    expect(lists.length, file).toBeGreaterThan(0);
    for (const recorded of lists) {
      const expected = structuredClone(recorded);
      const extras = RECORDED_EXTRAS[file];
      if (extras !== undefined) expected.forEach(extras.strip);
      const strictByName = new Map<string, boolean | undefined>();
      const tools: Tool[] = recorded.map((definition) => {
        const fn = format === 'openai-chat' ? definition.function : definition;
        const input: JsonSchema = format === 'anthropic' ? fn.input_schema : fn.parameters;
        if (typeof fn.strict === 'boolean') strictByName.set(fn.name, fn.strict);
        return defineTool({ name: fn.name, ...(typeof fn.description === 'string' ? { description: fn.description } : {}), input, execute });
      });
      const strict = (tool: Tool) => strictByName.get(tool.name);
      const regenerated =
        format === 'anthropic' ? toAnthropicTools(tools) : format === 'openai-chat' ? toOpenAIChatTools(tools, { strict }) : toOpenAIResponsesTools(tools, { strict });
      expect(regenerated, file).toEqual(expected);
    }
  });

  it('covers every recorded request that has a tools field, in the three target formats (Gemini is not one)', () => {
    const index = readCorpusJson('INDEX.json') as Array<{ path?: string; file?: string }>;
    const files = index.map((entry) => entry.path ?? entry.file ?? '').filter((path) => /^(anthropic|openai-chat|openai-responses)\/.*\.json$/.test(path));
    const withTools = files.filter((path) => {
      const doc = readCorpusJson(path) as { interactions?: Array<{ request?: { body?: { tools?: unknown } } }> };
      return Array.isArray(doc.interactions) && doc.interactions.some((i) => Array.isArray(i.request?.body?.tools));
    });
    expect(withTools.sort()).toEqual(RECORDED.map((r) => r.file).sort());
  });

  it('BFCL: every function name maps to a provider name and back; definitions build for all 440 entries', () => {
    const broken: string[] = [];
    let renamed = 0;
    let functions = 0;
    for (const category of ['parallel', 'parallel_multiple', 'live_parallel', 'live_parallel_multiple']) {
      for (const entry of readCorpusLines(`bfcl/BFCL_v4_${category}.json`) as Array<{ function: Array<{ name: string; description: string; parameters: unknown }> }>) {
        const tools = entry.function.map((fn) => defineTool({ name: fn.name, description: fn.description, input: convertBfclSchema(fn.parameters), execute }));
        functions += tools.length;
        const names = providerToolNames(tools);
        renamed += names.renamed.size;
        const sent = toOpenAIChatTools(tools, { names }).map((d) => d.function.name);
        // Checked in plain code, the failures collected and asserted once after the loop (an
        // expect() per entry cost more than building the definitions).
        if (new Set(sent).size !== tools.length) broken.push(`${category}: two tools sent under one name: ${sent.join(', ')}`);
        for (const name of sent) if (!PROVIDER_TOOL_NAME.test(name)) broken.push(`${category}: ${name} is not a provider name`);
        const back = sent.map(names.fromProvider);
        if (back.some((name, i) => name !== tools[i]!.name)) broken.push(`${category}: ${back.join(', ')} do not map back`);
        if (names.renamed.size > 0) {
          let refused = false;
          try {
            toOpenAIChatTools(tools);
          } catch (error) {
            refused = /has a name providers reject/.test(String(error));
          }
          if (!refused) broken.push(`${category}: ${[...names.renamed.keys()].join(', ')} sent without renaming`);
        }
      }
    }
    expect(broken).toEqual([]);
    expect(functions).toBe(833);
    expect(renamed).toBe(RENAMED_BFCL_FUNCTIONS); // dotted names are common in BFCL (spotify.play, math.factorial …)
  });
});
