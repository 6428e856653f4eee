/**
 * serveMcp (toolrun/mcp): toolrun tools as an MCP server, and mcpTools over Streamable HTTP
 * against it, on 127.0.0.1. In-process servers for the round trip (gates the spec opens on
 * the events it sees; no sleeps), and `toolrun serve-mcp` child processes for a server that
 * dies mid-call, one that restarts between batches, and stdio. Every server and child this
 * spec starts is asserted gone (pid not alive, port closed).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { dirname, resolve as resolvePath } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import * as v from 'valibot';
import { afterEach, describe, expect, it } from 'vitest';
import { defineTool, mcpTools, runTools, type Tool, type ToolApprovalRequest, type ToolBatch, type ToolCall, type ToolEvent } from '../../lib/index.ts';
import { connectMcpHttp, createMcpServer, mcpProgress, serveHttp, serveMcp, type ServedMcp } from '../../lib/mcp/index.ts';
import { loadTools } from '../../lib/cli/serve-mcp.ts';
import ts from 'typescript';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { main } from '../../lib/cli/main.ts';
import { isAlive } from '../mcp-servers.ts';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** A promise with its resolve function: a tool waits on it, the spec opens it. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** Resolves once nothing accepts connections on the port any more. */
function portClosed(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function served(tools: readonly Tool[], options: Parameters<typeof serveMcp>[1] = {}): Promise<ServedMcp> {
  const server = await serveMcp(tools, { ...options, http: { port: 0 } });
  cleanups.push(async () => {
    const port = Number(server.url!.port);
    await server.close();
    expect(await portClosed(port)).toBe(true);
  });
  return server;
}

async function client(url: URL): Promise<Client> {
  const c = await connectMcpHttp(url);
  cleanups.push(() => c.close());
  return c;
}

/** Three tools whose interleaving the consumer drives with gates (see `driveGates`). */
function gatedTools() {
  const g = { a: gate(), b: gate(), c: gate(), d: gate() };
  const countdown = defineTool({
    name: 'countdown',
    description: 'Counts down in two steps.',
    input: v.object({ from: v.number() }),
    async *execute({ from }) {
      yield { progress: 1, total: 2, message: `${from}…` };
      await g.a.promise;
      yield { progress: 2, total: 2, message: `${from - 1}…` };
      await g.b.promise;
      return `liftoff from ${from}`;
    },
  });
  const picture = defineTool({
    name: 'picture',
    input: { type: 'object', properties: { caption: { type: 'string' } }, required: ['caption'] },
    async execute(input) {
      await g.c.promise;
      return { content: [{ type: 'text' as const, text: String(input.caption) }, { type: 'image' as const, data: 'iVBORw0KGgo=', mimeType: 'image/png' }] };
    },
  });
  const boom = defineTool({
    name: 'boom',
    input: v.object({}),
    async execute() {
      await g.d.promise;
      throw new RangeError('the disk is full');
    },
  });
  return { tools: [countdown, picture, boom] as Tool[], g };
}

const gatedCalls: ToolCall[] = [
  { id: 'c0', name: 'countdown', arguments: { from: 3 } },
  { id: 'c1', name: 'picture', arguments: { caption: 'a cat' } },
  { id: 'c2', name: 'boom', arguments: {} },
];

/** Runs the calls, opening the gates on events so that one order is the only possible one. */
async function driveGates(tools: readonly Tool[], g: ReturnType<typeof gatedTools>['g']) {
  const events: ToolEvent[] = [];
  const run = runTools(gatedCalls, { tools });
  let step = await run.next();
  while (step.done !== true) {
    const event = step.value;
    events.push(event);
    if (event.type === 'tool_execution_update' && event.index === 0 && (event.progress as { progress: number }).progress === 1) g.c.open();
    if (event.type === 'tool_execution_end' && event.index === 1) g.a.open();
    if (event.type === 'tool_execution_update' && event.index === 0 && (event.progress as { progress: number }).progress === 2) g.d.open();
    if (event.type === 'tool_execution_end' && event.index === 2) g.b.open();
    step = await run.next();
  }
  return { events, batch: step.value as ToolBatch };
}

/** What must be equal between a direct run and a run through MCP: everything but timing. */
function shape(events: ToolEvent[]) {
  return events.map((e) => {
    switch (e.type) {
      case 'tool_execution_start':
        return { type: e.type, index: e.index, name: e.toolName, args: e.args };
      case 'tool_execution_update':
        return { type: e.type, index: e.index, progress: e.progress };
      case 'tool_execution_end':
        return { type: e.type, index: e.index, content: e.result.content, isError: e.isError, outcome: e.outcome };
      case 'tool_result':
        return { type: e.type, index: e.index, message: e.message };
    }
  });
}

describe('serveMcp over Streamable HTTP on 127.0.0.1, called with mcpTools', () => {
  it('tools → serveMcp → mcpTools → runTools: the same events in the same order and the same results as running the tools directly (O2, O3, O4, O5)', async () => {
    const direct = gatedTools();
    const expected = await driveGates(direct.tools, direct.g);

    const remote = gatedTools();
    const server = await served(remote.tools);
    const tools = await mcpTools(await client(server.url!));
    const actual = await driveGates(tools, remote.g);

    expect(shape(actual.events)).toEqual(shape(expected.events));
    expect(actual.batch).toEqual(expected.batch);
    // The order the gates force, spelled out.
    expect(actual.events.map((e) => `${e.type}:${e.index}`)).toEqual([
      'tool_execution_start:0', 'tool_execution_start:1', 'tool_execution_start:2',
      'tool_execution_update:0', 'tool_execution_end:1', 'tool_execution_update:0', 'tool_execution_end:2',
      'tool_execution_end:0', 'tool_result:0', 'tool_result:1', 'tool_result:2',
    ]);
    expect(actual.batch.messages[2]).toMatchObject({ isError: true, content: [{ type: 'text', text: 'RangeError: the disk is full' }] });
  });

  it('advertises each tool’s input as JSON Schema, converted from valibot; a JSON Schema input as is', async () => {
    const { tools } = gatedTools();
    const server = await served(tools);
    const listed = (await (await client(server.url!)).listTools()).tools;
    expect(listed.map((t) => t.name)).toEqual(['countdown', 'picture', 'boom']);
    expect(listed[0]).toMatchObject({ description: 'Counts down in two steps.', inputSchema: { type: 'object', properties: { from: { type: 'number' } }, required: ['from'] } });
    expect(listed[1]!.inputSchema).toEqual({ type: 'object', properties: { caption: { type: 'string' } }, required: ['caption'] });
    expect(listed[0]!.outputSchema).toBeUndefined();
  });

  it('error results carry the same text as in process: thrown error, bad arguments, unknown tool (`__proto__` too), timeout (P4, P5, A4)', async () => {
    const never = defineTool({ name: 'never', input: v.object({}), timeoutMs: 1, execute: () => new Promise<string>(() => {}) });
    const add = defineTool({ name: 'add', input: v.object({ a: v.number(), b: v.number() }), execute: ({ a, b }) => a + b });
    const { tools: gated, g } = gatedTools();
    g.d.open();
    const tools = [...gated, never, add];
    const calls: ToolCall[] = [
      { id: 'x', name: 'boom', arguments: {} },
      { id: 'x', name: 'add', arguments: { a: 1, b: 'two' } },
      { id: 'x', name: 'no_such_tool', arguments: {} },
      { id: 'x', name: '__proto__', arguments: {} },
      { id: 'x', name: 'never', arguments: {} },
    ];
    const server = await served(tools, { perTool: { boom: { title: 'Boom' } } });
    const c = await client(server.url!);
    for (const call of calls) {
      const local = (await collect(runTools([call], { tools }))).messages[0]!;
      const remote = await c.callTool({ name: call.name, arguments: call.arguments as Record<string, unknown> });
      expect(remote.isError, call.name).toBe(true);
      expect(remote.content, call.name).toEqual(local.content);
    }
  });

  it('beforeToolCall and afterToolCall run for served calls; a block is an isError result with the in-process text (P1, P3)', async () => {
    const { tools, g } = gatedTools();
    g.c.open();
    const hooks = {
      beforeToolCall: ({ toolCall }: { toolCall: ToolCall }) => (toolCall.name === 'boom' ? { block: true, reason: 'not during a demo' } : undefined),
      afterToolCall: () => ({ details: { audited: true } }),
    };
    const call: ToolCall = { id: 'x', name: 'boom', arguments: {} };
    const local = (await collect(runTools([call], { tools, ...hooks }))).messages[0]!;
    const server = await served(tools, hooks);
    const c = await client(server.url!);
    expect(await c.callTool({ name: 'boom', arguments: {} })).toEqual({ content: local.content, isError: true });
    expect(await c.callTool({ name: 'picture', arguments: { caption: 'ok' } })).toMatchObject({ isError: false, content: [{ type: 'text', text: 'ok' }, { type: 'image' }] });
  });

  it('close() with a call running: the tool’s finally runs, the client’s call gets its interrupted result, the port closes (A3, O1)', async () => {
    const finallyRan = gate();
    const started = gate();
    const hold = defineTool({
      name: 'hold',
      input: v.object({}),
      async execute(_input, { signal }) {
        try {
          started.open();
          await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
          return 'stopped';
        } finally {
          finallyRan.open();
        }
      },
    });
    const server = await serveMcp([hold], { http: { port: 0 } });
    const port = Number(server.url!.port);
    const c = await client(server.url!);
    const run = collect(runTools([{ id: 'h', name: 'hold', arguments: {} }], { tools: await mcpTools(c) }));
    await started.promise;
    await server.close();
    await finallyRan.promise;
    const batch = await run;
    expect(batch.messages).toHaveLength(1);
    expect(batch.messages[0]).toMatchObject({ isError: true, content: [{ type: 'text', text: expect.stringMatching(/^Interrupted: the run was aborted while tool "hold" was running/) }] });
    expect(server.sessions).toBe(0);
    expect(await portClosed(port)).toBe(true);
  });

  it('a tool’s yields become notifications/progress only when the client sent a progress token', async () => {
    const { tools, g } = gatedTools();
    const server = await served(tools);
    const c = await client(server.url!);
    const seen: unknown[] = [];
    g.a.open();
    g.b.open();
    const withToken = await c.callTool({ name: 'countdown', arguments: { from: 9 } }, undefined, { onprogress: (p) => seen.push(p) });
    expect(withToken.content).toEqual([{ type: 'text', text: 'liftoff from 9' }]);
    // The SDK may drop the last notification when it arrives right before the response; the first is before a gate.
    expect(seen[0]).toEqual({ progress: 1, total: 2, message: '9…' });
    // Every message the server sends, seen at the client's transport, for a call with a token and one without.
    const transport = new StreamableHTTPClientTransport(server.url!);
    const raw = new Client({ name: 'spec', version: '0' });
    await raw.connect(transport);
    cleanups.push(() => raw.close());
    const received: string[] = [];
    const deliver = transport.onmessage!;
    transport.onmessage = (message) => {
      received.push('method' in message ? message.method : 'response');
      deliver(message);
    };
    await raw.callTool({ name: 'countdown', arguments: { from: 5 } }, undefined, { onprogress: () => {} });
    expect(received).toEqual(['notifications/progress', 'notifications/progress', 'response']);
    received.length = 0;
    const without = await raw.callTool({ name: 'countdown', arguments: { from: 5 } });
    expect(without.content).toEqual([{ type: 'text', text: 'liftoff from 5' }]);
    expect(received).toEqual(['response']);
  });

  it('notifications/cancelled aborts that call’s signal: the tool’s finally runs, the call ends interrupted, siblings and later calls go on (A1, A2)', async () => {
    const finallyRan = gate();
    const seenAbort: unknown[] = [];
    const hold = defineTool({
      name: 'hold',
      input: v.object({}),
      async *execute(_input, { signal }) {
        try {
          yield 'started';
          await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
          seenAbort.push(signal.reason);
          return 'stopped';
        } finally {
          finallyRan.open();
        }
      },
    });
    const sibling = gate();
    const other = defineTool({ name: 'other', input: v.object({}), execute: async () => (await sibling.promise, 'sibling done') });
    const server = await served([hold, other]);
    const c = await client(server.url!);
    const tools = await mcpTools(c);
    const controller = new AbortController();
    const holdTools = tools.filter((t) => t.name === 'hold');
    // The hold call runs in its own batch with its own signal; the sibling in another batch of the same client.
    const siblingRun = collect(runTools([{ id: 's', name: 'other', arguments: {} }], { tools }));
    const outcomes: string[] = [];
    for await (const event of runTools([{ id: 'h', name: 'hold', arguments: {} }], { tools: holdTools, signal: controller.signal })) {
      if (event.type === 'tool_execution_update') controller.abort();
      if (event.type === 'tool_execution_end') outcomes.push(event.outcome);
    }
    expect(outcomes).toEqual(['interrupted']);
    await finallyRan.promise;
    expect(seenAbort).toHaveLength(1);
    sibling.open();
    expect((await siblingRun).messages[0]!.content).toEqual([{ type: 'text', text: 'sibling done' }]);
  });

  it('concurrent calls of one client run concurrently, each with its own timeout (S1, A4)', async () => {
    const started: string[] = [];
    const both = gate();
    const meet = defineTool({
      name: 'meet',
      input: v.object({ who: v.string() }),
      async execute({ who }) {
        started.push(who);
        if (started.length === 2) both.open();
        await both.promise;
        return `${who} met`;
      },
    });
    const stuck = defineTool({ name: 'stuck', input: v.object({}), timeoutMs: 1, execute: () => new Promise<string>(() => {}) });
    const server = await served([meet, stuck]);
    const tools = await mcpTools(await client(server.url!));
    const batch = await collect(runTools([
      { id: '1', name: 'meet', arguments: { who: 'ann' } },
      { id: '2', name: 'stuck', arguments: {} },
      { id: '3', name: 'meet', arguments: { who: 'bob' } },
    ], { tools }));
    expect(batch.messages.map((m) => m.content)).toEqual([
      [{ type: 'text', text: 'ann met' }],
      (await collect(runTools([{ id: '2', name: 'stuck', arguments: {} }], { tools: [stuck] }))).messages[0]!.content,
      [{ type: 'text', text: 'bob met' }],
    ]);
    expect(batch.messages[1]!.isError).toBe(true);
  });

  it('perTool output: outputSchema advertised, structuredContent sent and checked; a mismatch is an error result', async () => {
    const add = defineTool({ name: 'add', input: v.object({ a: v.number(), b: v.number() }), execute: ({ a, b }) => ({ sum: a + b }) });
    const wrong = defineTool({ name: 'wrong', input: v.object({}), execute: () => ({ sum: 'three' }) });
    const explicit = defineTool({ name: 'explicit', input: v.object({}), execute: () => ({ content: [{ type: 'text' as const, text: 'sum is 7' }], details: { sum: 7 } }) });
    const output = v.object({ sum: v.number() });
    const server = await served([add, wrong, explicit], { perTool: { add: { output, title: 'Add', annotations: { readOnlyHint: true } }, wrong: { output }, explicit: { output } } });
    const c = await client(server.url!);
    const listed = (await c.listTools()).tools;
    expect(listed[0]).toMatchObject({ title: 'Add', annotations: { readOnlyHint: true }, outputSchema: { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] } });
    expect(await c.callTool({ name: 'add', arguments: { a: 1, b: 2 } })).toMatchObject({ content: [{ type: 'text', text: '{"sum":3}' }], structuredContent: { sum: 3 }, isError: false });
    expect(await c.callTool({ name: 'explicit', arguments: {} })).toMatchObject({ content: [{ type: 'text', text: 'sum is 7' }], structuredContent: { sum: 7 } });
    const bad = await c.callTool({ name: 'wrong', arguments: {} });
    expect(bad.isError).toBe(true);
    expect((bad.content as { text: string }[])[0]!.text).toMatch(/^Tool "wrong" returned a result that does not match its output schema:\n- sum: /);
    const [addTool] = await mcpTools(c, { filter: (t) => t.name === 'add' });
    expect((await collect(runTools([{ id: '1', name: 'add', arguments: { a: 2, b: 2 } }], { tools: [addTool!] }))).messages[0]!.details).toEqual({ structuredContent: { sum: 4 } });
  });

  it('a sequential tool runs alone across requests; calls after it wait; one cancelled while waiting never starts (S3, A2)', async () => {
    const log: string[] = [];
    const gates = { p: gate(), s: gate() };
    const par = defineTool({ name: 'par', input: v.object({ id: v.string() }), async execute({ id }) { log.push(`start ${id}`); if (id === 'p') await gates.p.promise; log.push(`end ${id}`); return id; } });
    const seq = defineTool({ name: 'seq', executionMode: 'sequential', input: v.object({}), async execute() { log.push('start s'); await gates.s.promise; log.push('end s'); return 's'; } });
    // In memory, so that requests reach the server in the order they are sent (HTTP POSTs may not).
    const server = createMcpServer([par, seq]);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const c = new Client({ name: 'spec', version: '0' });
    await c.connect(clientSide);
    cleanups.push(async () => {
      await c.close();
      await server.close();
    });
    const p = c.callTool({ name: 'par', arguments: { id: 'p' } });
    while (!log.includes('start p')) await new Promise((r) => setImmediate(r));
    const s = c.callTool({ name: 'seq', arguments: {} });
    const q = c.callTool({ name: 'par', arguments: { id: 'q' } });
    const cancelled = new AbortController();
    const never = c.callTool({ name: 'seq', arguments: {} }, undefined, { signal: cancelled.signal }).catch((error: unknown) => error);
    // Answered after the server received s, q and the last one (in order, one transport): they are waiting, not running.
    await c.ping();
    expect(log).toEqual(['start p']);
    cancelled.abort();
    expect(await never).toBeInstanceOf(Error);
    await c.ping(); // the cancellation notification has arrived: the waiting call left the queue
    gates.p.open();
    while (!log.includes('start s')) await new Promise((r) => setImmediate(r));
    await c.ping();
    expect(log).toEqual(['start p', 'end p', 'start s']);
    gates.s.open();
    await Promise.all([p, s, q]);
    expect(log).toEqual(['start p', 'end p', 'start s', 'end s', 'start q', 'end q']);
  });
});

describe('createMcpServer and human approval (H3)', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  it('H3: a tool that asks for approval is answered with an error result (an MCP request cannot pause); approve in process still answers', async () => {
    let ran = 0;
    const guarded = defineTool({ name: 'guarded', input: v.object({}), needsApproval: true, execute: () => (ran++, 'ran') });
    for (const [options, expected] of [
      [{}, { isError: true, text: 'Tool "guarded" needs a person\'s approval before it runs, and this MCP server cannot ask for it, so the call was not run.' }],
      [{ approve: (request: ToolApprovalRequest) => ({ approvalId: request.approvalId, approved: true }) }, { isError: false, text: 'ran' }],
    ] as const) {
      const server = createMcpServer([guarded], options);
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await server.connect(serverSide);
      const c = new Client({ name: 'spec', version: '0' });
      await c.connect(clientSide);
      cleanups.push(async () => {
        await c.close();
        await server.close();
      });
      const result = (await c.callTool({ name: 'guarded', arguments: {} })) as { isError?: boolean; content: { type: string; text: string }[] };
      expect({ isError: result.isError, text: result.content[0]!.text }).toEqual(expected);
    }
    expect(ran).toBe(1);
  });
});

async function collect(run: AsyncGenerator<ToolEvent, ToolBatch, undefined>): Promise<ToolBatch> {
  for (;;) {
    const step = await run.next();
    if (step.done === true) return step.value;
  }
}

/** `toolrun serve-mcp` as a child process, with its printed address (`--no-auth` over HTTP: these specs are about lifetimes; its token: spec/cli/serve-mcp-auth.process.spec.ts). */
async function startCli(args: readonly string[]): Promise<{ child: ChildProcessWithoutNullStreams; url: URL; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'lib/cli/main.ts', 'serve-mcp', ...args, ...(args.includes('--http') ? ['--no-auth'] : []), 'spec/fixtures/mcp/served-tools.ts'], { cwd: repoRoot });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    expect(isAlive(child.pid!)).toBe(false);
    if (port !== undefined) expect(await portClosed(port)).toBe(true);
  });
  let port: number | undefined;
  const lines = createInterface({ input: child.stdout });
  const line = await new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`serve-mcp exited with ${code} before printing its address`)));
  });
  const match = /^toolrun: serving 3 tools \(echo, fail, hold\) at (http:\/\/127\.0\.0\.1:\d+\/mcp)$/.exec(line);
  if (match === null) throw new Error(`unexpected first line: ${line}`);
  const url = new URL(match[1]!);
  port = Number(url.port);
  return { child, url, exited };
}

describe('toolrun serve-mcp (child processes) with mcpTools over Streamable HTTP', () => {
  it('a server that dies mid-call: every call still gets exactly one result (O1); the process and port are gone', async () => {
    const { child, url, exited } = await startCli(['--http', '0']);
    const c = await client(url);
    const tools = await mcpTools(c);
    const results: string[] = [];
    const calls: ToolCall[] = [
      { id: 'a', name: 'echo', arguments: { text: 'before' } },
      { id: 'b', name: 'hold', arguments: {} },
      { id: 'c', name: 'hold', arguments: {} },
    ];
    const updates: unknown[] = [];
    for await (const event of runTools(calls, { tools })) {
      if (event.type === 'tool_execution_update' && updates.push(event.progress) === 2) child.kill('SIGKILL');
      if (event.type === 'tool_result') results.push(`${event.message.toolCallId} ${event.message.isError ? 'error' : 'ok'}`);
    }
    expect(results).toEqual(['a ok', 'b error', 'c error']);
    // A string yield crossed the wire as a counted progress notification with the string as message.
    expect(updates).toEqual([{ progress: 1, message: 'started' }, { progress: 1, message: 'started' }]);
    await exited;
    expect(isAlive(child.pid!)).toBe(false);
    expect(await portClosed(Number(url.port))).toBe(true);
  });

  it('a server restarting between batches: the old session’s calls each get one error result; a new client goes on', { timeout: 90_000 }, async () => {
    const first = await startCli(['--http', '0']);
    const port = first.url.port;
    const old = await client(first.url);
    const tools = await mcpTools(old);
    const one: ToolCall[] = [{ id: '1', name: 'echo', arguments: { text: 'one' } }, { id: '2', name: 'fail', arguments: {} }];
    const batch1 = await collect(runTools(one, { tools }));
    expect(batch1.messages.map((m) => m.content[0])).toEqual([{ type: 'text', text: 'echo: one' }, { type: 'text', text: 'the disk is full' }]);
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(await portClosed(Number(port))).toBe(true);

    const second = await startCli(['--http', port]);
    const batch2 = await collect(runTools(one, { tools }));
    expect(batch2.messages).toHaveLength(2);
    for (const message of batch2.messages) {
      expect(message.isError).toBe(true);
      expect(message.content[0]).toMatchObject({ type: 'text', text: expect.stringMatching(/Session not found/) });
    }
    const fresh = await client(second.url);
    const batch3 = await collect(runTools(one, { tools: await mcpTools(fresh) }));
    expect(batch3.messages.map((m) => m.isError)).toEqual([false, true]);
  });

  it('over stdio: lists and calls the module’s tools; closing the client ends the process', async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: ['--import', 'tsx', 'lib/cli/main.ts', 'serve-mcp', 'spec/fixtures/mcp/served-tools.ts'], cwd: repoRoot, stderr: 'pipe' });
    const c = new Client({ name: 'spec', version: '0' });
    await c.connect(transport);
    const pid = transport.pid!;
    try {
      const tools = await mcpTools(c);
      expect(tools.map((t) => t.name)).toEqual(['echo', 'fail', 'hold']);
      const batch = await collect(runTools([{ id: '1', name: 'echo', arguments: { text: 'stdio' } }], { tools }));
      expect(batch.messages[0]!.content).toEqual([{ type: 'text', text: 'echo: stdio' }]);
    } finally {
      await c.close();
    }
    // Waits for the exit however long it takes (the test's own timeout bounds it): no time limit of ours.
    while (isAlive(pid)) await new Promise((r) => setTimeout(r, 10));
    expect(isAlive(pid)).toBe(false);
  });
});

describe('mcpTools over Streamable HTTP against a reference server (@modelcontextprotocol/server-everything, hosted on 127.0.0.1 by serveHttp)', () => {
  // The package's own streamableHttp mode (and the SDK's example servers) listen on every
  // interface; its server factory is hosted here on the loopback address instead.
  async function everything(): Promise<Client> {
    const { createServer } = (await import('@modelcontextprotocol/server-everything/dist/server/index.js' as string)) as {
      createServer: () => { server: { server: import('@modelcontextprotocol/sdk/server/index.js').Server }; cleanup: (sessionId?: string) => void };
    };
    const host = await serveHttp(() => {
      const { server, cleanup } = createServer();
      server.server.onclose = () => cleanup();
      return server.server;
    }, { port: 0 });
    cleanups.push(async () => {
      await host.close();
      expect(host.sessions).toBe(0);
      expect(await portClosed(Number(host.url!.port))).toBe(true);
    });
    return await client(host.url!);
  }

  it('calls its tools in parallel: results in call order, progress as updates before the result (O2, O5)', async () => {
    const c = await everything();
    const tools = await mcpTools(c, { filter: (t) => ['echo', 'get-sum', 'trigger-long-running-operation', 'get-structured-content'].includes(t.name) });
    expect(tools.map((t) => t.name).sort()).toEqual(['echo', 'get-structured-content', 'get-sum', 'trigger-long-running-operation']);
    const events: ToolEvent[] = [];
    const run = runTools([
      { id: '1', name: 'trigger-long-running-operation', arguments: { duration: 0, steps: 3 } },
      { id: '2', name: 'echo', arguments: { message: 'over http' } },
      { id: '3', name: 'get-sum', arguments: { a: 2, b: 40 } },
      { id: '4', name: 'get-structured-content', arguments: { location: 'New York' } },
    ], { tools });
    let step = await run.next();
    while (step.done !== true) {
      events.push(step.value);
      step = await run.next();
    }
    const batch = step.value;
    expect(batch.messages.map((m) => [m.isError, m.content[0]])).toEqual([
      [false, { type: 'text', text: 'Long running operation completed. Duration: 0 seconds, Steps: 3.' }],
      [false, { type: 'text', text: 'Echo: over http' }],
      [false, { type: 'text', text: 'The sum of 2 and 40 is 42.' }],
      [false, expect.objectContaining({ type: 'text' })],
    ]);
    expect(batch.messages[3]!.details).toMatchObject({ structuredContent: { temperature: expect.any(Number), conditions: expect.any(String) } });
    // Each notification the SDK delivers is an update before the call's end; the last one may be
    // dropped by the SDK client when it arrives right before the response (see mcpTools).
    const updates = events.filter((e) => e.type === 'tool_execution_update').map((e) => (e as { progress: unknown }).progress);
    expect(updates.length).toBeGreaterThanOrEqual(2);
    expect(updates).toEqual([{ progress: 1, total: 3 }, { progress: 2, total: 3 }, { progress: 3, total: 3 }].slice(0, updates.length));
    const firstEnd0 = events.findIndex((e) => e.type === 'tool_execution_end' && e.index === 0);
    expect(events.findLastIndex((e) => e.type === 'tool_execution_update')).toBeLessThan(firstEnd0);
  });
});

describe('serveMcp: the HTTP endpoint’s guards', () => {
  function request(url: URL, headers: Record<string, string>, path = url.pathname): Promise<number> {
    return new Promise((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port: url.port, path, method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.once('error', reject);
      req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }));
    });
  }

  it('refuses a Host or Origin that is not loopback (DNS rebinding), an unknown session (404), another path (404)', async () => {
    const { tools } = gatedTools();
    const server = await served(tools);
    const url = server.url!;
    expect(await request(url, { host: `evil.example:${url.port}` })).toBe(403);
    expect(await request(url, { origin: 'http://evil.example' })).toBe(403);
    expect(await request(url, { 'mcp-session-id': 'not-a-session' })).toBe(404);
    expect(await request(url, {}, '/other')).toBe(404);
    // A first request that is not `initialize` creates no session.
    expect(await request(url, { origin: `http://localhost:${url.port}` })).toBe(400);
    expect(server.sessions).toBe(0);
  });

  it('throws a TypeError naming the problem: duplicate names, perTool for no tool, an output schema that is no object', async () => {
    const { tools } = gatedTools();
    await expect(serveMcp([...tools, tools[0]!], { http: { port: 0 } })).rejects.toThrow(/two tools are named "countdown"/);
    await expect(serveMcp(tools, { http: { port: 0 }, perTool: { nope: {} } })).rejects.toThrow(/perTool names "nope", which is no tool's name \(tools: countdown, picture, boom\)/);
    expect(() => createMcpServer(tools, { perTool: { boom: { output: v.string() } } })).toThrow(TypeError);
  });
});

describe('mcpProgress: a yielded value as an MCP progress payload', () => {
  it('passes a progress-shaped value through when it increases; anything else counts up with a message', () => {
    expect(mcpProgress('reading a.txt', 1, undefined)).toEqual({ progress: 1, message: 'reading a.txt' });
    expect(mcpProgress({ progress: 40, total: 100, message: 'm', extra: 1 }, 2, 1)).toEqual({ progress: 40, total: 100, message: 'm' });
    expect(mcpProgress({ progress: 40 }, 3, 40)).toEqual({ progress: 41, message: '{"progress":40}' });
    expect(mcpProgress({ bytes: 10 }, 1, undefined)).toEqual({ progress: 1, message: '{"bytes":10}' });
  });
});

describe('toolrun serve-mcp: input errors', () => {
  it('a module without tools, a bad port, two modules: exit code 2 with one line', async () => {
    const err: string[] = [];
    const io = { stdout: process.stdout, stderr: { write: (s: string) => err.push(s) } as unknown as NodeJS.WriteStream, env: {} };
    expect(await main(['serve-mcp', 'spec/fixtures/mcp/no-tools.ts'], io)).toBe(2);
    expect(err.pop()).toMatch(/^toolrun: serve-mcp: spec\/fixtures\/mcp\/no-tools.ts exports no tool/);
    expect(await main(['serve-mcp', '--http', 'eighty', 'spec/fixtures/mcp/served-tools.ts'], io)).toBe(2);
    expect(err.pop()).toMatch(/--http must be a whole number from 0 to 65535, received "eighty"/);
    expect(await main(['serve-mcp', 'a.ts', 'b.ts'], io)).toBe(2);
    expect(await loadTools('spec/fixtures/mcp/served-tools.ts').then((t) => t.map((x) => x.name))).toEqual(['echo', 'fail', 'hold']);
  });
});

describe('the main entry does not load the MCP SDK', () => {
  it('no module reachable from lib/index.ts imports @modelcontextprotocol/sdk (it is an optional peer of toolrun/mcp only)', () => {
    const seen = new Set<string>();
    const sdkImports: string[] = [];
    const visit = (file: string): void => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const ref of ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles) {
        if (ref.fileName.startsWith('.')) visit(resolvePath(dirname(file), ref.fileName));
        else if (ref.fileName.startsWith('@modelcontextprotocol/')) sdkImports.push(`${file}: ${ref.fileName}`);
      }
    };
    visit(resolvePath(repoRoot, 'lib/index.ts'));
    expect(seen.size).toBeGreaterThan(20);
    expect(sdkImports).toEqual([]);
    // The walk does find the SDK from the MCP entry.
    visit(resolvePath(repoRoot, 'lib/mcp/index.ts'));
    expect(sdkImports.length).toBeGreaterThan(0);
  });
});
