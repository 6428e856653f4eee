/**
 * Helpers shared by the adapters to other tool ecosystems: schema checks, reading a peer's
 * output as result content, the removed `approve` option.
 *
 * None of these import a peer package: the adapters work on the peers' shapes only, so
 * `import 'toolrun'` never loads the AI SDK, the OpenAI Agents SDK or LangChain.
 *
 * @module
 */
import type { StandardSchemaV1 } from '@standard-schema/spec';
import type { ContentBlock, JsonSchema } from '../core/tool/content.ts';
import type { InputSchema } from '../core/tool/tool.ts';
import { describeValue } from '../core/values/guards.ts';
import { inputJsonSchema } from '../core/schema/json-schema.ts';
import { withJsonSchema } from '../schemas/with-json-schema.ts';

/**
 * A function `(...args: A) => R` whose parameters are compared bivariantly, as a method's are:
 * a foreign SDK's function with narrower parameter types (its own input and context types)
 * fits, without `any` in the shape. toolrun only calls it with the SDK's own values.
 */
export type ForeignFunction<A extends unknown[], R> = {
  /** The function itself: a method, so that its parameters compare bivariantly. */
  call(...args: A): R;
}['call'];

/**
 * Refuses an `approve` option given to an adapter: the peer's rule is the
 * adapted tool's own `needsApproval`, and `runTools`' (or `runAgent`'s) `approve` decides. A
 * caller still passing it (plain JavaScript, a cast) would otherwise see its calls pause
 * where it expected to be asked.
 *
 * @throws TypeError naming the adapter and saying where the function goes now.
 */
export function refuseAdapterApprove(adapter: string, options: object): void {
  if ((options as { approve?: unknown }).approve === undefined) return;
  throw new TypeError(
    `${adapter}: options.approve was removed; the adapted tools carry their needsApproval, so pass your approval function to runTools (or runAgent) as \`approve\`: (request) => ({ approvalId: request.approvalId, approved })`,
  );
}

/** True for a Standard Schema (an object or a function with a `~standard` object). */
export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { '~standard'?: unknown })['~standard'] === 'object'
  );
}

/**
 * Checks that `schema` describes an object, as toolrun's core requires of a tool's
 * arguments and as providers require of a tool's parameters.
 *
 * @throws TypeError naming the adapter and the tool when it does not (a JSON Schema whose
 *   `type` is not `"object"`; a Standard Schema whose converted JSON Schema is not an
 *   object, or that cannot be converted).
 */
export function assertObjectSchema(adapter: string, toolName: string, schema: InputSchema): void {
  if (!isStandardSchema(schema)) {
    const type = (schema as JsonSchema).type;
    if (type !== undefined && type !== 'object') {
      throw new TypeError(
        `${adapter}: tool "${toolName}" has an input schema of type ${describeValue(type)}; toolrun runs tools whose arguments are an object (providers require \`type: "object"\` too). Wrap the value in an object property.`,
      );
    }
    return;
  }
  try {
    inputJsonSchema(schema, toolName);
  } catch (error) {
    const text = error instanceof Error ? error.message : String(error);
    // A schema that only lacks a converter: the adapter's own option gives it one.
    const hint = text.includes('withJsonSchema(') ? ` (or pass your library's converter as ${adapter}'s \`toJsonSchema\` option)` : '';
    throw new TypeError(`${adapter}: ${text}${hint}`, { cause: error });
  }
}

/**
 * The adapters' `toJsonSchema` option: a Standard Schema with no JSON Schema converter of its
 * own (zod 4.0–4.1, zod 3.25's `zod/v4`, classic zod 3) gets `convert` through
 * `withJsonSchema`; any other schema is returned as it is.
 */
export function withConverter(schema: unknown, convert: ((schema: never) => unknown) | undefined): unknown {
  if (convert === undefined || !isStandardSchema(schema)) return schema;
  const props = schema['~standard'] as { jsonSchema?: unknown };
  if (typeof props.jsonSchema === 'object' && props.jsonSchema !== null) return schema;
  return withJsonSchema(schema, convert as (schema: StandardSchemaV1) => unknown);
}

/** A tool's output as text: a string as it is, `undefined` as `''`, anything else as JSON (or `String` when it cannot be). */
export function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (output === undefined) return '';
  try {
    return JSON.stringify(output) ?? String(output);
  } catch {
    return String(output);
  }
}

/** An image content block when `mediaType` is an image type and `data` base64 text, else `undefined`. */
export function imageBlock(data: unknown, mediaType: unknown): ContentBlock | undefined {
  if (typeof data !== 'string' || typeof mediaType !== 'string' || !mediaType.startsWith('image/')) return undefined;
  return { type: 'image', data, mimeType: mediaType };
}

/** True when `value` can be iterated with `for await` (and is not a string). */
export function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function';
}
