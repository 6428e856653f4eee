/**
 * The inspector's page in a real Chromium (I2, I3): lanes, colours, the head-of-line gap, a
 * live run, hostile text, 10,000 calls. The page is served by the real server; the browser
 * talks only to it (127.0.0.1).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineTool, runTools } from '../../lib/index.ts';
import { inspectRun, readEventLog, Timeline } from '../../lib/inspect/index.ts';
import { serveTimeline } from '../../lib/inspect/server.ts';
import { openBrowser } from './browser.ts';

const dir = mkdtempSync(join(tmpdir(), 'toolrun-inspect-page-'));
let browser: Awaited<ReturnType<typeof openBrowser>>;
beforeAll(async () => {
  browser = await openBrowser();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  rmSync(dir, { recursive: true, force: true });
});

const HOSTILE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">';

/** A log of four calls with known times: #1 ends long before #0 and is held; #2 errors; #3's progress is hostile. */
function recordedLog(): string {
  const t0 = 1_764_000_000_000;
  const line = (t: number, event: object) => JSON.stringify({ t: t0 + t, batch: 1, event });
  const call = (index: number, name: string) => ({ toolCallId: `call_${index}`, toolName: name, index });
  const lines = [
    JSON.stringify({ format: 'toolrun-events', version: 1 }),
    line(0, { type: 'batch_start', label: 'four calls' }),
    line(1, { type: 'tool_execution_start', ...call(0, 'slow'), args: { ms: 1000 } }),
    line(2, { type: 'tool_execution_start', ...call(1, 'fast'), args: {} }),
    line(3, { type: 'tool_execution_start', ...call(2, 'broken'), args: {} }),
    line(4, { type: 'tool_execution_start', ...call(3, HOSTILE), args: HOSTILE }),
    line(50, { type: 'tool_execution_update', ...call(3, HOSTILE), progress: HOSTILE }),
    line(100, { type: 'tool_execution_end', ...call(1, 'fast'), outcome: 'ok', isError: false, result: { content: [{ type: 'text', text: 'fast' }] } }),
    line(200, { type: 'tool_execution_end', ...call(2, 'broken'), outcome: 'error', isError: true, result: { content: [{ type: 'text', text: HOSTILE }] } }),
    line(300, { type: 'tool_execution_end', ...call(3, HOSTILE), outcome: 'ok', isError: false, result: { content: [{ type: 'text', text: HOSTILE }] } }),
    line(1001, { type: 'tool_execution_end', ...call(0, 'slow'), outcome: 'ok', isError: false, result: { content: [{ type: 'text', text: 'slow' }] } }),
    ...[0, 1, 2, 3].map((i) => line(1001, { type: 'tool_result', ...call(i, i === 3 ? HOSTILE : ['slow', 'fast', 'broken'][i]!) })),
    line(1002, { type: 'batch_end', aborted: false, paused: 0 }),
  ];
  const file = join(dir, 'four.jsonl');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

describe('I2 the timeline page, in Chromium', () => {
  it('I2 one lane per call in call order, coloured by outcome, the release gap drawn; hostile text stays inert text', async () => {
    const { timeline } = await readEventLog(recordedLog());
    const server = await serveTimeline(timeline);
    const { page, errors } = browser;
    try {
      await page.goto(server.url);
      await page.waitForSelector('#summary[data-calls="4"]');
      const lanes = await page.$$eval('.lane', (els) => els.map((e) => [e.getAttribute('data-index'), e.querySelector('.label')!.textContent]));
      expect(lanes).toEqual([['0', '#0 slow'], ['1', '#1 fast'], ['2', '#2 broken'], ['3', `#3 ${HOSTILE}`]]);
      const colour = (index: number) => page.$eval(`.lane[data-index="${index}"] .seg[data-part="run"]`, (e) => (globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string } }).getComputedStyle(e).backgroundColor);
      expect(await colour(0)).toBe('rgb(46, 158, 91)');
      expect(await colour(2)).toBe('rgb(214, 69, 69)');
      // The gap: #1 ended at 100 ms and was released at 1001 ms, behind #0; #0 has none.
      const gap = await page.$eval('.lane[data-index="1"] .seg[data-part="hol"]', (e) => e.getBoundingClientRect().width);
      const track = await page.$eval('.lane[data-index="1"] .track', (e) => e.getBoundingClientRect().width);
      expect(gap / track).toBeGreaterThan(0.85);
      expect(await page.$$('.lane[data-index="0"] .seg[data-part="hol"]')).toHaveLength(0);
      const facts = await page.$$eval('#facts div', (els) => Object.fromEntries(els.map((e) => [e.getAttribute('data-fact'), e.querySelector('dd')!.textContent])));
      expect(facts).toMatchObject({ wall: '1.00 s', calls: '4', concurrency: '4', slowest: '#0 slow 1.00 s' });
      expect(facts.hol).toBe('2.40 s over 3 calls');
      // Hostile text: drawn as text, never run, no element made of it.
      await page.hover('.lane[data-index="3"] .tick');
      expect(await page.$eval('#tip', (e) => e.textContent)).toContain(`progress at +46 ms: ${HOSTILE}`);
      expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();
      expect(await page.$$eval('script', (els) => els.map((e) => e.getAttribute('src')))).toEqual(['app.js']);
      expect(await page.$$('img')).toHaveLength(0);
      expect(errors).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it('I2 a live run: a lane shows running, then ends, without reloading', async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const wait = defineTool({ name: 'wait', input: { type: 'object' }, async *execute() { yield 'waiting for the gate'; await gate; return 'through'; } });
    const quick = defineTool({ name: 'quick', input: { type: 'object' }, execute: () => 'quick' });
    const inspection = await inspectRun(runTools([{ id: 'w', name: 'wait', arguments: {} }, { id: 'q', name: 'quick', arguments: {} }], { tools: [wait, quick] }));
    const { page, errors } = browser;
    try {
      const consumed = (async () => {
        for await (const event of inspection.run) void event;
      })();
      await page.goto(inspection.url);
      await page.waitForSelector('.lane[data-index="0"] .seg.run.live');
      await page.waitForSelector('.lane[data-index="1"][data-outcome="ok"] .seg[data-part="run"]');
      expect(await page.$eval('#mode', (e) => e.textContent)).toBe('live');
      open();
      await consumed;
      await page.waitForSelector('.lane[data-index="0"][data-outcome="ok"]');
      await page.waitForSelector('.lane[data-index="1"] .seg[data-part="hol"]');
      expect(errors).toEqual([]);
    } finally {
      open();
      await inspection.close();
    }
  });
});

describe('I3 10,000 calls', () => {
  it('I3 a batch of 10,000 calls renders (marked rendered, all 10,000 counted), keeps a window of lanes in the DOM, and scrolls to the last', async () => {
    const timeline = new Timeline({ title: '10,000 calls', live: false });
    const t0 = 1_764_000_000_000;
    timeline.beginBatch(1, 'big', t0);
    for (let i = 0; i < 10_000; i++) {
      const e = { toolCallId: `c${i}`, toolName: `tool_${i % 7}`, index: i };
      timeline.event(1, t0 + i, { type: 'tool_execution_start', ...e, args: { i } });
      timeline.event(1, t0 + i + 5, { type: 'tool_execution_update', ...e, progress: `step ${i}` });
      timeline.event(1, t0 + i + 10 + (i % 50), { type: 'tool_execution_end', ...e, outcome: i % 97 === 0 ? 'error' : 'ok', isError: i % 97 === 0, result: { content: [] }, startedAt: 0, endedAt: 0 });
    }
    for (let i = 0; i < 10_000; i++) timeline.event(1, t0 + 10_100, { type: 'tool_result', toolCallId: `c${i}`, toolName: `tool_${i % 7}`, index: i, message: {} as never });
    timeline.endBatch(1, t0 + 10_101, {});
    const server = await serveTimeline(timeline);
    const { page, errors } = browser;
    try {
      await page.goto(server.url);
      // The page marks itself rendered (an event, not a time); the wait's timeout only guards a
      // hang. How long it takes is measured, not asserted: about 1.1 s on a quiet 2-core machine.
      await page.waitForSelector('body[data-rendered="10000"]', { timeout: 120_000 });
      expect(await page.$eval('#facts [data-fact="calls"] dd', (e) => e.textContent)).toBe('10000');
      expect((await page.$$('.lane')).length).toBeLessThan(200);
      await page.$eval('#lanes', (e) => (e.scrollTop = e.scrollHeight));
      await page.waitForSelector('.lane[data-index="9999"]');
      expect(errors).toEqual([]);
    } finally {
      await server.close();
    }
  }, 60_000);
});
