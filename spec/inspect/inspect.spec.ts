/**
 * `toolrun/inspect` without a browser: the server's refusals (I1), the timeline's bounds
 * (I3), the event log's format and its bad input (I4). The page itself is driven in
 * Chromium by page.slow.spec.ts.
 */
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defineTool, runTools, type ToolEvent } from '../../lib/index.ts';
import { CALLS_KEPT, EventLogError, readEventLog, recordEvents, Timeline, TICKS_KEPT, inspectRun } from '../../lib/inspect/index.ts';
import { serveTimeline } from '../../lib/inspect/server.ts';
import { main } from '../../lib/cli/main.ts';
import { memoryIo } from '../cli/support.ts';

const dir = mkdtempSync(join(tmpdir(), 'toolrun-inspect-spec-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A raw GET with exactly these headers (node's http client sets Host from `headers.host`). */
function get(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: u.port, path: u.pathname, method, headers: { host: u.host, ...headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        body += d;
        if (res.headers['content-type']?.startsWith('text/event-stream') === true && body.includes('\n\n')) res.destroy();
      });
      res.on('close', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('I1 the inspector serves 127.0.0.1 only, to the URL with its token, to its own origin', () => {
  it('I1 a request without the token, with a wrong token, another Host or another Origin is refused; the page has a strict CSP', async () => {
    const server = await serveTimeline(new Timeline({ title: 't', live: false }));
    try {
      const url = new URL(server.url);
      expect(url.hostname).toBe('127.0.0.1');
      expect(url.pathname).toMatch(/^\/[0-9a-f]{64}\/$/);
      const page = await get(server.url);
      expect(page.status).toBe(200);
      expect(page.body).toContain('<script src="app.js" defer></script>');
      expect(page.body).not.toMatch(/<script>|<style>|\sstyle=|\son\w+=/);
      expect(page.headers['content-security-policy']).toBe("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
      expect((await get(`${url.origin}/`)).status).toBe(404);
      expect((await get(`${url.origin}/app.js`)).status).toBe(404);
      expect((await get(`${url.origin}/events`)).status).toBe(404);
      const wrong = url.pathname.slice(1, 65).replace(/^./, (c) => (c === 'a' ? 'b' : 'a'));
      expect((await get(`${url.origin}/${wrong}/`)).status).toBe(404);
      expect((await get(`${url.origin}${url.pathname.slice(0, 64)}/`)).status).toBe(404);
      expect((await get(server.url, { host: `evil.example:${url.port}` })).status).toBe(403);
      expect((await get(server.url, { origin: 'http://evil.example' })).status).toBe(403);
      expect((await get(`${server.url}events`, { 'sec-fetch-site': 'cross-site' })).status).toBe(403);
      expect((await get(server.url, { origin: url.origin })).status).toBe(200);
      expect((await get(server.url, {}, 'POST')).status).toBe(405);
      const events = await get(`${server.url}events`);
      expect(events.body).toMatch(/^event: snapshot\ndata: \{"version":0,"live":false,"title":"t"/);
    } finally {
      await server.close();
    }
  });

  it('I1 inspectRun passes the run through unchanged and serves it; close() stops the server', async () => {
    const tool = defineTool({ name: 'echo', input: { type: 'object' }, execute: () => 'ok' });
    const inspection = await inspectRun(runTools([{ id: 'a', name: 'echo', arguments: {} }, { id: 'b', name: 'nope', arguments: {} }], { tools: [tool] }));
    const types: string[] = [];
    let step;
    while (!(step = await inspection.run.next()).done) types.push(step.value.type);
    expect(step.value.messages.map((m) => m.toolCallId)).toEqual(['a', 'b']);
    expect(types.filter((t) => t === 'tool_result')).toHaveLength(2);
    const events = await get(`${inspection.url}events`);
    const delta = JSON.parse(events.body.split('data: ')[1]!) as { calls: Array<{ id: string; outcome: string }> };
    expect(delta.calls.map((c) => [c.id, c.outcome])).toEqual([['a', 'ok'], ['b', 'rejected']]);
    await inspection.close();
    await expect(get(inspection.url)).rejects.toThrow(/ECONNREFUSED/);
  });
});

describe('I3 the timeline keeps bounded memory', () => {
  it(`I3 progress: the count of all ticks, the first and last ${TICKS_KEPT} kept, each cut; arguments and results cut`, () => {
    const timeline = new Timeline({ title: 't', live: true });
    timeline.beginBatch(1, 'b', 0);
    timeline.event(1, 1, { type: 'tool_execution_start', toolCallId: 'a', toolName: 'x', index: 0, args: { text: 'y'.repeat(10_000) } });
    for (let i = 0; i < 10_000; i++) timeline.event(1, 2 + i, { type: 'tool_execution_update', toolCallId: 'a', toolName: 'x', index: 0, progress: `${i} ${'z'.repeat(1000)}` });
    const [call] = timeline.delta(0, 0).calls;
    expect(call!.ticks.count).toBe(10_000);
    expect(call!.ticks.first.map(([, text]) => text.split(' ')[0])).toEqual(['0', '1', '2', '3', '4']);
    expect(call!.ticks.last.map(([, text]) => text.split(' ')[0])).toEqual(['9995', '9996', '9997', '9998', '9999']);
    expect(JSON.stringify(call).length).toBeLessThan(4000);
  });

  it('I3 a cut text ends "… (N chars)"; a result reads as a provider format sends its blocks', () => {
    const timeline = new Timeline({ title: 't', live: true });
    timeline.beginBatch(1, 'b', 0);
    timeline.event(1, 1, { type: 'tool_execution_start', toolCallId: 'a', toolName: 'x', index: 0, args: 'y'.repeat(1000) });
    const content = [
      { type: 'text', text: 'done' },
      { type: 'image', data: 'AAAA', mimeType: 'image/png' },
      { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' },
      { type: 'resource_link', uri: 'file:///a.txt', name: 'a.txt' },
      { type: 'weird' },
    ];
    timeline.event(1, 2, { type: 'tool_execution_end', toolCallId: 'a', toolName: 'x', index: 0, outcome: 'ok', isError: false, result: { content }, startedAt: 1, endedAt: 2 } as ToolEvent);
    timeline.event(1, 3, { type: 'tool_execution_start', toolCallId: 'b', toolName: 'x', index: 1, args: {} });
    timeline.event(1, 4, { type: 'tool_execution_end', toolCallId: 'b', toolName: 'x', index: 1, outcome: 'ok', isError: false, result: { content: [{ type: 'text', text: 'r'.repeat(500) }] }, startedAt: 3, endedAt: 4 } as ToolEvent);
    const [a, b] = timeline.delta(0, 0).calls;
    expect(a!.args).toBe(`${'y'.repeat(400)}… (1000 chars)`);
    expect(a!.result!.split('\n')).toEqual([
      'done',
      '[image]',
      '[audio: audio/wav, 3 bytes; not sent to the model]',
      '[resource link: file:///a.txt "a.txt"]',
      '[invalid content block omitted: a block of type "weird"; a content block is text, image, audio, resource_link or resource: object {"type":"weird"}]',
    ]);
    expect(b!.result).toBe(`${'r'.repeat(400)}… (500 chars)`);
  });

  it(`I3 past ${CALLS_KEPT} calls the oldest batches are dropped whole, and counted`, () => {
    const timeline = new Timeline({ title: 't', live: true });
    const per = 10_000;
    for (let b = 1; b <= 6; b++) {
      timeline.beginBatch(b, `b${b}`, b);
      for (let i = 0; i < per; i++) timeline.event(b, b, { type: 'tool_execution_start', toolCallId: `c${i}`, toolName: 'x', index: i, args: {} });
    }
    expect(timeline.callCount).toBe(CALLS_KEPT);
    const all = timeline.delta(0, 0);
    expect(all.batches.map((b) => b.batch)).toEqual([2, 3, 4, 5, 6]);
    expect(all.droppedCalls).toBe(per);
  });
});

describe('I4 the event log: versioned JSON Lines; bad input is a clear error, never a crash or hang', () => {
  it('I4 recordEvents writes a header and one line per event with its time; readEventLog reads it back', async () => {
    const file = join(dir, 'run.jsonl');
    const slow = defineTool({ name: 'slow', input: { type: 'object' }, async *execute() { yield '<script>alert(1)</script>'; await new Promise((r) => setTimeout(r, 20)); return 'slow done'; } });
    const fast = defineTool({ name: 'fast', input: { type: 'object' }, execute: () => 'fast done' });
    const run = recordEvents(runTools([{ id: 's', name: 'slow', arguments: {} }, { id: 'f', name: 'fast', arguments: {} }], { tools: [slow, fast] }), file, { label: 'two calls' });
    let step;
    while (!(step = await run.next()).done);
    const lines = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { t: number; batch: number; event: { type: string } });
    expect(lines[0]).toEqual({ format: 'toolrun-events', version: 1 });
    const of = (id: string) => lines.slice(1).filter((l) => (l.event as { toolCallId?: string }).toolCallId === id).map((l) => l.event.type);
    expect(of('s')).toEqual(['tool_execution_start', 'tool_execution_update', 'tool_execution_end', 'tool_result']);
    expect(of('f')).toEqual(['tool_execution_start', 'tool_execution_end', 'tool_result']);
    expect([lines[1]!.event.type, lines.at(-1)!.event.type, lines.length]).toEqual(['batch_start', 'batch_end', 10]);
    expect(lines.slice(1).every((l) => typeof l.t === 'number' && l.batch === 1)).toBe(true);
    const { timeline, truncated } = await readEventLog(file);
    expect(truncated).toBe(false);
    const calls = timeline.delta(0, 0).calls;
    expect(calls.map((c) => [c.name, c.outcome])).toEqual([['slow', 'ok'], ['fast', 'ok']]);
    // fast ended first, and its result waited for slow's: the head-of-line wait.
    expect(calls[1]!.end!).toBeLessThanOrEqual(calls[0]!.end!);
    expect(calls[1]!.release!).toBeGreaterThanOrEqual(calls[0]!.end!);
    expect(calls[0]!.ticks.first[0]![1]).toBe('<script>alert(1)</script>');
  });

  const write = (name: string, text: string): string => {
    const file = join(dir, name);
    writeFileSync(file, text);
    return file;
  };
  const header = '{"format":"toolrun-events","version":1}\n';
  const start = '{"t":1,"batch":1,"event":{"type":"batch_start","label":"b"}}\n';

  it('I4 a log cut off in its last line is read up to it, and says so', async () => {
    const file = write('cut.jsonl', `${header}${start}{"t":2,"batch":1,"event":{"type":"tool_execution_st`);
    const read = await readEventLog(file);
    expect(read.truncated).toBe(true);
    expect(read.timeline.batchCount).toBe(1);
  });

  it.each([
    ['empty.jsonl', '', /is empty: not an event log/],
    ['other.jsonl', '{"hello":1}\n', /:1: not a toolrun event log/],
    ['v9.jsonl', '{"format":"toolrun-events","version":9}\n', /:1: event log version 9; this toolrun reads version 1/],
    ['broken.jsonl', `${header}{oops\n${start}`, /broken\.jsonl:2: not JSON/],
    ['array.jsonl', `${header}[1,2]\n`, /:2: a log line must be an object/],
    ['time.jsonl', `${header}{"t":"soon","batch":1,"event":{"type":"x"}}\n`, /:2: "t" must be a time in epoch ms, received "soon"/],
    ['batch.jsonl', `${header}{"t":1,"batch":1e400,"event":{"type":"x"}}\n`, /:2: "batch" must be an integer/],
    ['event.jsonl', `${header}{"t":1,"batch":1,"event":"<script>"}\n`, /:2: "event" must be an object with a "type", received "<script>"/],
    ['long.jsonl', `${header}"${'x'.repeat(1_100_000)}"\n`, /:2: a line of more than 1048576 characters/],
  ])('I4 %s is refused with the line and the reason', async (name, text, message) => {
    const error = await readEventLog(write(name, text)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EventLogError);
    expect((error as Error).message).toMatch(message);
  });

  it('I4 hostile values in a well-formed log are kept as text: odd indexes, names and outcomes, prototype keys', async () => {
    const file = write(
      'hostile.jsonl',
      `${header}${start}` +
        '{"t":2,"batch":1,"event":{"type":"tool_execution_start","toolCallId":{"x":1},"toolName":"<img src=x onerror=alert(1)>","index":0,"args":"__proto__"}}\n' +
        '{"t":3,"batch":1,"event":{"type":"tool_execution_end","index":-1,"outcome":"ok"}}\n' +
        '{"t":3,"batch":1,"event":{"type":"tool_execution_end","index":0,"outcome":"\\" onmouseover=alert(1)","result":{"content":5}}}\n' +
        '{"t":4,"batch":9,"event":{"type":"tool_result","index":0}}\n' +
        '{"t":5,"batch":1,"event":{"__proto__":{"polluted":true},"type":"tool_result","index":0}}\n',
    );
    const { timeline } = await readEventLog(file);
    const [call] = timeline.delta(0, 0).calls;
    expect(call).toMatchObject({ name: '<img src=x onerror=alert(1)>', id: '[object Object]', outcome: '" onmouseover=alert(1)', result: '5', release: 5 });
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
  });

  it('I4 toolrun inspect on a bad log: one line naming the file and line, exit 2', async () => {
    const io = memoryIo();
    expect(await main(['inspect', write('bad.jsonl', `${header}{oops\n${start}`)], io)).toBe(2);
    expect(io.err()).toMatch(/^toolrun: inspect: .*bad\.jsonl:2: not JSON/);
    const missing = memoryIo();
    expect(await main(['inspect', join(dir, 'missing.jsonl')], missing)).toBe(2);
    expect(missing.err()).toMatch(/no such event log: .*missing\.jsonl/);
  });
});
