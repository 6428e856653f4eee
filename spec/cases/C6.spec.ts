import * as v from 'valibot';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { defineTool, runTools, type RunToolsOptions, type Tool, type ToolCall } from '../../lib/index.ts';
import { ofType, text } from '../helpers.ts';
import { drive, expectInvariants, expectNoListeners, expectQuiescent, sleep, watchProcess, type ProcessWatch } from './harness.ts';

const input: ToolCall[] = ['c1', 'c2', 'c3'].map((id) => ({ id, name: 'slow', arguments: '{"ms":500}' }));

function slowTool(bodies: string[]): Tool {
  return defineTool({
    name: 'slow',
    input: v.object({ ms: v.number() }),
    async execute({ ms }, { signal, toolCallId }) {
      bodies.push(toolCallId);
      await sleep(ms, signal);
      return 'done';
    },
  });
}

/** Runs `calls` with `abort@abortAt` (or an already aborted signal); checks I1–I5 and the id set. */
async function interrupted(calls: ToolCall[], tools: Tool[], bodies: string[], extra: Partial<RunToolsOptions> = {}, abortAt: number | 'before' = 100) {
  const controller = new AbortController();
  if (abortAt === 'before') controller.abort();
  else setTimeout(() => controller.abort(), abortAt);
  const driven = await drive(runTools(calls, { tools, signal: controller.signal, ...extra }));
  expectInvariants(calls, driven);
  const ids = driven.batch.messages.map((m) => m.toolCallId);
  expect(ids).toEqual(['c1', 'c2', 'c3']);
  expect(new Set(ids).size).toBe(3);
  expect(driven.batch.messages.every((m) => m.isError)).toBe(true);
  expect(driven.batch.aborted).toBe(true);
  // Settles within about 100 ms of the abort (here: at once, the tools honour their signal).
  expect(driven.settledAt).toBeLessThanOrEqual(abortAt === 'before' ? 0 : abortAt + 100);
  expectNoListeners(controller.signal);
  await expectQuiescent(driven, () => bodies);
  return driven;
}

const outcomes = (driven: Awaited<ReturnType<typeof interrupted>>) => ofType(driven.events, 'tool_execution_end').map((e) => [e.toolCallId, e.outcome]);

describe('C6 Every call gets exactly one result when the batch is interrupted (no orphan tool calls)', () => {
  let watch: ProcessWatch;
  beforeEach(() => {
    vi.useFakeTimers();
    watch = watchProcess();
  });
  afterEach(() => {
    watch.dispose();
    vi.useRealTimers();
  });

  it('abort@100: three running calls, three interrupted results', async () => {
    const bodies: string[] = [];
    const driven = await interrupted(input, [slowTool(bodies)], bodies);
    expect(bodies).toEqual(['c1', 'c2', 'c3']);
    expect(driven.settledAt).toBe(100);
    expect(outcomes(driven)).toEqual([
      ['c1', 'interrupted'],
      ['c2', 'interrupted'],
      ['c3', 'interrupted'],
    ]);
    for (const m of driven.batch.messages) expect(text(m)).toMatch(/^Interrupted: .*aborted/);
    watch.expectClean();
  });

  it('(b) c2’s non-async execute throws synchronously: its own error, the others interrupted', async () => {
    const bodies: string[] = [];
    const syncThrow = defineTool({
      name: 'slow_sync',
      input: v.object({ ms: v.number() }),
      execute: (_input: { ms: number }, { toolCallId }): string => {
        bodies.push(toolCallId);
        throw new Error('sync boom');
      },
    });
    const calls = input.map((c) => (c.id === 'c2' ? { ...c, name: 'slow_sync' } : c));
    const driven = await interrupted(calls, [slowTool(bodies), syncThrow], bodies);
    expect(outcomes(driven)).toEqual([
      ['c2', 'error'],
      ['c1', 'interrupted'],
      ['c3', 'interrupted'],
    ]);
    expect(text(driven.batch.messages[1]!)).toBe('sync boom');
    expect(text(driven.batch.messages[0]!)).toMatch(/^Interrupted:/);
    expect(text(driven.batch.messages[2]!)).toMatch(/^Interrupted:/);
    watch.expectClean();
  });

  it('(c) the before-hook for c3 rejects: c3 gets that error, c1 and c2 are interrupted', async () => {
    const bodies: string[] = [];
    const driven = await interrupted(input, [slowTool(bodies)], bodies, {
      beforeToolCall: async ({ toolCall }) => {
        if (toolCall.id === 'c3') throw new Error('policy down');
      },
    });
    expect(bodies).toEqual(['c1', 'c2']);
    expect(outcomes(driven)).toEqual([
      ['c3', 'rejected'],
      ['c1', 'interrupted'],
      ['c2', 'interrupted'],
    ]);
    expect(text(driven.batch.messages[2]!)).toContain('beforeToolCall failed: policy down');
    watch.expectClean();
  });

  it('(d) the signal is already aborted: nothing runs, every call says it was never started', async () => {
    const bodies: string[] = [];
    const hooks: string[] = [];
    const driven = await interrupted(
      input,
      [slowTool(bodies)],
      bodies,
      {
        beforeToolCall: ({ toolCall }) => {
          hooks.push(toolCall.id);
        },
        afterToolCall: ({ toolCall }) => {
          hooks.push(toolCall.id);
        },
      },
      'before',
    );
    expect(bodies).toEqual([]);
    expect(hooks).toEqual([]);
    expect(driven.settledAt).toBe(0);
    expect(outcomes(driven).map(([, o]) => o)).toEqual(['not_run', 'not_run', 'not_run']);
    for (const m of driven.batch.messages) {
      expect(text(m)).toMatch(/^Not run: .*aborted/);
      expect(text(m)).not.toMatch(/Interrupted/);
    }
    watch.expectClean();
  });
});
