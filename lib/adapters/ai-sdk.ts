/**
 * Vercel AI SDK tools (`ai` 6 and 7), both ways.
 *
 * - {@link fromAISDKTools}: a `ToolSet` (`{ weather: tool({ description, inputSchema, execute }) }`)
 *   → toolrun tools, plus the `beforeToolCall` hook that applies their `needsApproval`.
 * - {@link toAISDKTools}: toolrun tools → a `ToolSet` that `generateText` / `streamText` run;
 *   each call goes through `runTools`, so validation, timeouts and result limits hold.
 *
 * Only the AI SDK's shapes are used (no import of `ai`): the library never loads it.
 *
 * @module
 */
import type { StandardJSONSchemaV1, StandardSchemaV1 } from '@standard-schema/spec';
import type { RunToolsOptions } from '../core/options.ts';
import { runTools } from '../core/run-tools.ts';
import type { ContentBlock, InputSchema, JsonSchema, Tool, ToolContext, ToolResult, ToolResultMessage } from '../core/tool.ts';
import { fromAISDKSchema, isAISDKSchema } from '../core/input-check.ts';
import { describeValue, providerBlock } from '../core/tool.ts';
import { contentToText } from '../formats/shared.ts';
import { toolJsonSchema } from '../schemas/json-schema.ts';
import {
  approvalHook,
  assertObjectSchema,
  imageBlock,
  isAsyncIterable,
  isStandardSchema,
  outputText,
  type ApprovalHook,
  type ApproveFunction,
  type ForeignFunction,
} from './shared.ts';


/** What an AI SDK tool's `execute` receives as its second argument (the fields toolrun fills). */
export interface AISDKToolExecutionOptions {
  toolCallId: string;
  /** The conversation so far, from the `messages` option of {@link fromAISDKTools}; `[]` without it. */
  messages: unknown[];
  abortSignal?: AbortSignal;
  /** `ai` 7's tool context, from the `context` option; `{}` without it. */
  context: unknown;
}

/**
 * The fields of an AI SDK tool that {@link fromAISDKTools} reads. The SDK's `Tool` (from
 * `tool({ … })`, `dynamicTool({ … })`) fits this shape.
 */
export interface AISDKToolLike {
  readonly type?: string | undefined;
  readonly description?: string | ForeignFunction<[options: { context: unknown }], string> | undefined;
  /** A zod schema, any Standard Schema, a `jsonSchema()` / `zodSchema()` wrapper, or a lazy schema (a function returning a wrapper). */
  readonly inputSchema?: unknown;
  readonly needsApproval?:
    | boolean
    | ForeignFunction<[input: unknown, options: { toolCallId: string; messages: unknown[]; context?: unknown }], boolean | PromiseLike<boolean>>
    | undefined;
  readonly execute?: ForeignFunction<[input: unknown, options: unknown], unknown> | undefined;
  readonly toModelOutput?: ForeignFunction<[options: { toolCallId: string; input: unknown; output: unknown }], unknown> | undefined;
}

/** Options of {@link fromAISDKTools}. */
export interface FromAISDKToolsOptions {
  /**
   * The conversation handed to each `execute` as `messages`: an array, or a function called
   * for every call (so it can return the current history).
   * @default []
   */
  messages?: readonly unknown[] | (() => readonly unknown[]);
  /** `ai` 7's tool `context`, handed to `execute`, `needsApproval` and a function `description`. @default {} */
  context?: unknown;
  /**
   * Asked for every call whose tool's `needsApproval` is `true` (or returns `true`).
   * Without it such calls are deferred, as in the AI SDK: the returned `beforeToolCall`
   * answers `{ needsApproval: true }`, and the batch pauses with their approval requests
   * (`ToolBatch.paused`, contract H1, H3) until it is resumed with the person's decisions.
   * @default none
   */
  approve?: ApproveFunction;
}

/** What {@link fromAISDKTools} returns. */
export interface FromAISDKToolsResult {
  /** One toolrun tool per AI SDK tool that has an `execute`, in the `ToolSet`'s key order. */
  tools: Tool[];
  /**
   * Applies the tools' `needsApproval`: pass it as `runTools`' (or `runAgent`'s)
   * `beforeToolCall`, or call it from your own hook first. It returns `undefined` for tools
   * that are not from this `ToolSet`.
   */
  beforeToolCall: ApprovalHook;
  /** Names of the tools left out because they have no `execute` (provider-executed tools, tools the application answers itself). */
  skipped: string[];
}

/**
 * Turns an AI SDK `ToolSet` into toolrun tools.
 *
 * What maps (see docs/tools.md, "Vercel AI SDK"):
 * - the key → `name`; `description` (a function description is called with `context`);
 * - `inputSchema` → `input`: a zod 4 schema or any Standard Schema as is (toolrun validates
 *   with it and `execute` gets its output, as in the SDK); a `jsonSchema()` wrapper with no
 *   `validate` → its JSON Schema (validated as JSON Schema); a wrapper with `validate`
 *   (`zodSchema()`, `jsonSchema(s, { validate })`) → a Standard Schema that validates with
 *   it; a lazy schema (a function) is called first; no schema → an empty object schema;
 * - `execute(input, { toolCallId, messages, abortSignal, context })`: `abortSignal` is the
 *   call's toolrun signal. An async-iterable result (`async function*`) yields each value as
 *   progress, the way the SDK streams each as a preliminary result, and its last value is
 *   the result;
 * - the result: through the tool's `toModelOutput` when it has one (`text` / `json` /
 *   `content` outputs become content blocks, `error-text` / `error-json` /
 *   `execution-denied` an error result), else a string as text and anything else as JSON
 *   text; the raw output is kept as the result's `details`;
 * - `needsApproval` → the returned `beforeToolCall` with your `approve` function.
 *
 * @throws TypeError naming the tool when an input schema does not describe an object (e.g.
 *   `z.string()`: toolrun runs tools whose arguments are an object, see docs/decisions.md),
 *   cannot be read (a `jsonSchema()` whose JSON Schema is a promise), or is not a schema.
 *
 * @example
 * ```ts
 * const { tools, beforeToolCall } = fromAISDKTools({ weather }, { approve: askUser });
 * for await (const event of runTools(calls, { tools, beforeToolCall })) console.log(event.type);
 * ```
 */
export function fromAISDKTools(toolSet: Readonly<Record<string, AISDKToolLike>>, options: FromAISDKToolsOptions = {}): FromAISDKToolsResult {
  if (typeof toolSet !== 'object' || toolSet === null) {
    throw new TypeError(`fromAISDKTools: expected a ToolSet object ({ name: tool({ … }) }), received ${describeValue(toolSet)}`);
  }
  const context = options.context ?? {};
  const messages = (): unknown[] => {
    const m = typeof options.messages === 'function' ? options.messages() : options.messages;
    return m === undefined ? [] : [...m];
  };
  const peers = new Map<Tool, AISDKToolLike>();
  const tools: Tool[] = [];
  const skipped: string[] = [];
  for (const [name, peer] of Object.entries(toolSet)) {
    if (typeof peer !== 'object' || peer === null) {
      throw new TypeError(`fromAISDKTools: tool "${name}" must be an AI SDK tool object, received ${describeValue(peer)}`);
    }
    if (typeof peer.execute !== 'function') {
      skipped.push(name);
      continue;
    }
    const input = aiSdkInputSchema(name, peer.inputSchema);
    assertObjectSchema('fromAISDKTools', name, input);
    const description = typeof peer.description === 'function' ? peer.description({ context }) : peer.description;
    const tool: Tool = {
      name,
      ...(description !== undefined ? { description } : {}),
      input,
      async *execute(args: unknown, ctx: ToolContext): AsyncGenerator<unknown, ToolResult, undefined> {
        const execOptions: AISDKToolExecutionOptions = { toolCallId: ctx.toolCallId, messages: messages(), abortSignal: ctx.signal, context };
        const returned = peer.execute!(args, execOptions);
        let output: unknown;
        if (isAsyncIterable(returned)) {
          // Each value is a preliminary result in the SDK: shown as progress at once; the last one is the result.
          for await (const value of returned) {
            output = value;
            yield value;
          }
        } else {
          output = await returned;
        }
        return await aiSdkResult(peer, ctx.toolCallId, args, output);
      },
    };
    peers.set(tool, peer);
    tools.push(tool);
  }
  const beforeToolCall = approvalHook(
    'fromAISDKTools',
    async (tool, args, call) => {
      const peer = peers.get(tool);
      if (peer === undefined) return undefined;
      const rule = peer.needsApproval;
      if (typeof rule === 'function') return (await rule(args, { toolCallId: call.id, messages: messages(), context })) === true;
      return rule === true;
    },
    options.approve,
  );
  return { tools, beforeToolCall, skipped };
}

/** An AI SDK `inputSchema` → a toolrun input schema (see {@link fromAISDKTools}). */
function aiSdkInputSchema(name: string, schema: unknown): InputSchema {
  if (schema === undefined || schema === null) return { type: 'object', properties: {}, additionalProperties: false };
  if (isStandardSchema(schema)) return schema;
  // A lazy schema: a function that returns a wrapper.
  const wrapper: unknown = typeof schema === 'function' ? (schema as () => unknown)() : schema;
  if (!isAISDKSchema(wrapper)) {
    throw new TypeError(
      `fromAISDKTools: tool "${name}".inputSchema must be a zod schema, a Standard Schema or an AI SDK jsonSchema()/zodSchema() wrapper, received ${describeValue(schema)}`,
    );
  }
  return fromAISDKSchema(wrapper as object, `fromAISDKTools: tool "${name}".inputSchema`);
}

/** An AI SDK tool's output → a toolrun result (see {@link fromAISDKTools}). */
async function aiSdkResult(peer: AISDKToolLike, toolCallId: string, input: unknown, output: unknown): Promise<ToolResult> {
  if (typeof peer.toModelOutput !== 'function') return { content: [{ type: 'text', text: outputText(output) }], details: output };
  const model = (await peer.toModelOutput({ toolCallId, input, output })) as { type?: unknown; value?: unknown; reason?: unknown } | undefined;
  switch (model?.type) {
    case 'text':
      return { content: [{ type: 'text', text: outputText(model.value) }], details: output };
    case 'json':
      return { content: [{ type: 'text', text: outputText(model.value) }], details: output };
    case 'content':
      return { content: modelOutputContent(model.value), details: output };
    case 'error-text':
    case 'error-json':
      throw new Error(outputText(model.value));
    case 'execution-denied':
      throw new Error(typeof model.reason === 'string' ? model.reason : 'The tool call was denied.');
    default:
      throw new Error(`toModelOutput returned an output of unknown type ${describeValue(model?.type)}`);
  }
}

/** The parts of a `content` model output → content blocks: text and base64 images; other parts become a short text. */
function modelOutputContent(parts: unknown): ContentBlock[] {
  if (!Array.isArray(parts)) return [{ type: 'text', text: outputText(parts) }];
  return parts.map((part: unknown): ContentBlock => {
    const p = (typeof part === 'object' && part !== null ? part : {}) as Record<string, unknown>;
    if (p.type === 'text') return { type: 'text', text: outputText(p.text) };
    // ai 6: image-data / media / file-data { data, mediaType }; ai 7: file { data: { type: 'data', data }, mediaType }.
    const data = p.type === 'file' && typeof p.data === 'object' && p.data !== null && (p.data as { type?: unknown }).type === 'data' ? (p.data as { data?: unknown }).data : p.data;
    const image = imageBlock(data, p.mediaType);
    if (image !== undefined) return image;
    return { type: 'text', text: `[${String(p.type)} part omitted: toolrun results carry text and base64 images]` };
  });
}

// ---------------------------------------------------------------------------------------
// toolrun tools → AI SDK

/**
 * What a tool from {@link toAISDKTools} yields to the AI SDK: each progress value as a
 * preliminary result (`type: 'progress'`), then the result (`type: 'result'`), which is the
 * tool's output in the SDK's steps.
 */
export type AISDKToolOutput<Progress = unknown> =
  | { type: 'progress'; progress: Progress }
  | { type: 'result'; content: ContentBlock[]; details?: unknown };

/** What `toModelOutput` of a tool from {@link toAISDKTools} returns: the `ToolResultOutput` kinds of `ai` 6 and 7 it uses. */
export type AISDKModelOutput =
  | { type: 'text'; value: string }
  | { type: 'content'; value: Array<{ type: 'text'; text: string } | { type: 'image-data'; data: string; mediaType: string }> };

/** One tool of the `ToolSet` from {@link toAISDKTools}; assignable to `ai` 6's and 7's `Tool`. */
export interface AISDKTool {
  description?: string;
  /** A Standard Schema carrying the tool's JSON Schema; it accepts any value, because `runTools` validates (P5). */
  inputSchema: StandardSchemaV1<unknown, unknown> & StandardJSONSchemaV1<unknown, unknown>;
  execute: (input: unknown, options: { toolCallId: string; abortSignal?: AbortSignal }) => AsyncGenerator<AISDKToolOutput, void, undefined>;
  toModelOutput: (options: { output: AISDKToolOutput }) => AISDKModelOutput;
}

/** Options of {@link toAISDKTools}: the `runTools` options each call runs with (the SDK's `abortSignal` is the signal). */
export type ToAISDKToolsOptions = Pick<RunToolsOptions, 'timeoutMs' | 'abortGraceMs' | 'maxResultChars' | 'beforeToolCall' | 'afterToolCall'>;

/**
 * Turns toolrun tools into an AI SDK `ToolSet` for `generateText` / `streamText`.
 *
 * Each call runs through `runTools` with that one tool, so everything toolrun promises
 * holds per call: arguments validated with the tool's schema (the SDK is given a schema
 * that accepts any value, so the tool's own schema decides; P5), timeouts (A4), the abort
 * grace for tools that ignore their signal (A3), `maxResultChars`, the hooks. The SDK's
 * `abortSignal` aborts the call. Progress becomes preliminary results (`ai` 6 and 7 stream
 * an async-iterable `execute`'s values as `preliminary: true` tool results); the last value,
 * `{ type: 'result', content, details }`, is the tool's output. An error result is thrown as
 * an `Error` with the result's text, which the SDK sends to the model as an `error-text`
 * tool result.
 *
 * Not kept: `executionMode: 'sequential'` (S3) and `maxConcurrency` across calls — the SDK
 * starts a step's calls itself, each in its own `runTools`; order and pairing of results
 * are the SDK's.
 *
 * The model sees `toModelOutput`'s value: `{ type: 'text' }` for text-only content, else
 * `{ type: 'content' }` with `image-data` parts (the image part both `ai` 6 and 7 know; 7
 * prefers `file`).
 *
 * @throws TypeError naming the tool when its input schema cannot be written as a JSON
 *   Schema object (see `toolJsonSchema`), or when two tools share a name.
 *
 * @example
 * ```ts
 * const result = await generateText({ model, tools: toAISDKTools([readFile]), prompt, stopWhen: stepCountIs(5) });
 * ```
 */
export function toAISDKTools(tools: readonly Tool[], options: ToAISDKToolsOptions = {}): Record<string, AISDKTool> {
  const set: Record<string, AISDKTool> = {};
  for (const tool of tools) {
    if (Object.hasOwn(set, tool.name)) throw new TypeError(`toAISDKTools: two tools are named "${tool.name}"`);
    const json = toolJsonSchema(tool) as Record<string, unknown>;
    const aiTool: AISDKTool = {
      inputSchema: {
        '~standard': {
          version: 1,
          vendor: 'toolrun',
          validate: (value) => ({ value }),
          jsonSchema: { input: () => json, output: () => json },
        },
      },
      async *execute(input, { toolCallId, abortSignal }) {
        let result: ToolResultMessage | undefined;
        const run = runTools([{ id: toolCallId, name: tool.name, arguments: input }], {
          ...options,
          tools: [tool],
          ...(abortSignal !== undefined ? { signal: abortSignal } : {}),
        });
        for await (const event of run) {
          if (event.type === 'tool_execution_update') yield { type: 'progress', progress: event.progress };
          else if (event.type === 'tool_result') result = event.message;
        }
        // runTools answers every call (O2): a missing result would be a toolrun bug.
        if (result === undefined) throw new Error(`toolrun gave no result for the call to "${tool.name}"`);
        if (result.isError) throw new Error(contentToText(result.content));
        yield { type: 'result', content: result.content, ...(result.details !== undefined ? { details: result.details } : {}) };
      },
      toModelOutput: ({ output }) => aiSdkModelOutput(output),
    };
    if (tool.description !== undefined) aiTool.description = tool.description;
    set[tool.name] = aiTool;
  }
  return set;
}

function aiSdkModelOutput(output: AISDKToolOutput): AISDKModelOutput {
  if (output.type !== 'result') return { type: 'text', value: outputText(output.progress) };
  if (output.content.every((block) => block.type === 'text')) return { type: 'text', value: contentToText(output.content) };
  return {
    type: 'content',
    value: output.content.map(providerBlock).map((block) =>
      block.type === 'text' ? { type: 'text' as const, text: block.text } : { type: 'image-data' as const, data: block.data, mediaType: block.mimeType },
    ),
  };
}
