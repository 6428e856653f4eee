/**
 * `toolrun serve-mcp`'s per-call time limit: `DEFAULT_SERVE_TIMEOUT_MS`
 * (5 minutes) for tools that set none, `--timeout <ms>` instead. The command runs in process
 * over Streamable HTTP on 127.0.0.1 with fake `setTimeout`/`clearTimeout` (sockets are real);
 * the fixture's `hold` tool never ends on its own and says it started with one progress
 * notification, which is the gate before virtual time moves.
 *
 * Fails if the default is dropped (the call is then still running after 5 virtual minutes) or
 * if `--timeout` is ignored.
 */
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_SERVE_TIMEOUT_MS, serveMcpCommand } from '../../lib/cli/serve-mcp.ts';
import { connectMcpHttp } from '../../lib/mcp/client/http.ts';

afterEach(() => {
  vi.useRealTimers();
});

/** Serves spec/fixtures/mcp/served-tools.ts with `args`; resolves with its URL and a way to stop it. */
async function serve(args: readonly string[]): Promise<{ url: URL; stop: () => Promise<number> }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  stderr.resume();
  const line = new Promise<string>((resolve) => stdout.once('data', (chunk: Buffer) => resolve(chunk.toString())));
  const exited = serveMcpCommand(['--http', '0', '--no-auth', ...args, 'spec/fixtures/mcp/served-tools.ts'], { stdout, stderr });
  const url = new URL(/(http:\/\/\S+)/.exec(await line)![1]!);
  return {
    url,
    stop: () => {
      process.emit('SIGTERM');
      return exited;
    },
  };
}

/** Calls `hold` and resolves once the server said it started; `result` settles when the call ends. */
async function holdCall(url: URL): Promise<{ result: Promise<{ text: string; isError: boolean }>; settled: () => boolean; close: () => Promise<void> }> {
  const client = await connectMcpHttp(url);
  let started: () => void = () => undefined;
  const running = new Promise<void>((resolve) => (started = resolve));
  let done = false;
  const result = client
    .callTool({ name: 'hold', arguments: {} }, undefined, { onprogress: () => started(), timeout: 60 * 60_000 })
    .then((r) => ({ text: (r.content as { text: string }[])[0]!.text, isError: r.isError === true }))
    .finally(() => (done = true));
  await running;
  return { result, settled: () => done, close: () => client.close() };
}

describe('toolrun serve-mcp: the per-call time limit', () => {
  it('A4 default: a call whose tool never ends is stopped after DEFAULT_SERVE_TIMEOUT_MS (5 minutes), not before', { timeout: 60_000 }, async () => {
    expect(DEFAULT_SERVE_TIMEOUT_MS).toBe(300_000);
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const server = await serve([]);
    const call = await holdCall(server.url);
    await vi.advanceTimersByTimeAsync(DEFAULT_SERVE_TIMEOUT_MS - 1);
    expect(call.settled()).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const { text, isError } = await call.result;
    expect(isError).toBe(true);
    expect(text).toMatch(/timed out after 300000 ms/);
    await call.close();
    expect(await server.stop()).toBe(0);
  });

  it('A4 --timeout overrides it: 50 ms stops the same call after 50 virtual ms', { timeout: 60_000 }, async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const server = await serve(['--timeout', '50']);
    const call = await holdCall(server.url);
    await vi.advanceTimersByTimeAsync(49);
    expect(call.settled()).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const { text, isError } = await call.result;
    expect(isError).toBe(true);
    expect(text).toMatch(/timed out after 50 ms/);
    await call.close();
    expect(await server.stop()).toBe(0);
  });
});
