/**
 * serveMcp over Streamable HTTP: a call the client cancels (`notifications/cancelled`) leaves
 * no connection open (docs/adr/0020-mcp-server-bounds.md). The SDK sends no response for a cancelled request, so the server ends that
 * request's stream itself once the call has ended, still without a response; a resume
 * (`GET` + `Last-Event-ID`) of such a stream replays what is kept and ends (204 when nothing
 * is left); a call that was not cancelled still resumes and gets its result.
 *
 * Real loopback server, the SDK's own `Client` and `StreamableHTTPClientTransport` (with a
 * recording `fetch`), raw `fetch` clients of protocol 2025-11-25. Nothing waits for or
 * measures time: each step waits for an event (a gate, a stream's end, a count the server
 * keeps); the idle expiry runs on an injected clock; test timeouts are hang guards only.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import * as v from 'valibot';
import { afterEach, describe, expect, it } from 'vitest';
import { defineTool } from '../../lib/index.ts';
import { gatedTool, rawSession, responseIds, servedWith, until } from './raw-http.ts';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const served = servedWith(cleanups);

/** A tool that reports its starts, waits for its signal, and reports the abort and its finally. */
function holdTool() {
  const counts = { started: 0, aborted: 0, finished: 0 };
  const hold = defineTool({
    name: 'hold',
    input: v.object({}),
    async *execute(_input, { signal }) {
      try {
        counts.started++;
        yield 'started';
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        counts.aborted++;
        return 'stopped';
      } finally {
        counts.finished++;
      }
    },
  });
  return { hold, counts };
}


/**
 * A `fetch` for the SDK's client that records what crosses the wire: the ids of the responses
 * in every body read to its end, and the status of every resume (`GET` with `Last-Event-ID`).
 * It opens no standalone GET stream (answers 405 itself, which the SDK takes as "not
 * offered"), so the only requests of the session are its calls and their resumes.
 */
function recordingFetch() {
  const seen = { responseIds: [] as unknown[], resumes: [] as number[], endedBodies: 0 };
  const recording: typeof fetch = async (input, init) => {
    const headers = new Headers(init?.headers);
    if (init?.method === 'GET' && !headers.has('last-event-id')) return new Response(null, { status: 405 });
    const response = await fetch(input, init);
    if (init?.method === 'GET') seen.resumes.push(response.status);
    if (response.body === null) return response;
    const [mine, theirs] = response.body.tee();
    void new Response(mine).text().then(
      (body) => {
        seen.responseIds.push(...responseIds(body));
        seen.endedBodies++;
      },
      () => undefined,
    );
    return new Response(theirs, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
  return { recording, seen };
}

describe('serveMcp: a cancelled call leaves no stream open', () => {
  // (a) Fails without the fix: the SDK writes no response for a cancelled request and the
  // server never ended its POST, so pendingRequests stays at 5 (hang guard: the test's
  // timeout), and the SDK client never resumes. Fails if a response for a cancelled id were
  // written (responseIds) or a resume stayed open (its body never ends).
  // (b) Fails without the fix: the five POSTs keep the session busy, so it does not expire.
  it('an SDK client cancels 5 running calls: each tool sees its abort, their POSTs end without a response, and the session then expires on the idle clock', { timeout: 30_000 }, async () => {
    let now = 0;
    const { hold, counts } = holdTool();
    // retryMs 1: the SDK client's resume after a stream ends comes at once (no wait in the spec).
    const server = await served([hold], { http: { sessionIdleMs: 60_000, clock: () => now, resumability: { retryMs: 1 } } });
    const { recording, seen } = recordingFetch();
    const client = new Client({ name: 'spec', version: '0' });
    const transport = new StreamableHTTPClientTransport(server.url!, { fetch: recording });
    await client.connect(transport);
    cleanups.push(() => client.close());
    const aborts = Array.from({ length: 5 }, () => new AbortController());
    const calls = aborts.map((abort) => client.callTool({ name: 'hold', arguments: {} }, undefined, { signal: abort.signal }).then(
      () => 'answered',
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    ));
    await until(() => counts.started === 5);
    expect(server.stats().pendingRequests).toBe(5);
    for (const abort of aborts) abort.abort(new Error('the user pressed stop'));
    expect(await Promise.all(calls)).toEqual(Array(5).fill('MCP error -32001: Error: the user pressed stop'));
    await until(() => counts.finished === 5);
    expect(counts.aborted).toBe(5);
    // The server ends each POST once its call has ended; the SDK client, which got a priming
    // event, resumes each stream once, and the resume ends at once (204: stop reconnecting).
    await until(() => server.stats().pendingRequests === 0);
    await until(() => seen.resumes.length === 5 && seen.endedBodies >= 6);
    expect(seen.resumes).toEqual([204, 204, 204, 204, 204]);
    expect(server.stats().runningCalls).toBe(0);
    // No response for any call: only the initialize response (id 0) crossed the wire.
    expect(seen.responseIds).toEqual([0]);
    // (b) Nothing of the session is open any more: it expires on the idle clock.
    now += 60_000;
    const other = new Client({ name: 'spec-2', version: '0' });
    await other.connect(new StreamableHTTPClientTransport(server.url!, { fetch: recordingFetch().recording })); // a new client: the table sweeps
    cleanups.push(() => other.close());
    expect(server.stats().expiredSessions).toBe(1);
    expect(server.sessions).toBe(1);
  });

  // (c) Fails without the fix: the POST of the cancelled call never ends (hang guard); with
  // the POST fix alone, the resume goes to the SDK, which replays and then holds the GET open
  // for a response that never comes (its body never ends: hang guard).
  it('a raw client of protocol 2025-11-25 resumes a cancelled call’s stream with Last-Event-ID: the replayed progress, then the end; from the last event, 204', { timeout: 30_000 }, async () => {
    const { hold, counts } = holdTool();
    const server = await served([hold]);
    const { url, sessionId, headers } = await rawSession(server);
    const post = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'hold', arguments: {}, _meta: { progressToken: 't' } } }) });
    const reader = post.body!.getReader();
    let body = '';
    while (!/^id: (\S+)\n/m.test(body)) body += new TextDecoder().decode((await reader.read()).value);
    const primingId = /^id: (\S+)\n/m.exec(body)![1]!;
    await until(() => counts.started === 1);
    (await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7, reason: 'stop' } }) })).body?.cancel();
    // The POST's stream ends once the call has; what it carried after the priming event: at most the progress, never a response.
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) body += new TextDecoder().decode(chunk.value);
    expect(counts.aborted).toBe(1);
    expect(responseIds(body)).toEqual([]);
    const get = (lastEventId: string) => fetch(url, { method: 'GET', headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25', 'last-event-id': lastEventId } });
    const resumed = await get(primingId);
    expect(resumed.status).toBe(200);
    const replay = await resumed.text(); // ends: the body is read to its end
    expect(replay).toMatch(/^event: message\nid: \S+\ndata: \{"method":"notifications\/progress","params":\{"progressToken":"t".*\n\n$/s);
    expect(responseIds(replay)).toEqual([]);
    const lastId = [...replay.matchAll(/^id: (\S+)$/gm)].at(-1)![1]!;
    const again = await get(lastId);
    expect(again.status).toBe(204);
    expect(await again.text()).toBe('');
    expect(server.stats().pendingRequests).toBe(0);
  });

  // (d) Fails if the end of cancelled streams reached a call that was not cancelled (its
  // resume would end without its result), or if the POST fix broke resumption.
  it('in the same session, a call that was not cancelled and lost its stream still resumes and gets its result', { timeout: 30_000 }, async () => {
    const { hold, counts } = holdTool();
    const { slow, release } = gatedTool();
    const server = await served([hold, slow]);
    const { url, sessionId, headers } = await rawSession(server);
    const callOf = (id: number, name: string) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } });
    // A cancelled call, ended by the server.
    const cancelled = await fetch(url, { method: 'POST', headers, body: callOf(1, 'hold') });
    await until(() => counts.started === 1);
    (await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }) })).body?.cancel();
    expect(responseIds(await cancelled.text())).toEqual([]);
    // A call that is not cancelled: its connection breaks, the result comes after that.
    const abort = new AbortController();
    const post = await fetch(url, { method: 'POST', headers, body: callOf(2, 'slow'), signal: abort.signal });
    const reader = post.body!.getReader();
    let body = '';
    while (!/^id: (\S+)\n/m.test(body)) body += new TextDecoder().decode((await reader.read()).value);
    const primingId = /^id: (\S+)\n/m.exec(body)![1]!;
    abort.abort();
    release();
    await until(() => server.stats().runningCalls === 0);
    const resumed = await fetch(url, { method: 'GET', headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25', 'last-event-id': primingId } });
    expect(resumed.status).toBe(200);
    const again = resumed.body!.getReader();
    let replay = '';
    while (!replay.includes('"id":2')) replay += new TextDecoder().decode((await again.read()).value);
    await again.cancel();
    expect(responseIds(replay)).toEqual([2]);
    expect(replay).toContain('"text":"done late"');
  });

  // Fails if a batch's stream ended when its cancelled request ended (the other request's
  // response would never be written on it), or never ended after the last answer (hang guard).
  it('a batch POST with a cancelled call and another: the stream ends after the other’s response, with no response for the cancelled one', { timeout: 30_000 }, async () => {
    const { hold, counts } = holdTool();
    const { slow, release } = gatedTool();
    const server = await served([hold, slow]);
    const { url, headers } = await rawSession(server);
    const callOf = (id: number, name: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } });
    const post = await fetch(url, { method: 'POST', headers, body: JSON.stringify([callOf(1, 'hold'), callOf(2, 'slow')]) });
    const body = post.text();
    await until(() => counts.started === 1 && server.stats().runningCalls === 2);
    (await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }) })).body?.cancel();
    await until(() => counts.finished === 1 && server.stats().runningCalls === 1);
    // The cancelled call has ended; the stream waits for the other request.
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(server.stats().pendingRequests).toBe(2);
    release();
    const text = await body;
    expect(responseIds(text)).toEqual([2]);
    expect(text).toContain('"text":"done late"');
    await until(() => server.stats().pendingRequests === 0);
  });
});

