/**
 * LangChain.js tools (`@langchain/core`: `tool()`, `StructuredTool`, `DynamicStructuredTool`)
 * → toolrun tools.
 *
 * Only LangChain's shapes are used (no import of `@langchain/core`): the library never loads it.
 *
 * @module
 */
import type { ContentBlock, InputSchema, Tool, ToolContext, ToolResult } from '../core/tool.ts';
import { describeValue } from '../core/tool.ts';
import { inputJsonSchema } from '../schemas/json-schema.ts';
import { assertObjectSchema, imageBlock, isStandardSchema, outputText } from './shared.ts';

/** The fields of a LangChain tool that {@link fromLangChainTools} reads. `StructuredTool` and `tool()`'s result fit. */
export interface LangChainToolLike {
  readonly name: string;
  readonly description?: string | undefined;
  /** A zod schema (zod 4, or zod 3 with no JSON Schema converter: refused) or a JSON Schema object. */
  readonly schema?: unknown;
  invoke(input: unknown, config?: unknown): Promise<unknown>;
}

/** Options of {@link fromLangChainTools}. */
export interface FromLangChainToolsOptions {
  /** Extra `RunnableConfig` fields for every call (`configurable`, `metadata`, `tags`, `callbacks`); `signal` is always the call's own. @default {} */
  config?: Readonly<Record<string, unknown>>;
}

/**
 * Turns LangChain.js tools into toolrun tools.
 *
 * What maps (see docs/tools.md, "LangChain.js"):
 * - `name`, `description`; `schema` → `input` as JSON Schema (a zod 4 schema is converted
 *   with its own `toJSONSchema`; a JSON Schema object is taken as is), so toolrun validates
 *   the model's arguments (P5) and LangChain then parses the same raw arguments with its own
 *   schema (zod defaults and transforms apply once, in LangChain);
 * - the call runs as `invoke({ type: 'tool_call', id, name, args }, { ...config, signal })`
 *   with the call's signal, so aborting the run aborts the LangChain call (its `invoke`
 *   rejects with an AbortError at once) (A2);
 * - the returned `ToolMessage`: string `content` → text; content blocks → text and base64
 *   images (`image` blocks with `data` / `base64`, `image_url` data URLs), other blocks as
 *   JSON text; `artifact` (`responseFormat: 'content_and_artifact'`) → `details`;
 *   `status: 'error'` → an error result; a throw (including LangChain's
 *   `ToolInputParsingException`) → an error result with its message.
 *
 * Not mapped: `returnDirect` (runAgent decides when to stop; use `terminate` in an
 * `afterToolCall`), callbacks other than those in `config`.
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
export function fromLangChainTools(peers: readonly LangChainToolLike[], options: FromLangChainToolsOptions = {}): Tool[] {
  if (!Array.isArray(peers)) throw new TypeError(`fromLangChainTools: expected an array of tools, received ${describeValue(peers)}`);
  const config = options.config ?? {};
  return (peers as readonly LangChainToolLike[]).map((peer): Tool => {
    if (typeof peer !== 'object' || peer === null) throw new TypeError(`fromLangChainTools: a tool must be an object, received ${describeValue(peer)}`);
    if (typeof peer.name !== 'string' || peer.name === '') throw new TypeError(`fromLangChainTools: tool.name must be a non-empty string, received ${describeValue(peer.name)}`);
    if (typeof peer.invoke !== 'function') throw new TypeError(`fromLangChainTools: tool "${peer.name}".invoke must be a function, received ${describeValue(peer.invoke)}`);
    const input = langChainInputSchema(peer);
    return {
      name: peer.name,
      ...(peer.description !== undefined && peer.description !== '' ? { description: peer.description } : {}),
      input,
      async execute(args: unknown, { toolCallId, signal }: ToolContext): Promise<ToolResult> {
        const message = (await peer.invoke({ type: 'tool_call', id: toolCallId, name: peer.name, args }, { ...config, signal })) as {
          content?: unknown;
          artifact?: unknown;
          status?: unknown;
        };
        const isMessage = typeof message === 'object' && message !== null && 'content' in message;
        const content = langChainContent(isMessage ? message.content : message);
        if (isMessage && message.status === 'error') throw new Error(content.map((b) => (b.type === 'text' ? b.text : '[image]')).join('\n'));
        const result: ToolResult = { content };
        if (isMessage && message.artifact !== undefined) result.details = message.artifact;
        return result;
      },
    };
  });
}

function langChainInputSchema(peer: LangChainToolLike): InputSchema {
  const schema = peer.schema ?? { type: 'object', properties: {} };
  if (typeof schema !== 'object' && typeof schema !== 'function') {
    throw new TypeError(`fromLangChainTools: tool "${peer.name}".schema must be a zod schema or a JSON Schema object, received ${describeValue(schema)}`);
  }
  if (isStandardSchema(schema)) {
    assertObjectSchema('fromLangChainTools', peer.name, schema);
    return inputJsonSchema(schema, peer.name);
  }
  if (typeof (schema as { _def?: unknown; safeParse?: unknown }).safeParse === 'function') {
    throw new TypeError(`fromLangChainTools: tool "${peer.name}" has a zod schema without a JSON Schema converter (zod 3); define it with zod 4 or a JSON Schema object`);
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
