/**
 * The MCP client, as the `ToolContext.client` of a served call: log lines become
 * `notifications/message`, `sample` a `sampling/createMessage` request, `elicit` an
 * `elicitation/create` request (MCP specification 2025-06-18, "Server utilities → Logging",
 * "Client features → Sampling", "Client features → Elicitation"). Everything goes out tied to
 * the `tools/call` request (`relatedRequestId`), so over Streamable HTTP it travels on that
 * request's own SSE stream.
 *
 * What the client answers is untrusted: the SDK checks its shape (`CreateMessageResultSchema`,
 * `ElicitResultSchema`) and an accepted elicitation's content against the requested schema;
 * then only the documented fields are copied for the tool.
 *
 * @module
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import { readContentBlock } from '../../core/values/content.ts';
import type { ToolApprovalHandler } from '../../core/approval/approval.ts';
import { jsonText } from './content.ts';
import type { ToolCallerAuth, ToolClient, ToolElicitRequest, ToolElicitResult, ToolLogLevel, ToolSampleRequest, ToolSampleResult } from '../../core/tool/client.ts';

/** Severity of each level, lowest first (the order of MCP's `LoggingLevel`). */
const SEVERITY: { readonly [level in ToolLogLevel]: number } = { debug: 0, info: 1, notice: 2, warning: 3, error: 4, critical: 5, alert: 6, emergency: 7 };

/** True for a string that names a log level. */
function isLogLevel(value: unknown): value is ToolLogLevel {
  return typeof value === 'string' && Object.hasOwn(SEVERITY, value);
}

/**
 * How long a served tool's `elicit` waits for the person, in ms, unless its signal ends it
 * sooner: a person needs longer than the SDK's 60 s request default, but never for ever.
 */
const ELICIT_TIMEOUT_MS = 10 * 60_000;

/** The per-session logging state: the level the client asked for with `logging/setLevel`. */
export interface McpLogging {
  /** `undefined` until the client sets one: then every line is sent (as the SDK's own servers do). */
  level: ToolLogLevel | undefined;
}

/**
 * @internal The `ToolClient` of one `tools/call` request of `server`: one object with its
 * methods on the prototype (no closure per call: what a call costs counts next to a plain
 * SDK server). The core reaches it only through `callClient`, which always passes the call's
 * signal to `sample` and `elicit` (and the approval handler passes its own), so a request of
 * the client is always cancelled with its call.
 */
export class McpCallClient implements ToolClient {
  readonly #server: Server;
  readonly #requestId: string | number;
  readonly #sendNotification: (notification: ServerNotification) => Promise<void>;
  readonly #logging: McpLogging;
  readonly #toolName: string;
  readonly auth: ToolCallerAuth | undefined;

  /**
   * @param toolName - the default `logger` of log lines.
   * @param auth - who the request came from, as serveMcp's token verifier said (without the token).
   */
  constructor(server: Server, requestId: string | number, sendNotification: (notification: ServerNotification) => Promise<void>, logging: McpLogging, toolName: string, auth?: ToolCallerAuth) {
    this.auth = auth;
    this.#server = server;
    this.#requestId = requestId;
    this.#sendNotification = sendNotification;
    this.#logging = logging;
    this.#toolName = toolName;
  }

  get canSample(): boolean {
    return this.#server.getClientCapabilities()?.sampling !== undefined;
  }

  get canElicit(): boolean {
    return this.#server.getClientCapabilities()?.elicitation?.form !== undefined;
  }

  log(level: ToolLogLevel, data: unknown, logger?: string): void {
    if (!isLogLevel(level)) return;
    const threshold = this.#logging.level;
    if (threshold !== undefined && SEVERITY[level] < SEVERITY[threshold]) return;
    // A value JSON cannot carry (a BigInt, a cycle) is sent as its String() text.
    const params = { level, logger: typeof logger === 'string' ? logger : this.#toolName, data: jsonSafe(data) };
    // Never throws, never waits: a client gone or a closed stream only loses the line.
    this.#sendNotification({ method: 'notifications/message', params }).catch(() => undefined);
  }

  async sample(request: ToolSampleRequest, options?: { signal?: AbortSignal }): Promise<ToolSampleResult> {
    if (!this.canSample) throw new Error(`the MCP client cannot be asked for a completion: it did not declare the sampling capability (tool "${this.#toolName}")`);
    const answer = await this.#server.createMessage(
      { ...request, messages: request.messages.map((m) => ({ role: m.role, content: m.content })) },
      options?.signal === undefined ? { relatedRequestId: this.#requestId } : { relatedRequestId: this.#requestId, signal: options.signal },
    );
    // The SDK checked the answer's shape; the block is read by the rule every path shares.
    const content = readContentBlock(answer.content);
    if (typeof content === 'string' || (content.type !== 'text' && content.type !== 'image' && content.type !== 'audio')) {
      throw new Error(`the MCP client's model answered with content toolrun cannot pass on (${typeof content === 'string' ? content : `a ${content.type} block: a sampled message is text, image or audio`})`);
    }
    const result: ToolSampleResult = { role: answer.role, content, model: answer.model };
    if (typeof answer.stopReason === 'string') result.stopReason = answer.stopReason;
    return result;
  }

  async elicit(request: ToolElicitRequest, options?: { signal?: AbortSignal }): Promise<ToolElicitResult> {
    if (!this.canElicit) throw new Error(`the MCP client cannot ask its user: it did not declare the elicitation capability (form mode) (tool "${this.#toolName}")`);
    const answer = await this.#server.elicitInput(
      { mode: 'form', message: request.message, requestedSchema: request.requestedSchema as Parameters<Server['elicitInput']>[0] extends { requestedSchema: infer S } ? S : never },
      options?.signal === undefined ? { relatedRequestId: this.#requestId, timeout: ELICIT_TIMEOUT_MS } : { relatedRequestId: this.#requestId, signal: options.signal, timeout: ELICIT_TIMEOUT_MS },
    );
    const result: ToolElicitResult = { action: answer.action };
    if (answer.action === 'accept' && answer.content !== undefined) result.content = { ...answer.content } as NonNullable<ToolElicitResult['content']>;
    return result;
  }
}

function jsonSafe(value: unknown): unknown {
  try {
    return JSON.stringify(value) === undefined ? String(value) : value;
  } catch {
    return String(value);
  }
}

/** Longest input text shown to the person in an approval question, in characters; the rest is cut with a note. */
const APPROVAL_INPUT_CHARS = 2_000;

/**
 * @internal An approval handler (contract H2) that asks the MCP client's user through
 * elicitation: the question names the tool and shows its input (and the hook's reason);
 * `accept` approves the call, `decline` and `cancel` deny it, with a reason saying which.
 * A failed request (client error, timeout, the call's signal) throws: the call is then
 * rejected (H2: a throw is that call's rejected result).
 */
export function approvalByElicitation(client: ToolClient): ToolApprovalHandler {
  return async (request, { signal }) => {
    let input = jsonText(request.input);
    if (input.length > APPROVAL_INPUT_CHARS) input = `${input.slice(0, APPROVAL_INPUT_CHARS)}… [${input.length - APPROVAL_INPUT_CHARS} more characters not shown]`;
    const lines = [`The tool "${request.toolName}" asks for your approval before it runs, with this input:`, input];
    if (request.reason !== undefined) lines.push(`Why it asks: ${request.reason}`);
    lines.push('Accept to let it run; decline to refuse it.');
    const answer = await client.elicit({ message: lines.join('\n'), requestedSchema: { type: 'object', properties: {} } }, { signal });
    if (answer.action === 'accept') return { approvalId: request.approvalId, approved: true };
    const reason = answer.action === 'decline' ? 'the user declined it in the MCP client' : 'the user dismissed the approval request in the MCP client';
    return { approvalId: request.approvalId, approved: false, reason };
  };
}
