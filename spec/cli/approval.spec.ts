/**
 * Approvals in the program (lib/cli/approval-prompt.ts, the demo's sixth call): the prompt on
 * a terminal (one key in raw mode: y, n, l, Ctrl+C), `--approve` / `--deny`, and `--resume
 * <state file>` in process with `main(argv, io)`. The state files are real files; every
 * key is typed once the prompt is on screen (no clock).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import stripAnsi from 'strip-ansi';
import { main } from '../../lib/cli/main.ts';
import { memoryIo } from './support.ts';

const PROMPT = 'approve shell? y yes · n no · l later';

/** Files and folders a spec's demo left (state file and kept workspace), removed after each spec. */
const leftovers: string[] = [];
afterEach(async () => {
  for (const path of leftovers.splice(0)) await rm(path, { recursive: true, force: true });
});

/** The state file a paused run printed, registered for cleanup with its workspace. */
function stateFileOf(out: string): string {
  const file = /the paused run's state is saved in (\S+)/.exec(stripAnsi(out))?.[1];
  expect(file, out).toBeDefined();
  leftovers.push(file!, file!.replace(/\.paused\.json$/, ''));
  return file!;
}

describe('toolrun demo on a terminal: the call that writes a file is asked about (H1, H2)', () => {
  it('y: the call runs in the same run; the row said it waited for approval with the reason; raw mode is put back', async () => {
    const io = memoryIo({ tty: { columns: 200 }, keyboard: true });
    void io.whenOutput(PROMPT).then(() => {
      expect(io.raw()).toBe(true);
      io.type('y');
    });
    expect(await main([], io)).toBe(0);
    const out = stripAnsi(io.out());
    expect(out).toMatch(/\? shell +.*waits for approval: this shell command writes a file in the project/);
    expect(out).toContain('toolu_demo_06 ok 2 TODOs written to TODO.md');
    expect(out).toMatch(/^6 results, 0 errors$/m);
    expect(out).not.toContain("state is saved");
    expect(io.raw()).toBe(false);
    expect(io.listeners()).toBe(0);
  });

  it('n: the call is not run; its error result tells the model a person denied it, and why (H5)', async () => {
    const io = memoryIo({ tty: { columns: 200 }, keyboard: true });
    void io.whenOutput(PROMPT).then(() => io.type('n'));
    expect(await main([], io)).toBe(0);
    const out = stripAnsi(io.out());
    expect(out).toMatch(/toolu_demo_06 error A person denied this call to tool "shell", so it was not run\. Their reason: "The user answered no at the prompt\."/);
    expect(out).toMatch(/^6 results, 1 error$/m);
  });

  it('l (later): the run pauses, the state goes to a file, and --resume asks again; y then runs only that call', async () => {
    const first = memoryIo({ tty: { columns: 200 }, keyboard: true });
    void first.whenOutput(PROMPT).then(() => first.type('l'));
    expect(await main([], first)).toBe(0);
    const out = stripAnsi(first.out());
    expect(out).toMatch(/^paused: 5 calls of 6 answered \(0 errors\), 1 call waiting for approval$/m);
    const file = stateFileOf(out);
    // One command, the one that runs this program (a checkout here: npm start), on a line of
    // its own; before, the installed form followed on the same line, which wrapped at 140 columns.
    expect(out.split('\n')).toContain(`resume it with:  npm start -- --resume ${file}`);
    expect(first.raw()).toBe(false);

    const second = memoryIo({ tty: { columns: 200 }, keyboard: true });
    void second.whenOutput(PROMPT).then(() => second.type('y'));
    expect(await main(['--resume', file], second)).toBe(0);
    const resumed = stripAnsi(second.out());
    // The five calls answered before the pause are shown from the state, not run again.
    expect(resumed.match(/✓ \S+ .* earlier /g)?.length).toBeGreaterThanOrEqual(5);
    expect(resumed).not.toMatch(/(\d+ms|\d+\.\d+s) finished \[exit code 0\]/);
    expect(resumed).toContain('toolu_demo_06 ok 2 TODOs written to TODO.md');
    expect(resumed).toMatch(/^6 results, 0 errors$/m);
    expect(existsSync(file)).toBe(false);
  });

  it('the input ends at the prompt (the terminal went away): no answer, so the run pauses as with l; other keys are ignored', async () => {
    const io = memoryIo({ tty: { columns: 200 }, keyboard: true });
    void io.whenOutput(PROMPT).then(() => {
      io.type('x?');
      (io.stdin as unknown as { end(): void }).end();
    });
    expect(await main([], io)).toBe(0);
    const out = stripAnsi(io.out());
    expect(out).toMatch(/^paused: 5 calls of 6 answered/m);
    stateFileOf(out);
  });

  it('Ctrl+C at the prompt aborts the run like Ctrl+C anywhere: the call is not run, exit 130', async () => {
    const io = memoryIo({ tty: { columns: 200 }, keyboard: true });
    void io.whenOutput(PROMPT).then(() => io.type('\u0003'));
    expect(await main([], io)).toBe(130);
    const out = stripAnsi(io.out());
    expect(out).toMatch(/toolu_demo_06 error Not run: the run was aborted/);
    expect(out).toMatch(/^interrupted: 6 results, /m);
    expect(io.raw()).toBe(false);
  });
});

describe('toolrun demo without a terminal: --approve, --deny, --resume (H3, H5)', () => {
  it('--deny answers without asking: the call gets the denied result', async () => {
    const io = memoryIo();
    expect(await main(['--deny'], io)).toBe(0);
    expect(io.out()).toMatch(/^end toolu_demo_06 error \d+ms \(rejected\): A person denied this call to tool "shell", so it was not run\. Their reason: "Denied with --deny on the command line\."/m);
    expect(io.out()).toMatch(/^6 results, 1 error$/m);
  });

  it('paused, then --resume --deny: only the pending call is answered; the earlier results come from the state', async () => {
    const first = memoryIo();
    expect(await main([], first)).toBe(0);
    const file = stateFileOf(first.out());
    const second = memoryIo();
    expect(await main(['--resume', file, '--deny'], second)).toBe(0);
    const out = second.out();
    // The denied call alone starts (to end rejected); none of the five others runs again.
    expect(out.match(/^start .*$/gm)).toEqual([expect.stringMatching(/^start toolu_demo_06 shell /)]);
    expect(out.match(/^earlier toolu_demo_0[1-5] ok \(before the pause\)/gm)).toHaveLength(5);
    // `\d+ms`, not 0ms: a loaded machine can put the view's start and end events a millisecond apart.
    expect(out).toMatch(/^end toolu_demo_06 error \d+ms \(rejected\): A person denied this call/m);
    expect(out).toMatch(/^6 results, 1 error$/m);
  });

  it('a state file that was edited cannot be resumed: exit 2 with the ResumeError code, the file is kept (H8)', async () => {
    const first = memoryIo();
    expect(await main([], first)).toBe(0);
    const file = stateFileOf(first.out());
    const saved = JSON.parse(await readFile(file, 'utf8')) as { state: { payload: string } };
    const body = JSON.parse(saved.state.payload) as { calls: Array<{ call: { arguments: { command: string } } }> };
    body.calls[5]!.call.arguments.command = 'rm -rf ~';
    saved.state.payload = JSON.stringify(body);
    await writeFile(file, JSON.stringify(saved));
    const second = memoryIo();
    expect(await main(['--resume', file, '--approve'], second)).toBe(2);
    expect(second.err()).toMatch(/^toolrun: --resume: \S+ cannot be resumed \(calls\): call 5 /);
    expect(existsSync(file)).toBe(true);
  });

  it('a state file whose folder was edited to another one: that folder is never removed', async () => {
    const first = memoryIo();
    expect(await main([], first)).toBe(0);
    const file = stateFileOf(first.out());
    const victim = await mkdtemp(join(tmpdir(), 'toolrun-victim-'));
    leftovers.push(victim);
    const saved = JSON.parse(await readFile(file, 'utf8')) as { root: string; temporary: boolean };
    saved.root = victim;
    await writeFile(file, JSON.stringify(saved));
    expect(await main(['--resume', file, '--deny'], memoryIo())).toBe(0);
    expect(existsSync(victim)).toBe(true);
    expect(existsSync(file)).toBe(false);
  });

  it('bad flags and files are one line and exit 2', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['--approve', '--deny'], /^toolrun: --approve and --deny cannot both be given$/m],
      [['agent', '--approve'], /^toolrun: --approve, --deny and --resume apply to the demo only, not to agent/],
      [['--resume', 'no/such/file.json'], /^toolrun: --resume: no such state file: no\/such\/file\.json/],
      [['--resume', 'package.json'], /^toolrun: --resume: package\.json is not a paused demo's state file/],
    ];
    for (const [argv, pattern] of cases) {
      const io = memoryIo();
      expect(await main(argv, io), argv.join(' ')).toBe(2);
      expect(io.err()).toMatch(pattern);
      expect(io.out()).toBe('');
    }
  });
});
