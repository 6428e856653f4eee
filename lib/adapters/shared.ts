/**
 * Helpers shared by the adapters to other tool ecosystems: approval requests, schema checks,
 * and reading a peer's output as result content.
 *
 * None of these import a peer package: the adapters work on the peers' shapes only, so
 * `import 'toolrun'` never loads the AI SDK, the OpenAI Agents SDK or LangChain.
 *
 * @module
 */
import type { StandardSchemaV1 } from '@standard-schema/spec';
import type { BeforeToolCallContext, BeforeToolCallResult } from '../core/options.ts';
import type { ContentBlock, InputSchema, JsonSchema, Tool, ToolCall } from '../core/tool.ts';
import { describeValue } from '../core/tool.ts';
import { inputJsonSchema } from '../schemas/json-schema.ts';

/**
 * A function `(...args: A) => R` whose parameters are compared bivariantly, as a method's are:
 * a foreign SDK's function with narrower parameter types (its own input and context types)
 * fits, without `any` in the shape. toolrun only calls it with the SDK's own values.
 */
export type ForeignFunction<A extends unknown[], R> = { call(...args: A): R }['call'];

/**
 * One call that a peer tool says needs a person's approval, as the adapters' `approve`
 * option receives it.
 */
export interface ApprovalRequest {
  /** The call as the model wrote it. */
  toolCall: ToolCall;
  /** The validated arguments the peer tool would receive. */
  input: unknown;
  /** The run's signal: a prompt should give up when it aborts. */
  signal: AbortSignal;
}

/**
 * Asks whether a call may run: `true` runs it, `false` turns it into an error result that
 * tells the model the call was denied. A throw becomes the call's error result (P4).
 */
export type ApproveFunction = (request: ApprovalRequest) => boolean | Promise<boolean>;

/** The `beforeToolCall` hook an adapter returns next to its tools. */
export type ApprovalHook = (context: BeforeToolCallContext) => Promise<BeforeToolCallResult | undefined>;

/**
 * Builds the `beforeToolCall` hook that applies the peers' approval rules.
 * `needsApproval(tool, args, call)` says whether a call needs approval (`undefined`: the tool
 * is not one of this adapter's). Without `approve`, a call that needs approval is deferred
 * (`{ needsApproval: true }`: the batch pauses with its request, contract H1), as the AI SDK
 * and the OpenAI Agents SDK pause; with it, `approve` decides.
 */
export function approvalHook(
  adapter: string,
  needsApproval: (tool: Tool, args: unknown, call: ToolCall) => Promise<boolean | undefined>,
  approve: ApproveFunction | undefined,
): ApprovalHook {
  return async ({ tool, args, toolCall, signal }) => {
    const needed = await needsApproval(tool, args, toolCall);
    if (needed !== true) return undefined;
    if (approve === undefined) return { needsApproval: true, reason: `The tool "${tool.name}" asks for a person's approval before it runs (its needsApproval, through ${adapter}).` };
    if (await approve({ toolCall, input: args, signal })) return undefined;
    return { block: true, reason: `The call to "${tool.name}" was not approved, so it was not run.` };
  };
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
    throw new TypeError(`${adapter}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
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
