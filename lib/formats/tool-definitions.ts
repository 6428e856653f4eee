/**
 * Tool definitions for the model: the `tools` field of a request, for each provider, from
 * the same toolrun tool list that `runTools` executes.
 *
 * - {@link toAnthropicTools}: Anthropic Messages `tools` (`{ name, description, input_schema }`).
 * - {@link toOpenAIChatTools}: Chat Completions `tools` (`{ type: 'function', function: { name, description, parameters, strict? } }`).
 * - {@link toOpenAIResponsesTools}: Responses `tools` (`{ type: 'function', name, description, parameters, strict }`).
 * - {@link toGeminiTools}: Gemini `tools` (`[{ functionDeclarations: [{ name, description, parametersJsonSchema }] }]`).
 *
 * Each tool's JSON Schema comes from `toolJsonSchema` (`lib/core/schema/json-schema.ts`): a
 * JSON Schema `input` as is, valibot through `@valibot/to-json-schema`, zod 4 and arktype
 * through their Standard JSON Schema converter.
 *
 * **Tool names.** OpenAI documents `^[a-zA-Z0-9_-]{1,64}$` for function names; Anthropic
 * allows the same characters (its documented length limit has been 64, later 128). toolrun
 * checks the common, stricter rule ({@link PROVIDER_TOOL_NAME}) so that one name serves
 * every provider (`../shared/corpus/SOURCES.md`, format observation 9). It does not rename
 * silently: a name outside the rule (BFCL's `spotify.play`, an MCP tool's `files/read`) is a
 * `TypeError`, unless the caller passes a {@link ToolNames} map from {@link providerToolNames}, whose rule is documented there and in
 * docs/adr/0007-provider-formats.md; the map turns the model's calls back into toolrun names.
 *
 * @module
 */
import { toolJsonSchema } from '../core/schema/json-schema.ts';
import { describeValue } from '../core/values/guards.ts';
import type { JsonSchema } from '../core/tool/content.ts';
import type { Tool, ToolCall } from '../core/tool/tool.ts';

/**
 * The tool-name rule every supported provider accepts: 1–64 characters, each an ASCII
 * letter, a digit, `_` or `-` (OpenAI's documented `^[a-zA-Z0-9_-]{1,64}$`).
 */
export const PROVIDER_TOOL_NAME: RegExp = /^[a-zA-Z0-9_-]{1,64}$/;

/** A JSON Schema whose top level describes an object, as providers require for tool input. */
export interface ObjectJsonSchema {
  type: 'object';
  [key: string]: unknown;
}

/** One Anthropic Messages tool definition (fits the SDK's `Anthropic.Tool`). */
export interface AnthropicToolDefinition {
  name: string;
  /** The tool's `description`; omitted when the tool has none. */
  description?: string;
  input_schema: ObjectJsonSchema;
}

/** One Chat Completions tool definition (fits the SDK's `ChatCompletionFunctionTool`). */
export interface OpenAIChatToolDefinition {
  type: 'function';
  function: {
    name: string;
    /** The tool's `description`; omitted when the tool has none. */
    description?: string;
    parameters: ObjectJsonSchema;
    /** Present only when the `strict` option gives a value for this tool. */
    strict?: boolean;
  };
}

/** One Responses API function tool definition (fits the SDK's `FunctionTool`). */
export interface OpenAIResponsesToolDefinition {
  type: 'function';
  name: string;
  /** The tool's `description`; omitted when the tool has none. */
  description?: string;
  parameters: ObjectJsonSchema;
  /** Always present (the API's type requires it); `false` unless the `strict` option says otherwise. */
  strict: boolean;
}

/** One Gemini function declaration (fits `@google/genai`'s `FunctionDeclaration`). */
export interface GeminiFunctionDeclaration {
  name: string;
  /** The tool's `description`; omitted when the tool has none. */
  description?: string;
  /** The tool's input JSON Schema, as is (not the OpenAPI subset of `parameters`). */
  parametersJsonSchema: ObjectJsonSchema;
}

/** The Gemini tool that carries toolrun's function declarations (fits `@google/genai`'s `Tool`). */
export interface GeminiToolDefinition {
  functionDeclarations: GeminiFunctionDeclaration[];
}

/** Options shared by the `to…Tools` functions. */
export interface ToolDefinitionsOptions {
  /**
   * A name map from {@link providerToolNames}: each tool is sent under
   * `names.toProvider(tool.name)`. Without it, a name outside {@link PROVIDER_TOOL_NAME}
   * is a `TypeError`.
   */
  names?: ToolNames;
  /**
   * The JSON Schema to send for a tool, when the derived one will not do (a zod 3 schema
   * that has no converter, a hand-tuned schema for strict mode). Return `undefined` to use
   * the derived schema. Must describe an object (`type: "object"`).
   */
  jsonSchema?: (tool: Tool) => JsonSchema | undefined;
}

/** Options of {@link toOpenAIChatTools} and {@link toOpenAIResponsesTools}. */
export interface OpenAIToolDefinitionsOptions extends ToolDefinitionsOptions {
  /**
   * OpenAI's `strict` flag (Structured Outputs for the arguments), for every tool or per
   * tool (`undefined`: no value). Chat Completions omits the field when there is no value;
   * the Responses API always sends it, `false` when there is no value. `true` is the
   * caller's promise that the schema fits OpenAI's strict subset (every property required,
   * `additionalProperties: false`): toolrun sends the schema unchanged.
   */
  strict?: boolean | ((tool: Tool) => boolean | undefined);
}

/**
 * Anthropic Messages `tools`: one `{ name, description?, input_schema }` per tool, in order.
 *
 * @param tools - the tools `runTools` will run (a name may appear once).
 * @throws TypeError naming the tool: a duplicate name, a name outside
 *   {@link PROVIDER_TOOL_NAME} when no `names` map is given, a schema that cannot be
 *   converted to JSON Schema, or one that does not describe an object.
 *
 * @example
 * ```ts
 * const response = await anthropic.messages.create({ model, max_tokens, messages, tools: toAnthropicTools(tools) });
 * for await (const event of runTools(fromAnthropic(response), { tools })) { … }
 * ```
 */
export function toAnthropicTools(tools: readonly Tool[], options: ToolDefinitionsOptions = {}): AnthropicToolDefinition[] {
  return definitionParts('toAnthropicTools', tools, options).map(({ name, description, schema }) =>
    description === undefined ? { name, input_schema: schema } : { name, description, input_schema: schema },
  );
}

/**
 * Chat Completions `tools`: one `{ type: 'function', function: { name, description?,
 * parameters, strict? } }` per tool, in order.
 *
 * @throws TypeError, as {@link toAnthropicTools}; also for a `strict` option that is
 *   neither a boolean nor a function.
 *
 * @example
 * ```ts
 * const names = providerToolNames(tools); // only needed when a name has a '.', '/', …
 * const completion = await openai.chat.completions.create({ model, messages, tools: toOpenAIChatTools(tools, { names }) });
 * for await (const event of runTools(names.restoreCalls(fromOpenAIChat(completion)), { tools })) { … }
 * ```
 */
export function toOpenAIChatTools(tools: readonly Tool[], options: OpenAIToolDefinitionsOptions = {}): OpenAIChatToolDefinition[] {
  const strictOf = strictOption('toOpenAIChatTools', options.strict);
  return definitionParts('toOpenAIChatTools', tools, options).map(({ tool, name, description, schema }) => {
    const fn: OpenAIChatToolDefinition['function'] =
      description === undefined ? { name, parameters: schema } : { name, description, parameters: schema };
    const strict = strictOf(tool);
    if (strict !== undefined) fn.strict = strict;
    return { type: 'function', function: fn };
  });
}

/**
 * Responses API `tools`: one `{ type: 'function', name, description?, parameters, strict }`
 * per tool, in order. `strict` is always present: the option's value, else `false`.
 *
 * @throws TypeError, as {@link toOpenAIChatTools}.
 *
 * @example
 * ```ts
 * const response = await openai.responses.create({ model, input, tools: toOpenAIResponsesTools(tools) });
 * for await (const event of runTools(fromOpenAIResponses(response), { tools })) { … }
 * ```
 */
export function toOpenAIResponsesTools(tools: readonly Tool[], options: OpenAIToolDefinitionsOptions = {}): OpenAIResponsesToolDefinition[] {
  const strictOf = strictOption('toOpenAIResponsesTools', options.strict);
  return definitionParts('toOpenAIResponsesTools', tools, options).map(({ tool, name, description, schema }) => {
    const definition: OpenAIResponsesToolDefinition = { type: 'function', name, parameters: schema, strict: strictOf(tool) ?? false };
    if (description !== undefined) definition.description = description;
    return definition;
  });
}

/**
 * Gemini `tools` (`generateContent`, Gemini API and Vertex AI; `config.tools` in
 * `@google/genai`): one tool whose `functionDeclarations` hold one
 * `{ name, description?, parametersJsonSchema }` per toolrun tool, in order; `[]` for no tools.
 *
 * The schema goes in `parametersJsonSchema`, the field that takes JSON Schema as it is, not
 * in `parameters`, which takes Gemini's OpenAPI 3.0 subset (upper-case `type` names, no
 * `additionalProperties`, `$ref` or `const`) and would need a lossy translation. Recorded
 * Gemini 3 requests send `parameters_json_schema` (corpus file
 * `other/pydantic-ai__gemini_three_identical_calls_no_ids.json`); docs/adr/0007-provider-formats.md
 * says why `parametersJsonSchema` and not `parameters`.
 *
 * Names follow {@link PROVIDER_TOOL_NAME} like every provider's, and must also start with a
 * letter or `_` (Gemini's rule).
 *
 * @throws TypeError, as {@link toAnthropicTools}; also for a name that starts with a digit or `-`.
 *
 * @example
 * ```ts
 * const response = await ai.models.generateContent({ model, contents, config: { tools: toGeminiTools(tools) } });
 * for await (const event of runTools(fromGemini(response), { tools })) { … }
 * ```
 */
export function toGeminiTools(tools: readonly Tool[], options: ToolDefinitionsOptions = {}): GeminiToolDefinition[] {
  const functionDeclarations = definitionParts('toGeminiTools', tools, options).map(({ tool, name, description, schema }) => {
    if (!/^[a-zA-Z_]/.test(name)) {
      throw new TypeError(`toGeminiTools: tool "${tool.name}" is sent as "${name}", which Gemini rejects: a function name must start with a letter or "_". Rename the tool.`);
    }
    return description === undefined ? { name, parametersJsonSchema: schema } : { name, description, parametersJsonSchema: schema };
  });
  return functionDeclarations.length === 0 ? [] : [{ functionDeclarations }];
}

/**
 * A reversible map between toolrun tool names and names every provider accepts, made by
 * {@link providerToolNames}.
 */
export interface ToolNames {
  /** The name to send for a toolrun tool name; a name the map does not rename is returned unchanged. */
  toProvider(name: string): string;
  /** The toolrun name of a name the model called; a name the map does not know is returned unchanged (runTools then reports it as unknown). */
  fromProvider(name: string): string;
  /**
   * The calls with their names mapped back by {@link ToolNames.fromProvider}: new call
   * objects for renamed names, the same objects otherwise; ids, arguments and order kept.
   * For calls that arrive as a stream, map each call's `name` with `fromProvider` instead.
   */
  restoreCalls(calls: Iterable<ToolCall>): ToolCall[];
  /** Every renamed tool: toolrun name → provider name, in tool-list order. Empty when every name was valid. */
  readonly renamed: ReadonlyMap<string, string>;
}

/**
 * Maps tool names that providers reject onto names they accept, reversibly.
 *
 * The rule, applied in tool-list order:
 * 1. A name that matches {@link PROVIDER_TOOL_NAME} is kept, and reserved.
 * 2. Any other name has each UTF-16 code unit outside `[a-zA-Z0-9_-]` replaced by `_`
 *    (`spotify.play` → `spotify_play`; an empty result becomes `tool`).
 * 3. When that is longer than 64 characters, or already taken by another tool, it becomes
 *    its first 55 characters + `_` + 8 hex digits of the FNV-1a hash of the original name
 *    (and, should even that be taken, a `_2`, `_3`… suffix in place of the last characters).
 *
 * The same list gives the same map. Only the map reverses a name (`a.b` and `a/b` both
 * become `a_b`-based names): keep it next to the request.
 *
 * @param tools - the tools to be sent (only `name` is read).
 * @throws TypeError for a duplicate tool name.
 *
 * @example
 * ```ts
 * const names = providerToolNames(tools);                       // 'spotify.play' → 'spotify_play'
 * const request = { tools: toOpenAIChatTools(tools, { names }) };
 * const calls = names.restoreCalls(fromOpenAIChat(completion)); // 'spotify_play' → 'spotify.play'
 * ```
 */
export function providerToolNames(tools: readonly Pick<Tool, 'name'>[]): ToolNames {
  const names = tools.map((tool) => tool.name);
  assertUnique('providerToolNames', names);
  const taken = new Set(names.filter((name) => PROVIDER_TOOL_NAME.test(name)));
  const renamed = new Map<string, string>();
  for (const name of names) {
    if (PROVIDER_TOOL_NAME.test(name)) continue;
    let candidate = name.replace(/[^a-zA-Z0-9_-]/g, '_') || 'tool';
    if (candidate.length > 64 || taken.has(candidate)) candidate = `${candidate.slice(0, 55)}_${fnv1a(name)}`;
    for (let n = 2; taken.has(candidate); n++) candidate = `${candidate.slice(0, 64 - String(n).length - 1)}_${n}`;
    taken.add(candidate);
    renamed.set(name, candidate);
  }
  const back = new Map([...renamed].map(([original, sent]) => [sent, original]));
  return {
    renamed,
    toProvider: (name) => renamed.get(name) ?? name,
    fromProvider: (name) => back.get(name) ?? name,
    restoreCalls: (calls) =>
      [...calls].map((call) => {
        const original = back.get(call.name);
        return original === undefined ? call : { ...call, name: original };
      }),
  };
}

interface DefinitionParts {
  tool: Tool;
  name: string;
  description: string | undefined;
  schema: ObjectJsonSchema;
}

/** Name, description and object schema of each tool, checked; `where` names the caller in errors. */
function definitionParts(where: string, tools: readonly Tool[], options: ToolDefinitionsOptions): DefinitionParts[] {
  if (!Array.isArray(tools)) throw new TypeError(`${where}: expected an array of tools, received ${describeValue(tools)}`);
  assertUnique(where, tools.map((tool) => tool.name));
  return tools.map((tool) => {
    const name = options.names === undefined ? tool.name : options.names.toProvider(tool.name);
    if (!PROVIDER_TOOL_NAME.test(name)) {
      throw new TypeError(
        `${where}: tool "${tool.name}" has a name providers reject: tool names must be 1–64 ASCII letters, digits, "_" or "-" (${PROVIDER_TOOL_NAME.source}). ` +
          'Rename the tool, or map names reversibly: const names = providerToolNames(tools); pass { names } here, and give runTools names.restoreCalls(calls).',
      );
    }
    let schema: JsonSchema;
    try {
      schema = options.jsonSchema?.(tool) ?? toolJsonSchema(tool);
    } catch (error) {
      if (error instanceof TypeError) throw new TypeError(`${where}: ${error.message}`, { cause: error.cause });
      throw error;
    }
    if (schema.type !== 'object') {
      throw new TypeError(
        `${where}: tool "${tool.name}" has an input JSON Schema without type "object" at the top (got ${describeValue(schema.type)}); ` +
          'providers accept only object schemas for tool input.',
      );
    }
    return { tool, name, description: tool.description, schema: schema as ObjectJsonSchema };
  });
}

function strictOption(where: string, strict: OpenAIToolDefinitionsOptions['strict']): (tool: Tool) => boolean | undefined {
  if (strict === undefined) return () => undefined;
  if (typeof strict === 'boolean') return () => strict;
  if (typeof strict === 'function') return strict;
  throw new TypeError(`${where}: options.strict must be a boolean or a function of the tool, received ${describeValue(strict)}`);
}

function assertUnique(where: string, names: readonly string[]): void {
  const seen = new Set<string>();
  for (const name of names) {
    if (seen.has(name)) throw new TypeError(`${where}: two tools are named "${name}"; tool names must be unique`);
    seen.add(name);
  }
}

/** FNV-1a, 32 bits, as 8 lowercase hex digits (over UTF-16 code units). */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}
