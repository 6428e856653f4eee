/**
 * Argument parsing and validation, with error text a model can act on (contract P5).
 *
 * - Standard Schema (valibot, zod, arktype) through `~standard.validate`.
 * - Plain JSON Schema (draft-07; 2020-12, 2019-09 or draft-04 when `$schema` says so) through
 *   an interpreter that needs no `eval` (`json-schema-validator.ts`), prepared once per
 *   schema object.
 *
 * @module
 */
import type { StandardSchemaV1 } from '@standard-schema/spec';
import { compileJsonSchema, JsonSchemaStructureError } from './json-schema-validator.ts';
import { Problem, readSchemaResult } from '../values/foreign.ts';
import { describeValue } from '../values/guards.ts';
import type { InputSchema } from '../tool/tool.ts';
import type { JsonSchema } from '../tool/content.ts';
import { isObjectRecord, isPromiseLike, thrownText } from '../values/guards.ts';

/** Longest raw argument text quoted back to the model, in characters. */
const MAX_QUOTED_CHARS = 300;
/** Most schema issues listed in one error text. */
const MAX_ISSUES = 10;

/** The outcome of parsing or validating: the value, or the error text for the model. */
export type Checked<T> = { ok: true; value: T } | { ok: false; message: string };

/**
 * Turns a call's raw `arguments` into an object.
 *
 * - An object is taken as is. `undefined` and `null` (a provider that sent no field) and
 *   `""` or whitespace (an Anthropic stream's no-argument call, case C14) become `{}`.
 * - A string is parsed as JSON. When the JSON is itself a string holding a JSON object
 *   (double encoding, case C15), that inner object is used: one level, documented in
 *   docs/adr/0002-model-facing-texts.md.
 * - Anything else — invalid JSON, arrays, numbers, `null` written as text — is an error
 *   that says what was received and what to send instead (case C13, C15).
 */
export function parseArguments(raw: unknown, toolName: string): Checked<Record<string, unknown>> {
  if (raw === undefined || raw === null) return { ok: true, value: {} };
  if (typeof raw === 'string') {
    if (raw.trim() === '') return { ok: true, value: {} };
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch (error) {
      return {
        ok: false,
        message:
          `The arguments for tool "${toolName}" are not valid JSON (${(error as Error).message}). ` +
          `Received: ${quote(raw)}. Send the arguments again as one JSON object.`,
      };
    }
    if (typeof parsed === 'string') {
      try {
        const inner: unknown = JSON.parse(parsed);
        if (isPlainObject(inner)) return { ok: true, value: inner };
      } catch {
        // Not double-encoded JSON: reported below as a string.
      }
    }
    raw = parsed;
  }
  if (isPlainObject(raw)) return { ok: true, value: raw };
  return {
    ok: false,
    message:
      `The arguments for tool "${toolName}" must be a JSON object, got ${describeValue(raw, MAX_QUOTED_CHARS)}. ` +
      `Send the arguments again as one JSON object, e.g. {"name": value}.`,
  };
}

/** True when `schema` is a Standard Schema (it carries `~standard.validate`). */
export function isStandardSchema(schema: InputSchema): schema is StandardSchemaV1 {
  const std = (schema as Partial<StandardSchemaV1>)['~standard'];
  return typeof std === 'object' && std !== null && typeof std.validate === 'function';
}

/**
 * Validates parsed arguments against a tool's input schema. Returns the schema's output
 * (with defaults and transforms applied, for Standard Schema) or an error text listing one
 * line per issue with its dotted path, then the received arguments (contract P5).
 * Synchronous unless the Standard Schema's `validate` returns a promise; the promise is
 * then this function's own (a native `Promise`, which never rejects).
 *
 * A Standard Schema is recognized and its success read without a helper call (the plain
 * path of every call, counted by `bench/cold-calls.ts`): a fresh process runs
 * this in V8's interpreter, where each call costs.
 */
export function validateArguments(
  schema: InputSchema,
  args: Record<string, unknown>,
  toolName: string,
): Checked<unknown> | Promise<Checked<unknown>> {
  let standard: StandardSchemaV1['~standard'] | undefined;
  try {
    // What isStandardSchema checks, read once: a getter or a revoked Proxy throws here.
    const std = (schema as Partial<StandardSchemaV1>)['~standard'];
    if (typeof std === 'object' && std !== null && typeof std.validate === 'function') standard = std;
  } catch (error) {
    return schemaFailed(toolName, error);
  }
  if (standard !== undefined) {
    // The schema is foreign code: a transform or check may throw on the model's input
    // (`JSON.parse` of a bad string), and its result is read through the guarded reader.
    let result: unknown;
    try {
      result = standard.validate(args);
    } catch (error) {
      return schemaFailed(toolName, error);
    }
    // The common answer, a success object (`{ value }`, not a thenable), is read here;
    // anything else (issues, a promise, a malformed or unreadable result) by the readers below.
    try {
      if (typeof result === 'object' && result !== null) {
        const r = result as { issues?: unknown; then?: unknown; value?: unknown };
        if (r.issues === undefined && typeof r.then !== 'function' && 'value' in r) return { ok: true, value: r.value };
      }
    } catch {
      // Read again below: the readers say what is wrong with it.
    }
    if (isPromiseLike(result)) {
      return Promise.resolve(result).then(
        (r) => fromStandardResult(r, args, toolName),
        (error: unknown) => schemaFailed(toolName, error),
      );
    }
    return fromStandardResult(result, args, toolName);
  }
  const schemaProblem = (error: unknown): Checked<unknown> => {
    if (!(error instanceof JsonSchemaStructureError)) throw error;
    return {
      ok: false,
      message: `Tool "${toolName}" cannot be called: its input JSON Schema is invalid (${thrownText(error)}). This is a problem in the tool definition, not in your call.`,
    };
  };
  let compiled;
  try {
    compiled = compileJsonSchema(schema as JsonSchema); // not a Standard Schema (checked above)
  } catch (error) {
    return schemaProblem(error);
  }
  let issues: string[];
  try {
    issues = compiled.issues(args);
  } catch (error) {
    // A $ref that points nowhere is the schema's fault; anything else (arguments a shim made
    // unreadable, a revoked Proxy) is reported as the schema failing on these arguments.
    return error instanceof JsonSchemaStructureError ? schemaProblem(error) : schemaFailed(toolName, error);
  }
  if (issues.length === 0) return { ok: true, value: args };
  return { ok: false, message: invalidArgumentsText(toolName, issues, args) };
}

function schemaFailed(toolName: string, error: unknown): Checked<never> {
  return { ok: false, message: `Tool "${toolName}" could not validate its arguments: its input schema threw ${thrownText(error)}. Check the argument values and call the tool again.` };
}

function fromStandardResult(result: unknown, args: unknown, toolName: string): Checked<unknown> {
  const read = readSchemaResult(result);
  if (read instanceof Problem) return schemaFailed(toolName, read.problem);
  if (read.ok) return read;
  // One line per issue (P5): arktype writes a multi-rule issue over several lines.
  const lines = read.issues.map(([path, message]) => `${path}: ${message.replace(/\s*\n\s*/g, ' ')}`);
  return { ok: false, message: invalidArgumentsText(toolName, lines, args) };
}

function invalidArgumentsText(toolName: string, issueLines: string[], args: unknown): string {
  const shown = issueLines.slice(0, MAX_ISSUES).map((line) => `- ${line}`);
  if (issueLines.length > MAX_ISSUES) shown.push(`- … and ${issueLines.length - MAX_ISSUES} more`);
  return (
    `Invalid arguments for tool "${toolName}":\n${shown.join('\n')}\n` +
    `Received arguments: ${quote(safeJson(args))}\nFix these and call the tool again.`
  );
}


function isPlainObject(value: unknown): value is Record<string, unknown> {
  return isObjectRecord(value);
}

function safeJson(value: unknown): string {
  return thrownText(value);
}

function quote(text: string): string {
  return text.length > MAX_QUOTED_CHARS ? `${text.slice(0, MAX_QUOTED_CHARS)}… (${text.length} chars in all)` : text;
}
