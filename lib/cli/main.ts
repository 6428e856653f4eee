#!/usr/bin/env node
/**
 * The `toolrun` program (`npm start` in a checkout runs it with `node --import tsx`; an
 * installed package runs its compiled form).
 *
 * ```
 * toolrun [--approve | --deny]                 run the demo (in a temp folder it creates)
 * toolrun --resume <state file> [--approve | --deny]
 *                                              continue a demo that paused for approval
 * toolrun replay <file-or-folder> [--delay ms] replay recorded assistant messages
 * toolrun replay --stream [--event-delay ms] <file-or-folder>
 *                                              replay recorded streams: calls start mid-message
 * toolrun mcp [options] <command...>           run calls against an MCP server's tools
 * toolrun serve-mcp [options] [<module>]       serve a module's tools, or the ready-made ones
 *                                              (--tools), as an MCP server
 * toolrun agent                                a scripted agent with sub-agents, drawn as a tree
 * toolrun durable [options]                    a DBOS durable batch killed mid-way and recovered
 *                                              (lib/cli/durable.ts parses its own options)
 * toolrun --help
 * ```
 *
 * Exit codes: 0 done (a demo paused for approval included); the replay report's own code
 * for `replay`; 2 bad input (one line on stderr, `toolrun: <what and where>`); 1 an
 * unexpected error (one line, the stack with `TOOLRUN_DEBUG=1`); 130 interrupted with
 * Ctrl+C.
 *
 * {@link main} takes the arguments and an io object (stdout, stderr, environment, Ctrl+C,
 * exit), so it runs in-process as well; {@link runAsProgram} is the thin command-line
 * wrapper. The program never calls `process.exit()` on a normal path: it sets
 * `process.exitCode` and lets Node exit once nothing is left to do, so a leaked timer or
 * handle shows up as a hang in the specs instead of being hidden. The one exception is a
 * second Ctrl+C.
 *
 * @module
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { approvalHandler, decideAll, type ApprovalFlag, type Asking } from './approval-prompt.ts';
import { CliInputError } from './errors.ts';
import { oneLine, terminalSafe } from './text.ts';
import { createRunView } from './view/index.ts';
import type { RunView } from './view/index.ts';

/** Every command the program has, as `--help` lists them; the unknown-command error names them all. */
const COMMANDS = ['demo', 'replay', 'mcp', 'serve-mcp', 'agent', 'durable', 'inspect', 'help'] as const;

/** The text of `--help`. */
export const USAGE = `usage: toolrun [command] [options]

commands:
  demo (default)              run one assistant message of six parallel tool calls (shell,
                              read_file, grep, list_files) on a small project it writes to a
                              temp folder, live: they finish out of order, results come in order.
                              One call writes a file and needs your approval: on a terminal press
                              y (yes), n (no) or l (later: its state is saved to a file and the
                              program exits); elsewhere the run pauses and saves the file
  replay <file-or-folder>     run the tool calls of recorded conversations and compare the
                              results with what the recording's framework sent
                              (try: toolrun replay examples/recordings)
  mcp [options] <command...>  start <command> as an MCP server (stdio), list its tools, run one
                              message of calls to them, live (see toolrun mcp --help)
  serve-mcp [options] <module>
                              serve the tools a module exports, or the ready-made ones
                              (--tools shell,read_file,grep,list_files), as an MCP server:
                              stdio, or Streamable HTTP with --http <port>
                              (see toolrun serve-mcp --help)
  agent                       a scripted agent loop on the demo's project: a parent agent sends
                              two explorer sub-agents (grep, list_files, read_file); their calls
                              show live as a tree under the parent's calls
  durable [--database-url <url> | --postgres-bin <dir>]
                              a batch as a DBOS durable batch in a child process: the child is
                              killed (SIGKILL) mid-way and started again; calls replayed
                              from the journal are marked (see toolrun durable --help)
  inspect <log>               serve the timeline of a recorded event log (recordEvents of
                              toolrun/inspect) on 127.0.0.1; the address, with its token, is
                              printed; Ctrl+C stops it
  help                        show this text

options:
  --inspect                   demo, agent: serve the run's timeline live on 127.0.0.1 (address
                              printed; the page stays up after the run until Ctrl+C)
  --open                      inspect, --inspect: open the timeline in the desktop's browser
  --delay <ms>                replay: longest fake latency of one recorded tool body, so the
                              live view shows calls finishing out of order (default: 40; 0: none)
  --stream                    replay: replay the recorded streams event by event, so calls
                              start while the message is still streaming (streamed recordings only)
  --event-delay <ms>          replay --stream: time between two recorded events (default: 50;
                              recordings keep no timestamps)
  --approve, --deny           demo, --resume: answer every approval request yes / no without
                              asking
  --resume <state file>       continue a demo that paused for approval: the calls that ended
                              before the pause are not run again (asks again on a terminal;
                              elsewhere needs --approve or --deny)
  -h, --help                  show this text

Ctrl+C aborts the run (every call still gets its result, the summary says interrupted:);
press it again to quit at once.
Exit codes: 0 ok (a demo paused for approval too), 1 unexpected error, 2 bad input, 130 interrupted;
replay exits with its report's code.
Set TOOLRUN_DEBUG=1 to see the stack of an unexpected error.
`;

/**
 * Everything the program touches outside itself, so it can run in-process (specs, another
 * program) as well as from the command line ({@link runAsProgram}).
 */
export interface MainIo {
  /** Where runs, tables and `--help` go; a TTY gets the live view. */
  stdout: NodeJS.WriteStream;
  /** Where one-line errors go. */
  stderr: NodeJS.WriteStream;
  /**
   * Where approval answers are read from (one key, raw mode) when both it and stdout are
   * terminals.
   * @default process.stdin
   */
  stdin?: NodeJS.ReadStream;
  /** Read for `TOOLRUN_DEBUG` and `mcp --env NAME`. */
  env: NodeJS.ProcessEnv;
  /**
   * Subscribes `listener` to Ctrl+C and returns the unsubscribe function. The first Ctrl+C
   * aborts the run (every call still gets its result); a second one ends the program at once
   * through {@link MainIo.exit}.
   * @default process SIGINT
   */
  onInterrupt?: (listener: () => void) => () => void;
  /**
   * Ends the program at once with `code` (a second Ctrl+C only).
   * @default process.exit
   */
  exit?: (code: number) => void;
}

/** The {@link MainIo} of the real process. */
export function processIo(): MainIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: process.env,
    onInterrupt: (listener) => {
      process.on('SIGINT', listener);
      return () => process.off('SIGINT', listener);
    },
    exit: (code) => process.exit(code),
  };
}

/**
 * Runs the program with `argv` (the arguments after the script name) and resolves to its
 * exit code. Never throws: every error becomes one line on `io.stderr` and a code.
 *
 * Ctrl+C is listened to from the first moment (before any command module loads) until the
 * returned promise settles: a Ctrl+C at any point ends in the command's own summary and
 * exit code 130, never in a half-drawn screen.
 *
 * @example
 * ```ts
 * process.exitCode = await main(['replay', 'examples/recordings', '--delay', '50']);
 * ```
 */
export async function main(argv: readonly string[], io: MainIo = processIo()): Promise<number> {
  const interrupt = new Interrupt(io);
  try {
    return await dispatch(argv, io, interrupt);
  } catch (error) {
    if (isInputError(error)) {
      io.stderr.write(`toolrun: ${oneLine(error.message)}\n`);
      return 2;
    }
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    io.stderr.write(`toolrun: unexpected error: ${oneLine(message)} (run with TOOLRUN_DEBUG=1 for the stack)\n`);
    if (io.env.TOOLRUN_DEBUG === '1' && error instanceof Error && error.stack !== undefined) {
      io.stderr.write(`${terminalSafe(error.stack)}\n`);
    }
    return 1;
  } finally {
    interrupt.dispose();
  }
}

async function dispatch(argv: readonly string[], io: MainIo, interrupt: Interrupt): Promise<number> {
  // Everything after `mcp` is parsed by lib/cli/mcp.ts: the server's command line is not toolrun's.
  if (argv[0] === 'mcp') return await mcpCommand(argv.slice(1), io, interrupt);
  if (argv[0] === 'durable') {
    const durable = await import('./durable.ts');
    const child = io.env.TOOLRUN_DURABLE_CHILD;
    return child === undefined ? await durable.durableCommand(argv.slice(1), io) : await durable.durableChild(child);
  }
  if (argv[0] === 'serve-mcp') return await (await import('./serve-mcp.ts')).serveMcpCommand(argv.slice(1), io);
  const { values, positionals } = parseCommandLine(argv);
  const [command = 'demo', ...rest] = positionals;
  if (values.help === true || command === 'help') {
    io.stdout.write(USAGE);
    return 0;
  }
  if (values.approve === true && values.deny === true) throw new CliInputError('--approve and --deny cannot both be given');
  const flag: ApprovalFlag = values.approve === true ? 'approve' : values.deny === true ? 'deny' : undefined;
  if (command !== 'demo' && (flag !== undefined || values.resume !== undefined)) {
    throw new CliInputError(`--approve, --deny and --resume apply to the demo only, not to ${command} (see toolrun --help)`);
  }
  const inspect = values.inspect === true;
  if (inspect && command !== 'demo' && command !== 'agent') throw new CliInputError(`--inspect applies to the demo and agent only, not to ${command} (see toolrun --help)`);
  if (values.open === true && !inspect && command !== 'inspect') throw new CliInputError('--open applies to inspect and --inspect only (see toolrun --help)');
  switch (command) {
    case 'inspect': {
      const [file, ...extra] = rest;
      if (file === undefined || file === '') throw new CliInputError('inspect needs an event log: toolrun inspect <file.jsonl> [--open] (recordEvents of toolrun/inspect writes one)');
      expectNoMore(`inspect ${file}`, extra);
      const { inspectLogCommand } = await import('./inspect.ts');
      return await inspectLogCommand(file, { open: values.open === true, signal: interrupt.signal, line: (text) => io.stdout.write(`${text}\n`) });
    }
    case 'demo': {
      expectNoMore(command, rest);
      if (values.delay !== undefined) throw new CliInputError(`--delay applies to replay only, not to demo (see toolrun --help)`);
      if (values.stream === true || values['event-delay'] !== undefined) throw new CliInputError(`--stream and --event-delay apply to replay only (see toolrun --help)`);
      if (values.resume !== undefined) return await resumeCommand(values.resume, flag, io, interrupt);
      return await demoCommand(flag, io, interrupt, inspect ? { open: values.open === true } : undefined);
    }
    case 'replay': {
      const [target, ...extra] = rest;
      if (target === undefined || target === '') {
        throw new CliInputError(
          'replay needs a file or folder of recorded conversations: toolrun replay <file-or-folder> [--delay ms] (the package ships some: toolrun replay examples/recordings)',
        );
      }
      expectNoMore(`replay ${target}`, extra);
      const delayMs = values.delay === undefined ? undefined : parseDelay(values.delay);
      if (values['event-delay'] !== undefined && values.stream !== true) throw new CliInputError('--event-delay applies to replay --stream only (see toolrun --help)');
      const stream = values.stream === true ? { stream: true, ...(values['event-delay'] === undefined ? {} : { eventDelayMs: parseDelay(values['event-delay'], '--event-delay') }) } : {};
      return await replayCommand(target, delayMs, io, interrupt, stream);
    }
    case 'agent': {
      expectNoMore(command, rest);
      if (values.delay !== undefined || values.stream === true || values['event-delay'] !== undefined) throw new CliInputError('--delay, --stream and --event-delay apply to replay only (see toolrun --help)');
      return await agentCommand(io, interrupt, inspect ? { open: values.open === true } : undefined);
    }
    default:
      throw new CliInputError(`unknown command '${command}' (commands: ${COMMANDS.join(', ')}; see toolrun --help)`);
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
        approve: { type: 'boolean' },
        deny: { type: 'boolean' },
        resume: { type: 'string' },
        inspect: { type: 'boolean' },
        open: { type: 'boolean' },
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

/**
 * Runs the demo in a temp workspace it creates and removes (lib/cli/demo.ts); Ctrl+C aborts
 * it (130). Its call that writes a file is answered by the flag, asked about on a terminal,
 * or left pending: then the batch pauses, the state file is written and the way to resume
 * is printed (exit 0: pausing is a normal end).
 */
async function demoCommand(flag: ApprovalFlag, io: MainIo, interrupt: Interrupt, inspect?: { open: boolean }): Promise<number> {
  const { runDemo } = await import('./demo.ts');
  const live = inspect === undefined ? undefined : await import('./inspect.ts');
  return await interrupt.run(createRunView({ stream: io.stdout }), async (view, signal) => {
    const approve = approvalHandler(flag, asking(io, view, interrupt));
    const inspector = live === undefined ? undefined : await live.liveInspector('toolrun demo', { open: inspect!.open, line: (text) => view.line(text) });
    const outcome = await runDemo(view, { signal, ...(approve === undefined ? {} : { approve }), ...(inspector === undefined ? {} : { watch: (run) => inspector.watch(run, 'demo') }) });
    if (outcome.stateFile !== undefined) printResume(view, outcome.stateFile);
    if (inspector !== undefined) await live!.keepServing(inspector, signal, (text) => view.line(text));
    return outcome.batch.aborted ? 130 : 0;
  });
}

/**
 * `toolrun --resume <file>`: continues a paused demo. The pending requests are answered by
 * the flag or asked about on a terminal before anything runs; without either it is bad
 * input (exit 2), and the state file is left as it was. A state that cannot be resumed is
 * bad input too (one line with the ResumeError's code and message).
 */
async function resumeCommand(file: string, flag: ApprovalFlag, io: MainIo, interrupt: Interrupt): Promise<number> {
  const { readSavedDemo, resumeDemo } = await import('./demo.ts');
  const saved = await readSavedDemo(file);
  if (flag === undefined && !isTerminal(io)) {
    throw new CliInputError(`--resume needs --approve or --deny when not run on a terminal (nothing was run; ${file} is kept)`);
  }
  return await interrupt.run(createRunView({ stream: io.stdout }), async (view, signal) => {
    const ask = asking(io, view, interrupt);
    let outcome;
    try {
      outcome = await resumeDemo(view, file, saved, { signal, decide: (requests) => decideAll(requests, flag, ask, signal) });
    } catch (error) {
      // By name: the core's module is loaded by the command, not by the program's first lines.
      if (error instanceof Error && error.name === 'ResumeError') throw new CliInputError(`--resume: ${file} cannot be resumed (${(error as Error & { code: string }).code}): ${error.message}`);
      throw error;
    }
    if (outcome === undefined) {
      printResume(view, file);
      return signal.aborted ? 130 : 0;
    }
    if (outcome.stateFile !== undefined) printResume(view, outcome.stateFile);
    return outcome.batch.aborted ? 130 : 0;
  });
}

/** True when the program can ask: stdin and stdout are both terminals. */
function isTerminal(io: MainIo): boolean {
  return (io.stdout as Partial<NodeJS.WriteStream>).isTTY === true && (io.stdin ?? process.stdin).isTTY === true;
}

/** How to ask on this terminal, or `undefined` when the program cannot ask. */
function asking(io: MainIo, view: RunView, interrupt: Interrupt): Asking | undefined {
  return isTerminal(io) ? { stdin: io.stdin ?? process.stdin, view, interrupt: () => interrupt.press() } : undefined;
}

/**
 * The lines that say where the state is and how to continue: one command, the one that runs
 * this program — `npm start --` in a checkout (the program runs from its `.ts` source), `npx
 * toolrun` from an installed package — so the line stays short enough not to wrap.
 */
function printResume(view: RunView, file: string): void {
  const program = import.meta.url.endsWith('.ts') ? 'npm start --' : 'npx toolrun';
  view.line(`the paused run's state is saved in ${file}`);
  view.line(`resume it with:  ${program} --resume ${shellWord(file)}`);
  view.line('add --approve or --deny to answer without being asked');
}

/** `text` as one shell word: as it is when it is plain, else single-quoted. */
function shellWord(text: string): string {
  return /^[\w./:@%+=,-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}

/** Runs the agent demo (lib/cli/agent.ts); Ctrl+C aborts it (130). */
async function agentCommand(io: MainIo, interrupt: Interrupt, inspect?: { open: boolean }): Promise<number> {
  const { runAgentDemo } = await import('./agent.ts');
  const live = inspect === undefined ? undefined : await import('./inspect.ts');
  return await interrupt.run(createRunView({ stream: io.stdout }), async (view, signal) => {
    const inspector = live === undefined ? undefined : await live.liveInspector('toolrun agent', { open: inspect!.open, line: (text) => view.line(text) });
    const reason = (await runAgentDemo(view, { signal, ...(inspector === undefined ? {} : { inspector }) })).reason;
    if (inspector !== undefined) await live!.keepServing(inspector, signal, (text) => view.line(text));
    return reason === 'aborted' ? 130 : 0;
  });
}

/** Replays recordings, prints the report table, and returns the report's exit code; Ctrl+C stops the replay (130). */
async function replayCommand(
  target: string,
  delayMs: number | undefined,
  io: MainIo,
  interrupt: Interrupt,
  stream: { stream?: boolean; eventDelayMs?: number } = {},
): Promise<number> {
  const { replay, formatReportTable } = await import('./replay.ts');
  return await interrupt.run(createRunView({ stream: io.stdout }), async (view, signal) => {
    const report = await replay(target, delayMs === undefined ? { view, signal, ...stream } : { view, signal, delayMs, ...stream });
    view.line(formatReportTable(report));
    return signal.aborted ? 130 : report.exitCode;
  });
}

/** Runs `toolrun mcp …` (lib/cli/mcp.ts) and returns its exit code; Ctrl+C aborts the run (130). */
async function mcpCommand(argv: readonly string[], io: MainIo, interrupt: Interrupt): Promise<number> {
  const { runMcpCommand } = await import('./mcp.ts');
  return await interrupt.run(createRunView({ stream: io.stdout }), (view, signal) => runMcpCommand(argv, { view, signal, env: io.env }));
}

/** The line printed at the first Ctrl+C. */
export const CTRL_C_NOTICE = 'Ctrl+C: aborting the run (press Ctrl+C again to quit at once)';

/**
 * Ctrl+C for one {@link main} call, listened to from its start to its end.
 *
 * The first Ctrl+C aborts {@link Interrupt.signal}: running calls are interrupted and
 * every call still gets its result, and the command prints its summary. A second Ctrl+C
 * ends the program at once (130). Also aborts when stdout's reader goes away (EPIPE, e.g.
 * `toolrun | head -3`).
 */
class Interrupt {
  private readonly controller = new AbortController();
  private readonly unsubscribe: () => void;
  private firstAt = 0;
  /** The view of the command running now, which the notice goes through. */
  private view: RunView | undefined;
  private readonly onStdoutError = (error: NodeJS.ErrnoException): void => {
    if (error.code === 'EPIPE') this.controller.abort();
    else throw error;
  };

  constructor(private readonly io: MainIo) {
    this.unsubscribe = (io.onInterrupt ?? processIo().onInterrupt!)(() => this.press());
    // The reader of stdout went away: stop the run, nothing more can be shown. Why the
    // lifetime listener is never removed: a pipe can report EPIPE for writes made just
    // before the run ended, after main() settled; without a listener that would crash.
    if (!stdoutGuarded.has(io.stdout)) {
      stdoutGuarded.add(io.stdout);
      io.stdout.on('error', (error: NodeJS.ErrnoException) => {
        if (error.code !== 'EPIPE') throw error;
      });
    }
    io.stdout.on('error', this.onStdoutError);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /**
   * Runs `task` with `view` and the signal; the view is closed when `task` settles — after
   * the task printed its summary, so nothing the task wrote is cleared from the screen.
   */
  async run(view: RunView, task: (view: RunView, signal: AbortSignal) => Promise<number>): Promise<number> {
    this.view = view;
    try {
      if (this.signal.aborted) notify(view);
      return await task(view, this.signal);
    } finally {
      view.close();
      this.view = undefined;
    }
  }

  /** Ctrl+C: from the signal, or from a prompt that reads keys in raw mode (lib/cli/approval-prompt.ts). */
  press(): void {
    if (!this.controller.signal.aborted) {
      this.firstAt = Date.now();
      // Why the notice goes through the view: on a TTY a plain write would land inside the
      // live frame and be overwritten by its next redraw. Before a command has its view
      // (modules still loading) it is given to the view when the command starts (see run()),
      // which shows it with the run, under its title.
      if (this.view !== undefined) notify(this.view);
      this.controller.abort();
      return;
    }
    // Why the 300 ms window: under `npm start` one keypress reaches this process twice (from
    // the terminal, and relayed by npm); only a deliberate second press quits.
    if (Date.now() - this.firstAt < 300) return;
    this.view?.close();
    this.io.stderr.write('toolrun: interrupted twice, exiting without waiting for the tools\n');
    (this.io.exit ?? processIo().exit!)(130);
  }

  dispose(): void {
    this.unsubscribe();
    this.io.stdout.off('error', this.onStdoutError);
  }
}

/** Shows {@link CTRL_C_NOTICE} on `view`: as its notice (with the run), or as a line for a view without one. */
function notify(view: RunView): void {
  if (view.notice === undefined) view.line(CTRL_C_NOTICE);
  else view.notice(CTRL_C_NOTICE);
}

/** Streams that already carry the lifetime EPIPE listener of {@link Interrupt}. */
const stdoutGuarded = new WeakSet<NodeJS.WriteStream>();

function isInputError(error: unknown): error is Error {
  return error instanceof CliInputError || (error instanceof Error && error.name === 'CliInputError');
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

/**
 * The command-line entry: runs {@link main} with the process's arguments and sets
 * `process.exitCode` (the program never calls `process.exit()` on a normal path).
 */
export async function runAsProgram(): Promise<void> {
  process.exitCode = await main(process.argv.slice(2), processIo());
}

if (isEntryPoint()) await runAsProgram();
