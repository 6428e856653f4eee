/**
 * `toolrun serve-mcp [options] [<module>]`: serves the tools a module exports, the ready-made
 * tools named with `--tools` (lib/cli/ready-made-tools.ts), or both, as an MCP server, over
 * stdio, or over Streamable HTTP with `--http <port>`.
 *
 * The module is a file path, or a package specifier resolved from the current folder as
 * `require.resolve` would (`my-tools`, `@me/tools/server`). It is imported (a `.ts` module
 * works under `npm start`, which runs tsx). Its tools:
 * the default export when it is an array (every element must be a tool), else every named
 * export that is a tool (an object with a string `name`, an `input` schema and an `execute`
 * function), in the order of their export names; other exports are ignored. No tool at all
 * is an input error (exit code 2).
 *
 * Over stdio, stdout carries the protocol: the one line saying what is served goes to stderr.
 * Over HTTP it goes to stdout: `toolrun: serving N tools (a, b) at http://127.0.0.1:PORT/mcp`.
 * Over HTTP every request needs `Authorization: Bearer <token>`: `TOOLRUN_MCP_TOKEN` when it
 * is set and not empty, else a random one made at start and printed once on stderr with the
 * URL (compared in constant time, `staticTokenVerifier`). `--no-auth` turns that off, and is
 * refused unless the address is a loopback one.
 * SIGINT or SIGTERM closes the server (running calls are cancelled, their `finally` blocks
 * run, within the grace period whatever is in flight), says on stderr what it cut
 * (`toolrun: stopped: 2 calls interrupted, 3 sessions closed, 0 connections cut`), and the
 * program ends with code 0; over stdio, so does the client closing stdin.
 *
 * Each call has a time limit of {@link DEFAULT_SERVE_TIMEOUT_MS} unless the tool sets its own
 * or `--timeout` says otherwise (`--timeout 0`: none), so a call whose tool hangs does not
 * hold the server forever.
 *
 * The MCP SDK is loaded only by the commands that use it (this one, through `lib/mcp/`, and
 * `toolrun mcp`), never by the program's other commands or by `import 'toolrun'`.
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { assertToolShape } from '../core/schema/define-tool.ts';
import { type Tool } from '../core/tool/tool.ts';
import { staticTokenVerifier } from '../mcp/server/auth.ts';
import { isLoopback } from '../mcp/server/request-guards.ts';
import { serveMcp } from '../mcp/server/serve.ts';
import { CliInputError } from './errors.ts';
import { READY_MADE_TOOL_NAMES, readyMadeTools } from './ready-made-tools.ts';

/** The text of `toolrun serve-mcp --help`. */
export const SERVE_MCP_USAGE = `usage: toolrun serve-mcp [options] <module>
       toolrun serve-mcp [options] --tools <names> [--workspace <dir>] [<module>]

Serves the tools that <module> exports (a default export array of tools, or named exports
that are tools), the ready-made tools named with --tools, or both, as an MCP server: over
stdio, or over Streamable HTTP with --http. <module> is a file, or a package specifier
resolved from the current folder.

options:
  --tools <names>     serve ready-made tools, comma-separated: ${READY_MADE_TOOL_NAMES.join(', ')}
                      (shell runs any command in the workspace: serve it only to clients
                      you trust)
  --workspace <dir>   the folder the --tools tools work in: the shell's working directory,
                      the root the file tools stay inside (default: the current folder)
  --http <port>       serve over Streamable HTTP on this port (0: any free port); the
                      address is printed: http://<host>:<port>/mcp
  --host <address>    the address to bind with --http (default: 127.0.0.1); any other
                      than a loopback address exposes the tools to the network
  --no-auth           with --http on a loopback address: no bearer token (any local
                      user or process can then call the tools); by default every request
                      needs Authorization: Bearer <token>, the token being
                      TOOLRUN_MCP_TOKEN, or one made at start and printed on stderr
  --timeout <ms>      per-call time limit for tools that set none (default: 300000,
                      5 minutes; 0: no limit)
  -h, --help          show this text

examples:
  toolrun serve-mcp --tools read_file,grep,list_files --workspace ~/project
  toolrun serve-mcp --http 8080 my-tools.js
`;

/** The per-call time limit of `serve-mcp` for tools that set none, in ms: 5 minutes. */
export const DEFAULT_SERVE_TIMEOUT_MS = 5 * 60 * 1000;

/** Where the command writes (the main program's io). */
export interface ServeMcpIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  /** Where `TOOLRUN_MCP_TOKEN` is read from. @default process.env */
  env?: NodeJS.ProcessEnv;
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
      options: { http: { type: 'string' }, host: { type: 'string' }, 'no-auth': { type: 'boolean' }, timeout: { type: 'string' }, tools: { type: 'string' }, workspace: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw new CliInputError(`serve-mcp: ${(error as Error).message.split(/\.\s/)[0]} (see toolrun serve-mcp --help)`);
  }
  const { values, positionals } = parsed;
  const environment = io.env ?? process.env;
  if (values.help === true) {
    io.stdout.write(SERVE_MCP_USAGE);
    return 0;
  }
  if (positionals.length > 1 || (positionals.length === 0 && values.tools === undefined)) {
    throw new CliInputError(`serve-mcp needs one module or --tools <names>, received ${positionals.length} modules (see toolrun serve-mcp --help)`);
  }
  if (values.workspace !== undefined && values.tools === undefined) throw new CliInputError('serve-mcp: --workspace applies with --tools only');
  if (values.host !== undefined && values.http === undefined) throw new CliInputError('serve-mcp: --host applies with --http only');
  if (values['no-auth'] === true && values.http === undefined) throw new CliInputError('serve-mcp: --no-auth applies with --http only (stdio has no port to protect)');
  if (values['no-auth'] === true && !isLoopback(values.host ?? '127.0.0.1')) {
    throw new CliInputError(`serve-mcp: --no-auth is refused on ${values.host}, which is not a loopback address: anyone on the network could call the tools; drop --no-auth (clients send the token), or bind 127.0.0.1`);
  }
  const port = values.http === undefined ? undefined : whole(values.http, '--http', 65_535);
  const given = environment.TOOLRUN_MCP_TOKEN;
  if (given !== undefined && given !== '' && !/^[A-Za-z0-9\-._~+/]{16,}=*$/.test(given)) {
    throw new CliInputError('serve-mcp: TOOLRUN_MCP_TOKEN must be at least 16 characters of letters, digits and -._~+/ (a bearer token); unset it to get one made at start');
  }
  const token = port === undefined || values['no-auth'] === true ? undefined : given !== undefined && given !== '' ? { value: given, made: false } : { value: randomBytes(32).toString('base64url'), made: true };
  const timeout = values.timeout === undefined ? DEFAULT_SERVE_TIMEOUT_MS : whole(values.timeout, '--timeout', Number.MAX_SAFE_INTEGER);
  const timeoutMs = timeout === 0 ? undefined : timeout;
  const readyMade = values.tools === undefined ? undefined : await readyMadeTools(values.tools, { workspace: values.workspace });
  const modulePath = positionals[0];
  const moduleTools = modulePath === undefined ? [] : await loadTools(modulePath);
  const twice = moduleTools.find((tool) => readyMade?.tools.some((other) => other.name === tool.name) === true);
  if (twice !== undefined) throw new CliInputError(`serve-mcp: two tools are named '${twice.name}', one from --tools and one from ${modulePath}; serve one of them`);
  const tools = [...(readyMade?.tools ?? []), ...moduleTools];

  const host = values.host ?? '127.0.0.1';
  let served;
  try {
    served = await serveMcp(tools, {
      serverInfo: { name: 'toolrun', version: '0.1.0' },
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
      ...(readyMade === undefined ? {} : { perTool: readyMade.perTool }),
      ...(port === undefined ? {} : { http: { port, host, ...(token === undefined ? {} : { auth: { verifyToken: staticTokenVerifier(token.value, { clientId: 'toolrun-serve-mcp' }) } }) } }),
    });
  } catch (error) {
    throw listenError(error, host, port) ?? error;
  }
  const where = readyMade === undefined ? '' : ` in ${readyMade.workspace}`;
  const what = `serving ${tools.length} tool${tools.length === 1 ? '' : 's'} (${tools.map((t) => t.name).join(', ')})${where}`;
  if (served.url === undefined) io.stderr.write(`toolrun: ${what} over stdio\n`);
  else {
    io.stdout.write(`toolrun: ${what} at ${served.url.href}\n`);
    // The token only on stderr, and only the one made here: one set in TOOLRUN_MCP_TOKEN is the user's already.
    if (token === undefined) io.stderr.write(`toolrun: no authorization (--no-auth): any local user or process can call these tools at ${served.url.href}\n`);
    else if (token.made) io.stderr.write(`toolrun: clients of ${served.url.href} must send Authorization: Bearer ${token.value} (set TOOLRUN_MCP_TOKEN to choose the token)\n`);
    else io.stderr.write(`toolrun: clients of ${served.url.href} must send Authorization: Bearer <the token in TOOLRUN_MCP_TOKEN>\n`);
  }

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

/**
 * The one line a `listen` failure of `--http` is reported with (bad input, exit 2): a busy
 * port, a port that needs privileges, an address that is not this machine's. `undefined` for
 * any other error.
 */
function listenError(error: unknown, host: string, port: number | undefined): CliInputError | undefined {
  if (port === undefined) return undefined;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const at = `serve-mcp: cannot listen on ${host}:${port}`;
  switch (code) {
    case 'EADDRINUSE':
      return new CliInputError(`${at}: the port is in use (another server?); pick another --http port, or --http 0 for any free one`);
    case 'EACCES':
      return new CliInputError(`${at}: permission denied (ports below 1024 need privileges); pick another --http port`);
    case 'EADDRNOTAVAIL':
      return new CliInputError(`${at}: ${host} is not an address of this machine (--host)`);
    case 'ENOTFOUND':
      return new CliInputError(`${at}: no host is named ${host} (--host)`);
    default:
      return undefined;
  }
}

/**
 * Imports `path` and returns its tools (default export array, or named exports that are
 * tools). `path` is a file (resolved against `from`), or, when no such file exists, a package
 * specifier resolved from `from` as `require.resolve` would.
 *
 * @param from - the folder paths and specifiers are resolved from. @default process.cwd()
 * @throws CliInputError when it cannot be found or imported, or exports no tool (the message
 *   says what to do when it exports tool factories, such as `toolrun/tools`).
 */
export async function loadTools(path: string, from: string = process.cwd()): Promise<Tool[]> {
  let module: Record<string, unknown>;
  try {
    module = (await import(pathToFileURL(locate(path, from)).href)) as Record<string, unknown>;
  } catch (error) {
    if (error instanceof CliInputError) throw error;
    const hint = (error as NodeJS.ErrnoException).code === 'ERR_UNKNOWN_FILE_EXTENSION' && /\.[mc]?ts$/.test(path) ? ' (this Node cannot import TypeScript: compile it to .js, or use Node >= 22.18)' : '';
    throw new CliInputError(`serve-mcp: cannot import ${path}: ${error instanceof Error ? error.message : String(error)}${hint}`);
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
  if (tools.length === 0) {
    const factories = Object.entries(module).filter(([key, value]) => key !== 'default' && typeof value === 'function').map(([key]) => key);
    if (factories.includes('codingTools') && factories.includes('shellTool')) {
      throw new CliInputError(
        `serve-mcp: ${path} is toolrun/tools, which exports functions that make tools (codingTools, shellTool…), not tools; serve the ready-made tools with: toolrun serve-mcp --tools ${READY_MADE_TOOL_NAMES.join(',')} --workspace <dir>`,
      );
    }
    const functions = factories.length === 0 ? '' : `; it exports functions (${factories.slice(0, 5).join(', ')}${factories.length > 5 ? '…' : ''}): if they make tools, export the tools they return`;
    throw new CliInputError(`serve-mcp: ${path} exports no tool (a default export array of tools, or named exports that are tools)${functions}`);
  }
  return tools;
}

/** The file `path` names: a file under `from`, else the package specifier resolved from `from`. */
function locate(path: string, from: string): string {
  const file = resolve(from, path);
  if (existsSync(file) || isAbsolute(path) || path.startsWith('.')) return file;
  try {
    return createRequire(join(from, 'package.json')).resolve(path);
  } catch {
    throw new CliInputError(`serve-mcp: ${path}: no such file, and no package of that name is installed in ${from}`);
  }
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
