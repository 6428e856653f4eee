/**
 * Trace context across MCP (contract T3): a traced `runTools` calling an MCP tool (mcpTools)
 * sends its call span's W3C context as `params._meta.traceparent`; the server (serveMcp with
 * `tracing`) continues it, so the remote spans join the caller's trace. Two real processes
 * over Streamable HTTP on 127.0.0.1; the child exports its finished spans on stdout when the
 * spec closes its stdin, and is asserted gone. In-process (InMemoryTransport) for what an
 * untrusted client may put in `_meta`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { SpanStatusCode } from '@opentelemetry/api';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import * as v from 'valibot';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { defineTool, mcpTools, runTools, type ToolCall } from '../../lib/index.ts';
import { connectMcpHttp, createMcpServer } from '../../lib/mcp/index.ts';
import { openTelemetry } from '../../lib/otel/index.ts';
import { isAlive } from '../mcp-servers.ts';
import { collect, text } from '../helpers.ts';
import { parentOf, specTracing } from './support.ts';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const otel = specTracing();
/** Children started by this file: one still running after its spec (a failed spec) is killed, never left behind. */
const children: ChildProcess[] = [];
afterEach(() => {
  otel.exporter.reset();
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});
afterAll(() => otel.close());

interface RemoteSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  attributes: Record<string, unknown>;
  status: { code: number; message?: string };
}

/** Starts the traced server process; `finish()` closes its stdin and resolves with its spans and exit code once it has exited. */
async function startRemote(): Promise<{ url: URL; pid: number; finish: () => Promise<{ spans: RemoteSpan[]; code: number | null; stderr: string }> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'spec/otel/fixtures/traced-mcp-server.ts'], { cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'] });
  children.push(child);
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const spans: RemoteSpan[] = [];
  const lines = createInterface({ input: child.stdout });
  const url = await new Promise<URL>((resolve, reject) => {
    lines.on('line', (line) => {
      if (line.startsWith('URL ')) resolve(new URL(line.slice(4)));
      else if (line.startsWith('SPAN ')) spans.push(JSON.parse(line.slice(5)) as RemoteSpan);
    });
    void exited.then((code) => reject(new Error(`the server exited (${code}) before listening: ${stderr}`)));
  });
  return {
    url,
    pid: child.pid!,
    async finish() {
      child.stdin.end();
      const code = await exited;
      return { spans, code, stderr };
    },
  };
}

describe('T3 a remote MCP tool joins the caller trace (two processes, Streamable HTTP)', () => {
  it("the server's batch span is a child of the caller's call span, its tool spans nest under it; an untraced caller starts no shared trace", async () => {
    const remote = await startRemote();
    let finished: Awaited<ReturnType<typeof remote.finish>> | undefined;
    try {
      const client = await connectMcpHttp(remote.url);
      try {
        const tools = await mcpTools(client, { prefix: 'remote_' });
        const calls: ToolCall[] = [
          { id: 'call_a', name: 'remote_lookup', arguments: { key: 'a' } },
          { id: 'call_b', name: 'remote_lookup', arguments: { key: 'b' } },
        ];
        const traced = await collect(runTools(calls, { tools, tracing: openTelemetry({ tracer: otel.tracer }) }));
        expect(traced.batch.messages.map((m) => text(m))).toEqual(['value of a', 'value of b']);
        // The same call without tracing: no _meta trace context is sent.
        const untraced = await collect(runTools([{ id: 'call_c', name: 'remote_lookup', arguments: { key: 'c' } }], { tools }));
        expect(text(untraced.batch.messages[0]!)).toBe('value of c');
      } finally {
        await client.close();
      }
    } finally {
      finished = await remote.finish();
    }
    expect(finished.code, finished.stderr).toBe(0);
    expect(isAlive(remote.pid)).toBe(false);

    const localCalls = otel.named('execute_tool remote_lookup');
    expect(localCalls).toHaveLength(2);
    for (const span of localCalls) expect(span.attributes['gen_ai.tool.type']).toBe('extension');
    const traceId = otel.one('execute_tools').spanContext().traceId;

    const spans = finished.spans;
    const remoteBatches = spans.filter((s) => s.name === 'execute_tools');
    expect(remoteBatches).toHaveLength(3);
    const joined = remoteBatches.filter((s) => s.traceId === traceId);
    expect(joined).toHaveLength(2);
    // Each traced call's remote batch is a child of that call's own span.
    expect(joined.map((s) => s.parentSpanId).sort()).toEqual(localCalls.map((s) => s.spanContext().spanId).sort());
    const [alone] = remoteBatches.filter((s) => s.traceId !== traceId);
    expect(alone!.parentSpanId).toBeUndefined();

    for (const batch of remoteBatches) {
      const call = spans.find((s) => s.name === 'execute_tool lookup' && s.parentSpanId === batch.spanId)!;
      expect(call).toBeDefined();
      expect(call.traceId).toBe(batch.traceId);
      expect(call.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'lookup', 'gen_ai.tool.type': 'function', 'toolrun.tool.outcome': 'ok' });
      expect(call.status.code).toBe(SpanStatusCode.UNSET);
      // The tool's own span, made after an await inside the generator, nests under its call span.
      const work = spans.find((s) => s.name === 'remote lookup' && s.parentSpanId === call.spanId);
      expect(work?.traceId).toBe(batch.traceId);
    }
  });
});

describe('T3 the server reads only a well-formed W3C trace context from _meta (untrusted client)', () => {
  const echo = defineTool({ name: 'echo', input: v.object({}), execute: () => 'ok' });

  async function callWithMeta(meta: Record<string, unknown>): Promise<void> {
    const server = createMcpServer([echo], { tracing: openTelemetry({ tracer: otel.tracer }) });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'spec', version: '0.0.0' });
    await client.connect(clientSide);
    try {
      const result = await client.callTool({ name: 'echo', arguments: {}, _meta: meta });
      expect(result.isError).toBe(false);
    } finally {
      await client.close();
      await server.close();
    }
  }

  const valid = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
  it.each([
    ['a traceparent that is not hex', { traceparent: '00-0af7651916cd43dd8448eb211c80319X-b7ad6b7169203331-01' }],
    ['an all-zero trace id', { traceparent: '00-00000000000000000000000000000000-b7ad6b7169203331-01' }],
    ['an all-zero parent id', { traceparent: '00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01' }],
    ['an unknown version', { traceparent: 'ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }],
    ['a traceparent with more after it', { traceparent: `${valid}-extra` }],
    ['a very long traceparent', { traceparent: valid + 'a'.repeat(100_000) }],
    ['a traceparent that is not a string', { traceparent: { toString: (): string => valid } }],
  ])('%s: the batch starts a trace of its own', async (_what, meta) => {
    await callWithMeta(meta);
    const batch = otel.one('execute_tools');
    expect(batch.parentSpanContext).toBeUndefined();
    expect(batch.spanContext().traceId).not.toBe('0af7651916cd43dd8448eb211c80319c');
  });

  it('a valid traceparent is continued; a tracestate over 512 characters or with control characters is dropped', async () => {
    await callWithMeta({ traceparent: valid, tracestate: 'v=' + 'x'.repeat(600) });
    let batch = otel.one('execute_tools');
    expect(batch.spanContext().traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(batch.parentSpanContext?.spanId).toBe('b7ad6b7169203331');
    expect(batch.spanContext().traceState).toBeUndefined();
    otel.exporter.reset();

    await callWithMeta({ traceparent: valid, tracestate: 'v=1\nw=2' });
    batch = otel.one('execute_tools');
    expect(batch.spanContext().traceState).toBeUndefined();
    otel.exporter.reset();

    await callWithMeta({ traceparent: valid, tracestate: 'vendor=opaque' });
    batch = otel.one('execute_tools');
    expect(batch.spanContext().traceState?.get('vendor')).toBe('opaque');
    expect(parentOf(otel.one('execute_tool echo'))).toBe(batch.spanContext().spanId);
  });
});
