/**
 * Defect: leaving the loop (`break`, `throw()`, `return()`) did not wait for the tools'
 * `finally` blocks: they ran after the consumer had moved on (A5).
 */
import { getEventListeners } from 'node:events';
import * as v from 'valibot';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { defineTool, runTools, type ToolCall } from '../../lib/index.ts';
import { collect, gate, settle, text } from '../helpers.ts';

const one = (name: string): ToolCall[] => [{ id: 'a', name, arguments: {} }];
const quick = defineTool({ name: 'quick', input: v.object({}), execute: () => 'ok' });

describe('A5 leaving the loop waits for the tools’ cleanup, up to abortGraceMs', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function cleanupTool(cleanup: Promise<void>, log: string[]) {
    return defineTool({
      name: 'slow_cleanup',
      input: v.object({}),
      async *execute(_i, { signal }) {
        try {
          yield 'started';
          await new Promise((_r, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
        } finally {
          log.push('cleanup began');
          await cleanup;
          log.push('cleanup done');
        }
      },
    });
  }

  for (const how of ['break', 'return', 'throw'] as const) {
    it(`${how}: completes only after the tool's finally block has finished`, async () => {
      const log: string[] = [];
      const cleanup = gate();
      const run = runTools(one('slow_cleanup'), { tools: [cleanupTool(cleanup.promise, log)], abortGraceMs: 1000 });
      const exit = (async () => {
        if (how === 'break') {
          for await (const e of run) if (e.type === 'tool_execution_update') break;
        } else {
          await run.next();
          await run.next();
          if (how === 'return') await run.return(undefined as never);
          else await run.throw(new Error('consumer failed')).catch(() => {});
        }
        log.push('consumer moved on');
      })();
      await vi.advanceTimersByTimeAsync(500);
      expect(log).toEqual(['cleanup began']);
      cleanup.open();
      await exit;
      expect(log).toEqual(['cleanup began', 'cleanup done', 'consumer moved on']);
    });
  }

  it('a stuck finally holds the consumer for abortGraceMs and not longer', async () => {
    const log: string[] = [];
    const never = new Promise<void>(() => {});
    const run = runTools(one('slow_cleanup'), { tools: [cleanupTool(never, log)], abortGraceMs: 300 });
    let movedOnAt: number | undefined;
    const t0 = Date.now();
    void (async () => {
      for await (const e of run) if (e.type === 'tool_execution_update') break;
      movedOnAt = Date.now() - t0;
    })();
    await vi.advanceTimersByTimeAsync(299);
    expect(movedOnAt).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(movedOnAt).toBe(300);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('an async tool that settles when aborted is waited for too', async () => {
    const log: string[] = [];
    const cleanup = gate();
    const asyncTool = defineTool({
      name: 'async_tool',
      input: v.object({}),
      execute: async (_i, { signal }) => {
        try {
          await new Promise((_r, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
        } finally {
          await cleanup.promise;
          log.push('cleanup done');
        }
      },
    });
    const run = runTools(one('async_tool'), { tools: [asyncTool], abortGraceMs: 1000 });
    const exit = (async () => {
      await run.next();
      await settle();
      await run.return(undefined as never);
      log.push('consumer moved on');
    })();
    await vi.advanceTimersByTimeAsync(100);
    expect(log).toEqual([]);
    cleanup.open();
    await exit;
    expect(log).toEqual(['cleanup done', 'consumer moved on']);
  });
});
