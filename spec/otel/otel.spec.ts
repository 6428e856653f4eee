/**
 * `toolrun/otel`: the spans of a batch and its calls (GenAI semantic conventions for tool
 * execution), the call's span active across a generator's suspensions, progress events,
 * W3C trace context in and out (contract T1–T2).
 */
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import * as v from 'valibot';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { callTool, defineTool, runTools, withRetry, withTimeout, type ToolCall } from '../../lib/index.ts';
import { runAgent } from '../../lib/extras/agent.ts';
import { scriptedModel } from '../../lib/testing.ts';
import { openTelemetry } from '../../lib/otel/index.ts';
import { collect, gate, settle, text } from '../helpers.ts';
import { parentOf, specTracing, traceparentOf } from './support.ts';

const otel = specTracing();
afterEach(() => otel.exporter.reset());
afterAll(() => otel.close());

const tracing = openTelemetry({ tracer: otel.tracer });

const echo = defineTool({
  name: 'echo',
  input: v.object({ text: v.string() }),
  execute: ({ text }) => text,
});
const fails = defineTool({
  name: 'fails',
  description: 'Fails every time. '.repeat(30),
  input: v.object({}),
  execute: () => {
    throw new Error('disk full');
  },
});
/** Waits for its signal to abort (a timeout, the run's abort), then throws its reason. */
const waits = defineTool({
  name: 'waits',
  input: v.object({}),
  execute: (_args, { signal }) =>
    new Promise((_resolve, reject) => {
      signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
    }),
});

describe('T2 spans of a batch and its calls (GenAI semantic conventions, execute_tool)', () => {
  it('makes one execute_tools span and one execute_tool span per call, children of it, with the GenAI attributes', async () => {
    const calls: ToolCall[] = [
      { id: 'call_1', name: 'echo', arguments: { text: 'hi' } },
      { id: 'call_2', name: 'fails', arguments: {} },
    ];
    const { batch } = await collect(runTools(calls, { tools: [echo, fails], tracing }));
    expect(batch.messages.map((m) => m.isError)).toEqual([false, true]);

    const batchSpan = otel.one('execute_tools');
    expect(batchSpan.kind).toBe(SpanKind.INTERNAL);
    expect(batchSpan.attributes).toMatchObject({
      'toolrun.batch.mode': 'parallel',
      'toolrun.batch.calls': 2,
      'toolrun.batch.outcome': 'completed',
      'toolrun.batch.aborted': false,
      'toolrun.batch.terminate': false,
    });
    expect(batchSpan.status.code).toBe(SpanStatusCode.UNSET);

    const ok = otel.one('execute_tool echo');
    expect(ok.kind).toBe(SpanKind.INTERNAL);
    expect(parentOf(ok)).toBe(batchSpan.spanContext().spanId);
    expect(ok.spanContext().traceId).toBe(batchSpan.spanContext().traceId);
    expect(ok.attributes).toEqual({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'echo',
      'gen_ai.tool.call.id': 'call_1',
      'gen_ai.tool.type': 'function',
      'toolrun.tool.call.index': 0,
      'toolrun.tool.outcome': 'ok',
    });
    expect(ok.status.code).toBe(SpanStatusCode.UNSET);

    const failed = otel.one('execute_tool fails');
    expect(parentOf(failed)).toBe(batchSpan.spanContext().spanId);
    // error.type is the thrown value's class (GenAI conventions), the outcome is toolrun's own attribute.
    expect(failed.attributes).toMatchObject({ 'gen_ai.tool.call.id': 'call_2', 'toolrun.tool.outcome': 'error', 'error.type': 'Error' });
    expect(failed.events.map((e) => [e.name, e.attributes])).toEqual([['exception', { 'exception.type': 'Error', 'exception.message': 'disk full' }]]);
    // The tool's description, cut to 256 characters.
    expect(failed.attributes['gen_ai.tool.description']).toBe(`${'Fails every time. '.repeat(30).slice(0, 255)}…`);
    expect(failed.status).toEqual({ code: SpanStatusCode.ERROR, message: text(batch.messages[1]!) });
  });

  it('a call rejected for its arguments, or naming no tool, ends rejected with error status', async () => {
    const calls: ToolCall[] = [
      { id: 'a', name: 'echo', arguments: { text: 42 } },
      { id: '', name: 'nope', arguments: {} },
    ];
    await collect(runTools(calls, { tools: [echo], tracing }));
    const bad = otel.one('execute_tool echo');
    // Refused arguments: no throw, no class, so the conventions' fallback; no exception event.
    expect(bad.attributes).toMatchObject({ 'toolrun.tool.outcome': 'rejected', 'error.type': '_OTHER', 'gen_ai.tool.type': 'function' });
    expect(bad.events).toEqual([]);
    expect(bad.status.code).toBe(SpanStatusCode.ERROR);
    const unknown = otel.one('execute_tool nope');
    // Fails if an unknown tool is typed: there is no tool to be a function.
    expect(unknown.attributes).toMatchObject({ 'gen_ai.tool.name': 'nope', 'toolrun.tool.outcome': 'rejected', 'error.type': 'tool_not_found' });
    expect(unknown.attributes).not.toHaveProperty('gen_ai.tool.type');
    expect(unknown.status.code).toBe(SpanStatusCode.ERROR);
    // An empty call id is not recorded.
    expect(unknown.attributes['gen_ai.tool.call.id']).toBeUndefined();
  });

  it('a call past its time limit ends timed_out (the tool waits on its signal: no clock is read)', async () => {
    await collect(runTools([{ id: 't', name: 'waits', arguments: {} }], { tools: [waits], tracing, timeoutMs: 1 }));
    const span = otel.one('execute_tool waits');
    // The tool rejected with its signal's reason, the DOMException toolrun aborts it with: its name is the class.
    expect(span.attributes).toMatchObject({ 'toolrun.tool.outcome': 'timed_out', 'error.type': 'TimeoutError' });
    expect(span.events.map((e) => e.attributes)).toEqual([{ 'exception.type': 'TimeoutError', 'exception.message': 'Tool "waits" timed out after 1 ms' }]);
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'Tool "waits" timed out after 1 ms' });
  });

  it('after the run is aborted, the running call ends interrupted and the next one not_run', async () => {
    const started = gate();
    const blocking = defineTool({
      name: 'blocking',
      input: v.object({}),
      execute: (_args, { signal }) =>
        new Promise((_resolve, reject) => {
          started.open();
          signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
        }),
    });
    const controller = new AbortController();
    const calls: ToolCall[] = [
      { id: 'first', name: 'blocking', arguments: {} },
      { id: 'second', name: 'echo', arguments: { text: 'never' } },
    ];
    const run = collect(runTools(calls, { tools: [blocking, echo], tracing, mode: 'sequential', signal: controller.signal }));
    await started.promise;
    controller.abort();
    const { batch } = await run;
    expect(batch.aborted).toBe(true);
    // It rejected with the run's abort reason (controller.abort() with none: an AbortError).
    expect(otel.one('execute_tool blocking').attributes).toMatchObject({ 'toolrun.tool.outcome': 'interrupted', 'error.type': 'AbortError' });
    const notRun = otel.one('execute_tool echo');
    expect(notRun.attributes).toMatchObject({ 'toolrun.tool.outcome': 'not_run', 'error.type': '_OTHER' });
    expect(notRun.events).toEqual([]);
    expect(notRun.status.code).toBe(SpanStatusCode.ERROR);
    expect(otel.one('execute_tools').attributes).toMatchObject({ 'toolrun.batch.aborted': true, 'toolrun.batch.mode': 'sequential' });
  });

  it('a tool that ignores the abort ends abandoned after the grace period', async () => {
    const started = gate();
    const deaf = defineTool({
      name: 'deaf',
      input: v.object({}),
      execute: () => {
        started.open();
        return new Promise<never>(() => {});
      },
    });
    const controller = new AbortController();
    const run = collect(runTools([{ id: 'd', name: 'deaf', arguments: {} }], { tools: [deaf], tracing, signal: controller.signal, abortGraceMs: 0 }));
    await started.promise;
    controller.abort();
    await run;
    expect(otel.one('execute_tool deaf').attributes).toMatchObject({ 'toolrun.tool.outcome': 'abandoned', 'error.type': '_OTHER' });
  });

  it('when the stream of calls throws, the batch span has error status and input_error', async () => {
    async function* calls(): AsyncGenerator<ToolCall> {
      yield { id: 'a', name: 'echo', arguments: { text: 'first' } };
      throw new Error('stream broke');
    }
    await expect(collect(runTools(calls(), { tools: [echo], tracing }))).rejects.toThrow('stream broke');
    const batch = otel.one('execute_tools');
    expect(batch.attributes).toMatchObject({ 'toolrun.batch.outcome': 'input_error', 'toolrun.batch.calls': 1, 'error.type': 'Error' });
    expect(batch.events.map((e) => [e.name, e.attributes])).toEqual([['exception', { 'exception.type': 'Error', 'exception.message': 'stream broke' }]]);
    expect(batch.status).toEqual({ code: SpanStatusCode.ERROR, message: 'stream broke' });
    expect(otel.one('execute_tool echo').attributes['toolrun.tool.outcome']).toBe('ok');
  });

  it('when the consumer leaves early, the running call and the batch spans still end', async () => {
    const started = gate();
    const cooperative = defineTool({
      name: 'cooperative',
      input: v.object({}),
      async *execute(_args, { signal }) {
        yield 'started';
        started.open();
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        return 'stopped';
      },
    });
    for await (const event of runTools([{ id: 'c', name: 'cooperative', arguments: {} }], { tools: [cooperative], tracing })) {
      if (event.type === 'tool_execution_update') break;
    }
    expect(otel.one('execute_tool cooperative').attributes).toMatchObject({ 'toolrun.tool.outcome': 'interrupted' });
    expect(otel.one('execute_tools').attributes).toMatchObject({ 'toolrun.batch.outcome': 'consumer_exit' });
  });

  it('the batch span is a child of the active span, or of the remote span in options.traceContext', async () => {
    const parent = otel.tracer.startSpan('agent turn');
    await context.with(trace.setSpan(context.active(), parent), () => collect(runTools([{ id: 'a', name: 'echo', arguments: { text: 'x' } }], { tools: [echo], tracing })));
    parent.end();
    expect(parentOf(otel.one('execute_tools'))).toBe(parent.spanContext().spanId);
    otel.exporter.reset();

    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    await collect(runTools([{ id: 'a', name: 'echo', arguments: { text: 'x' } }], { tools: [echo], tracing, traceContext: { traceparent, tracestate: 'vendor=a' } }));
    const remote = otel.one('execute_tools');
    expect(remote.spanContext().traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(parentOf(remote)).toBe('b7ad6b7169203331');
    expect(remote.spanContext().traceState?.get('vendor')).toBe('a');
    otel.exporter.reset();

    // Malformed headers are ignored: the batch starts a trace of its own.
    await collect(runTools([{ id: 'a', name: 'echo', arguments: { text: 'x' } }], { tools: [echo], tracing, traceContext: { traceparent: '00-zz-b7ad6b7169203331-01' } }));
    expect(parentOf(otel.one('execute_tools'))).toBeUndefined();
  });

  it('ToolContext.traceContext is the W3C traceparent of the call span; absent when the run is not traced', async () => {
    const seen: (Readonly<Record<string, string>> | undefined)[] = [];
    const peek = defineTool({
      name: 'peek',
      input: v.object({}),
      execute: (_args, context) => {
        seen.push(context.traceContext);
        return 'ok';
      },
    });
    await collect(runTools([{ id: 'p', name: 'peek', arguments: {} }], { tools: [peek], tracing }));
    await collect(runTools([{ id: 'p', name: 'peek', arguments: {} }], { tools: [peek] }));
    expect(seen[0]).toEqual({ traceparent: traceparentOf(otel.one('execute_tool peek')) });
    expect(seen[1]).toBeUndefined();
  });
});

describe('T2 error.type, the exception event and the status of an error (GenAI conventions, Recording errors)', () => {
  class QuotaError extends Error {}
  class NamedError extends Error {
    override name = 'RateLimited';
  }
  class NotAnError {
    readonly why = 'thrown anyway';
  }
  /** A tool that throws whatever its `what` names. */
  const thrower = defineTool({
    name: 'thrower',
    input: v.object({ what: v.string() }),
    execute: ({ what }) => {
      const thrown: Record<string, () => unknown> = {
        type: () => new TypeError('x is not a function'),
        range: () => new RangeError('index out of range'),
        subclass: () => new QuotaError('over quota'),
        named: () => new NamedError('slow down'),
        string: () => 'a thrown string',
        object: () => ({ code: 42 }),
        instance: () => new NotAnError(),
        long: () => new Error('m'.repeat(5_000)),
        revoked: () => {
          const { proxy, revoke } = Proxy.revocable({}, {});
          revoke();
          return proxy;
        },
      };
      throw thrown[what]!();
    },
  });
  const run = async (what: string, options: Parameters<typeof openTelemetry>[0] = {}) => {
    otel.exporter.reset();
    await collect(runTools([{ id: what, name: 'thrower', arguments: { what } }], { tools: [thrower], tracing: openTelemetry({ tracer: otel.tracer, ...options }) }));
    return otel.one('execute_tool thrower');
  };

  it('error.type is the thrown class: a built-in, a subclass by its constructor, a subclass that names itself, any class', async () => {
    // Each fails if error.type were toolrun's outcome ("error").
    for (const [what, type] of [
      ['type', 'TypeError'],
      ['range', 'RangeError'],
      ['subclass', 'QuotaError'],
      ['named', 'RateLimited'],
      ['instance', 'NotAnError'],
    ] as const) {
      const span = await run(what);
      expect(span.attributes, what).toMatchObject({ 'error.type': type, 'toolrun.tool.outcome': 'error' });
      expect(span.events.map((e) => e.name), what).toEqual(['exception']);
      expect(span.events[0]!.attributes!['exception.type'], what).toBe(type);
      expect(span.status.code, what).toBe(SpanStatusCode.ERROR);
    }
    // The status description is the exception's message, not its type again.
    expect((await run('range')).status.message).toBe('index out of range');
  });

  it('a thrown value with no class is _OTHER: its exception event has a message and no type', async () => {
    const string = await run('string');
    expect(string.attributes['error.type']).toBe('_OTHER');
    expect(string.events.map((e) => [e.name, e.attributes])).toEqual([['exception', { 'exception.message': 'a thrown string' }]]);
    const object = await run('object');
    expect(object.attributes['error.type']).toBe('_OTHER');
    expect(object.events[0]!.attributes).toEqual({ 'exception.message': '{"code":42}' });
    // A revoked Proxy: every reading throws; tracing still records, and the run is unchanged.
    const revoked = await run('revoked');
    expect(revoked.attributes).toMatchObject({ 'error.type': '_OTHER', 'toolrun.tool.outcome': 'error' });
    expect(revoked.events.map((e) => e.name)).toEqual(['exception']);
  });

  it('exception.message is cut to 1,000 characters; no exception.stacktrace unless exceptionStackTrace', async () => {
    const span = await run('long');
    const attributes = span.events[0]!.attributes!;
    // Fails if the message were recorded whole (5,000 characters) or the stack recorded by default.
    expect(attributes['exception.message']).toBe(`${'m'.repeat(999)}…`);
    expect(attributes).not.toHaveProperty('exception.stacktrace');
    expect((span.status.message ?? '').length).toBe(256);
    const withStack = (await run('type', { exceptionStackTrace: true })).events[0]!.attributes!;
    expect(withStack['exception.stacktrace']).toMatch(/^TypeError: x is not a function\n\s+at /);
    expect((withStack['exception.stacktrace'] as string).length).toBeLessThanOrEqual(4_000);
  });

  it('a hook that throws gives its class; afterToolCall keeping the error keeps it, turning it into a success drops it', async () => {
    const tools = [thrower, echo];
    const tracingOf = openTelemetry({ tracer: otel.tracer });
    await collect(
      runTools([{ id: 'b', name: 'echo', arguments: { text: 'x' } }], {
        tools,
        tracing: tracingOf,
        beforeToolCall: () => {
          throw new RangeError('hook broke');
        },
      }),
    );
    expect(otel.one('execute_tool echo').attributes).toMatchObject({ 'toolrun.tool.outcome': 'rejected', 'error.type': 'RangeError' });
    otel.exporter.reset();

    await collect(
      runTools([{ id: 'a', name: 'echo', arguments: { text: 'x' } }], {
        tools,
        tracing: tracingOf,
        afterToolCall: () => {
          throw new SyntaxError('after broke');
        },
      }),
    );
    expect(otel.one('execute_tool echo').attributes).toMatchObject({ 'toolrun.tool.outcome': 'error', 'error.type': 'SyntaxError' });
    otel.exporter.reset();

    // The hook rewrites the text of the tool's TypeError, still an error: the class is still the TypeError's.
    await collect(runTools([{ id: 'k', name: 'thrower', arguments: { what: 'type' } }], { tools, tracing: tracingOf, afterToolCall: () => ({ content: [{ type: 'text', text: 'try later' }] }) }));
    const kept = otel.one('execute_tool thrower');
    expect(kept.attributes['error.type']).toBe('TypeError');
    expect(kept.status.message).toBe('x is not a function');
    otel.exporter.reset();

    // The hook makes it a success: no error, no exception event.
    await collect(runTools([{ id: 'o', name: 'thrower', arguments: { what: 'type' } }], { tools, tracing: tracingOf, afterToolCall: () => ({ isError: false }) }));
    const ok = otel.one('execute_tool thrower');
    expect(ok.attributes).toMatchObject({ 'toolrun.tool.outcome': 'ok' });
    expect(ok.attributes).not.toHaveProperty('error.type');
    expect(ok.events).toEqual([]);
    expect(ok.status.code).toBe(SpanStatusCode.UNSET);
    otel.exporter.reset();

    // prepareArguments, needsApproval and approve that throw: their class too (the call is rejected).
    const prepares = defineTool({
      name: 'prepares',
      input: v.object({}),
      prepareArguments: () => {
        throw new URIError('bad input');
      },
      execute: () => 'never',
    });
    const rules = defineTool({
      name: 'rules',
      input: v.object({}),
      needsApproval: () => {
        throw new EvalError('rule broke');
      },
      execute: () => 'never',
    });
    const asks = defineTool({ name: 'asks', input: v.object({}), needsApproval: true, execute: () => 'never' });
    await collect(
      runTools(
        ['prepares', 'rules', 'asks'].map((name) => ({ id: name, name, arguments: {} })),
        {
          tools: [prepares, rules, asks],
          tracing: tracingOf,
          approve: () => {
            throw new ReferenceError('approver down');
          },
        },
      ),
    );
    for (const [name, type] of [
      ['prepares', 'URIError'],
      ['rules', 'EvalError'],
      ['asks', 'ReferenceError'],
    ] as const) {
      expect(otel.one(`execute_tool ${name}`).attributes, name).toMatchObject({ 'toolrun.tool.outcome': 'rejected', 'error.type': type });
    }
    otel.exporter.reset();

    // An error that no throw made (the hook marks a success as an error): _OTHER, the result's first line.
    await collect(runTools([{ id: 'e', name: 'echo', arguments: { text: 'first line\nsecond' } }], { tools, tracing: tracingOf, afterToolCall: () => ({ isError: true }) }));
    const marked = otel.one('execute_tool echo');
    expect(marked.attributes).toMatchObject({ 'toolrun.tool.outcome': 'error', 'error.type': '_OTHER' });
    expect(marked.events).toEqual([]);
    expect(marked.status).toEqual({ code: SpanStatusCode.ERROR, message: 'first line' });
  });
});

describe('T2 ToolContext.traceContext through composed tools', () => {
  it('a tool wrapped by withTimeout or withRetry, or called with callTool, sees its caller call span', async () => {
    const seen: unknown[] = [];
    const peeking = (name: string) =>
      defineTool({
        name,
        input: v.object({}),
        execute: (_args, context) => {
          seen.push(context.traceContext);
          return 'ok';
        },
      });
    const peek = peeking('peek');
    const outer = defineTool({
      name: 'outer',
      input: v.object({}),
      async *execute(_args, context) {
        return (yield* callTool(peek, {}, context)).content;
      },
    });
    const tools = [withTimeout(peek, 1_000), withRetry(peeking('retried'), { retries: 1 }), outer];
    const calls: ToolCall[] = ['peek', 'retried', 'outer'].map((name) => ({ id: name, name, arguments: {} }));
    await collect(runTools(calls, { tools, tracing, mode: 'sequential' }));
    expect(seen).toEqual(['peek', 'retried', 'outer'].map((name) => ({ traceparent: traceparentOf(otel.one(`execute_tool ${name}`)) })));
  });
});

describe('T2 the call span is the active context while the tool runs, across its suspensions', () => {
  it('spans a generator tool makes after awaits between yields are children of its call span, with two calls interleaving', async () => {
    // Each tool waits on gates the test opens in an interleaved order: a0 b0 a1 b1 a2 b2.
    const gates = { a: [gate(), gate(), gate()], b: [gate(), gate(), gate()] };
    const worker = defineTool({
      name: 'worker',
      input: v.object({ who: v.picklist(['a', 'b']) }),
      async *execute({ who }) {
        for (let step = 0; step < 3; step++) {
          await gates[who][step]!.promise;
          // A span the tool's own code makes (as an HTTP client would), after the await.
          const span = otel.tracer.startSpan(`work ${who}${step}`);
          await Promise.resolve();
          span.end();
          yield step;
        }
        return who;
      },
    });
    const calls: ToolCall[] = [
      { id: 'a', name: 'worker', arguments: { who: 'a' } },
      { id: 'b', name: 'worker', arguments: { who: 'b' } },
    ];
    const run = collect(runTools(calls, { tools: [worker], tracing }));
    for (let step = 0; step < 3; step++) {
      for (const who of ['a', 'b'] as const) {
        await settle();
        gates[who][step]!.open();
      }
    }
    await run;
    const spans = otel.exporter.getFinishedSpans();
    const callSpan = (id: string) => spans.find((s) => s.name === 'execute_tool worker' && s.attributes['gen_ai.tool.call.id'] === id)!;
    for (const who of ['a', 'b']) {
      for (let step = 0; step < 3; step++) {
        expect(parentOf(otel.one(`work ${who}${step}`)), `work ${who}${step}`).toBe(callSpan(who).spanContext().spanId);
      }
    }
  });

  it('beforeToolCall and afterToolCall run in the call span', async () => {
    const hook = (name: string) => () => {
      otel.tracer.startSpan(name).end();
      return undefined;
    };
    await collect(runTools([{ id: 'h', name: 'echo', arguments: { text: 'x' } }], { tools: [echo], tracing, beforeToolCall: hook('before'), afterToolCall: hook('after') }));
    const call = otel.one('execute_tool echo').spanContext().spanId;
    expect(parentOf(otel.one('before'))).toBe(call);
    expect(parentOf(otel.one('after'))).toBe(call);
  });
});

describe('T2 progress as span events, bounded', () => {
  it('records at most maxProgressEvents events per call and counts the rest', async () => {
    const chatty = defineTool({
      name: 'chatty',
      input: v.object({}),
      async *execute() {
        for (let i = 0; i < 10; i++) yield { done: i };
        yield 'x'.repeat(1_000);
        return 'ok';
      },
    });
    await collect(runTools([{ id: 'c', name: 'chatty', arguments: {} }], { tools: [chatty], tracing: openTelemetry({ tracer: otel.tracer, maxProgressEvents: 3 }) }));
    const span = otel.one('execute_tool chatty');
    expect(span.events.map((e) => [e.name, e.attributes])).toEqual([
      ['toolrun.tool.progress', { 'toolrun.tool.progress.index': 0, 'toolrun.tool.progress.value': '{"done":0}' }],
      ['toolrun.tool.progress', { 'toolrun.tool.progress.index': 1, 'toolrun.tool.progress.value': '{"done":1}' }],
      ['toolrun.tool.progress', { 'toolrun.tool.progress.index': 2, 'toolrun.tool.progress.value': '{"done":2}' }],
    ]);
    expect(span.attributes).toMatchObject({ 'toolrun.tool.progress.count': 11, 'toolrun.tool.progress.dropped': 8 });
  });

  it('cuts long progress texts and tool names to 256 characters', async () => {
    const long = defineTool({
      name: 'long',
      input: v.object({}),
      async *execute() {
        yield 'y'.repeat(10_000);
        return 'ok';
      },
    });
    await collect(runTools([{ id: 'l', name: 'long', arguments: {} }, { id: 'n', name: 'z'.repeat(5_000), arguments: {} }], { tools: [long], tracing }));
    const value = otel.one('execute_tool long').events[0]!.attributes!['toolrun.tool.progress.value'] as string;
    expect(value).toHaveLength(256);
    const unknown = otel.exporter.getFinishedSpans().find((s) => s.attributes['gen_ai.tool.call.id'] === 'n')!;
    expect((unknown.attributes['gen_ai.tool.name'] as string).length).toBe(256);
  });
});

describe('T2 runAgent passes tracing to every batch', () => {
  it('makes one execute_tools span per turn with tool calls, all children of the active span', async () => {
    const model = scriptedModel([
      { role: 'assistant', content: [{ type: 'toolCall', id: 't1', name: 'echo', arguments: { text: 'one' } }] },
      { role: 'assistant', content: [{ type: 'toolCall', id: 't2', name: 'echo', arguments: { text: 'two' } }] },
      { role: 'assistant', content: [{ type: 'text', text: 'done' }] },
    ]);
    const turn = otel.tracer.startSpan('invoke_agent');
    await context.with(trace.setSpan(context.active(), turn), async () => {
      for await (const _event of runAgent({ model, tools: [echo], messages: [], tracing })) {
        // drained
      }
    });
    turn.end();
    const batches = otel.named('execute_tools');
    expect(batches).toHaveLength(2);
    for (const batch of batches) expect(parentOf(batch)).toBe(turn.spanContext().spanId);
    expect(otel.named('execute_tool echo').map((s) => s.attributes['gen_ai.tool.call.id']).sort()).toEqual(['t1', 't2']);
  });
});

describe('openTelemetry options', () => {
  it('progressValue can keep progress values out of the trace; toolType sets gen_ai.tool.type', async () => {
    const secret = defineTool({
      name: 'secret',
      input: v.object({}),
      async *execute() {
        yield 'line 1 of a private file';
        return 'ok';
      },
    });
    const custom = openTelemetry({ tracer: otel.tracer, progressValue: () => undefined, toolType: (tool, name) => (tool === undefined ? 'function' : name === 'secret' ? 'datastore' : 'function') });
    await collect(runTools([{ id: 's', name: 'secret', arguments: {} }], { tools: [secret], tracing: custom }));
    const span = otel.one('execute_tool secret');
    expect(span.attributes['gen_ai.tool.type']).toBe('datastore');
    expect(span.events.map((e) => e.attributes)).toEqual([{ 'toolrun.tool.progress.index': 0 }]);
  });

  it('rejects a maxProgressEvents that is not a non-negative integer', () => {
    expect(() => openTelemetry({ maxProgressEvents: -1 })).toThrow(/maxProgressEvents must be a non-negative integer, received -1/);
  });

  it('runTools rejects a tracing without startBatch and a traceContext that is not an object of strings', () => {
    expect(() => runTools([], { tools: [], tracing: {} as never })).toThrow(/options.tracing must be a RunTracing/);
    expect(() => runTools([], { tools: [], traceContext: 'x' as never })).toThrow(/options.traceContext must be an object/);
    expect(() => runTools([], { tools: [], traceContext: { traceparent: 1 } as never })).toThrow(/options.traceContext.traceparent must be a string, received/);
  });
});
