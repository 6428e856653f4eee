/**
 * How a host takes over the cancellation of a `createMcpServer` server's calls from the SDK:
 * `notifications/cancelled` and a closed transport abort calls before the SDK sees them, plain
 * requests go straight to the SDK's request entry, and a guard may refuse a request first.
 *
 * @module
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { abortAllCalls, abortCall, hostCancels, serveCall } from './mcp-server.ts';

/** Sees each request (its id and method) before the SDK does; `'refused'`: the host answered it, the SDK never sees it. */
export type RequestIdGuard = (id: string | number, method: string) => 'refused' | undefined;

/** The part of an SDK transport {@link takeOverCancellation} hooks into. */
interface HookableTransport {
  onmessage?: ((message: never, extra?: never) => void) | undefined;
  onclose?: (() => void) | undefined;
}

/**
 * For a server made by `createMcpServer`: this host delivers its cancellations (see
 * `hostCancels`), so no call listens to a per-request signal of the SDK. A
 * `notifications/cancelled` aborts its call before the SDK sees it (the call's response is
 * then dropped, as the specification asks); the transport closing aborts every call. A plain
 * JSON-RPC request ({@link isPlainRequest}) goes straight to the SDK's request entry; with
 * `direct` (stdio), a `tools/call` is served by `serveCall`, past the SDK's request machinery.
 * `onmessage` is wrapped once the SDK set it (`connect`), hence the setter. Does nothing for
 * any other server.
 */
export function takeOverCancellation(server: Server, transport: HookableTransport, guard?: RequestIdGuard, direct = false): void {
  if (!hostCancels(server)) return;
  const closed = transport.onclose;
  transport.onclose = () => {
    abortAllCalls(server, new Error('the MCP connection closed'));
    closed?.();
  };
  let deliver: ((message: never, extra?: never) => void) | undefined;
  // The SDK's request entry (`Protocol._onrequest`, 1.x): what its own `onmessage` calls for a request.
  const onRequest = (server as unknown as { _onrequest?: unknown })._onrequest;
  const request = typeof onRequest === 'function' ? (onRequest as (message: never, extra?: never) => void) : undefined;
  const sniff = (message: never, extra?: never): void => {
    const m = message as { method?: unknown; id?: unknown; params?: { requestId?: unknown; reason?: unknown } };
    if (m.method === 'notifications/cancelled') {
      const id = m.params?.requestId;
      if (typeof id === 'string' || typeof id === 'number') abortCall(server, id, typeof m.params?.reason === 'string' ? m.params.reason : 'cancelled by the client', true);
    } else if (guard !== undefined && typeof m.method === 'string' && (typeof m.id === 'string' || typeof m.id === 'number') && guard(m.id, m.method) === 'refused') {
      return;
    } else if (request !== undefined && deliver !== undefined && isPlainRequest(m)) {
      // Past the SDK's sorting of messages, which tries the message as a result and as an
      // error response first (two zod parses that fail, building their issues), to the same
      // request entry;
      // over stdio, a `tools/call` past the SDK's request machinery too (serveCall).
      if (!(direct && m.method === 'tools/call' && serveCall(server, m as { id: string | number }))) request.call(server, message, extra);
      return;
    }
    deliver?.(message, extra);
  };
  // The SDK's HTTP transport forwards `onmessage` to an inner transport through an accessor:
  // that accessor gets the sniffer; a transport with a plain field reads it through ours.
  let setInner: ((handler: unknown) => void) | undefined;
  for (let proto = Object.getPrototypeOf(transport) as object | null; proto !== null && setInner === undefined; proto = Object.getPrototypeOf(proto) as object | null) {
    setInner = Object.getOwnPropertyDescriptor(proto, 'onmessage')?.set;
  }
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    get: () => (deliver === undefined ? undefined : sniff),
    set: (handler: typeof deliver) => {
      deliver = handler;
      setInner?.call(transport, handler === undefined ? undefined : sniff);
    },
  });
}

/**
 * @internal True for a message the SDK (1.x) would take as a JSON-RPC request, checked without zod: only
 * the keys `jsonrpc` ("2.0"), `id` (a string or a safe integer), `method` (a string) and
 * `params` (absent, or an object whose `_meta`, if any, is an object with at most a string or
 * integer `progressToken` and no related task). Every such message fails the SDK's strict
 * result and error response schemas (it has a `method`) and passes its request schema, so
 * the SDK would hand it to `_onrequest`. Anything else (false) takes the SDK's own way.
 */
export function isPlainRequest(m: Record<string, unknown>): boolean {
  if (m.jsonrpc !== '2.0' || typeof m.method !== 'string') return false;
  const id = m.id;
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return false;
  for (const key in m) if (key !== 'jsonrpc' && key !== 'id' && key !== 'method' && key !== 'params') return false;
  const params = m.params;
  if (params === undefined) return true;
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return false;
  const meta = (params as { _meta?: unknown })._meta;
  if (meta === undefined) return true;
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) return false;
  const { progressToken } = meta as { progressToken?: unknown };
  return (progressToken === undefined || typeof progressToken === 'string' || Number.isSafeInteger(progressToken)) && (meta as Record<string, unknown>)[RELATED_TASK_META_KEY] === undefined;
}

/** The `_meta` key of a request that belongs to a task (MCP tasks); such a request takes the SDK's own way. */
const RELATED_TASK_META_KEY = 'io.modelcontextprotocol/related-task';
