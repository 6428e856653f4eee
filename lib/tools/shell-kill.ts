/**
 * Process-group killing for the `shell` tool: {@link KillSequence} (`SIGTERM`, a grace period,
 * `SIGKILL`, survivors), and what it rests on: finding every process a command started (its
 * group, its descendants, and anything carrying its call's id, through `/proc` on Linux) and
 * signalling them without ever throwing.
 *
 * @module
 */
import { readdirSync, readFileSync } from 'node:fs';

/**
 * The variable every command gets, holding an id of its call: processes that leave the
 * process group (`setsid`) or lose their parent keep it in their environment, so they can
 * still be found and killed on abort or timeout.
 */
export const SHELL_CALL_ENV = 'TOOLRUN_SHELL_CALL';

/** How often the group is checked while it is given its grace period, in ms. */
const GROUP_POLL_MS = 50;
/** After `SIGKILL`, how many times (10 ms apart) the processes are looked for and killed again before the rest count as survivors. */
const KILL_CONFIRM_ROUNDS = 100;

/** What a {@link KillSequence} needs to know of the command it kills. */
export interface KillTarget {
  /** The pid of the spawned process (`/bin/sh`, or bwrap when sandboxed); it leads its own process group. */
  pid: number;
  /** The value of {@link SHELL_CALL_ENV} in the command's environment. */
  callId: string;
  /** The shell's start time (clock ticks since boot, Linux); processes started earlier cannot be its descendants. */
  shellStart: number;
  /** True when the command runs in the OS sandbox: the host's process group then holds bwrap alone. */
  sandboxed: boolean;
  /** Resolves on the child's `'close'`. */
  closed: Promise<void>;
}

/**
 * The kill sequence of one command, started by its constructor. On Linux the processes the
 * command started are found first (descendants of the shell by parent pid, members of its
 * group, and any process carrying this call's id in its environment, which covers `setsid`
 * and double forks), before anything is signalled, so that no parent link is lost by a kill.
 * That search reads `/proc` synchronously, skipping processes older than the shell, so
 * `SIGTERM` is not delayed by the thread pool (the runtime gives a tool `abortGraceMs`, 100 ms
 * by default, to confirm). `SIGTERM` goes to the group and to each of them; after `graceMs`,
 * whatever is still alive (searched again, so late forks count) gets `SIGKILL`, and whatever
 * outlives that is reported in `survivors`.
 */
export class KillSequence {
  /** True once `SIGKILL` reached the group or one of the command's processes. */
  forcedKill = false;
  /** Processes the kill could not end (pids, ascending; see `ShellDetails.survivors`). */
  survivors: number[] = [];
  /** Resolves when the sequence is over (everything gone, or `SIGKILL` sent and confirmed as far as it goes). Never rejects. */
  readonly done: Promise<void>;
  readonly #target: KillTarget;
  /** Every process of the command found so far, pid → start time (pids are reused: the pair names one process). */
  readonly #tracked = new Map<number, string>();

  constructor(target: KillTarget, graceMs: number) {
    this.#target = target;
    const { pid, sandboxed } = target;
    const tracked = this.#tracked;
    this.#track();
    // Sandboxed, the host's group is bwrap alone: SIGTERM would end it, and with it (through
    // the PID namespace) every process at once by SIGKILL, leaving them no grace. The group to
    // signal is the sandbox's session (bwrap's init leads it, `--new-session`): one kill()
    // reaches the shell and its children together, as the host group does unsandboxed (one by
    // one, a shell whose child died first would run its next command before its own signal
    // came). The init ignores SIGTERM from outside its namespace; bwrap gets SIGKILL after the
    // grace, which ends the whole namespace.
    const group = sandboxed ? sandboxGroup(pid, tracked) : pid;
    if (group !== undefined) signalGroup(group, 'SIGTERM');
    for (const [member, start] of tracked) if (member !== pid) signalTracked(member, start, 'SIGTERM', group ?? pid);
    this.done = this.#escalate(graceMs);
  }

  async #escalate(graceMs: number): Promise<void> {
    const deadline = performance.now() + graceMs;
    if (!(await settlesWithin(this.#target.closed, graceMs))) {
      await this.#forceKill();
      return;
    }
    // The shell is gone and its output closed, but a member of its group that redirected
    // its output (or ignored SIGTERM), or a process that left the group, may still be alive.
    for (;;) {
      if (!this.#stillAlive()) return;
      const left = deadline - performance.now();
      if (left <= 0) {
        await this.#forceKill();
        return;
      }
      await delay(Math.min(GROUP_POLL_MS, left));
    }
  }

  /** Adds the command's live processes to `tracked`; true when any was found. On other platforms: true while the group lives. */
  #stillAlive(): boolean {
    const { pid, sandboxed } = this.#target;
    const tracked = this.#tracked;
    if (process.platform !== 'linux') return groupIsAlive(pid);
    const before = new Set(tracked.keys());
    const found = this.#track();
    // Late forks get SIGTERM too (once); sandboxed, bwrap itself only gets SIGKILL.
    for (const [member, start] of found) if (!before.has(member) && member !== pid) signalTracked(member, start, 'SIGTERM', sandboxed ? undefined : pid);
    return found.size > 0;
  }

  /** Finds the command's live processes (Linux) and adds them to `tracked`; returns those found. */
  #track(): Map<number, string> {
    const { pid, callId, shellStart } = this.#target;
    const tracked = this.#tracked;
    if (process.platform !== 'linux') return new Map();
    const found = findCommandProcesses(pid, callId, tracked, shellStart);
    for (const [member, start] of found) tracked.set(member, start);
    return found;
  }

  async #forceKill(): Promise<void> {
    const pid = this.#target.pid;
    if (signalGroup(pid, 'SIGKILL')) this.forcedKill = true;
    if (process.platform !== 'linux') return;
    // Bounded: each round kills what is found (late forks included) and looks again.
    for (let round = 0; round < KILL_CONFIRM_ROUNDS; round++) {
      const found = this.#track();
      this.survivors = [...found.keys()].sort((a, b) => a - b);
      if (found.size === 0) return;
      for (const [member, start] of found) {
        if (signalTracked(member, start, 'SIGKILL')) this.forcedKill = true;
      }
      await delay(GROUP_POLL_MS / 5);
    }
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
export function readProc(pid: number): ProcEntry | undefined {
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
