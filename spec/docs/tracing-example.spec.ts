/**
 * The worked example of docs/tracing-example.md, run as a user runs it: `node --import tsx
 * examples/tracing/agent.ts` in a child process, which starts a stdio MCP server and a
 * Streamable HTTP MCP server as its own children. The agent writes the spans its collector
 * received to a JSON file (`--spans-json`); the checks read that file and the agent's
 * output, never a duration: the run is the same on a loaded machine, only slower.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

interface Span {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Record<string, string | number | boolean>;
}

interface Report {
  stdioPid: number;
  httpPid: number;
  httpUrl: string;
  collectorUrl: string;
  spans: Span[];
}

/** What the agent did: its exit, its output, and the report it wrote. */
let run: { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string; report: Report };
const folder = mkdtempSync(join(tmpdir(), 'toolrun-tracing-example-'));

beforeAll(async () => {
  const file = join(folder, 'spans.json');
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/tracing/agent.ts', '--spans-json', file], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  // The agent must end by itself: a server, socket or timer left behind would keep it running (and this hook would time out).
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (exitCode, exitSignal) => resolve([exitCode, exitSignal]));
  });
  const report = JSON.parse(readFileSync(file, 'utf8')) as Report;
  run = { code, signal, stdout, stderr, report };
}, 120_000);

afterAll(() => rmSync(folder, { recursive: true, force: true }));

/** The spans named `name` from process `service`. */
function spansOf(service: string, name: string): Span[] {
  return run.report.spans.filter((span) => span.service === service && span.name === name);
}

function only(service: string, name: string): Span {
  const found = spansOf(service, name);
  expect(found, `exactly one ${service} span named "${name}" in:\n${listSpans(run.report.spans)}`).toHaveLength(1);
  return found[0]!;
}

function parentOf(span: Span): Span | undefined {
  return run.report.spans.find((candidate) => candidate.spanId === span.parentSpanId);
}

/** The span's ancestors, nearest first. */
function ancestors(span: Span): Span[] {
  const chain: Span[] = [];
  for (let parent = parentOf(span); parent !== undefined; parent = parentOf(parent)) chain.push(parent);
  return chain;
}

function listSpans(spans: readonly Span[]): string {
  return spans.map((span) => `${span.service} ${span.name} ${span.spanId} ← ${span.parentSpanId ?? '(root)'}`).join('\n');
}

/** Resolves to the error code of a TCP connection to the URL's port: `ECONNREFUSED` when nothing listens. */
function connectError(url: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('docs/tracing-example.md: one trace across an agent, a stdio MCP server and a Streamable HTTP MCP server', () => {
  it('the agent exits by itself with code 0, after both tool calls succeeded', () => {
    expect({ code: run.code, signal: run.signal }, `stdout:\n${run.stdout}\nstderr:\n${run.stderr}`).toEqual({ code: 0, signal: null });
    expect(run.stdout).toMatch(/^read_file: ok: /m);
    expect(run.stdout).toMatch(/^checksum: ok: [0-9a-f]{64}$/m);
    expect(run.stdout).toMatch(/^agent: completed after 2 turns$/m);
  });

  it('T3: every span of the three processes is in one trace', () => {
    const { spans } = run.report;
    expect(new Set(spans.map((span) => span.service))).toEqual(new Set(['agent', 'stdio-server', 'http-server']));
    expect(new Set(spans.map((span) => span.traceId)).size).toBe(1);
    // One root: the agent's own span; every other span has its parent among the collected ones.
    const roots = spans.filter((span) => parentOf(span) === undefined);
    expect(roots.map((span) => `${span.service} ${span.name}`)).toEqual(['agent invoke_agent tracing-example']);
    expect(roots[0]!.attributes).toEqual({ 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'tracing-example' });
  });

  it.each([
    ['read_file', 'stdio-server', 'call_1'],
    ['checksum', 'http-server', 'call_2'],
  ])("T3: the %s call's server-side batch span (%s) is a child of the agent's span of the same call, in another process", (tool, server, callId) => {
    const agentCall = only('agent', `execute_tool ${tool}`);
    expect(agentCall.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': tool, 'gen_ai.tool.call.id': callId, 'gen_ai.tool.type': 'extension', 'toolrun.tool.outcome': 'ok' });
    expect(ancestors(agentCall).at(-1)?.name).toBe('invoke_agent tracing-example');

    const serverCall = only(server, `execute_tool ${tool}`);
    expect(serverCall.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': tool, 'toolrun.tool.outcome': 'ok' });
    const serverBatch = only(server, 'execute_tools');
    // Up from the server's call span: its batch span, then the agent's span of this very call.
    expect(ancestors(serverCall).slice(0, 2), listSpans(run.report.spans)).toEqual([serverBatch, agentCall]);
  });

  it("T2: the tool's own span (sha256) is a child of the server-side execute_tool checksum span", () => {
    const own = only('http-server', 'sha256');
    expect(parentOf(own)).toBe(only('http-server', 'execute_tool checksum'));
    expect(own.attributes['checksum.bytes']).toBe(Buffer.byteLength('one trace, three processes'));
  });

  it('both server processes are gone, and nothing listens on the ports of the HTTP server and the collector', async () => {
    expect(run.stdout).toMatch(/^stdio-server: exited$/m);
    expect(run.stdout).toMatch(/^http-server: exited with code 0$/m);
    expect(isRunning(run.report.stdioPid)).toBe(false);
    expect(isRunning(run.report.httpPid)).toBe(false);
    expect(await connectError(run.report.httpUrl)).toBe('ECONNREFUSED');
    expect(await connectError(run.report.collectorUrl)).toBe('ECONNREFUSED');
  });

  it('prints what docs/tracing-example.md shows, trace id aside', () => {
    const page = readFileSync(join(root, 'docs/tracing-example.md'), 'utf8');
    const shown = /<!-- output of examples\/tracing\/agent\.ts -->\n```text\n([\s\S]*?)\n```/.exec(page)?.[1];
    expect(shown, 'docs/tracing-example.md has a ```text block after <!-- output of examples/tracing/agent.ts -->').toBeDefined();
    const normal = (text: string) => text.trimEnd().split('\n').map((line) => line.replace(/\b[0-9a-f]{32}\b/g, '<trace id>'));
    expect(normal(run.stdout)).toEqual(normal(shown!));
  });
});
