/**
 * A Streamable HTTP client for `mcpTools` that never leaves a call without a result when the
 * server dies.
 *
 * Why it exists: the SDK's `StreamableHTTPClientTransport` (1.x) receives a call's response
 * on the SSE stream of that call's POST. When the server process dies mid-call, that stream
 * breaks; the transport reports `SSE stream disconnected` to `onerror` and, unless the server
 * sent resumable event ids, does nothing else: the call's promise stays pending until the
 * SDK's request timeout (60 s by default). {@link connectMcpHttp} closes the client on that
 * error instead, which rejects every pending request at once (`Connection closed`), so each
 * call ends as one error result.
 *
 * It also gives each HTTP request a signal of its own. The SDK's transport passes one
 * signal, living as long as the transport, to every `fetch`; Node's fetch (undici) adds an
 * `abort` listener to it per request and removes it only when the request is garbage
 * collected. With 50 calls in flight that signal held 1,750 listeners after 2,000 calls (2
 * after a forced GC) and printed MaxListenersExceededWarning. {@link
 * scopedFetch} listens to the transport's signal once and aborts the requests still running
 * when it aborts (the core's `CancelScope`, one child scope per request); each request's
 * listener goes with its own signal.
 *
 * @module
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CancelScope } from '../../core/streams/abort.ts';

/** Options of {@link connectMcpHttp}. */
export interface ConnectMcpHttpOptions {
  /** The `clientInfo` sent in `initialize`. @default { name: 'toolrun', version: '0.0.0' } */
  clientInfo?: { name: string; version: string };
  /** Extra HTTP headers for every request. @default none */
  headers?: Record<string, string>;
  /**
   * A bearer token for a server with authorization (`serveMcp` with `http.auth`, `toolrun
   * serve-mcp --http`): sent as `Authorization: Bearer <token>` on every request. A server
   * that refuses it makes `connectMcpHttp` reject with the SDK's error, which carries the
   * server's reason (`the bearer token is not valid`). For OAuth with token refresh, pass
   * the SDK's `authProvider` instead.
   * @default none
   */
  token?: string;
  /** The SDK's OAuth client provider (`OAuthClientProvider`), for servers whose tokens come from an authorization server; see the SDK's `auth()` flow. @default none */
  authProvider?: OAuthClientProvider;
  /** Called with every transport error before the client reacts to it. @default none */
  onerror?: (error: Error) => void;
}

/**
 * Connects an MCP client (the SDK's `Client`) to a Streamable HTTP endpoint. When a
 * response stream breaks (the server died or the connection dropped), the client is closed:
 * every pending call rejects at once, so `mcpTools` turns each into exactly one error result
 * (contract O1) instead of waiting for the SDK's timeout. Connect again (a new client) to go
 * on; a server that restarted has forgotten the session anyway.
 *
 * @param url - the endpoint, e.g. `served.url` of `serveMcp`.
 * @returns the connected client; close it when done.
 * @throws TypeError for a malformed `token`; what `Client.connect` throws: the server is
 *   unreachable, not an MCP server, or refused the token (HTTP 401 / 403, with its reason).
 *
 * @example
 * ```ts
 * const client = await connectMcpHttp(new URL('http://127.0.0.1:3000/mcp'), { token: process.env.TOOLRUN_MCP_TOKEN });
 * try {
 *   const tools = await mcpTools(client);
 *   for await (const event of runTools(calls, { tools })) { … }
 * } finally {
 *   await client.close();
 * }
 * ```
 */
export async function connectMcpHttp(url: URL, options: ConnectMcpHttpOptions = {}): Promise<Client> {
  if (options.token !== undefined && (typeof options.token !== 'string' || !/^[A-Za-z0-9\-._~+/]+=*$/.test(options.token))) {
    throw new TypeError('connectMcpHttp: options.token must be a non-empty bearer token (letters, digits, -._~+/ and trailing =)');
  }
  const headers = { ...options.headers, ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }) };
  const transport = new StreamableHTTPClientTransport(url, {
    fetch: scopedFetch(),
    ...(Object.keys(headers).length === 0 ? {} : { requestInit: { headers } }),
    ...(options.authProvider === undefined ? {} : { authProvider: options.authProvider }),
  });
  const client = new Client(options.clientInfo ?? { name: 'toolrun', version: '0.0.0' });
  client.onerror = (error) => {
    options.onerror?.(error);
    // The SDK's wording for a broken response stream (client/streamableHttp.js, 1.x).
    if (error.message.startsWith('SSE stream disconnected')) void client.close().catch(() => undefined);
  };
  await client.connect(transport);
  return client;
}

/**
 * @internal A `fetch` for the SDK's transport that gives each request its own signal: a
 * {@link CancelScope} that is a child of one scope per transport signal, which listens to
 * that signal (the transport closed) and fans its abort out to the requests still running,
 * with its reason. The one listener on that long-lived signal is added once per signal, not
 * once per request (contract A6's rule, applied to the transport).
 *
 * Invariant: a request's scope is on its transport scope's list from the request's start
 * until its response body is read to its end (or failed); it leaves at once for a body the
 * SDK does not read (202 Accepted). Exported for its spec only.
 */
export function scopedFetch(): (url: string | URL, init?: RequestInit) => Promise<Response> {
  let transport: { signal: AbortSignal; scope: CancelScope } | undefined;
  return async (url, init) => {
    const shared = init?.signal;
    if (shared === undefined || shared === null || shared.aborted) return await fetch(url, init);
    if (transport?.signal !== shared) {
      // Never closed: it lives as long as the transport's signal (an aborted one is replaced
      // by the next signal, and then collected with its requests).
      const scope = new CancelScope();
      scope.listen(shared);
      transport = { signal: shared, scope };
    }
    const request = new CancelScope();
    request.enter(transport.scope);
    try {
      const response = await fetch(url, { ...init, signal: request.signal });
      if (response.body === null || response.status === 202) {
        request.close();
        return response;
      }
      const body = response.body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({ flush: () => request.close() }));
      return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
    } catch (error) {
      request.close();
      throw error;
    }
  };
}
