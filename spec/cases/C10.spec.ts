import * as v from 'valibot';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { defineTool, runTools, type ToolCall } from '../../lib/index.ts';
import { text } from '../helpers.ts';
import { drive, endOf, expectInvariants, expectNoListeners, expectQuiescent, sleep, sleepIgnoring, watchProcess, type ProcessWatch } from './harness.ts';

const input: ToolCall[] = [
  { id: 'c1', name: 'slow', arguments: '{"ms":500}' },
  { id: 'c2', name: 'boom', arguments: '{}' },
];

function tools(bodies: string[], c1Fails: boolean) {
  const slow = defineTool({
    name: 'slow',
    input: v.object({ ms: v.number() }),
    async execute({ ms }, { signal, toolCallId }) {
      bodies.push(toolCallId);
      if (c1Fails) {
        // Its own internal fetch gives up at 50 ms: an AbortError that is not the user's.
        await sleep(50, signal);
        throw new DOMException('timeout', 'AbortError');
      }
      await sleep(ms, signal);
      return 'done';
    },
  });
  const boom = defineTool({
    name: 'boom',
    input: v.object({}),
    async execute(_input, { signal, toolCallId }) {
      bodies.push(toolCallId);
      await sleep(10, signal);
      throw new Error('boom');
    },
  });
  return [slow, boom];
}

describe('C10 Tell an abort apart from a tool failure, and report interrupted vs not-run', () => {
  let watch: ProcessWatch;
  beforeEach(() => {
    vi.useFakeTimers();
    watch = watchProcess();
  });
  afterEach(() => {
    watch.dispose();
    vi.useRealTimers();
  });

  it('abort@100: the batch is flagged aborted, c1 interrupted during execution, c2 an ordinary failure', async () => {
    const bodies: string[] = [];
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const driven = await drive(runTools(input, { tools: tools(bodies, false), signal: controller.signal }));
    expectInvariants(input, driven);
    // toolrun has no run-level abort event: the documented run outcome flag is
    // ToolBatch.aborted (and each call's end event carries its outcome). Exactly one call
    // reports the abort; c2 failed on its own before it.
    expect(driven.batch.aborted).toBe(true);
    expect(endOf(driven, 'c1').outcome).toBe('interrupted');
    expect(endOf(driven, 'c2').outcome).toBe('error');
    const [m1, m2] = driven.batch.messages;
    expect(m1!.isError).toBe(true);
    expect(text(m1!)).toMatch(/^Interrupted: the run was aborted while tool "slow" was running/);
    // The wording differs from the not-started wording of C7.
    expect(text(m1!)).not.toMatch(/^Not run/);
    expect(m2!.isError).toBe(true);
    expect(text(m2!)).toBe('boom');
    expect(driven.settledAt).toBe(100);
    expectNoListeners(controller.signal);
    await expectQuiescent(driven, () => bodies);
    watch.expectClean();
  });

  it('with a slow consumer (a UI taking 150 ms per event), c2’s failure before the abort stays an ordinary failure', async () => {
    // c2 throws at 10 ms, the user aborts at 100 ms, but the consumer reads c2's end only
    // later: how a call ended is decided when the tool settled, not when the event is read.
    const bodies: string[] = [];
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const driven = await drive(runTools(input, { tools: tools(bodies, false), signal: controller.signal }), {
      onEvent: () => sleepIgnoring(150),
    });
    expectInvariants(input, driven);
    expect(driven.batch.aborted).toBe(true);
    expect(endOf(driven, 'c2').outcome).toBe('error');
    expect(text(driven.batch.messages[1]!)).toBe('boom');
    expect(endOf(driven, 'c1').outcome).toBe('interrupted');
    expectNoListeners(controller.signal);
    await expectQuiescent(driven, () => bodies);
    watch.expectClean();
  });

  it('variant V: an AbortError thrown by the tool itself is an ordinary error; the run is not aborted', async () => {
    const bodies: string[] = [];
    const controller = new AbortController();
    const driven = await drive(runTools(input, { tools: tools(bodies, true), signal: controller.signal }));
    expectInvariants(input, driven);
    expect(driven.batch.aborted).toBe(false);
    expect(endOf(driven, 'c1').outcome).toBe('error');
    const [m1, m2] = driven.batch.messages;
    expect(m1!.isError).toBe(true);
    expect(text(m1!)).toBe('AbortError: timeout');
    expect(text(m1!)).not.toMatch(/Interrupted|Not run/);
    expect(text(m2!)).toBe('boom');
    expect(driven.settledAt).toBe(50);
    expectNoListeners(controller.signal);
    await expectQuiescent(driven, () => bodies);
    watch.expectClean();
  });
});
