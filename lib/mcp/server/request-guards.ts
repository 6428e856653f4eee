/**
 * The checks a request to the served endpoint passes before the SDK sees it, each a function:
 * its path, its `Host` (on a loopback address) and `Origin` (DNS rebinding), its body's size
 * and JSON, its request ids (one not yet answered cannot be reused; the calls of a session
 * are capped), and the error bodies the refusals are answered with. Bearer-token
 * authorization is lib/mcp/server/auth.ts.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** The SDK's limit on a request body (`DEFAULT_MAX_REQUEST_BODY_SIZE`), read before the SDK sees the request. */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** JSON-RPC's "Invalid Request" code. */
export const INVALID_REQUEST = -32600;

/** The error text for a request whose id a request of the same session still waits on. */
export function idInUse(id: string | number): string {
  return `request id ${JSON.stringify(id)} is already in use by a request of this session that has not been answered; send each request with an id not in use`;
}

/** The first of `ids` that is in `open` or comes twice in `ids`; `undefined` when none. */
export function idTaken(ids: readonly (string | number)[], open: ReadonlyMap<string | number, unknown>): string | number | undefined {
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i]!;
    if (open.has(id) || ids.indexOf(id) < i) return id;
  }
  return undefined;
}

/** Default of {@link ServeMcpOptions.maxCallsPerSession}. */
const DEFAULT_MAX_CALLS_PER_SESSION = 1_000;

export function checkMaxCalls(max: number | undefined): number {
  if (max === undefined) return DEFAULT_MAX_CALLS_PER_SESSION;
  if (!(Number.isInteger(max) && max > 0)) throw new TypeError(`serveMcp: maxCallsPerSession must be a positive integer, received ${String(max)}`);
  return max;
}

/** The error text for a call over {@link ServeMcpOptions.maxCallsPerSession}. */
export function tooManyCalls(max: number): string {
  return `too many calls at once in this MCP session: ${max} are waiting for their answer (maxCallsPerSession); wait for one to end, or cancel one, then call again`;
}
/** Reads a request body of at most `max` bytes: its bytes and JSON (`undefined` when it is not JSON), or 'too large' (the rest is not read). */
export async function readBody(req: IncomingMessage, max: number): Promise<{ raw: Buffer; json: unknown } | 'too large'> {
  if (Number(req.headers['content-length']) > max) return 'too large';
  const parts: Buffer[] = [];
  let bytes = 0;
  // Events rather than `for await`: an async iterator costs a few promises per chunk.
  const ended = await new Promise<boolean>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      bytes += chunk.length;
      if (bytes <= max) return void parts.push(chunk);
      req.off('data', onData);
      req.pause();
      resolve(false);
    };
    req.on('data', onData);
    req.once('end', () => resolve(true));
    req.once('error', reject);
  });
  if (!ended) return 'too large';
  const raw = parts.length === 1 ? parts[0]! : Buffer.concat(parts, bytes);
  try {
    return { raw, json: JSON.parse(raw.toString('utf8')) as unknown };
  } catch {
    return { raw, json: undefined };
  }
}

/** The ids of the JSON-RPC requests in a POST body (one message or a batch). */
export function requestIds(body: unknown): (string | number)[] {
  const ids: (string | number)[] = [];
  for (const message of Array.isArray(body) ? body : [body]) {
    if (typeof message !== 'object' || message === null) continue;
    const { id, method } = message as { id?: unknown; method?: unknown };
    if (typeof method === 'string' && (typeof id === 'string' || typeof id === 'number')) ids.push(id);
  }
  return ids;
}

/** The request ids of the `notifications/cancelled` in a POST body (one message or a batch). */
export function cancelledIds(body: unknown): (string | number)[] {
  const ids: (string | number)[] = [];
  if (body === undefined) return ids;
  for (const message of Array.isArray(body) ? body : [body]) {
    const { method, params } = (typeof message === 'object' && message !== null ? message : {}) as { method?: unknown; params?: { requestId?: unknown } };
    const id = method === 'notifications/cancelled' && typeof params === 'object' && params !== null ? params.requestId : undefined;
    if (typeof id === 'string' || typeof id === 'number') ids.push(id);
  }
  return ids;
}

/** A JSON-RPC error body without an id, as the SDK's transport answers transport-level errors. */
export function reply(res: ServerResponse, status: number, message: string, code = -32000): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

/** @internal True for a loopback host name or address (`localhost`, `127.x.x.x`, `::1`, bracketed or not). */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** True when the `Host` header names a loopback host. `seen` caches the verdicts (at most 64). */
export function hostIsLoopback(req: IncomingMessage, seen: Map<string, boolean>): boolean {
  const hostHeader = req.headers.host;
  return hostHeader !== undefined && judged(seen, `h ${hostHeader}`, () => isLoopback(hostName(`http://${hostHeader}`)));
}

function judged(seen: Map<string, boolean>, key: string, judge: () => boolean): boolean {
  let verdict = seen.get(key);
  if (verdict === undefined) {
    // Header values come from clients: the cache must not grow with them.
    if (seen.size >= 64) seen.clear();
    seen.set(key, (verdict = judge()));
  }
  return verdict;
}

/** The path of a request target (`/mcp?x` → `/mcp`), without building a URL (a few µs per request). */
export function pathOf(target: string | undefined): string {
  if (target === undefined) return '/';
  const query = target.indexOf('?');
  const path = query === -1 ? target : target.slice(0, query);
  // Anything unusual (absolute form, escapes, dot segments) is left to URL's rules.
  if (path.startsWith('/') && !path.includes('%') && !path.includes('.')) return path;
  try {
    return new URL(target, 'http://localhost').pathname;
  } catch {
    return path; // a target URL cannot read (`//`) names no route: its answer is 404
  }
}

function hostName(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return '';
  }
}
