/**
 * Contract S4 end to end, over a real socket: a `node:http` server on 127.0.0.1 serves a
 * recorded SSE stream slowly (one event every {@link GAP_MS} ms, as a model would stream),
 * the official `@anthropic-ai/sdk` and `openai` clients read it (pointed at the server
 * with `baseURL`), the stream adapters turn it into calls and `runTools` runs them.
 *
 * What is asserted is an order, read from a logical clock ({@link stamp}: a counter, not
 * the wall clock) that the server and the tools tick as things happen — when each event
 * was written, when each tool started — never from sleeps or durations: the first tool
 * starts after its call's last argument fragment was written and before the server wrote
 * the message's last event. The server holds that last event until the tool's body has
 * started (a gate), so the order holds however slow the machine is.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  defineTool,
  fromAnthropicStream,
  fromOpenAIChatStream,
  fromOpenAIResponsesStream,
  runTools,
  toAnthropic,
  type ToolBatch,
  type ToolCallStreamEnd,
  type ToolEvent,
} from '../../lib/index.ts';
import { corpusSkipNote, hasCorpus, readCorpusJson } from './corpus.ts';
import { toSSE } from './stream-helpers.ts';

/** A logical clock: each call returns the next number, so two stamps compare by which came first. */
let clock = 0;
const stamp = (): number => ++clock;

/**
 * Time between two events the server writes, in ms: each event goes out in its own write,
 * as a model streams. No assertion depends on it (the orders are held by gates), so it is
 * kept small: a larger gap only adds idle wall time to `npm test`.
 */
const GAP_MS = 5;

type Recorded = { event?: string; data: unknown };

/** What the server serves next, and what it wrote when. */
interface Script {
  events: Recorded[];
  /** The logical time ({@link stamp}) at which event i was written. */
  writtenAt: number[];
  /** The request body the client sent. */
  request?: unknown;
  /**
   * The server writes event `before` only once `open` has settled: a gate on what the test
   * waits for (tools started), so "before the stream ended" does not race the clock.
   */
  gate?: { before: number; open: Promise<unknown> } | undefined;
  /** The client closed the connection before the last event. */
  closedEarly: boolean;
  /** Settles when the response's connection closes. */
  closed: Promise<void>;
  onClose: () => void;
}

let server: Server;
let base = '';
function newScript(events: Recorded[]): Script {
  let onClose!: () => void;
  const closed = new Promise<void>((resolve) => (onClose = resolve));
  return { events, writtenAt: [], closedEarly: false, closed, onClose };
}

let script: Script = newScript([]);

function serve(events: Recorded[], gate?: Script['gate']): Script {
  script = newScript(events);
  if (gate !== undefined) script.gate = gate;
  return script;
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const current = script;
  current.request = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  let i = 0;
  let done = false;
  res.on('close', () => {
    if (!done) current.closedEarly = true;
    current.onClose();
  });
  const writeNext = (): void => {
    if (res.destroyed) return;
    const event = current.events[i];
    if (event === undefined) {
      done = true;
      res.end();
      return;
    }
    const gate = current.gate;
    if (gate !== undefined && gate.before === i) {
      current.gate = undefined;
      // Written in a later task than the one the gate opened in, so strictly after it.
      void gate.open.then(() => setTimeout(writeNext, GAP_MS));
      return;
    }
    res.write(toSSE([event]));
    current.writtenAt[i] = stamp();
    i++;
    setTimeout(writeNext, GAP_MS);
  };
  writeNext();
}

beforeAll(async () => {
  server = createServer((req, res) => void handle(req, res).catch(() => res.destroy()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** Drives a run; notes when each tool_execution_start reached the consumer. */
async function drive(run: AsyncGenerator<ToolEvent, ToolBatch, undefined>) {
  const startedAt: number[] = [];
  const events: ToolEvent[] = [];
  for (;;) {
    const step = await run.next();
    if (step.done === true) return { batch: step.value, events, startedAt };
    if (step.value.type === 'tool_execution_start') startedAt[step.value.index] = stamp();
    events.push(step.value);
  }
}

function lookupTools(names: string[]) {
  const bodyStartedAt: number[] = [];
  const starts = new Map<number, () => void>();
  const started = new Map<number, Promise<void>>();
  /** Settles when the body of call `index` has started. */
  const bodyStarted = (index: number): Promise<void> => {
    if (!started.has(index)) started.set(index, new Promise<void>((resolve) => starts.set(index, resolve)));
    return started.get(index)!;
  };
  const tools = names.map((name) =>
    defineTool({
      name,
      input: { type: 'object' },
      execute: (input, { index }) => {
        bodyStartedAt[index] = stamp();
        void bodyStarted(index);
        starts.get(index)!();
        return `${name}(${JSON.stringify(input)})`;
      },
    }),
  );
  return { tools, bodyStartedAt, bodyStarted };
}

/** Index of the first recorded event whose data matches. */
function indexOf(events: Recorded[], test: (data: any) => boolean): number {
  const i = events.findIndex((e) => test(e.data));
  if (i < 0) throw new Error('event not found');
  return i;
}

describe.skipIf(!hasCorpus)(`S4 over real HTTP: the official SDKs read a slow recorded stream; tools start before it ends${corpusSkipNote}`, () => {
  it('@anthropic-ai/sdk messages.stream(): the first tool starts before the stream ends, and finalMessage() still resolves', async () => {
    const recorded = readCorpusJson('anthropic/openllmetry__anthropic_tools_streaming_legacy.json').interactions[0];
    const { tools, bodyStartedAt, bodyStarted } = lookupTools(['get_weather', 'get_time']);
    // The last event waits until both tools ran: a runner that waited for the stream's end
    // would never open the gate, and the spec would fail on its time limit.
    const s = serve(recorded.response.events, { before: recorded.response.events.length - 1, open: Promise.all([bodyStarted(0), bodyStarted(1)]) });
    const client = new Anthropic({ apiKey: 'test-key', baseURL: base, maxRetries: 0 });
    const stream = client.messages.stream(recorded.request.body);
    let end: ToolCallStreamEnd | undefined;
    const { batch, startedAt } = await drive(runTools(fromAnthropicStream(stream, { onMessageEnd: (e) => (end = e) }), { tools }));

    const lastWrite = s.writtenAt.at(-1)!;
    const firstArgsDone = s.writtenAt[indexOf(s.events, (d) => d.type === 'content_block_stop' && d.index === 1)]!;
    expect(startedAt[0]).toBeGreaterThan(firstArgsDone);
    expect(startedAt[0]).toBeLessThan(lastWrite);
    expect(bodyStartedAt[0]).toBeLessThan(lastWrite);
    // The second call, too, ran before the message's last event was written.
    expect(startedAt[1]).toBeLessThan(lastWrite);

    expect(batch.messages.map((m) => [m.toolCallId, m.isError])).toEqual([
      ['toolu_014x5X91kx3fvdhpLvwXZWE2', false],
      ['toolu_0121kXsENLvoDZ72LCuAnCCz', false],
    ]);
    expect(end).toEqual({ status: 'complete', stopReason: 'tool_use', calls: 2, incompleteCalls: 0 });
    // The SDK's own message is complete: the adapter read the stream to its end.
    const message = await stream.finalMessage();
    expect(message.content.filter((b) => b.type === 'tool_use').map((b) => (b as { id: string }).id)).toEqual(toAnthropic(batch.messages).content.map((b) => b.tool_use_id));
    expect(s.closedEarly).toBe(false);
  });

  it('@anthropic-ai/sdk messages.create({ stream: true }) with a signal: aborting mid-stream returns the aborted batch and closes the connection', async () => {
    const recorded = readCorpusJson('anthropic/openllmetry__anthropic_tools_streaming_legacy.json').interactions[0];
    const controller = new AbortController();
    // The last event waits until the server sees the connection close, so the stream is still
    // open when the user aborts however slowly this process runs (ungated, a starved consumer
    // could let the server write everything first). If the abort did not close the
    // connection, the gate would never open and the spec would fail on its time limit.
    let connectionClosed!: () => void;
    const s = serve(recorded.response.events, { before: recorded.response.events.length - 1, open: new Promise<void>((resolve) => (connectionClosed = resolve)) });
    void s.closed.then(connectionClosed);
    const client = new Anthropic({ apiKey: 'test-key', baseURL: base, maxRetries: 0 });
    const params = recorded.request.body as Anthropic.MessageCreateParamsNonStreaming;
    const stream = await client.messages.create({ ...params, stream: true }, { signal: controller.signal });
    const { tools } = lookupTools(['get_weather', 'get_time']);
    const run = runTools(fromAnthropicStream(stream), { tools, signal: controller.signal });
    const events: ToolEvent[] = [];
    let batch: ToolBatch | undefined;
    for (;;) {
      const step = await run.next();
      if (step.done === true) {
        batch = step.value;
        break;
      }
      events.push(step.value);
      // The user presses Esc as soon as the first result is in.
      if (step.value.type === 'tool_result') controller.abort();
    }
    expect(batch.aborted).toBe(true);
    expect(batch.messages.map((m) => m.toolCallId)).toEqual(['toolu_014x5X91kx3fvdhpLvwXZWE2']);
    // The SDK request was aborted with the same signal: the server sees the connection close early.
    await s.closed;
    expect(s.closedEarly).toBe(true);
    expect(s.writtenAt.length).toBeLessThan(s.events.length);
  });

  it('openai chat.completions.create({ stream: true }): the first tool starts when the second call begins, before the stream ends', async () => {
    const recorded = readCorpusJson('openai-chat/openllmetry__openai_streaming_parallel.json').interactions[0];
    const { tools, bodyStartedAt, bodyStarted } = lookupTools(['get_current_weather']);
    const finishAt = indexOf(recorded.response.events, (d) => d?.choices?.[0]?.finish_reason === 'tool_calls');
    // The finish event waits until the first tool ran (never, for a runner that waits for it).
    const s = serve(recorded.response.events, { before: finishAt, open: bodyStarted(0) });
    const client = new OpenAI({ apiKey: 'test-key', baseURL: `${base}/v1`, maxRetries: 0 });
    const params = recorded.request.body as OpenAI.ChatCompletionCreateParamsNonStreaming;
    const stream = await client.chat.completions.create({ ...params, stream: true });
    const { batch, startedAt } = await drive(runTools(fromOpenAIChatStream(stream), { tools }));

    const secondCallBegins = s.writtenAt[indexOf(s.events, (d) => d?.choices?.[0]?.delta?.tool_calls?.[0]?.index === 1)]!;
    const finish = s.writtenAt[indexOf(s.events, (d) => d?.choices?.[0]?.finish_reason === 'tool_calls')]!;
    expect(startedAt[0]).toBeGreaterThan(secondCallBegins);
    expect(startedAt[0]).toBeLessThan(finish);
    expect(bodyStartedAt[0]).toBeLessThan(s.writtenAt.at(-1)!);
    expect(batch.messages.map((m) => [m.toolCallId, m.isError])).toEqual([
      ['call_cCPjAyfwTzboEKjVlqFrArNF', false],
      ['call_Zi4He1Ns0mozwT6f85nW1BOW', false],
    ]);
    expect((s.request as { stream: boolean }).stream).toBe(true);
  });
});

describe('S4 over real HTTP with the openai SDK\'s Responses stream (synthetic events: the corpus has no streamed Responses recording)', () => {
  it('responses.create({ stream: true }): the first call starts at its output_item.done, before response.completed', async () => {
    let seq = 0;
    const fc = (n: number, args: string, status: string) => ({ type: 'function_call', id: `fc_${n}`, call_id: `call_${n}`, name: 'lookup', arguments: args, status });
    const ev = (type: string, fields: object): Recorded => ({ event: type, data: { type, sequence_number: seq++, ...fields } });
    const events: Recorded[] = [ev('response.created', { response: { id: 'resp_1', object: 'response', status: 'in_progress', output: [] } })];
    ['{"q":"a"}', '{"q":"b"}'].forEach((a, n) => {
      events.push(ev('response.output_item.added', { output_index: n, item: fc(n, '', 'in_progress') }));
      events.push(ev('response.function_call_arguments.delta', { item_id: `fc_${n}`, output_index: n, delta: a.slice(0, 4) }));
      events.push(ev('response.function_call_arguments.delta', { item_id: `fc_${n}`, output_index: n, delta: a.slice(4) }));
      events.push(ev('response.output_item.done', { output_index: n, item: fc(n, a, 'completed') }));
    });
    events.push(ev('response.completed', { response: { id: 'resp_1', object: 'response', status: 'completed', output: [fc(0, '{"q":"a"}', 'completed'), fc(1, '{"q":"b"}', 'completed')] } }));
    const { tools, bodyStarted } = lookupTools(['lookup']);
    // response.completed waits until the first call ran (never, for a runner that waits for it).
    const s = serve(events, { before: events.length - 1, open: bodyStarted(0) });
    const client = new OpenAI({ apiKey: 'test-key', baseURL: `${base}/v1`, maxRetries: 0 });
    const stream = await client.responses.create({ model: 'gpt-test', input: 'q', stream: true });
    const { batch, startedAt } = await drive(runTools(fromOpenAIResponsesStream(stream), { tools }));
    const firstDone = s.writtenAt[indexOf(events, (d) => d.type === 'response.output_item.done')]!;
    expect(startedAt[0]).toBeGreaterThan(firstDone);
    expect(startedAt[0]).toBeLessThan(s.writtenAt.at(-1)!);
    expect(batch.messages.map((m) => m.toolCallId)).toEqual(['call_0', 'call_1']);
  });
});
