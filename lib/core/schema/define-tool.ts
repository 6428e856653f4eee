/**
 * `defineTool`: a tool from a definition, checked at once; `assertToolShape`, the shape
 * check every tool passes (also at `runTools`), and `defineForeignTool` for a foreign
 * listing. Apart from the types of `tool/tool.ts` because it checks the input schema
 * (`input-check.ts`).
 *
 * @module
 */
import { checkToolInput } from './input-check.ts';
import type { JsonSchema } from '../tool/content.ts';
import type { InferInput, InputSchema, Tool, ToolDefinition } from '../tool/tool.ts';
import { describeValue } from '../values/guards.ts';

/**
 * Defines a tool, inferring `execute`'s input type from a Standard Schema.
 *
 * Checks the definition at once and throws a `TypeError` naming the field and the value
 * received: a missing name, a non-function `execute`, a `timeoutMs` that is neither a
 * positive number nor a function, an `executionMode` other than `'parallel'` /
 * `'sequential'`, a `needsApproval` that is neither a boolean nor a function, a
 * non-function `prepareArguments`, and an `input` that is not usable (see
 * docs/adr/0009-tool-inputs.md):
 * - a Standard Schema that cannot be converted into the JSON Schema a model is sent (zod
 *   4.0–4.1, zod 3.25's `zod/v4` and classic zod 3 carry no converter: give them their own
 *   with `withJsonSchema`; a transform JSON Schema cannot express) — the message says what
 *   to pass instead, for each case;
 * - a JSON Schema whose structure is invalid (`type: 'text'`, `required: 'a'`), whose `type`
 *   is not `"object"`, or with a key that is a near miss of a keyword (`propertes`, `typ`).
 *
 * An AI SDK `jsonSchema()` / `zodSchema()` wrapper is accepted as `input` and unwrapped: the
 * returned tool's `input` is its JSON Schema, or a Standard Schema that validates with the
 * wrapper's `validate`. (Tools from MCP servers are not checked this strictly: see `mcpTools`.)
 *
 * @example
 * ```ts
 * const readFile = defineTool({
 *   name: 'read_file',
 *   input: v.object({ path: v.string() }),
 *   async *execute({ path }, { signal }) {
 *     yield { reading: path };
 *     return await fs.readFile(path, { encoding: 'utf8', signal });
 *   },
 * });
 * ```
 */
export function defineTool<const S extends InputSchema, Progress = never, Output = unknown, Name extends string = string>(
  definition: ToolDefinition<S, Progress, Output, Name>,
): Tool<InferInput<S>, Progress, Output, Name> {
  assertToolShape(definition, 'defineTool');
  const input = checkToolInput(definition.input, definition.name);
  if (input !== definition.input) return { ...definition, input } as Tool<InferInput<S>, Progress, Output, Name>;
  return definition as Tool<InferInput<S>, Progress, Output, Name>;
}

/**
 * @internal Builds a tool from a foreign listing (an MCP server's, a recording's) with the
 * shape checks of `defineTool` but not its schema checks: a badly structured schema is then
 * reported in the result of each call of that tool, and the rest of the listing stays usable.
 */
export function defineForeignTool<Progress = never, Output = unknown>(
  definition: ToolDefinition<JsonSchema, Progress, Output>,
): Tool<Record<string, unknown>, Progress, Output> {
  assertToolShape(definition, 'defineTool');
  return definition as Tool<Record<string, unknown>, Progress, Output>;
}

/** @internal Throws a TypeError if `tool` cannot be run; `where` names the caller in the message. */
export function assertToolShape(tool: unknown, where: string): asserts tool is Tool {
  if (typeof tool !== 'object' || tool === null) {
    throw new TypeError(`${where}: a tool must be an object, received ${describeValue(tool)}`);
  }
  const t = tool as Record<string, unknown>;
  if (typeof t.name !== 'string' || t.name === '') {
    throw new TypeError(`${where}: tool.name must be a non-empty string, received ${describeValue(t.name)}`);
  }
  if (typeof t.execute !== 'function') {
    throw new TypeError(`${where}: tool "${t.name}".execute must be a function, received ${describeValue(t.execute)}`);
  }
  // A Standard Schema may be a function (arktype's types are callable), a JSON Schema is an object.
  const callableSchema = typeof t.input === 'function' && typeof (t.input as { '~standard'?: unknown })['~standard'] === 'object';
  if ((typeof t.input !== 'object' || t.input === null) && !callableSchema) {
    throw new TypeError(
      `${where}: tool "${t.name}".input must be a Standard Schema or a JSON Schema object, received ${describeValue(t.input)}`,
    );
  }
  if (t.executionMode !== undefined && t.executionMode !== 'parallel' && t.executionMode !== 'sequential') {
    throw new TypeError(
      `${where}: tool "${t.name}".executionMode must be 'parallel' or 'sequential', received ${describeValue(t.executionMode)}`,
    );
  }
  if (t.timeoutMs !== undefined && typeof t.timeoutMs !== 'function' && !(typeof t.timeoutMs === 'number' && t.timeoutMs > 0)) {
    throw new TypeError(`${where}: tool "${t.name}".timeoutMs must be a positive number of ms or a function of the input, received ${describeValue(t.timeoutMs)}`);
  }
  if (t.needsApproval !== undefined && typeof t.needsApproval !== 'boolean' && typeof t.needsApproval !== 'function') {
    throw new TypeError(`${where}: tool "${t.name}".needsApproval must be a boolean or a function of the input, received ${describeValue(t.needsApproval)}`);
  }
  if (t.prepareArguments !== undefined && typeof t.prepareArguments !== 'function') {
    throw new TypeError(`${where}: tool "${t.name}".prepareArguments must be a function, received ${describeValue(t.prepareArguments)}`);
  }
}
