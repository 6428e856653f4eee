/**
 * The OS sandbox the `shell` tool runs its commands in: bubblewrap (`bwrap`, Linux), driven
 * directly. Each command gets new user, PID, mount, network, IPC, UTS and cgroup namespaces,
 * its own `/proc`, the system directories read-only with known secret files hidden, the
 * workspace writable, a private `/tmp` of bounded size, no capabilities, the host-changing
 * parts of `/proc` read-only, and bounds on its processes and memory (cgroups where the host
 * allows them, else rlimits). On a root host it runs as the workspace's owner where that is
 * not root. What it stops and what it cannot: docs/sandbox.md.
 *
 * Why bwrap and not a runtime around it, and how each part of the policy was chosen:
 * docs/adr/0025-shell-sandbox.md.
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { accessSync, chownSync, constants, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { emitWarning } from '../core/values/platform.ts';
import { describeValue } from '../core/values/guards.ts';

/**
 * Options of the `shell` tool's OS sandbox (`shellTool({ sandbox })`). Every path is a host
 * path, mounted at the same path inside the sandbox; a path that does not exist is skipped.
 */
export interface ShellSandboxOptions {
  /**
   * `'none'`: the command gets its own network namespace with only a loopback interface, so
   * it reaches no host or remote address (not even the host's 127.0.0.1). `'host'`: the
   * host's network, unfiltered. bubblewrap has no per-host allow-list; see docs/guide/built-in-tools.md for
   * putting a filtering proxy in front.
   * @default 'none'
   */
  network?: 'none' | 'host';
  /**
   * The directories (or files) of the system mounted read-only, replacing
   * {@link SANDBOX_SYSTEM_PATHS}. A path that is a symbolic link on the host (`/bin` →
   * `usr/bin` on merged-/usr systems) becomes the same link.
   * @default SANDBOX_SYSTEM_PATHS
   */
  systemPaths?: readonly string[];
  /**
   * More host paths the command may read (read-only), on top of the system paths and the
   * workspace, e.g. a toolchain outside `/usr`: `['/opt/node']`.
   * @default []
   */
  readPaths?: readonly string[];
  /**
   * More host paths the command may write, on top of the workspace (`cwd`), e.g. a cache
   * directory shared between calls.
   * @default []
   */
  writePaths?: readonly string[];
  /**
   * Paths hidden inside the readable ones: a file reads as empty, a directory as empty. A
   * last component ending in `*` is a prefix (`'/etc/ssh/ssh_host_*'`). Replaces
   * {@link SANDBOX_HIDDEN_PATHS}.
   * @default SANDBOX_HIDDEN_PATHS
   */
  hiddenPaths?: readonly string[];
  /**
   * The most processes and threads the command may have at once; a fork past it fails
   * (`Cannot fork`). Enforced with a cgroup `pids.max` where the host lets this process
   * create one (root on cgroup v1, or a delegated cgroup v2 subtree), else with
   * `RLIMIT_NPROC` inside the sandbox's user namespace (not for root, which the kernel
   * exempts); {@link shellSandboxStatus} says which.
   * @default 1024
   */
  maxProcesses?: number;
  /**
   * The most memory the command may use, in bytes, all its processes together. Enforced with
   * a memory cgroup (`memory.max`, or `memory.limit_in_bytes` on cgroup v1) where the host
   * lets this process create one, which counts the page cache and the files in `/tmp` too,
   * and ends the largest process with the kernel's OOM killer; else with `RLIMIT_DATA` per
   * process (`prlimit`), where an allocation past it fails (`MemoryError`, `Cannot allocate
   * memory`); {@link shellSandboxStatus} says which (`memoryLimit`). The result says when the
   * bound was reached.
   * @default 1073741824 (1 GiB)
   * @example `{ maxMemoryBytes: 4 * 1024 ** 3 }` for a build that needs 4 GiB
   */
  maxMemoryBytes?: number;
  /**
   * The size of the command's private `/tmp` (a tmpfs), in bytes; a write past it fails with
   * `No space left on device`, and the result says that `/tmp` is full. With a memory cgroup,
   * what `/tmp` holds counts towards {@link maxMemoryBytes} too.
   * @default 268435456 (256 MiB)
   * @example `{ tmpSizeBytes: 1024 ** 3 }`
   */
  tmpSizeBytes?: number;
  /**
   * The host user and group the command runs as, when this process is root (ignored
   * otherwise: an unprivileged host user cannot switch). By default a root host runs the
   * command as the owner of the workspace (`cwd`) when that owner is not root, so that it can
   * write the workspace and what it writes belongs to that owner; a workspace owned by root
   * leaves the command as root without capabilities (see docs/sandbox.md). The workspace and
   * `writePaths` must be writable for this user, and every parent directory of them
   * searchable.
   * @default the owner of cwd (root host), else this process's user
   * @example `{ runAs: { uid: 1000, gid: 1000 } }`
   */
  runAs?: { uid: number; gid: number };
  /**
   * The bubblewrap executable.
   * @default the first `bwrap` on the host's `PATH`, else `/usr/bin/bwrap`
   */
  bwrapPath?: string;
}

/**
 * The host paths a sandboxed command can read by default, besides the workspace: what a
 * shell and the usual command-line tools need (programs, libraries, `/etc` for users,
 * locales, time zones, certificates and the `alternatives` links). Not `$HOME`, `/root`,
 * `/home`, `/var`, `/run`, `/srv`, `/opt`, `/mnt`, `/media` nor the host's `/proc`, `/sys`.
 */
export const SANDBOX_SYSTEM_PATHS: readonly string[] = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc'];

/**
 * Files and directories under the system paths that hold secrets, hidden by default:
 * password hashes, sudo rules, SSH host keys, TLS private keys, Kerberos keytabs, VPN,
 * Wi-Fi and IPsec secrets, systemd credentials, cluster and container-registry credentials,
 * and the system-wide npm and pip configurations (which may carry registry tokens).
 */
export const SANDBOX_HIDDEN_PATHS: readonly string[] = [
  '/etc/shadow',
  '/etc/shadow-',
  '/etc/gshadow',
  '/etc/gshadow-',
  '/etc/security/opasswd',
  '/etc/sudoers',
  '/etc/sudoers.d',
  '/etc/ssh/ssh_host_*',
  '/etc/ssl/private',
  '/etc/pki/tls/private',
  '/etc/krb5.keytab',
  '/etc/ipsec.secrets',
  '/etc/ipsec.d/private',
  '/etc/ppp/chap-secrets',
  '/etc/ppp/pap-secrets',
  '/etc/NetworkManager/system-connections',
  '/etc/wireguard',
  '/etc/openvpn',
  '/etc/letsencrypt',
  '/etc/credstore',
  '/etc/credstore.encrypted',
  '/etc/kubernetes',
  '/etc/rancher',
  '/etc/docker',
  '/etc/containers/auth.json',
  '/etc/mysql/debian.cnf',
  '/etc/npmrc',
  '/etc/pip.conf',
];

/** Where the sandbox is, from outside: the `/tmp` every command gets (a fresh, private tmpfs). */
export const SANDBOX_TMP = '/tmp';

/**
 * Whether the `shell` tool's sandbox can start here, and how it bounds processes:
 * - `available: true`: `processLimit` is `'cgroup'` (a `pids.max` per command), `'rlimit'`
 *   (`RLIMIT_NPROC` inside the sandbox's user namespace) or `'none'` (root without a
 *   writable pids cgroup: a fork bomb is stopped only by the call's timeout or abort, which
 *   kill the whole PID namespace); `memoryLimit` is `'cgroup'` (a memory cgroup per
 *   command), `'rlimit'` (`RLIMIT_DATA` per process) or `'none'` (no `prlimit`: only the
 *   call's timeout stops a memory bomb);
 * - `available: false`: `reason` says why, for the operator (it may name host paths; the
 *   model is told only that the sandbox is unavailable).
 */
export type ShellSandboxStatus =
  | { available: true; bwrapPath: string; processLimit: 'cgroup' | 'rlimit' | 'none'; memoryLimit: 'cgroup' | 'rlimit' | 'none' }
  | { available: false; reason: string };

/**
 * Checks, once per process and bubblewrap path, that the `shell` tool's sandbox starts
 * here: Linux, `bwrap` found, and a trial sandbox with the same namespaces (user, PID,
 * network, mount) runs `/bin/sh -c true`. `shellTool` calls it before its first command;
 * call it at startup to learn early (for example to print how to install bubblewrap, or to
 * decide on `sandbox: false` knowingly). Never throws.
 *
 * @example
 * ```ts
 * const status = await shellSandboxStatus();
 * if (!status.available) console.error(`the shell tool will refuse every command: ${status.reason}`);
 * ```
 */
export function shellSandboxStatus(options: Pick<ShellSandboxOptions, 'bwrapPath'> = {}): Promise<ShellSandboxStatus> {
  const bwrap = options.bwrapPath ?? findBwrap();
  let status = probes.get(bwrap);
  if (status === undefined) {
    status = probe(bwrap);
    probes.set(bwrap, status);
  }
  return status;
}

const probes = new Map<string, Promise<ShellSandboxStatus>>();
let warned = false;

/** The first `bwrap` on the host's PATH (checked for execute permission), else the Debian path. */
function findBwrap(): string {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!path.isAbsolute(dir)) continue;
    const candidate = path.join(dir, 'bwrap');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return '/usr/bin/bwrap';
}

async function probe(bwrap: string): Promise<ShellSandboxStatus> {
  if (process.platform !== 'linux') {
    return { available: false, reason: `the shell sandbox uses bubblewrap, which needs Linux (this is ${process.platform})` };
  }
  try {
    accessSync(bwrap, constants.X_OK);
  } catch {
    return { available: false, reason: `bubblewrap is not installed (no executable ${bwrap}; on Debian and Ubuntu: apt-get install bubblewrap)` };
  }
  const trial = ['--ro-bind', '/', '/', '--proc', '/proc', '--dev', '/dev', '--', '/bin/sh', '-c', 'true'];
  // bubblewrap before 0.8 has no --disable-userns: it still sandboxes, with nested user namespaces allowed (docs/sandbox.md).
  let { code, stderr } = await runProbe(bwrap, [...NAMESPACE_ARGS, ...NO_NESTED_USERNS, ...trial]);
  if (code === 0) noNestedUserns.add(bwrap);
  else ({ code, stderr } = await runProbe(bwrap, [...NAMESPACE_ARGS, ...trial]));
  if (code !== 0) {
    const detail = stderr.trim().split('\n')[0]?.slice(0, 300) || `exit code ${String(code)}`;
    return { available: false, reason: `bubblewrap could not create a sandbox here (${detail}); user namespaces may be disabled` };
  }
  return {
    available: true,
    bwrapPath: bwrap,
    processLimit: cgroupRoot('pids') !== undefined ? 'cgroup' : isRoot() || !hasPrlimit() ? 'none' : 'rlimit',
    memoryLimit: cgroupRoot('memory') !== undefined ? 'cgroup' : hasPrlimit() ? 'rlimit' : 'none',
  };
}

/** Runs the trial sandbox; no timer (it runs `true`), so nothing outlives a call that awaits it. */
function runProbe(file: string, args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    let stderr = '';
    const child = spawn(file, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { PATH: '/usr/bin:/bin' } });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (text: string) => {
      if (stderr.length < 4096) stderr += text;
    });
    child.on('error', (error) => resolve({ code: null, stderr: error.message }));
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

/**
 * Emits one process warning (`ToolrunWarning`) the first time a command is refused because
 * the sandbox is unavailable, so that the operator learns it from the logs too.
 */
export function warnSandboxUnavailable(reason: string): void {
  if (warned) return;
  warned = true;
  emitWarning(`toolrun: the shell tool refuses every command: its OS sandbox is unavailable: ${reason}. Install bubblewrap, or create the tool with shellTool({ sandbox: false }) to run commands unsandboxed.`);
}

/**
 * The namespaces and privileges, the same for every command: bwrap dies with this process
 * (`--die-with-parent`), the command runs in a new session (no terminal ioctls on the
 * host's terminal; the host's process group holds bwrap alone), every namespace is new,
 * and no capability is kept (uid 0 inside could otherwise unmount the masks over secrets).
 */
const NAMESPACE_ARGS = ['--die-with-parent', '--new-session', '--unshare-all', '--cap-drop', 'ALL'];

/**
 * No user namespace inside the sandbox's own: in a nested one the command would hold every
 * capability again over what it mounts there, e.g. a tmpfs with no size bound (a memory bomb
 * past every bound without a memory cgroup), and the kernel's user-namespace code is a large
 * part of its attack surface.
 */
const NO_NESTED_USERNS = ['--unshare-user', '--disable-userns'];

/** The bubblewrap paths whose trial sandbox took {@link NO_NESTED_USERNS} (bubblewrap 0.8 and later). */
const noNestedUserns = new Set<string>();

/** A bound of the sandbox a command can reach: named as `ShellDetails.limitsReached` names it. */
export type SandboxLimit = 'processes' | 'memory' | 'tmp';

/** What the sandbox saw of one command once it ended. */
export interface SandboxReport {
  /** The bounds the command reached (in this order: processes, memory, tmp). */
  limitsReached: SandboxLimit[];
  /** The most memory the command's cgroup held at once, in bytes; `null` without a memory cgroup. */
  memoryPeakBytes: number | null;
}

/** How one command is started: the program, its arguments, its host user, and what to read and undo after it ended. */
export interface SandboxedSpawn {
  file: string;
  args: string[];
  /** The host user and group to spawn as (root host only), or undefined to stay this process's. */
  user: { uid: number; gid: number } | undefined;
  /**
   * Reads which bounds the command reached (cgroup counters, else the command's own error
   * messages in `output`) and removes its cgroups; bounded retries while its last processes
   * are reaped. Call once the output closed; later calls return the same report.
   */
  finish(output: string): Promise<SandboxReport>;
}

/**
 * One bound of the sandbox: how the result names it, and how a command reaching it shows:
 * a cgroup counter where there is a cgroup, else the messages programs print when the
 * kernel refuses (a fork under `RLIMIT_NPROC`, an allocation under `RLIMIT_DATA`, a write to
 * a full tmpfs). One table, so that every bound is reported the same way.
 */
interface Bound {
  limit: SandboxLimit;
  /** The messages that show the bound was reached when no cgroup counts it. */
  messages: RegExp;
  /** The result's line for the model: the bound, the option that sets it, what to do. */
  line(sandbox: ShellSandbox): string;
}

const BOUNDS: readonly Bound[] = [
  {
    limit: 'processes',
    messages: /Cannot fork|fork: Resource temporarily unavailable|can't fork/,
    line: (sandbox) => `[the sandbox's process bound was reached: at most ${sandbox.maxProcesses} processes and threads at once (sandbox.maxProcesses), so a fork failed; run fewer at once]`,
  },
  {
    limit: 'memory',
    messages: /MemoryError|Cannot allocate memory|out of memory|std::bad_alloc/i,
    line: (sandbox) =>
      `[the sandbox's memory bound was reached: at most ${formatBytes(sandbox.maxMemoryBytes)} (sandbox.maxMemoryBytes), ` +
      'so a process was killed or an allocation failed; use less memory (smaller inputs, streaming, fewer parallel jobs)]',
  },
  {
    limit: 'tmp',
    // `unshare` says ENOSPC when nested user namespaces are refused (--disable-userns): not /tmp.
    messages: /^(?!unshare\b).*No space left on device/m,
    line: (sandbox) => `[/tmp may be full: the sandbox's /tmp holds at most ${formatBytes(sandbox.tmpSizeBytes)} (sandbox.tmpSizeBytes); write large files to the workspace instead]`,
  },
];

/** The result's lines for the bounds a command reached, in {@link BOUNDS} order. */
export function describeLimits(sandbox: ShellSandbox, limits: readonly SandboxLimit[]): string[] {
  return BOUNDS.filter((bound) => limits.includes(bound.limit)).map((bound) => bound.line(sandbox));
}

/** `bytes` in the largest binary unit it reaches, e.g. `1 GiB`, `256 MiB`. */
export function formatBytes(bytes: number): string {
  for (const [unit, size] of [
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
    ['KiB', 1024],
  ] as const) {
    if (bytes >= size) return `${Number((bytes / size).toFixed(1))} ${unit}`;
  }
  return `${bytes} bytes`;
}

/** The policy of one `shell` tool, turned into bwrap arguments per command. */
export class ShellSandbox {
  readonly bwrap: string;
  readonly maxProcesses: number;
  readonly maxMemoryBytes: number;
  readonly tmpSizeBytes: number;
  readonly #runAs: { uid: number; gid: number } | undefined;
  readonly #cwd: string;
  readonly #policyArgs: string[];

  constructor(options: ShellSandboxOptions, cwd: string) {
    this.bwrap = options.bwrapPath ?? findBwrap();
    this.maxProcesses = options.maxProcesses ?? 1024;
    if (!Number.isInteger(this.maxProcesses) || this.maxProcesses < 8) {
      throw new RangeError(`shellTool: options.sandbox.maxProcesses must be an integer >= 8, received ${describeValue(options.maxProcesses)}`);
    }
    this.maxMemoryBytes = checkBytes('maxMemoryBytes', options.maxMemoryBytes, 1024 ** 3, 16 * 1024 ** 2);
    this.tmpSizeBytes = checkBytes('tmpSizeBytes', options.tmpSizeBytes, 256 * 1024 ** 2, 1024 ** 2);
    const runAs = options.runAs;
    if (runAs !== undefined && (typeof runAs !== 'object' || runAs === null || !isId(runAs.uid) || !isId(runAs.gid))) {
      throw new RangeError(`shellTool: options.sandbox.runAs must be { uid, gid } with integers >= 0, received ${describeValue(runAs)}`);
    }
    this.#runAs = runAs === undefined ? undefined : { uid: runAs.uid, gid: runAs.gid };
    this.#cwd = cwd;
    const network = options.network ?? 'none';
    if (network !== 'none' && network !== 'host') {
      throw new RangeError(`shellTool: options.sandbox.network must be 'none' or 'host', received ${describeValue(network)}`);
    }
    this.#policyArgs = policyArgs(options, network, cwd, this.tmpSizeBytes);
  }

  /** Whether it can start here (cached per process). */
  status(): Promise<ShellSandboxStatus> {
    return shellSandboxStatus({ bwrapPath: this.bwrap });
  }

  /**
   * The program and arguments that run `/bin/sh -c command` in the sandbox. With cgroups,
   * a host `/bin/sh` first moves itself into the command's cgroups and then becomes bwrap
   * (`exec`), so every process of the sandbox is counted from its first fork. A bound
   * without a cgroup is an rlimit set by `prlimit` inside the sandbox.
   */
  spawnFor(command: string): SandboxedSpawn {
    const user = this.#user();
    const commandIsRoot = user === undefined ? isRoot() : user.uid === 0;
    const cgroups = makeCgroups(this.maxProcesses, this.maxMemoryBytes, user);
    const rlimits: string[] = [];
    // RLIMIT_NPROC set inside the new user namespace counts only that namespace's processes; uid 0 is exempt, so root gets no bound here.
    if (cgroups.pids === undefined && !commandIsRoot) rlimits.push(`--nproc=${this.maxProcesses}`);
    if (cgroups.memory === undefined) rlimits.push(`--data=${this.maxMemoryBytes}`);
    const inner = ['/bin/sh', '-c', command];
    const limited = rlimits.length === 0 || !hasPrlimit() ? inner : [PRLIMIT, ...rlimits, '--', ...inner];
    // A bound shows in the command's messages only where an rlimit enforces it (and /tmp, always a tmpfs size).
    const byMessage = new Set<SandboxLimit>(['tmp']);
    if (limited !== inner && rlimits.some((limit) => limit.startsWith('--nproc'))) byMessage.add('processes');
    if (limited !== inner && cgroups.memory === undefined) byMessage.add('memory');
    const bwrapArgs = [...(noNestedUserns.has(this.bwrap) ? NO_NESTED_USERNS : []), ...this.#policyArgs, '--', ...limited];
    const dirs = [...new Set([cgroups.pids, cgroups.memory].filter((dir) => dir !== undefined))];
    let report: Promise<SandboxReport> | undefined;
    const finish = (output: string): Promise<SandboxReport> => (report ??= finishCgroups(cgroups, dirs, output, byMessage));
    if (dirs.length === 0) return { file: this.bwrap, args: bwrapArgs, user, finish };
    return {
      file: '/bin/sh',
      args: ['-c', JOIN_CGROUPS, 'toolrun-sandbox', String(dirs.length), ...dirs.map((dir) => path.join(dir, 'cgroup.procs')), this.bwrap, ...bwrapArgs],
      user,
      finish,
    };
  }

  /** The host user to spawn as: `runAs`, else (root host) the workspace's owner when it is not root. */
  #user(): { uid: number; gid: number } | undefined {
    if (!isRoot()) return undefined;
    if (this.#runAs !== undefined) return this.#runAs;
    try {
      const stat = statSync(this.#cwd);
      return stat.uid === 0 ? undefined : { uid: stat.uid, gid: stat.gid };
    } catch {
      return undefined; // the missing workspace is reported by the caller
    }
  }
}

/** `$1` cgroup.procs paths follow; the shell writes its pid into each, then becomes the rest of its arguments. */
const JOIN_CGROUPS = 'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n - 1)); done; exec "$@"';

function isId(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value < 2 ** 32 - 1;
}

function checkBytes(name: string, value: number | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw new RangeError(`shellTool: options.sandbox.${name} must be an integer number of bytes >= ${min}, received ${describeValue(value)}`);
  }
  return value;
}

/**
 * The parts of `/proc` that change the host, not the command: the kernel's settings
 * (`/proc/sys`: `kernel.core_pattern` or `kernel.modprobe` would run a program as the host's
 * root), the magic SysRq key, interrupt and bus settings, binary formats. A command that is
 * the host's root inside its user namespace passes their permission checks without any
 * capability, so they are bound read-only over the sandbox's own `/proc`. bwrap itself covers
 * `/proc/irq` and `/proc/bus` the same way; listing them again costs nothing.
 */
const PROC_READ_ONLY = ['/proc/sys', '/proc/sysrq-trigger', '/proc/irq', '/proc/bus', '/proc/fs/binfmt_misc', '/proc/sys/fs/binfmt_misc'];

function policyArgs(options: ShellSandboxOptions, network: 'none' | 'host', cwd: string, tmpSizeBytes: number): string[] {
  const args = [...NAMESPACE_ARGS, '--hostname', 'sandbox'];
  if (network === 'host') args.push('--share-net');
  for (const entry of options.systemPaths ?? SANDBOX_SYSTEM_PATHS) {
    const where = path.resolve(entry);
    const link = readLink(where);
    if (link !== undefined) args.push('--symlink', link, where);
    else args.push('--ro-bind-try', where, where);
  }
  // Before the extra paths: one under /tmp must stay visible above the private /tmp.
  args.push('--proc', '/proc');
  for (const entry of PROC_READ_ONLY) args.push('--ro-bind-try', entry, entry);
  // bwrap's / and /dev are tmpfs writable by the command with no size bound: / and /dev are made
  // read-only (the device nodes stay usable), and /dev/shm is a bounded tmpfs like /tmp.
  args.push('--dev', '/dev', '--remount-ro', '/dev', '--perms', '1777', '--size', String(tmpSizeBytes), '--tmpfs', '/dev/shm');
  args.push('--size', String(tmpSizeBytes), '--tmpfs', SANDBOX_TMP);
  for (const entry of options.readPaths ?? []) args.push('--ro-bind-try', path.resolve(entry), path.resolve(entry));
  if (network === 'host') {
    // /etc/resolv.conf is often a link into /run (systemd-resolved): name lookups need its target.
    const resolv = realPath('/etc/resolv.conf');
    if (resolv !== undefined && resolv !== '/etc/resolv.conf') args.push('--ro-bind-try', path.dirname(resolv), path.dirname(resolv));
  }
  for (const hidden of expandHidden(options.hiddenPaths ?? SANDBOX_HIDDEN_PATHS)) {
    if (hidden.directory) args.push('--tmpfs', hidden.path, '--remount-ro', hidden.path);
    // /dev/null bound read-write with its device access (a plain bind is nodev: reading it would fail
    // with EACCES, which some tools treat as fatal); reads are empty, writes are discarded.
    else args.push('--dev-bind', '/dev/null', hidden.path);
  }
  for (const entry of options.writePaths ?? []) args.push('--bind-try', path.resolve(entry), path.resolve(entry));
  // The workspace at the path the model knows, whatever links lead to it on the host.
  args.push('--bind', realPath(cwd) ?? cwd, cwd, '--chdir', cwd);
  // Last, once every mount point is made in it; not recursive, so the mounts on it keep their own modes.
  args.push('--remount-ro', '/');
  return args;
}

/** The existing paths among `patterns` (a last component ending in `*` is a prefix), with their kind. */
function expandHidden(patterns: readonly string[]): { path: string; directory: boolean }[] {
  const out: { path: string; directory: boolean }[] = [];
  for (const pattern of patterns) {
    const resolved = path.resolve(pattern);
    const base = path.basename(resolved);
    const names = base.endsWith('*') ? listPrefixed(path.dirname(resolved), base.slice(0, -1)) : [resolved];
    for (const name of names) {
      try {
        const stat = lstatSync(name);
        // A link is masked as a file: a directory link would be followed by bwrap to its target.
        out.push({ path: name, directory: stat.isDirectory() });
      } catch {
        // absent here
      }
    }
  }
  return out;
}

function listPrefixed(dir: string, prefix: string): string[] {
  try {
    return readdirSync(dir)
      .filter((name) => name.startsWith(prefix))
      .map((name) => path.join(dir, name));
  } catch {
    return [];
  }
}

function readLink(where: string): string | undefined {
  try {
    return lstatSync(where).isSymbolicLink() ? readlinkSync(where) : undefined;
  } catch {
    return undefined;
  }
}

function realPath(where: string): string | undefined {
  try {
    return realpathSync(where);
  } catch {
    return undefined;
  }
}

/** util-linux's `prlimit`, which sets a limit and runs a program (a plain `sh` has no `ulimit -u`). */
const PRLIMIT = '/usr/bin/prlimit';

function hasPrlimit(): boolean {
  try {
    accessSync(PRLIMIT, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function isRoot(): boolean {
  return process.getuid?.() === 0;
}

type Controller = 'pids' | 'memory';

/** The file that bounds each controller, on cgroup v2 and v1. */
const LIMIT_FILE: Record<Controller, { v2: string; v1: string }> = {
  pids: { v2: 'pids.max', v1: 'pids.max' },
  memory: { v2: 'memory.max', v1: 'memory.limit_in_bytes' },
};

const roots = new Map<Controller, { dir: string; v2: boolean } | null>();

/**
 * This process's own directory in the `controller` cgroup hierarchy, if this process may
 * create children there with a limit (checked once per controller by making and removing
 * one); else undefined. cgroup v1 (a hierarchy of its own per controller) or v2 (the
 * controller enabled for the children of this process's cgroup, as a delegated subtree has it).
 */
function cgroupRoot(controller: Controller): { dir: string; v2: boolean } | undefined {
  const known = roots.get(controller);
  if (known !== undefined) return known ?? undefined;
  roots.set(controller, null);
  if (process.platform !== 'linux') return undefined;
  try {
    const own = readFileSync('/proc/self/cgroup', 'utf8').split('\n');
    for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
      const [left, right] = line.split(' - ');
      const fields = left?.split(' ') ?? [];
      const [fsType, , superOptions] = right?.split(' ') ?? [];
      const mountRoot = fields[3];
      const mountPoint = fields[4];
      if (mountRoot === undefined || mountPoint === undefined) continue;
      let relative: string | undefined;
      const v2 = fsType === 'cgroup2';
      if (fsType === 'cgroup' && superOptions?.split(',').includes(controller)) {
        relative = own.map((entry) => entry.split(':')).find((parts) => parts[1]?.split(',').includes(controller))?.[2];
      } else if (v2) {
        relative = own.find((entry) => entry.startsWith('0::'))?.slice(3);
      }
      if (relative === undefined || !relative.startsWith(mountRoot)) continue;
      const dir = path.join(mountPoint, relative.slice(mountRoot.length));
      const trial = path.join(dir, `toolrun-probe-${randomUUID()}`);
      try {
        mkdirSync(trial);
        writeFileSync(path.join(trial, LIMIT_FILE[controller][v2 ? 'v2' : 'v1']), controller === 'pids' ? '8' : String(64 * 1024 ** 2));
        const root = { dir, v2 };
        roots.set(controller, root);
        return root;
      } catch {
        // not writable, or the controller not enabled below this cgroup (v2)
      } finally {
        try {
          rmdirSync(trial);
        } catch {
          // was not made
        }
      }
    }
  } catch {
    // no /proc
  }
  return undefined;
}

/** The command's cgroups: one per controller (on cgroup v2 both are the same directory), where they could be made. */
interface CommandCgroups {
  pids?: string;
  memory?: string;
  /** Whether the memory cgroup is a v2 one (its counters are named differently). */
  memoryV2?: boolean;
}

/**
 * New cgroups for one command, bounded to `maxProcesses` and `maxMemoryBytes`; a controller
 * whose cgroup cannot be made is left out (the caller falls back to an rlimit). For a
 * command run as another host user, its `cgroup.procs` files are given to that user, so
 * that the joining shell (already that user) may move itself in.
 */
function makeCgroups(maxProcesses: number, maxMemoryBytes: number, user: { uid: number; gid: number } | undefined): CommandCgroups {
  const out: CommandCgroups = {};
  const made = new Map<string, string>();
  for (const [controller, value] of [
    ['pids', String(maxProcesses)],
    ['memory', String(maxMemoryBytes)],
  ] as const) {
    const root = cgroupRoot(controller);
    if (root === undefined) continue;
    let dir = made.get(root.dir);
    try {
      if (dir === undefined) {
        dir = path.join(root.dir, `toolrun-shell-${randomUUID()}`);
        mkdirSync(dir);
        made.set(root.dir, dir);
        if (user !== undefined) chownSync(path.join(dir, 'cgroup.procs'), user.uid, user.gid);
      }
      writeFileSync(path.join(dir, LIMIT_FILE[controller][root.v2 ? 'v2' : 'v1']), value);
      // No swap past the bound either (cgroup v1 counts memory and swap together here; absent without swap accounting).
      if (controller === 'memory' && root.v2) tryWrite(path.join(dir, 'memory.swap.max'), '0');
      if (controller === 'memory' && !root.v2) tryWrite(path.join(dir, 'memory.memsw.limit_in_bytes'), value);
      out[controller] = dir;
      if (controller === 'memory') out.memoryV2 = root.v2;
    } catch {
      if (dir !== undefined && out.pids !== dir) {
        removeNow(dir);
        made.delete(root.dir);
      }
    }
  }
  return out;
}

function tryWrite(file: string, value: string): void {
  try {
    writeFileSync(file, value);
  } catch {
    // not offered by this kernel
  }
}

function removeNow(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    // was not made, or still busy
  }
}

/** Reads a `key value` line of a cgroup file such as `memory.events` or `pids.events`; 0 when absent. */
function counter(file: string, key: string): number {
  try {
    const line = readFileSync(file, 'utf8')
      .split('\n')
      .find((entry) => entry.startsWith(`${key} `));
    return line === undefined ? 0 : Number(line.slice(key.length + 1)) || 0;
  } catch {
    return 0;
  }
}

function readNumber(file: string): number | null {
  try {
    const value = Number(readFileSync(file, 'utf8').trim());
    return Number.isFinite(value) ? value : null;
  } catch {
    return null;
  }
}

/**
 * The report of one command (see {@link BOUNDS}), then its cgroups removed once empty. By
 * the time the command's output has closed, the PID namespace is gone (its init reaps every
 * member before it exits), so the first removal normally succeeds; a few short retries
 * cover a process still being torn down.
 */
async function finishCgroups(cgroups: CommandCgroups, dirs: string[], output: string, byMessage: ReadonlySet<SandboxLimit>): Promise<SandboxReport> {
  const counted: Partial<Record<SandboxLimit, boolean>> = {};
  if (cgroups.pids !== undefined) counted.processes = counter(path.join(cgroups.pids, 'pids.events'), 'max') > 0;
  let memoryPeakBytes: number | null = null;
  if (cgroups.memory !== undefined) {
    const dir = cgroups.memory;
    // Killed for memory, not merely at the bound: reaching it while writing files only makes the kernel drop cached pages.
    counted.memory = counter(path.join(dir, cgroups.memoryV2 ? 'memory.events' : 'memory.oom_control'), 'oom_kill') > 0;
    memoryPeakBytes = readNumber(path.join(dir, cgroups.memoryV2 ? 'memory.peak' : 'memory.max_usage_in_bytes'));
  }
  const limitsReached = BOUNDS.filter((bound) => counted[bound.limit] ?? (byMessage.has(bound.limit) && bound.messages.test(output))).map((bound) => bound.limit);
  for (const dir of dirs) await removeCgroup(dir);
  return { limitsReached, memoryPeakBytes };
}

async function removeCgroup(dir: string): Promise<void> {
  for (let attempt = 0; attempt < 20; attempt++) {
    try {
      rmdirSync(dir);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EBUSY') return;
    }
    await new Promise<void>((resolve) => setTimeout(resolve, 50));
  }
}
