/**
 * Runs the real program (`node --import tsx lib/cli/main.ts …`) as a child process, with
 * stdout and stderr piped (not a TTY). A child that never exits fails on the spec timeout:
 * that is how "the process exits on its own, no dangling timers or handles" is checked.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { main, type MainIo } from '../../lib/cli/main.ts';
import { interruptWhen } from './support.ts';

// In-process runs of main() below replay through this stand-in; the child processes use the real module.
vi.mock('../../lib/cli/replay.ts', () => ({
  replay: async (target: string) => {
    if (target === 'boom') throw new RangeError('replay exploded\nsecond line');
    return { exitCode: 3 };
  },
  formatReportTable: () => 'a | table',
}));

const root = fileURLToPath(new URL('../../', import.meta.url));
const mainArgs = ['--import', 'tsx', 'lib/cli/main.ts'];

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs the program to its end with `args`; never rejects on a non-zero exit. */
function runMain(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [...mainArgs, ...args],
      { cwd: root, env: { ...process.env, ...env, FORCE_COLOR: undefined, NO_COLOR: '1' }, timeout: 50_000 },
      (error, stdout, stderr) => {
        if (error !== null && typeof error.code !== 'number' && error.signal === null) {
          reject(error);
          return;
        }
        resolve({ code: error === null ? 0 : (error.code as number | null), signal: error?.signal ?? null, stdout, stderr });
      },
    );
  });
}

/** Asserts the "bad input" shape: exit 2, nothing on stdout, exactly one `toolrun: …` line on stderr, no stack. */
function expectOneLineInputError(run: Run, pattern: RegExp): void {
  expect(run.code, `stderr: ${run.stderr}`).toBe(2);
  expect(run.stdout).toBe('');
  const lines = run.stderr.split('\n').filter((line) => line !== '');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^toolrun: /);
  expect(lines[0]).toMatch(pattern);
  expect(run.stderr).not.toMatch(/^\s+at /m);
}

describe('main: arguments (parseArgs), no other module needed', () => {
  it('--help prints the usage and exits 0', async () => {
    const run = await runMain(['--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^usage: toolrun/);
    expect(run.stdout).toContain('replay <file-or-folder>');
    expect(run.stderr).toBe('');
  });

  it('an unknown command exits 2 with one line naming it', async () => {
    expectOneLineInputError(await runMain(['frobnicate']), /unknown command 'frobnicate'/);
  });

  it('an unknown option exits 2 with one line naming it', async () => {
    expectOneLineInputError(await runMain(['--frob']), /unknown option '--frob'/);
  });

  it('replay without its argument exits 2', async () => {
    expectOneLineInputError(await runMain(['replay']), /replay needs a file or folder/);
  });

  it('--delay without a value, or not a number, exits 2', async () => {
    expectOneLineInputError(await runMain(['replay', 'x', '--delay']), /--delay/);
    expectOneLineInputError(await runMain(['replay', 'x', '--delay', 'soon']), /--delay must be a number of ms >= 0, received 'soon'/);
  });
});

/** Collects what the program writes, in place of process.stdout / stderr. */
function fakeIo(env: NodeJS.ProcessEnv = {}): MainIo & { out: () => string; err: () => string } {
  let out = '';
  let err = '';
  const sink = (append: (text: string) => void) =>
    new Writable({
      write(chunk: Buffer | string, _encoding, callback) {
        append(chunk.toString());
        callback();
      },
    }) as unknown as NodeJS.WriteStream;
  return {
    stdout: sink((text) => (out += text)),
    stderr: sink((text) => (err += text)),
    env,
    out: () => out,
    err: () => err,
  };
}

describe('main() in process, with a stand-in replay module', () => {
  it('an unexpected error is one line with the TOOLRUN_DEBUG hint, exit 1', async () => {
    const io = fakeIo();
    expect(await main(['replay', 'boom'], io)).toBe(1);
    expect(io.err()).toBe('toolrun: unexpected error: RangeError: replay exploded second line (run with TOOLRUN_DEBUG=1 for the stack)\n');
  });

  it('with TOOLRUN_DEBUG=1 the stack follows the line', async () => {
    const io = fakeIo({ TOOLRUN_DEBUG: '1' });
    expect(await main(['replay', 'boom'], io)).toBe(1);
    expect(io.err()).toMatch(/^toolrun: unexpected error: .*\nRangeError: replay exploded\nsecond line\n\s+at /);
  });

  it("replay prints the report table and returns the report's exit code", async () => {
    const io = fakeIo();
    expect(await main(['replay', 'recordings', '--delay', '0'], io)).toBe(3);
    expect(io.out()).toBe('a | table\n');
  });
});

describe('main replay: bad input (needs lib/cli/replay.ts)', () => {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolrun-main-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('replay of a path that does not exist exits 2 with one line naming the path', async () => {
    expectOneLineInputError(await runMain(['replay', '/nonexistent/toolrun-recording.json']), /\/nonexistent\/toolrun-recording\.json/);
  });

  it('replay of a file with invalid JSON exits 2 with one line naming the file', async () => {
    const file = join(dir, 'broken.json');
    await writeFile(file, '{ "messages": [ { "role": "assistant", ');
    expectOneLineInputError(await runMain(['replay', file]), /broken\.json/);
  });
});

describe('main demo, piped (needs runTools, lib/tools and lib/formats/anthropic)', () => {
  const ids = ['toolu_demo_01', 'toolu_demo_02', 'toolu_demo_03', 'toolu_demo_04', 'toolu_demo_05'];

  it('exits 0 on its own, prints one start and one end per call, then the results in call order', { timeout: 60_000 }, async () => {
    const run = await runMain([]);
    expect(run.code, `stderr: ${run.stderr}`).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout).not.toContain('\x1b[');
    const lines = run.stdout.split('\n');
    for (const id of ids) {
      expect(lines.filter((line) => line.startsWith(`start ${id} `))).toHaveLength(1);
      expect(lines.filter((line) => line.startsWith(`end ${id} ok `))).toHaveLength(1);
    }
    // The shell call's progress arrives while it runs, prefixed by its id.
    expect(run.stdout).toContain('  toolu_demo_05 | step 1 of 5');
    const results = lines.slice(lines.indexOf('results (call order):') + 1, lines.indexOf('results (call order):') + 1 + ids.length);
    expect(results.map((line) => line.trim().split(' ')[0])).toEqual(ids);
    expect(results.every((line) => / ok /.test(line))).toBe(true);
  });

  it('Ctrl+C (SIGINT) aborts the run: the shell call stops early, every call still gets its result, exit 130', { timeout: 60_000 }, async () => {
    // Interrupt once the slow shell call has shown its first step.
    const { code, stdout, stderr } = await interruptWhen([], 'toolu_demo_05 | step 1 of 5');
    expect(code, `stderr: ${stderr}`).toBe(130);
    expect(stdout).toContain('Ctrl+C: aborting the run');
    // The shell call ends right after the abort (its process group is killed), long before
    // its 3 s script is over, and is reported interrupted with the output it had (A2).
    expect(stdout).toMatch(/^end toolu_demo_05 error \d+ms \(interrupted\)/m);
    expect(stdout).not.toContain('step 5 of 5');
    const lines = stdout.split('\n');
    const at = lines.indexOf('results (call order):');
    expect(at).toBeGreaterThan(-1);
    expect(lines.slice(at + 1, at + 1 + ids.length).map((line) => line.trim().split(' ')[0])).toEqual(ids);
    expect(stdout).toMatch(/^interrupted: 5 results, \d+ errors/m);
  });
});
