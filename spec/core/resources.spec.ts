import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

describe('A6 10,000 runs on one long-lived signal: no listener, no warning, no heap growth', () => {
  it('leaves the signal and the heap as they were (child process with --expose-gc)', () => {
    const script = fileURLToPath(new URL('../fixtures/long-lived-signal.ts', import.meta.url));
    const child = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', script], { encoding: 'utf8', timeout: 120_000 });
    expect(child.stderr).toBe('');
    expect(child.status).toBe(0);
    const report = JSON.parse(child.stdout) as { listeners: number; growthBytes: number; warnings: string[] };
    expect(report.listeners).toBe(0);
    expect(report.warnings).toEqual([]);
    // 30,000 calls went through: anything retained per call would show as megabytes.
    expect(report.growthBytes).toBeLessThan(1_000_000);
  });
});
