/**
 * McpStdioTransport (lib/mcp/client/stdio.ts): the stdio transport that keeps the
 * connection when one message is bad. Each test runs a real child process that writes
 * crafted lines to its stdout; the MCP-level behaviour (a real server, the SDK's client)
 * is in `mcp.spec.ts`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { McpStdioTransport, type McpJsonRpcMessage } from '../../lib/mcp/index.ts';
import { isAlive } from '../mcp-servers.ts';

/** A child that writes each string of `pieces` with its own write, then waits for stdin to end. */
const WRITER = `
const pieces = JSON.parse(process.argv[1]);
(async () => {
  for (const piece of pieces) await new Promise((resolve) => process.stdout.write(piece, resolve));
  process.stdin.resume();
  process.stdin.on('end', () => process.exit(0));
})();
`;

const opened: McpStdioTransport[] = [];
afterEach(async () => {
  for (const transport of opened.splice(0)) {
    const pid = transport.pid;
    await transport.close();
    if (pid !== null) expect(isAlive(pid)).toBe(false);
  }
});

/** Starts a writer of `pieces`; resolves once `expected` messages and errors together arrived. */
async function read(pieces: string[], expected: number, maxMessageBytes?: number): Promise<{ messages: McpJsonRpcMessage[]; errors: Error[] }> {
  const transport = new McpStdioTransport({ command: process.execPath, args: ['-e', WRITER, JSON.stringify(pieces)], ...(maxMessageBytes === undefined ? {} : { maxMessageBytes }) });
  opened.push(transport);
  const messages: McpJsonRpcMessage[] = [];
  const errors: Error[] = [];
  let done!: () => void;
  const all = new Promise<void>((resolve) => (done = resolve));
  const check = (): void => {
    if (messages.length + errors.length >= expected) done();
  };
  transport.onmessage = (message) => {
    messages.push(message);
    check();
  };
  transport.onerror = (error) => {
    errors.push(error);
    check();
  };
  await transport.start();
  await all;
  return { messages, errors };
}

describe('McpStdioTransport: reading lines', () => {
  it('a message split across writes, CRLF endings and blank lines are read whole; a line that is not JSON is reported and skipped', async () => {
    const { messages, errors } = await read(['{"jsonrpc":"2.0",', '"method":"a"}\r\n\n', 'not json\n{"jsonrpc":"2.0","id":1,"result":{}}\n'], 3);
    expect(messages).toEqual([
      { jsonrpc: '2.0', method: 'a' },
      { jsonrpc: '2.0', id: 1, result: {} },
    ]);
    expect(errors.map((e) => e.name)).toEqual(['SyntaxError']);
  });

  it('a response whose result is not an object is answered at once with a JSON-RPC error for its id', async () => {
    const { messages } = await read(['{"jsonrpc":"2.0","id":3,"result":null}\n{"jsonrpc":"2.0","id":4,"result":[1]}\n'], 4);
    expect(messages).toEqual([
      { jsonrpc: '2.0', id: 3, error: { code: -32603, message: 'The MCP server answered without a result object (result: null); a JSON-RPC result must be an object.' } },
      { jsonrpc: '2.0', id: 4, error: { code: -32603, message: 'The MCP server answered without a result object (result: array [1]); a JSON-RPC result must be an object.' } },
    ]);
  });
});

describe('McpStdioTransport: a message over maxMessageBytes', () => {
  it('is dropped and its request answered with an error, whether its id comes last (TypeScript SDK) or first; the connection goes on', async () => {
    const big = 'x'.repeat(5_000);
    const lines = [
      `{"result":{"content":[{"type":"text","text":"${big}"}]},"jsonrpc":"2.0","id":7}\n`,
      `{"jsonrpc":"2.0","id":"s-1","result":{"text":"${big}"}}\n`,
      '{"jsonrpc":"2.0","id":8,"result":{}}\n',
    ];
    // Written in small pieces, so the limit is crossed in the middle of a piece.
    const pieces = lines.join('').match(/[\s\S]{1,700}/g)!;
    const { messages } = await read(pieces, 5, 1_000);
    const over = (bytes: number) => `The MCP server's message of ${bytes} bytes is over this transport's limit of 1000 bytes (maxMessageBytes); it was dropped and the connection kept.`;
    expect(messages).toEqual([
      { jsonrpc: '2.0', id: 7, error: { code: -32603, message: over(lines[0]!.length - 1) } },
      { jsonrpc: '2.0', id: 's-1', error: { code: -32603, message: over(lines[1]!.length - 1) } },
      { jsonrpc: '2.0', id: 8, result: {} },
    ]);
  });

  it('without an id (a notification) it is reported and dropped', async () => {
    const { messages, errors } = await read([`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"${'z'.repeat(3_000)}"}}\n`, '{"jsonrpc":"2.0","id":1,"result":{}}\n'], 2, 1_000);
    expect(messages).toEqual([{ jsonrpc: '2.0', id: 1, result: {} }]);
    expect(errors.map((e) => e.message)).toEqual([expect.stringMatching(/^The MCP server's message of \d+ bytes is over this transport's limit of 1000 bytes .* It had no id to answer\.$/)]);
  });
});

describe('McpStdioTransport: lifecycle', () => {
  it('close() ends the process; send() afterwards rejects; a bad limit is refused at once', async () => {
    const transport = new McpStdioTransport({ command: process.execPath, args: ['-e', WRITER, '[]'] });
    let closed = 0;
    transport.onclose = () => closed++;
    await transport.start();
    const pid = transport.pid!;
    expect(isAlive(pid)).toBe(true);
    await transport.send({ jsonrpc: '2.0', method: 'ping' });
    await transport.close();
    expect(isAlive(pid)).toBe(false);
    expect(closed).toBe(1);
    await expect(transport.send({ jsonrpc: '2.0', method: 'ping' })).rejects.toThrow('Not connected');
    expect(() => new McpStdioTransport({ command: 'x', maxMessageBytes: 0 })).toThrow('McpStdioTransport: maxMessageBytes must be a positive integer, received 0');
  });

  it('a command that cannot start rejects start() with the spawn error', async () => {
    const transport = new McpStdioTransport({ command: 'toolrun-no-such-command-xyz' });
    transport.onerror = () => {};
    await expect(transport.start()).rejects.toThrow(/ENOENT/);
  });
});
