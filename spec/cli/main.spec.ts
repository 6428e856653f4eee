/**
 * The program (`lib/cli/main.ts`). Most specs call `main(argv, io)` in process (milliseconds,
 * Ctrl+C pressed by the spec at an observed point, no clock); a few run the real program as
 * a child process, piped (not a TTY): the demo end to end, one replay, and Ctrl+C. A child
 * that never exits fails on the spec timeout: that is how "the process exits on its own, no
 * dangling timers or handles" is checked.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { CTRL_C_NOTICE, main, USAGE } from '../../lib/cli/main.ts';
import { readSavedDemo, resumeDemo, runDemo } from '../../lib/cli/demo.ts';
import { shellSandboxStatus } from '../../lib/tools/index.ts';
import { createRunView } from '../../lib/cli/view/index.ts';
import { interruptWhen, memoryIo, repoRoot, type MemoryIo } from './support.ts';

/** Asserts the "bad input" shape: exit 2, nothing on stdout, exactly one `toolrun: …` line on stderr, no stack. */
async function expectInputError(argv: string[], pattern: RegExp): Promise<void> {
  const io = memoryIo();
  const code = await main(argv, io);
  expect(code, `stderr: ${io.err()}`).toBe(2);
  expect(io.out()).toBe('');
  const lines = io.err().split('\n').filter((line) => line !== '');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^toolrun: /);
  expect(lines[0]).toMatch(pattern);
  expect(io.err()).not.toMatch(/^\s+at /m);
  expect(io.listeners()).toBe(0);
}

describe('main(argv, io): arguments, in process', () => {
  it('--help prints the usage and exits 0', async () => {
    const io = memoryIo();
    expect(await main(['--help'], io)).toBe(0);
    expect(io.out()).toMatch(/^usage: toolrun/);
    expect(io.out()).toContain('replay <file-or-folder>');
    expect(io.err()).toBe('');
  });

  it('an unknown command or option exits 2 with one line naming it', async () => {
    await expectInputError(['frobnicate'], /unknown command 'frobnicate'/);
    await expectInputError(['--frob'], /unknown option '--frob'/);
  });

  it('the unknown-command line names every command --help lists (serve-mcp too), and each of them answers --help with exit 0', async () => {
    // Before: "(commands: demo, replay, mcp, agent, help; …)", without serve-mcp.
    const listed = [...(/^commands:\n([\s\S]*?)\n\n/m.exec(USAGE)?.[1] ?? '').matchAll(/^ {2}([a-z][a-z-]*)/gm)].map((match) => match[1]);
    expect(listed).toEqual(expect.arrayContaining(['demo', 'replay', 'mcp', 'serve-mcp', 'agent', 'help']));
    const io = memoryIo();
    expect(await main(['frobnicate'], io)).toBe(2);
    expect(/\(commands: ([^;]+);/.exec(io.err())?.[1]?.split(', ')).toEqual(listed);
    for (const command of listed) {
      const help = memoryIo();
      expect(await main([command!, '--help'], help), command).toBe(0);
      expect(help.out(), command).toMatch(/^usage: toolrun /);
    }
  });

  it('replay without its argument exits 2 and says what to pass, naming the shipped examples', async () => {
    await expectInputError(['replay'], /replay needs a file or folder of recorded conversations: toolrun replay <file-or-folder>.*toolrun replay examples\/recordings/);
  });

  it('--delay without a value, or not a number, exits 2', async () => {
    await expectInputError(['replay', 'x', '--delay'], /--delay/);
    await expectInputError(['replay', 'x', '--delay', 'soon'], /--delay must be a number of ms >= 0, received 'soon'/);
  });

  it('--event-delay without --stream, and --stream for the demo, exit 2', async () => {
    await expectInputError(['replay', 'x', '--event-delay', '5'], /^toolrun: --event-delay applies to replay --stream only \(see toolrun --help\)$/);
    await expectInputError(['demo', '--stream'], /^toolrun: --stream and --event-delay apply to replay only \(see toolrun --help\)$/);
  });

  describe('replay: bad input (lib/cli/replay.ts)', () => {
    let dir = '';
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'toolrun-main-'));
    });
    afterAll(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it('a path that does not exist exits 2 with one line naming the path', async () => {
      await expectInputError(['replay', '/nonexistent/toolrun-recording.json'], /\/nonexistent\/toolrun-recording\.json/);
    });

    it('a file with invalid JSON exits 2 with one line naming the file', async () => {
      const file = join(dir, 'broken.json');
      await writeFile(file, '{ "messages": [ { "role": "assistant", ');
      await expectInputError(['replay', file], /broken\.json/);
    });

    it('a control character in the file (DEL, ESC) is escaped in the error line like any other', async () => {
      const file = join(dir, 'del.json');
      await writeFile(file, '{"a": 1}\x7f\x1b');
      const io = memoryIo();
      expect(await main(['replay', file], io)).toBe(2);
      expect(io.err()).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f]/);
    });
  });
});

const ids = ['toolu_demo_01', 'toolu_demo_02', 'toolu_demo_03', 'toolu_demo_04', 'toolu_demo_05', 'toolu_demo_06'];

/** The ids of the `results (call order):` block, in the order printed. */
function resultIds(stdout: string): string[] {
  const lines = stdout.split('\n');
  const at = lines.findIndex((line) => line.includes('results (call order):'));
  expect(at).toBeGreaterThan(-1);
  return lines.slice(at + 1, at + 1 + ids.length).map((line) => line.replace(/\x1b\[[0-9;]*m/g, '').trim().split(' ')[0]!);
}

describe.skipIf(!existsSync(join(repoRoot, 'examples/recordings')))('toolrun replay examples/recordings (the shipped recordings)', () => {
  it('works from any folder: the path is looked up in the package when the working folder has no such path', async () => {
    const elsewhere = await mkdtemp(join(tmpdir(), 'toolrun-elsewhere-'));
    const before = process.cwd();
    process.chdir(elsewhere);
    try {
      const io = memoryIo();
      const code = await main(['replay', 'examples/recordings', '--delay', '0'], io);
      expect(io.err()).toBe('');
      expect(code).toBe(0);
      expect(io.out()).toMatch(/^total: \d+ files?, /m);
    } finally {
      process.chdir(before);
      await rm(elsewhere, { recursive: true, force: true });
    }
  });
});

describe('the demo in process: Ctrl+C pressed at observed points (contract A2), any machine speed', () => {
  it('Ctrl+C while the slow shell call runs: it ends interrupted with the output it had, every call gets its result, exit 130', async () => {
    const io = memoryIo();
    // The first shell call has printed step 1 and is sleeping: it needs 2 s more to finish.
    io.interruptWhen('toolu_demo_01 | step 1 of 5');
    expect(await main([], io)).toBe(130);
    const out = io.out();
    expect(out).toContain(CTRL_C_NOTICE);
    // Stopped long before its end (2 s of sleeps were left): its last line is a step, then the kill.
    expect(out).toMatch(/^end toolu_demo_01 error \d+ms \(interrupted\): step [1-4] of 5 \[killed: /m);
    expect(out).not.toMatch(/^  toolu_demo_01 \| finished$/m);
    expect(resultIds(out)).toEqual(ids);
    expect(out).toMatch(/^interrupted: 6 results, \d errors? \(Ctrl\+C aborted the run; every call still got its result\)$/m);
    expect(io.listeners()).toBe(0);
  });

  it('Ctrl+C before the demo has even started (modules still loading): no call runs, the summary still comes, exit 130', async () => {
    const io = memoryIo();
    const done = main([], io);
    io.interrupt();
    expect(await done).toBe(130);
    const out = io.out();
    // The notice comes with the run, under its header (it was printed above it before).
    expect(out.indexOf('run demo:')).toBeGreaterThanOrEqual(0);
    expect(out.indexOf(CTRL_C_NOTICE)).toBeGreaterThan(out.indexOf('run demo:'));
    // `\d+ms`: the view times a call from its start event to its end event as it sees them,
    // which a loaded machine can put a millisecond apart even for a call that never ran.
    for (const id of ids) expect(out).toMatch(new RegExp(`^end ${id} error \\d+ms \\(not_run\\): Not run: the run was aborted before`, 'm'));
    expect(resultIds(out)).toEqual(ids);
    expect(out).toMatch(/^interrupted: 6 results, 6 errors/m);
  });

  it('TTY: Ctrl+C right after the first frame is drawn still ends with the final frame, the results and the summary, exit 130', async () => {
    const io = memoryIo({ tty: { columns: 100 } });
    io.interruptWhen('demo: 6 parallel tool calls');
    expect(await main([], io)).toBe(130);
    const out = io.out();
    const notice = out.indexOf(CTRL_C_NOTICE);
    const results = out.indexOf('results (call order):');
    const summary = out.indexOf('interrupted: 6 results');
    expect(notice).toBeGreaterThan(-1);
    expect(results).toBeGreaterThan(notice);
    expect(summary).toBeGreaterThan(results);
    // The summary is the last thing written: no frame drawn over it.
    expect(out.slice(summary).trimEnd().split('\n')).toHaveLength(1);
    expect(resultIds(out)).toEqual(ids);
  });
});

describe('the real program, piped (child processes)', () => {
  // By URL: the demo runs from a folder where `tsx` cannot be resolved by name.
  const tsxLoader = pathToFileURL(join(repoRoot, 'node_modules/tsx/dist/loader.mjs')).href;
  const run = (args: readonly string[], cwd = repoRoot) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      execFile(process.execPath, ['--import', tsxLoader, join(repoRoot, 'lib/cli/main.ts'), ...args], { cwd, env: { ...process.env, FORCE_COLOR: undefined, NO_COLOR: '1' }, timeout: 50_000 }, (error, stdout, stderr) => {
        if (error !== null && typeof error.code !== 'number') reject(error);
        else resolve({ code: error === null ? 0 : (error.code as number), stdout, stderr });
      });
    });

  it('the demo, from an empty folder: exits 0 on its own; results in call order; the call that writes a file pauses the run (H3), and --resume <file> --approve in a second process runs only it', { timeout: 60_000 }, async () => {
    const empty = await mkdtemp(join(tmpdir(), 'toolrun-cwd-'));
    let stateFile: string | undefined;
    try {
      const { code, stdout, stderr } = await run([], empty);
      expect(code, `stderr: ${stderr}`).toBe(0);
      expect(stderr).toBe('');
      expect(stdout).not.toContain('\x1b[');
      const lines = stdout.split('\n');
      for (const id of ids) expect(lines.filter((line) => line.startsWith(`start ${id} `))).toHaveLength(1);
      for (const id of ids.slice(0, 5)) expect(lines.filter((line) => line.startsWith(`end ${id} ok `))).toHaveLength(1);
      // The order in which the calls end races real sleeps in child processes (2.5 s for the
      // first shell call, 1.2 s for the second), so it is not asserted here: O3 (ends in
      // completion order, results in call order) is proved in virtual time by
      // spec/core/run-tools.spec.ts ("O3 …"). What holds whatever the load: results in call order (below).
      expect(stdout).toMatch(/^end toolu_demo_01 ok \d+ms: finished \[exit code 0\]/m);
      // Without a terminal nothing answers the sixth call: it waits, the run pauses.
      expect(stdout).toMatch(/^approval toolu_demo_06 shell: waits for approval: this shell command writes a file in the project$/m);
      expect(stdout).not.toMatch(/^end toolu_demo_06 /m);
      expect(resultIds(stdout)).toEqual(ids);
      expect(stdout).toMatch(/^ {2}toolu_demo_06 pending waits for approval/m);
      expect(stdout).toMatch(/^paused: 5 calls of 6 answered \(0 errors\), 1 call waiting for approval$/m);
      stateFile = /^the paused run's state is saved in (.+)$/m.exec(stdout)?.[1];
      expect(stateFile).toBeDefined();
      expect(stdout).toContain(`resume it with:  npm start -- --resume ${stateFile}`);
      const saved = JSON.parse(await readFile(stateFile!, 'utf8')) as { kind: string; root: string; state: { kind: string } };
      expect(saved.kind).toBe('toolrun/paused-demo');
      expect(saved.state.kind).toBe('toolrun/paused-batch');
      expect(existsSync(saved.root)).toBe(true);

      // Without a terminal, --resume needs a decision: bad input, nothing runs, the file stays.
      const undecided = await run(['--resume', stateFile!], empty);
      expect(undecided.code).toBe(2);
      expect(undecided.stderr).toMatch(/^toolrun: --resume needs --approve or --deny when not run on a terminal/);
      expect(existsSync(stateFile!)).toBe(true);

      const resumed = await run(['--resume', stateFile!, '--approve'], empty);
      expect(resumed.code, `stderr: ${resumed.stderr}`).toBe(0);
      const again = resumed.stdout.split('\n');
      // Only the approved call runs; the five others show their saved results.
      expect(again.filter((line) => line.startsWith('start '))).toEqual([expect.stringMatching(/^start toolu_demo_06 shell /)]);
      for (const id of ids.slice(0, 5)) expect(again.filter((line) => line.startsWith(`earlier ${id} ok (before the pause)`))).toHaveLength(1);
      expect(resumed.stdout).toMatch(/^end toolu_demo_06 ok \d+ms: 2 TODOs written to TODO\.md \[exit code 0\]/m);
      expect(resultIds(resumed.stdout)).toEqual(ids);
      expect(resumed.stdout).toMatch(/^6 results, 0 errors$/m);
      // Done: the state file and the demo's folder are gone; resuming again is bad input.
      expect(existsSync(stateFile!)).toBe(false);
      expect(existsSync(saved.root)).toBe(false);
      const twice = await run(['--resume', stateFile!, '--approve'], empty);
      expect(twice.code).toBe(2);
      expect(twice.stderr).toMatch(/no such state file/);
    } finally {
      await rm(empty, { recursive: true, force: true });
      if (stateFile !== undefined) {
        await rm(stateFile, { force: true });
        await rm(stateFile.replace(/\.paused\.json$/, ''), { recursive: true, force: true });
      }
    }
  });

  it('Ctrl+C (SIGINT) end to end: the shell call stops early, every call still gets its result, exit 130', { timeout: 60_000 }, async () => {
    const { code, stdout, stderr } = await interruptWhen([], 'toolu_demo_01 | step 1 of 5');
    expect(code, `stderr: ${stderr}`).toBe(130);
    expect(stdout).toContain(CTRL_C_NOTICE);
    expect(stdout).toMatch(/^end toolu_demo_01 error \d+ms \(interrupted\)/m);
    expect(stdout).not.toMatch(/^  toolu_demo_01 \| finished$/m);
    expect(resultIds(stdout)).toEqual(ids);
    expect(stdout).toMatch(/^interrupted: 6 results, \d errors?/m);
  });

  it('npm start runs the program in one process: no parent in between that relays Ctrl+C and can SIGKILL a busy program', { timeout: 60_000 }, async () => {
    // The `tsx` command runs the program in a child and, when the child does not confirm a
    // Ctrl+C within 60 ms (event loop busy), kills it with SIGKILL: the first frame stayed on
    // screen with no summary. The probe stands in for main.ts; it blocks its event loop until
    // the spec has sent SIGINT to the whole process group, as a terminal does.
    const { scripts } = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as { scripts: { start: string } };
    expect(scripts.start).toContain('lib/cli/main.ts');
    const dir = await mkdtemp(join(tmpdir(), 'toolrun-probe-'));
    try {
      const probe = join(dir, 'probe.ts');
      await writeFile(
        probe,
        [
          "import { readSync } from 'node:fs';",
          "process.on('SIGINT', () => { console.log('handled'); process.exitCode = 130; });",
          'console.log(`ready ${process.pid} ${process.ppid}`);',
          'readSync(0, Buffer.alloc(1));',
          'console.log("released");',
        ].join('\n'),
      );
      const command = scripts.start.replace('lib/cli/main.ts', JSON.stringify(probe));
      const child = spawn('sh', ['-c', command], { cwd: repoRoot, detached: true, env: { ...process.env, PATH: `${join(repoRoot, 'node_modules/.bin')}:${process.env.PATH}` } });
      let stdout = '';
      const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
      const ready = await new Promise<string>((resolve) => {
        child.stdout.on('data', (chunk: Buffer) => {
          stdout += chunk.toString();
          const match = /ready (\d+) (\d+)/.exec(stdout);
          if (match !== null) resolve(stdout);
        });
      });
      const [, pid, ppid] = /ready (\d+) (\d+)/.exec(ready)!;
      // The program is the shell's child (or the shell itself, exec'd), not a relaying process's.
      expect([Number(pid), Number(ppid)]).toContain(child.pid);
      process.kill(-child.pid!, 'SIGINT');
      child.stdin.end('x');
      await exited;
      expect(stdout).toMatch(/released\nhandled\n/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('the demo where the shell sandbox cannot start', () => {
  // Fails if the demo used the sandboxed shell anyway (every shell call would end with the
  // "sandbox is unavailable" refusal) or ran unsandboxed without saying so.
  it('says so once, under its header, and runs its own fixed shell commands without the sandbox', { timeout: 60_000 }, async () => {
    const chunks: string[] = [];
    const stream = new Writable({ write: (chunk, _encoding, done) => void (chunks.push(String(chunk)), done()) });
    const view = createRunView({ stream, tty: false });
    const root = await mkdtemp(join(tmpdir(), 'toolrun-demo-nobwrap-'));
    const { batch, stateFile } = await runDemo(view, { root, bwrapPath: join(root, 'no-bwrap-here', 'bwrap') }).finally(() => view.close());
    await rm(root, { recursive: true, force: true });
    if (stateFile !== undefined) await rm(stateFile, { force: true });
    const out = chunks.join('');
    expect(out.match(/the shell's sandbox cannot start here \(/g)).toHaveLength(1);
    expect(out.indexOf("the shell's sandbox cannot start here")).toBeGreaterThan(out.indexOf('run demo:'));
    // The two unconditional shell calls ran and finished.
    const byId = new Map(batch.messages.map((m) => [m.toolCallId, m]));
    expect(byId.get('toolu_demo_01')?.isError).toBe(false);
    expect(byId.get('toolu_demo_02')?.isError).toBe(false);
    expect(JSON.stringify(byId.get('toolu_demo_02')?.content)).toMatch(/lines of TypeScript/);
    expect(batch.paused?.requests.map((r) => r.toolCallId)).toEqual(['toolu_demo_06']);
  });
});

/** A plain view writing into a string, for the in-process demo runs below. */
function textView(): { view: ReturnType<typeof createRunView>; out: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({ write: (chunk, _encoding, done) => void (chunks.push(String(chunk)), done()) });
  return { view: createRunView({ stream, tty: false }), out: () => chunks.join('') };
}

const approveAll = (requests: readonly { approvalId: string }[]) => Promise.resolve(requests.map((r) => ({ approvalId: r.approvalId, approved: true })));
const sandbox = await shellSandboxStatus();

describe("a resumed demo follows its first run's shell policy", () => {
  // Fails if the resumed run probed the sandbox afresh and dropped it silently (the approved
  // command ran unsandboxed with no word), or refused a demo that had already run unsandboxed.
  it('first run without a sandbox: the state says so, and --resume runs the approved command unsandboxed and says why', { timeout: 60_000 }, async () => {
    const root = await mkdtemp(join(tmpdir(), 'toolrun-demo-resume-off-'));
    const missing = join(root, 'no-bwrap-here', 'bwrap');
    try {
      const first = textView();
      const { stateFile } = await runDemo(first.view, { root, bwrapPath: missing }).finally(() => first.view.close());
      const saved = await readSavedDemo(stateFile!);
      expect(saved.shell).toBe('unsandboxed');
      const second = textView();
      const outcome = await resumeDemo(second.view, stateFile!, saved, { decide: approveAll, bwrapPath: missing }).finally(() => second.view.close());
      const written = outcome!.batch.messages.find((m) => m.toolCallId === 'toolu_demo_06')!;
      expect(written.isError).toBe(false);
      expect(JSON.stringify(written.content)).toMatch(/TODOs written to TODO\.md/);
      expect(second.out()).toMatch(/^the shell runs without its sandbox, as in the first run of this demo \(bubblewrap is not installed/m);
    } finally {
      await rm(root, { recursive: true, force: true });
      await rm(`${root}.paused.json`, { force: true });
    }
  });

  it.skipIf(!sandbox.available)(`first run sandboxed, bubblewrap gone at --resume: the approved command is refused, not run unsandboxed, and the view says why${sandbox.available ? '' : ' (skipped: the sandbox cannot start here; install bubblewrap)'}`, { timeout: 60_000 }, async () => {
    const root = await mkdtemp(join(tmpdir(), 'toolrun-demo-resume-on-'));
    try {
      const first = textView();
      const { stateFile } = await runDemo(first.view, { root }).finally(() => first.view.close());
      expect(first.out()).toMatch(/^the shell runs each command in its sandbox \(bubblewrap, /m);
      const saved = await readSavedDemo(stateFile!);
      expect(saved.shell).toBe('sandboxed');
      const second = textView();
      const outcome = await resumeDemo(second.view, stateFile!, saved, { decide: approveAll, bwrapPath: join(root, 'no-bwrap-here', 'bwrap') }).finally(() => second.view.close());
      const written = outcome!.batch.messages.find((m) => m.toolCallId === 'toolu_demo_06')!;
      expect(written.isError).toBe(true);
      expect(JSON.stringify(written.content)).toMatch(/the command was not run/);
      expect(existsSync(join(root, 'TODO.md'))).toBe(false);
      expect(second.out()).toMatch(/^the shell's sandbox cannot start here \(bubblewrap is not installed.*\); the first run used it, so shell commands are refused, not run without it$/m);
    } finally {
      await rm(root, { recursive: true, force: true });
      await rm(`${root}.paused.json`, { force: true });
    }
  });
});
