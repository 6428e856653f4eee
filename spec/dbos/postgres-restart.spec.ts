/**
 * `toolrun/dbos` across a PostgreSQL restart, against a real server: the database goes down
 * (a fast shutdown: every connection cut) while a durable batch runs, and a call ends —
 * its result committed — while it is down; once the server is back, the batch goes on in the
 * same process and finishes, each tool run once. Waits on the run's events, not on a clock.
 */
import { DBOS } from '@dbos-inc/dbos-sdk';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import type { ToolEvent } from '../../lib/core/run/events.ts';
import { defineTool } from '../../lib/index.ts';
import { registerDurableBatch } from '../../lib/dbos/index.ts';
import { gate, launchDbosForFile } from './harness.ts';

const postgres = launchDbosForFile('toolrun_restart');
const starts: number[] = [];
const release = gate();
const holding = gate();
const work = defineTool({
  name: 'work',
  input: v.object({ n: v.number() }),
  async execute({ n }) {
    starts.push(n);
    if (n === 1) {
      holding.open();
      await release.promise;
    }
    return `work ${n} done`;
  },
});
const batch = registerDurableBatch({ name: 'restart-batch', tools: [work], interruptedCalls: 'run-again', options: { maxConcurrency: 1 } });

describe('toolrun/dbos across a PostgreSQL restart', () => {
  it('J-dbos-pg-restart: the server restarts mid-batch, a call ends while it is down; the batch resumes once it is back, every call answered, each tool run once', async () => {
    // Fails if a write refused while the server is down fails the run (a JournalError, the
    // workflow in ERROR), if the batch hangs after the server is back (the spec's time limit
    // is the hang guard), or if a call runs twice.
    const events: ToolEvent[] = [];
    let endOfOne: (() => void) | undefined;
    const oneEnded = new Promise<void>((r) => (endOfOne = r));
    const zeroShown = gate();
    const calls = [0, 1, 2].map((n) => ({ id: `toolu_${n}`, name: 'work', arguments: { n } }));
    const handle = await batch.start(calls, {
      workflowId: 'restart-1',
      onEvent(event) {
        events.push(event);
        if (event.type === 'tool_result' && event.index === 0) zeroShown.open();
        if (event.type === 'tool_execution_end' && event.index === 1) endOfOne!();
      },
    });
    await Promise.all([zeroShown.promise, holding.promise]);
    await postgres().restart(async () => {
      // Down: call 1 ends now, so its commit meets no server.
      release.open();
      await oneEnded;
    });
    const result = await handle.getResult();
    expect(result.messages.map((m) => (m.content[0] as { text: string }).text)).toEqual(['work 0 done', 'work 1 done', 'work 2 done']);
    expect(result.outcomes).toEqual(['ok', 'ok', 'ok']);
    expect(starts).toEqual([0, 1, 2]);
    expect(events.filter((e) => e.type === 'tool_result').map((e) => e.index)).toEqual([0, 1, 2]);
    expect((await DBOS.retrieveWorkflow('restart-1').getStatus())?.status).toBe('SUCCESS');
  }, 120_000);
});
