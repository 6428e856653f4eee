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
import { KillSequence, readProc, SHELL_CALL_ENV } from './shell-kill.ts';

/** One chunk of output, yielded as progress as soon as it arrives. */
export interface ShellProgress {
  stream: 'stdout' | 'stderr';
  text: string;
}

/**
 * Why the tool killed the process group:
 * - `'timeout'`: the tool's own limit (`options.timeoutMs` or the `timeoutMs` input);
 * - `'run-timeout'`: `ctx.signal` was aborted with a `TimeoutError` reason (the runtime's per-call timeout);
 * - `'aborted'`: `ctx.signal` was aborted for any other reason (the run was aborted), or the
 *   consumer closed the tool's generator early.
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

/**
 * One running command: the child, its output, its progress queue, and its kill (the sequence
 * itself is a {@link KillSequence}).
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
  /** The kill sequence, from the first {@link kill} on. */
  #kill: KillSequence | undefined;
  /** True when reading stopped `exitDrainMs` after the shell exited (background holders). */
  outputAbandoned = false;
  /** The value of {@link SHELL_CALL_ENV} in the command's environment. */
  readonly callId = randomUUID();
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
      ...options.launch?.user,
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

  /** True once `SIGKILL` reached the group. */
  get forcedKill(): boolean {
    return this.#kill?.forcedKill ?? false;
  }

  /** Processes the kill could not end (`ShellDetails.survivors`). */
  get survivors(): number[] {
    return this.#kill?.survivors ?? [];
  }

  /** Resolves when the kill sequence is over (group gone, or `SIGKILL` sent); resolved when no kill began. */
  get killDone(): Promise<void> {
    return this.#kill?.done ?? Promise.resolve();
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
   * Starts the kill sequence once (see {@link KillSequence}): `SIGTERM` to everything the
   * command started, `SIGKILL` to what is still alive after `graceMs`. Later calls and calls
   * after the output closed do nothing.
   */
  kill(reason: ShellKillReason, graceMs: number): void {
    const pid = this.child.pid;
    if (this.killReason !== undefined || this.isClosed || pid === undefined) return;
    this.killReason = reason;
    // A dying command's output must drain for 'close' to come: no more backpressure.
    this.#setFlowing(true);
    this.#kill = new KillSequence({ pid, callId: this.callId, shellStart: this.#shellStart, sandboxed: this.sandboxed, closed: this.closed }, graceMs);
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
