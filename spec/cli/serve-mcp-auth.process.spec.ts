/**
 * `toolrun serve-mcp --http` needs a bearer token by default (contract Z7): a real CLI
 * process on 127.0.0.1, reached with fetch and with the SDK's client through
 * `connectMcpHttp`; `--no-auth` refused off loopback.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../lib/cli/main.ts';
import { connectMcpHttp } from '../../lib/mcp/index.ts';
import { memoryIo, repoRoot } from './support.ts';

const children: ChildProcessWithoutNullStreams[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  }
});

/** Starts the CLI with `env`; resolves once the URL is on stdout and the authorization line on stderr. */
async function start(args: readonly string[], env: NodeJS.ProcessEnv): Promise<{ url: URL; stdout: () => string; stderr: () => string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'lib/cli/main.ts', 'serve-mcp', '--http', '0', ...args, 'spec/fixtures/mcp/served-tools.ts'], { cwd: repoRoot, env });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  while (!(/ at http:\/\/\S+\n/.test(out) && err.includes('\n'))) {
    if (child.exitCode !== null) throw new Error(`serve-mcp exited with ${child.exitCode}: ${out}${err}`);
    await Promise.race([once(child.stdout, 'data'), once(child.stderr, 'data'), once(child, 'exit')]);
  }
  return { url: new URL(/ at (http:\/\/\S+)\n/.exec(out)![1]!), stdout: () => out, stderr: () => err };
}

const initialize = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'spec', version: '0' } } });
const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

describe('Z7 toolrun serve-mcp --http requires a bearer token by default', () => {
  it('Z7 without TOOLRUN_MCP_TOKEN: a random token is printed once on stderr with the URL; no token or a wrong one: 401; the printed one works with connectMcpHttp({ token })', async () => {
    const { TOOLRUN_MCP_TOKEN: _unset, ...env } = process.env;
    const { url, stdout, stderr } = await start([], env);
    const line = new RegExp(`^toolrun: clients of ${url.href.replace(/[.]/g, '\\.')} must send Authorization: Bearer ([A-Za-z0-9_-]{43}) \\(set TOOLRUN_MCP_TOKEN to choose the token\\)\\n$`);
    expect(stderr()).toMatch(line);
    const token = line.exec(stderr())![1]!;
    expect(stdout()).not.toContain(token);
    expect((await fetch(url, { method: 'POST', headers, body: initialize })).status).toBe(401);
    const wrong = await fetch(url, { method: 'POST', headers: { ...headers, authorization: `Bearer ${token.slice(0, -1)}x` }, body: initialize });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
    const metadata = (await (await fetch(new URL('/.well-known/oauth-protected-resource/mcp', url))).json()) as { resource: string };
    expect(metadata.resource).toBe(url.href);
    const client = await connectMcpHttp(url, { token });
    try {
      const result = await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
      expect(result.isError).not.toBe(true);
    } finally {
      await client.close();
    }
    expect(stderr().split('\n').filter((l) => l.includes(token))).toHaveLength(1);
  });

  it('Z7 with TOOLRUN_MCP_TOKEN: that token is required and never printed; --no-auth on loopback serves without one and says so', async () => {
    const token = 'my-own-token-0123456789-abcdef';
    const own = await start([], { ...process.env, TOOLRUN_MCP_TOKEN: token });
    expect(own.stderr()).toBe(`toolrun: clients of ${own.url.href} must send Authorization: Bearer <the token in TOOLRUN_MCP_TOKEN>\n`);
    expect(own.stdout() + own.stderr()).not.toContain(token);
    expect((await fetch(own.url, { method: 'POST', headers, body: initialize })).status).toBe(401);
    expect((await fetch(own.url, { method: 'POST', headers: { ...headers, authorization: `Bearer ${token}` }, body: initialize })).status).toBe(200);

    const open = await start(['--no-auth'], { ...process.env, TOOLRUN_MCP_TOKEN: token });
    expect(open.stderr()).toMatch(/^toolrun: no authorization \(--no-auth\): any local user or process can call these tools at /);
    expect((await fetch(open.url, { method: 'POST', headers, body: initialize })).status).toBe(200);
  });

  it('Z7 toolrun mcp <url> sends TOOLRUN_MCP_TOKEN: with it the calls run; without it, one line saying the server refused the token, exit 2', async () => {
    const token = 'mcp-client-token-0123456789-abcdef';
    const { url } = await start([], { ...process.env, TOOLRUN_MCP_TOKEN: token });
    const dir = await mkdtemp(join(tmpdir(), 'toolrun-mcp-url-'));
    try {
      const calls = join(dir, 'calls.json');
      await writeFile(calls, JSON.stringify([{ name: 'echo', arguments: { text: 'over http' } }]));
      const io = memoryIo({ env: { TOOLRUN_MCP_TOKEN: token } });
      expect(await main(['mcp', '--calls', calls, url.href], io), io.err()).toBe(0);
      expect(io.out()).toMatch(/1 result, 0 errors/);
      expect(io.out() + io.err()).not.toContain(token);
      const without = memoryIo({ env: {} });
      expect(await main(['mcp', '--calls', calls, url.href], without)).toBe(2);
      expect(without.err()).toMatch(/it refused the bearer token \(none sent: set TOOLRUN_MCP_TOKEN\)/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('Z7 --no-auth off loopback, without --http, and a malformed TOOLRUN_MCP_TOKEN: one line, exit 2, nothing served', async () => {
    for (const [args, env, pattern] of [
      [['--http', '0', '--host', '0.0.0.0', '--no-auth'], {}, /--no-auth is refused on 0\.0\.0\.0, which is not a loopback address/],
      [['--no-auth'], {}, /--no-auth applies with --http only/],
      [['--http', '0'], { TOOLRUN_MCP_TOKEN: 'short' }, /TOOLRUN_MCP_TOKEN must be at least 16 characters/],
    ] as const) {
      const io = memoryIo({ env });
      expect(await main(['serve-mcp', ...args, '--tools', 'grep'], io), io.err()).toBe(2);
      expect(io.err().trim().split('\n')).toHaveLength(1);
      expect(io.err()).toMatch(pattern);
      expect(io.out()).toBe('');
    }
  });
});
