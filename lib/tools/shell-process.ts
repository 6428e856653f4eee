/**
 * One running `shell` command: the child process, its bounded output, its progress queue
 * with backpressure on the pipes, and its kill sequence.
 *
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Channel } from '../core/streams/channel.ts';
import { BoundedOutput } from './bounded-output.ts';
import type { SandboxedSpawn } from './sandbox.ts';
import { delay, findCommandProcesses, groupIsAlive, readProc, sandboxGroup, settlesWithin, SHELL_CALL_ENV, signalGroup, signalTracked } from './shell-kill.ts';

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
export class ShellProcess {
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

  /**
   * Progress not yet taken by the generator, which reads it with `take()`/`wait()`. Its
   * high-water mark counts items ({@link QUEUE_MAX_ITEMS}); {@link #queuedChars} counts
   * chars. Closed when the child closes; `return()`ed when nobody will read it any more.
   */
  readonly #progress = new Channel<ShellProgress>({ highWaterMark: QUEUE_MAX_ITEMS });
  /**
   * The item pushed last. Invariant: while `#progress` is not empty, it is the last item
   * buffered there, unseen by the consumer, so merging a chunk into it is safe.
   */
  #last: ShellProgress | undefined;
  /** Sum of `text.length` over the items in `#progress`. */
  #queuedChars = 0;
  #paused = false;
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
      this.#progress.notify();
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
      // The generator reads what is buffered, then sees isClosed.
      this.#progress.close();
    });
  }

  /** The next progress item, or undefined when none is queued. Resumes paused pipes once the queue is low. */
  take(): ShellProgress | undefined {
    const progress = this.#progress;
    const item = progress.take();
    if (item === undefined) return undefined;
    if (progress.size === 0) this.#last = undefined; // the consumer has it now: never merge into it
    this.#queuedChars -= item.text.length;
    if (this.#paused && this.#queuedChars <= QUEUE_LOW_CHARS && progress.size <= QUEUE_MAX_ITEMS / 2) {
      this.#setFlowing(true);
    }
    return item;
  }

  /** Resolves at the next data, error or close. Call only after `take()` returned undefined. */
  changed(): Promise<void> {
    return this.#progress.wait();
  }

  /** Stops queuing progress (nobody will read it) and lets the pipes flow so that 'close' can come. */
  discardProgress(): void {
    void this.#progress.return();
    this.#last = undefined;
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
    const progress = this.#progress;
    if (progress.closed) return; // discarded: nobody reads progress any more
    // A dying command is never paused (its pipes must drain for 'close' to come), so once it
    // is being killed, progress beyond the queue bound is dropped; the result keeps the output.
    if (this.killReason !== undefined && this.#queuedChars >= QUEUE_HIGH_CHARS) return;
    this.#queuedChars += text.length;
    let belowMark = true;
    const last = this.#last;
    if (progress.size > 0 && last !== undefined && last.stream === stream && last.text.length + text.length <= COALESCE_CHARS) {
      // Still buffered (see #last): a consumer in wait() was woken by its push already.
      last.text += text;
    } else {
      const item = { stream, text };
      this.#last = item;
      belowMark = progress.push(item);
    }
    if (!this.#paused && this.killReason === undefined && (!belowMark || this.#queuedChars >= QUEUE_HIGH_CHARS)) {
      this.#setFlowing(false);
    }
  }

  #setFlowing(flowing: boolean): void {
    if (flowing === !this.#paused) return;
    this.#paused = !flowing;
    for (const stream of [this.child.stdout, this.child.stderr]) {
      if (flowing) stream?.resume();
      else stream?.pause();
    }
  }
}
