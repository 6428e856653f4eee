/**
 * A tool's input schema as the JSON Schema a model provider wants in its `tools` request
 * field, whatever the tool was defined with.
 *
 * Where each kind of schema gets its JSON Schema:
 * - a plain JSON Schema object (from an MCP server, a JSON file, a recorded request, or
 *   `convertBfclSchema`) is sent **as is** (the same object, not copied);
 * - any Standard Schema that implements Standard JSON Schema (`~standard.jsonSchema`:
 *   zod 4, arktype 2) → its `jsonSchema.input({ target: 'draft-2020-12' })`;
 * - valibot → `toJsonSchema` of `@valibot/to-json-schema` (a dependency of toolrun), with
 *   `target: 'draft-2020-12'`, `typeMode: 'input'`, `errorMode: 'throw'`;
 * - arktype without `~standard.jsonSchema` → the type's own `toJsonSchema()`.
 *
 * The *input* side is converted (what the model must send: a field with a default is
 * optional), in draft 2020-12 (the dialect Anthropic documents for `input_schema`, and what
 * OpenAI reads). The converted schema's top-level `$schema` is removed: the recorded
 * requests of the corpus carry none, and the dialect is implied by the provider.
 *
 * @module
 */
import { toJsonSchema as valibotToJsonSchema } from '@valibot/to-json-schema';
import type { StandardJSONSchemaV1, StandardSchemaV1 } from '@standard-schema/spec';
import { isStandardSchema } from './schema.ts';
import type { InputSchema, Tool } from '../tool/tool.ts';
import type { JsonSchema } from '../tool/content.ts';

/** Converted schemas, per Standard Schema object: conversion can be slow (valibot walks the schema). */
const converted = new WeakMap<object, JsonSchema>();

/**
 * The JSON Schema of a tool's `input`, for the model (see the module comment for where each
 * kind comes from).
 *
 * @param tool - a tool; only `name` (for error messages) and `input` are read.
 * @returns a JSON Schema object. For a JSON Schema `input`, that very object; for a
 *   Standard Schema, a converted object, cached per schema (do not modify it).
 * @throws TypeError naming the tool when the schema cannot be converted: a Standard Schema
 *   of a library without a JSON Schema converter (zod 4.0–4.1, zod 3.25's `zod/v4`, classic
 *   zod 3, or any other vendor without `~standard.jsonSchema`: give it one with
 *   `withJsonSchema`; the message says how for each), a schema with parts JSON Schema cannot express (valibot and
 *   zod throw for a `Date`, a transform…; the library's own message is quoted — arktype
 *   does not throw, it writes `{}`, any value, for such a part), or a converted schema
 *   that does not describe an object (providers require `type: "object"` at the top).
 *
 * @example
 * ```ts
 * toolJsonSchema(defineTool({ name: 'add', input: v.object({ a: v.number() }), execute }));
 * // { type: 'object', properties: { a: { type: 'number' } }, required: ['a'] }
 * ```
 */
export function toolJsonSchema(tool: Pick<Tool, 'name' | 'input'>): JsonSchema {
  return inputJsonSchema(tool.input, tool.name);
}

/**
 * {@link toolJsonSchema} for a bare schema. `toolName` is only used in error messages.
 *
 * @throws TypeError, as {@link toolJsonSchema}.
 */
export function inputJsonSchema(schema: InputSchema, toolName: string): JsonSchema {
  if (!isStandardSchema(schema)) return schema;
  const cached = converted.get(schema);
  if (cached !== undefined) return cached;
  const props = schema['~standard'];
  const where = `tool "${toolName}"`;
  let result: unknown;
  try {
    if (hasJsonSchemaConverter(props)) {
      result = props.jsonSchema.input({ target: 'draft-2020-12' });
    } else if (props.vendor === 'valibot') {
      result = valibotToJsonSchema(schema as Parameters<typeof valibotToJsonSchema>[0], {
        target: 'draft-2020-12',
        typeMode: 'input',
        errorMode: 'throw',
      });
    } else if (props.vendor === 'arktype' && typeof (schema as { toJsonSchema?: unknown }).toJsonSchema === 'function') {
      result = (schema as unknown as { toJsonSchema(): unknown }).toJsonSchema();
    } else {
      throw new TypeError(`${where}: ${noConverterText(schema, props.vendor)}`);
    }
  } catch (error) {
    if (error instanceof TypeError && error.message.startsWith(where)) throw error;
    throw new TypeError(
      `${where}: its input schema (${props.vendor}) cannot be converted to JSON Schema: ${errorMessage(error)}. ` +
        'Describe the input with JSON-compatible types only, or pass the JSON Schema yourself with the `jsonSchema` option.',
      { cause: error },
    );
  }
  if (typeof result !== 'object' || result === null || Array.isArray(result)) {
    throw new TypeError(`${where}: converting its input schema (${props.vendor}) gave no JSON Schema object`);
  }
  const { $schema: _dialect, ...jsonSchema } = result as Record<string, unknown>;
  if (jsonSchema.type !== 'object') {
    throw new TypeError(
      `${where}: its input schema must describe an object (tool arguments are always one JSON object), ` +
        `but converts to ${JSON.stringify(jsonSchema).slice(0, 200)}`,
    );
  }
  converted.set(schema, jsonSchema);
  return jsonSchema;
}

/**
 * Why a Standard Schema without `~standard.jsonSchema` cannot be sent, and what to pass: true
 * for each zod that has none (zod 4.0–4.1 and zod 3.25's `zod/v4` carry `_zod.version`;
 * classic zod 3 carries `_def` and no `_zod`), generic for any other library.
 */
function noConverterText(schema: StandardSchemaV1, vendor: string): string {
  const head = `its input schema (a ${vendor} Standard Schema) has no JSON Schema converter (~standard.jsonSchema), so it cannot be sent to a model.`;
  const tail = 'or pass the JSON Schema yourself with the `jsonSchema` option.';
  if (vendor === 'zod') {
    const version = zodVersion(schema);
    if (version !== undefined) {
      return (
        `${head} zod ${version} (zod 4.0–4.1, or zod 3.25's "zod/v4") implements Standard Schema without Standard JSON Schema, which zod adds in 4.2: ` +
        "wrap it as withJsonSchema(schema, (s) => z.toJSONSchema(s, { io: 'input' })) with the z it was made with, upgrade zod to 4.2 or later, " + tail
      );
    }
    return `${head} A classic zod 3 schema carries none: wrap it as withJsonSchema(schema, zodToJsonSchema) (package zod-to-json-schema), define it with zod 4.2 or later, ${tail}`;
  }
  return `${head} Use a library that implements Standard JSON Schema, wrap it as withJsonSchema(schema, converter), ${tail}`;
}

/** `major.minor.patch` of a zod 4 core schema (`_zod.version`), `undefined` for any other. */
function zodVersion(schema: StandardSchemaV1): string | undefined {
  const version = (schema as { _zod?: { version?: { major?: unknown; minor?: unknown; patch?: unknown } } })._zod?.version;
  if (typeof version !== 'object' || version === null || typeof version.major !== 'number') return undefined;
  return `${version.major}.${String(version.minor)}.${String(version.patch)}`;
}

function hasJsonSchemaConverter(props: StandardSchemaV1.Props): props is StandardSchemaV1.Props & StandardJSONSchemaV1.Props {
  const converter = (props as Partial<StandardJSONSchemaV1.Props>).jsonSchema;
  return typeof converter === 'object' && converter !== null && typeof converter.input === 'function';
}

function errorMessage(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(/\s+/g, ' ').trim().replace(/\.$/, '');
}
