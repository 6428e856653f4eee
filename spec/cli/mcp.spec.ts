/**
 * `toolrun mcp …`: `main(['mcp', …], io)` in process (plain view) against the real
 * reference servers and against small node scripts that are not servers, plus the pure
 * parts (command line, example arguments). The servers are real child processes.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../lib/cli/main.ts';
import { exampleArguments, parseMcpCommandLine, runMcpCommand } from '../../lib/cli/mcp.ts';
import { createRunView } from '../../lib/cli/view/index.ts';
import { Writable } from 'node:stream';
import { isAlive, packageBin } from '../mcp-servers.ts';
import { memoryIo, type MemoryIo } from './support.ts';

const everything = packageBin('@modelcontextprotocol/server-everything');
const filesystem = packageBin('@modelcontextprotocol/server-filesystem');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `main(['mcp', ...args])` in this process, with stdout and stderr collected. */
async function mainInProcess(args: readonly string[], io: MemoryIo = memoryIo()): Promise<Run> {
  const code = await main(['mcp', ...args], io);
  return { code, stdout: io.out(), stderr: io.err() };
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
    expectOneLineInputError(await mainInProcess(['toolrun-no-such-command-xyz']), /could not use 'toolrun-no-such-command-xyz' as an MCP server: .*ENOENT/);
  });

  it('a server that exits at once: its exit code and the end of its stderr, escaped', async () => {
    expectOneLineInputError(
      await mainInProcess([process.execPath, '-e', 'console.error("not a server\\x7f\\x1b"); process.exit(3)']),
      /could not use .* as an MCP server: it exited before answering initialize \(exit code 3\); its stderr ends: not a server\\x7f\\x1b$/,
    );
    expectOneLineInputError(
      await mainInProcess([process.execPath, '-e', 'process.kill(process.pid, "SIGKILL")']),
      /it exited before answering initialize \(killed by SIGKILL\); it wrote nothing on stderr$/,
    );
  });

  it('a server that never answers: the timeout names --timeout', async () => {
    // The server reads its stdin and never writes: initialize can only time out.
    expectOneLineInputError(
      await mainInProcess(['--timeout', '200', process.execPath, '-e', 'process.stdin.resume()']),
      /it did not answer initialize within 200 ms \(a slow server may need more: --timeout <ms>\); it wrote nothing on stderr$/,
    );
  });

  it('--help prints the mcp usage, exit 0', async () => {
    const run = await mainInProcess(['--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^usage: toolrun mcp \[options\] \[--\] <command> \[args\.\.\.\]/);
  });
});

describe('toolrun mcp: the program (in process) against real servers', () => {
  let dir = '';
  beforeAll(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), 'toolrun-cli-mcp-')));
    await writeFile(join(dir, 'notes.txt'), 'first line\nsecond line\n');
    await writeFile(join(dir, 'todo.txt'), 'ship it\n');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  // Fails if the client offers no MCP root (the server then serves no folder: 8 of its 10
  // read-only tools answer "Access denied") or the example paths aim at a made-up "example".
  it('with no --calls and no folder for the server: it serves the root toolrun offers (the folder it runs in), and every example call succeeds', async () => {
    const chunks: string[] = [];
    const view = createRunView({ stream: new Writable({ write: (chunk, _encoding, done) => void (chunks.push(String(chunk)), done()) }), tty: false });
    const code = await runMcpCommand([process.execPath, filesystem], { view, signal: new AbortController().signal, root: dir }).finally(() => view.close());
    const out = chunks.join('');
    expect(code, out).toBe(0);
    expect(out).toMatch(/^run mcp: 10 parallel calls \(read-only tools with example arguments\)/m);
    expect(out).toMatch(/^start call_\d+ read_text_file \{"path":"[^"]*notes\.txt"\}$/m);
    expect(out).toMatch(/^ {2}call_\d+ ok second line \(\+1 line\)$/m);
    expect(out).toContain(`  call_10 ok ${dir}`);
    expect(out).toMatch(/\n10 results, 0 errors\n$/);
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
    const run = await mainInProcess(['--root', dir, '--calls', calls, process.execPath, filesystem]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout).toMatch(/^MCP server secure-filesystem-server [\d.]+: \d+ tools\n/);
    expect(run.stdout).toMatch(/\n {2}read_text_file \(read-only\) — Read the complete contents of a file/);
    expect(run.stdout).toMatch(/\n {2}write_file — /);
    expect(run.stdout).toContain(`run mcp: 4 parallel calls (calls from ${calls}) to secure-filesystem-server`);
    const results = run.stdout.slice(run.stdout.indexOf('results (call order):'));
    expect(results.split('\n').slice(1, 5)).toEqual([
      // Each result by the line its end line showed: the last one.
      '  call_1 ok second line (+1 line)',
      expect.stringMatching(/^ {2}call_2 ok \[FILE\] (calls\.json|notes\.txt|todo\.txt) \(\+2 lines\)$/),
      expect.stringMatching(/^ {2}call_3 error Access denied - path outside allowed directories/),
      '  mine ok ship it',
    ]);
    expect(run.stdout).toMatch(/\n4 results, 1 error\n$/);
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
    const run = await mainInProcess(['--calls', message, process.execPath, everything, 'stdio']);
    expect(run.code, run.stderr).toBe(0);
    // MCP progress drawn like native progress: progress/total as a bar (it was raw JSON: {"progress":1,"total":4}).
    expect(run.stdout).toMatch(/ {2}toolu_1 \| \[██▌░░░░░░░\] 1\/4\n/);
    expect(run.stdout).not.toContain('{"progress"');
    expect(run.stdout).toMatch(/results \(call order\):\n {2}toolu_1 ok Long running operation completed\. Duration: 0\.4 seconds, Steps: 4\.\n {2}toolu_2 ok The sum of 20 and 22 is 42\.\n/);
  });

  it('Ctrl+C mid-call (pressed after its second progress): the call ends interrupted, the summary says interrupted:, exit 130, the server is gone', async () => {
    const message = join(dir, 'long.json');
    await writeFile(message, JSON.stringify([{ name: 'trigger-long-running-operation', arguments: { duration: 20, steps: 200 } }]));
    const io = memoryIo();
    const done = main(['mcp', '--calls', message, process.execPath, everything, 'stdio'], io);
    // The call is running (it reported progress; it takes 20 s): find the server this process started, then press Ctrl+C.
    await io.whenOutput('] 2/200\n');
    const serverPid = await childServerPid(process.pid);
    io.interrupt();
    expect(await done).toBe(130);
    const stdout = io.out();
    expect(stdout).toMatch(/results \(call order\):\n {2}call_1 error Interrupted: the run was aborted/);
    expect(stdout).toMatch(/\ninterrupted: 1 result, 1 error \(Ctrl\+C aborted the run; every call still got its result\)\n$/);
    // Closing the client ends the server (stdin closed, then SIGTERM, then SIGKILL, which the
    // SDK does not wait for): wait for it to be gone; a server left running fails on the spec timeout.
    expect(serverPid).toBeTypeOf('number');
    while (isAlive(serverPid!)) await new Promise((resolve) => setTimeout(resolve, 20));
  });

});

/** The pid of the MCP server a CLI process started (its child running a server bin). */
async function childServerPid(parent: number): Promise<number | undefined> {
  const out = await new Promise<string>((resolve) => execFile('ps', ['-o', 'pid=,args=', '--ppid', String(parent)], (_error, stdout) => resolve(stdout)));
  const line = out.split('\n').find((l) => l.includes('server-everything'));
  return line === undefined ? undefined : Number(line.trim().split(/\s+/)[0]);
}
