import * as v from 'valibot';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { defineTool, runTools, type ToolCall } from '../../lib/index.ts';
import { text } from '../helpers.ts';
import { drive, endOf, expectInvariants, expectNoListeners, expectQuiescent, sleep, watchProcess, type ProcessWatch } from './harness.ts';

describe('C7 No tool may start after an abort, including calls already prepared', () => {
  let watch: ProcessWatch;
  beforeEach(() => {
    vi.useFakeTimers();
    watch = watchProcess();
  });
  afterEach(() => {
    watch.dispose();
    vi.useRealTimers();
  });

  it('A (sequential, abort@50): c1 interrupted, c2 and c3 never start, no side effect, no after-hook', async () => {
    const input: ToolCall[] = [
      { id: 'c1', name: 'slow', arguments: '{"ms":100}' },
      { id: 'c2', name: 'write_note', arguments: '{"path":"n.txt","text":"x"}' },
      { id: 'c3', name: 'lookup', arguments: '{"q":"z"}' },
    ];
    let sideEffects = 0;
    const bodies: string[] = [];
    const slow = defineTool({
      name: 'slow',
      input: v.object({ ms: v.number() }),
      async execute({ ms }, { signal, toolCallId }) {
        bodies.push(toolCallId);
        await sleep(ms, signal);
        return 'done';
      },
    });
    const writeNote = defineTool({
      name: 'write_note',
      input: v.object({ path: v.string(), text: v.string() }),
      execute({ path }, { toolCallId }) {
        bodies.push(toolCallId);
        sideEffects++;
        return `wrote ${path}`;
      },
    });
    const lookup = defineTool({
      name: 'lookup',
      input: v.object({ q: v.string() }),
      execute: ({ q }, { toolCallId }) => {
        bodies.push(toolCallId);
        return q;
      },
    });
    const afterCalls: string[] = [];
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const driven = await drive(
      runTools(input, {
        tools: [slow, writeNote, lookup],
        mode: 'sequential',
        signal: controller.signal,
        afterToolCall: ({ toolCall }) => {
          afterCalls.push(toolCall.id);
        },
      }),
    );
    expectInvariants(input, driven);
    expect(sideEffects).toBe(0);
    expect(bodies).toEqual(['c1']);
    // Documented: afterToolCall is not called once the run has been aborted (not even for c1).
    expect(afterCalls).toEqual([]);
    expect(driven.batch.messages.map((m) => m.isError)).toEqual([true, true, true]);
    expect(endOf(driven, 'c1').outcome).toBe('interrupted');
    expect(text(driven.batch.messages[0]!)).toMatch(/^Interrupted: .*aborted/);
    for (const m of driven.batch.messages.slice(1)) expect(text(m)).toMatch(/^Not run: the run was aborted before tool "[a-z_]+" started/);
    expect(endOf(driven, 'c2').outcome).toBe('not_run');
    expect(endOf(driven, 'c3').outcome).toBe('not_run');
    expect(driven.batch.aborted).toBe(true);
    expect(driven.settledAt).toBe(50);
    expectNoListeners(controller.signal);
    await expectQuiescent(driven, () => [bodies, sideEffects, afterCalls]);
    watch.expectClean();
  });

  describe('B (parallel, c2’s before-hook aborts the run)', () => {
    // Documented decision (contract P1): prepare of call i runs when it is handed out and its
    // execution starts as soon as its own prepare is done; it does NOT wait for later calls'
    // preflight. So c1's body may already have run when c2's hook aborts (the public case expects
    // "execution starts only after every preflight has finished" and neither body to run).
    // What must hold: no tool body starts AFTER the abort, c2 never runs, every call is answered.
    function writeNoteTool(log: string[], ms: number) {
      let sideEffects = 0;
      const tool = defineTool({
        name: 'write_note',
        input: v.object({ path: v.string(), text: v.string() }),
        async execute({ path }, { signal, toolCallId }) {
          log.push(`body:${toolCallId}:${signal.aborted ? 'aborted' : 'live'}`);
          if (ms > 0) await sleep(ms, signal);
          sideEffects++;
          log.push(`wrote:${toolCallId}`);
          return `wrote ${path}`;
        },
      });
      return { tool, sideEffects: () => sideEffects };
    }
    const input: ToolCall[] = [
      { id: 'c1', name: 'write_note', arguments: '{"path":"a.txt","text":"x"}' },
      { id: 'c2', name: 'write_note', arguments: '{"path":"b.txt","text":"y"}' },
    ];

    it('the literal scenario: c2 never runs, no body starts after the abort, both answered', async () => {
      const log: string[] = [];
      const { tool, sideEffects } = writeNoteTool(log, 0);
      const controller = new AbortController();
      const driven = await drive(
        runTools(input, {
          tools: [tool],
          signal: controller.signal,
          beforeToolCall: ({ toolCall }) => {
            log.push(`hook:${toolCall.id}`);
            if (toolCall.id === 'c2') {
              controller.abort();
              log.push('abort');
            }
          },
        }),
      );
      expectInvariants(input, driven);
      expect(log).not.toContain('body:c2:live');
      expect(log).not.toContain('body:c2:aborted');
      expect(log.some((l) => l.endsWith(':aborted')), 'a body started with an aborted signal').toBe(false);
      const abortAt = log.indexOf('abort');
      expect(abortAt).toBeGreaterThan(-1);
      log.forEach((l, i) => {
        if (l.startsWith('body:')) expect(i, `${l} started after the abort`).toBeLessThan(abortAt);
      });
      expect(endOf(driven, 'c2').outcome).toBe('not_run');
      expect(text(driven.batch.messages[1]!)).toMatch(/^Not run: .*aborted/);
      // c1: its real outcome if its body ran before the abort, else "not run" with no effect.
      const c1 = endOf(driven, 'c1');
      if (log.includes('body:c1:live')) {
        // It ran before the abort: done by then (ok), or still running and told so
        // (interrupted, its own output kept after the notice).
        expect(['ok', 'interrupted']).toContain(c1.outcome);
        expect(text(driven.batch.messages[0]!)).toMatch(c1.outcome === 'ok' ? /^wrote a\.txt$/ : /^Interrupted: .*wrote a\.txt$/s);
        expect(sideEffects()).toBe(1);
      } else {
        expect(c1.outcome).toBe('not_run');
        expect(sideEffects()).toBe(0);
      }
      expect(driven.batch.aborted).toBe(true);
      expectNoListeners(controller.signal);
      await expectQuiescent(driven, () => [log, sideEffects()]);
      watch.expectClean();
    });

    it('a slow write already running when c2’s hook aborts is interrupted; c2 never starts', async () => {
      const log: string[] = [];
      const { tool, sideEffects } = writeNoteTool(log, 10);
      const controller = new AbortController();
      const driven = await drive(
        runTools(input, {
          tools: [tool],
          signal: controller.signal,
          beforeToolCall: async ({ toolCall, signal }) => {
            log.push(`hook:${toolCall.id}`);
            if (toolCall.id === 'c2') {
              await sleep(5, signal);
              controller.abort();
              log.push('abort');
            }
          },
        }),
      );
      expectInvariants(input, driven);
      expect(log).toEqual(['hook:c1', 'body:c1:live', 'hook:c2', 'abort']);
      expect(sideEffects()).toBe(0);
      expect(driven.batch.messages.map((m) => m.isError)).toEqual([true, true]);
      expect(endOf(driven, 'c1').outcome).toBe('interrupted');
      expect(endOf(driven, 'c2').outcome).toBe('not_run');
      expect(text(driven.batch.messages[0]!)).toMatch(/^Interrupted: .*aborted/);
      expect(text(driven.batch.messages[1]!)).toMatch(/^Not run: .*aborted/);
      expect(driven.settledAt).toBe(5);
      expectNoListeners(controller.signal);
      await expectQuiescent(driven, () => [log, sideEffects()]);
      watch.expectClean();
    });
  });
});
