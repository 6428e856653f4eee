/**
 * serveMcp over Streamable HTTP with authorization (`http.auth`, contract Z1–Z6): real
 * servers on 127.0.0.1, reached by raw `node:http` requests (any header, any Host) and by the
 * SDK's client through `connectMcpHttp` and `mcpTools`.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import * as v from 'valibot';
import { afterEach, describe, expect, it } from 'vitest';
import { defineTool, mcpTools, runTools, type ToolCallerAuth } from '../../lib/index.ts';
import { connectMcpHttp, staticTokenVerifier, type AuthInfo, type McpHttpAuth, type ServedMcp } from '../../lib/mcp/index.ts';
import { agent, initialize, messages, servedWith, text } from './raw-http.ts';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});
const served = servedWith(cleanups);

/** What the tool saw as its caller, per call. */
const seen: (ToolCallerAuth | undefined)[] = [];
const whoami = defineTool({
  name: 'whoami',
  input: v.object({}),
  execute: (_input, { client }) => {
    seen.push(client.auth);
    return JSON.stringify({ clientId: client.auth?.clientId, scopes: client.auth?.scopes, hasToken: client.auth !== undefined && 'token' in client.auth });
  },
});

const ALICE = 'alice-token-0123456789';
const BOB = 'bob-token-0123456789ab';
/** Two principals and their scopes; any other token is unknown. */
const verifyToken: McpHttpAuth['verifyToken'] = async (token) => {
  await Promise.resolve();
  if (token === ALICE) return { token, clientId: 'alice', scopes: ['mcp:tools', 'files:read'] };
  if (token === BOB) return { token, clientId: 'bob', scopes: ['mcp:tools'] };
  return undefined;
};

async function protectedServer(auth: Partial<McpHttpAuth> = {}, extra: { allowedOrigins?: string[] } = {}): Promise<ServedMcp> {
  return await served([whoami], { http: { auth: { verifyToken, authorizationServers: ['https://auth.example.com'], ...auth }, ...extra } });
}

interface Answer {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
}

/** One raw request to the server's port, with exactly `headers` (Host included when given). */
async function send(url: URL, options: { method?: string; path?: string; headers?: Record<string, string>; body?: unknown }): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...options.headers };
  const req = httpRequest({ host: '127.0.0.1', port: url.port, path: options.path ?? url.pathname, method: options.method ?? 'POST', headers, agent });
  const response = new Promise<IncomingMessage>((resolve, reject) => {
    req.once('response', resolve);
    req.once('error', reject);
  });
  req.end(options.body === undefined ? undefined : JSON.stringify(options.body));
  const res = await response;
  return { status: res.statusCode!, headers: res.headers, body: await text(res) };
}

const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

/** Opens a session with `token`: its id. */
async function open(url: URL, token: string): Promise<string> {
  const answer = await send(url, { headers: bearer(token), body: initialize });
  expect(answer.status).toBe(200);
  const id = answer.headers['mcp-session-id'];
  if (typeof id !== 'string') throw new Error('no session id');
  expect((await send(url, { headers: { ...bearer(token), 'mcp-session-id': id }, body: { jsonrpc: '2.0', method: 'notifications/initialized' } })).status).toBe(202);
  return id;
}

const whoamiCall = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'whoami', arguments: {} } };

describe('Z1 a request without a valid bearer token is refused with WWW-Authenticate and the metadata URL', () => {
  it('Z1 no token: 401, WWW-Authenticate: Bearer … resource_metadata="…/.well-known/oauth-protected-resource/mcp", and no tool runs', async () => {
    const server = await protectedServer();
    const url = server.url!;
    const answer = await send(url, { body: initialize });
    expect(answer.status).toBe(401);
    expect(answer.headers['www-authenticate']).toBe(`Bearer realm="mcp", resource_metadata="${url.origin}/.well-known/oauth-protected-resource/mcp"`);
    expect(JSON.parse(answer.body).error.message).toMatch(/needs Authorization: Bearer <token>/);
    expect(answer.headers['mcp-session-id']).toBeUndefined();
    expect(server.sessions).toBe(0);
  });

  it('Z1 a wrong token and a verifier saying no: 401 invalid_token, the token never echoed; GET and DELETE too', async () => {
    const server = await protectedServer();
    const url = server.url!;
    for (const answer of [
      await send(url, { headers: bearer('not-a-known-token-123'), body: initialize }),
      await send(url, { method: 'GET', headers: bearer('not-a-known-token-123') }),
      await send(url, { method: 'DELETE', headers: bearer('not-a-known-token-123') }),
    ]) {
      expect(answer.status).toBe(401);
      expect(answer.headers['www-authenticate']).toMatch(/^Bearer realm="mcp", error="invalid_token", error_description="the bearer token is not valid", resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp"$/);
      expect(`${answer.body}${answer.headers['www-authenticate']}`).not.toContain('not-a-known-token-123');
    }
    expect(server.sessions).toBe(0);
  });

  it('Z1 bad input: a malformed header, another scheme, non-ASCII, a 10 kB token: 400 invalid_request; a verifier that throws: 500; the server goes on', async () => {
    let throws = false;
    const server = await protectedServer({ verifyToken: (token, req) => (throws ? Promise.reject(new Error(`boom ${token}`)) : verifyToken(token, req)) });
    const url = server.url!;
    for (const authorization of ['Bearer', 'Bearer ', 'Basic YWxpY2U6cw==', 'Bearer two tokens', 'Bearer t\u00e9st-0123456789abcdef', `Bearer ${'a'.repeat(10_000)}`, 'Bearer "quoted"']) {
      const answer = await send(url, { headers: { authorization }, body: initialize });
      expect(answer.status, authorization.slice(0, 40)).toBe(400);
      expect(answer.headers['www-authenticate']).toMatch(/error="invalid_request"/);
    }
    throws = true;
    const failed = await send(url, { headers: bearer(ALICE), body: initialize });
    expect(failed.status).toBe(500);
    expect(failed.body).toMatch(/the token verifier failed: Error/);
    expect(failed.body).not.toContain(ALICE);
    throws = false;
    expect((await send(url, { headers: bearer(ALICE), body: initialize })).status).toBe(200);
  });

  it('Z1 an expired token, and one issued for another resource: 401 invalid_token', async () => {
    const url0 = { value: '' };
    const server = await protectedServer({
      verifyToken: (token): AuthInfo | undefined =>
        token === 'expired-token-0123456789' ? { token, clientId: 'c', scopes: [], expiresAt: Math.floor(Date.now() / 1000) - 60 } : token === 'elsewhere-token-0123456789' ? { token, clientId: 'c', scopes: [], resource: new URL('https://other.example.com/mcp') } : token === 'here-token-0123456789' ? { token, clientId: 'c', scopes: [], resource: new URL(url0.value) } : undefined,
    });
    url0.value = server.url!.href;
    expect((await send(server.url!, { headers: bearer('expired-token-0123456789'), body: initialize })).headers['www-authenticate']).toMatch(/error="invalid_token", error_description="the bearer token has expired"/);
    const elsewhere = await send(server.url!, { headers: bearer('elsewhere-token-0123456789'), body: initialize });
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.headers['www-authenticate']).toMatch(/issued for another resource/);
    expect((await send(server.url!, { headers: bearer('here-token-0123456789'), body: initialize })).status).toBe(200);
  });
});

describe('Z2 the Protected Resource Metadata (RFC 9728) names the resource and its authorization servers', () => {
  it('Z2 served at /.well-known/oauth-protected-resource and its path-inserted form /…/mcp, without a token', async () => {
    const server = await protectedServer({ requiredScopes: ['mcp:tools'] });
    const url = server.url!;
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      const answer = await send(url, { method: 'GET', path });
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.body)).toEqual({ resource: url.href, authorization_servers: ['https://auth.example.com'], scopes_supported: ['mcp:tools'], bearer_methods_supported: ['header'], resource_name: 'toolrun MCP server' });
    }
    // Without authorization there is nothing to describe.
    const open = await served([whoami]);
    expect((await send(open.url!, { method: 'GET', path: '/.well-known/oauth-protected-resource/mcp' })).status).toBe(404);
  });
});

describe('Z3 a token without a required scope gets 403 insufficient_scope', () => {
  it('Z3 bob lacks files:read: 403 with error="insufficient_scope", scope="mcp:tools files:read"; alice has both', async () => {
    const server = await protectedServer({ requiredScopes: ['mcp:tools', 'files:read'] });
    const refused = await send(server.url!, { headers: bearer(BOB), body: initialize });
    expect(refused.status).toBe(403);
    expect(refused.headers['www-authenticate']).toBe(
      `Bearer realm="mcp", error="insufficient_scope", error_description="the bearer token lacks the scope files:read", scope="mcp:tools files:read", resource_metadata="${server.url!.origin}/.well-known/oauth-protected-resource/mcp"`,
    );
    expect((await send(server.url!, { headers: bearer(ALICE), body: initialize })).status).toBe(200);
  });
});

describe('Z4 a session belongs to the principal whose token opened it', () => {
  it("Z4 bob presenting alice's session id: 404 as for an unknown session, for POST, GET and DELETE; alice's session goes on", async () => {
    const server = await protectedServer();
    const url = server.url!;
    const alices = await open(url, ALICE);
    for (const method of ['POST', 'GET', 'DELETE']) {
      const answer = await send(url, { method, headers: { ...bearer(BOB), 'mcp-session-id': alices }, ...(method === 'POST' ? { body: whoamiCall } : {}) });
      expect(answer.status, method).toBe(404);
      expect(JSON.parse(answer.body).error.message).toBe('Session not found');
    }
    expect(server.sessions).toBe(1);
    // Without a token the id does not even reach the session table.
    expect((await send(url, { headers: { 'mcp-session-id': alices }, body: whoamiCall })).status).toBe(401);
    const mine = await send(url, { headers: { ...bearer(ALICE), 'mcp-session-id': alices }, body: whoamiCall });
    expect(mine.status).toBe(200);
    expect(messages(mine.body).at(-1)).toMatchObject({ id: 7, result: { isError: false } });
  });
});

describe("Z5 a tool's context carries the caller's AuthInfo, without the token", () => {
  it('Z5 through connectMcpHttp({ token }) and mcpTools: context.client.auth is alice with her scopes, and has no token', async () => {
    seen.length = 0;
    const server = await protectedServer();
    const client = await connectMcpHttp(server.url!, { token: ALICE });
    cleanups.push(() => client.close());
    const tools = await mcpTools(client);
    const results = [];
    for await (const event of runTools([{ id: 'c1', name: 'whoami', arguments: {} }], { tools })) if (event.type === 'tool_result') results.push(event.message);
    expect(results).toHaveLength(1);
    expect(results[0]!.isError).toBe(false);
    expect(JSON.parse((results[0]!.content[0] as { text: string }).text)).toEqual({ clientId: 'alice', scopes: ['mcp:tools', 'files:read'], hasToken: false });
    expect(seen).toEqual([{ clientId: 'alice', scopes: ['mcp:tools', 'files:read'], expiresAt: undefined, resource: undefined, extra: undefined }]);
    expect(Object.isFrozen(seen[0])).toBe(true);
  });

  it('Z5 the SDK client without a token or with a wrong one: connectMcpHttp rejects with the server\'s reason; served without auth, context.client.auth is undefined', async () => {
    const server = await protectedServer();
    await expect(connectMcpHttp(server.url!)).rejects.toThrow(/401|needs Authorization: Bearer/);
    await expect(connectMcpHttp(server.url!, { token: 'wrong-token-0123456789' })).rejects.toThrow(/the bearer token is not valid/);
    await expect(connectMcpHttp(server.url!, { token: 'two words' })).rejects.toThrow(TypeError);
    seen.length = 0;
    const open = await served([whoami]);
    const client = await connectMcpHttp(open.url!);
    cleanups.push(() => client.close());
    await client.callTool({ name: 'whoami', arguments: {} });
    expect(seen).toEqual([undefined]);
  });

  it('Z5 staticTokenVerifier: the right token is its clientId, any other (shorter, longer, one character off) is refused; a short secret is a TypeError', async () => {
    const verify = staticTokenVerifier('s3cret-0123456789abcdef', { clientId: 'cli', scopes: ['a'] });
    const req = {} as Parameters<typeof verify>[1];
    expect(await verify('s3cret-0123456789abcdef', req)).toEqual({ token: 's3cret-0123456789abcdef', clientId: 'cli', scopes: ['a'] });
    for (const other of ['s3cret-0123456789abcde', 's3cret-0123456789abcdefg', 's3cret-0123456789abcdeF', '']) expect(await verify(other, req)).toBeUndefined();
    expect(() => staticTokenVerifier('short')).toThrow(/at least 16 characters, received 5 characters/);
  });
});

describe('Z6 Origin is accepted only when it is the endpoint\'s own or in allowedOrigins; Host must be loopback', () => {
  it('Z6 own origin (127.0.0.1 and localhost, same port) and an allowed one pass; another site, another localhost port, "null" and a rebinding Host get 403 before the token is checked', async () => {
    const server = await protectedServer({}, { allowedOrigins: ['https://app.example.com'] });
    const url = server.url!;
    const port = Number(url.port);
    for (const origin of [`http://127.0.0.1:${port}`, `http://localhost:${port}`, 'https://app.example.com']) {
      expect((await send(url, { headers: { ...bearer(ALICE), origin }, body: initialize })).status, origin).toBe(200);
    }
    for (const origin of ['http://evil.example', `http://localhost:${port === 65_535 ? port - 1 : port + 1}`, `http://127.0.0.1:${port === 65_535 ? port - 1 : port + 1}`, 'null', `https://127.0.0.1:${port}`]) {
      const answer = await send(url, { headers: { ...bearer(ALICE), origin }, body: initialize });
      expect(answer.status, origin).toBe(403);
      expect(JSON.parse(answer.body).error.message).toMatch(/Origin .* is not allowed/);
    }
    const rebinding = await send(url, { headers: { ...bearer(ALICE), host: `evil.example:${port}`, origin: `http://evil.example:${port}` }, body: initialize });
    expect(rebinding.status).toBe(403);
    expect(server.sessions).toBe(3);
  });

  it('Z6 without authorization too: another localhost port is refused, the own origin passes', async () => {
    const server = await served([whoami]);
    const port = Number(server.url!.port);
    expect((await send(server.url!, { headers: { origin: `http://localhost:${port + 1}` }, body: initialize })).status).toBe(403);
    expect((await send(server.url!, { headers: { origin: `http://localhost:${port}` }, body: initialize })).status).toBe(200);
  });
});
