/**
 * The program of `npm start` (`tsx lib/cli/main.ts`).
 *
 * ```
 * toolrun                                      run the demo
 * toolrun replay <file-or-folder> [--delay ms] replay recorded assistant messages
 * toolrun replay --stream [--event-delay ms] <file-or-folder>
 *                                              replay recorded streams: calls start mid-message
 * toolrun mcp [options] <command...>           run calls against an MCP server's tools
 * toolrun agent                                a scripted agent with sub-agents, drawn as a tree
 * toolrun --help
 * ```
 *
 * Exit codes: 0 done; the replay report's own code for `replay`; 2 bad input (one line on
 * stderr, `toolrun: <what and where>`); 1 an unexpected error (one line, the stack with
 * `TOOLRUN_DEBUG=1`); 130 the demo was interrupted with Ctrl+C.
 *
 * The program never calls `process.exit()` on a normal path: it sets `process.exitCode` and
 * lets Node exit once nothing is left to do, so a leaked timer or handle shows up as a hang
 * in the specs instead of being hidden. The one exception is a second Ctrl+C.
 *
 * @module
 */
import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { CliInputError } from './errors.ts';
import { createRunView } from './live-view.ts';
import type { RunView } from './view.ts';

/** The text of `--help`. */
export const USAGE = `usage: toolrun [command] [options]

commands:
  demo (default)              run one assistant message of parallel tool calls (read_file,
                              grep, list_files, shell) against this repository, live
  replay <file-or-folder>     run the tool calls of recorded conversations and compare the
                              results with what the recording's framework sent
  mcp [options] <command...>  start <command> as an MCP server (stdio), list its tools, run one
                              message of calls to them, live (see toolrun mcp --help)
  agent                       a scripted agent loop against this repository: a parent agent
                              sends two explorer sub-agents (grep, list_files, read_file); their
                              calls show live as a tree under the parent's calls
  help                        show this text

options:
  --delay <ms>                replay: longest fake latency of one recorded tool body, so the
                              live view shows calls finishing out of order (default: 40; 0: none)
  --stream                    replay: replay the recorded streams event by event, so calls
                              start while the message is still streaming (streamed recordings only)
  --event-delay <ms>          replay --stream: time between two recorded events (default: 50;
                              recordings keep no timestamps)
  -h, --help                  show this text

Ctrl+C during the demo aborts the run (every call still gets its result); press it again to quit.
Exit codes: 0 ok, 1 unexpected error, 2 bad input, 130 interrupted; replay exits with its report's code.
Set TOOLRUN_DEBUG=1 to see the stack of an unexpected error.
`;

/** Where the program writes; injectable so a caller can run it in-process. */
export interface MainIo {
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  env: NodeJS.ProcessEnv;
}

/** The repository root, found from this file's location (`lib/cli/main.ts`). */
export const repoRoot: string = resolve(fileURLToPath(new URL('../../', import.meta.url)));

/**
 * Runs the program with `argv` (the arguments after the script name) and resolves to its
 * exit code. Never throws: every error becomes one line on `io.stderr` and a code.
 *
 * @example
 * ```ts
 * process.exitCode = await main(['replay', 'corpus/anthropic', '--delay', '50']);
 * ```
 */
export async function main(argv: readonly string[], io: MainIo = { stdout: process.stdout, stderr: process.stderr, env: process.env }): Promise<number> {
  try {
    return await dispatch(argv, io);
  } catch (error) {
    if (isInputError(error)) {
      io.stderr.write(`toolrun: ${oneLine(error.message)}\n`);
      return 2;
    }
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    io.stderr.write(`toolrun: unexpected error: ${oneLine(message)} (run with TOOLRUN_DEBUG=1 for the stack)\n`);
    if (io.env.TOOLRUN_DEBUG === '1' && error instanceof Error && error.stack !== undefined) {
      io.stderr.write(`${error.stack}\n`);
    }
    return 1;
  }
}

async function dispatch(argv: readonly string[], io: MainIo): Promise<number> {
  // Everything after `mcp` is parsed by lib/cli/mcp.ts: the server's command line is not toolrun's.
  if (argv[0] === 'mcp') return await mcpCommand(argv.slice(1), io);
  if (argv[0] === 'serve-mcp') return await (await import('./serve-mcp.ts')).serveMcpCommand(argv.slice(1), io);
  const { values, positionals } = parseCommandLine(argv);
  const [command = 'demo', ...rest] = positionals;
  if (values.help === true || command === 'help') {
    io.stdout.write(USAGE);
    return 0;
  }
  switch (command) {
    case 'demo': {
      expectNoMore(command, rest);
      if (values.delay !== undefined) throw new CliInputError(`--delay applies to replay only, not to demo (see toolrun --help)`);
      if (values.stream === true || values['event-delay'] !== undefined) throw new CliInputError(`--stream and --event-delay apply to replay only (see toolrun --help)`);
      return await demoCommand(io);
    }
    case 'replay': {
      const [target, ...extra] = rest;
      if (target === undefined || target === '') {
        throw new CliInputError('replay needs a file or folder of recordings: toolrun replay <file-or-folder> [--delay ms]');
      }
      expectNoMore(`replay ${target}`, extra);
      const delayMs = values.delay === undefined ? undefined : parseDelay(values.delay);
      if (values['event-delay'] !== undefined && values.stream !== true) throw new CliInputError('--event-delay applies to replay --stream only (see toolrun --help)');
      const stream = values.stream === true ? { stream: true, ...(values['event-delay'] === undefined ? {} : { eventDelayMs: parseDelay(values['event-delay'], '--event-delay') }) } : {};
      return await replayCommand(target, delayMs, io, stream);
    }
    case 'agent': {
      expectNoMore(command, rest);
      if (values.delay !== undefined || values.stream === true || values['event-delay'] !== undefined) throw new CliInputError('--delay, --stream and --event-delay apply to replay only (see toolrun --help)');
      return await agentCommand(io);
    }
    default:
      throw new CliInputError(`unknown command '${command}' (commands: demo, replay, mcp, agent, help; see toolrun --help)`);
  }
}

/** `node:util` parseArgs, with its errors turned into one-line {@link CliInputError}s. */
function parseCommandLine(argv: readonly string[]) {
  try {
    return parseArgs({
      args: [...argv],
      options: {
        help: { type: 'boolean', short: 'h' },
        delay: { type: 'string' },
        stream: { type: 'boolean' },
        'event-delay': { type: 'string' },
      },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_')) {
      // parseArgs messages add advice about '--' after the first sentence; keep the first.
      const first = (error as Error).message.split(/\.\s/)[0] ?? (error as Error).message;
      throw new CliInputError(`${first.charAt(0).toLowerCase()}${first.slice(1)} (see toolrun --help)`);
    }
    throw error;
  }
}

function expectNoMore(after: string, extra: readonly string[]): void {
  if (extra.length > 0) throw new CliInputError(`unexpected argument '${extra[0]}' after '${after}' (see toolrun --help)`);
}

function parseDelay(text: string, option = '--delay'): number {
  const ms = Number(text);
  if (text.trim() === '' || !Number.isFinite(ms) || ms < 0) {
    throw new CliInputError(`${option} must be a number of ms >= 0, received '${text}'`);
  }
  return ms;
}

/** Runs the demo; Ctrl+C aborts it (see {@link withCtrlC}). */
async function demoCommand(io: MainIo): Promise<number> {
  const { runDemo } = await import('./demo.ts');
  const view = createRunView({ stream: io.stdout });
  try {
    return await withCtrlC(view, io, async (signal) => {
      const batch = await runDemo(view, { root: repoRoot, signal });
      return batch.aborted ? 130 : 0;
    });
  } finally {
    view.close();
  }
}

/** Runs the agent demo (lib/cli/agent.ts); Ctrl+C aborts it (130). */
async function agentCommand(io: MainIo): Promise<number> {
  const { runAgentDemo } = await import('./agent.ts');
  const view = createRunView({ stream: io.stdout });
  try {
    return await withCtrlC(view, io, async (signal) => ((await runAgentDemo(view, { root: repoRoot, signal })).reason === 'aborted' ? 130 : 0));
  } finally {
    view.close();
  }
}

/** Replays recordings, prints the report table, and returns the report's exit code; Ctrl+C stops the replay. */
async function replayCommand(target: string, delayMs: number | undefined, io: MainIo, stream: { stream?: boolean; eventDelayMs?: number } = {}): Promise<number> {
  const { replay, formatReportTable } = await import('./replay.ts');
  const view: RunView = createRunView({ stream: io.stdout });
  try {
    return await withCtrlC(view, io, async (signal) => {
      const report = await replay(target, delayMs === undefined ? { view, signal, ...stream } : { view, signal, delayMs, ...stream });
      view.line(formatReportTable(report));
      return signal.aborted ? 130 : report.exitCode;
    });
  } finally {
    view.close();
  }
}

/** Runs `toolrun mcp …` (lib/cli/mcp.ts) and returns its exit code; Ctrl+C aborts the run. */
async function mcpCommand(argv: readonly string[], io: MainIo): Promise<number> {
  const { runMcpCommand } = await import('./mcp.ts');
  const view = createRunView({ stream: io.stdout });
  try {
    return await withCtrlC(view, io, (signal) => runMcpCommand(argv, { view, signal, env: io.env }));
  } finally {
    view.close();
  }
}

/**
 * Runs `task` with a signal that the first Ctrl+C (SIGINT) aborts: running calls are
 * interrupted and every call still gets its result. A second Ctrl+C exits at once (130).
 * Also aborts when stdout's reader goes away (EPIPE, e.g. `npm start | head -3`).
 * Both listeners are removed when `task` settles.
 */
async function withCtrlC(view: RunView, io: MainIo, task: (signal: AbortSignal) => Promise<number>): Promise<number> {
  const controller = new AbortController();
  let firstAt = 0;
  const onSigint = (): void => {
    if (!controller.signal.aborted) {
      firstAt = Date.now();
      view.line('Ctrl+C: aborting the run (press Ctrl+C again to quit at once)');
      controller.abort();
      return;
    }
    // Why the 300 ms window: under `npm start` one keypress can reach this process twice
    // (from the terminal and relayed by npm/tsx); only a deliberate second press quits.
    if (Date.now() - firstAt < 300) return;
    view.close();
    io.stderr.write('toolrun: interrupted twice, exiting without waiting for the tools\n');
    process.exit(130);
  };
  // The reader of stdout went away (`npm start | head -3`): stop the run, nothing more can
  // be shown. Why this listener is never removed: a pipe can report EPIPE for writes made
  // just before the run ended, after `task` settled; without a listener that would crash.
  const onStdoutError = (error: NodeJS.ErrnoException): void => {
    if (error.code === 'EPIPE') controller.abort();
    else throw error;
  };
  if (!stdoutGuarded.has(io.stdout)) {
    stdoutGuarded.add(io.stdout);
    io.stdout.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
    });
  }
  process.on('SIGINT', onSigint);
  io.stdout.on('error', onStdoutError);
  try {
    return await task(controller.signal);
  } finally {
    process.off('SIGINT', onSigint);
    io.stdout.off('error', onStdoutError);
  }
}

/** Streams that already carry the lifetime EPIPE listener of {@link withCtrlC}. */
const stdoutGuarded = new WeakSet<NodeJS.WriteStream>();

function isInputError(error: unknown): error is Error {
  return error instanceof CliInputError || (error instanceof Error && error.name === 'CliInputError');
}

function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, ' ').trim();
}

/** True when this module is the program being run (not imported by a spec or another module). */
function isEntryPoint(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  process.exitCode = await main(process.argv.slice(2));
}
