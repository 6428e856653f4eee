/**
 * Reading an OpenAI strict tool schema the way the SDK that made it reads arguments.
 *
 * A strict schema (OpenAI structured outputs: what the OpenAI Agents SDK sends for a zod,
 * Standard Schema or `strict` JSON Schema tool) lists every property as required, turns an
 * optional property into a required one that may be `null`, and closes every object with
 * `additionalProperties: false`. The SDK's own parser is looser than that schema: zod strips
 * unknown keys and takes an absent optional key; the SDK's strict normalizer turns `null`
 * back into "absent". {@link lenientStrictSchema} gives the schema that refuses only what
 * that parser refuses too, so that toolrun's check before `invoke` never refuses a call the
 * SDK would run (measured against `@openai/agents` 0.20: docs/adr/0017-framework-adapters.md).
 *
 * @module
 */
import type { JsonSchema } from '../core/tool/content.ts';

/** Keywords whose value is one subschema. */
const ONE = ['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames', 'unevaluatedProperties', 'unevaluatedItems'] as const;
/** Keywords whose value is an array of subschemas. */
const MANY = ['anyOf', 'oneOf', 'allOf', 'prefixItems', 'items'] as const;
/** Keywords whose value maps names to subschemas. */
const MAPS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'] as const;

/**
 * A copy of the strict schema `schema` in which unknown keys are allowed (every
 * `additionalProperties: false` is dropped) and a property that may be `null` is no longer
 * required. Everything else — types, enums, the required properties that cannot be `null`,
 * bounds — is kept. `schema` itself is not changed.
 *
 * @example
 * ```ts
 * lenientStrictSchema({ type: 'object', properties: { a: { anyOf: [{ type: 'string' }, { type: 'null' }] }, b: { type: 'number' } }, required: ['a', 'b'], additionalProperties: false });
 * // { type: 'object', properties: { a: …, b: … }, required: ['b'] }
 * ```
 */
export function lenientStrictSchema(schema: JsonSchema): JsonSchema {
  return lenient(schema, schema, 0) as JsonSchema;
}

/** Deeper than this, the schema is kept as it is (a schema that deep is not a tool's). */
const MAX_DEPTH = 64;

function lenient(node: unknown, root: JsonSchema, depth: number): unknown {
  if (typeof node !== 'object' || node === null || Array.isArray(node) || depth > MAX_DEPTH) return node;
  const source = node as Record<string, unknown>;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(source)) {
    if (key === 'additionalProperties' && value === false) continue;
    if ((ONE as readonly string[]).includes(key) && isSchemaObject(value)) copy[key] = lenient(value, root, depth + 1);
    else if ((MANY as readonly string[]).includes(key) && Array.isArray(value)) copy[key] = value.map((item) => lenient(item, root, depth + 1));
    else if ((MAPS as readonly string[]).includes(key) && isSchemaObject(value)) {
      copy[key] = Object.fromEntries(Object.entries(value).map(([name, item]) => [name, lenient(item, root, depth + 1)]));
    } else copy[key] = value;
  }
  const properties = source.properties;
  if (Array.isArray(source.required) && isSchemaObject(properties)) {
    copy.required = source.required.filter((name) => typeof name !== 'string' || !admitsNull(properties[name], root, 0));
  }
  return copy;
}

/** True when `schema` takes `null`: `type` `"null"` (or a list holding it), `const: null`, an `enum` holding `null`, an `anyOf`/`oneOf` member that takes it, or a local `$ref` to such a schema. */
function admitsNull(schema: unknown, root: JsonSchema, depth: number): boolean {
  if (schema === true) return true;
  if (!isSchemaObject(schema) || depth > MAX_DEPTH) return false;
  const type = schema.type;
  if (type === 'null' || (Array.isArray(type) && type.includes('null'))) return true;
  if ('const' in schema && schema.const === null) return true;
  if (Array.isArray(schema.enum) && schema.enum.includes(null)) return true;
  for (const key of ['anyOf', 'oneOf'] as const) {
    const members = schema[key];
    if (Array.isArray(members) && members.some((member) => admitsNull(member, root, depth + 1))) return true;
  }
  const ref = schema.$ref;
  return typeof ref === 'string' && admitsNull(localRef(root, ref), root, depth + 1);
}

/** The subschema a local `$ref` (`#/$defs/x`, `#/definitions/x`, any `#/…` pointer) names; `undefined` for another reference. */
function localRef(root: JsonSchema, ref: string): unknown {
  if (!ref.startsWith('#')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(1).split('/').slice(1)) {
    if (!isSchemaObject(node)) return undefined;
    node = node[raw.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return node;
}

function isSchemaObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
