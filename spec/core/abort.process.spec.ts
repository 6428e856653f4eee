import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// A child process (node with tsx, about 1.3 s of CPU): in `npm run test:slow` (vitest.config.ts,
// `spec/**/*.process.spec.ts`); the rest of A5 is spec/core/abort.spec.ts.
describe('A5 when the consumer stops, every running tool is aborted and every generator returned', () => {
  // Hang guards only (a child process on a loaded machine can take long to start): fails if a
  // run leaves a handle open, as the child then never exits.
  it('lets the process exit on its own after a run (no open handle)', { timeout: 180_000 }, () => {
    const script = fileURLToPath(new URL('../fixtures/exit-after-run.ts', import.meta.url));
    const child = spawnSync(process.execPath, ['--import', 'tsx', script], { encoding: 'utf8', timeout: 150_000 });
    expect(child.stderr).toBe('');
    expect(child.stdout.trim()).toBe('results: 3');
    expect(child.status).toBe(0);
  });
});
