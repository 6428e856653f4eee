/**
 * toEventStream / fromEventStream (contract W1–W4): toolrun's events as server-sent events
 * over a real loopback HTTP server and the real `fetch`, read back typed.
 */
import { afterEach, describe, expect, it } from 'vitest';
import * as v from 'valibot';
import { defineTool, EventStreamError, fromEventStream, runTools, toEventStream, type EventStreamEnd, type ToolBatch, type ToolEvent } from '../../lib/index.ts';
import { gate, settle } from '../helpers.ts';
import { serveWeb, type WebServer } from './web-server.ts';

const count = defineTool({
  name: 'count',
  input: v.object({ to: v.number() }),
  async *execute({ to }) {
    for (let i = 1; i <= to; i++) yield { step: i, note: 'line\n\nevent: toolrun_end\ndata: {"value":1}\n\n</script><script>alert(1)</script>' };
    return `counted to ${to}`;
  },
});
const fail = defineTool({
  name: 'fail',
  input: v.object({}),
  execute: () => {
    throw new RangeError('out of range', { cause: new Error('hidden cause') });
  },
});
const tools = [count, fail];
type Events = ToolEvent<(typeof tools)[number]>;

let server: WebServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function text(stream: ReadableStream<Uint8Array>): Promise<string> {
  return new Response(stream).text();
}

function bodyOf(text: string): ReadableStream<Uint8Array> {
  return new Response(text).body!;
}

describe('W1: a run\'s events over HTTP and back, equal', () => {
  it('every event arrives in order with an id, typed; the batch is the return value; an Error goes as { name, message }', async () => {
    const calls = [
      { id: 'call_1', name: 'count', arguments: { to: 3 } },
      { id: 'call_2', name: 'fail', arguments: {} },
      { id: 'call_3', name: 'nope', arguments: {} },
    ];
    const local: ToolEvent[] = [];
    let ended: EventStreamEnd<ToolBatch> | undefined;
    server = await serveWeb(() =>
      new Response(toEventStream((signal) => runTools(calls, { tools, signal, mode: 'sequential' }), { onEvent: (e) => local.push(e), onEnd: (e) => (ended = e) }), {
        headers: { 'content-type': 'text/event-stream' },
      }),
    );
    const response = await fetch(`${server.url}/run`, { method: 'POST' });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const received: Events[] = [];
    const run = fromEventStream<Events>(response.body!);
    let step = await run.next();
    for (; !step.done; step = await run.next()) received.push(step.value);
    const batch = step.value;
    // The same events as on the server, through JSON; the thrown RangeError as its name and message only.
    const expected = JSON.parse(JSON.stringify(local, (key, value: unknown) => (value instanceof Error ? { name: value.name, message: value.message } : value)));
    expect(received).toEqual(expected);
    const end = received.find((e) => e.type === 'tool_execution_end' && e.toolCallId === 'call_2');
    expect(end).toMatchObject({ outcome: 'error', error: { name: 'RangeError', message: 'out of range' } });
    expect(JSON.stringify(end)).not.toMatch(/hidden cause|stack/);
    // The hostile progress string is data, intact: it neither ended the stream nor forged an event.
    const update = received.find((e) => e.type === 'tool_execution_update');
    if (update?.type === 'tool_execution_update' && update.toolName === 'count') expect(update.progress.note).toContain('event: toolrun_end');
    expect(received.filter((e) => e.type === 'tool_execution_update')).toHaveLength(3);
    expect(batch.messages.map((m) => [m.toolCallId, m.isError])).toEqual([['call_1', false], ['call_2', true], ['call_3', true]]);
    expect(ended?.status).toBe('done');
  });

  it('the wire: an id and the type as event name per event, one data line of JSON, then toolrun_end', async () => {
    const wire = await text(toEventStream(runTools([{ id: 'c', name: 'count', arguments: { to: 1 } }], { tools })));
    const blocks = wire.trim().split('\n\n');
    expect(blocks.map((b) => b.split('\n')[0])).toEqual(['id: 1', 'id: 2', 'id: 3', 'id: 4', 'event: toolrun_end']);
    expect(blocks[1]!.split('\n')).toEqual(['id: 2', 'event: tool_execution_update', expect.stringMatching(/^data: \{"type":"tool_execution_update",.*\}$/)]);
    expect(blocks.at(-1)).toMatch(/^event: toolrun_end\ndata: \{"value":\{"messages":\[/);
  });

  it('keeps an idle connection alive with comments while a tool works', async () => {
    const hold = gate();
    const slow = defineTool({ name: 'slow', input: v.object({}), execute: () => hold.promise.then(() => 'done') });
    const stream = toEventStream(runTools([{ id: 'c', name: 'slow', arguments: {} }], { tools: [slow] }), { keepAliveMs: 5 });
    const reader = stream.getReader();
    const decoder = new TextDecoder();
    let seen = '';
    while (!seen.includes(': keep-alive')) seen += decoder.decode((await reader.read()).value);
    hold.open();
    for (let r = await reader.read(); !r.done; r = await reader.read()) seen += decoder.decode(r.value);
    expect(seen).toMatch(/event: toolrun_end/);
  });

  it('values that are not JSON go in a fixed form: bigint as text, a cycle, a Date, an unreadable field', async () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    const odd = defineTool({
      name: 'odd',
      input: v.object({}),
      async *execute() {
        yield { big: 10n, cyclic, when: new Date(0), get bad(): never { throw new Error('getter'); }, fn: () => 1 };
        return 'ok';
      },
    });
    const events = [];
    for await (const e of fromEventStream(toEventStream(runTools([{ id: 'c', name: 'odd', arguments: {} }], { tools: [odd] })))) events.push(e);
    expect(events.find((e) => e.type === 'tool_execution_update')).toMatchObject({ progress: { big: '10', cyclic: { a: 1, self: '[Circular]' }, when: '1970-01-01T00:00:00.000Z', bad: '[Unreadable]' } });
  });
});

describe('W2: fromEventStream refuses a broken or malformed stream with a clear error', () => {
  const read = async (body: ReadableStream<Uint8Array>, options?: { maxEventChars?: number }) => {
    const out: unknown[] = [];
    try {
      for await (const e of fromEventStream(body, options)) out.push(e);
      return { out };
    } catch (error) {
      return { out, error: error as EventStreamError };
    }
  };

  it('data that is not JSON, an event without a type, a cut stream, a failed run, a line too long', async () => {
    const start = 'id: 1\nevent: tool_execution_start\ndata: {"type":"tool_execution_start","toolCallId":"a","toolName":"t","index":0,"args":{}}\n\n';
    const notJson = await read(bodyOf(`${start}data: <script>alert(1)</script>\n\n`));
    expect(notJson.out).toHaveLength(1);
    expect(notJson.error).toBeInstanceOf(EventStreamError);
    expect(notJson.error).toMatchObject({ code: 'malformed', message: expect.stringContaining('event 2\'s data is not JSON: "<script>alert(1)</script>"') });
    // Longer data is quoted cut to 200 characters, the marker outside the quotes.
    expect((await read(bodyOf(`data: <${'x'.repeat(299)}\n\n`))).error).toMatchObject({ code: 'malformed', message: expect.stringMatching(new RegExp(`data is not JSON: "<${'x'.repeat(199)}"… \\(300 chars\\)$`)) });
    expect((await read(bodyOf('data: [1,2]\n\n'))).error).toMatchObject({ code: 'malformed' });
    expect((await read(bodyOf('data: {"type":5}\n\n'))).error).toMatchObject({ code: 'malformed' });
    const cut = await read(bodyOf(start));
    expect(cut.out).toHaveLength(1);
    expect(cut.error).toMatchObject({ code: 'broken', message: expect.stringContaining('ended after 1 events without the run\'s toolrun_end') });
    expect((await read(bodyOf('<html>502 Bad Gateway</html>'))).error).toMatchObject({ code: 'broken' });
    expect((await read(bodyOf('event: toolrun_error\ndata: {"name":"TypeError","message":"bad options"}\n\n'))).error).toMatchObject({
      code: 'run_failed',
      message: 'fromEventStream: the run failed on the server: TypeError: bad options',
    });
    const long = await read(bodyOf(`data: "${'x'.repeat(5000)}`), { maxEventChars: 1000 });
    expect(long.error).toMatchObject({ code: 'too_large', message: expect.stringContaining('longer than 1000 characters') });
    const longEvent = await read(bodyOf(`data: "${'x'.repeat(5000)}"\n\n`), { maxEventChars: 1000 });
    expect(longEvent.error).toMatchObject({ code: 'too_large' });
  });

  it('a run that throws ends the stream with toolrun_error, read back as run_failed', async () => {
    async function* broken(): AsyncGenerator<ToolEvent, ToolBatch> {
      yield { type: 'tool_execution_start', toolCallId: 'a', toolName: 't', index: 0, args: {} };
      throw new TypeError('the model provider went away');
    }
    const result = await read(toEventStream(broken()));
    expect(result.out).toHaveLength(1);
    expect(result.error).toMatchObject({ code: 'run_failed', message: 'fromEventStream: the run failed on the server: TypeError: the model provider went away' });
  });

  it('refuses what is not a body or a run, with the value in the message', () => {
    expect(() => toEventStream(42 as never)).toThrow(/toEventStream: expected a run .* received number 42/);
    expect(() => toEventStream(runTools([], { tools }), { keepAliveMs: -1 })).toThrow(/keepAliveMs/);
  });
});

describe('W3: the client going away stops the run; every call still gets its result on the server', () => {
  it('aborting the fetch mid-batch aborts the running tool, its finally runs, and onEnd has the whole batch', async () => {
    const started = gate();
    const cleaned = gate<string>();
    const ended = gate<EventStreamEnd<ToolBatch>>();
    const results: string[] = [];
    const watch = defineTool({
      name: 'watch',
      input: v.object({}),
      async *execute(_input, { signal }) {
        try {
          yield 'watching';
          started.open();
          await new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true }));
        } finally {
          cleaned.open(signal.aborted ? (signal.reason as Error).name : 'not aborted');
        }
        return 'never';
      },
    });
    const calls = [
      { id: 'w1', name: 'watch', arguments: {} },
      { id: 'w2', name: 'watch', arguments: {} },
    ];
    server = await serveWeb(() =>
      new Response(
        toEventStream((signal) => runTools(calls, { tools: [watch], signal, mode: 'sequential' }), {
          onEvent: (e) => void (e.type === 'tool_result' && results.push(`${e.toolCallId} ${e.message.isError}`)),
          onEnd: (end) => ended.open(end),
        }),
      ),
    );
    const client = new AbortController();
    const response = await fetch(`${server.url}/run`, { method: 'POST', signal: client.signal });
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const event of fromEventStream(response.body!)) {
          seen.push(event.type);
          if (event.type === 'tool_execution_update') {
            await started.promise;
            client.abort();
          }
        }
      })(),
    ).rejects.toThrow();
    expect(seen).toContain('tool_execution_update');
    expect(await cleaned.promise).toBe('AbortError');
    const end = await ended.promise;
    if (end.status !== 'cancelled') throw new Error(`ended ${end.status}`);
    expect(end.value?.aborted).toBe(true);
    expect(end.value?.messages.map((m) => m.toolCallId)).toEqual(['w1', 'w2']);
    expect(results).toEqual(['w1 true', 'w2 true']);
  });

  it('breaking out of fromEventStream cancels the body, which returns a run passed as it is (A5)', async () => {
    const cleaned = gate();
    const ended = gate<EventStreamEnd<ToolBatch>>();
    const endless = defineTool({
      name: 'endless',
      input: v.object({}),
      async *execute() {
        try {
          for (let i = 0; ; i++) yield i;
        } finally {
          cleaned.open();
        }
      },
    });
    const stream = toEventStream(runTools([{ id: 'e', name: 'endless', arguments: {} }], { tools: [endless] }), { onEnd: (e) => ended.open(e) });
    for await (const event of fromEventStream(stream)) if (event.type === 'tool_execution_update') break;
    await cleaned.promise;
    expect((await ended.promise).status).toBe('cancelled');
  });
});

describe('W4: bounded buffering: the run is read only as fast as the client reads', () => {
  it('a client that does not read holds the run after a few events', async () => {
    let produced = 0;
    const many = defineTool({
      name: 'many',
      input: v.object({}),
      async *execute() {
        for (let i = 0; i < 10_000; i++) yield i;
        return 'done';
      },
    });
    const stream = toEventStream(runTools([{ id: 'm', name: 'many', arguments: {} }], { tools: [many] }), { onEvent: () => produced++ });
    await settle(20);
    expect(produced).toBeLessThanOrEqual(2);
    const reader = stream.getReader();
    for (let i = 0; i < 10; i++) await reader.read();
    await settle(20);
    expect(produced).toBeLessThanOrEqual(13);
    await reader.cancel();
  });
});
