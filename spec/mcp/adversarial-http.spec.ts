/**
 * `serveMcp` over Streamable HTTP on 127.0.0.1 against a hostile client (the
 * breaker's pass). The clients are raw `node:http` requests (one socket per request), so a
 * spec can reuse ids, send odd `_meta`, or never read a response. Each spec reproduces a
 * defect found by attacking the server; each waits for events (a gate the tool opens, a
 * socket closing), never for time.
 */
import * as v from 'valibot';
import { afterEach, describe, expect, it } from 'vitest';
import { defineTool } from '../../lib/index.ts';
import { serveMcp } from '../../lib/mcp/index.ts';
import { call, gate, messages, post, servedWith, session, text, until } from './raw-http.ts';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const served = servedWith(cleanups);

/** A tool that runs until its signal aborts; counts starts and ends. */
function holdTool() {
  const counts = { started: 0, ended: 0 };
  const firstStarted = gate();
  const hold = defineTool({
    name: 'hold',
    input: v.object({}),
    async execute(_input, { signal }) {
      counts.started++;
      firstStarted.open();
      try {
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        return 'stopped';
      } finally {
        counts.ended++;
      }
    },
  });
  return { hold, counts, firstStarted };
}

describe('serveMcp over HTTP: a request id already in use in the session', () => {
  // Fails before the fix: the second POST with id 1 reached the SDK, which mapped id 1 to the
  // second POST's stream. The second call ran too (started 2), the first POST's connection
  // closing no longer aborted the first call (ended stayed 0, runningCalls undercounted it),
  // and the first call's answer would have gone to the wrong stream: its POST never ended.
  it('a POST reusing the id of an unanswered request, or a batch with one id twice, gets 400 with a JSON-RPC error; the first call still ends when its client leaves', async () => {
    const { hold, counts, firstStarted } = holdTool();
    const echo = defineTool({ name: 'echo', input: v.object({}), execute: () => 'ok' });
    const server = await served([hold, echo]);
    const url = server.url!;
    const id = await session(url);
    const first = post(url, call(1, 'hold'), id);
    await firstStarted.promise;

    const again = await post(url, call(1, 'echo'), id).response;
    expect(again.statusCode).toBe(400);
    expect(JSON.parse(await text(again))).toEqual({
      jsonrpc: '2.0',
      error: { code: -32600, message: 'request id 1 is already in use by a request of this session that has not been answered; send each request with an id not in use' },
      id: null,
    });
    const batch = await post(url, [call('x', 'echo'), call('x', 'echo')], id).response;
    expect(batch.statusCode).toBe(400);
    expect(await text(batch)).toContain('request id \\"x\\" is already in use');
    expect(counts.started).toBe(1);

    // The client of the first call leaves: that call is aborted.
    first.req.destroy();
    await until(() => counts.ended === 1); // the first call ended
    await until(() => server.stats().runningCalls === 0); // no call running

    // An id is free again once answered: a client that reuses ids one call after another still works.
    for (let i = 0; i < 2; i++) {
      const res = await post(url, call(2, 'echo'), id).response;
      expect(messages(await text(res))).toEqual([{ jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'ok' }], isError: false } }]);
    }
  });
});

describe('serveMcp over HTTP: progress with a huge progressToken to a client that does not read', () => {
  // Fails before the fix: the pacer sized a progress notification by its message alone (128
  // bytes + the message), not its token, so before the response's head was written it let
  // 64 KiB / 128 B ≈ 500 notifications through: every one of the 200 went out (0 dropped),
  // 200 × 256 KiB = 50 MiB queued in the SDK's stream for a client that reads nothing (with a
  // 2 MiB token and 2,000 yields the server grew by 1.1 GB). Each notification carries its
  // token, so its size is counted now.
  it('a 256 KiB progressToken and 200 yields: the notifications are coalesced and counted, what reaches the client stays near the ceiling, the result arrives', async () => {
    const yields = 200;
    const flood = defineTool({
      name: 'flood',
      input: v.object({}),
      async *execute() {
        for (let i = 1; i <= yields; i++) yield i;
        return 'flooded';
      },
    });
    const ceiling = 1024 * 1024;
    const server = await served([flood], { maxQueuedBytes: ceiling });
    const url = server.url!;
    const id = await session(url);
    const token = 't'.repeat(256 * 1024);
    const res = await post(url, call(1, 'flood', {}, { progressToken: token }), id).response;
    // Nothing is read until the call has ended.
    res.pause();
    await until(() => server.stats().runningCalls === 0); // the call ended
    const dropped = server.stats().droppedNotifications;
    const body = await text(res);
    const received = messages(body);
    expect(received.at(-1)).toEqual({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'flooded' }], isError: false } });
    const progress = received.slice(0, -1);
    expect(progress.length + dropped).toBe(yields);
    expect(dropped).toBeGreaterThan(yields / 2);
    // The ceiling, plus the one message that crossed it and the one held per call.
    expect(body.length).toBeLessThan(ceiling + 4 * token.length);
  });
});

describe('serveMcp over HTTP: calls a client starts and never waits for', () => {
  // Fails before the fix: nothing bounded the calls of one session; every POST started one
  // more (the third started: counts.started 3, status 200), each holding a few kB for as long
  // as the client kept its connection open (20,000 over stdio held 110 MB).
  it('past maxCallsPerSession a POST gets 429 with a JSON-RPC error naming the limit; once a call ends there is room again', async () => {
    const { hold, counts } = holdTool();
    const server = await served([hold], { maxCallsPerSession: 2 });
    const url = server.url!;
    const id = await session(url);
    const first = post(url, call(1, 'hold'), id);
    post(url, call(2, 'hold'), id);
    await until(() => counts.started === 2); // two calls running
    const third = await post(url, call(3, 'hold'), id).response;
    expect(third.statusCode).toBe(429);
    expect(JSON.parse(await text(third))).toEqual({
      jsonrpc: '2.0',
      error: { code: -32000, message: 'too many calls at once in this MCP session: 2 are waiting for their answer (maxCallsPerSession); wait for one to end, or cancel one, then call again' },
      id: null,
    });
    expect(counts.started).toBe(2);
    first.req.destroy();
    await until(() => counts.ended === 1); // the first call ended
    post(url, call(4, 'hold'), id);
    await until(() => counts.started === 3); // a new call started
  });

  it('maxCallsPerSession must be a positive integer', async () => {
    await expect(serveMcp([], { maxCallsPerSession: 0, http: { port: 0 } })).rejects.toThrow(new TypeError('serveMcp: maxCallsPerSession must be a positive integer, received 0'));
  });
});

describe('serveMcp over HTTP: a request target URL cannot read', () => {
  // Failed before the fix: `//` made the 404's text parse the target again
  // with URL, which threw: the client got 500 "internal error: Invalid URL".
  it('`//`, `///` and `/%zz` get 404 naming the endpoint, and the next request is served', async () => {
    const echo = defineTool({ name: 'echo', input: v.object({}), execute: () => 'ok' });
    const server = await served([echo]);
    const { request } = await import('node:http');
    const statusOf = (path: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port: Number(server.url!.port), path, method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
          let body = '';
          res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk)).on('end', () => resolve({ status: res.statusCode!, body }));
        });
        req.on('error', reject);
        req.end('{}');
      });
    for (const path of ['//', '///', '/%zz']) {
      const { status, body } = await statusOf(path);
      expect(status, path).toBe(404);
      expect(body, path).toContain('/mcp');
    }
    expect((await session(server.url!)).length).toBeGreaterThan(0);
  });
});
