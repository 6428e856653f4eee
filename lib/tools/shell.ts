/**
 * The `shell` tool: runs a command with `/bin/sh -c` in an OS sandbox (bubblewrap, by
 * default) and its own process group, streams its output as progress, bounds what it keeps,
 * and kills everything it started on abort or timeout.
 *
 * @module
 */
import { statSync } from 'node:fs';
import path from 'node:path';
import * as v from 'valibot';
import { describeValue } from '../core/values/guards.ts';
import type { Tool, ToolResult } from '../core/tool/tool.ts';
import { describeLimits, formatBytes as formatLimit, SANDBOX_TMP, ShellSandbox, warnSandboxUnavailable } from './sandbox.ts';
import type { SandboxedSpawn, SandboxLimit, SandboxReport, ShellSandboxOptions } from './sandbox.ts';
import { ShellProcess, type ShellKillReason, type ShellProgress } from './shell-process.ts';

export { SHELL_CALL_ENV } from './shell-kill.ts';
export type { ShellKillReason, ShellProgress } from './shell-process.ts';
import { defineTool } from '../core/schema/define-tool.ts';

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
   * only to `cwd` and a private `/tmp` (256 MiB), bounds on processes (1,024) and memory
   * (1 GiB), the kernel's settings read-only. Options change that policy
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
 * The host environment variables a `shell` command gets by default (the model
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
   * process group is killed. Only here: the result text gives their number (pids are host
   * details). Sandboxed, none can outlive the sandbox (its PID namespace ends with it), so it
   * stays empty.
   */
  survivors: number[];
  /**
   * The sandbox's bounds the command reached: `'processes'` (`sandbox.maxProcesses`),
   * `'memory'` (`sandbox.maxMemoryBytes`), `'tmp'` (`sandbox.tmpSizeBytes`). From the cgroup's
   * counters where the bound is a cgroup (certain), else from the messages the command printed
   * (`Cannot fork`, `MemoryError`, `Cannot allocate memory`, `No space left on device`, in the
   * kept output). The result text has one line per bound. Empty unsandboxed.
   */
  limitsReached: SandboxLimit[];
  /** The most memory the command held at once, in bytes (its memory cgroup's peak); `null` without a memory cgroup or unsandboxed. */
  memoryPeakBytes: number | null;
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
 * {@link ShellSandboxOptions} and docs/guide/built-in-tools.md "The shell's sandbox"). Where that sandbox
 * cannot start, the call throws (an error result for the model, saying the command was not
 * run and why) and nothing runs; `sandbox: false` opts out. The model chooses the command,
 * so it does not get the host's environment: only the variables named in
 * {@link DEFAULT_SHELL_ENV} and `passEnv` (or exactly `env`), plus {@link SHELL_CALL_ENV}. It
 * is an async generator: stdout and stderr chunks are yielded as {@link ShellProgress} while
 * the command runs. When the consumer falls behind, up to about 1 MiB (or 1,024 chunks) of
 * progress is queued, then the pipes are paused until it catches up (once a
 * kill has begun the pipes are never paused, and progress beyond that bound is dropped).
 *
 * When `ctx.signal` is aborted, or the tool's own timeout runs out, every process the command
 * started gets `SIGTERM`, then `SIGKILL` if any of them is still alive after `killGraceMs`:
 * the process group (`process.kill(-pid)`) and, on Linux, the processes that left it
 * (`setsid`, double forks), found through `/proc` by parent pid and by the call's id in their
 * environment before anything is signalled; any that outlive `SIGKILL` are listed in
 * `details.survivors` and counted in the text (pids are host details, so the model gets
 * their number only). The call then waits for the output to close and returns a normal result
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
        `${options.sandbox !== false && options.sandbox?.network === 'host' ? '' : 'there is no network, '}memory is limited to ${formatLimit(sandbox.maxMemoryBytes)} ` +
        `and /tmp to ${formatLimit(sandbox.tmpSizeBytes)}, and background processes end with the command. `;

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
        const report = await launch?.finish(proc.output.render().text);
        const limitLines = sandbox === undefined || report === undefined ? [] : describeLimits(sandbox, report.limitsReached);
        return buildResult(proc, { durationMs, limitMs, killGraceMs, exitDrainMs, reason: signal.reason, report, limitLines });
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
        await launch?.finish('');
      }
    },
  });
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
  info: {
    durationMs: number;
    limitMs: number | undefined;
    killGraceMs: number;
    exitDrainMs: number;
    reason: unknown;
    report: SandboxReport | undefined;
    limitLines: string[];
  },
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
      // Counted, not listed: pids are host details; details.survivors has them for the application.
      `\n[${proc.survivors.length} process${proc.survivors.length === 1 ? '' : 'es'} the command started could not be ` +
      'killed and may still be running]';
  }
  for (const line of info.limitLines) text += `\n${line}`;
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
      limitsReached: info.report?.limitsReached ?? [],
      memoryPeakBytes: info.report?.memoryPeakBytes ?? null,
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
