/**
 * The `shell` tool: runs a command with `/bin/sh -c` in an OS sandbox (bubblewrap, by
 * default) and its own process group, streams its output as progress, bounds what it keeps,
 * and kills everything it started on abort or timeout.
 *
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import * as v from 'valibot';
import { describeValue } from '../core/tool.ts';
import type { Tool, ToolResult } from '../core/tool.ts';
import { BoundedOutput } from './bounded-output.ts';
import { SANDBOX_TMP, ShellSandbox, warnSandboxUnavailable } from './sandbox.ts';
import type { SandboxedSpawn, ShellSandboxOptions } from './sandbox.ts';
import { defineTool } from '../core/define-tool.ts';

/** Options of {@link shellTool}. */
export interface ShellToolOptions {
  /**
   * Directory the command runs in; resolved when the tool is created.
   * @default process.cwd()
   */
  cwd?: string;
  /**
   * The tool's own time limit per command, in ms: when it runs out the process group is
   * killed and the result says so (it is a normal result, not a throw). A model may ask for a
   * different limit per call with the `timeoutMs` input field. The runtime's per-call timeout
   * (`Tool.timeoutMs`, `runTools({ timeoutMs })`) applies independently through `ctx.signal`.
   * @default none
   */
  timeoutMs?: number;
  /**
   * The most bytes of combined stdout and stderr kept for the result: the first half and the
   * last half are kept, the middle is replaced by a marker stating how many bytes were cut
   * (case C20). Progress still carries every chunk.
   * @default 65536 (64 KiB)
   */
  maxOutputBytes?: number;
  /**
   * After `SIGTERM` to the process group, how long (ms) to wait for the group to end before
   * sending `SIGKILL` (process-group kill: case C9). `0` sends `SIGKILL` at once.
   * @default 2000
   */
  killGraceMs?: number;
  /**
   * When the shell has exited but a process it left in the background still holds its output
   * open (`server &` without a redirect), how long (ms) to keep reading before the result is
   * returned anyway. Without this limit such a command would never end.
   * @default 1000
   */
  exitDrainMs?: number;
  /**
   * More host environment variables to pass to the command, on top of
   * {@link DEFAULT_SHELL_ENV}: exact names, or prefixes ending in `*` (e.g. `'npm_config_*'`).
   * Read from `process.env` at each call. Ignored when `env` is given.
   * @default []
   */
  passEnv?: readonly string[];
  /**
   * The command's whole environment, used instead of the allowlist (neither
   * {@link DEFAULT_SHELL_ENV} nor `passEnv` is added). Pass `process.env` to give the command
   * the host's whole environment, API keys included, knowing that the model chooses the
   * command.
   * @default the host's variables named in DEFAULT_SHELL_ENV and passEnv
   */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * The OS sandbox every command runs in (Linux, bubblewrap): its own PID namespace and
   * `/proc`, no network, the system directories read-only with secret files hidden, writes
   * only to `cwd` and a private `/tmp`, a bound on processes. Options change that policy
   * ({@link ShellSandboxOptions}); `false` runs commands directly on the host, as the host
   * user, seeing everything that user sees. Where the sandbox cannot start (no bubblewrap,
   * no user namespaces, macOS, Windows) every call is refused with an error result saying
   * so, and a `ToolrunWarning` is emitted once; {@link shellSandboxStatus} tells ahead.
   * Inside the sandbox, `HOME` and `TMPDIR` taken from the host's environment point to the
   * private `/tmp` (an explicit `env` is left as given).
   * @default {} (on, with the default policy)
   */
  sandbox?: ShellSandboxOptions | false;
}

/**
 * The host environment variables a `shell` command gets by default (issue 12: the model
 * is untrusted, so API keys and tokens in the host's environment are not passed): what
 * tools need to find programs, the home directory, the locale, the terminal type, the
 * temp directory and the time zone. A name ending in `*` is a prefix.
 */
export const DEFAULT_SHELL_ENV: readonly string[] = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'LANGUAGE',
  'LC_*',
  'TERM',
  'TMPDIR',
  'TZ',
];

/**
 * The variable every command gets, holding an id of its call: processes that leave the
 * process group (`setsid`) or lose their parent keep it in their environment, so they can
 * still be found and killed on abort or timeout.
 */
export const SHELL_CALL_ENV = 'TOOLRUN_SHELL_CALL';

/** The environment for one command: the allowlist from `process.env`, or `env` as given. */
function commandEnv(passEnv: readonly string[], env: Readonly<Record<string, string | undefined>> | undefined, sandboxed: boolean): NodeJS.ProcessEnv {
  const out = hostEnv(passEnv, env);
  // The host's home and temp directories are not in the sandbox: point them at its private /tmp.
  if (sandboxed && env === undefined) {
    if (out.HOME !== undefined) out.HOME = SANDBOX_TMP;
    if (out.TMPDIR !== undefined) out.TMPDIR = SANDBOX_TMP;
  }
  return out;
}

function hostEnv(passEnv: readonly string[], env: Readonly<Record<string, string | undefined>> | undefined): NodeJS.ProcessEnv {
  if (env !== undefined) return { ...env };
  const names = [...DEFAULT_SHELL_ENV, ...passEnv];
  const exact = new Set(names.filter((name) => !name.endsWith('*')));
  const prefixes = names.filter((name) => name.endsWith('*')).map((name) => name.slice(0, -1));
  const out: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && (exact.has(name) || prefixes.some((prefix) => name.startsWith(prefix)))) out[name] = value;
  }
  return out;
}

/** One chunk of output, yielded as progress as soon as it arrives. */
export interface ShellProgress {
  stream: 'stdout' | 'stderr';
  text: string;
}

/**
 * Why the tool killed the process group:
 * - `'timeout'`: the tool's own limit (`options.timeoutMs` or the `timeoutMs` input);
 * - `'run-timeout'`: `ctx.signal` was aborted with a `TimeoutError` reason (the runtime's per-call timeout);
 * - `'aborted'`: `ctx.signal` was aborted for any other reason (the run was aborted).
 */
export type ShellKillReason = 'timeout' | 'run-timeout' | 'aborted';

/** The `details` of a `shell` result. */
export interface ShellDetails {
  /** The shell's exit code; `null` when it ended by a signal (or could not be read). */
  exitCode: number | null;
  /** The signal that ended the shell, by name (`NodeJS.Signals`, e.g. `'SIGTERM'`; typed `string` so the declarations need no @types/node), or `null`. */
  signal: string | null;
  /** True when the tool killed the process group (timeout or abort). */
  killed: boolean;
  /**
   * True when the command ran in the OS sandbox (`options.sandbox`). Sandboxed, `exitCode` is
   * what the sandbox reports: the shell's exit code, or 128 + the signal number when a signal
   * ended the shell (as `sh` reports `$?`); `signal` is set only when the sandbox itself was
   * ended by one (`SIGKILL` after `killGraceMs`).
   */
  sandboxed: boolean;
  /** Why it was killed, or `null`. */
  killReason: ShellKillReason | null;
  /** True when `SIGTERM` was not enough and the group was sent `SIGKILL` after `killGraceMs`. */
  forcedKill: boolean;
  /** Bytes of output left out of the result text (0 when nothing was cut; case C20). */
  truncatedBytes: number;
  /** Bytes of output the command produced, stdout and stderr together. */
  outputBytes: number;
  /** Wall time from spawn to the end of the output, in ms. */
  durationMs: number;
  /**
   * Processes the command started that were still alive after `SIGKILL` (pids; e.g. another
   * user's `setuid` program, or one that dropped the call's id from its environment after
   * leaving the process group and losing its parent). Empty when the call was not killed or
   * everything it started is gone; always empty on platforms without `/proc`, where only the
   * process group is killed. Only here: the result text gives their number (pids are host details). Sandboxed,
   * none can outlive the sandbox (its PID namespace ends with it), so it stays empty.
   */
  survivors: number[];
}

/** The input a `shell` call takes. */
export const shellInput = v.strictObject({
  command: v.pipe(
    v.string(),
    v.minLength(1),
    v.description(
      'The command line, run with /bin/sh -c in the workspace directory, e.g. "npm test 2>&1 | tail -n 40". ' +
        'stdin is closed, so interactive commands fail instead of waiting.',
    ),
  ),
  timeoutMs: v.optional(
    v.pipe(
      v.number(),
      v.integer(),
      v.minValue(1),
      v.description('Kill the command if it runs longer than this many milliseconds. Defaults to the tool\'s own limit.'),
    ),
  ),
});

/** The validated input of a `shell` call. */
export type ShellInput = v.InferOutput<typeof shellInput>;

/** The `shell` tool's type. */
export type ShellTool = Tool<ShellInput, ShellProgress, ToolResult<ShellDetails>, 'shell'>;

/**
 * Creates the `shell` tool.
 *
 * Each call spawns `/bin/sh -c command` with stdin ignored, as the leader of a new process
 * group (`detached: true`), inside the OS sandbox of `options.sandbox` (on by default: its
 * own PID namespace and `/proc`, no network, the system read-only with secrets hidden,
 * writes to `cwd` and a private `/tmp` only, a bound on processes; see
 * {@link ShellSandboxOptions} and docs/tools.md "The shell's sandbox"). Where that sandbox
 * cannot start, the call throws (an error result for the model, saying the command was not
 * run and why) and nothing runs; `sandbox: false` opts out. The model chooses the command, so it does not get the host's
 * environment: only the variables named in {@link DEFAULT_SHELL_ENV} and `passEnv` (or
 * exactly `env`), plus {@link SHELL_CALL_ENV}. It is an async generator: stdout and stderr chunks are yielded
 * as {@link ShellProgress} while the command runs. When the consumer falls behind, up to
 * about 1 MiB of progress is queued, then the pipes are paused until it catches up (once a
 * kill has begun the pipes are never paused, and progress beyond that bound is dropped).
 *
 * When `ctx.signal` is aborted, or the tool's own timeout runs out, every process the command
 * started gets `SIGTERM`, then `SIGKILL` if any of them is still alive after `killGraceMs`:
 * the process group (`process.kill(-pid)`) and, on Linux, the processes that left it
 * (`setsid`, double forks), found through `/proc` by parent pid and by the call's id in their
 * environment before anything is signalled; any that outlive `SIGKILL` are listed in
 * `details.survivors` and in the text. The call then waits for the output to close and returns a normal result
 * saying it was killed and why, with the output so far (case C9: stop the actual work, and
 * say so honestly). If the consumer closes the generator early (`return()`), its `finally`
 * kills the group the same way. No listener stays on `ctx.signal` and no timer keeps running
 * after the call.
 *
 * A non-zero exit code is a normal result, not a throw (`grep` finding nothing exits 1:
 * case C2). The result text is the combined output, bounded to `maxOutputBytes` (case C20),
 * followed by a status line such as `[exit code 1]` or `[killed: ...]`.
 *
 * Throws (the runtime turns it into an error result for the model) only when the call
 * cannot start: `ctx.signal` already aborted (nothing is spawned), the sandbox is
 * unavailable, or `/bin/sh` cannot be spawned (e.g. `cwd` does not exist).
 *
 * Unsandboxed, processes the command leaves in the background after a normal exit are not
 * killed; if they keep the output open, reading stops after `exitDrainMs` and the result
 * says so. Sandboxed, they end with the command (its PID namespace ends when its shell exits).
 *
 * @throws RangeError at creation when an option is not a valid number of ms or bytes, or a
 *   sandbox option is invalid.
 * @example
 * ```ts
 * // The command also gets NODE_ENV and the npm_config_* variables; API keys stay out.
 * // Sandboxed (the default), with the host's network for `npm install`.
 * const shell = shellTool({ cwd: '/repo', timeoutMs: 120_000, passEnv: ['NODE_ENV', 'npm_config_*'], sandbox: { network: 'host' } });
 * const batch = runTools(calls, { tools: [shell] });
 * ```
 */
export function shellTool(options: ShellToolOptions = {}): ShellTool {
  const cwd = path.resolve(options.cwd ?? process.cwd());
  const defaultTimeoutMs = options.timeoutMs;
  const maxOutputBytes = options.maxOutputBytes ?? 64 * 1024;
  const killGraceMs = options.killGraceMs ?? 2000;
  const exitDrainMs = options.exitDrainMs ?? 1000;
  const passEnv = [...(options.passEnv ?? [])];
  const env = options.env === undefined ? undefined : { ...options.env };
  if (defaultTimeoutMs !== undefined) checkNumber('timeoutMs', defaultTimeoutMs, 1);
  checkNumber('maxOutputBytes', maxOutputBytes, 1, true);
  checkNumber('killGraceMs', killGraceMs, 0);
  checkNumber('exitDrainMs', exitDrainMs, 0);
  const sandbox = options.sandbox === false ? undefined : new ShellSandbox(options.sandbox ?? {}, cwd);
  const confinement =
    sandbox === undefined
      ? ''
      : `It runs in a sandbox: files outside ${cwd} are read-only or absent, the temp directory is private and empty at each call, ` +
        `${options.sandbox !== false && options.sandbox?.network === 'host' ? '' : 'there is no network, '}and background processes end with the command. `;

  return defineTool<typeof shellInput, ShellProgress, ToolResult<ShellDetails>, 'shell'>({
    name: 'shell',
    description:
      `Run a shell command (/bin/sh -c) in ${cwd} and get its combined stdout and stderr plus its exit code. ` +
      `Output over ${maxOutputBytes} bytes is cut in the middle. A non-zero exit code is reported, not treated as a ` +
      `failure. ${confinement}Long-running commands are killed on timeout; redirect background processes to a file.`,
    input: shellInput,
    async *execute(input, { signal }) {
      // Nothing runs after an abort: no side effects once the run is cancelled.
      signal.throwIfAborted();
      let launch: SandboxedSpawn | undefined;
      if (sandbox !== undefined) {
        const status = await sandbox.status();
        if (!status.available) {
          warnSandboxUnavailable(status.reason);
          throw new Error(SANDBOX_UNAVAILABLE);
        }
        signal.throwIfAborted();
        // bwrap would report a missing workspace in its own words, as a command's output.
        if (!isDirectory(cwd)) throw new Error(`shell: could not start /bin/sh in ${cwd}: the directory does not exist`);
        launch = sandbox.spawnFor(input.command);
      }
      const limitMs = input.timeoutMs ?? defaultTimeoutMs;
      const started = performance.now();
      const proc = new ShellProcess(input.command, {
        cwd,
        maxOutputBytes,
        exitDrainMs,
        env: commandEnv(passEnv, env, launch !== undefined),
        launch,
      });
      const onAbort = (): void => proc.kill(isTimeoutReason(signal.reason) ? 'run-timeout' : 'aborted', killGraceMs);
      signal.addEventListener('abort', onAbort, { once: true });
      const timer = limitMs === undefined ? undefined : setTimeout(() => proc.kill('timeout', killGraceMs), limitMs);
      try {
        for (;;) {
          const item = proc.take();
          if (item !== undefined) {
            yield item;
            continue;
          }
          if (proc.isClosed) break;
          await proc.changed();
        }
        const durationMs = Math.round(performance.now() - started);
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        // The group may still be ending after the output closed; finish the escalation so
        // that no timer outlives the call and the result says what really happened.
        await proc.killDone;
        if (proc.spawnError !== undefined) {
          throw new Error(`shell: could not start /bin/sh in ${cwd}: ${proc.spawnError.message}`);
        }
        return buildResult(proc, { durationMs, limitMs, killGraceMs, exitDrainMs, reason: signal.reason });
      } finally {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        if (!proc.isClosed) {
          // The consumer left early (return() or throw() at a yield): take the group down too.
          proc.kill('aborted', killGraceMs);
          proc.discardProgress();
          await proc.closed;
        }
        await proc.killDone;
        await launch?.release();
      }
    },
  });
}

/** Progress queued beyond this many chars pauses the pipes (backpressure)… */
const QUEUE_HIGH_CHARS = 1024 * 1024;
/** …until the consumer has taken the queue down to this many. */
const QUEUE_LOW_CHARS = 256 * 1024;
/** The same for the number of queued chunks (tiny interleaved chunks). */
const QUEUE_MAX_ITEMS = 1024;
/** Adjacent chunks of one stream are merged into one progress item up to this size. */
const COALESCE_CHARS = 64 * 1024;
/** How often the group is checked while it is given its grace period, in ms. */
const GROUP_POLL_MS = 50;
/** After `SIGKILL`, how many times (10 ms apart) the processes are looked for and killed again before the rest count as survivors. */
const KILL_CONFIRM_ROUNDS = 100;

/**
 * One running command: the child, its output, its progress queue, and the kill sequence.
 *
 * States only move forward: running → (killing) → closed. `isClosed` means the child's
 * `'close'` event came (exit plus end of both pipes); after it, `exitCode`/`exitSignal` are final.
 */
class ShellProcess {
  readonly child: ChildProcess;
  readonly output: BoundedOutput;
  /** Resolves on the child's `'close'`. */
  readonly closed: Promise<void>;
  isClosed = false;
  exitCode: number | null = null;
  exitSignal: NodeJS.Signals | null = null;
  spawnError: Error | undefined;
  /** Set once, by the first {@link kill}; `undefined` while the command runs undisturbed. */
  killReason: ShellKillReason | undefined;
  /** True once `SIGKILL` reached the group. */
  forcedKill = false;
  /** True when reading stopped `exitDrainMs` after the shell exited (background holders). */
  outputAbandoned = false;
  /** Resolves when the kill sequence is over (group gone, or `SIGKILL` sent); resolved when no kill began. */
  killDone: Promise<void> = Promise.resolve();
  /** The value of {@link SHELL_CALL_ENV} in the command's environment. */
  readonly callId = randomUUID();
  /** Processes the kill could not end (see {@link ShellDetails.survivors}). */
  survivors: number[] = [];
  /** The shell's start time (clock ticks since boot, Linux); processes started earlier cannot be its descendants. */
  #shellStart = 0;

  /** Progress not yet taken by the generator; every item is unseen by the consumer, so merging into the last is safe. */
  readonly #queue: ShellProgress[] = [];
  /** Sum of `text.length` over `#queue`. */
  #queuedChars = 0;
  #paused = false;
  #discard = false;
  #wake: (() => void) | undefined;
  #drainTimer: NodeJS.Timeout | undefined;

  /** True when the command runs in the OS sandbox: the host's process group then holds bwrap alone. */
  readonly sandboxed: boolean;

  constructor(
    command: string,
    options: { cwd: string; maxOutputBytes: number; exitDrainMs: number; env: NodeJS.ProcessEnv; launch: SandboxedSpawn | undefined },
  ) {
    this.output = new BoundedOutput(options.maxOutputBytes);
    this.sandboxed = options.launch !== undefined;
    const [file, args] = options.launch === undefined ? ['/bin/sh', ['-c', command]] : [options.launch.file, options.launch.args];
    this.child = spawn(file, args, {
      cwd: options.cwd,
      env: { ...options.env, [SHELL_CALL_ENV]: this.callId },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (process.platform === 'linux' && this.child.pid !== undefined) {
      this.#shellStart = Number(readProc(this.child.pid)?.start ?? 0);
    }
    let resolveClosed!: () => void;
    this.closed = new Promise<void>((resolve) => (resolveClosed = resolve));
    const { stdout, stderr } = this.child;
    if (stdout === null || stderr === null) throw new Error('shell: the child has no stdout/stderr pipes');
    for (const [stream, name] of [
      [stdout, 'stdout'],
      [stderr, 'stderr'],
    ] as const) {
      stream.setEncoding('utf8');
      stream.on('data', (text: string) => this.#onData(name, text));
      // A read error ends that pipe; 'close' still follows, so only keep it from crashing the process.
      stream.on('error', () => {});
    }
    this.child.on('error', (error) => {
      this.spawnError ??= error;
      this.#notify();
    });
    this.child.on('exit', () => {
      if (this.isClosed) return;
      // A background process that inherited the pipes would keep 'close' away forever.
      this.#drainTimer = setTimeout(() => {
        this.outputAbandoned = true;
        stdout.destroy();
        stderr.destroy();
      }, options.exitDrainMs);
    });
    this.child.on('close', (code, signal) => {
      clearTimeout(this.#drainTimer);
      this.isClosed = true;
      this.exitCode = code;
      this.exitSignal = signal;
      resolveClosed();
      this.#notify();
    });
  }

  /** The next progress item, or undefined when none is queued. Resumes paused pipes once the queue is low. */
  take(): ShellProgress | undefined {
    const item = this.#queue.shift();
    if (item === undefined) return undefined;
    this.#queuedChars -= item.text.length;
    if (this.#paused && this.#queuedChars <= QUEUE_LOW_CHARS && this.#queue.length <= QUEUE_MAX_ITEMS / 2) {
      this.#setFlowing(true);
    }
    return item;
  }

  /** Resolves at the next data, error or close. Call only after `take()` returned undefined. */
  changed(): Promise<void> {
    return new Promise<void>((resolve) => (this.#wake = resolve));
  }

  /** Stops queuing progress (nobody will read it) and lets the pipes flow so that 'close' can come. */
  discardProgress(): void {
    this.#discard = true;
    this.#queue.length = 0;
    this.#queuedChars = 0;
    this.#setFlowing(true);
  }

  /**
   * Starts the kill sequence once. On Linux the processes the command started are found
   * first (descendants of the shell by parent pid, members of its group, and any process
   * carrying this call's id in its environment, which covers `setsid` and double forks),
   * before anything is signalled, so that no parent link is lost by a kill. That search
   * reads `/proc` synchronously, skipping processes older than the shell, so `SIGTERM` is not
   * delayed by the thread pool (the runtime gives a tool `abortGraceMs`, 100 ms by default, to
   * confirm). `SIGTERM` goes to the group and to each of them; after `graceMs`, whatever is
   * still alive (searched again, so late forks count) gets `SIGKILL`, and whatever outlives
   * that is reported in `survivors`. Later calls and calls after the output closed do nothing.
   */
  kill(reason: ShellKillReason, graceMs: number): void {
    const pid = this.child.pid;
    if (this.killReason !== undefined || this.isClosed || pid === undefined) return;
    this.killReason = reason;
    // A dying command's output must drain for 'close' to come: no more backpressure.
    this.#setFlowing(true);
    const tracked = new Map<number, string>();
    this.#track(pid, tracked);
    // Sandboxed, the host's group is bwrap alone: SIGTERM would end it, and with it (through
    // the PID namespace) every process at once by SIGKILL, leaving them no grace. The group to
    // signal is the sandbox's session (bwrap's init leads it, `--new-session`): one kill()
    // reaches the shell and its children together, as the host group does unsandboxed (one by
    // one, a shell whose child died first would run its next command before its own signal
    // came). The init ignores SIGTERM from outside its namespace; bwrap gets SIGKILL after the
    // grace, which ends the whole namespace.
    const group = this.sandboxed ? sandboxGroup(pid, tracked) : pid;
    if (group !== undefined) signalGroup(group, 'SIGTERM');
    for (const [member, start] of tracked) if (member !== pid) signalTracked(member, start, 'SIGTERM', group ?? pid);
    this.killDone = this.#escalate(pid, graceMs, tracked);
  }

  async #escalate(pid: number, graceMs: number, tracked: Map<number, string>): Promise<void> {
    const deadline = performance.now() + graceMs;
    if (!(await settlesWithin(this.closed, graceMs))) {
      await this.#forceKill(pid, tracked);
      return;
    }
    // The shell is gone and its output closed, but a member of its group that redirected
    // its output (or ignored SIGTERM), or a process that left the group, may still be alive.
    for (;;) {
      if (!this.#stillAlive(pid, tracked)) return;
      const left = deadline - performance.now();
      if (left <= 0) {
        await this.#forceKill(pid, tracked);
        return;
      }
      await delay(Math.min(GROUP_POLL_MS, left));
    }
  }

  /** Adds the command's live processes to `tracked`; true when any was found. On other platforms: true while the group lives. */
  #stillAlive(pid: number, tracked: Map<number, string>): boolean {
    if (process.platform !== 'linux') return groupIsAlive(pid);
    const before = new Set(tracked.keys());
    const found = this.#track(pid, tracked);
    // Late forks get SIGTERM too (once); sandboxed, bwrap itself only gets SIGKILL.
    for (const [member, start] of found) if (!before.has(member) && member !== pid) signalTracked(member, start, 'SIGTERM', this.sandboxed ? undefined : pid);
    return found.size > 0;
  }

  /** Finds the command's live processes (Linux) and adds them to `tracked`; returns those found. */
  #track(pid: number, tracked: Map<number, string>): Map<number, string> {
    if (process.platform !== 'linux') return new Map();
    const found = findCommandProcesses(pid, this.callId, tracked, this.#shellStart);
    for (const [member, start] of found) tracked.set(member, start);
    return found;
  }

  async #forceKill(pid: number, tracked: Map<number, string>): Promise<void> {
    if (signalGroup(pid, 'SIGKILL')) this.forcedKill = true;
    if (process.platform !== 'linux') return;
    // Bounded: each round kills what is found (late forks included) and looks again.
    for (let round = 0; round < KILL_CONFIRM_ROUNDS; round++) {
      const found = this.#track(pid, tracked);
      this.survivors = [...found.keys()].sort((a, b) => a - b);
      if (found.size === 0) return;
      for (const [member, start] of found) {
        if (signalTracked(member, start, 'SIGKILL')) this.forcedKill = true;
      }
      await delay(GROUP_POLL_MS / 5);
    }
  }

  #onData(stream: 'stdout' | 'stderr', text: string): void {
    this.output.push(text);
    if (this.#discard) return;
    // A dying command is never paused (its pipes must drain for 'close' to come), so once it
    // is being killed, progress beyond the queue bound is dropped; the result keeps the output.
    if (this.killReason !== undefined && this.#queuedChars >= QUEUE_HIGH_CHARS) return;
    const last = this.#queue.at(-1);
    if (last !== undefined && last.stream === stream && last.text.length + text.length <= COALESCE_CHARS) {
      last.text += text;
    } else {
      this.#queue.push({ stream, text });
    }
    this.#queuedChars += text.length;
    if (
      !this.#paused &&
      this.killReason === undefined &&
      (this.#queuedChars >= QUEUE_HIGH_CHARS || this.#queue.length >= QUEUE_MAX_ITEMS)
    ) {
      this.#setFlowing(false);
    }
    this.#notify();
  }

  #setFlowing(flowing: boolean): void {
    if (flowing === !this.#paused) return;
    this.#paused = !flowing;
    for (const stream of [this.child.stdout, this.child.stderr]) {
      if (flowing) stream?.resume();
      else stream?.pause();
    }
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}

/**
 * Sends `signal` to the process group `pgid`; false when it reached no process (`ESRCH`: the
 * group is gone; `EPERM`: none of it may be signalled). Never throws: it runs inside an abort
 * listener and a timer, where a throw would be an uncaught exception.
 */
function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/** True while process group `pgid` has a member (platforms without `/proc`; zombies count). */
function groupIsAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** One process as `/proc/<pid>/stat` describes it. */
interface ProcEntry {
  pid: number;
  ppid: number;
  pgrp: number;
  /** Running, sleeping, ... `Z` (zombie) and `X` (dead) run no code. */
  state: string;
  /** Start time in clock ticks since boot: with the pid, it names one process (pids are reused). */
  start: string;
}

/** Parses `/proc/<pid>/stat`, or undefined when the process is gone. */
function readProc(pid: number): ProcEntry | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // Format: "pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime priority nice threads itrealvalue starttime ..."
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { pid, ppid: Number(fields[1]), pgrp: Number(fields[2]), state: fields[0] ?? '', start: fields[19] ?? '' };
}

/**
 * The live processes (not zombies) a command started, with their start times: members of
 * process group `pgid`, processes whose environment holds `callId` in {@link SHELL_CALL_ENV},
 * processes already in `known` (same pid and start time), and every descendant of these
 * (the shell itself carries the id and leads the group) by parent pid. Processes that
 * started before the shell (`minStart`, clock ticks since boot) are skipped unread: they
 * cannot be its descendants. Linux only (`/proc`); synchronous, so that a kill is not
 * queued behind the thread pool.
 */
function findCommandProcesses(pgid: number, callId: string, known: ReadonlyMap<number, string>, minStart: number): Map<number, string> {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return new Map();
  }
  const marker = Buffer.from(`${SHELL_CALL_ENV}=${callId}\0`);
  const entries = new Map<number, ProcEntry>();
  const roots: number[] = [];
  for (const name of names) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    const entry = readProc(Number(name));
    if (entry === undefined || entry.state === 'Z' || entry.state === 'X' || Number(entry.start) < minStart) continue;
    entries.set(entry.pid, entry);
    if (entry.pgrp === pgid || known.get(entry.pid) === entry.start) {
      roots.push(entry.pid);
      continue;
    }
    try {
      // Other users' environments are unreadable (EACCES); those cannot be ours to kill anyway.
      if (readFileSync(`/proc/${name}/environ`).includes(marker)) roots.push(entry.pid);
    } catch {
      // gone, or not ours
    }
  }
  const children = new Map<number, number[]>();
  for (const entry of entries.values()) {
    const list = children.get(entry.ppid) ?? [];
    list.push(entry.pid);
    children.set(entry.ppid, list);
  }
  const found = new Map<number, string>();
  const queue = roots;
  while (queue.length > 0) {
    const pid = queue.pop()!;
    const entry = entries.get(pid);
    if (entry === undefined || found.has(pid)) continue;
    found.set(pid, entry.start);
    queue.push(...(children.get(pid) ?? []));
  }
  return found;
}

/**
 * The process group of the sandbox's processes: that of bwrap's child (the namespace's
 * init, which leads a new session), or undefined if it is not found (already gone).
 */
function sandboxGroup(bwrapPid: number, tracked: ReadonlyMap<number, string>): number | undefined {
  for (const member of tracked.keys()) {
    const entry = readProc(member);
    if (entry !== undefined && entry.ppid === bwrapPid) return entry.pgrp;
  }
  return undefined;
}

/**
 * Sends `signal` to `pid` if it is still the process that started at `start` (and, with
 * `skipGroup`, not a member of that group, which got the signal already); true when sent.
 * Never throws.
 */
function signalTracked(pid: number, start: string, signal: NodeJS.Signals, skipGroup?: number): boolean {
  const entry = readProc(pid);
  if (entry === undefined || entry.start !== start || entry.pgrp === skipGroup) return false;
  try {
    process.kill(pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** The model's error text when the sandbox cannot start: what happened and that retrying will not help; no host details. */
const SANDBOX_UNAVAILABLE =
  'shell: the command was not run. Commands run in an OS sandbox (bubblewrap), and that sandbox cannot start on this machine. ' +
  'This is a setup problem of the application, not of the command: do not retry; the other tools still work. ' +
  '(For the operator: install bubblewrap, or create the tool with shellTool({ sandbox: false }) to run commands unsandboxed.)';

function isDirectory(dir: string): boolean {
  try {
    return statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

/** True if `promise` settles within `ms`; the timer is cleared either way. */
function settlesWithin(promise: Promise<void>, ms: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    void promise.then(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

function delay(ms: number): Promise<void> {
  return new Promise<void>((resolve) => setTimeout(resolve, ms));
}

/** True for an abort reason that is a `TimeoutError` (the runtime's per-call timeout, `AbortSignal.timeout`). */
function isTimeoutReason(reason: unknown): boolean {
  return typeof reason === 'object' && reason !== null && (reason as { name?: unknown }).name === 'TimeoutError';
}

function checkNumber(name: string, value: number, min: number, integer = false): void {
  if (typeof value !== 'number' || Number.isNaN(value) || value < min || (integer && !Number.isInteger(value))) {
    throw new RangeError(
      `shellTool: options.${name} must be ${integer ? 'an integer' : 'a number'} >= ${min}, received ${describeValue(value)}`,
    );
  }
}

function buildResult(
  proc: ShellProcess,
  info: { durationMs: number; limitMs: number | undefined; killGraceMs: number; exitDrainMs: number; reason: unknown },
): ToolResult<ShellDetails> {
  const rendered = proc.output.render();
  let text = rendered.text === '' ? '(no output)\n' : rendered.text;
  if (!text.endsWith('\n')) text += '\n';
  const reason = proc.killReason;
  if (reason !== undefined) {
    const how = proc.forcedKill
      ? `SIGTERM did not stop it, so the process group got SIGKILL after ${info.killGraceMs} ms`
      : 'the process group got SIGTERM';
    const code = proc.exitCode === null ? '' : `; exit code ${proc.exitCode}`;
    text += `[killed: ${describeKill(reason, info)}; ${how}${code}]`;
  } else if (proc.exitCode !== null) {
    text += `[exit code ${proc.exitCode}]`;
  } else {
    text += `[terminated by signal ${proc.exitSignal ?? 'unknown'}]`;
  }
  if (proc.survivors.length > 0) {
    text +=
      // Counted, not listed: pids are host details (issue 19 item 5); details.survivors has them for the application.
      `\n[${proc.survivors.length} process${proc.survivors.length === 1 ? '' : 'es'} the command started could not be ` +
      'killed and may still be running]';
  }
  if (proc.outputAbandoned && reason === undefined) {
    text +=
      `\n[the shell exited, but a process it started in the background kept its output open; stopped reading after ` +
      `${info.exitDrainMs} ms. Redirect background commands to a file, e.g. "cmd > cmd.log 2>&1 &".]`;
  }
  return {
    content: [{ type: 'text', text }],
    details: {
      exitCode: proc.exitCode,
      signal: proc.exitSignal,
      killed: reason !== undefined,
      sandboxed: proc.sandboxed,
      killReason: reason ?? null,
      forcedKill: proc.forcedKill,
      survivors: proc.survivors,
      truncatedBytes: rendered.truncatedBytes,
      outputBytes: rendered.totalBytes,
      durationMs: info.durationMs,
    },
  };
}

function describeKill(reason: ShellKillReason, info: { limitMs: number | undefined; reason: unknown }): string {
  switch (reason) {
    case 'timeout':
      return `timed out after ${info.limitMs} ms; if the command needs longer, call shell again with a larger timeoutMs`;
    case 'run-timeout':
      return `the call's time limit ran out${reasonSuffix(info.reason)}`;
    case 'aborted':
      return `the run was aborted${reasonSuffix(info.reason)}`;
  }
}

function reasonSuffix(reason: unknown): string {
  if (reason instanceof Error && reason.message !== '' && reason.message !== 'This operation was aborted') {
    return ` (${reason.message})`;
  }
  return '';
}
