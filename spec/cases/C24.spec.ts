import * as v from 'valibot';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { defineTool, runTools, type ToolCall } from '../../lib/index.ts';
import { gate, text, type Gate } from '../helpers.ts';
import { clockFrom, drive, endOf, expectInvariants, expectNoListeners, expectQuiescent, watchProcess, type ProcessWatch } from './harness.ts';

const input: ToolCall[] = [
  { id: 'c1', name: 'delete_item', arguments: '{"id":"A"}' },
  { id: 'c2', name: 'delete_item', arguments: '{"id":"B"}' },
  { id: 'c3', name: 'delete_item', arguments: '{"id":"C"}' },
];

/**
 * The approval UI: `approve(call)` waits for the user's answer for that call; the harness
 * posts answers at fixed times (`answers`), whether or not the call is being asked yet.
 */
function approvals(answers: [id: string, allow: boolean, at: number][]) {
  const gates = new Map<string, Gate<boolean>>(input.map((c) => [c.id, gate<boolean>()]));
  for (const [id, allow, at] of answers) setTimeout(() => gates.get(id)!.open(allow), at);
  const asked: { id: string; args: unknown }[] = [];
  return {
    asked,
    approve(call: ToolCall, args: unknown): Promise<boolean> {
      asked.push({ id: call.id, args });
      return gates.get(call.id)!.promise;
    },
  };
}

function deleteTool(deleted: string[]) {
  return defineTool({
    name: 'delete_item',
    input: v.object({ id: v.string() }),
    execute: ({ id }) => {
      deleted.push(id);
      return `deleted ${id}`;
    },
  });
}

describe('C24 Approval prompts in a parallel batch: each decision goes to its own call, race-free', () => {
  let watch: ProcessWatch;
  beforeEach(() => {
    vi.useFakeTimers();
    watch = watchProcess();
  });
  afterEach(() => {
    watch.dispose();
    vi.useRealTimers();
  });

  // Contract P1: prepare — and so beforeToolCall, where the prompt lives — is serial in call
  // order: the user is asked about one call at a time. The harness's answers (c3 at 10 ms,
  // c1 at 20, c2 at 30) are posted when given; each reaches its own call when it is asked.
  it('routes each answer to its own call: only B and C are deleted, c1 is denied', async () => {
    const t0 = Date.now();
    const now = clockFrom(t0);
    const ui = approvals([
      ['c3', true, 10],
      ['c1', false, 20],
      ['c2', true, 30],
    ]);
    const askedAt: [string, number][] = [];
    const deleted: string[] = [];
    const controller = new AbortController();
    const driven = await drive(
      runTools(input, {
        tools: [deleteTool(deleted)],
        signal: controller.signal,
        beforeToolCall: async ({ toolCall, args }) => {
          askedAt.push([toolCall.id, now()]);
          const allow = await ui.approve(toolCall, args);
          return allow ? undefined : { block: true, reason: 'denied' };
        },
      }),
      { t0 },
    );
    expectInvariants(input, driven);
    // Once per call, with that call's own id and arguments, one prompt at a time.
    expect(ui.asked).toEqual([
      { id: 'c1', args: { id: 'A' } },
      { id: 'c2', args: { id: 'B' } },
      { id: 'c3', args: { id: 'C' } },
    ]);
    expect(askedAt).toEqual([
      ['c1', 0],
      ['c2', 20],
      ['c3', 30],
    ]);
    expect(deleted.sort()).toEqual(['B', 'C']);
    const [m1, m2, m3] = driven.batch.messages;
    expect([m1!.isError, m2!.isError, m3!.isError]).toEqual([true, false, false]);
    expect(text(m1!)).toBe('denied');
    expect(endOf(driven, 'c1').outcome).toBe('rejected');
    expect(text(m2!)).toBe('deleted B');
    expect(text(m3!)).toBe('deleted C');
    expect(driven.settledAt).toBe(30);
    expectNoListeners(controller.signal);
    await expectQuiescent(driven, () => deleted.length);
    watch.expectClean();
  });

  it('abort at 15 ms while c1 is pending: the pending approval ends as aborted, nothing runs, all answered at once', async () => {
    const ui = approvals([
      ['c3', true, 10],
      ['c1', false, 20],
      ['c2', true, 30],
    ]);
    const deleted: string[] = [];
    const hookSignals: AbortSignal[] = [];
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 15);
    const driven = await drive(
      runTools(input, {
        tools: [deleteTool(deleted)],
        signal: controller.signal,
        beforeToolCall: async ({ toolCall, args, signal }) => {
          hookSignals.push(signal);
          const allow = await ui.approve(toolCall, args);
          return allow ? undefined : { block: true, reason: 'denied' };
        },
      }),
    );
    expectInvariants(input, driven);
    expect(deleted).toEqual([]);
    expect(ui.asked.map((a) => a.id)).toEqual(['c1']);
    expect(hookSignals[0]!.aborted).toBe(true);
    for (const [i, m] of driven.batch.messages.entries()) {
      expect(m.isError).toBe(true);
      expect(text(m)).toMatch(/^Not run: .*aborted/);
      expect(text(m)).not.toMatch(/denied/);
      expect(endOf(driven, `c${i + 1}`).outcome).toBe('not_run');
    }
    expect(driven.batch.aborted).toBe(true);
    // Settles promptly: no stuck "confirming" state.
    expect(driven.settledAt).toBe(15);
    expectNoListeners(controller.signal);
    // The user's late answers (20, 30 ms) change nothing.
    await expectQuiescent(driven, () => [deleted, ui.asked.length]);
    watch.expectClean();
  });
});
