/**
 * A7 over MCP: `serveMcp` serves a tool that yields in a tight loop; the SDK's own `Client`
 * over Streamable HTTP (a real loopback server in this process, so the client's timers and
 * the server's share one event loop) calls it with a progress token. The served call still
 * ends at its timeout, the client gets the timeout result, and a timer of the client's
 * process fires while the tool spins. The tool gives up after `GIVE_UP_YIELDS` yields (a count,
 * not a time, so the machine's load cannot end it early), so a regression fails instead of hanging.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import * as v from 'valibot';
import { afterEach, describe, expect, it } from 'vitest';
import { defineTool } from '../../lib/index.ts';
import { servedWith } from './raw-http.ts';

const GIVE_UP_YIELDS = 10_000_000;

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
const served = servedWith(cleanups);

describe('A7 serveMcp: a served tool that yields without awaiting does not stop the clock', () => {
  it('A7: the SDK client over HTTP gets the timeout result, and its own timer fires while the tool spins', async () => {
    let yields = 0;
    let yieldsWhenTimerFired = -1;
    const spin = defineTool({
      name: 'spin',
      input: v.object({}),
      timeoutMs: 300,
      async *execute() {
        // The server shares this process: a starved loop runs no timer and reads no socket, so
        // only the tool itself can notice and end (a regression then fails on the result).
        for (;;) {
          // Armed once the tool spins (the request crossed the socket first, taking any time).
          if (yields === 0) setTimeout(() => (yieldsWhenTimerFired = yields), 50);
          yield `step ${++yields}`;
          if (yields > GIVE_UP_YIELDS) return 'gave up';
        }
      },
    });
    const server = await served([spin], { abortGraceMs: 50 });
    const client = new Client({ name: 'spec', version: '0' });
    await client.connect(new StreamableHTTPClientTransport(server.url!));
    cleanups.push(() => client.close());

    // With a progress token, so the server sends progress for every yield (the pacer coalesces
    // what the response cannot take yet; how many arrive is not the point here).
    const result = await client.callTool({ name: 'spin', arguments: {} }, undefined, { onprogress: () => {}, timeout: 60_000 });
    const { content, isError } = result as { content: { type: string; text?: string }[]; isError?: boolean };
    expect(isError).toBe(true);
    expect(content.map((c) => c.text ?? '').join('')).toContain('Tool "spin" timed out after 300 ms');
    expect(yieldsWhenTimerFired).toBeGreaterThan(0);
    expect(yields).toBeGreaterThan(yieldsWhenTimerFired);
  });
});
