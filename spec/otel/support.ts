/**
 * An OpenTelemetry SDK set up for specs: a tracer provider whose finished spans land in an
 * in-memory exporter, and the AsyncLocalStorage context manager (what `NodeSDK` installs),
 * registered globally while a spec file runs.
 */
import { context, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';

export interface SpecTracing {
  readonly exporter: InMemorySpanExporter;
  readonly tracer: Tracer;
  /** Finished spans by name (throws when there is not exactly one with that name). */
  one(name: string): ReadableSpan;
  /** Finished spans whose name is `name`. */
  named(name: string): ReadableSpan[];
  /** Unregisters the context manager and shuts the provider down. */
  close(): Promise<void>;
}

export function specTracing(): SpecTracing {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const manager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(manager);
  const named = (name: string): ReadableSpan[] => exporter.getFinishedSpans().filter((span) => span.name === name);
  return {
    exporter,
    tracer: provider.getTracer('spec'),
    named,
    one(name) {
      const spans = named(name);
      if (spans.length !== 1) throw new Error(`expected one span named "${name}", found ${spans.length}: ${exporter.getFinishedSpans().map((s) => s.name).join(', ')}`);
      return spans[0]!;
    },
    async close() {
      context.disable();
      await provider.shutdown();
    },
  };
}

/** The span's parent span id, or `undefined` for a root span. */
export function parentOf(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId;
}

/** The W3C `traceparent` of a finished span. */
export function traceparentOf(span: ReadableSpan): string {
  const c = span.spanContext();
  return `00-${c.traceId}-${c.spanId}-${c.traceFlags.toString(16).padStart(2, '0')}`;
}
