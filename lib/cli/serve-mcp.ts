/**
 * `toolrun serve-mcp [options] <module>`: serves the tools a module exports as an MCP server,
 * over stdio, or over Streamable HTTP with `--http <port>`.
 *
 * The module is imported (a `.ts` module works under `npm start`, which runs tsx). Its tools:
 * the default export when it is an array (every element must be a tool), else every named
 * export that is a tool (an object with a string `name`, an `input` schema and an `execute`
 * function), in the order of their export names; other exports are ignored. No tool at all is an input error (exit code 2).
 *
 * Over stdio, stdout carries the protocol: the one line saying what is served goes to stderr.
 * Over HTTP it goes to stdout: `toolrun: serving N tools (a, b) at http://127.0.0.1:PORT/mcp`.
 * SIGINT or SIGTERM closes the server (running calls are cancelled, their `finally` blocks
 * run, within the grace period whatever is in flight), says on stderr what it cut
 * (`toolrun: stopped: 2 calls interrupted, 3 sessions closed, 0 connections cut`), and the
 * program ends with code 0; over stdio, so does the client closing stdin.
 *
 * Each call has a time limit of {@link DEFAULT_SERVE_TIMEOUT_MS} unless the tool sets its own
 * or `--timeout` says otherwise (`--timeout 0`: none), so a call whose tool hangs does not
 * hold the server forever.
 *
 * The MCP SDK is loaded only by this command (`lib/mcp/`), never by `import 'toolrun'`.
 *
 * @module
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { assertToolShape, type Tool } from '../core/tool.ts';
import { serveMcp } from '../mcp/serve.ts';
import { CliInputError } from './errors.ts';

/** The text of `toolrun serve-mcp --help`. */
export const SERVE_MCP_USAGE = `usage: toolrun serve-mcp [options] <module>

Serves the tools that <module> exports (a default export array of tools, or named exports
that are tools) as an MCP server: over stdio, or over Streamable HTTP with --http.

options:
  --http <port>       serve over Streamable HTTP on this port (0: any free port); the
                      address is printed: http://<host>:<port>/mcp
  --host <address>    the address to bind with --http (default: 127.0.0.1); any other
                      than a loopback address exposes the tools to the network
  --timeout <ms>      per-call time limit for tools that set none (default: 300000,
                      5 minutes; 0: no limit)
  -h, --help          show this text
`;

/** The per-call time limit of `serve-mcp` for tools that set none, in ms: 5 minutes. */
export const DEFAULT_SERVE_TIMEOUT_MS = 5 * 60 * 1000;

/** Where the command writes (the main program's io). */
export interface ServeMcpIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

/**
 * Runs `toolrun serve-mcp` with the arguments after `serve-mcp`. Resolves with the exit code
 * once the server has been closed (by SIGINT/SIGTERM, or stdin ending over stdio).
 *
 * @throws CliInputError for bad options, a module that cannot be imported or exports no tool.
 */
export async function serveMcpCommand(argv: readonly string[], io: ServeMcpIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: { http: { type: 'string' }, host: { type: 'string' }, timeout: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw new CliInputError(`serve-mcp: ${(error as Error).message.split(/\.\s/)[0]} (see toolrun serve-mcp --help)`);
  }
  const { values, positionals } = parsed;
  if (values.help === true) {
    io.stdout.write(SERVE_MCP_USAGE);
    return 0;
  }
  if (positionals.length !== 1) throw new CliInputError(`serve-mcp needs exactly one module, received ${positionals.length} (see toolrun serve-mcp --help)`);
  if (values.host !== undefined && values.http === undefined) throw new CliInputError('serve-mcp: --host applies with --http only');
  const port = values.http === undefined ? undefined : whole(values.http, '--http', 65_535);
  const timeout = values.timeout === undefined ? DEFAULT_SERVE_TIMEOUT_MS : whole(values.timeout, '--timeout', Number.MAX_SAFE_INTEGER);
  const timeoutMs = timeout === 0 ? undefined : timeout;
  const modulePath = positionals[0]!;
  const tools = await loadTools(modulePath);

  const served = await serveMcp(tools, {
    serverInfo: { name: 'toolrun', version: '0.1.0' },
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    ...(port === undefined ? {} : { http: { port, host: values.host ?? '127.0.0.1' } }),
  });
  const what = `serving ${tools.length} tool${tools.length === 1 ? '' : 's'} (${tools.map((t) => t.name).join(', ')})`;
  if (served.url === undefined) io.stderr.write(`toolrun: ${what} over stdio\n`);
  else io.stdout.write(`toolrun: ${what} at ${served.url.href}\n`);

  await new Promise<void>((done) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      process.stdin.off('end', stop);
      void served.close().then((cut) => {
        const plural = (n: number, what: string): string => `${n} ${what}${n === 1 ? '' : 's'}`;
        io.stderr.write(`toolrun: stopped: ${plural(cut.interruptedCalls, 'call')} interrupted, ${plural(cut.closedSessions, 'session')} closed, ${plural(cut.cutConnections, 'connection')} cut\n`);
        done();
      }, done);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    // Over stdio the client ends the session by closing our stdin.
    if (served.url === undefined) process.stdin.once('end', stop);
  });
  return 0;
}

/** Imports `path` and returns its tools (default export array, or named exports that are tools). */
export async function loadTools(path: string): Promise<Tool[]> {
  let module: Record<string, unknown>;
  try {
    module = (await import(pathToFileURL(resolve(path)).href)) as Record<string, unknown>;
  } catch (error) {
    throw new CliInputError(`serve-mcp: cannot import ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (Array.isArray(module.default)) {
    module.default.forEach((tool: unknown, i: number) => {
      try {
        assertToolShape(tool, `serve-mcp: ${path}, default export [${i}]`);
      } catch (error) {
        throw new CliInputError((error as Error).message);
      }
    });
    if (module.default.length > 0) return module.default as Tool[];
  }
  const tools = Object.entries(module)
    .filter(([key, value]) => key !== 'default' && isTool(value))
    // A module namespace lists its exports sorted by name; sorted here too, whatever loaded the module.
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, value]) => value as Tool);
  if (tools.length === 0) throw new CliInputError(`serve-mcp: ${path} exports no tool (a default export array of tools, or named exports that are tools)`);
  return tools;
}

function isTool(value: unknown): boolean {
  try {
    assertToolShape(value, 'serve-mcp');
    return true;
  } catch {
    return false;
  }
}

function whole(text: string, option: string, max: number): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n > max) throw new CliInputError(`serve-mcp: ${option} must be a whole number from 0 to ${max}, received "${text}"`);
  return n;
}
