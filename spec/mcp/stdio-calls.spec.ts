/**
 * Issue 20: over stdio `serveMcp` serves a plain `tools/call` itself (`serveCall`,
 * lib/mcp/server/mcp-server.ts), past the SDK's request machinery, and must answer exactly as the SDK
 * would. A real `toolrun serve-mcp` child process spoken to in raw JSON-RPC lines, so that
 * what goes over the wire is what is checked:
 * - a call's response carries the result and the request id;
 * - a call its client cancelled (`notifications/cancelled`) is aborted (its tool's signal,
 *   here: it returns) and gets no response at all — fails if `serveCall` sends the result of
 *   a cancelled call (a response with id 2 would then arrive before the one with id 4);
 * - a request whose params the SDK's schema refuses (`name` not a string) still gets the
 *   SDK's own error response — fails if such params were served directly.
 * No timing: the spec waits for lines, and a request sent after the cancellation (a `ping`,
 * answered in order over the one pipe) shows that nothing more came for the cancelled call.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

describe('toolrun serve-mcp over stdio: tools/call served past the SDK’s request machinery', () => {
  it('answers a call with its result, sends nothing for a cancelled call (whose tool is aborted), and leaves refused params to the SDK', { timeout: 60_000 }, async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'lib/cli/main.ts', 'serve-mcp', 'spec/fixtures/mcp/served-tools.ts'], { cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'] });
    try {
      const received: Record<string, unknown>[] = [];
      const waiting: { match: (m: Record<string, unknown>) => boolean; resolve: (m: Record<string, unknown>) => void }[] = [];
      createInterface({ input: child.stdout }).on('line', (line) => {
        const message = JSON.parse(line) as Record<string, unknown>;
        received.push(message);
        const at = waiting.findIndex((w) => w.match(message));
        if (at >= 0) waiting.splice(at, 1)[0]!.resolve(message);
      });
      const next = (match: (m: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> => {
        const seen = received.find(match);
        return seen !== undefined ? Promise.resolve(seen) : new Promise((resolve) => waiting.push({ match, resolve }));
      };
      const send = (message: Record<string, unknown>): void => void child.stdin.write(`${JSON.stringify(message)}\n`);
      const byId = (id: number) => (m: Record<string, unknown>) => m.id === id && m.method === undefined;

      send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'spec', version: '0' } } });
      await next(byId(0));
      send({ jsonrpc: '2.0', method: 'notifications/initialized' });

      send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } });
      expect(await next(byId(1))).toEqual({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'echo: hi' }], isError: false } });

      send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'hold', arguments: {}, _meta: { progressToken: 'p2' } } });
      const progress = await next((m) => m.method === 'notifications/progress');
      expect(progress.params).toMatchObject({ progressToken: 'p2', message: 'started' });
      send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2, reason: 'the user pressed stop' } });

      send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 5 } });
      const refused = await next(byId(3));
      expect(refused.error).toMatchObject({ code: -32603 });
      expect(JSON.stringify(refused.error)).toMatch(/name/);

      send({ jsonrpc: '2.0', id: 4, method: 'ping' });
      await next(byId(4));
      expect(received.filter(byId(2))).toEqual([]);
    } finally {
      child.kill('SIGTERM');
    }
  });
});
