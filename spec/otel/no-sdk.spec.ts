/**
 * `openTelemetry()` with `@opentelemetry/api` alone (no tracer provider registered): a batch
 * with no parent span is not traced at all (tracing with the API alone cost
 * +1 µs per call for spans nobody records), one that continues a remote trace still passes
 * its context on, and a provider registered later is used (contract T1–T2).
 *
 * Its own file: it registers a global tracer provider, which the other otel specs must not see.
 */
import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import * as v from 'valibot';
import { afterAll, describe, expect, it } from 'vitest';
import { defineTool, runTools, type ToolCall } from '../../lib/index.ts';
import { openTelemetry } from '../../lib/otel/index.ts';
import { collect } from '../helpers.ts';

const REMOTE = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

const seen: (Readonly<Record<string, string>> | undefined)[] = [];
const peek = defineTool({
  name: 'peek',
  input: v.object({}),
  execute: (_args, context) => {
    seen.push(context.traceContext);
    return 'ok';
  },
});
const calls: ToolCall[] = [{ id: 'p', name: 'peek', arguments: {} }];

afterAll(() => trace.disable());

describe('T2 openTelemetry() with the API alone', () => {
  it('no provider and no parent span: startBatch answers undefined and the run is untraced, with the same events', async () => {
    const tracing = openTelemetry();
    // Fails if the no-SDK check is removed: startBatch would return a BatchTrace of non-recording spans.
    expect(tracing.startBatch({ traceContext: undefined, mode: 'parallel', resumedFrom: undefined })).toBeUndefined();
    seen.length = 0;
    const traced = await collect(runTools(calls, { tools: [peek], tracing }));
    const plain = await collect(runTools(calls, { tools: [peek] }));
    // The same events but for the end events' wall-clock times (O7), which differ between two runs.
    const untimed = (value: unknown): unknown => JSON.parse(JSON.stringify(value, (key, v: unknown) => (key === 'startedAt' || key === 'endedAt' ? undefined : v)));
    expect(untimed(traced)).toEqual(untimed(plain));
    expect(seen).toEqual([undefined, undefined]);
  });

  it('no provider, a remote parent: the batch is traced and the tool sees the remote trace context passed on', async () => {
    const tracing = openTelemetry();
    // Fails if the check skipped batches with a parent: the remote context would be lost.
    expect(tracing.startBatch({ traceContext: { traceparent: REMOTE }, mode: 'parallel', resumedFrom: undefined })).toBeDefined();
    seen.length = 0;
    await collect(runTools(calls, { tools: [peek], tracing, traceContext: { traceparent: REMOTE } }));
    expect(seen).toEqual([{ traceparent: REMOTE }]);
  });

  it('a provider registered after openTelemetry() was called is used by the next batch', async () => {
    const tracing = openTelemetry();
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    // Fails if the no-SDK check were made once, when openTelemetry() is called.
    expect(trace.setGlobalTracerProvider(provider)).toBe(true);
    seen.length = 0;
    await collect(runTools(calls, { tools: [peek], tracing }));
    expect(exporter.getFinishedSpans().map((s) => s.name).sort()).toEqual(['execute_tool peek', 'execute_tools']);
    expect(seen[0]?.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    await provider.shutdown();
  });
});
