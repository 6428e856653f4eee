/**
 * One trace across three processes: this agent, a stdio MCP server and a Streamable HTTP
 * MCP server (docs/tracing-example.md).
 *
 *   node --import tsx examples/tracing/agent.ts [--spans-json <file>]
 *
 * 1. starts a trace collector on 127.0.0.1 (collector.ts) and OpenTelemetry for itself;
 * 2. starts `stdio-server.ts` (tool `read_file`) and `http-server.ts` (tool `checksum`) as
 *    child processes, each exporting its own spans to the collector;
 * 3. runs an agent with a scripted model: turn 1 calls both tools at once, turn 2 answers.
 *    `tracing: openTelemetry()` gives each call a span, and `mcpTools` sends that span's
 *    W3C trace context with the request (`_meta.traceparent`), so each server's spans join
 *    the agent's trace;
 * 4. stops both servers and checks that they exited, sends its own last spans, closes the
 *    collector, and prints the trace as a tree (with `--spans-json`, also writes the spans).
 *
 * Exits with 1 when a step fails; every process it started is gone by then.
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { trace } from '@opentelemetry/api';
import { assistantText, mcpTools, resultText, runAgent } from '../../lib/index.ts';
import { connectMcpHttp, McpStdioTransport } from '../../lib/mcp/index.ts';
import { openTelemetry } from '../../lib/otel/index.ts';
import { scriptedModel } from '../../lib/testing.ts';
import { startCollector, traceTree } from './collector.ts';
import { COLLECTOR_URL_VARIABLE, startTelemetry } from './telemetry.ts';

const { values: cli } = parseArgs({ options: { 'spans-json': { type: 'string' } } });
const here = dirname(fileURLToPath(import.meta.url));
// The servers run under the same Node options as this process (`--import tsx`).
const nodeArgs = (file: string) => [...process.execArgv, join(here, file)];

const collector = await startCollector();
const telemetry = startTelemetry('agent', collector.url);
const serverEnv = { [COLLECTOR_URL_VARIABLE]: collector.url };

// The stdio server: its transport starts it, and ends it when the client closes.
const stdioTransport = new McpStdioTransport({ command: process.execPath, args: nodeArgs('stdio-server.ts'), env: serverEnv, cwd: here });
const stdioClient = new Client({ name: 'tracing-example', version: '1.0.0' });
// The HTTP server: a child process that prints its URL, and stops when its stdin ends.
const httpServer = spawn(process.execPath, nodeArgs('http-server.ts'), { cwd: here, env: { ...process.env, ...serverEnv }, stdio: ['pipe', 'pipe', 'inherit'] });
const httpExit = once(httpServer, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
let stdioPid: number | null = null;
let httpUrl: URL | undefined;
let httpClient: Client | undefined;
try {
  await stdioClient.connect(stdioTransport);
  stdioPid = stdioTransport.pid;
  httpUrl = new URL(await firstLine(httpServer.stdout));
  httpClient = await connectMcpHttp(httpUrl);
  const tools = [...(await mcpTools(stdioClient)), ...(await mcpTools(httpClient))];
  console.log(`tools: ${tools.map((tool) => tool.name).join(', ')}`);

  const model = scriptedModel([
    {
      role: 'assistant',
      content: [
        { type: 'toolCall', id: 'call_1', name: 'read_file', arguments: { path: 'stdio-server.ts', offset: 2, limit: 1 } },
        { type: 'toolCall', id: 'call_2', name: 'checksum', arguments: { text: 'one trace, three processes' } },
      ],
    },
    { role: 'assistant', content: [{ type: 'text', text: 'Done: one file read, one checksum.' }] },
  ]);

  // The agent's own span, the root of the trace: each batch's span is its child.
  await trace.getTracer('tracing-example').startActiveSpan('invoke_agent tracing-example', { attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'tracing-example' } }, async (span) => {
    try {
      const run = runAgent({ model, tools, messages: [{ role: 'user', content: 'Read a file and checksum a text.' }], tracing: openTelemetry() });
      for await (const event of run) {
        if (event.type === 'tool_result') console.log(`${event.message.toolName}: ${event.message.isError ? 'error' : 'ok'}: ${resultText(event.message).split('\n')[0]!.trim()}`);
        if (event.type === 'message' && event.message.content.every((block) => block.type === 'text')) console.log(`model: ${assistantText(event.message)}`);
        if (event.type === 'agent_end') console.log(`agent: ${event.reason} after ${event.turns} turns`);
      }
    } finally {
      span.end();
    }
  });
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  // Stop both servers, whatever happened above, and check that they are gone.
  await stdioClient.close();
  await httpClient?.close();
  httpServer.stdin.on('error', () => undefined); // EPIPE when the server has already exited: nothing to tell it then
  httpServer.stdin.end();
  const [code, signal] = await httpExit;
  const stdioGone = stdioPid === null || !isRunning(stdioPid);
  console.log(`stdio-server: ${stdioGone ? 'exited' : 'STILL RUNNING'}`);
  console.log(`http-server: exited with ${signal ?? `code ${code}`}`);
  if (!stdioGone || code !== 0) process.exitCode = 1;
  await telemetry.shutdown();
  await collector.close();
}

console.log('');
for (const line of traceTree(collector.spans)) console.log(line);
if (cli['spans-json'] !== undefined) {
  const report = { stdioPid, httpPid: httpServer.pid, httpUrl, collectorUrl: collector.url, spans: collector.spans };
  await writeFile(cli['spans-json'], JSON.stringify(report, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value), 2));
}

/** The first line a child process writes to its stdout; rejects if it ends without one. */
async function firstLine(stdout: Readable): Promise<string> {
  try {
    for await (const line of createInterface({ input: stdout })) return line;
    throw new Error('the server exited before printing its URL');
  } finally {
    // Closing the line reader paused the stream: let it flow to its end, so it does not hold this process open.
    stdout.resume();
  }
}

/** Whether a process with this id exists (signal 0 only checks). */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
