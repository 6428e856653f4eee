/**
 * `defineTool`: a tool from a definition, checked at once. Apart from the types of
 * `tool.ts` because it checks the input schema (`input-check.ts`), which needs those types.
 *
 * @module
 */
import { checkToolInput } from './input-check.ts';
import { assertToolShape, type InferInput, type InputSchema, type Tool, type ToolDefinition } from '../tool/tool.ts';

/**
 * Defines a tool, inferring `execute`'s input type from a Standard Schema.
 *
 * Checks the definition at once and throws a `TypeError` naming the field and the value
 * received: a missing name, a non-function `execute`, a `timeoutMs` that is neither a
 * positive number nor a function, an `executionMode` other than `'parallel'` /
 * `'sequential'`, a `needsApproval` that is neither a boolean nor a function, a
 * non-function `prepareArguments`, and an `input` that is not usable (issue 13, see
 * docs/decisions.md "Tool inputs checked at definition"):
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
