/**
 * The reference of the `mcp-stdio` / `mcp-http` bench scenarios: a plain SDK `McpServer`
 * serving the same `echo` tool as `tools.ts` (input checked by a zod schema, as the SDK's
 * documentation shows), over stdio, or over Streamable HTTP with `--http` on 127.0.0.1: a
 * `node:http` server with one `StreamableHTTPServerTransport` per session, routed by the
 * `Mcp-Session-Id` header, as in the SDK's examples (without express). Over HTTP it prints
 * `listening at <url>` on stdout.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

function newServer(): McpServer {
  const server = new McpServer({ name: 'plain', version: '0.0.0' });
  server.registerTool('echo', { description: 'Returns its text.', inputSchema: { text: z.string() } }, ({ text }) => ({ content: [{ type: 'text', text }] }));
  return server;
}

if (!process.argv.includes('--http')) {
  await newServer().connect(new StdioServerTransport());
} else {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http = createServer((req, res) => {
    const id = req.headers['mcp-session-id'];
    const known = typeof id === 'string' ? sessions.get(id) : undefined;
    if (known !== undefined) return void known.handleRequest(req, res);
    if (typeof id === 'string') return void res.writeHead(404).end();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => void sessions.set(sid, transport),
    });
    transport.onclose = () => void (transport.sessionId !== undefined && sessions.delete(transport.sessionId));
    void newServer().connect(transport).then(() => transport.handleRequest(req, res));
  });
  http.listen(0, '127.0.0.1', () => {
    const { port } = http.address() as AddressInfo;
    process.stdout.write(`listening at http://127.0.0.1:${port}/mcp\n`);
  });
  process.once('SIGTERM', () => http.close());
}
