/**
 * Runs one program of examples/ as a user runs it (`node --import tsx <file>` from the
 * repository's root) and gives its exit code and output. The program must end by itself: a
 * handle it leaves open (a server, a PostgreSQL, a worker) would time the calling test out.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** What a finished example printed, and its exit code. */
export interface ExampleRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `file` (a path from the repository's root) with `env` (default: this process's). */
export function runExample(file: string, env: NodeJS.ProcessEnv = process.env): Promise<ExampleRun> {
  const child = spawn(process.execPath, ['--import', 'tsx', file], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}
