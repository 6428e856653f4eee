/**
 * Scenarios 8 and 9, `mcp-stdio` and `mcp-http`: the per-call cost of serving a tool over
 * MCP, `toolrun serve-mcp` next to a plain SDK `McpServer` serving the same `echo` tool
 * (bench/mcp/plain-server.ts), each in a child process of its own, over stdio and over
 * Streamable HTTP on 127.0.0.1.
 *
 * One client in this process (the SDK's `Client`; over HTTP made by `connectMcpHttp`, whose
 * fetch adds no listener per request to a long-lived signal) calls `echo` N times, one call at a time (`sequential`)
 * and with 50 calls in flight. Per run and server: the server's CPU time per call (read by
 * the server itself, `process.cpuUsage`, through the SIGUSR2 probe of bench/mcp/probe.mjs,
 * before and after the calls), the client-side latency of each call (p50, p99), and the
 * server's RSS after the run. Both servers run side by side and their runs alternate, so a
 * change of load on the machine hits both. Rows give the median of the runs and their range.
 * These scenarios spawn servers; filter them in or out by name (`npm run bench -- mcp-http`).
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { connectMcpHttp } from '../../lib/mcp/client/http.ts';
import { formatInt, formatNum, formatRatio, median, nowNs, type Budget } from '../harness.ts';
import { findRow, IMPL, type Row, type ScenarioName, type ScenarioOptions, type ScenarioResult, type Target } from '../rows.ts';

/** Calls per measured run. */
export const MCP_SIZES = [1_000] as const;
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const PROBE = join(ROOT, 'bench', 'mcp', 'probe.mjs');
/**
 * Calls each server gets before anything is measured (10 in flight), per call of the largest
 * measured run: 3,000 before runs of 1,000 (the smoke spec's runs of 20 get 60). Both servers' CPU per
 * call keeps falling over their first few thousand calls (V8 compiling their hot paths: with
 * 300, the first measured rounds of 1,000 calls cost 2-5× the later ones for both servers),
 * and the sequential rows, measured first, fell in that window.
 */
const WARMUP_PER_CALL = 3;
const IMPLS = { toolrun: IMPL.toolrun, plain: 'plain SDK McpServer' } as const;
type Impl = keyof typeof IMPLS;
type Wire = 'stdio' | 'http';

interface Probe {
  cpuUs: number;
  rss: number;
}

/** A server process with a connected client. */
interface Served {
  client: Client;
  probe(): Promise<Probe>;
  close(): Promise<void>;
}

function serverArgs(impl: Impl, wire: Wire): string[] {
  const node = ['--import', 'tsx', '--import', PROBE];
  const http = wire === 'http' ? ['--http', '0'] : [];
  return impl === 'toolrun' ? [...node, 'lib/cli/main.ts', 'serve-mcp', ...http, 'bench/mcp/tools.ts'] : [...node, 'bench/mcp/plain-server.ts', ...http];
}

/** Reads probe lines from a server's stderr; `probe()` asks for one with SIGUSR2. */
function prober(pid: () => number | null | undefined, stderr: Readable): () => Promise<Probe> {
  const waiting: ((probe: Probe) => void)[] = [];
  createInterface({ input: stderr }).on('line', (line) => {
    if (line.startsWith('toolrun-bench-probe ')) waiting.shift()?.(JSON.parse(line.slice(20)) as Probe);
  });
  return () =>
    new Promise<Probe>((resolve) => {
      waiting.push(resolve);
      process.kill(pid()!, 'SIGUSR2');
    });
}

async function start(impl: Impl, wire: Wire): Promise<Served> {
  if (wire === 'stdio') {
    const client = new Client({ name: 'toolrun-bench', version: '0.0.0' });
    const transport = new StdioClientTransport({ command: process.execPath, args: serverArgs(impl, wire), cwd: ROOT, stderr: 'pipe' });
    const probe = prober(() => transport.pid, transport.stderr as Readable);
    await client.connect(transport);
    return { client, probe, close: () => client.close() };
  }
  // toolrun serves HTTP behind a bearer token by default, as a user runs it: the bench pays
  // for the check too. The plain SDK server has no authorization and ignores the header.
  const token = randomBytes(32).toString('base64url');
  const child: ChildProcess = spawn(process.execPath, serverArgs(impl, wire), { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TOOLRUN_MCP_TOKEN: token } });
  const exited = once(child, 'exit');
  const probe = prober(() => child.pid, child.stderr!);
  const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  const url = /(http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(line)?.[1];
  if (url === undefined) throw new Error(`${impl}: unexpected first line ${line}`);
  // toolrun's client for both servers: the SDK's own adds a listener per request to one signal.
  const httpClient = await connectMcpHttp(new URL(url), { token });
  return {
    client: httpClient,
    probe,
    async close() {
      await httpClient.close();
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** `n` calls of `echo`, `inFlight` at a time: the server's CPU µs per call, latencies (ms), RSS. */
async function measure(served: Served, n: number, inFlight: number): Promise<{ cpuUs: number; p50: number; p99: number; rss: number }> {
  const latencies = new Float64Array(n);
  const before = await served.probe();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < n) {
      const i = next++;
      const t0 = nowNs();
      const result = await served.client.callTool({ name: 'echo', arguments: { text: 'hello' } });
      latencies[i] = (nowNs() - t0) / 1e6;
      if (result.isError === true) throw new Error(`echo failed: ${JSON.stringify(result.content)}`);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  const after = await served.probe();
  latencies.sort();
  return { cpuUs: (after.cpuUs - before.cpuUs) / n, p50: latencies[Math.floor(n * 0.5)]!, p99: latencies[Math.min(n - 1, Math.floor(n * 0.99))]!, rss: after.rss };
}

async function mcpServe(name: ScenarioName, wire: Wire, budget: Budget, options: ScenarioOptions): Promise<ScenarioResult> {
  const sizes = options.sizes ?? MCP_SIZES;
  const runs = Math.max(1, budget.repeats);
  const warmup = WARMUP_PER_CALL * Math.max(...sizes);
  const rows: Row[] = [];
  const servers = new Map<Impl, Served>();
  try {
    for (const impl of ['toolrun', 'plain'] as const) {
      options.log?.(`${name}: starting ${IMPLS[impl]}`);
      const served = await start(impl, wire);
      servers.set(impl, served);
      await measure(served, warmup, 10);
    }
    for (const [series, inFlight] of [['sequential', 1], ['50 in flight', 50]] as const) {
      for (const n of sizes) {
        const results = new Map<Impl, Awaited<ReturnType<typeof measure>>[]>([['toolrun', []], ['plain', []]]);
        for (let run = 0; run < runs; run++) {
          // Alternating, so that a change of load on the machine hits both servers.
          for (const impl of run % 2 === 0 ? (['toolrun', 'plain'] as const) : (['plain', 'toolrun'] as const)) {
            options.log?.(`${name} ${series} N=${formatInt(n)} run ${run + 1}/${runs}: ${IMPLS[impl]}`);
            results.get(impl)!.push(await measure(servers.get(impl)!, n, inFlight));
          }
        }
        const plainCpu = median(results.get('plain')!.map((r) => r.cpuUs));
        for (const impl of ['toolrun', 'plain'] as const) {
          const rs = results.get(impl)!;
          const cpu = rs.map((r) => r.cpuUs);
          const value = median(cpu);
          rows.push({
            scenario: name,
            series,
            impl: IMPLS[impl],
            n,
            unit: 'server CPU µs/call',
            value,
            lo: Math.min(...cpu),
            hi: Math.max(...cpu),
            samples: rs.length,
            chart: value * 1e3,
            cols: {
              'vs plain': formatRatio(value / plainCpu),
              'p50 ms': formatNum(median(rs.map((r) => r.p50))),
              'p99 ms': formatNum(median(rs.map((r) => r.p99))),
              'RSS MB': formatNum(median(rs.map((r) => r.rss)) / 1e6),
            },
          });
        }
      }
    }
  } finally {
    for (const served of servers.values()) await served.close().catch(() => undefined);
  }
  const targets: Target[] = [];
  for (const series of ['sequential', '50 in flight']) {
    const n = sizes[sizes.length - 1]!;
    const ours = findRow(rows, series, IMPLS.toolrun, n);
    const plain = findRow(rows, series, IMPLS.plain, n);
    const ratio = ours?.value != null && plain?.value != null ? ours.value / plain.value : undefined;
    targets.push({
      target: `${wire}, ${series}: toolrun's server CPU per call ≤ 1.0× the plain SDK server's`,
      measured: ratio === undefined ? 'not run' : `${formatRatio(ratio)} (${formatNum(ours!.value!)} vs ${formatNum(plain!.value!)} µs/call, medians of ${ours!.samples} runs)`,
      met: ratio === undefined ? null : ratio <= 1.0,
    });
  }
  return {
    name,
    title: `MCP serving over ${wire === 'stdio' ? 'stdio' : 'Streamable HTTP'}: toolrun serve-mcp vs a plain SDK McpServer (one echo tool)`,
    description:
      `Each server in a child process of its own${wire === 'http' ? ', on 127.0.0.1' : ''}; one client in the bench process (the SDK's \`Client\`; over HTTP through \`connectMcpHttp\`) calls \`echo\` N times, ` +
      `one at a time and with 50 in flight, after ${formatInt(warmup)} warm-up calls. ` +
      'Server CPU per call is the server\'s own `process.cpuUsage()` before and after (read through a SIGUSR2 probe); ' +
      `latencies are the client's, per call; RSS is the server's after the run. Median of ${runs} alternating runs, range in brackets.`,
    chartLabel: 'server CPU ns per call',
    rows,
    targets,
  };
}

/** Runs `mcp-stdio`: toolrun serve-mcp vs a plain SDK server over stdio. */
export function mcpStdio(budget: Budget, options: ScenarioOptions = {}): Promise<ScenarioResult> {
  return mcpServe('mcp-stdio', 'stdio', budget, options);
}

/** Runs `mcp-http`: toolrun serve-mcp vs a plain SDK server over Streamable HTTP. */
export function mcpHttp(budget: Budget, options: ScenarioOptions = {}): Promise<ScenarioResult> {
  return mcpServe('mcp-http', 'http', budget, options);
}
