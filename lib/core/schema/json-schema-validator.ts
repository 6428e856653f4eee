/**
 * Plain JSON Schema validation without code generation, so it runs where `eval` and
 * `new Function` are refused (a page under a strict Content-Security-Policy, edge workers).
 *
 * The interpreter is `@cfworker/json-schema` (drafts 4, 7, 2019-09 and 2020-12). This module
 * adds what toolrun needs around it:
 * - a structural check of the schema itself, so a broken tool definition is reported as the
 *   tool's problem and not as the model's (the interpreter does not check schemas);
 * - a private copy of the schema (the interpreter writes bookkeeping properties onto the
 *   schema objects it is given; the tool's own schema stays untouched);
 * - issue lines in plain words with a dotted path (contract P5);
 * - `pattern` and `patternProperties` evaluated by a linear-time engine (RE2's algorithm, the
 *   `re2js` package), never by the backtracking `RegExp`: schemas come from MCP servers and
 *   arguments from the model, and `^([a-z]+)+$` against 30 letters and a `!` holds a
 *   backtracking engine for seconds, with no timeout able to interrupt it.
 *
 * @module
 */
import { Validator, type OutputUnit, type Schema, type SchemaDraft } from '@cfworker/json-schema';
import { RE2JS } from 're2js';
import { describeValue } from '../values/guards.ts';
import type { JsonSchema } from '../tool/content.ts';

/** A JSON Schema ready to validate arguments: `issues(args)` is empty when they are valid. */
export interface CompiledJsonSchema {
  /** One plain-words line per issue (`path: reason`); empty when `value` is valid. */
  issues(value: unknown): string[];
}

/** Thrown by {@link compileJsonSchema} for a schema whose own structure is invalid. */
export class JsonSchemaStructureError extends Error {
  override name = 'JsonSchemaStructureError';
}

const compiled = new WeakMap<object, CompiledJsonSchema>();

/**
 * Checks and prepares `schema` once per schema object (cached), picking the draft from
 * `$schema`: 2020-12, 2019-09 or draft-04 when it names them, draft-07 otherwise.
 * `format` is not checked (as before: tool schemas use it loosely).
 *
 * @throws {JsonSchemaStructureError} when the schema is not a valid JSON Schema, naming
 *   where (`properties.when.type must be one of …`); `issues` throws it too for a `$ref`
 *   that points nowhere.
 *
 * @example
 * ```ts
 * const schema = { type: 'object', properties: { days: { type: 'integer' } }, required: ['city'] };
 * compileJsonSchema(schema).issues({ days: 'x' });
 * // ['city: required', 'days: expected integer, got string']
 * ```
 */
export function compileJsonSchema(schema: JsonSchema): CompiledJsonSchema {
  const cached = compiled.get(schema);
  if (cached !== undefined) return cached;
  const draft = draftOf(schema.$schema);
  let validator: Validator;
  let checksUniqueItems = false;
  let hasPatterns = false;
  try {
    const prepared = prepareSchema(schema, []);
    // Both over-approximated (a property named like the keyword counts too): they only turn
    // on the length bound and the linear-time pattern engine below.
    const text = JSON.stringify(prepared);
    checksUniqueItems = text.includes('"uniqueItems":true');
    hasPatterns = text.includes('"pattern":') || text.includes('"patternProperties":');
    validator = new Validator(prepared as Schema, draft, false);
  } catch (error) {
    // A structure problem, or one the walk cannot survive (a cyclic object, too deep).
    if (error instanceof JsonSchemaStructureError) throw error;
    throw new JsonSchemaStructureError(firstLine(String((error as Error)?.message ?? error)));
  }
  const result: CompiledJsonSchema = {
    issues(value) {
      if (checksUniqueItems) {
        const long = longArray(value);
        if (long !== undefined) return [long];
      }
      let outcome;
      try {
        outcome = hasPatterns ? withLinearPatterns(() => validator.validate(value)) : validator.validate(value);
      } catch (error) {
        const message = String((error as Error)?.message ?? error);
        // The interpreter throws for values JSON cannot carry (undefined, functions: the
        // caller's object, not JSON); anything else — a $ref it cannot resolve, a $ref loop
        // that exhausts the stack — is the schema's fault.
        if (message.startsWith('Instances of')) return [`arguments: ${firstLine(message)} Send plain JSON values only.`];
        throw new JsonSchemaStructureError(firstLine(message));
      }
      return outcome.valid ? [] : issueLines(outcome.errors, value);
    },
  };
  compiled.set(schema, result);
  return result;
}

/**
 * Most items toolrun checks `uniqueItems` on. The interpreter compares every pair of items
 * (16,000 objects held the event loop 13 s, with no timeout able to step in), so a schema
 * that uses `uniqueItems` gets arguments whose arrays are at most this long (about 0.1 s for
 * objects at the bound).
 */
const MAX_UNIQUE_ITEMS = 1_000;

/** An issue line for the first array in `value` longer than {@link MAX_UNIQUE_ITEMS}, if any. */
function longArray(value: unknown): string | undefined {
  const stack: [unknown, string][] = [[value, '']];
  let visited = 0;
  while (stack.length > 0 && visited++ < 1_000_000) {
    const [node, path] = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    if (Array.isArray(node)) {
      if (node.length > MAX_UNIQUE_ITEMS) {
        return `${path === '' ? 'arguments' : path}: ${node.length} items; this tool's schema checks uniqueItems, which toolrun checks on at most ${MAX_UNIQUE_ITEMS} items — send at most ${MAX_UNIQUE_ITEMS}, or split the call`;
      }
      node.forEach((item, i) => stack.push([item, path === '' ? String(i) : `${path}.${i}`]));
    } else {
      for (const [key, item] of Object.entries(node)) stack.push([item, path === '' ? key : `${path}.${key}`]);
    }
  }
  return undefined;
}

function draftOf(declared: unknown): SchemaDraft {
  if (typeof declared !== 'string') return '7';
  if (declared.includes('2020-12')) return '2020-12';
  if (declared.includes('2019-09')) return '2019-09';
  if (declared.includes('draft-04')) return '4';
  return '7';
}

// ---------------------------------------------------------------------------------------------
// The schema's own structure

const TYPES = new Set(['array', 'boolean', 'integer', 'null', 'number', 'object', 'string']);
const SUBSCHEMA = new Set([
  'additionalProperties',
  'unevaluatedProperties',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'additionalItems',
  'unevaluatedItems',
]);
const SUBSCHEMA_MAP = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
const SUBSCHEMA_LIST = new Set(['prefixItems', 'allOf', 'anyOf', 'oneOf']);
const COUNTS = new Set(['minLength', 'maxLength', 'minItems', 'maxItems', 'minProperties', 'maxProperties', 'minContains', 'maxContains']);
const STRINGS = new Set(['$ref', '$id', '$schema', '$anchor', '$recursiveRef', '$comment']);

/**
 * Returns a copy of `node` (a schema at `at`) without `format`, after checking the keywords
 * the interpreter relies on. Unknown keywords are copied as they are (tool schemas carry
 * extras such as OpenAI's `strict`).
 */
function prepareSchema(node: unknown, at: string[]): unknown {
  if (typeof node === 'boolean') return node;
  if (!isPlainObject(node)) fail(at, `must be a schema (an object or true/false), got ${describeValue(node)}`);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    const here = [...at, key];
    if (key === 'format') continue;
    if (key === 'type') {
      const types = Array.isArray(value) ? value : [value];
      for (const type of types) {
        if (typeof type !== 'string' || !TYPES.has(type)) fail(here, `must be one of ${[...TYPES].join(', ')} (or a list of them), got ${describeValue(type)}`);
      }
      out[key] = copyJson(value, here);
    } else if (SUBSCHEMA.has(key)) {
      out[key] = prepareSchema(value, here);
    } else if (SUBSCHEMA_MAP.has(key)) {
      if (!isPlainObject(value)) fail(here, `must be an object of schemas, got ${describeValue(value)}`);
      if (key === 'patternProperties') {
        for (const pattern of Object.keys(value)) {
          // Dropping a key would send its properties to additionalProperties: refuse instead.
          if (!checkPattern(pattern, here)) fail(here, `has the key ${JSON.stringify(pattern)}, which uses lookaround or a backreference; toolrun evaluates patterns in linear time and cannot run it`);
        }
      }
      out[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, prepareSchema(sub, [...here, name])]));
    } else if (SUBSCHEMA_LIST.has(key) || (key === 'items' && Array.isArray(value))) {
      if (!Array.isArray(value) || value.length === 0) fail(here, `must be a non-empty list of schemas, got ${describeValue(value)}`);
      out[key] = value.map((sub, i) => prepareSchema(sub, [...here, String(i)]));
    } else if (key === 'items') {
      out[key] = prepareSchema(value, here);
    } else if (key === 'required') {
      out[key] = stringList(value, here);
    } else if (key === 'enum') {
      if (!Array.isArray(value)) fail(here, `must be a list of values, got ${describeValue(value)}`);
      out[key] = copyJson(value, here);
    } else if (key === 'dependencies' || key === 'dependentRequired') {
      if (!isPlainObject(value)) fail(here, `must be an object, got ${describeValue(value)}`);
      out[key] = Object.fromEntries(
        Object.entries(value).map(([name, dep]) => [
          name,
          key === 'dependencies' && !Array.isArray(dep) ? prepareSchema(dep, [...here, name]) : stringList(dep, [...here, name]),
        ]),
      );
    } else if (key === 'minimum' || key === 'maximum' || key === 'multipleOf') {
      if (typeof value !== 'number' || !Number.isFinite(value) || (key === 'multipleOf' && value <= 0)) {
        fail(here, `must be a ${key === 'multipleOf' ? 'positive ' : ''}number, got ${describeValue(value)}`);
      }
      out[key] = value;
    } else if (key === 'exclusiveMinimum' || key === 'exclusiveMaximum') {
      // A number since draft 6; a boolean modifier of minimum/maximum in draft 4.
      if (typeof value !== 'boolean' && (typeof value !== 'number' || !Number.isFinite(value))) fail(here, `must be a number, got ${describeValue(value)}`);
      out[key] = value;
    } else if (COUNTS.has(key)) {
      if (!Number.isInteger(value) || (value as number) < 0) fail(here, `must be a non-negative integer, got ${describeValue(value)}`);
      out[key] = value;
    } else if (key === 'uniqueItems') {
      if (typeof value !== 'boolean') fail(here, `must be true or false, got ${describeValue(value)}`);
      out[key] = value;
    } else if (key === 'pattern') {
      if (typeof value !== 'string') fail(here, `must be a regular expression string, got ${describeValue(value)}`);
      // A pattern the linear-time engine cannot run (lookaround, backreferences) is left to
      // the tool or server to check: toolrun never runs it on a backtracking engine.
      if (checkPattern(value, here)) out[key] = value;
    } else if (STRINGS.has(key)) {
      if (typeof value !== 'string') fail(here, `must be a string, got ${describeValue(value)}`);
      out[key] = value;
    } else {
      out[key] = copyJson(value, here);
    }
  }
  return out;
}

/**
 * Checks that `pattern` is an ECMAScript regular expression (`u` flag, as the interpreter reads
 * it) and compiles it for the linear-time engine. Returns false when that engine cannot run it
 * (lookaround, backreferences): such a `pattern` is dropped from the copy.
 */
function checkPattern(pattern: string, at: string[]): boolean {
  try {
    new RegExp(pattern, 'u'); // compiling is linear; only matching can backtrack
  } catch (error) {
    fail(at, `is not a valid regular expression (${(error as Error).message})`);
  }
  return linearPattern(pattern) !== undefined;
}

const linearPatterns = new Map<string, { test(text: string): boolean } | null>();

/** The pattern compiled for the linear-time engine (cached), or undefined if it cannot run it. */
function linearPattern(pattern: string): { test(text: string): boolean } | undefined {
  let compiled = linearPatterns.get(pattern);
  if (compiled === undefined) {
    try {
      const re = RE2JS.compile(pattern);
      compiled = { test: (text: string) => re.matcher(text).find() };
    } catch {
      compiled = null;
    }
    if (linearPatterns.size >= 1_000) linearPatterns.clear(); // bounded: patterns come from servers
    linearPatterns.set(pattern, compiled);
  }
  return compiled ?? undefined;
}

/**
 * Runs `validate` with `new RegExp(p)` answering from the linear-time engine. The interpreter
 * builds `new RegExp(pattern, 'u')` for `pattern` and `patternProperties` and calls `test`; it
 * has no hook for another engine, so the global constructor is swapped for exactly the
 * duration of one synchronous `validate` call (nothing else runs in between) and restored in
 * `finally`. Regular-expression literals and other code are not affected.
 */
function withLinearPatterns<T>(validate: () => T): T {
  const native = globalThis.RegExp;
  const linear = function LinearRegExp(pattern: unknown): { test(text: string): boolean } {
    const compiled = linearPattern(String(pattern));
    // checkPattern let through only patterns the engine compiles (patternProperties keys
    // that it cannot run are a structure error), so this is not reached with a schema that
    // passed prepareSchema.
    if (compiled === undefined) throw new JsonSchemaStructureError(`pattern ${JSON.stringify(String(pattern))} cannot be evaluated in linear time`);
    return compiled;
  } as unknown as RegExpConstructor;
  globalThis.RegExp = linear;
  try {
    return validate();
  } finally {
    globalThis.RegExp = native;
  }
}

function stringList(value: unknown, at: string[]): string[] {
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) fail(at, `must be a list of strings, got ${describeValue(value)}`);
  return [...(value as string[])];
}

function copyJson(value: unknown, at: string[]): unknown {
  try {
    return JSON.parse(JSON.stringify(value) ?? 'null') as unknown;
  } catch (error) {
    return fail(at, `must be JSON data (${(error as Error).message})`);
  }
}

function fail(at: string[], reason: string): never {
  throw new JsonSchemaStructureError(`${at.length === 0 ? 'the schema' : at.join('.')} ${reason}`);
}

// ---------------------------------------------------------------------------------------------
// Issue lines (P5)

/** Errors that only announce the errors of a subschema, which follow them in the list. */
const WRAPPERS = new Set([
  '$ref',
  '$recursiveRef',
  'properties',
  'patternProperties',
  'additionalProperties',
  'unevaluatedProperties',
  'prefixItems',
  'items',
  'additionalItems',
  'unevaluatedItems',
  'allOf',
  'dependentSchemas',
  'if',
]);

function issueLines(errors: OutputUnit[], root: unknown): string[] {
  const found: Array<{ location: string; line: string; unevaluated: boolean }> = [];
  errors.forEach((error, i) => {
    if (WRAPPERS.has(error.keyword)) return;
    if (error.keyword === 'dependencies' && error.error.endsWith('dependant schema.')) return;
    const previous = errors[i - 1]?.keyword;
    const unevaluated = error.keyword === 'false' && (previous === 'unevaluatedProperties' || previous === 'unevaluatedItems');
    const line = issueLine(error, root);
    if (!found.some((f) => f.line === line)) found.push({ location: error.instanceLocation, line, unevaluated });
  });
  // The interpreter counts a property or item that failed its own schema as "unevaluated";
  // its own issue says more than a second "not allowed" line for the same place.
  return found
    .filter((f) => !f.unevaluated || !found.some((o) => o !== f && !o.unevaluated && (o.location === f.location || o.location.startsWith(`${f.location}/`))))
    .map((f) => f.line);
}

/** One plain-words line for an interpreter error: `limit: expected integer, got string`. */
function issueLine(error: OutputUnit, root: unknown): string {
  const base = pointerSegments(error.instanceLocation);
  const at = (extra?: string): string => {
    const parts = extra === undefined ? base : [...base, extra];
    return parts.length === 0 ? 'arguments' : parts.join('.');
  };
  const text = error.error;
  const quoted = (pattern: RegExp): string[] | undefined => pattern.exec(text)?.slice(1);
  const limit = /(-?[\d.]+(?:e[-+]?\d+)?)\.$/i.exec(text)?.[1];
  switch (error.keyword) {
    case 'false':
      return `${at()}: not allowed`;
    case 'required': {
      const [key] = quoted(/^Instance does not have required property "(.*)"\.$/s) ?? [];
      if (key !== undefined) return `${at(key)}: required`;
      break;
    }
    case 'dependencies':
    case 'dependentRequired': {
      const [key, missing] = quoted(/^Instance has "(.*)" but does not have "(.*)"\.$/s) ?? [];
      if (key !== undefined && missing !== undefined) return `${at(missing)}: required when ${key} is present`;
      break;
    }
    case 'type': {
      const expected = quoted(/Expected "(.*)"\.$/s)?.[0];
      if (expected !== undefined) return `${at()}: expected ${expected.split('", "').join(' or ')}, got ${jsonType(valueAt(root, base))}`;
      break;
    }
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum': {
      const exclusive = error.keyword.startsWith('exclusive') || text.includes('or equal to');
      const below = error.keyword.endsWith('inimum');
      if (limit !== undefined) return `${at()}: must be ${below ? (exclusive ? '>' : '≥') : exclusive ? '<' : '≤'} ${limit}`;
      break;
    }
    case 'multipleOf':
      if (limit !== undefined) return `${at()}: must be a multiple of ${limit}`;
      break;
    case 'enum': {
      const list = quoted(/^Instance does not match any of (.*)\.$/s)?.[0];
      const values = list === undefined ? undefined : (JSON.parse(list) as unknown[]);
      if (values !== undefined) return `${at()}: must be one of ${values.map((v) => JSON.stringify(v)).join(', ')}`;
      break;
    }
    case 'const': {
      const value = quoted(/^Instance does not match (.*)\.$/s)?.[0];
      if (value !== undefined) return `${at()}: must be ${value}`;
      break;
    }
    case 'minLength':
    case 'maxLength':
    case 'minItems':
    case 'maxItems': {
      const [actual, bound] = quoted(/\((\d+) [<>] (\d+)\)\.$/) ?? [];
      const what = error.keyword.endsWith('Length') ? 'characters' : 'items';
      if (bound !== undefined) return `${at()}: must have ${error.keyword.startsWith('min') ? 'at least' : 'at most'} ${bound} ${what}, got ${actual}`;
      break;
    }
    case 'minProperties':
    case 'maxProperties': {
      // The count is the schema's bound (the interpreter's text says "at least" for both).
      const count = /(\d+) properties\.$/.exec(text)?.[1];
      if (count !== undefined) return `${at()}: must have ${error.keyword === 'minProperties' ? 'at least' : 'at most'} ${count} properties`;
      break;
    }
    case 'pattern':
      return `${at()}: must match the pattern of its schema`;
    case 'anyOf':
      return `${at()}: must match at least one of the allowed shapes (anyOf)`;
    case 'oneOf':
      return `${at()}: must match exactly one of the allowed shapes (oneOf)`;
    case 'not':
      return `${at()}: must not match the schema under "not"`;
    case 'uniqueItems':
      return `${at()}: items must be unique (${text.replace(/^Duplicate items/, 'duplicates').replace(/\.$/, '')})`;
  }
  return `${at()}: ${text.replace(/\.$/, '')}`;
}

/** `#/a/b~1c/0` → `['a', 'b/c', '0']` (the interpreter URI-encodes each segment). */
function pointerSegments(location: string): string[] {
  const path = location.startsWith('#') ? location.slice(1) : location;
  if (path === '') return [];
  return path
    .slice(1)
    .split('/')
    .map((segment) => {
      let decoded = segment;
      try {
        decoded = decodeURIComponent(segment);
      } catch {
        // Left as it is.
      }
      return decoded.replace(/~1/g, '/').replace(/~0/g, '~');
    });
}

function valueAt(root: unknown, segments: string[]): unknown {
  let value = root;
  for (const segment of segments) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[segment];
  }
  return value;
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function firstLine(text: string): string {
  return text.split('\n')[0] ?? text;
}
