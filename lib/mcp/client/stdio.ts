/**
 * A stdio transport for an MCP client that keeps the connection when one message is bad.
 *
 * The MCP SDK's `StdioClientTransport` (1.x) reads the server's stdout into one buffer and,
 * when a single message grows past `maxBufferSize` (10 MiB by default), clears it, reports
 * an error and closes the connection: every call in flight fails with "Connection closed",
 * and the client is unusable. A message that is valid JSON but not valid JSON-RPC — a
 * response with `result: null` — is reported and dropped, so its request waits for the
 * request timeout (60 s by default). Both measured in `spec/extras/mcp.spec.ts`.
 *
 * {@link McpStdioTransport} reads line by line with a per-message limit instead:
 *
 * | the server sends | the SDK's stdio transport | this transport |
 * | --- | --- | --- |
 * | a response over the limit | closes the connection: every call fails | drops it, keeping only its first and last 256 bytes, and answers its request with a JSON-RPC error; other calls go on |
 * | a response with `result` that is not an object | drops it: its request times out | answers its request with a JSON-RPC error at once |
 * | a line that is not JSON | reports it (`onerror`) | reports it (`onerror`) |
 *
 * It implements the SDK's `Transport` interface structurally (no import of the SDK, which
 * is not a dependency of toolrun): pass it to `Client.connect`. It spawns the server as the
 * SDK's transport does (no shell; only a few variables of the environment are inherited).
 *
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { describeValue } from '../../core/values/guards.ts';
import { isObjectRecord } from '../../core/values/guards.ts';
import { DEFAULT_MAX_MESSAGE_BYTES, LineReader, messageId } from '../stdio-lines.ts';

/** A JSON-RPC message as this transport passes it on (the client validates the rest). */
export type McpJsonRpcMessage = { [key: string]: unknown };

/** Options of {@link McpStdioTransport}. */
export interface McpStdioTransportOptions {
  /** The server's executable (no shell). */
  command: string;
  /** Its arguments. @default [] */
  args?: readonly string[];
  /**
   * Environment variables of the server, on top of the inherited ones.
   * @default only HOME, LOGNAME, PATH, SHELL, TERM and USER are inherited (as the SDK's transport)
   */
  env?: Record<string, string>;
  /** The server's working directory. @default the current one */
  cwd?: string;
  /** The server's stderr: shown (`'inherit'`), readable from {@link McpStdioTransport.stderr} (`'pipe'`), or dropped. @default 'inherit' */
  stderr?: 'inherit' | 'pipe' | 'ignore';
  /**
   * Largest message the server may send, in bytes (UTF-8, without the newline). A larger
   * response is dropped and its request answered with an error; the connection stays open.
   * @default 10 MiB (10,485,760: the SDK's own limit)
   */
  maxMessageBytes?: number;
}

/** JSON-RPC's "Internal error" code: the client could not use the server's answer. */
const INTERNAL_ERROR = -32603;
const INHERITED_ENV = ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER'];

/**
 * See the module comment.
 *
 * @example
 * ```ts
 * const client = new Client({ name: 'my-agent', version: '1.0.0' });
 * await client.connect(new McpStdioTransport({ command: 'node', args: ['server.js'], maxMessageBytes: 32 * 1024 * 1024 }));
 * const tools = await mcpTools(client);
 * ```
 */
export class McpStdioTransport {
  /** Set by the client: each message read. */
  onmessage?: (message: McpJsonRpcMessage) => void;
  /** Set by the client: a problem that did not close the connection (a bad line, a dropped message, a write error). */
  onerror?: (error: Error) => void;
  /** Set by the client: the connection closed (the process exited or `close()` was called). */
  onclose?: () => void;

  readonly #options: McpStdioTransportOptions;
  readonly #maxBytes: number;
  #process: ChildProcess | undefined;
  readonly #reader: LineReader;

  constructor(options: McpStdioTransportOptions) {
    const max = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    if (!(Number.isInteger(max) && max > 0)) throw new TypeError(`McpStdioTransport: maxMessageBytes must be a positive integer, received ${String(max)}`);
    this.#options = options;
    this.#maxBytes = max;
    this.#reader = new LineReader(max, (line) => this.#line(line), (bytes, head, tail) => this.#oversized(bytes, head, tail));
  }

  /** The server's process id, once started; `null` before and after. */
  get pid(): number | null {
    return this.#process?.pid ?? null;
  }

  /** The server's stderr, with `stderr: 'pipe'`, once started. */
  get stderr(): Readable | null {
    return this.#process?.stderr ?? null;
  }

  /** Spawns the server. Called by `Client.connect`. */
  start(): Promise<void> {
    if (this.#process !== undefined) throw new Error('McpStdioTransport: already started');
    const { command, args = [], env = {}, cwd, stderr = 'inherit' } = this.#options;
    const inherited: Record<string, string> = {};
    for (const key of INHERITED_ENV) {
      const value = process.env[key];
      if (value !== undefined && !value.startsWith('()')) inherited[key] = value;
    }
    return new Promise<void>((resolve, reject) => {
      const child = spawn(command, [...args], { env: { ...inherited, ...env }, cwd, stdio: ['pipe', 'pipe', stderr], shell: false, windowsHide: true });
      this.#process = child;
      child.on('error', (error) => {
        reject(error);
        this.onerror?.(error);
      });
      child.on('spawn', () => resolve());
      child.on('close', () => {
        this.#process = undefined;
        this.onclose?.();
      });
      child.stdin?.on('error', (error) => this.onerror?.(error));
      child.stdout?.on('error', (error) => this.onerror?.(error));
      child.stdout?.on('data', (chunk: Buffer) => this.#reader.push(chunk));
    });
  }

  /** Writes one message as a line. Rejects when the server is not running. */
  send(message: McpJsonRpcMessage): Promise<void> {
    const stdin = this.#process?.stdin;
    if (stdin === undefined || stdin === null) return Promise.reject(new Error('Not connected'));
    return new Promise<void>((resolve, reject) => {
      stdin.write(`${JSON.stringify(message)}\n`, (error) => (error ? reject(error) : resolve()));
    });
  }

  /**
   * Ends the server: closes its stdin, then (as the SDK's transport does) sends SIGTERM
   * after 2 s and SIGKILL 2 s later if it is still running. Resolves once it exited.
   */
  async close(): Promise<void> {
    const child = this.#process;
    if (child === undefined) return;
    this.#process = undefined;
    const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
    const grace = (ms: number) => Promise.race([exited.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms).unref())]);
    child.stdin?.end();
    if (!(await grace(2_000))) {
      child.kill('SIGTERM');
      if (!(await grace(2_000))) child.kill('SIGKILL');
    }
    await exited;
  }

  #line(line: string): void {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch (error) {
      this.onerror?.(error as Error);
      return;
    }
    if (!isObjectRecord(message)) {
      this.onerror?.(new Error(`McpStdioTransport: the server sent a line that is not a JSON-RPC message: ${line.slice(0, 200)}`));
      return;
    }
    const m: McpJsonRpcMessage = message;
    // A response whose result is not an object: the SDK would drop it and let the request time out.
    if ('id' in m && 'result' in m && !('method' in m) && !isObjectRecord(m.result)) {
      this.#answerWithError(m.id, `The MCP server answered without a result object (result: ${describeValue(m.result, 100)}); a JSON-RPC result must be an object.`);
      return;
    }
    this.onmessage?.(m);
  }

  #oversized(bytes: number, head: string, tail: string): void {
    const id = messageId(head, tail);
    const text = `The MCP server's message of ${bytes} bytes is over this transport's limit of ${this.#maxBytes} bytes (maxMessageBytes); it was dropped and the connection kept.`;
    if (id === undefined) this.onerror?.(new Error(`${text} It had no id to answer.`));
    else this.#answerWithError(id, text);
  }

  #answerWithError(id: unknown, message: string): void {
    this.onerror?.(new Error(message));
    this.onmessage?.({ jsonrpc: '2.0', id, error: { code: INTERNAL_ERROR, message } });
  }
}
