/**
 * Contracts W1 and W5 in a real browser (headless Chromium, spec/portable/chromium.mjs): a
 * static page, bundled by esbuild with toolrun and `ai`, reads a toolrun event stream with
 * `fetch` and runs ai's chat class against a toUIMessageStream route of the same loopback
 * server; progress arrives before the result in both.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as ai from 'ai';
import { build } from 'esbuild';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { defineTool, runTools, toEventStream, toUIMessageStream } from '../../lib/index.ts';
import { CHROMIUM, launchChromium } from '../portable/chromium.mjs';
import { serveWeb } from './web-server.ts';

const count = defineTool({
  name: 'count',
  input: v.object({ to: v.number() }),
  async *execute({ to }) {
    for (let i = 1; i <= to; i++) yield { done: i };
    return `counted to ${to}`;
  },
});
interface WebResult { events: string[]; batch: unknown; chat: string[]; error?: string }
const calls = [{ id: 'c1', name: 'count', arguments: { to: 3 } }];

describe.skipIf(!existsSync(CHROMIUM))(`W1, W5 in Chromium: a page reads the event stream and ai's chat renders the UI message stream${existsSync(CHROMIUM) ? '' : ' [skipped: no /usr/bin/chromium]'}`, () => {
  it('progress before the result, in the page', async () => {
    const bundle = await build({
      entryPoints: [fileURLToPath(new URL('./page/main.ts', import.meta.url))],
      bundle: true,
      format: 'esm',
      platform: 'browser',
      target: 'es2022',
      write: false,
      logLevel: 'silent',
    });
    const script = bundle.outputFiles[0]!.text;
    const page = '<!doctype html><meta charset="utf-8"><title>toolrun on the web</title><script type="module" src="/main.js"></script>';
    const server = await serveWeb((request) => {
      const path = new URL(request.url).pathname;
      if (path === '/') return new Response(page, { headers: { 'content-type': 'text/html; charset=utf-8' } });
      if (path === '/main.js') return new Response(script, { headers: { 'content-type': 'text/javascript; charset=utf-8' } });
      if (path === '/events') return new Response(toEventStream((signal) => runTools(calls, { tools: [count], signal })), { headers: { 'content-type': 'text/event-stream' } });
      if (path === '/api/chat') return ai.createUIMessageStreamResponse({ stream: toUIMessageStream(runTools(calls, { tools: [count], signal: request.signal })) });
      return new Response('not found', { status: 404 });
    });
    const browser = await launchChromium();
    try {
      const errors: string[] = [];
      browser.page.on('pageerror', (error: Error) => errors.push(error.message));
      await browser.page.goto(`${server.url}/`, { timeout: 30_000 });
      await browser.page.waitForFunction(() => (globalThis as { webResult?: unknown }).webResult !== undefined, undefined, { timeout: 60_000 });
      const result = (await browser.page.evaluate(() => (globalThis as { webResult?: WebResult }).webResult))!;
      expect(errors).toEqual([]);
      expect(result.error).toBeUndefined();
      expect(result.events).toEqual(['tool_execution_start', 'update {"done":1}', 'update {"done":2}', 'update {"done":3}', 'tool_execution_end', 'result c1 counted to 3']);
      expect(result.batch).toMatchObject({ messages: [{ toolCallId: 'c1', isError: false }], aborted: false });
      expect(result.chat).toEqual([
        'c1 input-available',
        'c1 output-available preliminary {"done":1}',
        'c1 output-available preliminary {"done":2}',
        'c1 output-available preliminary {"done":3}',
        'c1 output-available "counted to 3"',
      ]);
    } finally {
      await browser.close();
      await server.close();
    }
  }, 120_000);
});
