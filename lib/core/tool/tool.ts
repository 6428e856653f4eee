/**
 * Tools, tool calls, tool results, a call's outcome: the types every other module speaks.
 * Types only: the shape check every tool passes (`assertToolShape`) and `defineTool` are in
 * `schema/define-tool.ts`, the rule that turns whatever a tool returns into result content
 * (`normalizeToolOutput`) in `values/content.ts`.
 *
 * @module
 */
import type { StandardSchemaV1 } from '@standard-schema/spec';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { ToolClient } from './client.ts';
import type { ContentBlock, JsonSchema } from './content.ts';

/**
 * A tool call as the model wrote it.
 *
 * `arguments` may be an object (Anthropic `tool_use.input`, Gemini), a raw JSON string
 * (OpenAI Chat and Responses send strings; streamed fragments join into a string), `""`
 * (a no-argument call in an Anthropic stream), or absent. Ids can have any shape, can be
 * empty and can repeat (see `../shared/corpus/SOURCES.md`, "Format observations" 3–4), so
 * toolrun pairs a result with its call by position, never by id (contract O1).
 */
export interface ToolCall {
  id: string;
  name: string;
  arguments?: unknown;
  /**
   * Set by a stream adapter when the message ended (output limit, broken stream) before
   * this call's arguments were complete: the call never runs, and its error result tells
   * the model it was cut off and to send it again, shorter. The text says why
   * (e.g. `"the output limit (max_tokens)"`). Partial JSON is never repaired (case C16).
   */
  incomplete?: string;
  /**
   * The provider's own item this call was read from, when the format parser keeps it
   * (`fromOpenAIResponses` and the Responses stream reader: the `function_call` output item,
   * `{ type, id, call_id, name, arguments, status }`). As the provider sent it: not
   * validated, not copied, not part of a paused batch's state. toolrun never reads it; an
   * adapter hands it to its peer (`fromOpenAIAgentsTools` gives it to `invoke` as
   * `details.toolCall`, in the SDK's shape). Reached from a tool through
   * `ToolContext.toolCall`.
   */
  providerItem?: unknown;
}

/**
 * The explicit form of a tool's result. A tool may return this shape directly; any other
 * return value is normalized into it by {@link normalizeToolOutput}.
 */
export interface ToolResult<Details = unknown> {
  content: ContentBlock[];
  /** Anything the application wants to keep next to the result; not sent to the model by the format adapters. */
  details?: Details;
  /**
   * Data about the call rather than its result (token usage, cost, timings), usually set by
   * `afterToolCall` so that it does not replace the tool's own `details` (P3: no deep merge).
   * Kept on the result message; not sent to the model by the format adapters.
   */
  meta?: Record<string, unknown>;
  /** Ask the agent loop to stop after this batch; honoured only when every result in the batch asks (contract O6). */
  terminate?: boolean;
}

/**
 * One tool result, in the provider-neutral shape the format adapters convert
 * (`toAnthropic`, `toOpenAIChat`, `toOpenAIResponses`).
 */
export interface ToolResultMessage<Details = unknown, Name extends string = string> {
  role: 'tool';
  /** The id of the call this answers, copied from the call, even when empty or repeated. */
  toolCallId: string;
  /** The name the model used: one of the run's tool names, or any other string for a call to an unknown tool. */
  toolName: Name;
  content: ContentBlock[];
  /** The `details` of the tool's result (see {@link ToolDetailsOf}) or of an `afterToolCall` override; absent otherwise. */
  details?: Details;
  /** The result's `meta` (see {@link ToolResult.meta}), copied when present; never sent to the model. */
  meta?: Record<string, unknown>;
  isError: boolean;
}

/** What `execute` receives besides its validated input. */
export interface ToolContext {
  /** The id of the call being executed. */
  toolCallId: string;
  /** The name the model used for this call. */
  toolName: string;
  /** The call's position in the batch (0-based): unique even when ids repeat or are empty. */
  index: number;
  /**
   * The call as the model wrote it (`arguments` unvalidated, `providerItem` when the format
   * parser kept the provider's item). Set by `runTools`; a wrapper that builds a context of
   * its own for an inner tool may leave it out.
   */
  readonly toolCall?: ToolCall | undefined;
  /**
   * Aborted only by the run's signal, this call's own timeout (reason: a `TimeoutError`
   * DOMException) or the consumer leaving the loop early; never by a sibling (contract A1).
   */
  signal: AbortSignal;
  /**
   * The W3C trace context headers (`traceparent`, and `tracestate` when there is one) of
   * this call's span, when the run is traced (`RunToolsOptions.tracing`); `undefined`
   * otherwise. Send them with the tool's own outgoing requests (HTTP headers, MCP `_meta`)
   * so that the remote side's spans join the caller's trace. Computed on the first read.
   *
   * @example
   * ```ts
   * await fetch(url, { signal: context.signal, headers: { ...context.traceContext } });
   * ```
   */
  readonly traceContext?: Readonly<Record<string, string>> | undefined;
  /**
   * The client the call runs for: its log (`client.log(level, data)`), its model
   * (`client.sample`, MCP sampling) and its user (`client.elicit`, MCP elicitation). Served by
   * `createMcpServer`, it is the MCP client; in process, `RunToolsOptions.client`, else one
   * that drops log lines and rejects `sample` and `elicit` (see `ToolClient`).
   */
  readonly client: ToolClient;
  /**
   * A key that is the same on every attempt of this call in one durable run, when the run
   * has a journal (`RunToolsOptions.journal`: the entry's `idempotencyKey`, for example the
   * engine's workflow id and the call's index); `undefined` otherwise. Pass it to the
   * services the tool changes (an `Idempotency-Key` header, a unique column): a call run
   * again after a crash (`interruptedCalls: 'run-again'`, at-least-once) is then applied once
   * by every service that honours it (contract J5).
   *
   * @example
   * ```ts
   * await fetch('https://api.example.com/payments', { method: 'POST', signal: context.signal, headers: { 'Idempotency-Key': context.idempotencyKey ?? crypto.randomUUID() }, body });
   * ```
   */
  readonly idempotencyKey?: string | undefined;
}

/** A tool's input schema: any Standard Schema (valibot, zod, arktype) or a plain JSON Schema object. */
export type InputSchema = StandardSchemaV1 | JsonSchema;

/**
 * The validated input type a schema gives `execute` (and `timeoutMs`, `needsApproval`):
 * - a Standard Schema (valibot, zod, arktype): its output type;
 * - an AI SDK `jsonSchema<T>()` or `zodSchema()` wrapper: its `T` (`Record<string, unknown>`
 *   when `T` was not given);
 * - a JSON Schema whose type is known to the compiler (written `as const`, or inline in
 *   `defineTool`): the type `json-schema-to-ts`'s `FromSchema` gives it — required and
 *   optional properties, `enum` / `const` as literal unions, nested objects, arrays,
 *   `additionalProperties` (an index signature unless it is `false`), `type: [..., 'null']`;
 * - any other JSON Schema (a value typed `JsonSchema`, `JSONSchema7`, or an object whose
 *   `type` is just `string`): `Record<string, unknown>`.
 *
 * Types only: the run-time validation is the schema's own (docs/adr/0010-types-flow-to-events.md); `json-schema-to-ts` is never loaded at run time.
 *
 * @example
 * ```ts
 * const schema = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false } as const;
 * const point = v.object({ n: v.number() });
 * type A = InferInput<typeof schema>; // { path: string }
 * type B = InferInput<typeof point>;  // { n: number }
 * type C = InferInput<JsonSchema>;    // Record<string, unknown>
 * ```
 */
export type InferInput<S> = S extends StandardSchemaV1
  ? StandardSchemaV1.InferOutput<S>
  : S extends { readonly jsonSchema: unknown; readonly _type: infer T }
    ? unknown extends T
      ? Record<string, unknown>
      : T
    : // `FromSchema` only for an object schema whose `type` is the literal 'object' (its literal
      // types survived: `as const`, or written inline), and only when it says more than `unknown`.
      // An index signature (`JsonSchema`, or the schema type's constraint while `S` is still a
      // type parameter) means the literal types are gone: no `FromSchema`, which would recurse.
      S extends { readonly type: 'object' }
      ? string extends keyof S
        ? Record<string, unknown>
        : S extends JSONSchema
          ? FromSchema<S> extends infer T
            ? unknown extends T
              ? Record<string, unknown>
              : T
            : never
          : Record<string, unknown>
      : Record<string, unknown>;

/**
 * What `execute` may be: an async generator (yields progress, returns the result), an
 * async function, or a plain function. A synchronous throw is caught like any other
 * (contract P4).
 */
export type ToolExecute<Input, Progress, Output> = (
  input: Input,
  context: ToolContext,
) => AsyncGenerator<Progress, Output, undefined> | Promise<Output> | Output;

/**
 * A tool. Build one with {@link defineTool} so that `Input` is inferred from the schema
 * and `Name` is the literal name.
 *
 * `Tool` without type arguments is "any tool": every tool is assignable to it, whatever its
 * types (`execute` is declared as a method, so its input is compared bivariantly; a
 * hand-written `Tool` without arguments gets `unknown` input, never `any`).
 *
 * @typeParam Input - the validated input `execute` receives. @default unknown
 * @typeParam Progress - what the tool yields; arrives as `tool_execution_update.progress`.
 * @typeParam Output - what the tool returns, before normalization into content.
 * @typeParam Name - the tool's name as a literal type (`'read_file'`); `runTools` events
 *   are discriminated by it. @default string
 */
export interface Tool<Input = unknown, Progress = unknown, Output = unknown, Name extends string = string> {
  /** The name the model calls. Unique within one `runTools` tool list. */
  readonly name: Name;
  /** Sent to the model with the tool definition. */
  readonly description?: string;
  /** Validates the (parsed) arguments before `execute` runs; failures become error results (contract P5). */
  readonly input: InputSchema;
  /**
   * `'sequential'` makes the tool exclusive: it starts only after every earlier call has
   * ended, and no later call starts until it has ended (contract S3).
   * @default 'parallel'
   */
  readonly executionMode?: 'parallel' | 'sequential';
  /**
   * Per-call time limit in ms; overrides the run's `timeoutMs` (contract A4). A function
   * gets the call's validated input (after `beforeToolCall`) and returns the limit for that
   * call: called once per executed call, just before the tool starts; `0` or `Infinity`
   * mean no limit; a throw, or anything but a non-negative number, makes the call's error
   * result (the tool does not run).
   * @default none
   * @example
   * ```ts
   * // A shell command may say how long it needs; 5 s of margin on top.
   * timeoutMs: ({ timeoutSeconds }) => (timeoutSeconds ?? 60) * 1000 + 5_000,
   * ```
   */
  // A method's type (parameters compared bivariantly), as `execute`: keeps every tool assignable to `Tool`.
  readonly timeoutMs?: number | { limit(input: Input): number }['limit'];
  /**
   * A shim for old argument shapes, run on the parsed arguments before validation
   * (seed 000, `prepareArguments`). Returns the new arguments, or a promise of them (the
   * wait ends when the run stops); a throw or a rejection becomes this call's error result.
   */
  readonly prepareArguments?: (args: unknown) => unknown;
  /**
   * Whether a call needs a person's approval before it runs (contract H1): `true` for
   * every call, or a function of the validated input (sync or async). Evaluated in the
   * prepare stage after validation and before `beforeToolCall`. A call that needs approval
   * is asked about with the run's `approve` option; without one (or when it answers
   * `undefined`) the call is deferred and the batch ends paused. A throw, or an answer that
   * is not a boolean, becomes that call's error result (P4).
   * @default false
   * @example
   * ```ts
   * needsApproval: ({ path }) => !path.startsWith('/tmp/'),
   * ```
   */
  // A method's type (parameters compared bivariantly), as `execute`: keeps every tool assignable to `Tool`.
  readonly needsApproval?: boolean | { check(input: Input, context: NeedsApprovalContext): boolean | Promise<boolean> }['check'];
  /** Runs the call: see {@link ToolExecute}. */
  execute(input: Input, context: ToolContext): AsyncGenerator<Progress, Output, undefined> | Promise<Output> | Output;
}

/** What a tool's `needsApproval` function receives besides the validated input. */
export interface NeedsApprovalContext {
  /** The call as the model wrote it. */
  toolCall: ToolCall;
  /** Position of the call in the batch (0-based). */
  index: number;
}

/** The fields `defineTool` takes: a {@link Tool} whose `Input` comes from `input`. */
export interface ToolDefinition<S extends InputSchema, Progress, Output, Name extends string = string> {
  name: Name;
  description?: string;
  input: S;
  executionMode?: 'parallel' | 'sequential';
  /** A number of ms, or a function of the validated input (see {@link Tool.timeoutMs}). */
  timeoutMs?: number | ((input: InferInput<S>) => number);
  /** A shim for old argument shapes, run before validation (see {@link Tool.prepareArguments}). */
  prepareArguments?: (args: unknown) => unknown;
  /** `true`, or a function of the validated input (see {@link Tool.needsApproval}). @default false */
  needsApproval?: boolean | ((input: InferInput<S>, context: NeedsApprovalContext) => boolean | Promise<boolean>);
  execute: ToolExecute<InferInput<S>, Progress, Output>;
}

/**
 * The `details` type a tool's results carry, from its `Output` (each member of a union on its
 * own): `D` for a tool that returns `ToolResult<D>` (the runtime keeps `details` of a
 * returned object with a `content` array); `never` (no details) for a string or `undefined`,
 * whose text is the result's content; the value's own type for any other plain return (an
 * object, an array, a number…: the runtime sends its JSON text and keeps the value as
 * `details`); `unknown` when `Output` is `unknown`.
 *
 * @example
 * ```ts
 * type A = ToolDetailsOf<{ temperature: number }>; // { temperature: number }
 * type B = ToolDetailsOf<ToolResult<{ bytes: number }>>; // { bytes: number }
 * type C = ToolDetailsOf<string>; // never
 * ```
 */
export type ToolDetailsOf<Output> = unknown extends Output
  ? unknown
  : Output extends ToolResult<infer D>
    ? D
    : Output extends string | undefined | void
      ? never
      : Output;

/**
 * How a call ended:
 * - `ok`: the tool returned.
 * - `error`: the tool threw or returned a result that cannot be read, or `afterToolCall`
 *   threw or made the result an error.
 * - `rejected`: the call never ran: unknown tool, arguments cut off or not valid,
 *   `prepareArguments`, an async schema, `needsApproval`, `approve`, `beforeToolCall` or the
 *   tool's `timeoutMs` function threw or answered wrongly, `beforeToolCall` blocked it, or a
 *   person denied it (contract H2).
 * - `not_run`: the run was aborted before the call started (contract A2).
 * - `interrupted`: the run was aborted while the call was running and the tool stopped.
 * - `abandoned`: the run was aborted, the tool did not stop within `abortGraceMs`; its
 *   outcome is unknown (contract A3).
 * - `timed_out`: the call hit its time limit (contract A4).
 */
export type CallOutcome = 'ok' | 'error' | 'rejected' | 'not_run' | 'interrupted' | 'abandoned' | 'timed_out';
