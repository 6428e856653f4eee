/**
 * `toolrun serve-mcp` over stdio against a hostile client (the breaker's pass): a
 * real child process spoken to line by line. Each spec reproduces a defect found by attacking
 * the server; each waits for lines and the process's exit, never for time.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const initialize = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'spec', version: '0' } } };

function call(id: unknown, name: string, args: Record<string, unknown> = {}, progressToken?: number) {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, ...(progressToken === undefined ? {} : { _meta: { progressToken } }) } };
}

/** `toolrun serve-mcp` over stdio with the spec fixtures' tools (echo, hold, fail), initialized. */
async function stdioServer() {
  const child = spawn(process.execPath, ['--import', 'tsx', 'lib/cli/main.ts', 'serve-mcp', 'spec/fixtures/mcp/served-tools.ts'], { cwd: repoRoot });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  /** The next line the server writes, parsed; `undefined` once stdout ended (the process died). */
  const next = async (): Promise<Record<string, unknown> | undefined> => {
    const line = await lines.next();
    return line.done === true ? undefined : (JSON.parse(line.value as string) as Record<string, unknown>);
  };
  const write = async (data: string): Promise<void> => {
    if (!child.stdin.write(data)) await once(child.stdin, 'drain');
  };
  const send = (message: unknown): Promise<void> => write(`${typeof message === 'string' ? message : JSON.stringify(message)}\n`);
  await send(initialize);
  await send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  expect((await next())?.id).toBe(0);
  return { child, exited, next, send, stderr: () => stderr };
}

/** JSON text nested `depth` arrays deep: well within the 10 MiB line limit, and JSON.parse takes it. */
const nested = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`;

describe('serve-mcp over stdio: a deeply nested message fails alone', () => {
  // Fails before the fix: the SDK builds its error text for a message it cannot classify (or a
  // response for an id it never sent) with JSON.stringify, which overflows the stack; the
  // RangeError went up through the stdin `data` handler and the process exited 1, so `next()`
  // after it ended (undefined) instead of answering the echo call.
  it('a 100,000-deep message with an id of the wrong type, and a 100,000-deep response for an unknown id, are logged and skipped; the session goes on', async () => {
    const server = await stdioServer();
    await server.send(`{"jsonrpc":"2.0","id":{"not":"an id"},"method":"tools/call","params":{"name":"echo","arguments":{"text":${nested(100_000)}}}}`);
    await server.send(`{"jsonrpc":"2.0","id":424242,"result":{"deep":${nested(100_000)}}}`);
    await server.send(call(1, 'echo', { text: 'still here' }));
    expect(await server.next()).toMatchObject({ id: 1, result: { content: [{ type: 'text', text: 'echo: still here' }], isError: false } });
    expect(server.stderr()).toMatch(/^toolrun: serveMcp: stdin: a message the server could not handle was skipped \(RangeError: Maximum call stack size exceeded\)$/m);
    await server.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } });
    server.child.stdin.end();
    expect(await server.exited).toBe(0);
  }, 120_000); // a hang guard for a loaded machine, not a time limit
});

describe('serve-mcp over stdio: a request id already in use', () => {
  // Fails before the fix: the second `hold` with id 1 started too and took the id's place, so
  // the first became unreachable: `notifications/cancelled` for 1 stopped the second one
  // only, the first ran on (stdin's end then interrupted it: "1 call interrupted"), and no
  // error told the client its id was taken.
  it('a second request with the id of a running call gets a JSON-RPC error and never runs, also in the same chunk; cancelling the id stops the first call', async () => {
    const server = await stdioServer();
    // Both lines in one write: the second is read before the first call's handler started.
    await server.send(`${JSON.stringify(call(1, 'hold', {}, 101))}\n${JSON.stringify(call(1, 'hold', {}, 102))}`);
    expect(await server.next()).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32600, message: 'request id 1 is already in use by a request of this session that has not been answered; send each request with an id not in use' },
    });
    expect(await server.next()).toMatchObject({ method: 'notifications/progress', params: { progressToken: 101, message: 'started' } });
    // Once the first call runs.
    await server.send(call(1, 'hold', {}, 103));
    expect(await server.next()).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32600, message: 'request id 1 is already in use by a request of this session that has not been answered; send each request with an id not in use' },
    });
    await server.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } });
    // The cancelled call gets no response (the specification); a later call still answers, and nothing else came before it.
    await server.send(call(2, 'echo', { text: 'next' }));
    expect(await server.next()).toMatchObject({ id: 2, result: { content: [{ type: 'text', text: 'echo: next' }] } });
    server.child.stdin.end();
    expect(await server.exited).toBe(0);
    // Nothing was left running for stdin's end to interrupt.
    expect(server.stderr()).toMatch(/^toolrun: stopped: 0 calls interrupted, 1 session closed, 0 connections cut$/m);
  }, 120_000); // a hang guard for a loaded machine, not a time limit
});

describe('serve-mcp over stdio: calls a client starts and never waits for', () => {
  // Fails before the fix: nothing bounded the calls of one session; the 1,001st `hold` started
  // too (its 'started' progress came instead of an error), and 20,000 of them grew the
  // process by 110 MB.
  it('past 1,000 running calls (maxCallsPerSession) a call gets a JSON-RPC error naming the limit; once one ends there is room again', async () => {
    const server = await stdioServer();
    const lines: string[] = [];
    for (let i = 1; i <= 1_001; i++) lines.push(JSON.stringify(call(i, 'hold', {}, i === 1_001 ? 1_001 : undefined)));
    await server.send(lines.join('\n'));
    expect(await server.next()).toEqual({
      jsonrpc: '2.0',
      id: 1_001,
      error: { code: -32000, message: 'too many calls at once in this MCP session: 1000 are waiting for their answer (maxCallsPerSession); wait for one to end, or cancel one, then call again' },
    });
    await server.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } });
    // A cancelled call ends within its grace; until then a new call may still be refused.
    for (let attempt = 0; ; attempt++) {
      await server.send(call(2_000 + attempt, 'hold', {}, 2_000 + attempt));
      const answer = await server.next();
      if (answer?.method === 'notifications/progress') {
        expect(answer).toMatchObject({ params: { progressToken: 2_000 + attempt, message: 'started' } });
        break;
      }
      expect(answer).toMatchObject({ id: 2_000 + attempt, error: { code: -32000 } });
      if (attempt > 1_000) throw new Error('never room again');
    }
    server.child.stdin.end();
    expect(await server.exited).toBe(0);
    expect(server.stderr()).toMatch(/^toolrun: stopped: 1000 calls interrupted, 1 session closed, 0 connections cut$/m);
  }, 120_000); // a hang guard for a loaded machine, not a time limit
});
