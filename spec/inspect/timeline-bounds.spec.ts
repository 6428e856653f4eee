/**
 * I3 against a hostile event log (or a hostile live run): every text the timeline keeps is
 * cut, a log of nothing but `batch_start` lines keeps at most CALLS_KEPT batches, and a
 * batch begun twice does not leave its first calls counted (which would make the timeline
 * refuse every later call).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CALLS_KEPT, readEventLog, Timeline } from '../../lib/inspect/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'toolrun-timeline-bounds-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('I3 the timeline stays bounded against a hostile log', () => {
  it(`I3 a log of ${CALLS_KEPT + 100} empty batches keeps at most ${CALLS_KEPT} of them, the newest`, () => {
    const timeline = new Timeline({ title: 't', live: false });
    for (let b = 1; b <= CALLS_KEPT + 100; b++) timeline.beginBatch(b, `b${b}`, b);
    expect(timeline.batchCount).toBeLessThanOrEqual(CALLS_KEPT);
    const batches = timeline.delta(0, 0).batches;
    expect(batches.at(-1)?.batch).toBe(CALLS_KEPT + 100);
    expect(batches[0]?.batch).toBeGreaterThan(100);
  });

  it('I3 a megabyte outcome in a log line is cut like every other text of a call', async () => {
    const file = join(dir, 'outcome.jsonl');
    const end = { type: 'tool_execution_end', toolCallId: 'a', toolName: 'x', index: 0, outcome: 'o'.repeat(1_000_000), isError: false, result: { content: [] } };
    writeFileSync(file, ['{"format":"toolrun-events","version":1}', JSON.stringify({ t: 1, batch: 1, event: { type: 'batch_start', label: 'b' } }), JSON.stringify({ t: 2, batch: 1, event: end })].join('\n') + '\n');
    const { timeline } = await readEventLog(file);
    const [call] = timeline.delta(0, 0).calls;
    expect(call?.outcome?.startsWith('oooo')).toBe(true);
    expect(JSON.stringify(call).length).toBeLessThan(4000);
  });

  it('I3 a batch begun again starts over: its first calls leave the count, and later calls are still kept', () => {
    const timeline = new Timeline({ title: 't', live: false });
    for (let round = 0; round < 3; round++) {
      timeline.beginBatch(1, 'b', round);
      for (let i = 0; i < CALLS_KEPT / 2; i++) timeline.event(1, round, { type: 'tool_execution_start', toolCallId: `c${i}`, toolName: 'x', index: i, args: {} });
    }
    expect(timeline.callCount).toBe(CALLS_KEPT / 2);
    expect(timeline.delta(0, 0).droppedCalls).toBe(0);
  });
});
