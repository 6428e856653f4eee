/**
 * Issue 20, item 4: what a served tool can do besides returning text, with real SDK clients
 * over Streamable HTTP on 127.0.0.1: every MCP content type and back through mcpTools,
 * `ToolContext.client` (log lines and `logging/setLevel`, sampling, elicitation; the errors
 * when the client cannot be asked), approvals asked through elicitation (contract H2), and
 * resumable SSE streams. No sleeps: tools wait on gates the spec opens, and a ping round trip
 * orders the spec after notifications written before a response.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ElicitRequestSchema, EmptyResultSchema, LoggingMessageNotificationSchema, type CallToolResult, type ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import * as v from 'valibot';
import { afterEach, describe, expect, it } from 'vitest';
import { defineTool, mcpTools, NO_CLIENT, runTools, toAnthropic, toOpenAIChat, withRetry, withTimeout, type ContentBlock, type Tool, type ToolClient } from '../../lib/index.ts';
import { serveMcp, type ServeMcpOptions } from '../../lib/mcp/index.ts';
import { collect } from '../helpers.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function serve(tools: readonly Tool[], options: ServeMcpOptions = {}): Promise<URL> {
  const served = await serveMcp(tools, { ...options, http: { port: 0, ...options.http } });
  cleanups.push(async () => void (await served.close()));
  return served.url!;
}

async function connect(url: URL, capabilities: ClientCapabilities = {}): Promise<Client> {
  const client = new Client({ name: 'spec', version: '0' }, { capabilities });
  await client.connect(new StreamableHTTPClientTransport(url));
  cleanups.push(() => client.close());
  return client;
}

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const EVERY_BLOCK: ContentBlock[] = [
  { type: 'text', text: 'all kinds:' },
  { type: 'image', data: PNG, mimeType: 'image/png' },
  { type: 'audio', data: 'UklGRiYAAABXQVZF', mimeType: 'audio/wav' },
  { type: 'resource_link', uri: 'file:///r/a.txt', name: 'a.txt', title: 'A', description: 'the a file', mimeType: 'text/plain', size: 12 },
  { type: 'resource', resource: { uri: 'test://text', mimeType: 'text/plain', text: 'embedded text' } },
  { type: 'resource', resource: { uri: 'test://bin', mimeType: 'application/octet-stream', blob: 'aGkK' } },
];

describe('every MCP content type, served and read back', () => {
  // Fails if a block type becomes an error result or text on the way out, or on the way back in mcpTools.
  it('a ToolResult with text, image, audio, resource link and embedded resources reaches an SDK client as the same MCP blocks, and mcpTools gives the same blocks back', async () => {
    const mixed = defineTool({ name: 'mixed', input: v.object({}), execute: () => ({ content: EVERY_BLOCK, details: { count: 6 } }) });
    const url = await serve([mixed], { perTool: { mixed: { output: v.object({ count: v.number() }) } } });
    const client = await connect(url);
    const raw = (await client.callTool({ name: 'mixed', arguments: {} })) as CallToolResult;
    expect(raw).toEqual({ content: EVERY_BLOCK, structuredContent: { count: 6 }, isError: false });

    const tools = await mcpTools(client);
    const batch = await collect(runTools([{ id: 'c1', name: 'mixed', arguments: {} }], { tools }));
    const message = batch.batch.messages[0]!;
    expect(message).toMatchObject({ isError: false, content: EVERY_BLOCK, details: { structuredContent: { count: 6 } } });
    // The provider formats turn what no provider takes in a tool result into text, never drop it.
    expect(toOpenAIChat([message])[0]!.content).toBe(
      [
        'all kinds:',
        '[image omitted: image/png, 70 bytes; this tool result format carries text only]',
        '[audio: audio/wav, 12 bytes; not sent to the model]',
        '[resource link: file:///r/a.txt "a.txt" (text/plain): the a file]',
        '[resource test://text (text/plain)]\nembedded text',
        '[resource test://bin: application/octet-stream, 3 bytes of binary data; not sent to the model]',
      ].join('\n'),
    );
    const anthropic = toAnthropic([message]).content[0] as { content: { type: string }[] };
    expect(anthropic.content.map((block) => block.type)).toEqual(['text', 'image', 'text', 'text', 'text', 'text']);
  });

  // Fails if a malformed block a tool returns is passed on (the client would reject the whole result) instead of failing that call.
  it('a tool returning a malformed MCP block gets an error result naming it', async () => {
    const bad = defineTool({ name: 'bad', input: v.object({}), execute: () => ({ content: [{ type: 'resource', resource: { uri: 'x:' } }] }) });
    const client = await connect(await serve([bad]));
    const raw = (await client.callTool({ name: 'bad', arguments: {} })) as CallToolResult;
    expect(raw.isError).toBe(true);
    expect((raw.content[0] as { text: string }).text).toContain('content[0] is a resource block whose resource has neither a string text nor a string blob');
  });
});

describe('ToolContext.client over MCP: log lines and logging/setLevel', () => {
  // Fails if log lines are not sent, or if setLevel does not filter them (a lower level getting through).
  it('log lines become notifications/message with the tool name as logger; after logging/setLevel only that level and above are sent', async () => {
    const logs = defineTool({
      name: 'logs',
      input: v.object({}),
      execute: (_input, { client }) => {
        client.log('debug', 'a detail');
        client.log('info', { step: 1 });
        client.log('warning', 'careful', 'custom-logger');
        client.log('error', 10n);
        return 'logged';
      },
    });
    const client = await connect(await serve([logs]));
    const seen: unknown[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void seen.push(n.params));
    const calls = async (): Promise<unknown[]> => {
      seen.length = 0;
      expect(await client.callTool({ name: 'logs', arguments: {} })).toMatchObject({ isError: false });
      // Written before the response on the same stream: one more round trip orders us after their handlers.
      await client.ping();
      return [...seen];
    };
    expect(await calls()).toEqual([
      { level: 'debug', logger: 'logs', data: 'a detail' },
      { level: 'info', logger: 'logs', data: { step: 1 } },
      { level: 'warning', logger: 'custom-logger', data: 'careful' },
      { level: 'error', logger: 'logs', data: '10' },
    ]);
    await client.setLoggingLevel('warning');
    expect(await calls()).toEqual([
      { level: 'warning', logger: 'custom-logger', data: 'careful' },
      { level: 'error', logger: 'logs', data: '10' },
    ]);
    // A level that is none of MCP's is refused (the client's input is checked), and changes nothing.
    await expect(client.request({ method: 'logging/setLevel', params: { level: 'loud' } } as never, EmptyResultSchema)).rejects.toThrow(/-32602|Invalid/);
    expect(await calls()).toHaveLength(2);
  });
});

describe('ToolContext.client over MCP: sampling and elicitation with a real SDK client', () => {
  const ask = defineTool({
    name: 'ask',
    input: v.object({ prompt: v.string() }),
    async execute({ prompt }, { client }) {
      const answer = await client.sample({ messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens: 50, systemPrompt: 'be brief' });
      return `${answer.model} said ${answer.content.type === 'text' ? answer.content.text : answer.content.type} (${answer.stopReason ?? 'no reason'})`;
    },
  });
  const form = defineTool({
    name: 'form',
    input: v.object({}),
    async execute(_input, { client }) {
      const answer = await client.elicit({
        message: 'Who are you?',
        requestedSchema: { type: 'object', properties: { name: { type: 'string' }, age: { type: 'integer' } }, required: ['name'] },
      });
      return `${answer.action} ${JSON.stringify(answer.content ?? null)}`;
    },
  });

  // Fails if sample does not reach the client's model, or the answer is not what the client sent.
  it('sample sends sampling/createMessage to the client and returns its answer; canSample is true', async () => {
    let flags: unknown;
    const probe = defineTool({ name: 'probe', input: v.object({}), execute: (_i, { client }) => ((flags = [client.canSample, client.canElicit]), 'ok') });
    const client = await connect(await serve([ask, probe]), { sampling: {} });
    const requests: unknown[] = [];
    client.setRequestHandler(CreateMessageRequestSchema, (request) => {
      requests.push(request.params);
      return { role: 'assistant', content: { type: 'text', text: 'hello' }, model: 'client-model', stopReason: 'endTurn' };
    });
    expect(await client.callTool({ name: 'ask', arguments: { prompt: 'greet' } })).toEqual({ content: [{ type: 'text', text: 'client-model said hello (endTurn)' }], isError: false });
    expect(requests).toEqual([{ messages: [{ role: 'user', content: { type: 'text', text: 'greet' } }], maxTokens: 50, systemPrompt: 'be brief' }]);
    await client.callTool({ name: 'probe', arguments: {} });
    expect(flags).toEqual([true, false]);
  });

  // Fails if a malformed answer from the client (untrusted) reaches the tool instead of failing the call.
  it("a client's malformed sampling answer is an error result, never handed to the tool", async () => {
    const client = await connect(await serve([ask]), { sampling: {} });
    client.setRequestHandler(CreateMessageRequestSchema, () => ({ role: 'assistant', content: { type: 'text', text: 5 }, model: 'm' }) as never);
    const result = (await client.callTool({ name: 'ask', arguments: { prompt: 'x' } })) as CallToolResult;
    expect(result.isError).toBe(true);
  });

  // Fails if the user's answer does not come back, or an answer that does not match the requested schema reaches the tool.
  it('elicit sends elicitation/create (form) and returns the accepted content; content that does not match the schema is an error result', async () => {
    const client = await connect(await serve([form]), { elicitation: {} });
    const answers = [
      { action: 'accept', content: { name: 'Ada', age: 36 } },
      { action: 'decline' },
      { action: 'accept', content: { age: 'old' } },
    ];
    const messages: unknown[] = [];
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      messages.push(request.params.message);
      return answers.shift() as never;
    });
    expect(await client.callTool({ name: 'form', arguments: {} })).toEqual({ content: [{ type: 'text', text: 'accept {"name":"Ada","age":36}' }], isError: false });
    expect(await client.callTool({ name: 'form', arguments: {} })).toEqual({ content: [{ type: 'text', text: 'decline null' }], isError: false });
    const mismatch = (await client.callTool({ name: 'form', arguments: {} })) as CallToolResult;
    expect(mismatch.isError).toBe(true);
    expect((mismatch.content[0] as { text: string }).text).toMatch(/does not match requested schema/);
    expect(messages).toEqual(['Who are you?', 'Who are you?', 'Who are you?']);
  });

  // Fails if a client without the capability is asked anyway (it would answer "method not found"), or the error does not say why.
  it('a client without sampling or elicitation: the call ends with an error result saying the client did not declare it', async () => {
    const client = await connect(await serve([ask, form]));
    const sampled = (await client.callTool({ name: 'ask', arguments: { prompt: 'x' } })) as CallToolResult;
    const elicited = (await client.callTool({ name: 'form', arguments: {} })) as CallToolResult;
    expect(sampled).toMatchObject({ isError: true, content: [{ type: 'text', text: expect.stringContaining('did not declare the sampling capability (tool "ask")') }] });
    expect(elicited).toMatchObject({ isError: true, content: [{ type: 'text', text: expect.stringContaining('did not declare the elicitation capability (form mode) (tool "form")') }] });
  });
});

describe('approvals over MCP through elicitation (contract H2)', () => {
  // Fails if a call needing approval runs without the user's accept, or is not asked about through elicitation.
  it('accept runs the call; decline and cancel give the H2 rejected result and the tool never runs', async () => {
    let ran = 0;
    const remove = defineTool({ name: 'remove', input: v.object({ path: v.string() }), needsApproval: true, execute: ({ path }) => (ran++, `removed ${path}`) });
    const client = await connect(await serve([remove]), { elicitation: {} });
    const actions = ['accept', 'decline', 'cancel'];
    const asked: { message: string; requestedSchema: unknown }[] = [];
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push({ message: request.params.message, requestedSchema: (request.params as { requestedSchema: unknown }).requestedSchema });
      return { action: actions.shift() } as never;
    });
    const call = async (): Promise<CallToolResult> => (await client.callTool({ name: 'remove', arguments: { path: '/tmp/x' } })) as CallToolResult;
    expect(await call()).toEqual({ content: [{ type: 'text', text: 'removed /tmp/x' }], isError: false });
    const declined = await call();
    const cancelled = await call();
    expect(ran).toBe(1);
    expect(declined.isError).toBe(true);
    expect((declined.content[0] as { text: string }).text).toMatch(/^A person denied this call to tool "remove", so it was not run\..*the user declined it in the MCP client/s);
    expect((cancelled.content[0] as { text: string }).text).toMatch(/the user dismissed the approval request in the MCP client/);
    expect(asked[0]!.message).toContain('The tool "remove" asks for your approval before it runs, with this input:\n{"path":"/tmp/x"}');
    expect(asked[0]!.requestedSchema).toEqual({ type: 'object', properties: {} });
  });

  // Fails if the server's own approve handler is bypassed, or the client is asked when the handler answered.
  it("the server's own approve answers first; the client's user is asked only when it answers undefined", async () => {
    const remove = defineTool({ name: 'remove', input: v.object({ path: v.string() }), needsApproval: true, execute: ({ path }) => `removed ${path}` });
    const url = await serve([remove], { approve: (request) => ((request.input as { path: string }).path === '/safe' ? { approvalId: request.approvalId, approved: true } : undefined) });
    const client = await connect(url, { elicitation: {} });
    let asked = 0;
    client.setRequestHandler(ElicitRequestSchema, () => (asked++, { action: 'decline' }) as never);
    expect(await client.callTool({ name: 'remove', arguments: { path: '/safe' } })).toMatchObject({ isError: false });
    expect(asked).toBe(0);
    expect(await client.callTool({ name: 'remove', arguments: { path: '/other' } })).toMatchObject({ isError: true });
    expect(asked).toBe(1);
  });
});

describe('ToolContext.client in process', () => {
  // Fails if the default client answers instead of rejecting, or RunToolsOptions.client is not what tools see.
  it('without RunToolsOptions.client, log is dropped and sample rejects (an error result); with one, tools use it with their call signal', async () => {
    const tool = defineTool({
      name: 'chat',
      input: v.object({}),
      async execute(_input, { client }) {
        client.log('info', 'starting');
        const answer = await client.sample({ messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 5 });
        return answer.content.type === 'text' ? answer.content.text : '';
      },
    });
    const plain = await collect(runTools([{ id: '1', name: 'chat', arguments: {} }], { tools: [tool] }));
    expect(plain.batch.messages[0]).toMatchObject({ isError: true, content: [{ type: 'text', text: expect.stringContaining('this call has no client whose model could be asked') }] });
    const lines: unknown[] = [];
    let signal: AbortSignal | undefined;
    const client: ToolClient = {
      ...NO_CLIENT,
      canSample: true,
      log: (level, data) => void lines.push([level, data]),
      sample: (_request, options) => ((signal = options?.signal), Promise.resolve({ role: 'assistant', content: { type: 'text', text: 'hello' }, model: 'local' })),
    };
    const routed = await collect(runTools([{ id: '1', name: 'chat', arguments: {} }], { tools: [tool], client }));
    expect(routed.batch.messages[0]).toMatchObject({ isError: false, content: [{ type: 'text', text: 'hello' }] });
    expect(lines).toEqual([['info', 'starting']]);
    expect(signal).toBeInstanceOf(AbortSignal);
    expect(() => runTools([], { tools: [], client: {} as ToolClient })).toThrow(/options.client must be a ToolClient/);
  });
});

describe('ToolContext.client through composition', () => {
  // Fails if a wrapper builds its child's context without the client (a spread copies no getter): the child would see undefined.
  it('withRetry and withTimeout give the wrapped tool the caller’s client', async () => {
    const seen: unknown[] = [];
    const inner = defineTool({ name: 'inner', input: v.object({}), execute: (_i, { client }) => (client.log('info', 'from inner'), 'ok') });
    const client: ToolClient = { ...NO_CLIENT, log: (level, data) => void seen.push([level, data]) };
    for (const tool of [withRetry(inner, { retries: 1 }), withTimeout(inner, 60_000)]) {
      const { batch } = await collect(runTools([{ id: '1', name: 'inner', arguments: {} }], { tools: [tool], client }));
      expect(batch.messages[0]).toMatchObject({ isError: false });
    }
    expect(seen).toEqual([
      ['info', 'from inner'],
      ['info', 'from inner'],
    ]);
  });
});

describe('resumable SSE streams (server-sse-polling)', () => {
  // Fails if the POST stream carries no event ids / priming event, or if a client that lost its stream cannot get the result with Last-Event-ID.
  it('a client of protocol 2025-11-25 gets a priming event with id and retry; after its stream breaks mid-call, GET with Last-Event-ID delivers the result', async () => {
    const hold = gate();
    const started = gate();
    const slow = defineTool({
      name: 'slow',
      input: v.object({}),
      async execute() {
        started.open();
        await hold.promise;
        return 'done late';
      },
    });
    const url = await serve([slow]);
    const client = await connect(url);
    const sessionId = (client.transport as StreamableHTTPClientTransport).sessionId!;
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' };
    const abort = new AbortController();
    const post = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 77, method: 'tools/call', params: { name: 'slow', arguments: {} } }), signal: abort.signal });
    expect(post.headers.get('content-type')).toContain('text/event-stream');
    const reader = post.body!.getReader();
    let text = '';
    while (!text.includes('\n\n')) text += new TextDecoder().decode((await reader.read()).value);
    const priming = /^id: (\S+)\nretry: 1000\ndata: \n\n/.exec(text);
    expect(priming).not.toBeNull();
    await started.promise;
    // The client's connection breaks while the call runs; the result is written after that.
    abort.abort();
    hold.open();
    const resumed = await fetch(url, { method: 'GET', headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25', 'last-event-id': priming![1]! } });
    expect(resumed.status).toBe(200);
    const again = resumed.body!.getReader();
    let replay = '';
    while (!replay.includes('"id":77')) replay += new TextDecoder().decode((await again.read()).value);
    await again.cancel();
    expect(replay).toContain('"text":"done late"');
    const unknown = await fetch(url, { method: 'GET', headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25', 'last-event-id': 'nope.1' } });
    expect(unknown.ok).toBe(false);
    await unknown.body?.cancel();
  });
});
