/**
 * The tools of a Model Context Protocol (MCP) server as toolrun tools.
 *
 * {@link mcpTools} lists the tools of a connected MCP client and returns one toolrun
 * {@link Tool} per server tool. What each part of a call becomes, and which part of the MCP
 * specification (revision 2025-06-18, "Server features → Tools" and "Base protocol →
 * Utilities") it comes from:
 *
 * | MCP | toolrun |
 * | --- | --- |
 * | the tool's `inputSchema` | the tool's `input`: arguments are validated by toolrun's JSON Schema validator (contract P5) before the server is asked |
 * | `notifications/progress` (Utilities → Progress; requested with a progress token, which the SDK adds for `onprogress`) | one `yield` per notification: `tool_execution_update.progress` is an {@link McpProgress} |
 * | the call's `AbortSignal` (run abort, timeout, consumer exit) | the SDK's request `signal`: it sends `notifications/cancelled` (Utilities → Cancellation) and rejects, so the call ends `interrupted` / `timed_out` |
 * | `isError: true` (Tools → Error handling) | a throw whose message is the result's text: an error result (`isError: true`) for the model |
 * | `content` blocks | result content, see {@link mcpContent} |
 * | `params._meta.traceparent` / `tracestate` (W3C Trace Context, MCP SEP-414) | the call's `ToolContext.traceContext`, sent when the run is traced (`RunToolsOptions.tracing`) |
 *
 * Over stdio, connect the client with `McpStdioTransport` (from `toolrun/mcp`) rather than
 * the SDK's `StdioClientTransport` when a server may misbehave: the SDK's transport closes the whole
 * connection on one message over 10 MiB, and lets a request answered with `result: null`
 * wait for its timeout; toolrun's fails only that request, at once (`lib/mcp/client/stdio.ts`).
 *
 * The MCP SDK is not a runtime dependency of toolrun: this module calls only methods of the
 * client object it is given (`listTools`, `callTool`), typed structurally by
 * {@link McpClientLike}, which the `Client` class of `@modelcontextprotocol/sdk` (1.x)
 * satisfies. The application creates, connects and closes its client.
 *
 * @example
 * ```ts
 * import { Client } from '@modelcontextprotocol/sdk/client/index.js';
 * import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
 *
 * const client = new Client({ name: 'my-agent', version: '1.0.0' });
 * await client.connect(new StdioClientTransport({ command: 'node', args: ['server.js'] }));
 * try {
 *   const tools = await mcpTools(client, { prefix: 'fs_' });
 *   for await (const event of runTools(calls, { tools })) { … }
 * } finally {
 *   await client.close(); // ends the server process
 * }
 * ```
 *
 * @module
 */
import { omittedBlockText, readContentBlock } from '../../core/values/content.ts';
import { Channel } from '../../core/streams/channel.ts';
import { contentToText } from '../../formats/shared.ts';
import { defineForeignTool } from '../../core/schema/define-tool.ts';
import { describeValue } from '../../core/values/guards.ts';
import type { ContentBlock, JsonSchema } from '../../core/tool/content.ts';
import type { Tool, ToolResult } from '../../core/tool/tool.ts';
import { madeByMcpTools } from '../../core/values/tool-origin.ts';
import { isObjectRecord } from '../../core/values/guards.ts';
import { whenSettled, type Settled } from '../../core/values/settled.ts';

/** One MCP progress notification's payload, as yielded by an MCP tool (`tool_execution_update.progress`). */
export interface McpProgress {
  /** The progress so far; increases with each notification. The unit is the server's (steps, bytes…). */
  progress: number;
  /** The total, when the server knows it. */
  total?: number;
  /** A human-readable message, when the server sends one. */
  message?: string;
}

/** A tool as an MCP server lists it (`tools/list`), reduced to what toolrun reads. */
export interface McpToolInfo {
  readonly name: string;
  readonly title?: string | undefined;
  readonly description?: string | undefined;
  /** The tool's input JSON Schema (MCP requires `type: "object"`). */
  readonly inputSchema: { readonly type: 'object'; readonly [key: string]: unknown };
  /** Hints from the server (`readOnlyHint`, `destructiveHint`…); untrusted, as the MCP specification says. */
  readonly annotations?: { readonly [key: string]: unknown } | undefined;
  readonly [key: string]: unknown;
}

/** What `tools/call` answers, as loosely as servers send it. */
export interface McpCallToolResult {
  readonly content?: unknown;
  readonly isError?: unknown;
  readonly structuredContent?: unknown;
  /** Only from servers of protocol revision 2024-10-07 and older. */
  readonly toolResult?: unknown;
  readonly [key: string]: unknown;
}

/** The request options {@link mcpTools} passes to `callTool` (a subset of the SDK's `RequestOptions`). */
export interface McpRequestOptions {
  /** The call's AbortSignal: aborting it cancels the request (`notifications/cancelled`). */
  signal?: AbortSignal;
  /** Called for each `notifications/progress` of the call; each becomes one `tool_execution_update`. */
  onprogress?: (progress: { progress: number; total?: number | undefined; message?: string | undefined }) => void;
  timeout?: number;
  resetTimeoutOnProgress?: boolean;
}

/**
 * The part of an MCP client that {@link mcpTools} uses. The `Client` of
 * `@modelcontextprotocol/sdk` satisfies it; so can a test double.
 */
export interface McpClientLike {
  /**
   * One page of the server's tools (`tools/list`); {@link mcpTools} asks again with
   * `nextCursor` until a page has none. `options.signal` aborts the request.
   */
  listTools(
    params?: { cursor?: string },
    options?: { signal?: AbortSignal },
  ): Promise<{ readonly tools: readonly McpToolInfo[]; readonly nextCursor?: string | undefined }>;
  /**
   * Calls one tool (`tools/call`) with the model's arguments. `options` carries the run's
   * AbortSignal, the progress callback and the request timeout ({@link McpRequestOptions});
   * a throw becomes the call's error result.
   */
  callTool(
    params: { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> },
    resultSchema?: undefined,
    options?: McpRequestOptions,
  ): Promise<McpCallToolResult>;
}

/** Options of {@link mcpTools}. */
export interface McpToolsOptions {
  /**
   * Put in front of every tool name (`'fs_'` → `fs_read_file`), so that tools of several
   * servers do not collide in one `runTools` list. The server is always called with its own
   * name. @default ''
   */
  prefix?: string;
  /** Keeps only the server tools for which it returns true. @default every tool */
  filter?: (tool: McpToolInfo) => boolean;
  /**
   * The tools' `executionMode` (contract S3), for all or per server tool. MCP annotations
   * are hints from the server; toolrun does not derive exclusivity from them.
   * @default 'parallel'
   */
  executionMode?: 'parallel' | 'sequential' | ((tool: McpToolInfo) => 'parallel' | 'sequential');
  /** The tools' `timeoutMs` (toolrun's per-call limit, contract A4). @default none */
  timeoutMs?: number;
  /**
   * The SDK's own request timeout, in ms, restarted by every progress notification. When it
   * passes, the SDK cancels the request and the call ends as an error result.
   * @default 60_000 (the SDK's default)
   */
  requestTimeoutMs?: number;
  /**
   * How many progress notifications of one call may wait for the consumer; beyond that,
   * only the newest one is kept (see {@link mcpTools}). A positive integer.
   * @default 16
   */
  progressHighWaterMark?: number;
  /** Aborts the listing (`tools/list`). */
  signal?: AbortSignal;
}

/** Default of {@link McpToolsOptions.progressHighWaterMark}. */
const DEFAULT_PROGRESS_HIGH_WATER_MARK = 16;

/** Most pages of `tools/list` followed: far more than a real server sends. */
const MAX_LIST_PAGES = 100;

/**
 * Lists the tools of a connected MCP client (following `nextCursor` pages) and returns one
 * toolrun tool per server tool, in the server's order.
 *
 * Each tool: `name` = `prefix` + the server's name; `description` = the server's
 * description (or its `title`); `input` = the server's `inputSchema`, as is (validated by
 * toolrun's no-eval JSON Schema validator; draft-07 unless its `$schema` names 2020-12,
 * 2019-09 or draft-04; not checked as `defineTool` checks: a broken schema makes each call's
 * error result, not a throw here); `execute` calls `tools/call` with the validated
 * arguments, the call's signal, and a progress callback, and:
 * - yields each progress notification as an {@link McpProgress}, while the call runs (the
 *   SDK (1.x) may drop a notification that arrives right before the response: it runs
 *   notification handlers a microtask after response handlers, and the response removes the
 *   progress handler — so a server's final "100 %" notification is often not seen). The
 *   queue between the client and a slow consumer is bounded: past `progressHighWaterMark`
 *   waiting notifications, only the newest is kept (intermediate ones are dropped; progress
 *   is cumulative, so only their messages are lost);
 * - returns the result's content mapped by {@link mcpContent}, with `details`
 *   `{ structuredContent }` when the server sent structured content;
 * - throws an `Error` whose message is that text when the result has `isError: true` (the
 *   MCP result is the error's `cause`), so the call ends as an error result;
 * - throws an `Error` at once when the server answers without a result object (e.g.
 *   `result: null`, from a client that lets it through), so the call ends as an error result;
 * - throws the SDK's error when the request fails (server gone, protocol error, the SDK's
 *   own timeout), which toolrun turns into an error result (contract P4).
 *
 * @param client - a connected client (the SDK's `Client`, or anything {@link McpClientLike}).
 * @returns the tools, ready for `runTools` (and for `toAnthropicTools` & co.).
 * @throws whatever `listTools` throws (not connected, server error, aborted); a
 *   `TypeError` when the server lists a tool without a name, or two tools that end up with
 *   the same name, or sends a cursor twice or more than 100 pages; the signal's reason when
 *   `options.signal` aborts between pages.
 */
export async function mcpTools(client: McpClientLike, options: McpToolsOptions = {}): Promise<Tool<Record<string, unknown>, McpProgress, ToolResult>[]> {
  const prefix = options.prefix ?? '';
  const hwm = options.progressHighWaterMark;
  if (hwm !== undefined && !(Number.isInteger(hwm) && hwm > 0)) {
    throw new TypeError(`mcpTools: options.progressHighWaterMark must be a positive integer, received ${describeValue(hwm)}`);
  }
  const listed: McpToolInfo[] = [];
  // The server chooses the cursors: a repeated one, or more pages than any real server
  // sends, would keep this loop (and the memory it fills) going for ever.
  const cursors = new Set<string>();
  let cursor: string | undefined;
  do {
    options.signal?.throwIfAborted();
    const page = await client.listTools(cursor === undefined ? undefined : { cursor }, options.signal === undefined ? undefined : { signal: options.signal });
    listed.push(...page.tools);
    cursor = page.nextCursor;
    if (cursor !== undefined && cursor !== '') {
      if (cursors.has(cursor)) throw new TypeError(`mcpTools: the server sent the cursor ${describeValue(cursor)} twice while listing its tools (a listing that never ends)`);
      if (cursors.size >= MAX_LIST_PAGES) throw new TypeError(`mcpTools: the server's tool listing went on past ${MAX_LIST_PAGES} pages (${listed.length} tools so far)`);
      cursors.add(cursor);
    }
  } while (cursor !== undefined && cursor !== '');
  const tools: Tool<Record<string, unknown>, McpProgress, ToolResult>[] = [];
  const seen = new Set<string>();
  for (const info of listed) {
    if (typeof info.name !== 'string' || info.name === '') {
      throw new TypeError(`mcpTools: the server listed a tool without a name: ${describeValue(info)}`);
    }
    if (options.filter !== undefined && !options.filter(info)) continue;
    const name = `${prefix}${info.name}`;
    if (seen.has(name)) throw new TypeError(`mcpTools: the server listed two tools named "${name}"`);
    seen.add(name);
    const tool = mcpTool(client, info, name, options);
    madeByMcpTools.add(tool);
    tools.push(tool);
  }
  return tools;
}

/**
 * Maps the `content` of an MCP tool result to toolrun content blocks:
 *
 * - `text`, `image`, `audio`, `resource_link` and `resource` (embedded) → the toolrun block
 *   of the same type, copied field by field (the provider formats turn the last three into
 *   text, see `contentBlockText`);
 * - a block that is not valid by the rule every path shares (`readContentBlock`: an image
 *   without data or MIME type, a resource without `uri`, a type MCP does not define…) → a
 *   text block `[invalid content block omitted: <why>: <the block, at most 80 characters>]`,
 *   as the provider formats write it.
 *
 * When there is no block at all but `structuredContent` is present, its JSON text is the
 * one text block (a server that answers with structured content only). A result of the
 * old protocol (`toolResult`) becomes one text block: a string as it is, anything else its
 * JSON text. No content at all gives `[]`. Never throws on what the server sent.
 *
 * @example
 * ```ts
 * mcpContent({ content: [{ type: 'text', text: 'ok' }, { type: 'video', url: 'x' }] });
 * // [{ type: 'text', text: 'ok' }, { type: 'text', text: '[MCP content of type "video" omitted: a block of unknown type]' }]
 * ```
 */
export function mcpContent(result: McpCallToolResult): ContentBlock[] {
  const blocks = Array.isArray(result.content) ? (result.content as unknown[]).map(contentBlock) : [];
  if (blocks.length > 0) return blocks;
  if (result.structuredContent !== undefined) return [{ type: 'text', text: jsonText(result.structuredContent) }];
  if (result.toolResult !== undefined) return [{ type: 'text', text: typeof result.toolResult === 'string' ? result.toolResult : jsonText(result.toolResult) }];
  return [];
}

function mcpTool(client: McpClientLike, info: McpToolInfo, name: string, options: McpToolsOptions): Tool<Record<string, unknown>, McpProgress, ToolResult> {
  const serverName = info.name;
  const description = info.description ?? info.title;
  const executionMode = typeof options.executionMode === 'function' ? options.executionMode(info) : options.executionMode;
  const requestTimeoutMs = options.requestTimeoutMs;
  const highWaterMark = options.progressHighWaterMark ?? DEFAULT_PROGRESS_HIGH_WATER_MARK;
  return defineForeignTool({
    name,
    ...(description === undefined ? {} : { description }),
    input: info.inputSchema as JsonSchema,
    ...(executionMode === undefined ? {} : { executionMode }),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    async *execute(args, { signal, traceContext }): AsyncGenerator<McpProgress, ToolResult, undefined> {
      const progress = new ProgressQueue(highWaterMark);
      const request: McpRequestOptions = {
        signal,
        resetTimeoutOnProgress: true,
        onprogress: (p) => {
          const update: McpProgress = { progress: p.progress };
          if (typeof p.total === 'number') update.total = p.total;
          if (typeof p.message === 'string') update.message = p.message;
          progress.offer(update);
        },
      };
      if (requestTimeoutMs !== undefined) request.timeout = requestTimeoutMs;
      // Never rejects: a generator abandoned by toolrun (A3) must leave no unhandled rejection.
      let outcome: Settled<unknown> | undefined;
      // A traced call's context goes along as `_meta.traceparent` / `_meta.tracestate` (the MCP
      // convention, SEP-414), so the server's spans join the caller's trace; the SDK adds its
      // progress token to the same `_meta`.
      const params: { name: string; arguments: Record<string, unknown>; _meta?: Record<string, unknown> } = { name: serverName, arguments: args };
      const traceparent = traceContext?.traceparent;
      if (traceparent !== undefined) {
        const tracestate = traceContext!.tracestate;
        params._meta = tracestate === undefined ? { traceparent } : { traceparent, tracestate };
      }
      whenSettled(client.callTool(params, undefined, request), (settled) => {
        outcome = settled;
        progress.end();
      });
      // One notification per step of the consumer (the merge pulls one step ahead, M3).
      yield* progress.channel;
      const done = outcome!;
      if (!done.ok) throw done.error;
      const result = done.value;
      if (!isObjectRecord(result)) {
        throw new Error(`MCP tool "${serverName}" was answered without a result object (received ${describeValue(result)}); the server broke the protocol.`);
      }
      const answer = result as McpCallToolResult;
      const content = mcpContent(answer);
      if (answer.isError === true) {
        const text = contentToText(content);
        throw new Error(text === '' ? `MCP tool "${serverName}" reported an error without any text` : text, { cause: answer });
      }
      return answer.structuredContent === undefined ? { content } : { content, details: { structuredContent: answer.structuredContent } };
    },
  });
}

/**
 * The progress notifications of one call, on their way to the tool's generator.
 *
 * The MCP client's progress callback cannot be paused, so the queue is bounded instead:
 * up to `highWaterMark` notifications wait in the {@link Channel}; beyond that, only the
 * newest one is held back (each newer one replaces it) and goes in as soon as the consumer
 * has read one. A slow consumer therefore sees the first notifications, then the latest
 * one each time it asks; memory stays bounded whatever the server sends. MCP progress is
 * cumulative (its `progress` value only increases), so a dropped intermediate notification
 * loses its `message` only. When the call settles, a held notification is delivered before
 * the end.
 */
class ProgressQueue {
  readonly channel: Channel<McpProgress>;
  /** The newest notification not in the channel yet; set only while the channel is full. */
  #held: McpProgress | undefined;
  /** True while a `ready()` wait is pending (the channel reached its high-water mark). */
  #full = false;

  constructor(highWaterMark: number) {
    this.channel = new Channel<McpProgress>({ highWaterMark });
  }

  offer(update: McpProgress): void {
    if (this.#full) {
      this.#held = update;
      return;
    }
    if (this.channel.push(update)) return;
    this.#full = true;
    void this.channel.ready().then(() => {
      this.#full = false;
      const held = this.#held;
      this.#held = undefined;
      if (held !== undefined) this.offer(held);
    });
  }

  /** The call settled: the held notification (if any) goes in, then the end. */
  end(): void {
    const held = this.#held;
    this.#held = undefined;
    if (held !== undefined) this.channel.push(held);
    this.channel.close();
  }
}

function contentBlock(value: unknown): ContentBlock {
  const block = readContentBlock(value);
  return typeof block === 'string' ? { type: 'text', text: omittedBlockText(block, value) } : block;
}

function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
