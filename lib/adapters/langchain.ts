/**
 * LangChain.js tools (`@langchain/core`: `tool()`, `StructuredTool`, `DynamicStructuredTool`)
 * → toolrun tools.
 *
 * Only LangChain's shapes are used (no import of `@langchain/core`): the library never loads it.
 *
 * @module
 */
import type { ContentBlock } from '../core/tool/content.ts';
import type { InputSchema, Tool, ToolContext, ToolResult } from '../core/tool/tool.ts';
import { ErrorWithDetails } from '../core/run/stages/outcome.ts';
import { describeValue } from '../core/values/guards.ts';
import { inputJsonSchema } from '../core/schema/json-schema.ts';
import { assertObjectSchema, imageBlock, isStandardSchema, outputText, withConverter, type ForeignFunction } from './shared.ts';

/** The fields of a LangChain tool that {@link fromLangChainTools} reads. `StructuredTool` and `tool()`'s result fit. */
export interface LangChainToolLike {
  readonly name: string;
  readonly description?: string | undefined;
  /**
   * A zod schema or any Standard Schema that converts to JSON Schema (zod 4.2 or later, or one
   * given a converter with `withJsonSchema`: zod 4.0–4.1, zod 3.25's `zod/v4`, classic zod 3),
   * or a JSON Schema object.
   */
  readonly schema?: unknown;
  /**
   * Runs the tool: toolrun calls it as `invoke({ type: 'tool_call', id, name, args }, { ...config, signal })`
   * ({@link fromLangChainTools} says what the value it resolves to becomes).
   */
  invoke(input: unknown, config?: unknown): Promise<unknown>;
}

/** Options of {@link fromLangChainTools}. */
export interface FromLangChainToolsOptions {
  /** Extra `RunnableConfig` fields for every call (`configurable`, `metadata`, `tags`, `callbacks`); `signal` is always the call's own. @default {} */
  config?: Readonly<Record<string, unknown>>;
  /**
   * The JSON Schema converter for a tool whose zod schema has none of its own (zod 4.0–4.1,
   * zod 3.25's `zod/v4`, classic zod 3): LangChain's `toJsonSchema` from
   * `@langchain/core/utils/json_schema` converts them all, with the tools' own zod.
   * @default none: such a tool is a TypeError saying so
   * @example
   * ```ts
   * import { toJsonSchema } from '@langchain/core/utils/json_schema';
   * const tools = fromLangChainTools([searchTool], { toJsonSchema });
   * ```
   */
  toJsonSchema?: ForeignFunction<[schema: unknown], unknown>;
}

/**
 * The toolrun tool {@link fromLangChainTools} makes of the LangChain tool `P`: its literal
 * `name` (LangChain's `tool()` keeps it as `NameT`), the input type of its function (`func`'s
 * first parameter: the schema's parsed type), no progress, and a `ToolResult` whose `details`
 * are the `artifact` (not typed by LangChain's `ToolMessage`: `unknown`). A tool without a
 * typed `func` (a hand-written `StructuredTool`) gets `unknown` input.
 *
 * @example
 * ```ts
 * type Search = FromLangChainTool<typeof searchTool>; // Tool<{ q: string }, never, ToolResult<unknown>, 'search'>
 * ```
 */
export type FromLangChainTool<P> = P extends { readonly name: infer N extends string }
  ? Tool<
      P extends {
        /** The input type, read from the tool's function. */
        readonly func: (input: infer I, ...rest: never[]) => unknown;
      }
        ? I
        : unknown,
      never,
      ToolResult<unknown>,
      N
    >
  : never;

/**
 * Turns LangChain.js tools into toolrun tools.
 *
 * What maps (see docs/guide/tools-from-elsewhere.md, "LangChain.js"):
 * - `name`, `description`; `schema` → `input` as JSON Schema (a zod 4 schema is converted
 *   with its own `toJSONSchema`; a JSON Schema object is taken as is), so toolrun validates
 *   the model's arguments (P5) and LangChain then parses the same raw arguments with its own
 *   schema (zod defaults and transforms apply once, in LangChain);
 * - the call runs as `invoke({ type: 'tool_call', id, name, args }, { ...config, signal })`
 *   with the call's signal, which the tool's function receives as `config.signal` (A2). At
 *   an abort, LangChain's `tool()` rejects `invoke` with the signal's error at once, while
 *   its function runs on: that rejection is not taken as the tool having stopped, so a call
 *   whose tool does not answer otherwise ends `abandoned` after `abortGraceMs` (or
 *   `timed_out`, "it may still be running"), as through the other adapters (A3). An error
 *   of the tool's own after the abort (a `StructuredTool` that stops and says so) is
 *   `interrupted`;
 * - the returned `ToolMessage`: string `content` → text; content blocks → text and base64
 *   images (`image` blocks with `data` / `base64`, `image_url` data URLs), other blocks as
 *   JSON text; `artifact` (`responseFormat: 'content_and_artifact'`) → `details`;
 *   `status: 'error'` → an error result, its `artifact` still `details`; a throw
 *   (including LangChain's `ToolInputParsingException`) → an error result with its message.
 *
 * Not mapped: `returnDirect` (runAgent decides when to stop; use `terminate` in an
 * `afterToolCall`), callbacks other than those in `config`. Approval: LangChain tools have
 * no rule of their own (LangChain asks in its agent middleware); give the adapted tool one,
 * `{ ...tool, needsApproval: true }` (contract H1).
 *
 * @throws TypeError naming the tool when its schema is not an object schema or cannot be
 *   written as JSON Schema (zod 3), or `invoke` is missing.
 *
 * @example
 * ```ts
 * const tools = fromLangChainTools([searchTool, calculator]);
 * for await (const event of runTools(calls, { tools })) console.log(event.type);
 * ```
 */
export function fromLangChainTools<const P extends readonly LangChainToolLike[]>(peers: P, options: FromLangChainToolsOptions = {}): Array<FromLangChainTool<P[number]>> {
  if (!Array.isArray(peers)) throw new TypeError(`fromLangChainTools: expected an array of tools, received ${describeValue(peers)}`);
  const config = options.config ?? {};
  // Each tool keeps its peer's name and runs its peer: the types FromLangChainTool reads.
  return (peers as readonly LangChainToolLike[]).map((peer): Tool => {
    if (typeof peer !== 'object' || peer === null) throw new TypeError(`fromLangChainTools: a tool must be an object, received ${describeValue(peer)}`);
    if (typeof peer.name !== 'string' || peer.name === '') throw new TypeError(`fromLangChainTools: tool.name must be a non-empty string, received ${describeValue(peer.name)}`);
    if (typeof peer.invoke !== 'function') throw new TypeError(`fromLangChainTools: tool "${peer.name}".invoke must be a function, received ${describeValue(peer.invoke)}`);
    const input = langChainInputSchema(peer, options.toJsonSchema);
    return {
      name: peer.name,
      ...(peer.description !== undefined && peer.description !== '' ? { description: peer.description } : {}),
      input,
      async execute(args: unknown, { toolCallId, signal }: ToolContext): Promise<ToolResult> {
        let answer: unknown;
        try {
          answer = await peer.invoke({ type: 'tool_call', id: toolCallId, name: peer.name, args }, { ...config, signal });
        } catch (error) {
          if (isSignalRace(error, signal)) return unconfirmed();
          throw error;
        }
        const message = answer as { content?: unknown; artifact?: unknown; status?: unknown };
        const isMessage = typeof message === 'object' && message !== null && 'content' in message;
        const content = langChainContent(isMessage ? message.content : message);
        const artifact = isMessage ? message.artifact : undefined;
        if (isMessage && message.status === 'error') {
          const text = content.map((b) => (b.type === 'text' ? b.text : '[image]')).join('\n');
          throw artifact === undefined ? new Error(text) : new ErrorWithDetails(text, artifact);
        }
        const result: ToolResult = { content };
        if (artifact !== undefined) result.details = artifact;
        return result;
      },
    };
  }) as Array<FromLangChainTool<P[number]>>;
}

/**
 * True when `error` is what LangChain rejects an `invoke` with once `signal` aborted: its
 * `tool()` races the function against the signal and rejects at the abort with the signal's
 * error (the reason when it is an `Error`, `new Error(reason)` for a string, else
 * `new Error('Aborted')`: `getAbortSignalError` of `@langchain/core` 1.4), while the function
 * runs on — so that rejection says nothing about whether the tool stopped. A `StructuredTool`
 * that stops by throwing its signal's reason (`signal.throwIfAborted()`) looks the same and is
 * read the same way: not a confirmation. An error of the tool's own (any other) is one.
 */
function isSignalRace(error: unknown, signal: AbortSignal): boolean {
  if (!signal.aborted) return false;
  const reason: unknown = signal.reason;
  if (error === reason) return true;
  try {
    if (!(error instanceof Error) || reason instanceof Error) return false;
    return error.message === (typeof reason === 'string' ? reason : 'Aborted');
  } catch {
    return false; // a revoked Proxy or a throwing getter: not LangChain's error
  }
}

/**
 * The answer to an abort LangChain did not confirm (see {@link isSignalRace}): a promise that
 * never settles, as the call of a tool that ignores its signal. toolrun then lets go of the
 * call after its grace (`abortGraceMs`, or `withTimeout`'s `graceMs`) and reports it
 * `abandoned` — or `timed_out`, "it may still be running" — which is the truth (contract A3).
 * Nothing holds the promise after that, so it is collected with the call.
 */
function unconfirmed(): Promise<never> {
  return new Promise<never>(() => {});
}

function langChainInputSchema(peer: LangChainToolLike, toJsonSchema: ((schema: never) => unknown) | undefined): InputSchema {
  const schema = withConverter(peer.schema ?? { type: 'object', properties: {} }, toJsonSchema);
  if (typeof schema !== 'object' && typeof schema !== 'function') {
    throw new TypeError(`fromLangChainTools: tool "${peer.name}".schema must be a zod schema or a JSON Schema object, received ${describeValue(schema)}`);
  }
  if (isStandardSchema(schema)) {
    assertObjectSchema('fromLangChainTools', peer.name, schema);
    return inputJsonSchema(schema, peer.name);
  }
  if (typeof (schema as { _def?: unknown; safeParse?: unknown }).safeParse === 'function') {
    if (toJsonSchema !== undefined) return checkedJson(peer.name, toJsonSchema(schema as never));
    throw new TypeError(
      `fromLangChainTools: tool "${peer.name}" has a classic zod 3 schema, which is no Standard Schema before zod 3.24 and carries no JSON Schema converter: ` +
        'define the tool with withJsonSchema(schema, zodToJsonSchema) (package zod-to-json-schema) as its schema, with zod 4.2 or later, or with a JSON Schema object',
    );
  }
  assertObjectSchema('fromLangChainTools', peer.name, schema as InputSchema);
  return schema as InputSchema;
}

/** A ToolMessage's content → content blocks (see {@link fromLangChainTools}). */
function langChainContent(content: unknown): ContentBlock[] {
  if (!Array.isArray(content)) return [{ type: 'text', text: outputText(content) }];
  return content.map((block: unknown): ContentBlock => {
    if (typeof block === 'string') return { type: 'text', text: block };
    const b = (typeof block === 'object' && block !== null ? block : {}) as Record<string, unknown>;
    if (b.type === 'text' && typeof b.text === 'string') return { type: 'text', text: b.text };
    if (b.type === 'image') {
      const image = imageBlock(b.data ?? b.base64, b.mimeType ?? b.mime_type);
      if (image !== undefined) return image;
    }
    if (b.type === 'image_url') {
      const url = typeof b.image_url === 'string' ? b.image_url : (b.image_url as { url?: unknown } | undefined)?.url;
      const match = typeof url === 'string' ? /^data:(image\/[\w.+-]+);base64,(.*)$/s.exec(url) : null;
      if (match !== null) return { type: 'image', data: match[2]!, mimeType: match[1]! };
    }
    return { type: 'text', text: outputText(block) };
  });
}

/** A converter's answer for a schema that is no Standard Schema (zod before 3.24): a JSON Schema object of type object. */
function checkedJson(name: string, json: unknown): InputSchema {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new TypeError(`fromLangChainTools: options.toJsonSchema gave tool "${name}" ${describeValue(json)}, not a JSON Schema object`);
  }
  const { $schema: _dialect, ...rest } = json as Record<string, unknown>;
  assertObjectSchema('fromLangChainTools', name, rest);
  return rest;
}
