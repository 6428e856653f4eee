/**
 * Issue 20: a stdio MCP client that does not read its stdout. Before, `serveMcp` wrote every
 * response into stdout's buffer whatever was queued, so a client that sent requests and
 * stopped reading grew the server by every response (200 × 16 KiB here: 3,064,451 bytes
 * queued with the drop disabled). Now reading stops at `maxQueuedBytes` and a response that would queue past
 * twice the ceiling is dropped, logged and counted.
 *
 * A real child process whose stdout pipe this spec never reads; memory is shown by the
 * bytes the server itself reports queued (`stats().queuedBytes`: stdout's `writableLength`),
 * never by RSS. Fails if the drop in `serveStdio`'s writer (lib/mcp/server/serve-stdio.ts) is removed (queuedBytes then
 * reaches about 200 × 16 KiB).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { McpServeStats } from '../../lib/mcp/server/serve.ts';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const CEILING = 64 * 1024;
const RESPONSE = 16 * 1024;
const CALLS = 200;

describe('serveMcp over stdio, a client that does not read its stdout', () => {
  it('what the server queues stays bounded (backpressure, then responses dropped with a log); requests are not read meanwhile', { timeout: 120_000 }, async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'spec/fixtures/mcp/stdio-stats-server.ts'], { cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'] });
    try {
      // Never read: once its pipe and this side's buffer are full, the server's writes queue.
      child.stdout.pause();
      const stats: ((value: McpServeStats) => void)[] = [];
      const logs: string[] = [];
      let ready: () => void = () => undefined;
      const started = new Promise<void>((resolve) => (ready = resolve));
      createInterface({ input: child.stderr }).on('line', (line) => {
        if (line === 'ready') ready();
        else if (line.startsWith('stats ')) stats.shift()?.(JSON.parse(line.slice(6)) as McpServeStats);
        else if (line.startsWith('log ')) logs.push(line);
      });
      const probe = (): Promise<McpServeStats> =>
        new Promise((resolve) => {
          stats.push(resolve);
          child.kill('SIGUSR2');
        });
      await started;
      const lines = [
        { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'spec', version: '0' } } },
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        ...Array.from({ length: CALLS }, (_, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'tools/call', params: { name: 'big', arguments: {} } })),
      ];
      child.stdin.write(lines.map((m) => `${JSON.stringify(m)}\n`).join(''));
      // Gate: every request read so far has been answered (or dropped) — no call is running — and
      // nothing changes between two probes. A hang guard is the spec's timeout.
      let last: McpServeStats;
      let previous: string | undefined;
      for (;;) {
        last = await probe();
        const key = JSON.stringify(last);
        if (last.runningCalls === 0 && key === previous) break;
        previous = key;
        await new Promise((resolve) => setImmediate(resolve));
      }
      // Bounded: at most twice the ceiling plus the one response that crossed it.
      expect(last.queuedBytes).toBeLessThanOrEqual(2 * CEILING + RESPONSE + 1024);
      expect(last.readingPaused).toBe(true);
      // The rest was either never read (backpressure) or dropped with a log line naming it.
      expect(last.droppedResponses).toBeGreaterThan(0);
      expect(logs.filter((line) => /the response to request \d+ was dropped/.test(line))).toHaveLength(last.droppedResponses);
      // Reading stdout again: the server drains and reads the remaining requests.
      child.stdout.resume();
      let answered = 0;
      createInterface({ input: child.stdout }).on('line', () => answered++);
      for (;;) {
        const now = await probe();
        if (!now.readingPaused && now.runningCalls === 0 && now.queuedBytes === 0 && answered + now.droppedResponses >= CALLS + 1) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(answered).toBeGreaterThan(0);
    } finally {
      child.kill('SIGTERM');
      if (child.exitCode === null) await once(child, 'exit');
    }
  });
});
