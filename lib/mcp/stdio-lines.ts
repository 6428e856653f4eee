/**
 * The line framing of MCP over stdio, used by both sides' transports (lib/mcp/client/stdio.ts,
 * lib/mcp/server/stdio.ts): newline-delimited JSON-RPC messages, each at most a number of
 * bytes, read with memory bounded whatever the peer writes.
 *
 * @module
 */

/** The default largest message, in bytes, of both stdio transports: the SDK's `STDIO_DEFAULT_MAX_BUFFER_SIZE`. */
export const DEFAULT_MAX_MESSAGE_BYTES = 10 * 1024 * 1024;
/** How much of an oversized message is kept to find its id: the start and the end. */
const EDGE_BYTES = 256;

/**
 * The id of a JSON-RPC message from its first and last bytes: `{"jsonrpc":"2.0","id":…`
 * at the start (most SDKs) or `"id":…}` at the end (the TypeScript SDK writes
 * `{ result, jsonrpc, id }`). `undefined` when neither place holds one.
 */
export function messageId(head: string, tail: string): string | number | undefined {
  const match = /^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")/.exec(head) ?? /"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*\}\s*$/.exec(tail);
  return match === null ? undefined : (JSON.parse(match[1]!) as string | number);
}

/**
 * Splits stdout into lines of at most `max` bytes. A longer line is not kept: only its
 * size and its first and last {@link EDGE_BYTES} bytes, so memory stays bounded whatever
 * the server writes.
 *
 * Invariant: `#parts` holds the current line's bytes while it is within `max`
 * (`#bytes` counts them); once over, `#parts` is empty and `#head`/`#tail` hold its edges.
 */
export class LineReader {
  #parts: Buffer[] = [];
  #bytes = 0;
  #head: Buffer | undefined;
  #tail: Buffer = Buffer.alloc(0);

  constructor(
    readonly max: number,
    readonly onLine: (line: string) => void,
    readonly onOversized: (bytes: number, head: string, tail: string) => void,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(10, start);
      this.#take(chunk.subarray(start, newline === -1 ? chunk.length : newline));
      if (newline === -1) return;
      this.#endLine();
      start = newline + 1;
    }
  }

  #take(part: Buffer): void {
    if (part.length === 0) return;
    const bytes = this.#bytes + part.length;
    if (this.#head === undefined && bytes <= this.max) {
      this.#parts.push(part);
      this.#bytes = bytes;
      return;
    }
    if (this.#head === undefined) {
      this.#head = Buffer.concat([...this.#parts, part], Math.min(EDGE_BYTES, bytes));
      this.#parts = [];
    }
    const tail = part.length >= EDGE_BYTES ? part : Buffer.concat([this.#tail, part]);
    this.#tail = Buffer.from(tail.subarray(Math.max(0, tail.length - EDGE_BYTES)));
    this.#bytes = bytes;
  }

  #endLine(): void {
    const head = this.#head;
    const bytes = this.#bytes;
    const parts = this.#parts;
    const tail = this.#tail;
    this.#parts = [];
    this.#bytes = 0;
    this.#head = undefined;
    this.#tail = Buffer.alloc(0);
    if (head !== undefined) {
      this.onOversized(bytes, head.toString('utf8'), tail.toString('utf8').replace(/\r$/, ''));
      return;
    }
    const line = Buffer.concat(parts, bytes).toString('utf8').replace(/\r$/, '');
    if (line.trim() !== '') this.onLine(line);
  }
}
