/**
 * serveMcp over Streamable HTTP: a call that was NOT cancelled, whose POST broke after the
 * priming event (protocol 2025-11-25), is resumed with `Last-Event-ID`; the resumed stream
 * ends once it has carried the call's response, and the session can then expire
 * (docs/adr/0020-mcp-server-bounds.md). The SDK
 * alone replays a stored response and then holds the GET open for ever (nothing answers that
 * request again), which keeps the session busy for as long as the client reads.
 *
 * Real loopback server; raw `fetch` clients and the SDK's own `Client` with
 * `StreamableHTTPClientTransport`. Each step waits for an event (a gate, a body's end, a count
 * the server keeps); the idle expiry runs on an injected clock; timeouts are hang guards only.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { gatedTool, rawSession, responseIds, servedWith, until } from './raw-http.ts';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const served = servedWith(cleanups);




/** POSTs call `id` and breaks its connection after the priming event; returns the priming event's id. */
async function callThenBreak(url: URL, headers: Record<string, string>, id: number): Promise<string> {
  const abort = new AbortController();
  const post = await fetch(url, { method: 'POST', headers, signal: abort.signal, body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'slow', arguments: {} } }) });
  const reader = post.body!.getReader();
  let body = '';
  while (!/^id: (\S+)\n/m.test(body)) body += new TextDecoder().decode((await reader.read()).value);
  abort.abort();
  return /^id: (\S+)\n/m.exec(body)![1]!;
}

const resume = (url: URL, sessionId: string, lastEventId: string) =>
  fetch(url, { method: 'GET', headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25', 'last-event-id': lastEventId } });

describe('serveMcp: a resumed stream ends after its response', () => {
  // Fails without the fix: the SDK replays the stored response, then holds the GET open, so
  // `resumed.text()` never resolves (hang guard: the test's timeout); the session, busy with
  // that GET, would not expire either.
  it('resumed after the call ended: the replayed response, then the end; from its id, 204; the session then expires on the idle clock', { timeout: 20_000 }, async () => {
    let now = 0;
    const { slow, counts, release } = gatedTool();
    const server = await served([slow], { http: { sessionIdleMs: 60_000, clock: () => now } });
    const { url, sessionId, headers } = await rawSession(server);
    const primingId = await callThenBreak(url, headers, 2);
    await until(() => counts.started === 1 && server.stats().pendingRequests === 0);
    release();
    await until(() => counts.finished === 1 && server.stats().runningCalls === 0);
    // The SDK writes the response a few promise steps after the call ended.
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    const resumed = await resume(url, sessionId, primingId);
    expect(resumed.status).toBe(200);
    const replay = await resumed.text(); // ends: read to its end
    expect(responseIds(replay)).toEqual([2]);
    const lastId = [...replay.matchAll(/^id: (\S+)$/gm)].at(-1)![1]!;
    const again = await resume(url, sessionId, lastId);
    expect(again.status).toBe(204);
    expect(server.stats().pendingRequests).toBe(0);
    now += 60_000;
    await rawSession(server); // a new client: the table sweeps
    expect(server.stats().expiredSessions).toBe(1);
    expect(server.sessions).toBe(1);
  });

  // Passes without the fix too (the SDK ends a stream once its pending request is answered);
  // kept so that it stays so. Fails if the live response did not end the resumed GET (hang guard).
  it('resumed before the call ended: the response comes live on the resumed stream, which then ends', { timeout: 20_000 }, async () => {
    let now = 0;
    const { slow, counts, release } = gatedTool();
    // A long grace period: the call, aborted when its POST broke, is not abandoned meanwhile.
    const server = await served([slow], { abortGraceMs: 60_000, http: { sessionIdleMs: 60_000, clock: () => now } });
    const { url, sessionId, headers } = await rawSession(server);
    const primingId = await callThenBreak(url, headers, 3);
    await until(() => counts.started === 1 && server.stats().pendingRequests === 0);
    const resumed = await resume(url, sessionId, primingId); // its headers: the SDK holds the stream
    expect(resumed.status).toBe(200);
    expect(server.stats().runningCalls).toBe(1);
    const body = resumed.text();
    release();
    expect(responseIds(await body)).toEqual([3]);
    await until(() => server.stats().runningCalls === 0);
    now += 60_000;
    await rawSession(server);
    expect(server.stats().expiredSessions).toBe(1);
  });

  // Fails without the fix: the POST was answered and ended, so the SDK has forgotten the
  // request; it replays the stored response and then holds the GET open (hang guard).
  it('a call answered on its POST, resumed from the priming event (a client that lost the answer in flight): the replayed response, then the end; from its id, 204', { timeout: 20_000 }, async () => {
    const { slow, release } = gatedTool();
    release();
    const server = await served([slow]);
    const { url, sessionId, headers } = await rawSession(server);
    const post = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'slow', arguments: {} } }) });
    const body = await post.text();
    expect(responseIds(body)).toEqual([4]);
    const primingId = /^id: (\S+)\n/m.exec(body)![1]!;
    const resumed = await resume(url, sessionId, primingId);
    expect(resumed.status).toBe(200);
    const replay = await resumed.text(); // ends: read to its end
    expect(responseIds(replay)).toEqual([4]);
    const lastId = [...replay.matchAll(/^id: (\S+)$/gm)].at(-1)![1]!;
    expect((await resume(url, sessionId, lastId)).status).toBe(204);
  });

  // Fails without the fix: the SDK client's automatic resume gets the result, then its GET
  // never ends (`ended` stays false: hang guard).
  it('the SDK client, whose POST broke after the priming event, resumes by itself, gets the result, and its resumed GET ends', { timeout: 20_000 }, async () => {
    const { slow, counts, release } = gatedTool();
    const server = await served([slow], { http: { resumability: { retryMs: 1 } } });
    const seen = { resumes: [] as number[], ended: 0 };
    const cutting: typeof fetch = async (input, init) => {
      const method = init?.method ?? 'GET';
      const headers = new Headers(init?.headers);
      if (method === 'GET' && !headers.has('last-event-id')) return new Response(null, { status: 405 });
      if (method === 'POST' && typeof init?.body === 'string' && init.body.includes('"tools/call"')) {
        const abort = new AbortController();
        const response = await fetch(input, { ...init, signal: abort.signal });
        const reader = response.body!.getReader();
        let text = '';
        while (!/^id: /m.test(text)) text += new TextDecoder().decode((await reader.read()).value);
        abort.abort(); // the connection drops after the priming event
        await until(() => server.stats().pendingRequests === 0);
        release(); // the call ends (or is abandoned) before the client resumes
        return new Response(text.slice(0, text.indexOf('\n\n') + 2), { status: response.status, headers: response.headers });
      }
      const response = await fetch(input, init);
      if (method !== 'GET' || response.body === null) return response;
      seen.resumes.push(response.status);
      const [mine, theirs] = response.body.tee();
      void new Response(mine).text().then(() => void seen.ended++, () => undefined);
      return new Response(theirs, { status: response.status, headers: response.headers });
    };
    const client = new Client({ name: 'spec', version: '0' });
    await client.connect(new StreamableHTTPClientTransport(server.url!, { fetch: cutting }));
    cleanups.push(() => client.close());
    const result = await client.callTool({ name: 'slow', arguments: {} });
    expect(result.content).toBeDefined();
    expect(counts.started).toBe(1);
    expect(seen.resumes).toEqual([200]);
    await until(() => seen.ended === 1);
    expect(server.stats().pendingRequests).toBe(0);
  });
});
