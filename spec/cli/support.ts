/**
 * Runs the real `npm start` program as a child process and presses Ctrl+C (SIGINT) once
 * its stdout shows `marker`: the shared body of the CLI specs' interrupt tests.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The repository root, where `lib/cli/main.ts` is run from. */
export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** What the interrupted program left: its exit code and everything it printed. */
export interface Interrupted {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Starts `main.ts` with `args`, sends SIGINT when stdout first contains `marker`, waits for the exit. */
export async function interruptWhen(args: readonly string[], marker: string): Promise<Interrupted> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'lib/cli/main.ts', ...args], { cwd: repoRoot, env: { ...process.env, NO_COLOR: '1' } });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  await new Promise<void>((resolve) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes(marker)) resolve();
    });
  });
  child.kill('SIGINT');
  const code = await exited;
  return { code, stdout, stderr };
}
