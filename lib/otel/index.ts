/**
 * `toolrun/otel`: OpenTelemetry tracing for `runTools`, following the GenAI semantic
 * conventions for tool execution.
 *
 * {@link openTelemetry} returns a `RunTracing` for `runTools`' `tracing` option (and
 * `runAgent`'s, `createMcpServer`'s, `serveMcp`'s). Each batch gets a span, and each call a
 * child span named `execute_tool {tool name}` that is the active context whenever the
 * call's own code runs — `beforeToolCall`, `execute`, every step of its generator between
 * two yields, `afterToolCall` — so the spans the tool makes (an HTTP client's, a
 * database's) nest under it.
 *
 * `@opentelemetry/api` is an optional peer dependency: only this entry imports it, and
 * `import 'toolrun'` never loads it. Spans go wherever the application's tracer provider
 * sends them; for the call span to be active across `await`s, register a context manager
 * (`AsyncLocalStorageContextManager` from `@opentelemetry/context-async-hooks`, which
 * `NodeSDK` and `NodeTracerProvider.register()` install).
 *
 * @module
 */
import {
  context,
  createTraceState,
  isSpanContextValid,
  ProxyTracerProvider,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type SpanContext,
  type SpanOptions,
  type Tracer,
} from '@opentelemetry/api';
import type { Tool, ToolResult } from '../core/tool/tool.ts';
import {
  sanitizeTraceContext,
  type BatchTrace,
  type BatchTraceEnd,
  type BatchTraceStart,
  type CallTrace,
  type CallTraceOutcome,
  type CallTraceStart,
  type RunTracing,
  type TraceHeaders,
} from '../core/seams/tracing.ts';
import { thrownText } from '../core/values/guards.ts';
import { isMcpTool } from '../core/values/tool-origin.ts';

export type { BatchTrace, BatchTraceEnd, BatchTraceStart, CallTrace, CallTraceOutcome, CallTraceStart, RunTracing, TraceHeaders } from '../core/seams/tracing.ts';
export { sanitizeTraceContext } from '../core/seams/tracing.ts';

/** `gen_ai.tool.type` values of the GenAI semantic conventions. */
export type GenAiToolType = 'function' | 'extension' | 'datastore';

/** Options of {@link openTelemetry}. */
export interface OpenTelemetryOptions {
  /**
   * The tracer spans are made with.
   * @default `trace.getTracer('toolrun')`, looked up at each batch (a provider registered later is used).
   *   While no tracer provider is registered (`@opentelemetry/api` alone, no SDK) and the
   *   batch has no parent span (no `traceContext`, no active span), a batch is not traced at
   *   all: every span would be a non-recording one with an invalid context, so the run skips
   *   the tracing path and costs what an untraced run costs.
   */
  tracer?: Tracer;
  /**
   * Most progress values recorded as span events per call (`toolrun.tool.progress`); later
   * ones are counted (`toolrun.tool.progress.dropped`), not recorded. `0` records none.
   * @default 32
   */
  maxProgressEvents?: number;
  /**
   * The text recorded for one progress value (attribute `toolrun.tool.progress.value` of
   * its event), or `undefined` to record the event without it. Progress may carry what the
   * tool reads (file lines, command output): return `undefined` to keep it out of traces.
   * @default a string as is, anything else as JSON text; cut to 256 characters
   */
  progressValue?: (value: unknown) => string | undefined;
  /**
   * `gen_ai.tool.type` of a call to a known tool, or `undefined` to leave the attribute out.
   * Not called for a call naming no tool: its span has no `gen_ai.tool.type` (there is no
   * tool to have a type) and, rejected, `error.type` `tool_not_found`.
   * @default `'extension'` for the tools made by `mcpTools` (the agent calls an external
   *   server), `'function'` for every other tool
   */
  toolType?: (tool: Tool, toolName: string) => GenAiToolType | undefined;
  /**
   * Whether an `exception` span event also records the thrown value's `stack` as
   * `exception.stacktrace` (cut to 4,000 characters). Off by default: a stack names the
   * host's file paths (install folder, user name) and the code's layout, and traces often
   * leave the host (a vendor's backend); `exception.type` and `exception.message` say what
   * failed.
   * @default false
   */
  exceptionStackTrace?: boolean;
  /**
   * How a resumed batch's span (`runTools` with `resume`) joins the trace of the batch that
   * paused, whose span context the paused state carries:
   *
   * - `'link'`: a span link to the paused batch span; the new span's parent is the active
   *   span (the request that brought the approval) or `traceContext`. A resume may come
   *   hours later in another process: the paused trace is complete by then, and the resume
   *   belongs to the request that made it.
   * - `'continue'`: a child of the paused batch span, in its trace (unless `traceContext` is
   *   given: it stays the parent, and the paused span is linked), so a trace view shows the
   *   pause and the resume as one tree; the trace then lasts as long as the pause did.
   *
   * Either way the resumed batch span has `toolrun.batch.resumed` `true`.
   * @default 'link'
   */
  resumeTrace?: 'link' | 'continue';
}

/** Default of {@link OpenTelemetryOptions.maxProgressEvents}. */
const DEFAULT_MAX_PROGRESS_EVENTS = 32;
/** Longest text recorded from a value the model or a tool chose (names, ids, progress, error texts). */
const MAX_TEXT = 256;
/** Longest `exception.message` recorded (a thrown value's message). */
const MAX_EXCEPTION_MESSAGE = 1_000;
/** Longest `exception.stacktrace` recorded, with `exceptionStackTrace`. */
const MAX_STACK = 4_000;
/** `error.type` of an error that no class names (GenAI conventions' fallback value). */
const OTHER_ERROR = '_OTHER';
/** `error.type` of a call rejected because it names no tool: toolrun's own value. */
const TOOL_NOT_FOUND = 'tool_not_found';
/** The batch span's name: one `runTools` batch (the GenAI conventions name no such operation). */
const BATCH_SPAN_NAME = 'execute_tools';

/**
 * A `RunTracing` that records OpenTelemetry spans:
 *
 * - one span per batch, `execute_tools` (kind `INTERNAL`), a child of the active context,
 *   or of the remote span in `RunToolsOptions.traceContext`; attributes
 *   `toolrun.batch.mode`, and at its end `toolrun.batch.calls`, `toolrun.batch.outcome`
 *   (`completed`, `paused`, `consumer_exit`, `input_error`, `failed`), `toolrun.batch.aborted`,
 *   `toolrun.batch.terminate`; when the calls' stream threw (`input_error`) or the run failed
 *   (`failed`), `error.type`, an `exception` event and status `ERROR`, as for a call;
 * - one child span per call, `execute_tool {gen_ai.tool.name}` (kind `INTERNAL`), from its
 *   `tool_execution_start` to its `tool_execution_end`, with `gen_ai.operation.name`
 *   `execute_tool`, `gen_ai.tool.name`, `gen_ai.tool.call.id` (when not empty),
 *   `gen_ai.tool.description` (when the tool has one), `gen_ai.tool.type` (not for a call
 *   naming no tool), `toolrun.tool.call.index`, and at its end `toolrun.tool.outcome` (`ok`,
 *   `error`, `rejected`, `timed_out`, `interrupted`, `not_run`, `abandoned`, or
 *   `pending_approval` for a call still waiting for approval when the batch paused);
 * - on an error result, status `ERROR` and `error.type` (GenAI semantic conventions, "Recording
 *   errors"): the class of the value thrown — its `name` when it is an `Error` named other
 *   than `Error` (`TypeError`, `RangeError`, a DOMException's `TimeoutError`, a subclass that
 *   sets `name`), else its constructor's name (a subclass that does not) — or
 *   `tool_not_found` for a call rejected because it names no tool, or `_OTHER` for any other
 *   error (a thrown string or plain object, arguments refused, a tool that returned an error,
 *   a call not run or abandoned: `toolrun.tool.outcome` tells them apart). When a value was
 *   thrown, an `exception` span event carries `exception.type` (its class, when it has one)
 *   and `exception.message` (cut to 1,000 characters) — no `exception.stacktrace` unless
 *   `exceptionStackTrace` — and the status description is that message (cut to 256);
 *   otherwise the description is the first line of the result's text;
 * - progress values as span events `toolrun.tool.progress`, at most `maxProgressEvents`
 *   per call, with `toolrun.tool.progress.count` and `toolrun.tool.progress.dropped` on
 *   the call span;
 * - across a pause: a paused batch's state carries its span's W3C trace context, and the
 *   resumed batch's span links to it or continues it (`resumeTrace`).
 *
 * Texts that come from the model or a tool (tool names, call ids, descriptions, progress,
 * error texts) are cut to 256 characters; `exception.message` to 1,000. Arguments and
 * results are not recorded.
 *
 * `ToolContext.traceContext` of a call is `{ traceparent, tracestate? }` (W3C Trace
 * Context) for its span, whatever propagator is registered: these are the keys MCP's
 * `_meta` uses, and what `mcpTools` sends.
 *
 * @throws TypeError at once when `maxProgressEvents` is not a non-negative integer, or
 *   `resumeTrace` is neither `'link'` nor `'continue'`.
 *
 * @example
 * ```ts
 * import { openTelemetry } from 'toolrun/otel';
 *
 * const tracing = openTelemetry({ maxProgressEvents: 8 });
 * for await (const event of runTools(calls, { tools, tracing })) { … }
 * ```
 */
export function openTelemetry(options: OpenTelemetryOptions = {}): RunTracing {
  const max = options.maxProgressEvents ?? DEFAULT_MAX_PROGRESS_EVENTS;
  if (!(Number.isInteger(max) && max >= 0)) {
    throw new TypeError(`openTelemetry: options.maxProgressEvents must be a non-negative integer, received ${String(max)}`);
  }
  const resumeTrace = options.resumeTrace ?? 'link';
  if (resumeTrace !== 'link' && resumeTrace !== 'continue') {
    throw new TypeError(`openTelemetry: options.resumeTrace must be 'link' or 'continue', received ${String(resumeTrace)}`);
  }
  const settings: Settings = {
    tracer: options.tracer,
    maxProgressEvents: max,
    progressValue: options.progressValue ?? progressText,
    toolType: options.toolType ?? defaultToolType,
    exceptionStackTrace: options.exceptionStackTrace === true,
    resumeTrace,
  };
  return {
    startBatch: (batch) => (settings.tracer === undefined && nothingToTrace(settings, batch) ? undefined : new OtelBatch(settings, batch)),
  };
}

/** The API's no-op tracer provider: what the global provider hands out while no SDK is registered. */
const NOOP_TRACER_PROVIDER = new ProxyTracerProvider().getDelegate();

/**
 * True when a batch's spans would all be non-recording with an invalid context: no tracer
 * provider is registered (the global one still delegates to the API's no-op provider), the
 * batch continues no remote trace (`traceContext`, or with `resumeTrace: 'continue'` the
 * paused batch's), and no span is active. Its calls' `traceContext` would be `undefined`
 * either way. Checked at each batch, so a provider registered later is used.
 */
function nothingToTrace(settings: Settings, batch: BatchTraceStart): boolean {
  const provider = trace.getTracerProvider();
  if (!(provider instanceof ProxyTracerProvider) || provider.getDelegate() !== NOOP_TRACER_PROVIDER) return false;
  if (remoteSpanContext(batch.traceContext) !== undefined) return false;
  if (settings.resumeTrace === 'continue' && remoteSpanContext(batch.resumedFrom) !== undefined) return false;
  const active = trace.getSpanContext(context.active());
  return active === undefined || !isSpanContextValid(active);
}

interface Settings {
  readonly tracer: Tracer | undefined;
  readonly maxProgressEvents: number;
  readonly progressValue: (value: unknown) => string | undefined;
  readonly toolType: (tool: Tool, toolName: string) => GenAiToolType | undefined;
  readonly exceptionStackTrace: boolean;
  readonly resumeTrace: 'link' | 'continue';
}

class OtelBatch implements BatchTrace {
  readonly #settings: Settings;
  readonly #tracer: Tracer;
  readonly #span: Span;
  readonly #context: Context;

  constructor(settings: Settings, batch: BatchTraceStart) {
    this.#settings = settings;
    this.#tracer = settings.tracer ?? trace.getTracer('toolrun');
    const active = context.active();
    const remote = remoteSpanContext(batch.traceContext);
    const paused = remoteSpanContext(batch.resumedFrom);
    // The paused batch's span is the parent only with 'continue' and no explicit traceContext; else a link.
    const continued = paused !== undefined && remote === undefined && settings.resumeTrace === 'continue';
    const parentSpan = remote ?? (continued ? paused : undefined);
    const parent = parentSpan === undefined ? active : trace.setSpanContext(active, parentSpan);
    const attributes: Attributes = { 'toolrun.batch.mode': batch.mode };
    const spanOptions: SpanOptions = { kind: SpanKind.INTERNAL, attributes };
    if (paused !== undefined) {
      attributes['toolrun.batch.resumed'] = true;
      if (!continued) spanOptions.links = [{ context: paused, attributes: { 'toolrun.link.type': 'resumed_from' } }];
    }
    this.#span = this.#tracer.startSpan(BATCH_SPAN_NAME, spanOptions, parent);
    this.#context = trace.setSpan(parent, this.#span);
  }

  startCall(call: CallTraceStart): CallTrace {
    const name = bounded(call.toolName);
    const attributes: Attributes = {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': name,
      'toolrun.tool.call.index': call.index,
    };
    const tool = call.tool;
    if (tool !== undefined) {
      const type = this.#settings.toolType(tool, call.toolName);
      if (type !== undefined) attributes['gen_ai.tool.type'] = type;
    }
    if (call.toolCallId !== '') attributes['gen_ai.tool.call.id'] = bounded(call.toolCallId);
    const description = tool?.description;
    if (typeof description === 'string' && description !== '') attributes['gen_ai.tool.description'] = bounded(description);
    const span = this.#tracer.startSpan(`execute_tool ${name}`, { kind: SpanKind.INTERNAL, attributes }, this.#context);
    return new OtelCall(this.#settings, span, trace.setSpan(this.#context, span), tool === undefined);
  }

  end(end: BatchTraceEnd): void {
    const span = this.#span;
    span.setAttributes({
      'toolrun.batch.calls': end.calls,
      'toolrun.batch.outcome': end.outcome,
      'toolrun.batch.aborted': end.aborted,
      'toolrun.batch.terminate': end.terminate,
    });
    if (end.outcome === 'input_error' || end.outcome === 'failed') {
      const exception = recordException(span, end.error, this.#settings.exceptionStackTrace);
      span.setAttribute('error.type', exception.type ?? OTHER_ERROR);
      span.setStatus({ code: SpanStatusCode.ERROR, message: bounded(exception.message) });
    }
    span.end();
  }

  headers(): TraceHeaders | undefined {
    return spanHeaders(this.#span.spanContext());
  }
}

class OtelCall implements CallTrace {
  readonly #settings: Settings;
  readonly #span: Span;
  readonly #context: Context;
  /** The call names no tool. */
  readonly #unknownTool: boolean;
  #progress = 0;

  constructor(settings: Settings, span: Span, spanContext: Context, unknownTool: boolean) {
    this.#settings = settings;
    this.#span = span;
    this.#context = spanContext;
    this.#unknownTool = unknownTool;
  }

  run<A, R>(fn: (arg: A) => R, arg: A): R {
    return context.with(this.#context, fn, undefined, arg);
  }

  progress(value: unknown): void {
    const count = ++this.#progress;
    if (count > this.#settings.maxProgressEvents) return;
    const text = this.#settings.progressValue(value);
    const attributes: Attributes = { 'toolrun.tool.progress.index': count - 1 };
    if (text !== undefined) attributes['toolrun.tool.progress.value'] = bounded(text);
    this.#span.addEvent('toolrun.tool.progress', attributes);
  }

  end(outcome: CallTraceOutcome, isError: boolean, result: ToolResult | undefined, thrown?: unknown): void {
    const span = this.#span;
    const count = this.#progress;
    span.setAttribute('toolrun.tool.outcome', outcome);
    if (count > 0) {
      span.setAttribute('toolrun.tool.progress.count', count);
      const dropped = count - this.#settings.maxProgressEvents;
      if (dropped > 0) span.setAttribute('toolrun.tool.progress.dropped', dropped);
    }
    if (isError) {
      if (thrown !== undefined) {
        const exception = recordException(span, thrown, this.#settings.exceptionStackTrace);
        span.setAttribute('error.type', exception.type ?? OTHER_ERROR);
        span.setStatus({ code: SpanStatusCode.ERROR, message: bounded(exception.message) });
      } else {
        span.setAttribute('error.type', this.#unknownTool && outcome === 'rejected' ? TOOL_NOT_FOUND : OTHER_ERROR);
        span.setStatus({ code: SpanStatusCode.ERROR, message: result === undefined ? 'the consumer stopped the run before the call ended' : bounded(firstText(result)) });
      }
    }
    span.end();
  }

  headers(): TraceHeaders | undefined {
    return spanHeaders(this.#span.spanContext());
  }
}

/** `traceparent` (and `tracestate`) of a span context; `undefined` for an invalid one (a non-recording span of no trace). */
function spanHeaders(spanContext: SpanContext): TraceHeaders | undefined {
  if (!isSpanContextValid(spanContext)) return undefined;
  const flags = (spanContext.traceFlags & 0xff).toString(16).padStart(2, '0');
  const traceparent = `00-${spanContext.traceId}-${spanContext.spanId}-${flags}`;
  const tracestate = spanContext.traceState?.serialize();
  return tracestate === undefined || tracestate === '' ? { traceparent } : { traceparent, tracestate };
}

/** What {@link recordException} recorded: the thrown value's class (`undefined` when it has none) and message. */
interface RecordedException {
  readonly type: string | undefined;
  readonly message: string;
}

/**
 * Adds the `exception` event of the span conventions for `thrown`: `exception.type` when it
 * has a class, `exception.message` cut to {@link MAX_EXCEPTION_MESSAGE}, and with `withStack`
 * its `stack` cut to {@link MAX_STACK}. Not `span.recordException`: it records the stack
 * always and the message uncut, and reads `code` (an errno text) as the type.
 */
function recordException(span: Span, thrown: unknown, withStack: boolean): RecordedException {
  const type = thrownClass(thrown);
  const message = thrownMessage(thrown);
  const attributes: Attributes = { 'exception.message': bounded(message, MAX_EXCEPTION_MESSAGE) };
  if (type !== undefined) attributes['exception.type'] = bounded(type);
  if (withStack) {
    const stack = readStack(thrown);
    if (stack !== undefined) attributes['exception.stacktrace'] = bounded(stack, MAX_STACK);
  }
  span.addEvent('exception', attributes);
  return { type: type === undefined ? undefined : bounded(type), message };
}

/**
 * The class of a thrown value, as `error.type` and `exception.type` name it: an `Error`'s
 * `name` when it is not the inherited `Error` (`TypeError`, `RangeError`, a DOMException's
 * `AbortError`, a subclass that sets its name), else its constructor's name (a subclass that
 * does not set one, a thrown instance of any class); `undefined` for a primitive, a plain
 * object or an object with no prototype. Never throws (a revoked Proxy has no class).
 */
function thrownClass(thrown: unknown): string | undefined {
  if (typeof thrown !== 'object' || thrown === null) return undefined;
  try {
    if (thrown instanceof Error) {
      const name: unknown = thrown.name;
      if (typeof name === 'string' && name !== '' && name !== 'Error') return name;
    }
    const prototype: unknown = Object.getPrototypeOf(thrown);
    if (prototype === null || prototype === Object.prototype) return undefined;
    const constructor: unknown = (prototype as { constructor?: unknown }).constructor;
    if (typeof constructor !== 'function') return undefined;
    const name: unknown = constructor.name;
    // 'Object': a plain object of another realm.
    return typeof name === 'string' && name !== '' && name !== 'Object' ? name : undefined;
  } catch {
    return undefined;
  }
}

/** A thrown value's message: an `Error`'s `message`, else its text (a string as is, other values as JSON or `String()`). */
function thrownMessage(thrown: unknown): string {
  try {
    if (thrown instanceof Error) {
      const message: unknown = thrown.message;
      if (typeof message === 'string') return message;
    }
  } catch {
    // A throwing getter: thrownText says so.
  }
  return thrownText(thrown);
}

/** A thrown value's `stack`, when it is a string. */
function readStack(thrown: unknown): string | undefined {
  if (typeof thrown !== 'object' || thrown === null) return undefined;
  try {
    const stack: unknown = (thrown as { stack?: unknown }).stack;
    return typeof stack === 'string' ? stack : undefined;
  } catch {
    return undefined;
  }
}

/** The remote span context of W3C headers, when they are well formed (checked by `sanitizeTraceContext`). */
function remoteSpanContext(headers: TraceHeaders | undefined): SpanContext | undefined {
  const clean = sanitizeTraceContext(headers);
  if (clean === undefined) return undefined;
  const [, traceId, spanId, flags] = clean.traceparent!.split('-') as [string, string, string, string];
  const spanContext: SpanContext = { traceId, spanId, traceFlags: Number.parseInt(flags, 16), isRemote: true };
  if (clean.tracestate !== undefined) spanContext.traceState = createTraceState(clean.tracestate);
  return spanContext;
}

function defaultToolType(tool: Tool): GenAiToolType {
  return isMcpTool(tool) ? 'extension' : 'function';
}

function progressText(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

/** The first line of the result's first text block: the error the model reads. */
function firstText(result: ToolResult): string {
  for (const block of result.content) {
    if (block.type === 'text') return block.text.split('\n', 1)[0]!;
  }
  return '';
}


/** `text` cut to `max` characters (a marker says it was cut). */
function bounded(text: string, max = MAX_TEXT): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
