import * as v from 'valibot';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { defineTool, runTools, type ToolCall } from '../../lib/index.ts';
import { allowManyListeners, emitWarning } from '../../lib/core/values/platform.ts';
import { collect, gate, settle } from '../helpers.ts';

const instant = defineTool({ name: 'instant', input: v.object({}), execute: () => 'done' });

/** Collects the process warnings emitted while `body` runs (they are emitted on a later tick). */
async function warningsDuring(body: () => Promise<void>): Promise<Error[]> {
  const warnings: Error[] = [];
  const onWarning = (w: Error): void => {
    warnings.push(w);
  };
  process.on('warning', onWarning);
  try {
    await body();
    await settle();
  } finally {
    process.off('warning', onWarning);
  }
  return warnings;
}

describe('A6 many hooks waiting on the run signal raise no MaxListenersExceededWarning', () => {
  it('lets 25 concurrent afterToolCall hooks wait on the run signal without a warning', async () => {
    const release = gate();
    let waiting = 0;
    const calls: ToolCall[] = Array.from({ length: 25 }, (_, i) => ({ id: `c${i}`, name: 'instant', arguments: {} }));
    const warnings = await warningsDuring(async () => {
      const run = collect(
        runTools(calls, {
          tools: [instant],
          maxConcurrency: Infinity,
          afterToolCall: async () => {
            waiting++;
            await release.promise;
            return undefined;
          },
        }),
      );
      // Every hook is pending at once: each one is a listener on the run's internal signal.
      while (waiting < calls.length) await settle(1);
      await settle();
      release.open();
      const { batch } = await run;
      expect(batch.messages).toHaveLength(25);
    });
    expect(waiting).toBe(25);
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
  });

  it('is what prevents the warning: a plain signal with 11 listeners raises it', async () => {
    const bare = new AbortController();
    const lifted = new AbortController();
    allowManyListeners(lifted.signal);
    const warnings = await warningsDuring(async () => {
      for (let i = 0; i < 11; i++) {
        bare.signal.addEventListener('abort', () => {});
        lifted.signal.addEventListener('abort', () => {});
      }
    });
    // One warning, for the bare signal only.
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toHaveLength(1);
  });
});

describe('emitWarning outside Node and under Node', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
  });

  it('uses process.emitWarning with the type ToolrunWarning under Node', async () => {
    const warnings = await warningsDuring(async () => emitWarning('toolrun: a listener threw'));
    expect(warnings.map((w) => [w.name, w.message])).toEqual([['ToolrunWarning', 'toolrun: a listener threw']]);
  });

  it('falls back to console.warn, and allowManyListeners does nothing, when there is no process global', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    vi.stubGlobal('process', undefined);
    emitWarning('toolrun: a listener threw');
    allowManyListeners(new AbortController().signal);
    vi.unstubAllGlobals();
    expect(warn).toHaveBeenCalledWith('ToolrunWarning: toolrun: a listener threw');
  });
});
