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
  type Tracer,
} from '@opentelemetry/api';
import type { CallOutcome } from '../core/events.ts';
import type { Tool, ToolResult } from '../core/tool.ts';
import {
  sanitizeTraceContext,
  type BatchTrace,
  type BatchTraceEnd,
  type BatchTraceStart,
  type CallTrace,
  type CallTraceStart,
  type RunTracing,
  type TraceHeaders,
} from '../core/tracing.ts';
import { thrownText } from '../core/guards.ts';
import { isMcpTool } from '../core/tool-origin.ts';

export type { BatchTrace, BatchTraceEnd, BatchTraceStart, CallTrace, CallTraceStart, RunTracing, TraceHeaders } from '../core/tracing.ts';
export { sanitizeTraceContext } from '../core/tracing.ts';

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
   * `gen_ai.tool.type` of a call. `tool` is `undefined` for a call naming no tool.
   * @default `'extension'` for the tools made by `mcpTools` (the agent calls an external
   *   server), `'function'` for every other tool
   */
  toolType?: (tool: Tool | undefined, toolName: string) => GenAiToolType;
}

/** Default of {@link OpenTelemetryOptions.maxProgressEvents}. */
const DEFAULT_MAX_PROGRESS_EVENTS = 32;
/** Longest text recorded from a value the model or a tool chose (names, ids, progress, error texts). */
const MAX_TEXT = 256;
/** The batch span's name: one `runTools` batch (the GenAI conventions name no such operation). */
const BATCH_SPAN_NAME = 'execute_tools';

/**
 * A `RunTracing` that records OpenTelemetry spans:
 *
 * - one span per batch, `execute_tools` (kind `INTERNAL`), a child of the active context,
 *   or of the remote span in `RunToolsOptions.traceContext`; attributes
 *   `toolrun.batch.mode`, and at its end `toolrun.batch.calls`, `toolrun.batch.outcome`
 *   (`completed`, `paused`, `consumer_exit`, `input_error`, `failed`), `toolrun.batch.aborted`,
 *   `toolrun.batch.terminate`; error status when the calls' stream threw;
 * - one child span per call, `execute_tool {gen_ai.tool.name}` (kind `INTERNAL`), from its
 *   `tool_execution_start` to its `tool_execution_end`, with `gen_ai.operation.name`
 *   `execute_tool`, `gen_ai.tool.name`, `gen_ai.tool.call.id` (when not empty),
 *   `gen_ai.tool.description` (when the tool has one), `gen_ai.tool.type`, `toolrun.tool.call.index`, and at its end `toolrun.tool.outcome`
 *   (`ok`, `error`, `rejected`, `timed_out`, `interrupted`, `not_run`, `abandoned`). An
 *   error result sets `error.type` to the outcome and the span's status to `ERROR` with the
 *   start of the result's text as its description;
 * - progress values as span events `toolrun.tool.progress`, at most `maxProgressEvents`
 *   per call, with `toolrun.tool.progress.count` and `toolrun.tool.progress.dropped` on
 *   the call span.
 *
 * Texts that come from the model or a tool (tool names, call ids, descriptions, progress, error texts)
 * are cut to 256 characters. Arguments and results are not recorded.
 *
 * `ToolContext.traceContext` of a call is `{ traceparent, tracestate? }` (W3C Trace
 * Context) for its span, whatever propagator is registered: these are the keys MCP's
 * `_meta` uses, and what `mcpTools` sends.
 *
 * @throws TypeError at once when `maxProgressEvents` is not a non-negative integer.
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
  const settings: Settings = {
    tracer: options.tracer,
    maxProgressEvents: max,
    progressValue: options.progressValue ?? progressText,
    toolType: options.toolType ?? defaultToolType,
  };
  return {
    startBatch: (batch) => (settings.tracer === undefined && nothingToTrace(batch) ? undefined : new OtelBatch(settings, batch)),
  };
}

/** The API's no-op tracer provider: what the global provider hands out while no SDK is registered. */
const NOOP_TRACER_PROVIDER = new ProxyTracerProvider().getDelegate();

/**
 * True when a batch's spans would all be non-recording with an invalid context: no tracer
 * provider is registered (the global one still delegates to the API's no-op provider), the
 * batch continues no remote trace, and no span is active. Its calls' `traceContext` would be
 * `undefined` either way. Checked at each batch, so a provider registered later is used.
 */
function nothingToTrace(batch: BatchTraceStart): boolean {
  const provider = trace.getTracerProvider();
  if (!(provider instanceof ProxyTracerProvider) || provider.getDelegate() !== NOOP_TRACER_PROVIDER) return false;
  if (remoteSpanContext(batch.traceContext) !== undefined) return false;
  const active = trace.getSpanContext(context.active());
  return active === undefined || !isSpanContextValid(active);
}

interface Settings {
  readonly tracer: Tracer | undefined;
  readonly maxProgressEvents: number;
  readonly progressValue: (value: unknown) => string | undefined;
  readonly toolType: (tool: Tool | undefined, toolName: string) => GenAiToolType;
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
    const parent = remote === undefined ? active : trace.setSpanContext(active, remote);
    this.#span = this.#tracer.startSpan(BATCH_SPAN_NAME, { kind: SpanKind.INTERNAL, attributes: { 'toolrun.batch.mode': batch.mode } }, parent);
    this.#context = trace.setSpan(parent, this.#span);
  }

  startCall(call: CallTraceStart): CallTrace {
    const name = bounded(call.toolName);
    const attributes: Attributes = {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': name,
      'gen_ai.tool.type': this.#settings.toolType(call.tool, call.toolName),
      'toolrun.tool.call.index': call.index,
    };
    if (call.toolCallId !== '') attributes['gen_ai.tool.call.id'] = bounded(call.toolCallId);
    const description = call.tool?.description;
    if (typeof description === 'string' && description !== '') attributes['gen_ai.tool.description'] = bounded(description);
    const span = this.#tracer.startSpan(`execute_tool ${name}`, { kind: SpanKind.INTERNAL, attributes }, this.#context);
    return new OtelCall(this.#settings, span, trace.setSpan(this.#context, span));
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
      span.setAttribute('error.type', end.outcome);
      span.setStatus({ code: SpanStatusCode.ERROR, message: bounded(thrownText(end.error)) });
    }
    span.end();
  }
}

class OtelCall implements CallTrace {
  readonly #settings: Settings;
  readonly #span: Span;
  readonly #context: Context;
  #progress = 0;

  constructor(settings: Settings, span: Span, spanContext: Context) {
    this.#settings = settings;
    this.#span = span;
    this.#context = spanContext;
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

  end(outcome: CallOutcome, isError: boolean, result: ToolResult | undefined): void {
    const span = this.#span;
    const count = this.#progress;
    span.setAttribute('toolrun.tool.outcome', outcome);
    if (count > 0) {
      span.setAttribute('toolrun.tool.progress.count', count);
      const dropped = count - this.#settings.maxProgressEvents;
      if (dropped > 0) span.setAttribute('toolrun.tool.progress.dropped', dropped);
    }
    if (isError) {
      span.setAttribute('error.type', outcome);
      span.setStatus({ code: SpanStatusCode.ERROR, message: result === undefined ? 'the consumer stopped the run before the call ended' : bounded(firstText(result)) });
    }
    span.end();
  }

  headers(): TraceHeaders | undefined {
    const spanContext = this.#span.spanContext();
    if (!isSpanContextValid(spanContext)) return undefined;
    const flags = (spanContext.traceFlags & 0xff).toString(16).padStart(2, '0');
    const traceparent = `00-${spanContext.traceId}-${spanContext.spanId}-${flags}`;
    const tracestate = spanContext.traceState?.serialize();
    return tracestate === undefined || tracestate === '' ? { traceparent } : { traceparent, tracestate };
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

function defaultToolType(tool: Tool | undefined): GenAiToolType {
  return tool !== undefined && isMcpTool(tool) ? 'extension' : 'function';
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


/** `text` cut to {@link MAX_TEXT} characters (a marker says it was cut). */
function bounded(text: string): string {
  return text.length <= MAX_TEXT ? text : `${text.slice(0, MAX_TEXT - 1)}…`;
}
