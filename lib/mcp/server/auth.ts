/**
 * Authorization of `serveMcp` over Streamable HTTP, as the MCP specification (2025-06-18 and
 * 2025-11-25, "Basic → Authorization") asks of a server: it is an OAuth 2.1 resource server.
 * Every request to the endpoint carries `Authorization: Bearer <token>`; the host's verifier
 * says who it is (`AuthInfo`) or that it is not valid. Without a valid token the answer is
 * 401 with `WWW-Authenticate: Bearer resource_metadata="…"`, which points the client at the
 * Protected Resource Metadata (RFC 9728) served at `/.well-known/oauth-protected-resource`
 * (and the path-inserted form, `/.well-known/oauth-protected-resource/mcp`): the resource's
 * identifier and the authorization servers that issue its tokens. A token without a
 * required scope gets 403 `insufficient_scope` (RFC 6750 §3.1).
 *
 * Tokens are never logged, never written into an answer and never handed to a tool (a tool
 * sees {@link ToolCallerAuth}, which has no token).
 *
 * @module
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';

export type { AuthInfo };

/**
 * Checks a bearer token: the `AuthInfo` of the caller it authenticates (the SDK's type:
 * `token`, `clientId`, `scopes`, `expiresAt` in seconds since the epoch, `resource`,
 * `extra`), or `undefined` when it is not valid (unknown, revoked, forged). May be async.
 * A verifier that throws or rejects is answered with 500, and the request goes no further.
 * `request` is the HTTP request (its headers, its socket), for a verifier that needs more
 * than the token; do not log the token.
 */
export type McpTokenVerifier = (token: string, request: IncomingMessage) => AuthInfo | undefined | Promise<AuthInfo | undefined>;

/**
 * Authorization of a Streamable HTTP endpoint (`McpHttpOptions.auth`).
 *
 * @example
 * ```ts
 * // Tokens issued by your authorization server, checked by introspection or as JWTs:
 * await serveMcp(tools, { http: { port: 3000, auth: {
 *   verifyToken: async (token) => await myIntrospection(token), // AuthInfo | undefined
 *   authorizationServers: ['https://auth.example.com'],
 *   requiredScopes: ['mcp:tools'],
 * } } });
 * // One shared secret (what `toolrun serve-mcp --http` does):
 * await serveMcp(tools, { http: { port: 3000, auth: { verifyToken: staticTokenVerifier(process.env.MCP_TOKEN!) } } });
 * ```
 */
export interface McpHttpAuth {
  /** Checks each request's bearer token; see {@link McpTokenVerifier}. Required. */
  verifyToken: McpTokenVerifier;
  /**
   * The issuers of this resource's tokens, for the Protected Resource Metadata's
   * `authorization_servers` (RFC 9728 §2): where an OAuth client gets a token.
   * @default [] (a static token: nothing to discover)
   */
  authorizationServers?: readonly (string | URL)[];
  /**
   * The scopes every request's token must have; one missing: 403 `insufficient_scope`
   * with `scope="…"` naming them all. Also the metadata's `scopes_supported`.
   * @default []
   */
  requiredScopes?: readonly string[];
  /**
   * This resource's identifier (RFC 8707, RFC 9728 `resource`): a token whose `AuthInfo.resource`
   * is set and names another resource is refused (401), so a token issued for another server
   * cannot be replayed here.
   * @default the served URL (`http://127.0.0.1:PORT/mcp`)
   */
  resource?: string | URL;
  /**
   * Who a session belongs to: a session is bound to the principal whose token opened it, and a
   * request of another principal carrying its `Mcp-Session-Id` is answered as for an unknown
   * session (404). Return the user's subject when one client's tokens act for many users.
   * @default (auth) => auth.clientId
   */
  principal?: (auth: AuthInfo) => string;
}

/**
 * A verifier for one shared secret: `token` is compared in constant time (SHA-256 digests of
 * both sides, `crypto.timingSafeEqual`, so neither the secret's bytes nor its length leak
 * through timing); a match is `{ clientId, scopes }`.
 *
 * @param token - the secret; at least 16 characters.
 * @param options.clientId - the principal of every holder of the token. @default 'static-token'
 * @param options.scopes - the scopes it grants. @default []
 * @throws TypeError for a token that is not a string of at least 16 characters.
 *
 * @example
 * ```ts
 * const auth = { verifyToken: staticTokenVerifier(process.env.TOOLRUN_MCP_TOKEN!) };
 * ```
 */
export function staticTokenVerifier(token: string, options: { clientId?: string; scopes?: readonly string[] } = {}): McpTokenVerifier {
  if (typeof token !== 'string' || token.length < 16) throw new TypeError(`staticTokenVerifier: the token must be a string of at least 16 characters, received ${typeof token === 'string' ? `${token.length} characters` : typeof token}`);
  const expected = digest(token);
  const clientId = options.clientId ?? 'static-token';
  const scopes = [...(options.scopes ?? [])];
  return (presented) => (timingSafeEqual(digest(presented), expected) ? { token: presented, clientId, scopes: [...scopes] } : undefined);
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** The longest bearer token read, in characters; a longer `Authorization` is refused (400) unread. */
const MAX_TOKEN_CHARS = 8_192;

/** RFC 6750 §2.1's `b64token`. */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/** What {@link authorize} decided: the caller, or the answer to send instead. */
export type AuthVerdict = { ok: true; auth: AuthInfo; principal: string } | { ok: false; status: number; headers: Record<string, string>; body: string };

/** @internal The resolved settings of one endpoint's authorization. */
export interface EndpointAuth {
  readonly auth: McpHttpAuth;
  readonly resource: string;
  readonly metadataUrl: string;
  /** The Protected Resource Metadata document, as JSON text. */
  readonly metadata: string;
  /** The paths it is served at. */
  readonly metadataPaths: readonly string[];
}

/** @internal Resolves `auth` for the endpoint at `url`; throws TypeError for a malformed one. */
export function endpointAuth(auth: McpHttpAuth, url: URL): EndpointAuth {
  if (typeof auth !== 'object' || auth === null || typeof auth.verifyToken !== 'function') throw new TypeError('serveMcp: http.auth must be an object with a verifyToken function (token, request) => AuthInfo | undefined');
  const scopes = auth.requiredScopes ?? [];
  if (!Array.isArray(scopes) || !scopes.every((s) => typeof s === 'string' && /^[\x21\x23-\x5b\x5d-\x7e]+$/.test(s))) throw new TypeError(`serveMcp: http.auth.requiredScopes must be an array of scope tokens (printable ASCII without space, quote or backslash), received ${JSON.stringify(scopes)}`);
  const resource = String(auth.resource ?? url.href);
  const servers = (auth.authorizationServers ?? []).map(String);
  const base = url.origin;
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
  const metadataPaths = ['/.well-known/oauth-protected-resource', ...(path === '' ? [] : [`/.well-known/oauth-protected-resource${path}`])];
  const metadata = JSON.stringify({
    resource,
    authorization_servers: servers,
    ...(scopes.length > 0 ? { scopes_supported: scopes } : {}),
    bearer_methods_supported: ['header'],
    resource_name: 'toolrun MCP server',
  });
  return { auth, resource, metadataUrl: `${base}${metadataPaths.at(-1)}`, metadata, metadataPaths };
}

/** The serialized URL without its fragment and one trailing slash (how RFC 8707 resources compare). */
function comparable(value: string | URL): string {
  const text = String(value);
  const hash = text.indexOf('#');
  return (hash === -1 ? text : text.slice(0, hash)).replace(/\/$/, '');
}

/**
 * @internal Checks one request's `Authorization` header against `endpoint`: the caller, or
 * the 400 / 401 / 403 / 500 answer (RFC 6750 §3: `WWW-Authenticate` with `error`, and the
 * metadata URL of RFC 9728 §5.1) that names what is wrong and never repeats the token.
 */
export async function authorize(req: IncomingMessage, endpoint: EndpointAuth, now: () => number): Promise<AuthVerdict> {
  const { auth, metadataUrl } = endpoint;
  const scopes = auth.requiredScopes ?? [];
  const challenge = (error: string | undefined, description: string): string =>
    ['Bearer realm="mcp"', ...(error === undefined ? [] : [`error="${error}"`, `error_description="${description}"`]), ...(scopes.length > 0 ? [`scope="${scopes.join(' ')}"`] : []), `resource_metadata="${metadataUrl}"`].join(', ');
  const refuse = (status: number, error: string | undefined, description: string): AuthVerdict => ({
    ok: false,
    status,
    headers: { 'www-authenticate': challenge(error, description), 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: description }, id: null }),
  });
  const header = req.headers.authorization;
  if (header === undefined || header === '') return refuse(401, undefined, `this MCP server needs Authorization: Bearer <token> on every request; its metadata: ${metadataUrl}`);
  if (header.length > MAX_TOKEN_CHARS + 7) return refuse(400, 'invalid_request', `the Authorization header is longer than ${MAX_TOKEN_CHARS} characters`);
  const space = header.indexOf(' ');
  const scheme = space === -1 ? header : header.slice(0, space);
  const token = space === -1 ? '' : header.slice(space + 1).trim();
  if (scheme.toLowerCase() !== 'bearer' || !B64TOKEN.test(token)) return refuse(400, 'invalid_request', 'the Authorization header must be "Bearer <token>" with a token of RFC 6750 characters (letters, digits, -._~+/ and trailing =)');
  let info: AuthInfo | undefined;
  try {
    info = await auth.verifyToken(token, req);
  } catch (error) {
    return { ok: false, status: 500, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: `the token verifier failed: ${error instanceof Error ? error.name : typeof error}` }, id: null }) };
  }
  if (info === undefined || info === null || typeof info !== 'object' || typeof info.clientId !== 'string' || !Array.isArray(info.scopes)) return refuse(401, 'invalid_token', 'the bearer token is not valid');
  if (typeof info.expiresAt === 'number' && info.expiresAt * 1000 <= now()) return refuse(401, 'invalid_token', 'the bearer token has expired');
  if (info.resource !== undefined && comparable(info.resource) !== comparable(endpoint.resource)) return refuse(401, 'invalid_token', `the bearer token was issued for another resource, not ${endpoint.resource}`);
  const missing = scopes.filter((scope) => !info.scopes.includes(scope));
  if (missing.length > 0) return refuse(403, 'insufficient_scope', `the bearer token lacks the scope${missing.length === 1 ? '' : 's'} ${missing.join(' ')}`);
  const principal = auth.principal === undefined ? info.clientId : auth.principal(info);
  if (typeof principal !== 'string') return refuse(401, 'invalid_token', 'the bearer token names no principal');
  return { ok: true, auth: info, principal };
}
