import * as v from 'valibot';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { defineTool, runTools, type ToolCall } from '../../lib/index.ts';
import { ofType, text } from '../helpers.ts';
import { clockFrom, drive, endOf, expectInvariants, expectNoListeners, expectQuiescent, sleep, watchProcess, type ProcessWatch } from './harness.ts';

describe('C8 The abort signal must reach the running tool', () => {
  let watch: ProcessWatch;
  beforeEach(() => {
    vi.useFakeTimers();
    watch = watchProcess();
  });
  afterEach(() => {
    watch.dispose();
    vi.useRealTimers();
  });

  it('aborts the tool’s signal at once with the user’s reason; progress stops; the result says aborted', async () => {
    const input: ToolCall[] = [{ id: 'c1', name: 'scan', arguments: '{"steps":50}' }];
    const t0 = Date.now();
    const now = clockFrom(t0);
    const probe = { listenerAt: -1, reason: undefined as unknown, steps: 0, finallyRan: false };
    const scan = defineTool({
      name: 'scan',
      input: v.object({ steps: v.number() }),
      async *execute({ steps }, { signal }) {
        signal.addEventListener('abort', () => {
          probe.listenerAt = now();
          probe.reason = signal.reason;
        });
        try {
          for (let i = 0; i < steps; i++) {
            await sleep(20, signal);
            probe.steps++;
            yield { step: i };
          }
          return 'complete';
        } finally {
          probe.finallyRan = true;
        }
      },
    });
    const controller = new AbortController();
    const reason = new Error('user pressed cancel');
    setTimeout(() => controller.abort(reason), 100);
    const driven = await drive(runTools(input, { tools: [scan], signal: controller.signal }), { t0 });
    expectInvariants(input, driven);
    // Virtual time (fake timers): the listener fired at the abort's own tick, 100 exactly.
    expect(probe.listenerAt).toBe(100);
    expect(probe.reason).toBe(reason);
    // Progress stops: steps at 20, 40, 60, 80; the sleep due at 100 lost to the abort.
    const progress = driven.timed.filter((t) => t.event.type === 'tool_execution_update');
    expect(progress.map((t) => t.at)).toEqual([20, 40, 60, 80]);
    expect(ofType(driven.events, 'tool_execution_update').map((e) => e.progress)).toEqual([{ step: 0 }, { step: 1 }, { step: 2 }, { step: 3 }]);
    const message = driven.batch.messages[0]!;
    expect(message.isError).toBe(true);
    expect(text(message)).toContain('abort');
    expect(endOf(driven, 'c1').outcome).toBe('interrupted');
    expect(driven.batch.aborted).toBe(true);
    expect(driven.settledAt).toBe(100);
    expect(probe.finallyRan).toBe(true);
    expectNoListeners(controller.signal);
    await expectQuiescent(driven, () => probe.steps);
    watch.expectClean();
  });
});
