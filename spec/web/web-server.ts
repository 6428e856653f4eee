/**
 * A real loopback HTTP server (node:http) that answers with a Web `Response`, as a route
 * handler of Next.js, Hono or a Worker does: the handler gets a `Request` whose `signal`
 * aborts when the client goes away, and the response body is pumped to the socket; a client
 * that closes the connection cancels the body (what `new Response(stream)` does in Deno,
 * Bun and edge runtimes).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface WebServer {
  url: string;
  close(): Promise<void>;
}

export async function serveWeb(handler: (request: Request) => Response | Promise<Response>): Promise<WebServer> {
  const server: Server = createServer((req, res) => {
    void (async () => {
      const controller = new AbortController();
      res.on('close', () => controller.abort());
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : Buffer.concat(chunks);
      const init: RequestInit = { method: req.method ?? 'GET', headers: req.headers as Record<string, string>, signal: controller.signal };
      if (body !== undefined) init.body = body;
      const request = new Request(`http://127.0.0.1${req.url ?? '/'}`, init);
      const response = await handler(request);
      res.writeHead(response.status, Object.fromEntries(response.headers));
      if (response.body === null) return void res.end();
      const reader = response.body.getReader();
      res.on('close', () => void reader.cancel().catch(() => {}));
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (!res.write(value)) await new Promise((resolve) => res.once('drain', resolve).once('close', resolve));
        if (res.destroyed) break;
      }
      res.end();
    })().catch((error: unknown) => {
      res.destroy(error as Error);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
