/**
 * What a running tool may ask of the client it runs for, besides returning its result: log
 * lines, a completion from the client's model (sampling), an answer from the client's user
 * (elicitation). Modelled on MCP's client features (specification 2025-06-18, "Client
 * features → Sampling", "Client features → Elicitation", "Server utilities → Logging"),
 * without importing any SDK: `createMcpServer` (`toolrun/mcp`) fills it from the connected
 * client; in process it is `RunToolsOptions.client`, or {@link NO_CLIENT}.
 *
 * @module
 */
import type { AudioContent, ImageContent, JsonSchema, TextContent } from './content.ts';

/** Log levels, lowest to highest (syslog's, as MCP's `LoggingLevel`). */
export type ToolLogLevel = 'debug' | 'info' | 'notice' | 'warning' | 'error' | 'critical' | 'alert' | 'emergency';

/** One message of a {@link ToolSampleRequest}. */
export interface ToolSampleMessage {
  role: 'user' | 'assistant';
  content: TextContent | ImageContent | AudioContent;
}

/** What a tool asks the client's model (MCP `sampling/createMessage` params). */
export interface ToolSampleRequest {
  messages: ToolSampleMessage[];
  /** Most tokens the client's model may produce. */
  maxTokens: number;
  systemPrompt?: string;
  temperature?: number;
  stopSequences?: string[];
  /** MCP's model preferences (`hints`, `costPriority`, `speedPriority`, `intelligencePriority`): advisory, the client chooses. */
  modelPreferences?: { hints?: { name?: string }[]; costPriority?: number; speedPriority?: number; intelligencePriority?: number };
}

/** The client model's answer (MCP `CreateMessageResult`), checked by the server before the tool sees it. */
export interface ToolSampleResult {
  role: 'user' | 'assistant';
  content: TextContent | ImageContent | AudioContent;
  /** The model the client used, as the client names it. */
  model: string;
  /** Why it stopped (`endTurn`, `maxTokens`, `stopSequence`, or the client's own word). */
  stopReason?: string;
}

/**
 * What a tool asks the client's user (MCP `elicitation/create`, form mode): a message and a
 * flat object schema whose properties are strings, numbers, integers, booleans or enums
 * (MCP allows nothing nested).
 */
export interface ToolElicitRequest {
  message: string;
  requestedSchema: { type: 'object'; properties: { [name: string]: JsonSchema }; required?: string[] };
}

/**
 * The user's answer. `accept` carries `content` matching the requested schema (checked by the
 * server: an answer that does not match is an error, never handed to the tool); `decline`
 * (the user said no) and `cancel` (the user dismissed the request) carry none.
 */
export interface ToolElicitResult {
  action: 'accept' | 'decline' | 'cancel';
  content?: { [name: string]: string | number | boolean | string[] };
}

/**
 * Who a served call runs for: what the MCP server's token verifier made of the request's
 * bearer token (the SDK's `AuthInfo`), without the token itself, so that a tool cannot pass
 * the client's token on to another service (the MCP authorization specification forbids
 * token passthrough).
 */
export interface ToolCallerAuth {
  /** The OAuth client the token was issued to (a static token's: the `clientId` its verifier names). */
  readonly clientId: string;
  /** The token's scopes. */
  readonly scopes: readonly string[];
  /** When the token expires, in seconds since the epoch; `undefined` when the verifier did not say. */
  readonly expiresAt?: number | undefined;
  /** The resource (RFC 8707) the token was issued for, when the verifier said. */
  readonly resource?: URL | undefined;
  /** What else the verifier attached (a user's subject, a tenant…). */
  readonly extra?: Readonly<Record<string, unknown>> | undefined;
}

/**
 * The client a call runs for (`ToolContext.client`).
 *
 * `log` never throws and never waits. `sample` and `elicit` reject with an `Error` saying
 * why when the client cannot be asked (`canSample` / `canElicit` false: the MCP client did not
 * declare the capability, or the call runs in process without a client): a tool that does
 * not catch it ends with that text as its error result.
 *
 * @example
 * ```ts
 * async execute({ path }, { client, signal }) {
 *   client.log('info', `deleting ${path}`);
 *   if (client.canElicit) {
 *     const answer = await client.elicit({ message: `Delete ${path}?`, requestedSchema: { type: 'object', properties: {} } }, { signal });
 *     if (answer.action !== 'accept') return 'not deleted: the user said no';
 *   }
 *   …
 * }
 * ```
 */
export interface ToolClient {
  /**
   * The caller as the MCP server authenticated it (`serveMcp` with `http.auth`); `undefined`
   * in process, over stdio, or on a server without authorization. Use it to decide what this
   * caller may do (`auth.scopes.includes('files:write')`).
   */
  readonly auth?: ToolCallerAuth | undefined;
  /** True when {@link sample} can reach a model (the MCP client declared `sampling`). */
  readonly canSample: boolean;
  /** True when {@link elicit} can reach a user (the MCP client declared `elicitation`, form mode). */
  readonly canElicit: boolean;
  /**
   * Sends a log line: over MCP a `notifications/message` with this level, `data` (any JSON
   * value) and `logger` (default: the tool's name), unless the client's `logging/setLevel`
   * asked for a higher level. Never throws.
   */
  log(level: ToolLogLevel, data: unknown, logger?: string): void;
  /** Asks the client's model for one message (MCP `sampling/createMessage`). The signal (default: the call's `signal`) cancels the request. */
  sample(request: ToolSampleRequest, options?: { signal?: AbortSignal }): Promise<ToolSampleResult>;
  /** Asks the client's user (MCP `elicitation/create`, form mode). The signal (default: the call's) cancels the request. */
  elicit(request: ToolElicitRequest, options?: { signal?: AbortSignal }): Promise<ToolElicitResult>;
}
