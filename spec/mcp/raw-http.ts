/**
 * A raw Streamable HTTP client for the MCP server specs: `node:http` requests on 127.0.0.1,
 * one socket per request (no keep-alive), so a spec can close one request's connection,
 * reuse an id, or never read a response — what the SDK's `Client` will not do. Shared by
 * the HTTP specs of this folder; nothing here waits for time.
 */
import { Agent, request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import * as v from 'valibot';
import { defineTool, type Tool } from '../../lib/index.ts';
import { serveMcp, type ServedMcp, type ServeMcpOptions } from '../../lib/mcp/index.ts';

/** A promise a spec opens by hand. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** One socket per request: closing a request's connection closes nothing else. */
export const agent = new Agent({ keepAlive: false });

export interface Raw {
  req: ClientRequest;
  response: Promise<IncomingMessage>;
}

/** A raw POST of one JSON-RPC message (or a batch) to the endpoint, protocol 2025-06-18. */
export function post(url: URL, message: unknown, sessionId?: string): Raw {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };
  if (sessionId !== undefined) headers['mcp-session-id'] = sessionId;
  const req = httpRequest({ host: '127.0.0.1', port: url.port, path: url.pathname, method: 'POST', headers, agent });
  const response = new Promise<IncomingMessage>((resolve, reject) => {
    req.once('response', resolve);
    req.once('error', reject);
  });
  req.end(JSON.stringify(message));
  return { req, response };
}

/** A response's whole body, as text. */
export async function text(res: IncomingMessage): Promise<string> {
  let body = '';
  res.setEncoding('utf8');
  for await (const chunk of res) body += chunk as string;
  return body;
}

/** The JSON-RPC messages of an SSE body (empty `data:` lines, as in a priming event, skipped) or of a JSON one. */
export function messages(body: string): Record<string, unknown>[] {
  if (body.startsWith('{')) return [JSON.parse(body) as Record<string, unknown>];
  return body
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line.length > 6)
    .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
}

export const initialize = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'spec', version: '0' } } };

/** Opens a session (initialize, then `notifications/initialized`); its `mcp-session-id`. */
export async function session(url: URL): Promise<string> {
  const res = await post(url, initialize).response;
  const id = res.headers['mcp-session-id'];
  await text(res);
  if (typeof id !== 'string') throw new Error(`no session id (status ${res.statusCode})`);
  (await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, id).response).resume();
  return id;
}

/** A `tools/call` request; `meta` becomes its `_meta` (e.g. `{ progressToken: 1 }`). */
export function call(id: unknown, name: string, args: Record<string, unknown> = {}, meta?: Record<string, unknown>) {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, ...(meta === undefined ? {} : { _meta: meta }) } };
}

/**
 * Resolves once `done()` holds, checked after each turn of the event loop. No count of
 * turns bounds it (that would be a time limit in disguise, shorter on a fast machine): the
 * test's timeout is the hang guard.
 */
export async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setImmediate(resolve));
}

/** A `served(tools, options)` for one spec file: `serveMcp` on 127.0.0.1 (a free port, no log), closed by the file's `cleanups`. */
export function servedWith(cleanups: (() => Promise<unknown>)[]): (tools: readonly Tool[], options?: ServeMcpOptions) => Promise<ServedMcp> {
  return async (tools, options = {}) => {
    const server = await serveMcp(tools, { log: () => {}, ...options, http: { port: 0, ...options.http } });
    cleanups.push(() => server.close());
    return server;
  };
}

/** A raw session of protocol 2025-11-25 (priming events): initialize, then notifications/initialized. */
export async function rawSession(server: ServedMcp): Promise<{ url: URL; sessionId: string; headers: Record<string, string> }> {
  const url = server.url!;
  const base = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const init = await fetch(url, { method: 'POST', headers: base, body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } }) });
  const sessionId = init.headers.get('mcp-session-id')!;
  await init.text();
  const headers = { ...base, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' };
  await (await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })).text();
  return { url, sessionId, headers };
}

/** The ids of the JSON-RPC responses in an SSE (or JSON) body. */
export function responseIds(body: string): unknown[] {
  const lines = body.startsWith('{') ? [body] : body.split('\n').filter((line) => line.startsWith('data: ') && line.length > 6).map((line) => line.slice(6));
  return lines.map((line) => JSON.parse(line) as { id?: unknown; method?: unknown }).filter((m) => m.method === undefined && m.id !== undefined).map((m) => m.id);
}

/** A tool that waits for `release` (it ignores its signal), counting its ends. */
export function gatedTool() {
  let open!: () => void;
  const released = new Promise<void>((resolve) => (open = resolve));
  const counts = { started: 0, finished: 0 };
  const slow = defineTool({
    name: 'slow',
    input: v.object({}),
    async execute() {
      counts.started++;
      await released;
      counts.finished++;
      return 'done late';
    },
  });
  return { slow, counts, release: open };
}
