/**
 * Defect: a run closed before its first `next()`, or never iterated, kept its listener on the caller's signal (A6).
 */
import { getEventListeners } from 'node:events';
import * as v from 'valibot';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { defineTool, runTools, type ToolCall } from '../../lib/index.ts';
import { collect, gate, settle, text } from '../helpers.ts';

const one = (name: string): ToolCall[] => [{ id: 'a', name, arguments: {} }];
const quick = defineTool({ name: 'quick', input: v.object({}), execute: () => 'ok' });

describe('A6 listener left on the caller’s signal by a run closed before its first next()', () => {
  it('a run never iterated puts no listener on the signal', () => {
    const controller = new AbortController();
    runTools(one('quick'), { tools: [quick], signal: controller.signal });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('a run closed with return() before its first next() leaves no listener and starts no tool', async () => {
    const controller = new AbortController();
    let ran = 0;
    const counted = defineTool({ name: 'counted', input: v.object({}), execute: () => String(++ran) });
    const run = runTools(one('counted'), { tools: [counted], signal: controller.signal });
    const closed = await run.return(undefined as never);
    expect(closed.done).toBe(true);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    expect((await run.next()).done).toBe(true);
    expect(ran).toBe(0);
  });

  it('a run closed with throw() before its first next() rethrows, leaves no listener', async () => {
    const controller = new AbortController();
    const run = runTools(one('quick'), { tools: [quick], signal: controller.signal });
    await expect(run.throw(new Error('stop'))).rejects.toThrow('stop');
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('the listener is attached on the first next() and removed at the end', async () => {
    const controller = new AbortController();
    const g = gate<string>();
    const waiting = defineTool({ name: 'waiting', input: v.object({}), execute: () => g.promise });
    const run = runTools(one('waiting'), { tools: [waiting], signal: controller.signal });
    const first = await run.next();
    expect(first.value).toMatchObject({ type: 'tool_execution_start' });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    g.open('done');
    await collect(run);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});
