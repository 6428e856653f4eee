/**
 * toolrun tools as the tools of a Model Context Protocol (MCP) server: {@link createMcpServer}
 * builds one `Server` of `@modelcontextprotocol/sdk` (1.x) that answers `tools/list` and
 * `tools/call` by running each call through `runTools`, so a call served over MCP ends with
 * the same model-facing text as the same call run in process.
 *
 * What each part of a call becomes (MCP specification, revision 2025-06-18, "Server
 * features → Tools" and "Base protocol → Utilities"):
 *
 * | toolrun | MCP |
 * | --- | --- |
 * | the tool's `input` (Standard Schema or JSON Schema) | `inputSchema`, converted by `toolJsonSchema` (a JSON Schema is sent as is) |
 * | `perTool[name].output` | `outputSchema`; the result carries `structuredContent` |
 * | each `yield` | one `notifications/progress`, when the request carried a `progressToken` ({@link mcpProgress}) |
 * | `notifications/cancelled` for the request | the call's `AbortSignal` aborts (run abort, contract A2/A3): the tool's `finally` runs; no response is sent (the SDK drops it, as the specification asks) |
 * | an error result of any kind (throw, bad arguments, unknown tool, timeout) | a result with `isError: true` and the same text `runTools` gives the model |
 * | text, image, audio, resource link and embedded resource content | the MCP content block of the same type, field by field (`toMcpContent`) |
 * | `context.client.log(level, data)` | `notifications/message` on the call's stream, unless below the level of `logging/setLevel` ("Server utilities → Logging") |
 * | `context.client.sample(…)` / `context.client.elicit(…)` | `sampling/createMessage` / `elicitation/create` (form) to the client, when it declared the capability; else they reject ("Client features") |
 * | `needsApproval` | an `elicitation/create` question to the client's user, when no `approve` option answers (contract H2) |
 * | `tracing` (e.g. `openTelemetry()` of `toolrun/otel`) | each `tools/call` is a traced batch whose span continues the request's `params._meta.traceparent` / `tracestate` (W3C Trace Context, MCP SEP-414), when well formed |
 *
 * @module
 */
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { Protocol } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  SetLevelRequestSchema,
  type CallToolResult,
  type ServerNotification,
  type Tool as McpToolDefinition,
  type ToolAnnotations,
} from '@modelcontextprotocol/sdk/types.js';
import { CancelScope } from '../../core/streams/abort.ts';
import { runToolsInScope } from '../../core/run/run-tools.ts';
import type { ToolExecutionEndEvent } from '../../core/run/events.ts';
import { checkRunToolsArguments, type RunToolsOptions } from '../../core/run/options.ts';
import { validateArguments } from '../../core/schema/schema.ts';
import { sanitizeTraceContext, type RunTracing } from '../../core/seams/tracing.ts';
import { assertToolShape } from '../../core/schema/define-tool.ts';
import { describeValue } from '../../core/values/guards.ts';
import { type InputSchema, type Tool, type ToolCall } from '../../core/tool/tool.ts';
import { inputJsonSchema, toolJsonSchema } from '../../core/schema/json-schema.ts';
import type { ToolCallerAuth } from '../../core/tool/client.ts';
import { approvalByElicitation, McpCallClient, type McpLogging } from './client-requests.ts';
import { jsonText, toMcpContent } from './content.ts';

/** One MCP progress notification's payload (`progress` strictly increases within one request). */
export interface McpProgressPayload {
  progress: number;
  total?: number;
  message?: string;
}

/** What serveMcp knows about one tool beyond the tool itself, keyed by the tool's name in {@link McpServerOptions.perTool}. */
export interface McpToolOptions {
  /**
   * The tool's output schema: a Standard Schema or a JSON Schema describing an object
   * (MCP requires `type: "object"`). When given, `tools/list` advertises it as
   * `outputSchema`, and every successful result carries `structuredContent`: the value the
   * tool returned (for a tool that returns the explicit `{ content, details }` form: its
   * `details`), checked against this schema. A value that does not match becomes an error
   * result naming the mismatch (the MCP specification requires conforming structured
   * results). A Standard Schema is converted like an input schema (its input side).
   * @default none: no `outputSchema`, no `structuredContent`
   */
  output?: InputSchema;
  /** A human-readable name for MCP clients' user interfaces (`title`). @default none */
  title?: string;
  /** Hints for clients (`readOnlyHint`, `destructiveHint`…); clients must treat them as untrusted. @default none */
  annotations?: ToolAnnotations;
}

/** Options of {@link createMcpServer} (and of `serveMcp`). */
export interface McpServerOptions {
  /** The `serverInfo` sent in the `initialize` answer. @default { name: 'toolrun', version: '0.0.0' } */
  serverInfo?: { name: string; version: string };
  /** Per tool name: output schema, title, annotations. A name that is no tool's is a `TypeError`. @default {} */
  perTool?: { readonly [toolName: string]: McpToolOptions };
  /** Per-call time limit in ms for tools that set none, as `runTools`' `timeoutMs` (contract A4). @default none */
  timeoutMs?: number;
  /** As `runTools`' `abortGraceMs` (contract A3): how long a cancelled or timed-out tool may take to stop. @default 100 */
  abortGraceMs?: number;
  /** As `runTools`' `maxResultChars` (case C20). @default 100_000 */
  maxResultChars?: number;
  /** As `runTools`' `beforeToolCall`, run for every served call (contract P1); a block is an `isError` result. @default none */
  beforeToolCall?: RunToolsOptions['beforeToolCall'];
  /**
   * As `runTools`' `approve`: answers, in the server's process, a served call that asks for a
   * person's approval (contract H2). Without it (or when it answers `undefined`) the client's
   * user is asked through elicitation (`elicitation/create`, MCP 2025-06-18 "Client features →
   * Elicitation") when the client declared that capability: accept runs the call, decline or
   * cancel rejects it (H2). When it did not, the call gets an `isError` result saying the
   * server cannot ask: one MCP request cannot pause.
   * @default none
   */
  approve?: RunToolsOptions['approve'];
  /** As `runTools`' `afterToolCall`, run for every served call (contract P3). @default none */
  afterToolCall?: RunToolsOptions['afterToolCall'];
  /**
   * Turns one yielded value into a progress payload. `count` is 1 for the first yield of the
   * call. A payload whose `progress` does not exceed the previous one sent for the call is
   * not sent (the MCP specification requires increasing values).
   * @default {@link mcpProgress}
   */
  progress?: (value: unknown, count: number, previous: number | undefined) => McpProgressPayload;
  /**
   * As `runTools`' `tracing` (contract T1): each `tools/call` is one traced batch. Its span
   * continues the trace of the request's `params._meta.traceparent` (and `tracestate`) when
   * the client sent a well-formed W3C version-00 `traceparent` (a `tracestate` over 512
   * characters or not printable ASCII is dropped); otherwise it starts a trace of its own.
   * `_meta` comes from the client: nothing else of it is read.
   * @default none
   */
  tracing?: RunTracing;
}

/**
 * The default mapping of a yielded value to an MCP progress payload:
 * - a value shaped like a progress payload (`{ progress: number, total?, message? }`, as the
 *   tools of `mcpTools` yield) whose `progress` exceeds the previous one is passed through,
 *   so an MCP tool served again keeps its progress;
 * - anything else becomes `{ progress: previous + 1, message }` (`progress: count` when
 *   nothing was sent yet), where `message` is the value itself when it is a string, else its
 *   JSON text.
 *
 * @example
 * ```ts
 * mcpProgress('reading a.txt', 1, undefined); // { progress: 1, message: 'reading a.txt' }
 * mcpProgress({ progress: 40, total: 100 }, 2, 1); // { progress: 40, total: 100 }
 * ```
 */
export function mcpProgress(value: unknown, count: number, previous: number | undefined): McpProgressPayload {
  if (typeof value === 'object' && value !== null) {
    const v = value as Record<string, unknown>;
    if (typeof v.progress === 'number' && Number.isFinite(v.progress) && (previous === undefined || v.progress > previous)) {
      const payload: McpProgressPayload = { progress: v.progress };
      if (typeof v.total === 'number' && Number.isFinite(v.total)) payload.total = v.total;
      if (typeof v.message === 'string') payload.message = v.message;
      return payload;
    }
  }
  return { progress: previous === undefined ? count : previous + 1, message: typeof value === 'string' ? value : jsonText(value) };
}

/**
 * Builds an MCP `Server` (of `@modelcontextprotocol/sdk`) whose tools are `tools`. Connect
 * it to any transport of the SDK (`server.connect(transport)`); one `Server` serves one
 * client connection. `serveMcp` does this for stdio and Streamable HTTP.
 *
 * Each `tools/call` runs as a batch of one call through `runTools` with the options above,
 * the request's cancellation signal as the run's signal (contract A2), and the call id
 * `mcp-<request id>`. Calls of one client run concurrently, each under its own time limit;
 * a tool with `executionMode: 'sequential'` (contract S3) waits until every running call has
 * ended and no call starts while it runs, across requests too.
 *
 * @param tools - the tools to serve; the same checks as `runTools` (shape, unique names).
 * @returns the SDK server, not yet connected.
 * @throws TypeError at once when a tool is malformed, two tools share a name, `perTool`
 *   names a tool that does not exist, or a schema cannot be converted to JSON Schema.
 *
 * @example
 * ```ts
 * const server = createMcpServer([add], { perTool: { add: { output: v.object({ sum: v.number() }) } } });
 * await server.connect(new StdioServerTransport());
 * ```
 */
export function createMcpServer(tools: readonly Tool[], options: McpServerOptions = {}): Server {
  const definitions = toolDefinitions(tools, options.perTool ?? {});
  // The run options are checked once, here, not per call (runToolsInScope does not check them).
  checkRunToolsArguments([], { tools, timeoutMs: options.timeoutMs, abortGraceMs: options.abortGraceMs, maxResultChars: options.maxResultChars, beforeToolCall: options.beforeToolCall, afterToolCall: options.afterToolCall, approve: options.approve });
  const server = new Server(options.serverInfo ?? { name: 'toolrun', version: '0.0.0' }, { capabilities: { tools: { listChanged: false }, logging: {} } });
  const calls = new ServedCalls(server, tools, options);
  runningCalls.set(server, calls);
  server.setRequestHandler(SetLevelRequestSchema, (request) => {
    calls.logging.level = request.params.level;
    return {};
  });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: definitions }));
  // Registered on the SDK's Protocol layer, past `Server.setRequestHandler`'s wrapper for
  // `tools/call`: that wrapper parses the request a second time and re-validates the result
  // with zod (a copy of it, base64 checked with atob), a third of the per-call cost next to a
  // plain SDK server. The protocol layer still parses the request once
  // (`CallToolRequestSchema`); the result is built here field by field from checked blocks
  // (`toMcpContent`, `structuredContent` checked against the output schema).
  Protocol.prototype.setRequestHandler.call(server, CallToolRequestSchema, (request: CallToolRequest, extra: CallExtra) => calls.call(request.params, extra));
  return server;
}

type CallToolRequest = { params: { name: string; arguments?: Record<string, unknown> | undefined } };

/** What of the SDK's request handler `extra` a call uses. */
type CallExtra = {
  requestId: string | number;
  signal: AbortSignal;
  _meta?: { progressToken?: string | number | undefined; [key: string]: unknown } | undefined;
  sendNotification: (notification: ServerNotification) => Promise<void>;
  /** What serveMcp's token verifier said of the request (the SDK hands on the HTTP request's `auth`). */
  authInfo?: AuthInfo | undefined;
};

/** One running `tools/call`: its scope, and the promise of its result once the handler started. */
interface RunningCall {
  readonly scope: CancelScope;
  done: Promise<CallToolResult> | undefined;
  /** True once its client cancelled it (`notifications/cancelled`): a call served by {@link serveCall} then gets no response, as the specification asks. */
  cancelled: boolean;
}

/** The request signal of a call served by {@link serveCall}: its host delivers cancellations ({@link hostCancels}), so nothing reads it. */
const UNUSED_SIGNAL = new AbortController().signal;

/**
 * The `tools/call` handling of one server made by {@link createMcpServer}: everything that is
 * the same for every call is made here once (the tool table, the run options, the
 * exclusivity); a call adds its scope, its client and its run.
 *
 * Each call gets one {@link CancelScope}, a child of the server's (an abort of the server's
 * fans out to them without any listener on a long-lived signal).
 *
 * Invariants: a request id is in `#byId` from the handler's start until its result is
 * settled; its scope is a child of `#scope` for exactly that time.
 */
class ServedCalls {
  readonly #server: Server;
  readonly #scope = new CancelScope();
  readonly #byId = new Map<string | number, RunningCall>();
  readonly #tools: readonly Tool[];
  readonly #byName: ReadonlyMap<string, Tool>;
  readonly #options: McpServerOptions;
  /** The run options every call shares; a call copies them and adds its client (and approval, trace context). */
  readonly #base: RunToolsOptions;
  readonly #exclusive = new Exclusivity();
  /** The level the client set with `logging/setLevel`: one Server per session, so this session's calls only. */
  readonly logging: McpLogging = { level: undefined };
  /**
   * False once the host (serveMcp) delivers cancellations itself ({@link hostCancels}): then a
   * call's scope does not listen to the SDK's request signal. An `abort` listener costs a few
   * µs per call in Node, a tenth of a served call.
   */
  listens = true;

  constructor(server: Server, tools: readonly Tool[], options: McpServerOptions) {
    this.#server = server;
    this.#tools = tools;
    this.#byName = new Map(tools.map((tool) => [tool.name, tool]));
    this.#options = options;
    const base: RunToolsOptions = { tools };
    if (options.timeoutMs !== undefined) base.timeoutMs = options.timeoutMs;
    if (options.abortGraceMs !== undefined) base.abortGraceMs = options.abortGraceMs;
    if (options.maxResultChars !== undefined) base.maxResultChars = options.maxResultChars;
    if (options.beforeToolCall !== undefined) base.beforeToolCall = options.beforeToolCall;
    if (options.afterToolCall !== undefined) base.afterToolCall = options.afterToolCall;
    if (options.approve !== undefined) base.approve = options.approve;
    if (options.tracing !== undefined) base.tracing = options.tracing;
    this.#base = base;
  }

  get size(): number {
    return this.#byId.size;
  }

  /** True while the handler of request `requestId` runs. */
  has(requestId: string | number): boolean {
    return this.#byId.has(requestId);
  }

  /** Resolves once the call of `requestId` has settled (its result made, or given up on); at once when none runs. */
  settled(requestId: string | number): Promise<void> {
    const done = this.#byId.get(requestId)?.done;
    return done === undefined ? Promise.resolve() : done.then(
      () => undefined,
      () => undefined,
    );
  }

  /** The handler of `tools/call`. */
  call(params: CallToolRequest['params'], extra: CallExtra): Promise<CallToolResult> {
    const requestId = extra.requestId;
    // One scope per call, a child of the server's: no listener on a server-lifetime signal.
    // It aborts with the request (notifications/cancelled, the transport closing) or the server.
    const scope = new CancelScope();
    scope.enter(this.#scope);
    if (this.listens) scope.listen(extra.signal);
    const entry: RunningCall = { scope, done: undefined, cancelled: false };
    this.#byId.set(requestId, entry);
    const done = this.#run(params, extra, scope, entry);
    entry.done = done;
    return done;
  }

  /** One call, start to end: one async function (each layer of promises costs per call). */
  async #run(params: CallToolRequest['params'], extra: CallExtra, scope: CancelScope, entry: RunningCall): Promise<CallToolResult> {
    const tool = this.#byName.get(params.name);
    const sequential = tool?.executionMode === 'sequential';
    let entered = this.#exclusive.enter(sequential);
    try {
      // Cancelled while waiting for the lock: the SDK sends no response to a cancelled request.
      if (!entered && !(entered = await this.#exclusive.wait(sequential, scope))) return { content: [], isError: true };
      const name = params.name;
      // Own keys only: the name is the client's, and `__proto__` must not reach Object.prototype.
      const perTool = this.#options.perTool;
      const outputSchema = perTool !== undefined && tool !== undefined && Object.hasOwn(perTool, name) ? perTool[name]!.output : undefined;
      const call: ToolCall = { id: `mcp-${String(extra.requestId)}`, name, arguments: params.arguments ?? {} };
      // The client's features (log, sample, elicit), for this request.
      const client = new McpCallClient(this.#server, extra.requestId, extra.sendNotification, this.logging, name, callerAuth(extra.authInfo));
      const runOptions: RunToolsOptions = { ...this.#base, client };
      // The value the tool returned, for structuredContent: taken by a wrapper of this request's own.
      let returned: { value: unknown } | undefined;
      if (outputSchema !== undefined) runOptions.tools = this.#tools.map((t) => (t === tool ? capturing(t, (value) => (returned = { value })) : t));
      // Approval (contract H2): the server's own `approve` first; when it has none or answers
      // `undefined`, the client's user through elicitation, when the client supports it.
      if (client.canElicit) {
        const ask = approvalByElicitation(client);
        const own = this.#options.approve;
        runOptions.approve = own === undefined ? ask : async (request, context) => (await own(request, context)) ?? (await ask(request, context));
      }
      if (this.#base.tracing !== undefined) {
        const traceContext = sanitizeTraceContext(extra._meta);
        if (traceContext !== undefined) runOptions.traceContext = traceContext;
      }
      const token = extra._meta?.progressToken;
      const toPayload = this.#options.progress ?? mcpProgress;
      let count = 0;
      let previous: number | undefined;
      let end: ToolExecutionEndEvent | undefined;
      // The run is a child of the request's scope: no signal, no listener of its own.
      for await (const event of runToolsInScope([call], runOptions, scope)) {
        if (event.type === 'tool_execution_end') end = event;
        else if (event.type === 'tool_execution_update' && token !== undefined) {
          const payload = toPayload(event.progress, ++count, previous);
          if (!(typeof payload.progress === 'number' && (previous === undefined || payload.progress > previous))) continue;
          previous = payload.progress;
          // Awaited, so that every notification is written before the response. A client that
          // went away makes the send fail; the call goes on and its signal aborts on close.
          await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, ...payload } }).catch(() => undefined);
        }
      }
      // runTools answers every call (O1), unless the batch paused for a person's approval (H3):
      // an MCP request cannot wait for one, so the call is answered as not run.
      if (end === undefined) {
        return { content: [{ type: 'text', text: `Tool "${name}" needs a person's approval before it runs, and this MCP server cannot ask for it, so the call was not run.` }], isError: true };
      }
      const { result, isError } = end;
      const content = toMcpContent(result.content);
      if (isError || outputSchema === undefined) return { content, isError };
      const structured = structuredValue(returned, result.details);
      const checked = await validateArguments(outputSchema, structured as Record<string, unknown>, name);
      if (!checked.ok || typeof structured !== 'object' || structured === null || Array.isArray(structured)) {
        const issues = checked.ok ? [`- the value is ${describeValue(structured)}, not an object`] : checked.message.split('\n').filter((line) => line.startsWith('- '));
        return {
          content: [{ type: 'text', text: `Tool "${name}" returned a result that does not match its output schema:\n${issues.join('\n')}\nThis is a problem in the tool, not in your call.` }],
          isError: true,
        };
      }
      return { content, structuredContent: structured as Record<string, unknown>, isError: false };
    } finally {
      if (entered) this.#exclusive.leave();
      scope.close();
      if (this.#byId.get(extra.requestId) === entry) this.#byId.delete(extra.requestId);
    }
  }

  /** Aborts every call, now and later (the server's connection closed). */
  abortAll(reason: unknown): void {
    this.#scope.abort('run', reason);
  }

  /** Aborts one call (its client went away, or cancelled it: `cancelled`); false when no such call runs. */
  abort(requestId: string | number, reason: unknown, cancelled = false): boolean {
    const entry = this.#byId.get(requestId);
    if (entry === undefined) return false;
    if (cancelled) entry.cancelled = true;
    entry.scope.abort('run', reason);
    return true;
  }

  /**
   * Serves one `tools/call` request as the SDK's request entry would for this server (see
   * {@link serveCall}): the handler, then its result as the response on `transport`, unless
   * the client cancelled the call meanwhile.
   */
  serve(request: { id: string | number; params: CallToolRequest['params'] & { _meta?: CallExtra['_meta'] } }, transport: { send(message: Record<string, unknown>): Promise<void> }): void {
    const id = request.id;
    const server = this.#server;
    let entry: RunningCall | undefined;
    const extra: CallExtra = {
      requestId: id,
      signal: UNUSED_SIGNAL,
      _meta: request.params._meta,
      // As the SDK's: nothing more is sent for a request its client cancelled.
      sendNotification: (notification) => (entry?.cancelled === true ? Promise.resolve() : server.notification(notification, { relatedRequestId: id })),
    };
    const done = this.call(request.params, extra);
    entry = this.#byId.get(id);
    done
      .then(
        (result) => (entry?.cancelled === true ? undefined : transport.send({ result, jsonrpc: '2.0', id })),
        (error: { code?: unknown; message?: unknown; data?: unknown }) => {
          if (entry?.cancelled === true) return undefined;
          // The SDK's error response for a handler that threw.
          const code = Number.isSafeInteger(error?.code) ? (error.code as number) : INTERNAL_ERROR;
          return transport.send({ jsonrpc: '2.0', id, error: { code, message: error?.message ?? 'Internal error', ...(error?.data !== undefined && { data: error.data }) } });
        },
      )
      .catch((error: unknown) => server.onerror?.(new Error(`Failed to send response: ${String(error)}`)));
  }

  /** Aborts every call, now and later; resolves with how many were running once each has settled. */
  async stop(reason: unknown): Promise<number> {
    this.abortAll(reason);
    const handlers = [...this.#byId.values()].map((entry) => entry.done);
    await Promise.allSettled(handlers);
    return handlers.length;
  }
}

const runningCalls = new WeakMap<Server, ServedCalls>();

/** JSON-RPC's "Internal error" code: what the SDK answers for a handler that threw without a code of its own. */
const INTERNAL_ERROR = -32603;

/**
 * @internal Aborts every running call of a server made by {@link createMcpServer} and
 * resolves once each has its result (the interrupted text of `runTools`, within
 * `abortGraceMs`, contract A3) and the SDK has been handed it. Closing a server without this
 * drops the responses: the SDK sends none for a request whose handler signal aborted, and
 * its HTTP client then waits for its request timeout. Resolves to how many calls were
 * running; to `undefined`, at once, for a server not made by {@link createMcpServer}.
 */
export async function stopCalls(server: Server): Promise<number | undefined> {
  return await runningCalls.get(server)?.stop(new Error('the MCP server is shutting down'));
}

/**
 * @internal Aborts the running call of `requestId` on a server made by
 * {@link createMcpServer}, as if its client had cancelled it, but so that the SDK still
 * hands its (interrupted) result to the transport. For a client that is gone: its POST's
 * connection closed. With `cancelled` (its client sent `notifications/cancelled`), a call
 * served by {@link serveCall} gets no response at all (the SDK drops the response of the
 * calls it served itself). Returns false when there is no such call or no such server.
 */
export function abortCall(server: Server, requestId: string | number, reason: unknown, cancelled = false): boolean {
  return runningCalls.get(server)?.abort(requestId, reason, cancelled) ?? false;
}

/**
 * @internal Serves one `tools/call` request of a server made by {@link createMcpServer}
 * without the SDK's request machinery (its `AbortController` — 5-6 µs in a tight loop on the
 * loaded bench machine —, its `extra` with four closures, its chain of promises, the zod
 * parse of the request), for a host that delivers cancellations itself
 * ({@link hostCancels}) and has checked that the message is a plain JSON-RPC request. Only
 * a request whose params the SDK's `CallToolRequestSchema` would pass as they are (a string
 * `name`, `arguments` absent or an object without a `__proto__` key, no `task`) is served;
 * for anything else, and for a server not made by {@link createMcpServer} or not connected,
 * it returns false and the caller hands the request to the SDK. What the client sees is what
 * the SDK would send: the same result, the SDK's error response if the handler threw, no
 * response for a request the client cancelled ({@link abortCall} with `cancelled`). One
 * difference, in the client's favour: the handler starts at once, not a promise step later,
 * so a `notifications/cancelled` read right after its request aborts the running call.
 */
export function serveCall(server: Server, request: { id: string | number; params?: unknown }): boolean {
  const calls = runningCalls.get(server);
  const transport = server.transport;
  if (calls === undefined || calls.listens || transport === undefined) return false;
  const params = request.params as { name?: unknown; arguments?: unknown; task?: unknown } | undefined;
  if (typeof params?.name !== 'string' || params.task !== undefined) return false;
  const args = params.arguments;
  if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args) || Object.hasOwn(args, '__proto__'))) return false;
  calls.serve(request as Parameters<ServedCalls['serve']>[0], transport as unknown as Parameters<ServedCalls['serve']>[1]);
  return true;
}

/**
 * @internal For a host that owns the server's transport (serveMcp): from now on the host
 * delivers every cancellation itself — each `notifications/cancelled` to {@link abortCall}
 * before the SDK sees it, the transport's close to {@link abortAllCalls} — so the calls do
 * not listen to the SDK's per-request signals. Call it before `connect`. False for a server
 * not made by {@link createMcpServer}.
 */
export function hostCancels(server: Server): boolean {
  const calls = runningCalls.get(server);
  if (calls === undefined) return false;
  calls.listens = false;
  return true;
}

/** @internal Aborts every call of a server made by {@link createMcpServer}, now and later, without waiting: its connection closed. */
export function abortAllCalls(server: Server, reason: unknown): void {
  runningCalls.get(server)?.abortAll(reason);
}

/** @internal True while a `tools/call` handler of request `requestId` runs on a server made by {@link createMcpServer}. */
export function isCallRunning(server: Server, requestId: string | number): boolean {
  return runningCalls.get(server)?.has(requestId) ?? false;
}

/** @internal How many `tools/call` handlers of a server made by {@link createMcpServer} are running. */
export function runningCallCount(server: Server): number {
  return runningCalls.get(server)?.size ?? 0;
}

/**
 * @internal Resolves once the call of `requestId` on a server made by {@link createMcpServer}
 * has settled: its tool ended or was abandoned after the grace period (contract A3). At once
 * when no such call runs or the server is not one of ours. serveMcp ends a cancelled call's
 * stream only then (docs/adr/0020-mcp-server-bounds.md).
 */
export function callSettled(server: Server, requestId: string | number): Promise<void> {
  return runningCalls.get(server)?.settled(requestId) ?? Promise.resolve();
}

/** The caller's `AuthInfo` as a tool sees it: a copy without the token (never handed to a tool). */
function callerAuth(info: AuthInfo | undefined): ToolCallerAuth | undefined {
  if (info === undefined) return undefined;
  const { clientId, scopes, expiresAt, resource, extra } = info;
  return Object.freeze({ clientId, scopes: Object.freeze([...scopes]), expiresAt, resource, extra });
}

/** The structured value of a result: the explicit form's `details`, else the value returned. */
function structuredValue(returned: { value: unknown } | undefined, details: unknown): unknown {
  const value = returned?.value;
  if (typeof value === 'object' && value !== null && Array.isArray((value as { content?: unknown }).content)) return details;
  // afterToolCall may have replaced the result; then `details` is what is known.
  return returned === undefined ? details : value;
}

/** The same tool, whose `execute` reports the value it returns. Progress, throws and `return()` pass through `yield*`. */
function capturing(tool: Tool, report: (value: unknown) => void): Tool {
  return {
    ...tool,
    async *execute(input, context) {
      const running = tool.execute(input, context);
      const value = isAsyncGenerator(running) ? yield* running : await running;
      report(value);
      return value;
    },
  };
}

function isAsyncGenerator(value: unknown): value is AsyncGenerator<unknown, unknown, undefined> {
  return typeof value === 'object' && value !== null && typeof (value as AsyncGenerator).next === 'function' && Symbol.asyncIterator in value;
}

function toolDefinitions(tools: readonly Tool[], perTool: { readonly [toolName: string]: McpToolOptions }): McpToolDefinition[] {
  if (!Array.isArray(tools)) throw new TypeError(`createMcpServer: tools must be an array of tools, received ${describeValue(tools)}`);
  const names = new Set<string>();
  for (const tool of tools) {
    assertToolShape(tool, 'createMcpServer');
    if (names.has(tool.name)) throw new TypeError(`createMcpServer: two tools are named "${tool.name}"; names must be unique`);
    names.add(tool.name);
  }
  for (const name of Object.keys(perTool)) {
    if (!names.has(name)) throw new TypeError(`createMcpServer: perTool names "${name}", which is no tool's name (tools: ${[...names].join(', ')})`);
  }
  return tools.map((tool) => {
    const extra = perTool[tool.name];
    const definition: McpToolDefinition = { name: tool.name, inputSchema: toolJsonSchema(tool) as McpToolDefinition['inputSchema'] };
    if (tool.description !== undefined) definition.description = tool.description;
    if (extra?.title !== undefined) definition.title = extra.title;
    if (extra?.annotations !== undefined) definition.annotations = extra.annotations;
    if (extra?.output !== undefined) definition.outputSchema = inputJsonSchema(extra.output, tool.name) as NonNullable<McpToolDefinition['outputSchema']>;
    return definition;
  });
}

/**
 * Contract S3 across requests: a `sequential` call runs alone. Waiters are served in arrival
 * order (first in, first out), so a sequential call is not starved by a stream of parallel ones.
 * A call that may start at once does so synchronously ({@link enter}), with no promise and
 * no closure; only a call that must wait gets a promise ({@link wait}).
 *
 * Invariants: `running` counts granted calls; `exclusive` is true only while the one granted
 * call is sequential; `queue` is empty whenever its head could be granted. Every granted call
 * calls {@link leave} exactly once.
 */
class Exclusivity {
  private running = 0;
  private exclusive = false;
  private readonly queue: { sequential: boolean; grant: () => void }[] = [];

  /** Starts the call now and returns true, when it may start without waiting; else false (nothing changed). */
  enter(sequential: boolean): boolean {
    if (this.queue.length > 0 || !this.canStart(sequential)) return false;
    this.start(sequential);
    return true;
  }

  /** Resolves to true once the call was started, to false when `scope` aborted first (then it never starts). */
  wait(sequential: boolean, scope: CancelScope): Promise<boolean> {
    if (scope.cause !== undefined) return Promise.resolve(false);
    // Only a call that must wait reads its scope's signal (which makes its controller).
    const signal = scope.signal;
    return new Promise((resolve) => {
      const waiter = {
        sequential,
        grant: () => {
          signal.removeEventListener('abort', onAbort);
          this.start(sequential);
          resolve(true);
        },
      };
      const onAbort = (): void => {
        const at = this.queue.indexOf(waiter);
        if (at >= 0) this.queue.splice(at, 1);
        this.drain();
        resolve(false);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.queue.push(waiter);
    });
  }

  /** A granted call ended. */
  leave(): void {
    this.running--;
    if (this.running === 0) this.exclusive = false;
    this.drain();
  }

  private canStart(sequential: boolean): boolean {
    return sequential ? this.running === 0 : !this.exclusive;
  }

  private start(sequential: boolean): void {
    this.running++;
    this.exclusive = sequential;
  }

  private drain(): void {
    while (this.queue.length > 0 && this.canStart(this.queue[0]!.sequential)) this.queue.shift()!.grant();
  }
}
