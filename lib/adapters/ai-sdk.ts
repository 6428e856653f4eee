/**
 * Vercel AI SDK tools (`ai` 6 and 7), both ways.
 *
 * - {@link fromAISDKTools}: a `ToolSet` (`{ weather: tool({ description, inputSchema, execute }) }`)
 *   → toolrun tools, each carrying its `needsApproval` (or ai 7's `toolApproval` for it).
 * - {@link toAISDKTools}: toolrun tools → a `ToolSet` that `generateText` / `streamText` run;
 *   each call goes through `runTools`, so validation, timeouts and result limits hold.
 *
 * Only the AI SDK's shapes are used (no import of `ai`): the library never loads it.
 *
 * @module
 */
import type { StandardJSONSchemaV1, StandardSchemaV1 } from '@standard-schema/spec';
import type { RunToolsOptions } from '../core/run/options.ts';
import { runTools } from '../core/run/run-tools.ts';
import type { ContentBlock, JsonSchema } from '../core/tool/content.ts';
import type { InputSchema, NeedsApprovalContext, Tool, ToolContext, ToolDetailsOf, ToolResult, ToolResultMessage } from '../core/tool/tool.ts';
import { fromAISDKSchema, isAISDKSchema } from '../core/schema/input-check.ts';
import { RuleDenial } from '../core/run/stages/outcome.ts';
import { describeValue } from '../core/values/guards.ts';
import { providerBlock } from '../core/values/content.ts';
import { contentToText } from '../formats/shared.ts';
import { aiSdkImagePart, aiSdkVersion, type AISDKImageOutputPart, type AISDKVersion } from '../formats/ai-sdk-messages.ts';
import { toolJsonSchema } from '../core/schema/json-schema.ts';
import { assertObjectSchema, imageBlock, isAsyncIterable, isStandardSchema, outputText, refuseAdapterApprove, withConverter, type ForeignFunction } from './shared.ts';


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
   * `ai` 7's `toolApproval` (the `generateText` / `streamText` option, type
   * `ToolApprovalConfiguration`), applied to these tools as `generateText` applies it, ahead
   * of each tool's own `needsApproval`: a function of `{ toolCall, tools, toolsContext,
   * runtimeContext, messages }` for every call, or an object of per-tool statuses and
   * functions `(input, { toolCallId, messages, toolContext, runtimeContext })`. The status
   * a call gets decides:
   * - `'user-approval'`: the call needs a person's approval (its tool's `needsApproval`);
   * - `'not-applicable'`, `'approved'`, `undefined`: it runs without asking;
   * - `'denied'`: it is rejected without asking anyone, never runs, and its error result
   *   tells the model the application denied it (with the status's `reason`);
   * - anything else: the call is rejected (a problem in the configuration, P4); a static
   *   status that is none of these is a `TypeError` at once.
   *
   * Object statuses (`{ type, reason }`) count as their `type`; a `reason` is kept only for
   * `'denied'` (toolrun's approval requests from a tool's rule carry no reason).
   * @default none: each tool's own `needsApproval` decides
   * @example
   * ```ts
   * fromAISDKTools(tools, { toolApproval: { sendEmail: 'user-approval', search: 'approved' } });
   * ```
   */
  toolApproval?: AISDKToolApproval;
  /** `ai` 7's `runtimeContext`, handed to `toolApproval`'s functions. @default {} */
  runtimeContext?: unknown;
  /**
   * The JSON Schema converter for an `inputSchema` with none of its own (zod 4.0–4.1, zod
   * 3.25's `zod/v4`, classic zod 3: Standard Schemas without `~standard.jsonSchema`), as the
   * SDK converts them: `(schema) => asSchema(schema).jsonSchema` with `asSchema` from `ai`.
   * @default none: such a tool is a TypeError saying so
   * @example
   * ```ts
   * import { asSchema } from 'ai';
   * const { tools } = fromAISDKTools(toolSet, { toJsonSchema: (schema) => asSchema(schema as never).jsonSchema });
   * ```
   */
  toJsonSchema?: ForeignFunction<[schema: unknown], unknown>;
}

/**
 * `ai` 7's approval status of one call (`ToolApprovalStatus`): a string, or an object with a
 * `type` and an optional `reason`; `undefined` is `'not-applicable'`.
 */
export type AISDKToolApprovalStatus =
  | undefined
  | 'not-applicable'
  | 'approved'
  | 'denied'
  | 'user-approval'
  | { readonly type: 'not-applicable' | 'approved' | 'denied' | 'user-approval'; readonly reason?: string | undefined };

/** The call `toolApproval`'s function form receives (`ai` 7's `toolCall`, the fields toolrun fills). */
export interface AISDKApprovalToolCall {
  type: 'tool-call';
  toolCallId: string;
  toolName: string;
  /** The validated input. */
  input: unknown;
}

/** `ai` 7's `ToolApprovalConfiguration`, by shape: see {@link FromAISDKToolsOptions.toolApproval}. */
export type AISDKToolApproval =
  | ForeignFunction<
      [options: { toolCall: AISDKApprovalToolCall; tools: unknown; toolsContext: unknown; runtimeContext: unknown; messages: unknown[] }],
      AISDKToolApprovalStatus | PromiseLike<AISDKToolApprovalStatus>
    >
  | { readonly [toolName: string]: AISDKToolApprovalStatus | AISDKSingleToolApproval };

/** A per-tool function of `toolApproval` (`ai` 7's `SingleToolApprovalFunction`): the validated input and the call's options → a status. */
export type AISDKSingleToolApproval = ForeignFunction<
  [input: unknown, options: { toolCallId: string; messages: unknown[]; toolContext: unknown; runtimeContext: unknown }],
  AISDKToolApprovalStatus | PromiseLike<AISDKToolApprovalStatus>
>;

/** What {@link fromAISDKTools} returns; `T` is the union of the adapted tools' types ({@link FromAISDKTool}). */
export interface FromAISDKToolsResult<T extends Tool = Tool> {
  /**
   * One toolrun tool per AI SDK tool that has an `execute`, in the `ToolSet`'s key order.
   * A tool whose call may need approval has `needsApproval` set (contract H1).
   */
  tools: T[];
  /** Names of the tools left out because they have no `execute` (provider-executed tools, tools the application answers itself). */
  skipped: string[];
}

/** What an AI SDK `execute` yields as preliminary results (`never` for one that cannot stream). Distributes over a union. */
export type AISDKPreliminaryOf<R> = R extends AsyncIterable<infer X> ? X : never;
/** What an AI SDK `execute` gives as its output: the last value of an async iterable, else the awaited value. Distributes over a union. */
export type AISDKOutputOf<R> = R extends AsyncIterable<infer X> ? X : Awaited<R>;

/**
 * The toolrun tool {@link fromAISDKTools} makes of the AI SDK tool `P` under the key `N`, read
 * from `P`'s `execute` (the SDK's `Tool<INPUT, OUTPUT>` types it `(input: INPUT, …) =>
 * AsyncIterable<OUTPUT> | PromiseLike<OUTPUT> | OUTPUT`):
 * - `Input`: `execute`'s input (`INPUT`);
 * - `Progress`: the preliminary-result type (`OUTPUT` when `execute` may return an async
 *   iterable, `never` for a plain async function);
 * - `Output`: `ToolResult<OUTPUT>`, so results' `details` are the SDK tool's output;
 * - `Name`: the key `N`.
 *
 * `never` for a tool with no `execute` (it is skipped).
 *
 * @example
 * ```ts
 * type Weather = FromAISDKTool<typeof weather, 'weather'>; // Tool<{ city: string }, never, ToolResult<{ temperature: number }>, 'weather'>
 * ```
 */
export type FromAISDKTool<P, N extends string> = P extends { readonly execute?: infer E }
  ? NonNullable<E> extends (input: infer I, options: never) => infer R
    ? Tool<I, AISDKPreliminaryOf<R>, ToolResult<AISDKOutputOf<R>>, N>
    : never
  : never;

/** The union of the toolrun tools {@link fromAISDKTools} makes of the `ToolSet` `TS`, one per key ({@link FromAISDKTool}). */
export type FromAISDKTools<TS> = { [K in keyof TS & string]: FromAISDKTool<TS[K], K> }[keyof TS & string];

/**
 * Turns an AI SDK `ToolSet` into toolrun tools.
 *
 * What maps (see docs/guide/tools-from-elsewhere.md, "Vercel AI SDK"):
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
 * - `needsApproval` (`true`, or a function of the input and `{ toolCallId, messages,
 *   context }`) → the tool's own `needsApproval` (contract H1), given the validated input; a
 *   truthy answer asks, as in the SDK. So `runTools(calls, { tools })` alone pauses a call
 *   that needs approval (`ToolBatch.paused`), and with `runTools`' `approve` it is asked;
 *   toolrun's wrappers (`withTimeout`, `withRetry`, `mapProgress`) keep the rule;
 * - `options.toolApproval` (ai 7's `generateText` option) → applied ahead of each tool's
 *   rule, as `generateText` applies it (see {@link FromAISDKToolsOptions.toolApproval}).
 *
 * @throws TypeError naming the tool when an input schema does not describe an object (e.g.
 *   `z.string()`: toolrun runs tools whose arguments are an object, see docs/adr/0009-tool-inputs.md),
 *   cannot be read (a `jsonSchema()` whose JSON Schema is a promise), or is not a schema;
 *   when `options.approve` is given (approval is decided by `runTools`: pass `approve` there);
 *   when `options.toolApproval` is neither a function nor an object.
 *
 * @example
 * ```ts
 * const { tools } = fromAISDKTools({ weather, sendEmail });
 * // sendEmail has needsApproval: true — asked here; without `approve` the batch pauses.
 * const approve = async (request) => ({ approvalId: request.approvalId, approved: await askUser(request) });
 * for await (const event of runTools(calls, { tools, approve })) console.log(event.type);
 * ```
 */
export function fromAISDKTools<const TS extends Readonly<Record<string, AISDKToolLike>>>(
  toolSet: TS,
  options: FromAISDKToolsOptions = {},
): FromAISDKToolsResult<FromAISDKTools<TS>> {
  if (typeof toolSet !== 'object' || toolSet === null) {
    throw new TypeError(`fromAISDKTools: expected a ToolSet object ({ name: tool({ … }) }), received ${describeValue(toolSet)}`);
  }
  refuseAdapterApprove('fromAISDKTools', options);
  const toolApproval = options.toolApproval;
  if (toolApproval !== undefined && typeof toolApproval !== 'function' && (typeof toolApproval !== 'object' || toolApproval === null)) {
    throw new TypeError(`fromAISDKTools: options.toolApproval must be a function or an object of per-tool statuses (ai 7's ToolApprovalConfiguration), received ${describeValue(toolApproval)}`);
  }
  const context = options.context ?? {};
  const messages = (): unknown[] => {
    const m = typeof options.messages === 'function' ? options.messages() : options.messages;
    return m === undefined ? [] : [...m];
  };
  const approval: ApprovalEnv = {
    toolSet,
    toolApproval,
    context,
    // The same for every call (the tool set and the context are fixed here): made once, frozen
    // so that one call's approval function cannot change what the next one is given.
    toolsContext: Object.freeze(Object.fromEntries(Object.keys(toolSet).map((key) => [key, context]))),
    runtimeContext: options.runtimeContext ?? {},
    messages,
  };
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
    const input = aiSdkInputSchema(name, withConverter(peer.inputSchema, options.toJsonSchema));
    assertObjectSchema('fromAISDKTools', name, input);
    const description = typeof peer.description === 'function' ? peer.description({ context }) : peer.description;
    const needsApproval = approvalRule(approval, name, peer);
    const tool: Tool = {
      name,
      ...(description !== undefined ? { description } : {}),
      input,
      ...(needsApproval !== undefined ? { needsApproval } : {}),
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
    tools.push(tool);
  }
  // Each tool runs its peer's execute and returns its output as details: the types FromAISDKTool reads.
  return { tools: tools as FromAISDKTools<TS>[], skipped };
}

/** What the approval rules of one {@link fromAISDKTools} call share. */
interface ApprovalEnv {
  readonly toolSet: Readonly<Record<string, AISDKToolLike>>;
  readonly toolApproval: AISDKToolApproval | undefined;
  readonly context: unknown;
  /** ai 7's `toolsContext` of the function form: each tool's name → `context`. */
  readonly toolsContext: Readonly<Record<string, unknown>>;
  readonly runtimeContext: unknown;
  readonly messages: () => unknown[];
}

type Decision = 'ask' | 'run' | { denied: string | undefined };

/**
 * The toolrun `needsApproval` of one AI SDK tool: `toolApproval`'s answer for it when there is
 * one (as ai 7's `generateText` resolves it: the function form for every call, else the tool's
 * own entry when not null), else the tool's `needsApproval`. `undefined` when no call of the
 * tool can need approval (no rule at all, or a static status that never asks).
 */
function approvalRule(env: ApprovalEnv, name: string, peer: AISDKToolLike): Tool['needsApproval'] {
  const config = env.toolApproval;
  const entry: unknown = typeof config === 'object' && Object.hasOwn(config, name) ? config[name] : undefined;
  if (typeof config !== 'function' && (entry === undefined || entry === null)) {
    // The tool's own rule, as the SDK reads it (called on the tool, as the SDK calls it): truthy asks.
    const rule = peer.needsApproval;
    if (typeof rule !== 'function') return rule ? true : undefined;
    return async (input: unknown, { toolCall }: NeedsApprovalContext) =>
      Boolean(await rule.call(peer, input, { toolCallId: toolCall.id, messages: env.messages(), context: env.context }));
  }
  if (typeof config !== 'function' && typeof entry !== 'function') {
    // A static status: decided once, here; one that is none of the four is a TypeError now.
    let decision: Decision;
    try {
      decision = readStatus(name, entry);
    } catch (error) {
      throw new TypeError(`fromAISDKTools: options.${(error as Error).message}`);
    }
    if (decision === 'ask') return true;
    if (decision === 'run') return undefined;
  }
  return async (input: unknown, { toolCall }: NeedsApprovalContext) => {
    let status: unknown;
    if (typeof config === 'function') {
      status = await config({
        toolCall: { type: 'tool-call', toolCallId: toolCall.id, toolName: name, input },
        tools: env.toolSet,
        toolsContext: env.toolsContext,
        runtimeContext: env.runtimeContext,
        messages: env.messages(),
      });
    } else if (typeof entry === 'function') {
      status = await (entry as AISDKSingleToolApproval)(input, {
        toolCallId: toolCall.id,
        messages: env.messages(),
        toolContext: env.context,
        runtimeContext: env.runtimeContext,
      });
    } else {
      status = entry;
    }
    const decision = readStatus(name, status);
    // Denied: the call is rejected without asking anyone, and never runs (RuleDenial's text is its result).
    if (typeof decision === 'object') throw new RuleDenial(deniedText(name, decision.denied));
    return decision === 'ask';
  };
}

/**
 * Reads one `ToolApprovalStatus`. @throws Error naming the tool and the value for anything
 * that is not one (the call is then rejected: its rule threw, P4).
 */
function readStatus(name: string, status: unknown): Decision {
  const type = typeof status === 'object' && status !== null ? (status as { type?: unknown }).type : status;
  switch (type) {
    case undefined:
    case 'not-applicable':
    case 'approved':
      return 'run';
    case 'user-approval':
      return 'ask';
    case 'denied': {
      const reason = typeof status === 'object' ? (status as { reason?: unknown }).reason : undefined;
      return { denied: typeof reason === 'string' && reason !== '' ? reason : undefined };
    }
    default:
      throw new Error(
        `toolApproval gave tool "${name}" the status ${describeValue(status)}, not one of 'not-applicable', 'approved', 'denied', 'user-approval' (or an object with that type)`,
      );
  }
}

/** The error text of a call `toolApproval` denied (the SDK's `execution-denied`). */
function deniedText(name: string, reason: string | undefined): string {
  return `The application denied this call to tool "${name}"${reason === undefined ? '' : `: ${reason}`}. It was not run; do not call it again unless the user asks for it.`;
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
export type AISDKToolOutput<Progress = unknown, Details = unknown> =
  | { type: 'progress'; progress: Progress }
  | { type: 'result'; content: ContentBlock[]; details?: Details };

/**
 * What `toModelOutput` of a tool from {@link toAISDKTools} returns for `ai` `V`: the
 * `ToolResultOutput` kinds it uses, images as {@link AISDKImageOutputPart} (ai 7's `file`
 * part by default; ai 6's `image-data` with `aiVersion: 6`).
 */
export type AISDKModelOutput<V extends AISDKVersion = 7> =
  | { type: 'text'; value: string }
  | { type: 'content'; value: Array<{ type: 'text'; text: string } | AISDKImageOutputPart<V>> };

/**
 * One tool of the `ToolSet` from {@link toAISDKTools}; assignable to `ai` 6's and 7's
 * `Tool<Input, AISDKToolOutput<Progress, Details>>`, so `generateText`'s `TypedToolCall`
 * has the tool's `Input` and `TypedToolResult` its progress and details types.
 *
 * @typeParam Input - the tool's validated input type (what its schema gives `execute`). @default unknown
 * @typeParam Progress - what the tool yields (the SDK's preliminary results). @default unknown
 * @typeParam Details - the `details` of its results ({@link ToolDetailsOf} its output). @default unknown
 * @typeParam V - the `ai` major version its `toModelOutput` writes images for ({@link AISDKImageOutputPart}). @default 7
 */
export interface AISDKTool<Input = unknown, Progress = unknown, Details = unknown, V extends AISDKVersion = 7> {
  description?: string;
  /**
   * A Standard Schema carrying the tool's JSON Schema. Typed as the tool's input; at run time
   * it accepts any value, because `runTools` validates with the tool's own schema (P5).
   */
  inputSchema: StandardSchemaV1<Input, Input> & StandardJSONSchemaV1<Input, Input>;
  /**
   * Runs the toolrun tool for one AI SDK tool call: yields the tool's progress as
   * preliminary outputs and its result last (the AI SDK takes the last value as the output).
   */
  execute: (input: Input, options: { toolCallId: string; abortSignal?: AbortSignal }) => AsyncGenerator<AISDKToolOutput<Progress, Details>, void, undefined>;
  /** Declared as a method (its parameter compared bivariantly), so the set also reads back through {@link fromAISDKTools}. */
  toModelOutput(options: { toolCallId: string; input: Input; output: AISDKToolOutput<Progress, Details> }): AISDKModelOutput<V>;
}

/**
 * The `ToolSet` {@link toAISDKTools} returns for tools of the union `T`: one entry per tool,
 * keyed by its literal name, typed {@link AISDKTool} with its input, progress and details.
 * With `Tool[]` (names not literal) it is a `Record<string, AISDKTool>`.
 */
export type AISDKToolSet<T extends Tool, V extends AISDKVersion = 7> = {
  [K in T as K extends Tool<never, unknown, unknown, infer N> ? N : never]: K extends Tool<infer I, infer P, infer O, string> ? AISDKTool<I, P, ToolDetailsOf<O>, V> : never;
};

/**
 * Options of {@link toAISDKTools}: the `runTools` options each call runs with (the SDK's
 * `abortSignal` is the signal). `approve` answers the tools' `needsApproval` (H1, H2); without
 * it a call that needs approval is not run (one SDK tool call cannot pause) and the SDK gets
 * an error saying so.
 */
export type ToAISDKToolsOptions<V extends AISDKVersion = 7> = Pick<RunToolsOptions, 'timeoutMs' | 'abortGraceMs' | 'maxResultChars' | 'beforeToolCall' | 'afterToolCall' | 'approve'> & {
  /**
   * The `ai` major version the set is for: it decides how `toModelOutput` writes images
   * ({@link AISDKImageOutputPart}) and which `ToolSet` the types fit. ai 7 reads ai 6's
   * `image-data` too, with a deprecation warning; ai 6 does not read ai 7's `file` part.
   * @default 7
   */
  aiVersion?: V;
};

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
 * A tool's `needsApproval` holds too: `options.approve` is asked; without it such a call is
 * not run, and its error tells the model a person's approval is needed (a `runTools` inside
 * one SDK tool call cannot pause for later).
 *
 * Not kept: `executionMode: 'sequential'` (S3) and `maxConcurrency` across calls — the SDK
 * starts a step's calls itself, each in its own `runTools`; order and pairing of results
 * are the SDK's.
 *
 * The model sees `toModelOutput`'s value: `{ type: 'text' }` for text-only content, else
 * `{ type: 'content' }` with images as ai 7's `file` parts, or with `{ aiVersion: 6 }` as
 * ai 6's `image-data` parts (which ai 7 logs as deprecated).
 *
 * @throws TypeError naming the tool when its input schema cannot be written as a JSON
 *   Schema object (see `toolJsonSchema`), or when two tools share a name.
 *
 * Typed both ways: the returned set is keyed by the tools' literal names, each entry with
 * the tool's input, progress and details types ({@link AISDKToolSet}), so `generateText`'s
 * tool calls and results narrow on `toolName` as with the SDK's own `tool()`s.
 *
 * @example
 * ```ts
 * const result = await generateText({ model, tools: toAISDKTools([readFile]), prompt, stopWhen: stepCountIs(5) });
 * ```
 */
export function toAISDKTools<const T extends readonly Tool[], V extends AISDKVersion = 7>(tools: T, options: ToAISDKToolsOptions<V> = {}): AISDKToolSet<T[number], V> {
  const { aiVersion, ...runOptions } = options;
  const version = aiSdkVersion('toAISDKTools', aiVersion);
  const set: Record<string, AISDKTool<unknown, unknown, unknown, V>> = {};
  for (const tool of tools) {
    if (Object.hasOwn(set, tool.name)) throw new TypeError(`toAISDKTools: two tools are named "${tool.name}"`);
    const json = toolJsonSchema(tool) as Record<string, unknown>;
    const aiTool: AISDKTool<unknown, unknown, unknown, V> = {
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
          ...runOptions,
          tools: [tool],
          ...(abortSignal !== undefined ? { signal: abortSignal } : {}),
        });
        let step = await run.next();
        for (; step.done !== true; step = await run.next()) {
          const event = step.value;
          if (event.type === 'tool_execution_update') yield { type: 'progress', progress: event.progress };
          else if (event.type === 'tool_result') result = event.message;
        }
        // The tool's needsApproval asked and no `approve` answered: one SDK tool call cannot pause (H3), so it is not run.
        if (step.value.paused !== undefined) throw new Error(notAskedText(tool.name));
        // runTools answers every call (O2): a missing result would be a toolrun bug.
        if (result === undefined) throw new Error(`toolrun gave no result for the call to "${tool.name}"`);
        if (result.isError) throw new Error(contentToText(result.content));
        yield { type: 'result', content: result.content, ...(result.details !== undefined ? { details: result.details } : {}) };
      },
      toModelOutput: ({ output }) => aiSdkModelOutput(output, version),
    };
    if (tool.description !== undefined) aiTool.description = tool.description;
    set[tool.name] = aiTool;
  }
  // One entry per tool, under its name, running that tool: the types AISDKToolSet gives them.
  return set as AISDKToolSet<T[number], V>;
}

function notAskedText(name: string): string {
  return `The call to tool "${name}" needs a person's approval, and no one could be asked here, so it was not run. Tell the user it needs their approval.`;
}

function aiSdkModelOutput<V extends AISDKVersion>(output: AISDKToolOutput, version: V): AISDKModelOutput<V> {
  if (output.type !== 'result') return { type: 'text', value: outputText(output.progress) };
  if (output.content.every((block) => block.type === 'text')) return { type: 'text', value: contentToText(output.content) };
  return {
    type: 'content',
    value: output.content.map(providerBlock).map((block) =>
      block.type === 'text' ? { type: 'text' as const, text: block.text } : aiSdkImagePart(block.data, block.mimeType, version),
    ),
  };
}
