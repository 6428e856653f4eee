/**
 * `npm start -- mcp …`: the program run as a child process (`node --import tsx
 * lib/cli/main.ts mcp …`, stdout piped, so the plain view) against the real reference
 * servers, plus the pure parts (command line, example arguments) in process.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../lib/cli/main.ts';
import { exampleArguments, parseMcpCommandLine } from '../../lib/cli/mcp.ts';
import { isAlive, packageBin } from '../mcp-servers.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const mainArgs = ['--import', 'tsx', 'lib/cli/main.ts', 'mcp'];
const everything = packageBin('@modelcontextprotocol/server-everything');
const filesystem = packageBin('@modelcontextprotocol/server-filesystem');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runMcp(args: readonly string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [...mainArgs, ...args], { cwd: root, env: { ...process.env, NO_COLOR: '1' }, timeout: 40_000 }, (error, stdout, stderr) => {
      if (error !== null && typeof error.code !== 'number') return reject(error);
      resolve({ code: error === null ? 0 : (error.code as number), stdout, stderr });
    });
  });
}

/** Runs `main(['mcp', ...args])` in this process, with stdout and stderr collected. */
async function mainInProcess(args: readonly string[]): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const sink = (append: (text: string) => void) =>
    new Writable({
      write(chunk: Buffer | string, _encoding, callback) {
        append(chunk.toString());
        callback();
      },
    }) as unknown as NodeJS.WriteStream;
  const code = await main(['mcp', ...args], { stdout: sink((t) => (stdout += t)), stderr: sink((t) => (stderr += t)), env: {} });
  return { code, stdout, stderr };
}

function expectOneLineInputError(run: Run, pattern: RegExp): void {
  expect(run.code, run.stderr).toBe(2);
  const lines = run.stderr.split('\n').filter((line) => line !== '');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^toolrun: /);
  expect(lines[0]).toMatch(pattern);
}

describe('toolrun mcp: command line and example arguments (in process)', () => {
  it('options first, then the server command verbatim (its own options included)', () => {
    expect(parseMcpCommandLine(['--calls', 'c.json', '--env', 'A=1', 'node', 'server.js', '--root', '/tmp'])).toMatchObject({
      help: false,
      command: 'node',
      args: ['server.js', '--root', '/tmp'],
      callsFile: 'c.json',
      env: { A: '1' },
      timeoutMs: 15_000,
    });
    expect(parseMcpCommandLine(['--timeout=500', '--', '--weird-server'])).toMatchObject({ command: '--weird-server', args: [], timeoutMs: 500 });
    expect(parseMcpCommandLine(['--env', 'HOME', 'x'], { HOME: '/home/me' }).env).toEqual({ HOME: '/home/me' });
    expect(parseMcpCommandLine(['--help']).help).toBe(true);
  });

  it('bad command lines are one-line input errors', () => {
    expect(() => parseMcpCommandLine([])).toThrow(/mcp needs the command of an MCP server/);
    expect(() => parseMcpCommandLine(['--calls'])).toThrow(/--calls needs a value/);
    expect(() => parseMcpCommandLine(['--frob', 'x'])).toThrow(/unknown option '--frob'/);
    expect(() => parseMcpCommandLine(['--timeout', 'soon', 'x'])).toThrow(/--timeout must be a number of ms > 0, received 'soon'/);
    expect(() => parseMcpCommandLine(['--env', 'TOOLRUN_SURELY_UNSET', 'x'], {})).toThrow(/no such variable/);
  });

  it('exampleArguments: required properties only, from default / const / enum / examples / type', () => {
    expect(
      exampleArguments({
        type: 'object',
        properties: {
          s: { type: 'string' },
          n: { type: 'integer', minimum: 3 },
          f: { type: 'number' },
          b: { type: 'boolean' },
          e: { enum: ['x', 'y'] },
          d: { type: 'string', default: 'dflt' },
          c: { const: 7 },
          ex: { type: 'string', examples: ['sample'] },
          list: { type: 'array', items: { type: 'string' }, minItems: 1 },
          empty: { type: 'array' },
          obj: { type: 'object', properties: { inner: { type: ['null', 'number'] } }, required: ['inner'] },
          union: { anyOf: [{ type: 'boolean' }, { type: 'string' }] },
          optional: { type: 'string' },
        },
        required: ['s', 'n', 'f', 'b', 'e', 'd', 'c', 'ex', 'list', 'empty', 'obj', 'union'],
      }),
    ).toEqual({ s: 'example', n: 3, f: 1, b: false, e: 'x', d: 'dflt', c: 7, ex: 'sample', list: ['example'], empty: [], obj: { inner: 1 }, union: false });
    expect(exampleArguments(undefined)).toEqual({});
  });
});

describe('toolrun mcp: bad input and help through main() (in process)', () => {
  it('bad input is exit 2 and one line: no command, a missing calls file, a command that is not a server', async () => {
    expectOneLineInputError(await mainInProcess([]), /mcp needs the command of an MCP server/);
    expectOneLineInputError(await mainInProcess(['--calls', '/nonexistent/toolrun-calls.json', 'node']), /--calls \/nonexistent\/toolrun-calls\.json: no such file/);
    expectOneLineInputError(await mainInProcess(['toolrun-no-such-command-xyz']), /could not start an MCP server with 'toolrun-no-such-command-xyz': .*ENOENT/);
    expectOneLineInputError(
      await mainInProcess(['--timeout', '3000', process.execPath, '-e', 'console.error("not a server"); process.exit(3)']),
      /could not start an MCP server with .*Connection closed.*its stderr ends: not a server/,
    );
  });

  it('--help prints the mcp usage, exit 0', async () => {
    const run = await mainInProcess(['--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^usage: toolrun mcp \[options\] \[--\] <command> \[args\.\.\.\]/);
  });
});

describe('toolrun mcp: the program against real servers (child processes)', () => {
  let dir = '';
  beforeAll(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), 'toolrun-cli-mcp-')));
    await writeFile(join(dir, 'notes.txt'), 'first line\nsecond line\n');
    await writeFile(join(dir, 'todo.txt'), 'ship it\n');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('--calls with a list: lists the server’s tools, runs the calls, prints results in call order, exits 0', async () => {
    const calls = join(dir, 'calls.json');
    await writeFile(
      calls,
      JSON.stringify([
        { name: 'read_text_file', arguments: { path: join(dir, 'notes.txt') } },
        { name: 'list_directory', arguments: { path: dir } },
        { name: 'read_text_file', arguments: { path: '/etc/hostname' } },
        { name: 'read_text_file', arguments: { path: join(dir, 'todo.txt') }, id: 'mine' },
      ]),
    );
    const run = await runMcp(['--calls', calls, process.execPath, filesystem, dir]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout).toMatch(/^MCP server secure-filesystem-server [\d.]+: \d+ tools\n/);
    expect(run.stdout).toMatch(/\n {2}read_text_file \(read-only\) — Read the complete contents of a file/);
    expect(run.stdout).toMatch(/\n {2}write_file — /);
    expect(run.stdout).toContain(`run mcp: 4 parallel calls (calls from ${calls}) to secure-filesystem-server`);
    const results = run.stdout.slice(run.stdout.indexOf('results (call order):'));
    expect(results.split('\n').slice(1, 5)).toEqual([
      '  call_1 ok first line (+1 line)',
      expect.stringMatching(/^ {2}call_2 ok \[FILE\] (calls\.json|notes\.txt|todo\.txt) \(\+2 lines\)$/),
      expect.stringMatching(/^ {2}call_3 error Access denied - path outside allowed directories/),
      '  mine ok ship it',
    ]);
    expect(run.stdout).toMatch(/\n4 results, 1 errors\n$/);
  });

  it('--calls with an Anthropic assistant message, against server-everything (progress shown live)', async () => {
    const message = join(dir, 'message.json');
    await writeFile(
      message,
      JSON.stringify({
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me do both.' },
          { type: 'tool_use', id: 'toolu_1', name: 'trigger-long-running-operation', input: { duration: 0.4, steps: 4 } },
          { type: 'tool_use', id: 'toolu_2', name: 'get-sum', input: { a: 20, b: 22 } },
        ],
      }),
    );
    const run = await runMcp(['--calls', message, process.execPath, everything, 'stdio']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/ {2}toolu_1 \| \{"progress":1,"total":4\}\n/);
    expect(run.stdout).toMatch(/results \(call order\):\n {2}toolu_1 ok Long running operation completed\. Duration: 0\.4 seconds, Steps: 4\.\n {2}toolu_2 ok The sum of 20 and 22 is 42\.\n/);
  });

  it('Ctrl+C (SIGINT) mid-call: the call ends interrupted, exit 130, and the server process is gone', async () => {
    const message = join(dir, 'long.json');
    await writeFile(message, JSON.stringify([{ name: 'trigger-long-running-operation', arguments: { duration: 20, steps: 200 } }]));
    const child = spawn(process.execPath, [...mainArgs, '--calls', message, process.execPath, everything, 'stdio'], {
      cwd: root,
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let serverPid: number | undefined;
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no progress within 15 s; output: ${stdout}`)), 15_000);
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        if (/\| \{"progress":2,/.test(stdout)) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    serverPid = await childServerPid(child.pid!);
    expect(serverPid).toBeTypeOf('number');
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(stdout).toMatch(/results \(call order\):\n {2}call_1 error Interrupted: the run was aborted/);
    for (let i = 0; i < 50 && isAlive(serverPid!); i++) await new Promise((r) => setTimeout(r, 20));
    expect(isAlive(serverPid!)).toBe(false);
  });

});

/** The pid of the MCP server a CLI process started (its child running a server bin). */
async function childServerPid(parent: number): Promise<number | undefined> {
  const out = await new Promise<string>((resolve) => execFile('ps', ['-o', 'pid=,args=', '--ppid', String(parent)], (_error, stdout) => resolve(stdout)));
  const line = out.split('\n').find((l) => l.includes('server-everything'));
  return line === undefined ? undefined : Number(line.trim().split(/\s+/)[0]);
}
