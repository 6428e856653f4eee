/**
 * `callTool`: a tool that calls another tool in one line, as the runtime would call it.
 *
 * ```ts
 * const summarize = defineTool({
 *   name: 'summarize_file',
 *   input: v.object({ path: v.string() }),
 *   async *execute({ path }, ctx) {
 *     const file = yield* callTool(readFile, { path }, ctx);   // validated, progress forwarded
 *     return `first line: ${resultText(file).split('\n')[0]}`;
 *   },
 * });
 * ```
 *
 * @module
 */
import { parseArguments, validateArguments } from '../../core/schema/schema.ts';
import { normalizeToolOutput, providerBlock } from '../../core/values/content.ts';
import type { ContentBlock } from '../../core/tool/content.ts';
import type { Tool, ToolContext } from '../../core/tool/tool.ts';
import { checkGraceMs, checkTimeoutMs, DEFAULT_GRACE_MS, invoke } from './child-call.ts';
import type { NormalizedOutput } from './types.ts';
import { isObjectRecord, isPromiseLike, thrownText } from '../../core/values/guards.ts';

/**
 * Thrown by {@link callTool} when the arguments do not fit the child tool's schema (or
 * its `prepareArguments` throws). The message is the text a model would get for the same
 * call (contract P5): one line per issue with its dotted path, then the received
 * arguments. {@link withRetry} never retries it: the same arguments would fail again.
 *
 * @example
 * ```ts
 * try { yield* callTool(readFile, args, ctx); }
 * catch (error) { if (error instanceof ToolInputError) return `bad arguments for ${error.toolName}: ${error.message}`; throw error; }
 * ```
 */
export class ToolInputError extends Error {
  override readonly name = 'ToolInputError';
  /** @param toolName - the child tool whose input was rejected. */
  constructor(
    message: string,
    readonly toolName: string,
  ) {
    super(message);
  }
}

/** Options of {@link callTool}. */
export interface CallToolOptions {
  /**
   * The id the child's context carries.
   * @default the parent's `toolCallId`
   */
  toolCallId?: string;
  /**
   * The child's time limit in ms: its signal aborts with a `TimeoutError` DOMException
   * (the runtime's text: `Tool "x" timed out after N ms`) and, `graceMs` later at most,
   * `callTool` throws that reason.
   * @default the child tool's own `timeoutMs`, else none
   */
  timeoutMs?: number;
  /**
   * How long, in ms, to wait for a child that ignores its aborted signal (the parent's
   * abort or the timeout) before throwing the signal's reason and letting go of the child
   * (`return()` not awaited), as the runtime's `abortGraceMs` does.
   * @default 100
   */
  graceMs?: number;
}

/**
 * Calls `tool` from inside another tool's `execute`, as the runtime would: the arguments
 * are parsed and validated with the child's schema (after its `prepareArguments`), the
 * child runs with a signal derived from `context.signal`, its progress is yielded to the
 * caller, and its output comes back normalized into a {@link ToolResult}.
 *
 * Use it with `yield*` in an async-generator tool, so the child's progress becomes the
 * parent's: `const result = yield* callTool(child, args, ctx)`. In a plain async tool, drain
 * it (`for await` drops the return value; call `next()` until `done`).
 *
 * Cancellation: the child's signal is that of a `CancelScope` (the core's, as a tool call's)
 * fed by one listener on `context.signal` (removed when the child ends), so aborting the
 * parent aborts the child with the same reason. If the child does not stop within
 * `graceMs`, `callTool` throws the reason and lets go of the child. If the caller stops early (its generator is returned),
 * the child's signal aborts and its generator is returned too (not awaited), so its
 * `finally` runs.
 *
 * @param tool - the child tool.
 * @param args - its arguments, typed as its validated input (a field with a schema default
 *   is typed as required: pass it, or pass `unknown` data cast to the type — it is
 *   validated either way).
 * @param context - the calling tool's context; the child's context has the same `index`,
 *   `toolCallId` (unless `options.toolCallId`), its own `toolName` and a derived `signal`.
 * @returns the child's output, normalized; the child's `terminate` flag is kept in it but
 *   has no effect unless the parent returns it.
 * @throws {@link ToolInputError} when the arguments are invalid (P5 text); the child's own
 *   error when it throws; the `TimeoutError` DOMException when `timeoutMs` ran out; the
 *   parent signal's reason when it was already aborted, or when the child ignored it for
 *   `graceMs`; a `TypeError` (at the first `next()`) for a `timeoutMs` that is not a positive
 *   number or a `graceMs` that is not a non-negative number.
 *
 * @example
 * ```ts
 * async *execute({ paths }, ctx) {
 *   const texts: string[] = [];
 *   for (const path of paths) texts.push(resultText(yield* callTool(readFile, { path }, ctx)));
 *   return texts.join('\n---\n');
 * }
 * ```
 */
export async function* callTool<I, P, O>(
  tool: Tool<I, P, O>,
  args: I,
  context: ToolContext,
  options: CallToolOptions = {},
): AsyncGenerator<P, NormalizedOutput<O>, undefined> {
  checkGraceMs('callTool', options.graceMs);
  checkTimeoutMs('callTool', options.timeoutMs);
  context.signal.throwIfAborted();
  const input = await checkInput(tool, args);
  context.signal.throwIfAborted();
  // The tool's own limit may be a function of its validated input; 0 or Infinity: none.
  const own = tool.timeoutMs;
  let timeoutMs = options.timeoutMs ?? (typeof own === 'function' ? own(input as I) : own);
  if (timeoutMs === 0 || timeoutMs === Infinity) timeoutMs = undefined;
  checkTimeoutMs('callTool', timeoutMs);
  const output = yield* invoke(tool, input, context, {
    timeoutMs,
    graceMs: options.graceMs ?? DEFAULT_GRACE_MS,
    toolCallId: options.toolCallId ?? context.toolCallId,
  });
  return normalizeToolOutput(output) as NormalizedOutput<O>;
}

/**
 * The text of a result's content: text blocks joined with `"\n"`, an image block as
 * `[image <mimeType>]`, an audio or resource block as the text `contentBlockText` writes.
 *
 * @example
 * ```ts
 * resultText({ content: [{ type: 'text', text: 'a' }, { type: 'image', data, mimeType: 'image/png' }] }); // 'a\n[image image/png]'
 * ```
 */
export function resultText(result: { content: readonly ContentBlock[] }): string {
  return result.content.map(providerBlock).map((block) => (block.type === 'text' ? block.text : `[image ${block.mimeType}]`)).join('\n');
}


/**
 * Parses, shims and validates `args` for `tool` as the runtime's prepare stage does (same
 * texts, contract P5); throws {@link ToolInputError}.
 *
 * The runtime's prepare stage (`lib/core/run/stages/prepare.ts`) does the same three steps but
 * answers with a call outcome instead of throwing, and stays synchronous when it can; only
 * `parseArguments`, `validateArguments` and `thrownText` are shared.
 */
async function checkInput<I>(tool: Tool<I, unknown, unknown>, args: unknown): Promise<I> {
  const parsed = parseArguments(args, tool.name);
  if (!parsed.ok) throw new ToolInputError(parsed.message, tool.name);
  let value: unknown = parsed.value;
  if (tool.prepareArguments !== undefined) {
    try {
      value = await tool.prepareArguments(value);
    } catch (error) {
      throw new ToolInputError(`Tool "${tool.name}" could not read its arguments: ${thrownText(error)}`, tool.name);
    }
    if (!isObjectRecord(value)) {
      throw new ToolInputError(`Tool "${tool.name}" could not read its arguments: prepareArguments returned a non-object.`, tool.name);
    }
  }
  let checked = validateArguments(tool.input, value as Record<string, unknown>, tool.name);
  if (isPromiseLike(checked)) {
    try {
      checked = await checked;
    } catch (error) {
      throw new ToolInputError(`Tool "${tool.name}" could not validate its arguments: ${thrownText(error)}`, tool.name);
    }
  }
  if (!checked.ok) throw new ToolInputError(checked.message, tool.name);
  return checked.value as I;
}
