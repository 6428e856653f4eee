/**
 * The inspector's HTTP server: 127.0.0.1 only, a random token as the first path segment,
 * and nothing served to another origin.
 *
 * - listens on 127.0.0.1 (never another interface), on a free port unless told one;
 * - `Host` must be `127.0.0.1:<port>` or `localhost:<port>` (a DNS-rebinding page has its
 *   own name there): else 403;
 * - `Origin`, when sent, must be the server's own; `Sec-Fetch-Site: cross-site` is refused: 403;
 * - the path must start with `/<token>/` (32 random bytes, hex; compared in constant time):
 *   else 404; only GET and HEAD;
 * - every answer carries a Content-Security-Policy of `default-src 'none'` with the page's
 *   script, style and `/events` from `'self'` only, no inline code, no framing, and
 *   `Referrer-Policy: no-referrer`.
 *
 * `GET /<token>/events` is a Server-Sent Events stream: the whole timeline first, then what
 * changed, at most every {@link PUSH_INTERVAL_MS} and only when the socket has drained — so a
 * page that does not read makes the server wait, not buffer.
 *
 * @module
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { PAGE_HTML, PAGE_SCRIPT, PAGE_STYLE } from './page.ts';
import type { Timeline } from './timeline.ts';

/** Shortest time between two pushes of changes to one page, in ms. */
const PUSH_INTERVAL_MS = 200;

const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const COMMON_HEADERS = {
  'Content-Security-Policy': CSP,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'X-Frame-Options': 'DENY',
};

/** A running inspector server. */
export interface InspectorServer {
  /** The page's address, token included: `http://127.0.0.1:<port>/<token>/`. */
  url: string;
  /** Stops listening and ends every open page stream. */
  close(): Promise<void>;
}

/** Starts the server for `timeline`. */
export async function serveTimeline(timeline: Timeline, options: { port?: number } = {}): Promise<InspectorServer> {
  const token = randomBytes(32).toString('hex');
  const tokenBytes = Buffer.from(token);
  const sockets = new Set<Socket>();
  const streams = new Set<() => void>();
  let port = 0;

  const refuse = (response: ServerResponse, status: number, text: string): void => {
    response.writeHead(status, { ...COMMON_HEADERS, 'Content-Type': 'text/plain; charset=utf-8' }).end(`${text}\n`);
  };

  const handle = (request: IncomingMessage, response: ServerResponse): void => {
    const host = request.headers.host;
    if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`) return refuse(response, 403, 'forbidden: wrong Host');
    const origin = request.headers.origin;
    if (origin !== undefined && origin !== `http://127.0.0.1:${port}` && origin !== `http://localhost:${port}`) return refuse(response, 403, 'forbidden: another origin');
    if (request.headers['sec-fetch-site'] === 'cross-site') return refuse(response, 403, 'forbidden: cross-site');
    const path = (request.url ?? '').split('?')[0] ?? '';
    const segment = Buffer.from(path.slice(1, 1 + token.length));
    if (segment.length !== tokenBytes.length || !timingSafeEqual(segment, tokenBytes) || path[1 + token.length] !== '/') return refuse(response, 404, 'not found');
    if (request.method !== 'GET' && request.method !== 'HEAD') return refuse(response, 405, 'method not allowed');
    const rest = path.slice(2 + token.length);
    const asset = rest === '' ? ['text/html; charset=utf-8', PAGE_HTML] : rest === 'app.js' ? ['text/javascript; charset=utf-8', PAGE_SCRIPT] : rest === 'app.css' ? ['text/css; charset=utf-8', PAGE_STYLE] : undefined;
    if (asset !== undefined) {
      response.writeHead(200, { ...COMMON_HEADERS, 'Content-Type': asset[0]! });
      response.end(request.method === 'HEAD' ? undefined : asset[1]);
      return;
    }
    if (rest === 'events') return stream(response);
    if (rest === 'favicon.ico') return void response.writeHead(204, COMMON_HEADERS).end();
    refuse(response, 404, 'not found');
  };

  const stream = (response: ServerResponse): void => {
    response.writeHead(200, { ...COMMON_HEADERS, 'Content-Type': 'text/event-stream; charset=utf-8', Connection: 'keep-alive' });
    let sent = -1;
    let timer: NodeJS.Timeout | undefined;
    let waiting = false;
    const push = (): void => {
      timer = undefined;
      if (response.destroyed || waiting || timeline.version === sent) return;
      const first = sent === -1;
      const delta = timeline.delta(Math.max(sent, 0), Date.now());
      sent = delta.version;
      const ok = response.write(`event: ${first ? 'snapshot' : 'delta'}\ndata: ${JSON.stringify(delta)}\n\n`);
      if (!ok) {
        waiting = true;
        response.once('drain', () => {
          waiting = false;
          schedule();
        });
      }
    };
    const schedule = (): void => {
      timer ??= setTimeout(push, PUSH_INTERVAL_MS);
    };
    const unsubscribe = timeline.onChange(schedule);
    const stop = (): void => {
      unsubscribe();
      if (timer !== undefined) clearTimeout(timer);
      streams.delete(stop);
      if (!response.writableEnded) response.end();
    };
    streams.add(stop);
    response.on('close', stop);
    push();
  };

  const server = createServer(handle);
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}/${token}/`,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        for (const stop of [...streams]) stop();
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      })),
  };
}
