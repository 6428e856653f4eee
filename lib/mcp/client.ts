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
 * @module
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

/** Options of {@link connectMcpHttp}. */
export interface ConnectMcpHttpOptions {
  /** The `clientInfo` sent in `initialize`. @default { name: 'toolrun', version: '0.0.0' } */
  clientInfo?: { name: string; version: string };
  /** Extra HTTP headers for every request (e.g. `Authorization`). @default none */
  headers?: Record<string, string>;
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
 * @throws what `Client.connect` throws: the server is unreachable, or not an MCP server.
 *
 * @example
 * ```ts
 * const client = await connectMcpHttp(new URL('http://127.0.0.1:3000/mcp'));
 * try {
 *   const tools = await mcpTools(client);
 *   for await (const event of runTools(calls, { tools })) { … }
 * } finally {
 *   await client.close();
 * }
 * ```
 */
export async function connectMcpHttp(url: URL, options: ConnectMcpHttpOptions = {}): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(url, options.headers === undefined ? undefined : { requestInit: { headers: options.headers } });
  const client = new Client(options.clientInfo ?? { name: 'toolrun', version: '0.0.0' });
  client.onerror = (error) => {
    options.onerror?.(error);
    // The SDK's wording for a broken response stream (client/streamableHttp.js, 1.x).
    if (error.message.startsWith('SSE stream disconnected')) void client.close().catch(() => undefined);
  };
  await client.connect(transport);
  return client;
}
