/**
 * The Berkeley Function Calling Leaderboard (BFCL) dialect of JSON Schema, and its ground
 * truth, as plain JSON Schema and plain arguments.
 *
 * BFCL function definitions (`{ name, description, parameters }`) describe their parameters
 * in a "JSON-Schema-like" dialect: the top level is `"type": "dict"`, and the types `float`,
 * `tuple` and `any` appear next to the standard ones (`../shared/corpus/SOURCES.md`, format
 * observation 10). A JSON Schema validator, and every provider, rejects those types;
 * {@link convertBfclSchema} turns such a schema into JSON Schema that toolrun validates like any other (its `input`
 * can be the result as is).
 *
 * Source of the dialect: the BFCL data files (`ShishirPatil/gorilla`,
 * `berkeley-function-call-leaderboard/bfcl_eval/data/`), as described in
 * `../shared/corpus/SOURCES.md`, section B.
 *
 * @example
 * ```ts
 * const tools = entry.function.map((fn) =>
 *   defineTool({ name: fn.name, description: fn.description, input: convertBfclSchema(fn.parameters), execute }),
 * );
 * ```
 *
 * @module
 */
import type { JsonSchema } from '../core/tool/content.ts';
import { isObjectRecord } from '../core/values/guards.ts';

/**
 * Converts a BFCL parameter schema into JSON Schema (draft-07 and 2020-12 alike):
 *
 * - `type: "dict"` → `"object"`, `"float"` → `"number"`, `"tuple"` → `"array"`;
 * - `type: "any"` → no type constraint (the `type` key is removed);
 * - type lists (`["string", "float"]`) are converted element by element (`any` in a list
 *   removes the whole constraint: any value is then accepted);
 * - the non-standard `optional` key is dropped (what is required is in `required`), and
 *   `format` is dropped (BFCL uses `"date"` loosely and toolrun's validator checks no formats);
 * - `properties`, `items` and `additionalProperties` are converted recursively (a non-object
 *   value of them is kept as it is); every other
 *   key (`description`, `enum`, `default`, `required`, `maximum`, …) is kept as it is.
 *
 * Never throws: a value that is not an object (a missing `parameters`) gives `{}`, the
 * schema that accepts anything. The input is not modified; the result shares no objects
 * with it except the values of kept keys (`enum` lists, `default` values…).
 *
 * What it does not change: the ground truth of some BFCL entries disagrees with its own
 * schema (a `null` for a number, a value outside the `enum`…); those calls fail validation
 * after conversion too, which is correct. `spec/schemas/bfcl.spec.ts` lists them.
 *
 * @param schema - a BFCL `parameters` object (or any nested property schema).
 * @returns a JSON Schema object, usable as a tool's `input`.
 *
 * @example
 * ```ts
 * convertBfclSchema({ type: 'dict', properties: { base: { type: 'float' } }, required: ['base'] });
 * // { type: 'object', properties: { base: { type: 'number' } }, required: ['base'] }
 * ```
 */
export function convertBfclSchema(schema: unknown): JsonSchema {
  if (!isObjectRecord(schema)) return {};
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    switch (key) {
      case 'type': {
        const converted = convertTypeField(value);
        if (converted !== undefined) out.type = converted;
        break;
      }
      case 'optional':
      case 'format':
        break;
      case 'properties':
        out.properties = isObjectRecord(value)
          ? Object.fromEntries(Object.entries(value).map(([name, property]) => [name, convertBfclSchema(property)]))
          : value;
        break;
      case 'items':
      case 'additionalProperties':
        out[key] = isObjectRecord(value) ? convertBfclSchema(value) : value;
        break;
      default:
        out[key] = value;
    }
  }
  return out;
}

/**
 * The arguments of one BFCL ground-truth call.
 *
 * Ground truth maps each parameter to a list of acceptable values, `""` meaning "may be
 * omitted" (`{ "base": [3], "mod": ["", 5] }`). This picks, for each parameter, the first
 * acceptable value that is not `""`; a parameter whose only acceptable value is `""` is left
 * out. A dict value is itself an object of acceptable-value lists and is resolved the same
 * way, recursively. A value that is not a list is taken as it is.
 *
 * @param params - one call's parameter object from `ground_truth` (`{ param: [values] }`).
 * @returns the arguments object a model would have sent.
 * @throws TypeError when `params` is `null` or `undefined` (nothing else is checked).
 *
 * @example
 * ```ts
 * bfclGroundTruthArguments({ base: [3], exponent: [4], mod: ['', 5] }); // { base: 3, exponent: 4, mod: 5 }
 * bfclGroundTruthArguments({ base: [3], mod: [''] });                  // { base: 3 }
 * ```
 */
export function bfclGroundTruthArguments(params: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const [name, acceptable] of Object.entries(params)) {
    if (!Array.isArray(acceptable)) {
      args[name] = acceptable;
      continue;
    }
    const first: unknown = acceptable.find((value) => value !== '');
    if (first === undefined) continue;
    args[name] = isObjectRecord(first) ? bfclGroundTruthArguments(first) : first;
  }
  return args;
}

/** The converted `type`, or `undefined` when the result has no type constraint. */
function convertTypeField(value: unknown): unknown {
  if (!Array.isArray(value)) return convertType(value);
  const types: unknown[] = [];
  for (const element of value) {
    const converted = convertType(element);
    if (converted === undefined) return undefined; // `any` in a list: no constraint at all
    if (!types.includes(converted)) types.push(converted);
  }
  return types.length === 0 ? undefined : types;
}

function convertType(type: unknown): unknown {
  switch (type) {
    case 'dict':
      return 'object';
    case 'float':
      return 'number';
    case 'tuple':
      return 'array';
    case 'any':
      return undefined;
    default:
      return type;
  }
}

