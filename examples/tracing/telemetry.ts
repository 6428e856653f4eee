/**
 * The OpenTelemetry setup each of the example's three processes runs first: a tracer
 * provider whose spans carry the process's `service.name` and go to the collector over
 * OTLP/HTTP, and the AsyncLocalStorage context manager (so the active span follows
 * `await`s). No propagator is needed for MCP: `toolrun/otel` writes and reads the W3C
 * `traceparent` of a call in the `_meta` of its MCP messages itself.
 *
 * @module
 */
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';

/** The variable the agent sets for its servers: the collector's URL (the OTLP exporters' standard name). */
export const COLLECTOR_URL_VARIABLE = 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT';

/**
 * Sets up tracing for this process. Call `shutdown()` before the process ends: it sends
 * the spans still buffered and waits until the collector has them.
 */
export function startTelemetry(serviceName: string, collectorUrl: string | undefined = process.env[COLLECTOR_URL_VARIABLE]): { shutdown(): Promise<void> } {
  if (collectorUrl === undefined || collectorUrl === '') throw new Error(`${serviceName}: no collector URL (set ${COLLECTOR_URL_VARIABLE})`);
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: collectorUrl }))],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(provider);
  return { shutdown: () => provider.shutdown() };
}
