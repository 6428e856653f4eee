/**
 * Process-group killing for the `shell` tool: finding every process a command started (its
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

/**
 * Sends `signal` to the process group `pgid`; false when it reached no process (`ESRCH`: the
 * group is gone; `EPERM`: none of it may be signalled). Never throws: it runs inside an abort
 * listener and a timer, where a throw would be an uncaught exception.
 */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/** True while process group `pgid` has a member (platforms without `/proc`; zombies count). */
export function groupIsAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** One process as `/proc/<pid>/stat` describes it. */
export interface ProcEntry {
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
export function findCommandProcesses(pgid: number, callId: string, known: ReadonlyMap<number, string>, minStart: number): Map<number, string> {
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
export function sandboxGroup(bwrapPid: number, tracked: ReadonlyMap<number, string>): number | undefined {
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
export function signalTracked(pid: number, start: string, signal: NodeJS.Signals, skipGroup?: number): boolean {
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
export function settlesWithin(promise: Promise<void>, ms: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    void promise.then(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

export function delay(ms: number): Promise<void> {
  return new Promise<void>((resolve) => setTimeout(resolve, ms));
}
