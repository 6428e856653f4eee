/**
 * A trace across a pause (contract T4): the paused batch's state carries its
 * span's W3C trace context — plain strings in the signed body — and the batch resumed from
 * it, in a fresh tracer provider (as another process, hours later, would have), links to the
 * paused batch span (`resumeTrace: 'link'`, the default) or continues it as its child
 * (`'continue'`). The calls waiting for approval end `pending_approval` at the pause, not
 * as errors.
 */
import { context, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import * as v from 'valibot';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { defineTool, inMemoryClaim, ResumeError, runTools, type PausedBatch, type RunTracing, type ToolCall } from '../../lib/index.ts';
import { runAgent } from '../../lib/extras/agent.ts';
import { scriptedModel } from '../../lib/testing.ts';
import { openTelemetry } from '../../lib/otel/index.ts';
import { bodyOf, withBody } from '../fixtures/approval/state.ts';
import { collect } from '../helpers.ts';
import { parentOf, specTracing, traceparentOf } from './support.ts';

/** The process that pauses: the spec's provider (and the AsyncLocalStorage context manager). */
const pausing = specTracing();
/** The process that resumes: a provider of its own, with its own exporter. */
const resumingExporter = new InMemorySpanExporter();
const resumingProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(resumingExporter)] });
const resumingTracer = resumingProvider.getTracer('resumer');
afterEach(() => {
  pausing.exporter.reset();
  resumingExporter.reset();
});
afterAll(async () => {
  await resumingProvider.shutdown();
  await pausing.close();
});

const read = defineTool({ name: 'read', input: v.object({ path: v.string() }), execute: ({ path }) => `read ${path}` });
const remove = defineTool({ name: 'remove', input: v.object({ path: v.string() }), needsApproval: true, execute: ({ path }) => `removed ${path}` });
const tools = [read, remove];
const calls: ToolCall[] = [
  { id: 'r', name: 'read', arguments: { path: 'a' } },
  { id: 'x', name: 'remove', arguments: { path: 'b' } },
];

/** Runs `fn` with a span `name` of `tracer` active (a request handler's span), then ends it. */
async function inSpan<T>(tracer: Tracer, name: string, fn: () => Promise<T>): Promise<{ value: T; span: ReturnType<Tracer['startSpan']> }> {
  const span = tracer.startSpan(name);
  const value = await context.with(trace.setSpan(context.active(), span), fn);
  span.end();
  return { value, span };
}

/** Pauses the batch in the pausing provider; its state as JSON text (what a store keeps). */
async function pause(options: { signingSecret?: string } = {}): Promise<{ paused: PausedBatch; text: string; batchSpan: ReadableSpan }> {
  pausing.exporter.reset();
  const { batch } = await collect(runTools(calls, { tools, tracing: openTelemetry({ tracer: pausing.tracer }), ...options }));
  expect(batch.paused).toBeDefined();
  return { paused: batch.paused!, text: JSON.stringify(batch.paused!.state), batchSpan: pausing.one('execute_tools') };
}

function resume(state: unknown, tracing: RunTracing, more: { signingSecret?: string; traceContext?: Record<string, string> } = {}) {
  const paused = JSON.parse(typeof state === 'string' ? state : JSON.stringify(state)) as PausedBatch['state'];
  const approvalId = bodyOf(paused).calls[1]!.request!.approvalId;
  return collect(
    runTools(calls, {
      tools,
      tracing,
      resume: { state: state as string, approvals: [{ approvalId, approved: true }], ...(more.signingSecret !== undefined ? { claim: inMemoryClaim() } : {}) },
      ...more,
    }),
  );
}

const resumedSpans = (name: string) => resumingExporter.getFinishedSpans().filter((span) => span.name === name);

describe('T4 a paused state carries the batch span trace context', () => {
  it('the state has the paused batch span traceparent; the call waiting for approval ends pending_approval, not as an error', async () => {
    const { paused, batchSpan } = await pause();
    expect(batchSpan.attributes).toMatchObject({ 'toolrun.batch.outcome': 'paused' });
    // Fails if the state carried no trace context, or another span's.
    expect(bodyOf(paused.state).traceContext).toEqual({ traceparent: traceparentOf(batchSpan) });
    const waiting = pausing.one('execute_tool remove');
    // Fails if the open call span were ended as interrupted (an error) by the batch's end.
    expect(waiting.attributes).toMatchObject({ 'toolrun.tool.outcome': 'pending_approval' });
    expect(waiting.attributes).not.toHaveProperty('error.type');
    expect(waiting.status.code).toBe(SpanStatusCode.UNSET);
    expect(parentOf(waiting)).toBe(batchSpan.spanContext().spanId);
    expect(pausing.one('execute_tool read').attributes['toolrun.tool.outcome']).toBe('ok');
  });

  it('a batch paused untraced carries none, and a state without one resumes traced, unlinked', async () => {
    const { batch } = await collect(runTools(calls, { tools }));
    expect(bodyOf(batch.paused!.state)).not.toHaveProperty('traceContext');
    const { batch: resumed } = await resume(batch.paused!.state, openTelemetry({ tracer: resumingTracer }));
    expect(resumed.messages.map((m) => m.isError)).toEqual([false, false]);
    const [span] = resumedSpans('execute_tools');
    expect(span!.links).toEqual([]);
    expect(span!.attributes).not.toHaveProperty('toolrun.batch.resumed');
  });
});

describe('T4 the resumed batch joins the paused trace, in a fresh tracer provider', () => {
  it("resumeTrace 'link' (default): the resumed batch span links to the paused one and is a child of the resuming request's span", async () => {
    const { text, batchSpan } = await pause();
    const { value, span: request } = await inSpan(resumingTracer, 'POST /approve', () => resume(text, openTelemetry({ tracer: resumingTracer })));
    expect(value.batch.messages.map((m) => m.isError)).toEqual([false, false]);
    const [resumed] = resumedSpans('execute_tools');
    expect(resumed!.attributes).toMatchObject({ 'toolrun.batch.resumed': true, 'toolrun.batch.outcome': 'completed' });
    expect(parentOf(resumed!)).toBe(request.spanContext().spanId);
    expect(resumed!.spanContext().traceId).toBe(request.spanContext().traceId);
    // Fails if the link were missing or pointed elsewhere than the paused batch span.
    expect(resumed!.links).toHaveLength(1);
    expect(resumed!.links[0]!.context.traceId).toBe(batchSpan.spanContext().traceId);
    expect(resumed!.links[0]!.context.spanId).toBe(batchSpan.spanContext().spanId);
    expect(resumed!.links[0]!.attributes).toEqual({ 'toolrun.link.type': 'resumed_from' });
    // The approved call runs in the resumed batch, under its span.
    const [removed] = resumedSpans('execute_tool remove');
    expect(removed!.attributes['toolrun.tool.outcome']).toBe('ok');
    expect(parentOf(removed!)).toBe(resumed!.spanContext().spanId);
  });

  it("resumeTrace 'continue': the resumed batch span is a child of the paused one, in its trace; an explicit traceContext stays the parent", async () => {
    const { text, batchSpan } = await pause();
    const continuing = openTelemetry({ tracer: resumingTracer, resumeTrace: 'continue' });
    await inSpan(resumingTracer, 'POST /approve', () => resume(text, continuing));
    const [resumed] = resumedSpans('execute_tools');
    // Fails if 'continue' linked instead, or took the active span as the parent.
    expect(resumed!.spanContext().traceId).toBe(batchSpan.spanContext().traceId);
    expect(parentOf(resumed!)).toBe(batchSpan.spanContext().spanId);
    expect(resumed!.links).toEqual([]);
    expect(resumed!.attributes['toolrun.batch.resumed']).toBe(true);
    resumingExporter.reset();

    const again = await pause();
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    await resume(again.text, continuing, { traceContext: { traceparent } });
    const [explicit] = resumedSpans('execute_tools');
    expect(parentOf(explicit!)).toBe('b7ad6b7169203331');
    expect(explicit!.links.map((link) => link.context.spanId)).toEqual([again.batchSpan.spanContext().spanId]);
  });

  it('with the API alone and resumeTrace continue, the resumed call still gets a trace context in the paused trace', async () => {
    const { text, batchSpan } = await pause();
    const seen: (Readonly<Record<string, string>> | undefined)[] = [];
    const peek = defineTool({
      name: 'remove',
      input: v.object({ path: v.string() }),
      needsApproval: true,
      execute: (_args, { traceContext }) => {
        seen.push(traceContext);
        return 'ok';
      },
    });
    // No tracer given and no global provider: the API's no-op tracer; the remote parent is passed on.
    const approvalId = bodyOf(JSON.parse(text) as PausedBatch['state']).calls[1]!.request!.approvalId;
    await collect(runTools(calls, { tools: [read, peek], tracing: openTelemetry({ resumeTrace: 'continue' }), resume: { state: text, approvals: [{ approvalId, approved: true }] } }));
    expect(seen[0]?.traceparent).toMatch(new RegExp(`^00-${batchSpan.spanContext().traceId}-`));
  });

  it('runAgent: a paused run resumed in another provider links its batch to the paused batch', async () => {
    const model = scriptedModel([
      { role: 'assistant', content: [{ type: 'toolCall', id: 'x', name: 'remove', arguments: { path: 'b' } }] },
      { role: 'assistant', content: [{ type: 'text', text: 'done' }] },
    ]);
    let state: unknown;
    let approvalId = '';
    for await (const event of runAgent({ model, tools, messages: [], tracing: openTelemetry({ tracer: pausing.tracer }) })) {
      if (event.type === 'agent_end' && event.paused !== undefined) {
        state = JSON.parse(JSON.stringify(event.paused.state));
        approvalId = event.paused.requests[0]!.approvalId;
      }
    }
    expect(state).toBeDefined();
    const pausedBatch = pausing.one('execute_tools');
    for await (const _event of runAgent({ model, tools, resume: { state: state as never, approvals: [{ approvalId, approved: true }] }, tracing: openTelemetry({ tracer: resumingTracer }) })) {
      // drained
    }
    const [resumed] = resumedSpans('execute_tools');
    expect(resumed!.links.map((link) => link.context.spanId)).toEqual([pausedBatch.spanContext().spanId]);
  });
});

describe('T4 the trace context in the state is checked like the rest of it', () => {
  it('signed: an edited trace context is refused (the signature covers it)', async () => {
    const secret = 'a secret of the spec';
    const { paused } = await pause({ signingSecret: secret });
    const forged = withBody(paused.state, (body) => ({ ...body, traceContext: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } }));
    // Fails if the trace context were outside what the signature covers.
    await expect(resume(forged, openTelemetry({ tracer: resumingTracer }), { signingSecret: secret })).rejects.toMatchObject({ code: 'signature' });
    // The state as it was resumes, and links.
    const ok = await resume(paused.state, openTelemetry({ tracer: resumingTracer }), { signingSecret: secret });
    expect(ok.batch.messages).toHaveLength(2);
    expect(resumedSpans('execute_tools')[0]!.links).toHaveLength(1);
  });

  it('a malformed trace context (an edited unsigned state) is refused as malformed; zero ids are dropped', async () => {
    const { paused } = await pause();
    const bad = withBody(paused.state, (body) => ({ ...body, traceContext: { traceparent: 'not a traceparent' } }));
    const error = await resume(bad, openTelemetry({ tracer: resumingTracer })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResumeError);
    expect((error as ResumeError).code).toBe('malformed');
    expect((error as Error).message).toMatch(/traceContext\.traceparent/);

    const again = await pause();
    const zero = withBody(again.paused.state, (body) => ({ ...body, traceContext: { traceparent: `00-${'0'.repeat(32)}-b7ad6b7169203331-01` } }));
    await resume(zero, openTelemetry({ tracer: resumingTracer }));
    expect(resumedSpans('execute_tools')[0]!.links).toEqual([]);
  });
});
