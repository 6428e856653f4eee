/**
 * Defect: `ToolBatch.aborted` was true when the signal aborted after every call had
 * already succeeded. It is true only when the abort changed an outcome.
 */
import { getEventListeners } from 'node:events';
import * as v from 'valibot';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { defineTool, runTools, type ToolCall } from '../../lib/index.ts';
import { collect, gate, settle, text } from '../helpers.ts';

const one = (name: string): ToolCall[] => [{ id: 'a', name, arguments: {} }];
const quick = defineTool({ name: 'quick', input: v.object({}), execute: () => 'ok' });

describe('ToolBatch.aborted true when the signal aborted after every call had succeeded', () => {
  it('is false when the abort comes after every call ended, before the consumer read the results', async () => {
    const controller = new AbortController();
    const run = runTools(
      [
        { id: 'a', name: 'quick', arguments: {} },
        { id: 'b', name: 'quick', arguments: {} },
      ],
      { tools: [quick], signal: controller.signal },
    );
    const first = await run.next();
    expect(first.value).toMatchObject({ type: 'tool_execution_start' });
    await settle();
    controller.abort();
    const { batch } = await collect(run);
    expect(batch.messages.map((m) => m.isError)).toEqual([false, false]);
    expect(batch.aborted).toBe(false);
  });

  it('is true when the abort interrupted a running call', async () => {
    const controller = new AbortController();
    const waits = defineTool({
      name: 'waits',
      input: v.object({}),
      execute: (_i, { signal }) => new Promise((_r, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
    });
    const run = runTools(one('waits'), { tools: [waits], signal: controller.signal });
    await run.next();
    await settle();
    controller.abort();
    const { batch } = await collect(run);
    expect(batch.aborted).toBe(true);
  });
});
