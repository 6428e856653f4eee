import * as v from 'valibot';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { defineTool, runTools, type ToolCall } from '../../lib/index.ts';
import { text } from '../helpers.ts';
import { clockFrom, drive, endOf, expectInvariants, expectNoListeners, expectQuiescent, sleep, sleepIgnoring, watchProcess, type ProcessWatch } from './harness.ts';

describe('C9 Abort must stop the actual work, and the result must say so honestly when it cannot', () => {
  let watch: ProcessWatch;
  beforeEach(() => {
    vi.useFakeTimers();
    watch = watchProcess();
  });
  afterEach(() => {
    watch.dispose();
    vi.useRealTimers();
  });

  it('kills the child that listens, abandons the stubborn one after the grace with an honest result', async () => {
    const input: ToolCall[] = [
      { id: 'c1', name: 'run_command', arguments: '{"cmd":"long"}' },
      { id: 'c2', name: 'run_command', arguments: '{"cmd":"stubborn"}' },
    ];
    // Every time in this case is the fake clock's (vi.useFakeTimers in beforeEach): no real time is measured.
    const t0 = Date.now();
    const now = clockFrom(t0);
    const probe = { ticks1: 0, ticks2: 0, killedAt: -1, c2ReturnedAt: -1 };
    const runCommand = defineTool({
      name: 'run_command',
      input: v.object({ cmd: v.string() }),
      async execute({ cmd }, { signal }) {
        if (cmd === 'long') {
          // A child process: the abort listener kills it; waiting for it then fails.
          const child = setInterval(() => probe.ticks1++, 10);
          signal.addEventListener('abort', () => {
            clearInterval(child);
            probe.killedAt = now();
          });
          await sleep(2000, signal);
          clearInterval(child);
          return 'finished';
        }
        // Ignores abort completely.
        const child = setInterval(() => probe.ticks2++, 10);
        await sleepIgnoring(2000);
        clearInterval(child);
        probe.c2ReturnedAt = now();
        return 'late';
      },
    });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const driven = await drive(runTools(input, { tools: [runCommand], signal: controller.signal, abortGraceMs: 100 }), { t0 });
    expectInvariants(input, driven);
    // c1's interval was cleared within the abort's tick; it stops growing.
    expect(probe.killedAt).toBe(100);
    const ticks1AtAbort = probe.ticks1;
    expect(ticks1AtAbort).toBeLessThanOrEqual(10);
    // Virtual time (fake timers): settles at abort + grace, 200, not at 2000.
    expect(driven.settledAt).toBe(200);
    const [m1, m2] = driven.batch.messages;
    expect(m1!.isError).toBe(true);
    expect(text(m1!)).toMatch(/aborted/);
    expect(endOf(driven, 'c1').outcome).toBe('interrupted');
    expect(m2!.isError).toBe(true);
    expect(text(m2!)).toMatch(/did not confirm cancellation/);
    expect(text(m2!)).toMatch(/outcome is unknown/);
    expect(endOf(driven, 'c2').outcome).toBe('abandoned');
    expect(driven.batch.aborted).toBe(true);
    expectNoListeners(controller.signal);
    // When c2 finally returns at 2000 ms, nothing is emitted and nothing throws (I3, I5).
    await expectQuiescent(driven, () => [probe.ticks1, driven.events.length], { ms: 2_500 });
    expect(probe.c2ReturnedAt).toBe(2000);
    expect(probe.ticks1).toBe(ticks1AtAbort);
    expect(probe.ticks2).toBeGreaterThan(100);
    watch.expectClean();
  });
});
