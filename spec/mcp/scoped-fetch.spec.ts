/**
 * scopedFetch (lib/mcp/client/http.ts): the `fetch` connectMcpHttp gives the SDK's transport. One
 * CancelScope per transport signal follows it; each request is a child scope. Against a real
 * loopback HTTP server that holds its responses until the spec lets them go.
 */
import { getEventListeners } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { scopedFetch } from '../../lib/mcp/client/http.ts';
import { gate } from '../helpers.ts';

const listeners = (signal: AbortSignal): number => getEventListeners(signal, 'abort').length;

/** A server that answers each request only when `release()` is called; `arrived` counts requests. */
async function holdingServer(): Promise<{ url: string; arrived(n: number): Promise<void>; release(): void; close(): Promise<void> }> {
  const held: ServerResponse[] = [];
  let waiter: { n: number; open: () => void } | undefined;
  const server = createServer((_request, response) => {
    held.push(response);
    if (waiter !== undefined && held.length >= waiter.n) waiter.open();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    arrived(n) {
      if (held.length >= n) return Promise.resolve();
      const g = gate();
      waiter = { n, open: () => g.open() };
      return g.promise;
    },
    release() {
      for (const response of held.splice(0)) if (!response.destroyed) response.end('done');
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe('scopedFetch: one scope per transport signal, one child scope per request', () => {
  // Fails if the requests stop following the transport's signal (they would wait for the
  // server forever) or get another reason; fails if each request adds its own listener.
  it('A6: the transport signal’s abort reaches every running request with its reason; one listener for all of them', async () => {
    const server = await holdingServer();
    cleanups.push(server.close);
    const transport = new AbortController();
    const fetchFor = scopedFetch();
    const requests = Array.from({ length: 5 }, () => fetchFor(server.url, { signal: transport.signal }));
    const outcomes = Promise.allSettled(requests);
    await server.arrived(5);
    expect(listeners(transport.signal)).toBe(1);
    const reason = new Error('transport closed');
    transport.abort(reason);
    const settled = await outcomes;
    expect(settled.map((o) => o.status)).toEqual(Array(5).fill('rejected'));
    for (const outcome of settled) expect((outcome as PromiseRejectedResult).reason).toBe(reason);
    expect(listeners(transport.signal)).toBe(0);
  });

  // Fails if finished requests stay linked to the transport's scope: the later abort would
  // reach the signal of a request whose body was read to its end.
  it('A6: requests read to their end leave the scope; 20 of them keep the one listener, and a later abort reaches none of them', async () => {
    const server = await holdingServer();
    cleanups.push(server.close);
    const transport = new AbortController();
    const seen: AbortSignal[] = [];
    const fetchFor = scopedFetch();
    // Observe the request signals through a wrapper around the global fetch.
    const realFetch = globalThis.fetch;
    globalThis.fetch = ((input: string | URL | Request, init?: RequestInit) => {
      if (init?.signal) seen.push(init.signal);
      return realFetch(input, init);
    }) as typeof fetch;
    cleanups.push(async () => void (globalThis.fetch = realFetch));
    for (let round = 0; round < 4; round++) {
      const requests = Array.from({ length: 5 }, () => fetchFor(server.url, { signal: transport.signal }));
      await server.arrived(5);
      server.release();
      const bodies = await Promise.all((await Promise.all(requests)).map((r) => r.text()));
      expect(bodies).toEqual(Array(5).fill('done'));
    }
    expect(seen).toHaveLength(20);
    expect(listeners(transport.signal)).toBe(1);
    transport.abort(new Error('later'));
    expect(seen.filter((s) => s.aborted)).toEqual([]);
  });
});
