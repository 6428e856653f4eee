/**
 * `npm start -- mcp [options] <command> [args...]`: runs one assistant message of tool calls
 * against the tools of any MCP server, live.
 *
 * 1. `<command> [args...]` is started as an MCP server over stdio (the MCP SDK's
 *    `StdioClientTransport`; the server gets the SDK's default environment — HOME, LOGNAME,
 *    PATH, SHELL, TERM, USER — plus the variables named with `--env`). When the command
 *    line is one `http://` or `https://` URL, the Streamable HTTP server there is used
 *    instead, with `Authorization: Bearer $TOOLRUN_MCP_TOKEN` when that variable is set and
 *    not empty (what `toolrun serve-mcp --http` asks for; the token is never printed).
 * 2. Its tools are listed (name and first line of the description) and turned into toolrun
 *    tools by `mcpTools`.
 * 3. The message: the calls in `--calls <file>` when given; otherwise one call per tool the
 *    server marks read-only (`annotations.readOnlyHint: true`), with example arguments
 *    derived from its input schema ({@link exampleArguments}). Tools not marked read-only
 *    are never called without `--calls`: example arguments to a tool that writes or
 *    deletes could do damage.
 * 4. The calls run through `runTools` in parallel, drawn by the live view; Ctrl+C aborts
 *    the run (the running MCP requests are cancelled with `notifications/cancelled`).
 * 5. The client is closed, which ends the server process.
 *
 * `--calls <file>` holds JSON: an array of `{ "name", "arguments"?, "id"? }` (tool names as
 * the server spells them; ids default to `call_1`, `call_2`…), or an assistant message in
 * one of the three provider formats (an Anthropic message with `tool_use` blocks, an OpenAI
 * Chat message or completion with `tool_calls`, a Responses `output` array or response).
 *
 * The MCP SDK's client is imported here (this module is loaded only for `toolrun mcp`);
 * `serve-mcp` loads its server side through `lib/mcp/`. The library's MCP client bridge
 * (`lib/mcp/client/tools.ts`) needs none of it.
 *
 * @module
 */
import type { ChildProcess } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, ListRootsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { ToolBatch } from '../core/run/events.ts';
import { fromAnthropic } from '../formats/anthropic.ts';
import { fromOpenAIChat } from '../formats/openai-chat.ts';
import { fromOpenAIResponses } from '../formats/openai-responses.ts';
import { mcpTools, type McpToolInfo } from '../mcp/client/tools.ts';
import { runTools } from '../core/run/run-tools.ts';
import type { ToolCall } from '../core/tool/tool.ts';
import { CliInputError } from './errors.ts';
import { count } from './text.ts';
import type { RunView } from './view/index.ts';
import { isObjectRecord } from '../core/values/guards.ts';

/** The text of `toolrun mcp --help`. */
const MCP_USAGE = `usage: toolrun mcp [options] [--] <command> [args...]
       toolrun mcp [options] <http://host:port/mcp>

Starts <command> as an MCP server over stdio (or connects to the Streamable HTTP server at
the URL, sending TOOLRUN_MCP_TOKEN as its bearer token when set), lists its tools, and runs
one assistant message of tool calls against them, live.

The message: the calls in --calls <file>, or else one call per tool the server marks
read-only (annotations.readOnlyHint), with example arguments derived from its input schema.
Tools not marked read-only are called only from --calls.

options:
  --calls <file>      JSON: [{"name", "arguments"?, "id"?}, ...], or an assistant message
                      (Anthropic tool_use, OpenAI Chat tool_calls, Responses output)
  --env <NAME[=VALUE]> pass an environment variable to the server (repeatable); it gets
                      only HOME, LOGNAME, PATH, SHELL, TERM, USER otherwise
  --timeout <ms>      how long to wait for the server to start and answer (default: 15000)
  --root <dir>        the folder offered to the server as its MCP root, where the example
                      calls' paths point (default: the current folder); a server that takes
                      roots (server-filesystem) serves it in place of folders in its arguments
  -h, --help          show this text

Everything from <command> on is the server's command line, as is (put -- before it when
it starts with -).

examples:
  toolrun mcp npx -y @modelcontextprotocol/server-everything stdio
  toolrun mcp npx -y @modelcontextprotocol/server-filesystem
  toolrun mcp --root /tmp --calls calls.json npx -y @modelcontextprotocol/server-filesystem
  toolrun mcp -- npx toolrun serve-mcp --tools read_file,grep,list_files --workspace .
(in a clone of toolrun: npm start -- mcp …)
`;

/** The parsed command line of `toolrun mcp`. */
export interface McpCommandLine {
  help: boolean;
  /** The server's command and its arguments. */
  command: string;
  args: string[];
  callsFile?: string;
  /** Variables for the server, besides the SDK's default environment. */
  env: Record<string, string>;
  /** Longest wait for the server to start (initialize), in ms. */
  timeoutMs: number;
  /** `--root`: the folder offered as the server's MCP root. */
  root?: string;
}

/** Default of `--timeout`, in ms. */
const DEFAULT_TIMEOUT_MS = 15_000;

/** The server's URL when the command line is one `http://` or `https://` URL (a Streamable HTTP server), else `undefined` (a command to start). */
function serverUrl(line: McpCommandLine): URL | undefined {
  if (line.args.length > 0 || !/^https?:\/\//i.test(line.command)) return undefined;
  try {
    return new URL(line.command);
  } catch {
    throw new CliInputError(`mcp: '${line.command}' is not a valid URL`);
  }
}

/**
 * Parses the arguments after `mcp`: options first, then the server's command line verbatim.
 *
 * @param environment - where `--env NAME` (without a value) is read from.
 * @throws CliInputError for an unknown option, an option without its value, a bad
 *   `--timeout`, `--env NAME` of an unset variable, or no command.
 */
export function parseMcpCommandLine(argv: readonly string[], environment: NodeJS.ProcessEnv = process.env): McpCommandLine {
  const line: McpCommandLine = { help: false, command: '', args: [], env: {}, timeoutMs: DEFAULT_TIMEOUT_MS };
  let i = 0;
  const value = (option: string): string => {
    const next = argv[i + 1];
    if (next === undefined) throw new CliInputError(`mcp: ${option} needs a value (see toolrun mcp --help)`);
    i++;
    return next;
  };
  for (; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      i++;
      break;
    }
    if (!arg.startsWith('-')) break;
    const [option, inline] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    switch (option) {
      case '-h':
      case '--help':
        line.help = true;
        break;
      case '--calls':
        line.callsFile = inline ?? value(option);
        break;
      case '--env': {
        const spec = inline ?? value(option);
        const eq = spec.indexOf('=');
        if (eq > 0) line.env[spec.slice(0, eq)] = spec.slice(eq + 1);
        else {
          const inherited = environment[spec];
          if (inherited === undefined) throw new CliInputError(`mcp: --env ${spec}: no such variable in this environment (use --env ${spec}=value)`);
          line.env[spec] = inherited;
        }
        break;
      }
      case '--root':
        line.root = inline ?? value(option);
        break;
      case '--timeout': {
        const text = inline ?? value(option);
        const ms = Number(text);
        if (text.trim() === '' || !Number.isFinite(ms) || ms <= 0) throw new CliInputError(`mcp: --timeout must be a number of ms > 0, received '${text}'`);
        line.timeoutMs = ms;
        break;
      }
      default:
        throw new CliInputError(`mcp: unknown option '${arg}' (put -- before the server command if it is the server's; see toolrun mcp --help)`);
    }
  }
  const [command, ...args] = argv.slice(i);
  if (!line.help && (command === undefined || command === '')) {
    throw new CliInputError('mcp needs the command of an MCP server: toolrun mcp [--calls file] <command> [args...]');
  }
  line.command = command ?? '';
  line.args = args;
  return line;
}

/** Options of {@link runMcpCommand}. */
export interface McpCommandOptions {
  /** Draws the run and the lines around it. */
  view: RunView;
  /** Aborts the run (Ctrl+C): running calls are cancelled, every call still gets its result. */
  signal: AbortSignal;
  /** Where `--env NAME` is read from. @default process.env */
  env?: NodeJS.ProcessEnv;
  /**
   * The folder offered to the server as its one MCP root (`roots/list`), and the one the
   * example arguments' paths point into.
   * @default process.cwd()
   */
  root?: string;
}

/**
 * Runs `toolrun mcp <argv>` (see the module comment) and resolves to the exit code: 0 when
 * the run completed (error results included), 130 when it was aborted.
 *
 * @throws CliInputError (exit 2) for a bad command line, an unreadable or malformed
 *   `--calls` file, or a server that cannot be started, exits before it answers (the
 *   message gives its exit code or signal), or does not answer `initialize` or
 *   `tools/list` within `--timeout` (the message names the option); the message ends with
 *   the last lines of the server's stderr.
 */
export async function runMcpCommand(argv: readonly string[], options: McpCommandOptions): Promise<number> {
  const { view, signal } = options;
  const line = parseMcpCommandLine(argv, options.env);
  if (line.help) {
    view.line(MCP_USAGE.trimEnd());
    return 0;
  }
  const given = line.callsFile === undefined ? undefined : await readCallsFile(line.callsFile);

  const shown = [line.command, ...line.args].join(' ');
  const stderrTail: string[] = [];
  const url = serverUrl(line);
  const token = url === undefined ? undefined : (options.env ?? process.env).TOOLRUN_MCP_TOKEN;
  const transport =
    url === undefined
      ? new StdioClientTransport({ command: line.command, args: line.args, env: { ...getDefaultEnvironment(), ...line.env }, stderr: 'pipe' })
      : new StreamableHTTPClientTransport(url, token === undefined || token === '' ? {} : { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  if (transport instanceof StdioClientTransport) {
    transport.stderr?.on('data', (chunk: Buffer) => {
      stderrTail.push(...chunk.toString('utf8').split('\n').filter((l) => l.trim() !== ''));
      stderrTail.splice(0, Math.max(0, stderrTail.length - 5));
    });
  }
  const exit = transport instanceof StdioClientTransport ? watchExit(transport) : () => undefined;
  // The folder it runs in is the server's one root (MCP roots): a server that works on files
  // and was given no folder of its own (server-filesystem without arguments) serves that one,
  // and the example calls aim inside it.
  const root = resolve(line.root ?? options.root ?? process.cwd());
  const client = new Client({ name: 'toolrun', version: '0.1.0' }, { capabilities: { roots: {} } });
  client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: pathToFileURL(root).href, name: basename(root) }] }));
  /** Why the server could not be used, as one line: what happened, how it exited, the end of its stderr, what to try. */
  const failure = (what: string, error: unknown): CliInputError => {
    const exited = exit();
    let why: string;
    if (isTimeout(error)) why = `it did not answer ${what} within ${line.timeoutMs} ms (a slow server may need more: --timeout <ms>)`;
    else if (exited !== undefined) why = `it exited before answering ${what} (${exited})`;
    else if (url !== undefined && /\b401\b|needs Authorization: Bearer|bearer token is not valid/.test(String(error))) {
      why = `it refused the bearer token (${token === undefined || token === '' ? 'none sent: set TOOLRUN_MCP_TOKEN' : 'TOOLRUN_MCP_TOKEN is not its token'})`;
    } else why = error instanceof Error ? error.message : String(error);
    const tail =
      stderrTail.length > 0 ? `; its stderr ends: ${stderrTail.join(' | ')}` : exited !== undefined || isTimeout(error) ? '; it wrote nothing on stderr' : '';
    return new CliInputError(`mcp: could not use '${shown}' as an MCP server: ${why}${tail}`);
  };
  try {
    try {
      await client.connect(transport, { timeout: line.timeoutMs, signal });
    } catch (error) {
      if (signal.aborted) {
        view.line(`interrupted: Ctrl+C before the MCP server '${shown}' answered initialize; no call was made`);
        return 130;
      }
      throw failure('initialize', error);
    }
    const server = client.getServerVersion();
    let listed: McpToolInfo[];
    try {
      listed = (await client.listTools(undefined, { signal, timeout: line.timeoutMs })).tools as McpToolInfo[];
    } catch (error) {
      if (signal.aborted) {
        view.line(`interrupted: Ctrl+C before the MCP server '${shown}' listed its tools; no call was made`);
        return 130;
      }
      throw failure('tools/list', error);
    }
    view.line(`MCP server ${server?.name ?? shown}${server?.version === undefined ? '' : ` ${server.version}`}: ${count(listed.length, 'tool')}`);
    for (const tool of listed) view.line(`  ${tool.name}${readOnly(tool) ? ' (read-only)' : ''}${describeLine(tool)}`);

    const calls = given ?? derivedCalls(listed, { directory: root, file: await someFile(root) });
    if (calls.length === 0) {
      view.line('No tool is marked read-only (annotations.readOnlyHint), so there is nothing to call with example arguments; pass --calls <file> to call tools.');
      return 0;
    }
    const tools = await mcpTools(client, { signal });
    const source = given === undefined ? 'read-only tools with example arguments' : `calls from ${line.callsFile}`;
    view.begin(`mcp: ${count(calls.length, 'parallel call')} (${source}) to ${server?.name ?? shown}`, calls);
    let batch: ToolBatch | undefined;
    try {
      const run = runTools(calls, { tools, signal });
      for (;;) {
        const step = await run.next();
        if (step.done === true) {
          batch = step.value;
          break;
        }
        view.event(step.value);
      }
    } finally {
      if (batch === undefined) view.end('the run stopped early');
      else {
        const totals = `${count(batch.messages.length, 'result')}, ${count(batch.messages.filter((m) => m.isError).length, 'error')}`;
        // The same words as the demo's summary.
        view.end(batch.aborted ? `interrupted: ${totals} (Ctrl+C aborted the run; every call still got its result)` : totals);
      }
    }
    return batch.aborted ? 130 : 0;
  } finally {
    await client.close();
  }
}

/**
 * Watches how the server process ends: returns a function that gives `exit code 3`,
 * `killed by SIGSEGV`, or `undefined` while it runs (or when the SDK's transport no longer
 * exposes its process). Why the transport's private `_process` is read: the SDK reports a
 * server that died only as "Connection closed", and the exit code is what tells a crash
 * from a wrong command; the field is read once, right after the process is spawned.
 */
function watchExit(transport: StdioClientTransport): () => string | undefined {
  let exited: string | undefined;
  const start = transport.start.bind(transport);
  transport.start = async () => {
    await start();
    const child = (transport as unknown as { _process?: ChildProcess })._process;
    child?.once('exit', (code, signal) => {
      exited = signal !== null ? `killed by ${signal}` : `exit code ${code ?? '?'}`;
    });
  };
  return () => exited;
}

/** True for the SDK's request timeout. */
function isTimeout(error: unknown): boolean {
  return error instanceof McpError && error.code === (ErrorCode.RequestTimeout as number);
}

/**
 * Example arguments for a JSON Schema, as a model might write them: every *required*
 * property gets, in this order of preference, its `default`, `const`, first `enum` value,
 * first `examples` value, or a value of its type — `"example"` for a string, its
 * `minimum` (else 1) for a number or integer, `false` for a boolean, `[]` for an array (one
 * example item when `minItems` ≥ 1), an object built the same way (recursively). The first
 * branch of `anyOf` / `oneOf` is used; optional properties are left out, so the server's
 * defaults apply.
 */
export function exampleArguments(schema: unknown, paths?: ExamplePaths): Record<string, unknown> {
  const value = exampleValue(schema, 0, paths === undefined ? undefined : { paths, name: '' });
  return isObjectRecord(value) ? value : {};
}

/**
 * Real paths for the example arguments of a tool that works on files: a string property
 * named like a path (`path`, `paths`, `file`, `directory`, `source`, …, with or without a
 * prefix such as `file_path`) gets `directory` when the tool's name says it works on
 * folders (list, tree, search, `dir`), else `file`, so a first try reads what is there
 * instead of failing on a made-up `"example"`.
 */
export interface ExamplePaths {
  directory: string;
  /** A file in `directory`; `directory` itself when it has none. */
  file: string;
  /** True when the tool works on folders (see above). */
  folders?: boolean;
}

const PATH_NAME = /(?:^|_|-|[a-z](?=[A-Z]))(?:path|paths|file|files|filename|dir|directory|folder|source|destination|root)$/i;

function exampleValue(schema: unknown, depth: number, fit?: { paths: ExamplePaths; name: string }): unknown {
  if (fit !== undefined && PATH_NAME.test(fit.name) && isObjectRecord(schema) && !('const' in schema) && !Array.isArray(schema.enum)) {
    const path = fit.paths.folders === true ? fit.paths.directory : fit.paths.file;
    if (schema.type === 'string') return path;
    if (schema.type === 'array' && isObjectRecord(schema.items) && schema.items.type === 'string') return [path];
  }
  if (!isObjectRecord(schema) || depth > 8) return 'example';
  if ('default' in schema) return schema.default;
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = schema[key];
    if (Array.isArray(branches) && branches.length > 0) return exampleValue(branches[0], depth + 1, fit);
  }
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  const type = types.find((t) => t !== 'null') ?? (isObjectRecord(schema.properties) ? 'object' : undefined);
  switch (type) {
    case 'string':
      return 'example';
    case 'number':
    case 'integer':
      return typeof schema.minimum === 'number' ? schema.minimum : 1;
    case 'boolean':
      return false;
    case 'array':
      return typeof schema.minItems === 'number' && schema.minItems > 0 ? [exampleValue(schema.items, depth + 1, fit === undefined ? undefined : { paths: fit.paths, name: '' })] : [];
    case 'object': {
      const properties = isObjectRecord(schema.properties) ? schema.properties : {};
      const required = Array.isArray(schema.required) ? schema.required.filter((name): name is string => typeof name === 'string') : [];
      return Object.fromEntries(required.map((name) => [name, exampleValue(properties[name], depth + 1, fit === undefined ? undefined : { paths: fit.paths, name })]));
    }
    case 'null':
      return null;
    default:
      return 'example';
  }
}

/** One call per read-only tool, ids `call_1`, `call_2`…, arguments from {@link exampleArguments}, paths in `paths`. */
function derivedCalls(tools: readonly McpToolInfo[], paths: ExamplePaths): ToolCall[] {
  return tools
    .filter(readOnly)
    .map((tool, i) => ({ id: `call_${i + 1}`, name: tool.name, arguments: exampleArguments(tool.inputSchema, { ...paths, folders: /list|tree|search|find|dir|folder/i.test(tool.name) }) }));
}

/** A file in `dir` for the example arguments (README first, else the first by name), else `dir` itself. */
async function someFile(dir: string): Promise<string> {
  try {
    const files = (await readdir(dir, { withFileTypes: true })).filter((entry) => entry.isFile()).map((entry) => entry.name).sort();
    const name = files.find((n) => /^readme(\.|$)/i.test(n)) ?? files[0];
    return name === undefined ? dir : join(dir, name);
  } catch {
    return dir;
  }
}

function readOnly(tool: McpToolInfo): boolean {
  return tool.annotations?.readOnlyHint === true;
}

function describeLine(tool: McpToolInfo): string {
  const text = (tool.description ?? tool.title ?? '').split('\n')[0]?.trim() ?? '';
  if (text === '') return '';
  return ` — ${text.length > 100 ? `${text.slice(0, 99)}…` : text}`;
}

/** Reads `--calls`: a list of `{ name, arguments?, id? }`, or an assistant message in a provider format. */
async function readCallsFile(file: string): Promise<ToolCall[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new CliInputError(`mcp: --calls ${file}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    throw new CliInputError(`mcp: --calls ${file}: not valid JSON (${(error as Error).message})`);
  }
  const bad = (what: string) => new CliInputError(`mcp: --calls ${file}: ${what}; expected [{"name", "arguments"?, "id"?}, ...] or an assistant message (see toolrun mcp --help)`);
  let calls: ToolCall[];
  if (Array.isArray(doc) && doc.every((item) => isObjectRecord(item) && item.type === 'function_call')) {
    calls = fromOpenAIResponses(doc);
  } else if (Array.isArray(doc)) {
    calls = doc.map((item, i) => {
      if (!isObjectRecord(item) || typeof item.name !== 'string' || item.name === '') throw bad(`entry ${i} has no "name"`);
      const call: ToolCall = { id: typeof item.id === 'string' ? item.id : `call_${i + 1}`, name: item.name };
      if (item.arguments !== undefined) call.arguments = item.arguments;
      return call;
    });
  } else if (isObjectRecord(doc) && Array.isArray(doc.content)) {
    calls = fromAnthropic(doc);
  } else if (isObjectRecord(doc) && ('tool_calls' in doc || Array.isArray(doc.choices) || isObjectRecord(doc.message))) {
    calls = fromOpenAIChat(doc);
  } else if (isObjectRecord(doc) && Array.isArray(doc.output)) {
    calls = fromOpenAIResponses(doc as { output: unknown[] });
  } else {
    throw bad('not a list of calls nor an assistant message');
  }
  if (calls.length === 0) throw bad('it holds no tool calls');
  return calls;
}
