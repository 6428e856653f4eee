import * as v from 'valibot';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { defineTool, runTools, type ToolCall } from '../../lib/index.ts';
import { text } from '../helpers.ts';
import { clockFrom, drive, endOf, expectInvariants, expectNoListeners, expectQuiescent, sleep, watchProcess, type ProcessWatch } from './harness.ts';

describe('C4 Each hook error must stay attached to its own call', () => {
  let watch: ProcessWatch;
  beforeEach(() => {
    vi.useFakeTimers();
    watch = watchProcess();
  });
  afterEach(() => {
    watch.dispose();
    vi.useRealTimers();
  });

  it('reports BLOCK ALPHA on c1 only, BLOCK BETA on c2 only, and runs c3', async () => {
    const input: ToolCall[] = [
      { id: 'c1', name: 'run_command', arguments: '{"cmd":"alpha-block"}' },
      { id: 'c2', name: 'run_command', arguments: '{"cmd":"beta-block"}' },
      { id: 'c3', name: 'run_command', arguments: '{"cmd":"echo ok"}' },
    ];
    const bodies: string[] = [];
    const runCommand = defineTool({
      name: 'run_command',
      input: v.object({ cmd: v.string() }),
      async execute({ cmd }, { signal, toolCallId }) {
        bodies.push(toolCallId);
        await sleep(5, signal);
        return `ran:${cmd}`;
      },
    });
    const t0 = Date.now();
    const now = clockFrom(t0);
    const hookCalls: [string, number][] = [];
    const controller = new AbortController();
    const driven = await drive(
      runTools(input, {
        tools: [runCommand],
        signal: controller.signal,
        beforeToolCall: async ({ toolCall, args, signal }) => {
          hookCalls.push([toolCall.id, now()]);
          const cmd = (args as { cmd: string }).cmd;
          if (cmd.includes('alpha-block')) {
            await sleep(30, signal);
            throw new Error('BLOCK ALPHA');
          }
          if (cmd.includes('beta-block')) {
            await sleep(10, signal);
            throw new Error('BLOCK BETA');
          }
        },
      }),
      { t0 },
    );
    expectInvariants(input, driven);
    const [m1, m2, m3] = driven.batch.messages;
    expect(m1!.isError).toBe(true);
    expect(text(m1!)).toContain('BLOCK ALPHA');
    expect(text(m1!)).not.toContain('BETA');
    expect(m2!.isError).toBe(true);
    expect(text(m2!)).toContain('BLOCK BETA');
    expect(text(m2!)).not.toContain('ALPHA');
    expect(m3!.isError).toBe(false);
    expect(text(m3!)).toBe('ran:echo ok');
    expect(endOf(driven, 'c1').outcome).toBe('rejected');
    expect(endOf(driven, 'c2').outcome).toBe('rejected');
    expect(bodies).toEqual(['c3']);
    // Prepare is serial in call order (contract P1): each hook runs once, after the
    // previous call's hook settled, so "beta throws first" cannot mix the errors up.
    expect(hookCalls).toEqual([
      ['c1', 0],
      ['c2', 30],
      ['c3', 40],
    ]);
    expect(driven.settledAt).toBe(45);
    expectNoListeners(controller.signal);
    await expectQuiescent(driven, () => bodies);
    watch.expectClean();
  });
});
