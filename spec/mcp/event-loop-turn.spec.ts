/**
 * A7 over MCP: `serveMcp` serves a tool that yields in a tight loop; the SDK's own `Client`
 * over Streamable HTTP (a real loopback server in this process, so the client's timers and
 * the server's share one event loop) calls it with a progress token. The served call still
 * ends at its timeout, the client gets the timeout result, and a timer of the client's
 * process fires while the tool spins. The tool gives up after `GIVE_UP_MS` of wall time, so
 * a regression fails instead of hanging.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import * as v from 'valibot';
import { afterEach, describe, expect, it } from 'vitest';
import { defineTool } from '../../lib/index.ts';
import { servedWith } from './raw-http.ts';

const GIVE_UP_MS = 10_000;

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
const served = servedWith(cleanups);

describe('A7 serveMcp: a served tool that yields without awaiting does not stop the clock', () => {
  it('A7: the SDK client over HTTP gets the timeout result, and its own timer fires while the tool spins', async () => {
    let yields = 0;
    const spin = defineTool({
      name: 'spin',
      input: v.object({}),
      timeoutMs: 300,
      async *execute() {
        // The server shares this process: a starved loop runs no timer and reads no socket, so
        // only the tool itself can notice and end (a regression then fails on the result).
        const started = Date.now();
        for (;;) {
          yield `step ${++yields}`;
          if (yields % 1024 === 0 && Date.now() - started > GIVE_UP_MS) return 'gave up';
        }
      },
    });
    const server = await served([spin], { abortGraceMs: 50 });
    const client = new Client({ name: 'spec', version: '0' });
    await client.connect(new StreamableHTTPClientTransport(server.url!));
    cleanups.push(() => client.close());

    let yieldsWhenTimerFired = -1;
    setTimeout(() => (yieldsWhenTimerFired = yields), 50);
    let progress = 0;
    const call = client.callTool({ name: 'spin', arguments: {} }, undefined, {
      onprogress: () => void progress++,
      timeout: 60_000,
    });
    let gaveUp: ReturnType<typeof setTimeout> | undefined;
    const started = Date.now();
    const result = await Promise.race([
      call,
      // Polled on progress: a starved loop never runs a timer, but the server keeps sending.
      new Promise<'gave up'>((resolve) => {
        const poll = (): void => {
          if (Date.now() - started > GIVE_UP_MS) resolve('gave up');
          else gaveUp = setTimeout(poll, 100);
        };
        poll();
      }),
    ]);
    clearTimeout(gaveUp);
    expect(result).not.toBe('gave up');
    const { content, isError } = result as { content: { type: string; text?: string }[]; isError?: boolean };
    expect(isError).toBe(true);
    expect(content.map((c) => c.text ?? '').join('')).toContain('Tool "spin" timed out after 300 ms');
    expect(yieldsWhenTimerFired).toBeGreaterThan(0);
    expect(yields).toBeGreaterThan(yieldsWhenTimerFired);
    expect(progress).toBeGreaterThan(0);
  });
});
