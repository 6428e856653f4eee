/**
 * mcpTools: MCP server tools as toolrun tools.
 *
 * Evidence against REAL servers (the npm reference servers, started over stdio by
 * `spec/mcp-servers.ts`): progress notifications become updates that arrive before the
 * result, an abort sends `notifications/cancelled` and ends the call `interrupted`, error
 * results stay errors, text/image content maps to blocks, parallel reads come back in call
 * order, and every server process is gone after its client closed. A fake client covers the
 * mapping rules that no reference server exercises (pagination, audio, empty errors).
 */
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpStdioTransport } from '../../lib/mcp/index.ts';

import {
  mcpContent,
  mcpTools,
  runTools,
  toAnthropicTools,
  toOpenAIChat,
  type McpCallToolResult,
  type McpClientLike,
  type McpProgress,
  type McpToolInfo,
  type ToolCall,
  type ToolContext,
  NO_CLIENT,
  type ToolEvent,
} from '../../lib/index.ts';
import { collect, gate, text } from '../helpers.ts';
import { isAlive, startServer, type StartedServer } from '../mcp-servers.ts';

const EVERYTHING = '@modelcontextprotocol/server-everything';
const FILESYSTEM = '@modelcontextprotocol/server-filesystem';

/**
 * Wraps a client so the spec sees every `callTool` that reached the server (`calls`) and the
 * order in which the server's answers came back (`answered`, the tool names).
 */
function counting(client: McpClientLike): { client: McpClientLike; calls: string[]; answered: string[] } {
  const calls: string[] = [];
  const answered: string[] = [];
  return {
    calls,
    answered,
    client: {
      listTools: (params, options) => client.listTools(params, options),
      callTool: (params, schema, options) => {
        calls.push(params.name);
        const answer = client.callTool(params, schema, options);
        answer.then(() => answered.push(params.name), () => answered.push(params.name));
        return answer;
      },
    },
  };
}

function ofType<T extends ToolEvent['type']>(events: ToolEvent[], type: T): Extract<ToolEvent, { type: T }>[] {
  return events.filter((e): e is Extract<ToolEvent, { type: T }> => e.type === type);
}

describe('mcpTools against @modelcontextprotocol/server-everything (a real server over stdio)', () => {
  let server: StartedServer;
  let spy: ReturnType<typeof counting>;
  let tools: Awaited<ReturnType<typeof mcpTools>>;

  beforeAll(async () => {
    server = await startServer(EVERYTHING, ['stdio']);
    spy = counting(server.client);
    tools = await mcpTools(spy.client);
  }, 20_000);

  afterAll(async () => {
    await server?.close();
    // No leaked process: the server exited when its client closed.
    expect(isAlive(server.pid)).toBe(false);
  });

  it('turns every listed tool into a toolrun tool whose input is the server’s inputSchema', async () => {
    const { tools: listed } = await server.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(listed.map((t) => t.name));
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['echo', 'get-sum', 'get-tiny-image', 'trigger-long-running-operation']));
    const sum = tools.find((t) => t.name === 'get-sum');
    expect(sum?.input).toEqual(listed.find((t) => t.name === 'get-sum')?.inputSchema);
    expect(sum?.description).toBe(listed.find((t) => t.name === 'get-sum')?.description);
    // The same tools can be sent to a model.
    expect(toAnthropicTools(tools).map((d) => d.name)).toEqual(listed.map((t) => t.name));
  });

  it('validates arguments with the server’s schema (JSON Schema validator) before asking the server', async () => {
    const before = spy.calls.length;
    const { batch } = await collect(runTools([{ id: 'c1', name: 'get-sum', arguments: '{"a":"one","b":2}' }], { tools }));
    expect(batch.messages[0]?.isError).toBe(true);
    expect(text(batch.messages[0]!)).toMatch(/^Invalid arguments for tool "get-sum":\n- a: expected number, got string\n/);
    expect(spy.calls.length).toBe(before);
  });

  it('progress notifications arrive as updates while the call runs, before its result; siblings are not held back', async () => {
    const calls: ToolCall[] = [
      { id: 'slow', name: 'trigger-long-running-operation', arguments: { duration: 0.6, steps: 4 } },
      { id: 'echo', name: 'echo', arguments: { message: 'hello' } },
      { id: 'sum', name: 'get-sum', arguments: { a: 2, b: 3 } },
    ];
    const events: ToolEvent[] = [];
    const answeredBefore = spy.answered.length;
    for await (const event of runTools(calls, { tools })) events.push(event);

    const updates = ofType(events, 'tool_execution_update').filter((e) => e.toolCallId === 'slow');
    // Steps 1–3 always arrive. Step 4 is sent right before the response, and the SDK runs
    // notification handlers a microtask after response handlers, so it may drop that one.
    const expected: McpProgress[] = [1, 2, 3, 4].map((progress) => ({ progress, total: 4 }));
    expect([expected.slice(0, 3), expected]).toContainEqual(updates.map((u) => u.progress));
    const slowEnd = events.findIndex((e) => e.type === 'tool_execution_end' && e.toolCallId === 'slow');
    const lastUpdate = events.lastIndexOf(updates.at(-1)!);
    expect(lastUpdate).toBeLessThan(slowEnd);
    // Live, not flushed with the result: every update is its own event before the call's end
    // (checked above by order alone; a gap in milliseconds would depend on the machine's load).
    // Siblings are not held back (O3): each call ends when the server answers it, so the end
    // events follow the order of the server's answers, whatever that order was (on a quiet
    // machine echo and sum answer first). Fails if ends were held to call order or to the
    // slowest call. The results are in call order (O2).
    const ends = ofType(events, 'tool_execution_end').map((e) => e.toolCallId);
    const names: Record<string, string> = { 'trigger-long-running-operation': 'slow', echo: 'echo', 'get-sum': 'sum' };
    expect(ends).toEqual(spy.answered.slice(answeredBefore).map((name) => names[name]));
    expect(ofType(events, 'tool_result').map((e) => e.message.toolCallId)).toEqual(['slow', 'echo', 'sum']);
    const [slow, echo, sum] = ofType(events, 'tool_result').map((e) => e.message);
    expect(text(slow!)).toBe('Long running operation completed. Duration: 0.6 seconds, Steps: 4.');
    expect(text(echo!)).toBe('Echo: hello');
    expect(sum?.isError).toBe(false);
    expect(text(sum!)).toMatch(/5/);
  });

  it('an abort mid-way sends notifications/cancelled and ends the call interrupted; the server keeps serving', async () => {
    const controller = new AbortController();
    const sentBefore = server.sent.length;
    const events: ToolEvent[] = [];
    const run = runTools([{ id: 'long', name: 'trigger-long-running-operation', arguments: { duration: 5, steps: 50 } }], {
      tools,
      signal: controller.signal,
    });
    for await (const event of run) {
      events.push(event);
      if (event.type === 'tool_execution_update' && (event.progress as McpProgress).progress === 2) controller.abort();
    }
    const end = ofType(events, 'tool_execution_end')[0];
    expect(end).toMatchObject({ outcome: 'interrupted', isError: true });
    expect(ofType(events, 'tool_execution_update').length).toBeGreaterThanOrEqual(2);
    // Stopped, not run to the end: far fewer than the operation's 50 steps were reported.
    expect(ofType(events, 'tool_execution_update').length).toBeLessThan(50);
    const sent = server.sent.slice(sentBefore) as Array<{ method?: string; id?: number; params?: { name?: string; requestId?: number } }>;
    const request = sent.find((m) => m.method === 'tools/call' && m.params?.name === 'trigger-long-running-operation');
    const cancelled = sent.find((m) => m.method === 'notifications/cancelled');
    expect(request?.id).toBeTypeOf('number');
    expect(cancelled?.params?.requestId).toBe(request?.id);
    // The connection is still usable.
    const { batch } = await collect(runTools([{ id: 'e', name: 'echo', arguments: { message: 'still here' } }], { tools }));
    expect(text(batch.messages[0]!)).toBe('Echo: still here');
  });

  // Fails if a block type is turned into text on the way in, or a field is lost.
  it('keeps image, resource link and embedded resource blocks as blocks; the provider formats see them as text', async () => {
    const { batch } = await collect(
      runTools(
        [
          { id: 'img', name: 'get-tiny-image', arguments: {} },
          { id: 'links', name: 'get-resource-links', arguments: { count: 2 } },
          { id: 'ref', name: 'get-resource-reference', arguments: { resourceType: 'Text', resourceId: 1 } },
          { id: 'structured', name: 'get-structured-content', arguments: { location: 'Chicago' } },
        ],
        { tools },
      ),
    );
    const [img, links, ref, structured] = batch.messages;
    expect(img?.content.map((b) => b.type)).toContain('image');
    const image = img?.content.find((b) => b.type === 'image');
    expect(image).toMatchObject({ type: 'image', mimeType: 'image/png' });
    expect(Buffer.from((image as { data: string }).data, 'base64').subarray(1, 4).toString()).toBe('PNG');
    expect(links?.content).toContainEqual(expect.objectContaining({ type: 'resource_link', uri: expect.stringMatching(/^demo:\/\/resource\/dynamic\/\w+\/1$/), mimeType: 'text/plain' }));
    expect(ref?.content).toContainEqual({ type: 'resource', resource: { uri: 'demo://resource/dynamic/text/1', mimeType: 'text/plain', text: expect.stringMatching(/^Resource 1: This is a plaintext resource/) } });
    expect(toOpenAIChat([links!])[0]!.content).toMatch(/\[resource link: demo:\/\/resource\/dynamic\/\w+\/1 "[^"]+" \(text\/plain\): Resource 1: plaintext resource\]/);
    expect(toOpenAIChat([ref!])[0]!.content).toMatch(/\[resource demo:\/\/resource\/dynamic\/text\/1 \(text\/plain\)\]\nResource 1: This is a plaintext resource/);
    expect(structured?.details).toEqual({ structuredContent: expect.objectContaining({ temperature: expect.any(Number) }) });
  });
});

describe('mcpTools against @modelcontextprotocol/server-filesystem on a temp folder (a real server over stdio)', () => {
  let dir: string;
  let server: StartedServer;
  let tools: Awaited<ReturnType<typeof mcpTools>>;
  const files = ['a.txt', 'b.txt', 'c.txt', 'd.txt', 'e.txt', 'f.txt'];

  beforeAll(async () => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'toolrun-mcp-fs-')));
    files.forEach((name, i) => writeFileSync(join(dir, name), `${name}: ${'x'.repeat(1000 * (files.length - i))}\n`));
    server = await startServer(FILESYSTEM, [dir]);
    tools = await mcpTools(server.client, { prefix: 'fs_' });
  }, 20_000);

  afterAll(async () => {
    await server?.close();
    expect(isAlive(server.pid)).toBe(false);
    rmSync(dir, { recursive: true, force: true });
  });

  it('prefixes names but calls the server with its own', () => {
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['fs_read_text_file', 'fs_list_directory']));
  });

  it('several parallel reads: results in call order, each with its own file, running together', async () => {
    const calls: ToolCall[] = [...files].reverse().map((name, i) => ({ id: `r${i}`, name: 'fs_read_text_file', arguments: { path: join(dir, name) } }));
    calls.splice(3, 0, { id: 'ls', name: 'fs_list_directory', arguments: JSON.stringify({ path: dir }) });
    let mostAtOnce = 0;
    const { events, batch } = await collect(runTools(calls, { tools, onInProgressChange: (ids) => (mostAtOnce = Math.max(mostAtOnce, ids.size)) }));
    expect(batch.messages.map((m) => m.toolCallId)).toEqual(calls.map((c) => c.id));
    expect(batch.messages.every((m) => !m.isError)).toBe(true);
    calls.forEach((call, i) => {
      const message = batch.messages[i]!;
      if (call.id === 'ls') expect(text(message).split('\n').sort()).toEqual(files.map((f) => `[FILE] ${f}`));
      else expect(text(message)).toMatch(new RegExp(`^${(call.arguments as { path: string }).path.split('/').pop()}: x+\\n$`));
    });
    expect(mostAtOnce).toBeGreaterThan(1);
    expect(ofType(events, 'tool_result').map((e) => e.message.toolCallId)).toEqual(calls.map((c) => c.id));
  });

  it('an isError result from the server ends as an error result with the server’s text', async () => {
    const { events, batch } = await collect(
      runTools(
        [
          { id: 'outside', name: 'fs_read_text_file', arguments: { path: '/etc/hostname' } },
          { id: 'missing', name: 'fs_read_text_file', arguments: { path: join(dir, 'nope.txt') } },
          { id: 'ok', name: 'fs_read_text_file', arguments: { path: join(dir, 'a.txt') } },
        ],
        { tools },
      ),
    );
    expect(batch.messages.map((m) => m.isError)).toEqual([true, true, false]);
    expect(text(batch.messages[0]!)).toMatch(/^Access denied - path outside allowed directories/);
    expect(text(batch.messages[1]!)).toMatch(/ENOENT: no such file or directory/);
    expect(ofType(events, 'tool_execution_end').find((e) => e.toolCallId === 'outside')?.outcome).toBe('error');
  });
});

describe('mcpTools mapping rules (a fake client)', () => {
  const schema = { type: 'object', properties: { q: { type: 'string' } } } as const;
  function fakeClient(pages: McpToolInfo[][], answer: (name: string) => McpCallToolResult | Promise<McpCallToolResult>): McpClientLike & { cursors: Array<string | undefined> } {
    const cursors: Array<string | undefined> = [];
    return {
      cursors,
      async listTools(params) {
        cursors.push(params?.cursor);
        const index = params?.cursor === undefined ? 0 : Number(params.cursor);
        const next = index + 1 < pages.length ? String(index + 1) : undefined;
        return next === undefined ? { tools: pages[index] ?? [] } : { tools: pages[index] ?? [], nextCursor: next };
      },
      async callTool(params) {
        return answer(params.name);
      },
    };
  }

  it('follows nextCursor pages, applies filter and prefix, and uses title when there is no description', async () => {
    const client = fakeClient(
      [
        [{ name: 'a', description: 'A', inputSchema: schema }],
        [{ name: 'b', title: 'The B', inputSchema: schema }, { name: 'c', inputSchema: schema, annotations: { destructiveHint: true } }],
      ],
      () => ({ content: [] }),
    );
    const tools = await mcpTools(client, {
      prefix: 'srv_',
      filter: (tool) => tool.annotations?.destructiveHint !== true,
      executionMode: (tool) => (tool.name === 'b' ? 'sequential' : 'parallel'),
      timeoutMs: 5_000,
    });
    expect(client.cursors).toEqual([undefined, '1']);
    expect(tools.map((t) => [t.name, t.description, t.executionMode, t.timeoutMs])).toEqual([
      ['srv_a', 'A', 'parallel', 5_000],
      ['srv_b', 'The B', 'sequential', 5_000],
    ]);
  });

  it('rejects a tool list with two tools of one name', async () => {
    const client = fakeClient([[{ name: 'x', inputSchema: schema }, { name: 'x', inputSchema: schema }]], () => ({ content: [] }));
    await expect(mcpTools(client)).rejects.toThrow(/two tools named "x"/);
  });

  // Fails if a well-formed MCP block is turned into text, or a malformed one is passed on as a block.
  it('mcpContent: MCP blocks kept field by field, malformed and unknown ones as placeholders; structured-only and legacy results', () => {
    expect(
      mcpContent({
        content: [
          { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' },
          { type: 'resource', resource: { uri: 'file:///x.bin', mimeType: 'application/octet-stream', blob: 'aGkK' } },
          { type: 'resource_link', uri: 'file:///y' },
          { type: 'hologram' },
        ],
      }),
    ).toEqual([
      { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' },
      { type: 'resource', resource: { uri: 'file:///x.bin', mimeType: 'application/octet-stream', blob: 'aGkK' } },
      // The placeholder of the provider formats (one content-block check, docs/adr/0005-results.md).
      { type: 'text', text: '[invalid content block omitted: a resource_link block without a string uri and name: object {"type":"resource_link","uri":"file:///y"}]' },
      { type: 'text', text: '[invalid content block omitted: a block of type "hologram"; a content block is text, image, audio, resource_link or resource: object {"type":"hologram"}]' },
    ]);
    expect(mcpContent({ content: [], structuredContent: { n: 1 } })).toEqual([{ type: 'text', text: '{"n":1}' }]);
    expect(mcpContent({ toolResult: { old: true } })).toEqual([{ type: 'text', text: '{"old":true}' }]);
  });

  it('an isError result with no text still ends as an error, saying so; images in an error become placeholders', async () => {
    const client = fakeClient([[{ name: 'bad', inputSchema: schema }, { name: 'pic', inputSchema: schema }]], (name) =>
      name === 'bad' ? { content: [], isError: true } : { content: [{ type: 'text', text: 'failed' }, { type: 'image', data: 'AAAA', mimeType: 'image/png' }], isError: true },
    );
    const tools = await mcpTools(client);
    const { batch } = await collect(runTools([{ id: '1', name: 'bad' }, { id: '2', name: 'pic' }], { tools }));
    expect(batch.messages.map((m) => m.isError)).toEqual([true, true]);
    expect(text(batch.messages[0]!)).toBe('MCP tool "bad" reported an error without any text');
    expect(text(batch.messages[1]!)).toBe('failed\n[image omitted: image/png, 3 bytes; this tool result format carries text only]');
  });

  it('an odd schema in a listing does not make mcpTools throw (unlike defineTool): that tool’s calls say its schema is at fault, the others work', async () => {
    const odd = { type: 'object' as const, properties: { q: { type: 'text' } } };
    const typo = { type: 'object' as const, propertes: { q: { type: 'string' } } };
    const client = fakeClient([[{ name: 'odd', inputSchema: odd }, { name: 'typo', inputSchema: typo }, { name: 'fine', inputSchema: schema }]], () => ({ content: [{ type: 'text', text: 'served' }] }));
    const tools = await mcpTools(client);
    expect(tools.map((t) => t.name)).toEqual(['odd', 'typo', 'fine']);
    const { batch } = await collect(runTools(['odd', 'typo', 'fine'].map((name) => ({ id: name, name, arguments: { q: 'x' } })), { tools }));
    expect(batch.messages.map((m) => m.isError)).toEqual([true, false, false]);
    expect(text(batch.messages[0]!)).toMatch(/^Tool "odd" cannot be called: its input JSON Schema is invalid \(.*properties\.q\.type must be one of/);
    expect(text(batch.messages[0]!)).toContain('This is a problem in the tool definition, not in your call.');
  });

  it('a client that resolves without a result object (null): an error result at once, saying so', async () => {
    const client = fakeClient([[{ name: 'nothing', inputSchema: schema }]], () => null as unknown as McpCallToolResult);
    const tools = await mcpTools(client);
    const { batch } = await collect(runTools([{ id: '1', name: 'nothing' }], { tools }));
    expect(batch.messages[0]).toMatchObject({ isError: true });
    expect(text(batch.messages[0]!)).toBe('MCP tool "nothing" was answered without a result object (received null); the server broke the protocol.');
  });

  it('rejects a malformed progressHighWaterMark', async () => {
    const client = fakeClient([[{ name: 'x', inputSchema: schema }]], () => ({ content: [] }));
    await expect(mcpTools(client, { progressHighWaterMark: 0 })).rejects.toThrow('mcpTools: options.progressHighWaterMark must be a positive integer, received number 0');
  });

  it('a request that fails (server gone) is an error result, not a crash', async () => {
    const client = fakeClient([[{ name: 'gone', inputSchema: schema }]], () => Promise.reject(new Error('Not connected')));
    const tools = await mcpTools(client);
    const { batch } = await collect(runTools([{ id: '1', name: 'gone' }], { tools }));
    expect(batch.messages[0]).toMatchObject({ isError: true, content: [{ type: 'text', text: 'Not connected' }] });
  });
});

/** The misbehaving server of `spec/fixtures/mcp-test-server.ts`, on the SDK's own server classes. */
const TEST_SERVER = fileURLToPath(new URL('../fixtures/mcp-test-server.ts', import.meta.url));

/** Starts the test server over stdio with toolrun's transport or the SDK's, and connects a client. */
async function startTestServer(transportKind: 'toolrun' | 'sdk', maxMessageBytes?: number): Promise<StartedServer & { errors: Error[] }> {
  const params = { command: process.execPath, args: ['--import', 'tsx', TEST_SERVER], cwd: process.cwd(), stderr: 'pipe' as const };
  const transport =
    transportKind === 'toolrun'
      ? new McpStdioTransport({ ...params, ...(maxMessageBytes === undefined ? {} : { maxMessageBytes }) })
      : new StdioClientTransport(params);
  const client = new Client({ name: 'toolrun-spec', version: '0.0.0' });
  const errors: Error[] = [];
  client.onerror = (error) => errors.push(error);
  await client.connect(transport);
  const pid = transport.pid;
  if (pid === null) throw new Error('no server process');
  return {
    client,
    pid,
    sent: [],
    errors,
    async close() {
      await client.close();
      for (let i = 0; i < 100 && isAlive(pid); i++) await new Promise((r) => setTimeout(r, 20));
    },
  };
}

/** A context as the runtime would give. */
function toolContext(name: string): ToolContext {
  return { toolCallId: 'c1', toolName: name, index: 0, signal: new AbortController().signal, client: NO_CLIENT };
}

describe('mcpTools against a misbehaving server (the SDK’s server classes over stdio)', () => {
  const started: StartedServer[] = [];
  afterAll(async () => {
    for (const server of started) {
      await server.close();
      expect(isAlive(server.pid)).toBe(false);
    }
  });

  it('defect "progress queue not backpressured": a slow consumer holds at most progressHighWaterMark notifications plus the newest', async () => {
    const server = await startTestServer('sdk');
    started.push(server);
    const count = 500;
    let received = 0;
    const allReceived = gate();
    const counting: McpClientLike = {
      listTools: (params, options) => server.client.listTools(params, options),
      callTool: (params, schema, options) =>
        server.client.callTool(params, schema, {
          ...options,
          onprogress: (p) => {
            options?.onprogress?.(p);
            if (++received === count) allReceived.open();
          },
        }),
    };
    const tools = await mcpTools(counting, { progressHighWaterMark: 4 });
    const flood = tools.find((t) => t.name === 'flood')!;
    const run = flood.execute({ count }, toolContext('flood')) as AsyncGenerator<McpProgress, unknown, undefined>;
    const yielded: McpProgress[] = [];
    const first = await run.next();
    yielded.push(first.value as McpProgress);
    // The consumer stalls while the server sends every notification.
    await allReceived.promise;
    await server.client.callTool({ name: 'release', arguments: {} });
    for (let step = await run.next(); step.done !== true; step = await run.next()) yielded.push(step.value);
    // The first one taken, 4 queued, then only the newest: not 500.
    expect(yielded.map((p) => p.progress)).toEqual([1, 2, 3, 4, 5, count]);
    expect(yielded.at(-1)).toEqual({ progress: count, total: count, message: `step ${count} ${'.'.repeat(200)}` });
  });

  it('defect "result: null waits for the request timeout": the call ends at once as an error result; the connection stays usable', async () => {
    const server = await startTestServer('toolrun');
    started.push(server);
    // The SDK's default request timeout (60 s) is left in place: only an immediate answer passes.
    const tools = await mcpTools(server.client);
    const { events, batch } = await collect(runTools([{ id: 'n', name: 'null_result', arguments: {} }], { tools }));
    expect(batch.messages[0]?.isError).toBe(true);
    expect(text(batch.messages[0]!)).toMatch(/The MCP server answered without a result object \(result: null\)/);
    expect(ofType(events, 'tool_execution_end')[0]?.outcome).toBe('error');
    const after = await collect(runTools([{ id: 'e', name: 'wait_echo', arguments: { text: 'still here' } }, { id: 'r', name: 'release', arguments: {} }], { tools }));
    expect(after.batch.messages.map((m) => text(m))).toEqual(['still here', 'released']);
  }, 10_000);

  it('why the transport exists (result: null): the SDK’s own stdio transport drops that answer, so the call waits for the request timeout', async () => {
    const server = await startTestServer('sdk');
    started.push(server);
    const tools = await mcpTools(server.client, { requestTimeoutMs: 200 });
    const { batch } = await collect(runTools([{ id: 'n', name: 'null_result', arguments: {} }], { tools }));
    expect(text(batch.messages[0]!)).toBe('McpError: MCP error -32001: Request timed out');
    expect(server.errors.length).toBeGreaterThan(0);
  });

  it('defect "a response over 10 MB fails every call in flight": the big response fails only its own call; its siblings and later calls go on', async () => {
    const server = await startTestServer('toolrun', 1024 * 1024);
    started.push(server);
    const tools = await mcpTools(server.client);
    const calls: ToolCall[] = [
      { id: 'sibling', name: 'wait_echo', arguments: { text: 'sibling done' } },
      { id: 'big', name: 'huge', arguments: { bytes: 3 * 1024 * 1024 } },
    ];
    const events: ToolEvent[] = [];
    for await (const event of runTools(calls, { tools })) {
      events.push(event);
      // The sibling is still in flight when the big answer has failed: now let it finish.
      if (event.type === 'tool_execution_end' && event.toolCallId === 'big') await server.client.callTool({ name: 'release', arguments: {} });
    }
    const results = ofType(events, 'tool_result').map((e) => e.message);
    expect(results.map((m) => [m.toolCallId, m.isError])).toEqual([
      ['sibling', false],
      ['big', true],
    ]);
    expect(text(results[0]!)).toBe('sibling done');
    expect(text(results[1]!)).toMatch(/^McpError: MCP error -32603: The MCP server's message of \d+ bytes is over this transport's limit of 1048576 bytes/);
    expect(isAlive(server.pid)).toBe(true);
    const later = await collect(runTools([{ id: 'small', name: 'huge', arguments: { bytes: 1000 } }], { tools }));
    expect(text(later.batch.messages[0]!)).toBe('x'.repeat(1000));
  }, 20_000);

  it('why the transport exists: the SDK’s own stdio transport closes the connection on a message over 10 MiB, failing every call in flight', async () => {
    const server = await startTestServer('sdk');
    started.push(server);
    const tools = await mcpTools(server.client);
    const { batch } = await collect(
      runTools(
        [
          { id: 'sibling', name: 'wait_echo', arguments: { text: 'never' } },
          { id: 'big', name: 'huge', arguments: { bytes: 11 * 1024 * 1024 } },
        ],
        { tools },
      ),
    );
    expect(batch.messages.map((m) => [m.isError, text(m)])).toEqual([
      [true, 'McpError: MCP error -32000: Connection closed'],
      [true, 'McpError: MCP error -32000: Connection closed'],
    ]);
    expect(server.errors.map((e) => e.message)).toContain('ReadBuffer exceeded maximum size of 10485760 bytes');
  }, 20_000);
});

describe('mcpTools: a tool listing that never ends (found by an independent attack)', () => {
  const tool = (name: string): McpToolInfo => ({ name, inputSchema: { type: 'object' } });
  const answer = async (): Promise<McpCallToolResult> => ({ content: [] });

  it('a server that sends the same cursor again is refused with a TypeError naming the cursor', async () => {
    let pages = 0;
    const client: McpClientLike = { listTools: async () => ({ tools: [tool(`t${++pages}`)], nextCursor: 'again' }), callTool: answer };
    await expect(mcpTools(client)).rejects.toThrow(/sent the cursor string "again" twice/);
    expect(pages).toBe(2);
  });

  it('a server whose cursors never repeat is stopped after 100 pages', async () => {
    let pages = 0;
    const client: McpClientLike = { listTools: async () => ({ tools: [tool(`t${++pages}`)], nextCursor: `c${pages}` }), callTool: answer };
    await expect(mcpTools(client)).rejects.toThrow(/past 100 pages \(101 tools so far\)/);
    expect(pages).toBe(101);
  });

  it('an abort between pages ends the listing with the signal’s reason', async () => {
    const controller = new AbortController();
    let pages = 0;
    const client: McpClientLike = {
      listTools: async () => {
        if (++pages === 3) controller.abort(new Error('stop listing'));
        return { tools: [tool(`t${pages}`)], nextCursor: `c${pages}` };
      },
      callTool: answer,
    };
    await expect(mcpTools(client, { signal: controller.signal })).rejects.toThrow('stop listing');
    expect(pages).toBe(3);
  });
});
