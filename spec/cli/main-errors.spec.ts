/**
 * `main(argv, io)` with a stand-in replay module: how an unexpected error is reported, and
 * that `replay` returns its report's exit code. (A file of its own: the module mock applies
 * to the whole file.)
 */
import { describe, expect, it, vi } from 'vitest';
import { main } from '../../lib/cli/main.ts';
import { memoryIo } from './support.ts';

vi.mock('../../lib/cli/replay.ts', () => ({
  replay: async (target: string) => {
    if (target === 'boom') throw new RangeError('replay exploded\nsecond line \x7f\x1b[2J');
    return { exitCode: 3 };
  },
  formatReportTable: () => 'a | table',
}));

describe('main() in process, with a stand-in replay module', () => {
  it('an unexpected error is one line with the TOOLRUN_DEBUG hint, exit 1; its control characters escaped', async () => {
    const io = memoryIo();
    expect(await main(['replay', 'boom'], io)).toBe(1);
    expect(io.err()).toBe('toolrun: unexpected error: RangeError: replay exploded second line \\x7f (run with TOOLRUN_DEBUG=1 for the stack)\n');
  });

  it('with TOOLRUN_DEBUG=1 the stack follows the line', async () => {
    const io = memoryIo({ env: { TOOLRUN_DEBUG: '1' } });
    expect(await main(['replay', 'boom'], io)).toBe(1);
    expect(io.err()).toMatch(/^toolrun: unexpected error: .*\nRangeError: replay exploded\nsecond line \\x7f\n\s+at /);
  });

  it("replay prints the report table and returns the report's exit code; no Ctrl+C listener is left behind", async () => {
    const io = memoryIo();
    expect(await main(['replay', 'recordings', '--delay', '0'], io)).toBe(3);
    expect(io.out()).toBe('a | table\n');
    expect(io.listeners()).toBe(0);
  });
});
