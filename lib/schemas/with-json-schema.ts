/**
 * A Standard Schema that validates but cannot describe itself as JSON Schema (zod 4.0–4.1,
 * zod 3.25's `zod/v4`, classic zod 3), given the JSON Schema converter of its own library.
 *
 * Why the caller's converter and not one toolrun ships: zod keeps `.describe()` and `.meta()`
 * texts in a registry private to the copy of zod that made the schema (up to 4.1; shared
 * through `globalThis` from 4.2). Measured: zod 4.6.7's `toJSONSchema` on a zod 4.1.8 schema
 * drops every description. Only the schema's own `z.toJSONSchema` sees them, and the core
 * loads no schema library of its own (docs/adr/0009-tool-inputs.md).
 *
 * @module
 */
import type { StandardJSONSchemaV1, StandardSchemaV1 } from '@standard-schema/spec';
import { describeValue } from '../core/values/guards.ts';
import type { JsonSchema } from '../core/tool/content.ts';

/**
 * Gives a Standard Schema the JSON Schema a model is sent: the returned schema validates with
 * `schema` (same input and output types, so `defineTool` types `execute` as before) and
 * carries `~standard.jsonSchema` (Standard JSON Schema), which `defineTool`, the provider
 * formats and the adapters read.
 *
 * `jsonSchema` is the JSON Schema object, or a converter called with `schema` once, on the
 * first read (then kept; a throw is not kept, so the next read calls it again):
 * `(s) => z.toJSONSchema(s, { io: 'input' })` with the `z` the schema
 * was made with (zod 4.0–4.1, zod 3.25's `zod/v4`), or `zodToJsonSchema` of the
 * `zod-to-json-schema` package (classic zod 3). A top-level `$schema` is dropped when sent.
 *
 * @returns a new Standard Schema (the argument is not modified).
 * @throws TypeError when `schema` is not a Standard Schema, or `jsonSchema` neither an object
 *   nor a function. A converter that throws or returns no object makes `defineTool` throw a
 *   TypeError quoting it.
 *
 * @example
 * ```ts
 * import { z } from 'zod'; // 4.1
 * const weather = defineTool({
 *   name: 'weather',
 *   input: withJsonSchema(z.object({ city: z.string().describe('City name') }), (s) => z.toJSONSchema(s, { io: 'input' })),
 *   execute: ({ city }) => `sunny in ${city}`,
 * });
 * ```
 */
export function withJsonSchema<S extends StandardSchemaV1>(
  schema: S,
  jsonSchema: JsonSchema | ((schema: S) => unknown),
): StandardSchemaV1<StandardSchemaV1.InferInput<S>, StandardSchemaV1.InferOutput<S>> &
  StandardJSONSchemaV1<StandardSchemaV1.InferInput<S>, StandardSchemaV1.InferOutput<S>> {
  const std = (schema as Partial<StandardSchemaV1> | null | undefined)?.['~standard'];
  if ((typeof schema !== 'object' && typeof schema !== 'function') || typeof std !== 'object' || std === null || typeof std.validate !== 'function') {
    throw new TypeError(`withJsonSchema: the first argument must be a Standard Schema (with ~standard.validate), received ${describeValue(schema)}`);
  }
  if ((typeof jsonSchema !== 'object' || jsonSchema === null || Array.isArray(jsonSchema)) && typeof jsonSchema !== 'function') {
    throw new TypeError(`withJsonSchema: the second argument must be a JSON Schema object or a converter function, received ${describeValue(jsonSchema)}`);
  }
  let converted: Record<string, unknown> | undefined;
  const read = (): Record<string, unknown> => {
    if (converted !== undefined) return converted;
    const value = typeof jsonSchema === 'function' ? jsonSchema(schema) : jsonSchema;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new TypeError(`the JSON Schema converter given to withJsonSchema returned ${describeValue(value)}, not a JSON Schema object`);
    }
    converted = value as Record<string, unknown>;
    return converted;
  };
  return {
    '~standard': {
      version: 1,
      vendor: std.vendor,
      validate: (value) => std.validate(value) as StandardSchemaV1.Result<StandardSchemaV1.InferOutput<S>> | Promise<StandardSchemaV1.Result<StandardSchemaV1.InferOutput<S>>>,
      jsonSchema: { input: read, output: read },
    },
  };
}
