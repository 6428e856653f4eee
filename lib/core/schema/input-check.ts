/**
 * The checks `defineTool` makes of a tool's `input`: a Standard Schema
 * must be able to produce the tool definition a model is sent; a JSON Schema must be well
 * structured, describe an object, and carry no near-miss of a keyword (a typo such as
 * `propertes` makes a schema silently accept anything). An AI SDK `jsonSchema()` /
 * `zodSchema()` wrapper is recognised and unwrapped first.
 *
 * Tools built from foreign listings (an MCP server's, a recording's) skip these checks: one
 * odd schema there must not make the whole listing throw; its calls are answered with the
 * schema's problem instead (docs/adr/0009-tool-inputs.md).
 *
 * @module
 */
import type { StandardJSONSchemaV1, StandardSchemaV1 } from '@standard-schema/spec';
import { inputJsonSchema } from './json-schema.ts';
import { compileJsonSchema, JsonSchemaStructureError } from './json-schema-validator.ts';
import { describeValue } from '../values/guards.ts';
import type { InputSchema } from '../tool/tool.ts';
import type { JsonSchema } from '../tool/content.ts';

/** The AI SDK's marker on `jsonSchema()` / `zodSchema()` wrappers (`Symbol.for`, so the same in every copy of the SDK). */
const AI_SDK_SCHEMA = Symbol.for('vercel.ai.schema');

/** True for an AI SDK `jsonSchema()` / `zodSchema()` wrapper (recognised by its marker, without importing `ai`). */
export function isAISDKSchema(value: unknown): boolean {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[AI_SDK_SCHEMA] === true;
}

/**
 * An AI SDK schema wrapper as a toolrun input schema: a wrapper without `validate` is its
 * JSON Schema (validated as JSON Schema); one with `validate` (`zodSchema()`,
 * `jsonSchema(s, { validate })`) becomes a Standard Schema that validates with it and
 * carries the JSON Schema as its Standard JSON Schema converter.
 *
 * @throws TypeError (prefixed with `where`) when the wrapper's JSON Schema is a promise or not an object.
 */
export function fromAISDKSchema(wrapper: object, where: string): InputSchema {
  const w = wrapper as { jsonSchema: unknown; validate?: (value: unknown) => unknown };
  const json = w.jsonSchema;
  if (typeof json === 'object' && json !== null && typeof (json as { then?: unknown }).then === 'function') {
    throw new TypeError(`${where}'s JSON Schema is a promise; resolve it first and pass jsonSchema(resolved)`);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new TypeError(`${where}'s JSON Schema must be an object, received ${describeValue(json)}`);
  }
  if (typeof w.validate !== 'function') return json as JsonSchema;
  const validate = w.validate.bind(w);
  const converter: StandardJSONSchemaV1.Converter = { input: () => json as Record<string, unknown>, output: () => json as Record<string, unknown> };
  const standard: StandardSchemaV1<unknown, unknown> & StandardJSONSchemaV1<unknown, unknown> = {
    '~standard': {
      version: 1,
      vendor: 'ai-sdk',
      async validate(value) {
        const result = (await validate(value)) as { success: boolean; value?: unknown; error?: unknown };
        if (result.success) return { value: result.value };
        return { issues: [{ message: issueText(result.error) }] };
      },
      jsonSchema: converter,
    },
  };
  return standard;
}

function issueText(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}

/**
 * Every keyword of JSON Schema drafts 4, 6, 7, 2019-09 and 2020-12 (validation, applicator,
 * core, meta-data, format and content vocabularies).
 */
const KEYWORDS: readonly string[] = [
  '$schema', '$id', 'id', '$ref', '$anchor', '$dynamicRef', '$dynamicAnchor', '$recursiveRef', '$recursiveAnchor', '$vocabulary', '$comment', '$defs', 'definitions',
  'type', 'enum', 'const', 'multipleOf', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum', 'maxLength', 'minLength', 'pattern',
  'maxItems', 'minItems', 'uniqueItems', 'maxContains', 'minContains', 'maxProperties', 'minProperties', 'required', 'dependentRequired', 'dependencies',
  'allOf', 'anyOf', 'oneOf', 'not', 'if', 'then', 'else', 'properties', 'patternProperties', 'additionalProperties', 'propertyNames', 'unevaluatedProperties',
  'items', 'prefixItems', 'additionalItems', 'contains', 'unevaluatedItems', 'dependentSchemas',
  'format', 'contentEncoding', 'contentMediaType', 'contentSchema', 'title', 'description', 'default', 'deprecated', 'readOnly', 'writeOnly', 'examples',
];
const KEYWORD_SET = new Set(KEYWORDS);
/** Widely used extensions that are near a keyword but not typos (OpenAPI's `example`, `nullable`). */
const KNOWN_EXTRAS = new Set(['example', 'nullable', 'discriminator', 'strict']);
const SCHEMA_VALUED = new Set(['additionalProperties', 'unevaluatedProperties', 'propertyNames', 'not', 'if', 'then', 'else', 'contains', 'additionalItems', 'unevaluatedItems', 'items', 'contentSchema']);
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'dependencies']);
const SCHEMA_LISTS = new Set(['prefixItems', 'allOf', 'anyOf', 'oneOf', 'items']);

/**
 * How far a key may be from a keyword and still count as a near miss: 2 edits for
 * keywords of 6 characters or more, 1 for 4–5, none (a case variant only) for shorter ones
 * (`if`, `not`, `id`, `$id`: within one edit of them are too many ordinary words).
 */
function allowedEdits(keyword: string): number {
  return keyword.length >= 6 ? 2 : keyword.length >= 4 ? 1 : 0;
}

/**
 * The keyword `key` is a near miss of, if any (docs/adr/0009-tool-inputs.md): `key` is not a keyword, not a known extension, does not start with `x-`,
 * and is within {@link allowedEdits} of a keyword, compared without case, counting a
 * swap of two adjacent letters as one edit.
 */
export function nearMissKeyword(key: string): string | undefined {
  if (KEYWORD_SET.has(key) || KNOWN_EXTRAS.has(key) || key.startsWith('x-')) return undefined;
  const lower = key.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const keyword of KEYWORDS) {
    const limit = allowedEdits(keyword);
    if (Math.abs(keyword.length - lower.length) > limit) continue;
    const d = editDistance(lower, keyword.toLowerCase(), limit);
    if (d <= limit && d < bestDistance) {
      best = keyword;
      bestDistance = d;
    }
  }
  return best;
}

/** Optimal-string-alignment distance (insert, delete, substitute, swap adjacent), stopping early past `limit`. */
function editDistance(a: string, b: string, limit: number): number {
  if (a === b) return 0;
  let prev2: number[] = [];
  let prev: number[] = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, prev2[j - 2]! + 1);
      row[j] = d;
      if (d < rowMin) rowMin = d;
    }
    if (rowMin > limit) return limit + 1;
    prev2 = prev;
    prev = row;
  }
  return prev[b.length]!;
}

/** Throws at the first schema-object key (in the schema and every subschema) that is a near miss of a keyword. */
function checkKeys(node: unknown, at: string[], where: string, seen: Set<object>): void {
  if (typeof node !== 'object' || node === null || Array.isArray(node) || seen.has(node)) return;
  seen.add(node);
  for (const [key, value] of Object.entries(node)) {
    const here = [...at, key];
    const keyword = nearMissKeyword(key);
    if (keyword !== undefined) {
      throw new TypeError(
        `${where} is not a valid JSON Schema: ${pathText(here)} is not a JSON Schema keyword but looks like a misspelt "${keyword}" ` +
          `(an unknown key is ignored, so the schema would silently accept more than meant). Spell it "${keyword}", or name the extension with an "x-" prefix.`,
      );
    }
    if (SCHEMA_VALUED.has(key) && !Array.isArray(value)) checkKeys(value, here, where, seen);
    else if (SCHEMA_LISTS.has(key) && Array.isArray(value)) value.forEach((sub, i) => checkKeys(sub, [...here, String(i)], where, seen));
    else if (SCHEMA_MAPS.has(key) && typeof value === 'object' && value !== null) {
      for (const [name, sub] of Object.entries(value)) if (!Array.isArray(sub)) checkKeys(sub, [...here, name], where, seen);
    }
  }
}

function pathText(at: string[]): string {
  return at.map((p) => JSON.stringify(p)).join(' → ');
}

/**
 * Checks a tool's `input` as `defineTool` does, and returns the schema the tool keeps (an AI
 * SDK wrapper unwrapped; any other schema as it is).
 *
 * @throws TypeError naming the tool and what was wrong: not a schema; a Standard Schema that
 *   cannot be converted into the JSON Schema of a tool definition (with what to pass
 *   instead); a JSON Schema whose structure is invalid, whose `type` is not `"object"`, or
 *   that has a near miss of a keyword.
 */
export function checkToolInput(input: unknown, toolName: string): InputSchema {
  const where = `defineTool: tool "${toolName}".input`;
  let schema = input as InputSchema;
  if (isAISDKSchema(input)) schema = fromAISDKSchema(input as object, `${where} (an AI SDK schema wrapper)`);
  const std = (schema as { '~standard'?: unknown })['~standard'];
  if (typeof std === 'object' && std !== null) {
    if (typeof (std as { validate?: unknown }).validate !== 'function') {
      throw new TypeError(`${where} has a ~standard property without a validate function, so it is not a Standard Schema: received ${describeValue(std)}`);
    }
    try {
      inputJsonSchema(schema, toolName);
    } catch (error) {
      const text = error instanceof Error ? error.message : String(error);
      throw new TypeError(
        `${where} cannot describe the tool to a model: ${text.replace(/,? or pass the JSON Schema yourself with the `jsonSchema` option/, ', or pass a JSON Schema object instead')}`,
        { cause: error },
      );
    }
    return schema;
  }
  const json = schema as JsonSchema;
  try {
    compileJsonSchema(json);
  } catch (error) {
    if (!(error instanceof JsonSchemaStructureError)) throw error;
    throw new TypeError(`${where} is not a valid JSON Schema: ${error.message}. Received ${describeValue(json)}`, { cause: error });
  }
  const type = json.type;
  if (type !== undefined && type !== 'object' && !(Array.isArray(type) && type.includes('object'))) {
    throw new TypeError(`${where} must describe an object (tool arguments are always one JSON object), but its type is ${describeValue(type)}. Wrap the value in an object property.`);
  }
  checkKeys(json, [], where, new Set());
  return schema;
}
