/**
 * The OS sandbox the `shell` tool runs its commands in: bubblewrap (`bwrap`, Linux), driven
 * directly. Each command gets new user, PID, mount, network, IPC, UTS and cgroup namespaces,
 * its own `/proc`, the system directories read-only with known secret files hidden, the
 * workspace writable, a private `/tmp`, no capabilities, and (where the host allows it) a
 * bound on its number of processes.
 *
 * Why bwrap and not a runtime around it, and how each part of the policy was chosen:
 * docs/decisions.md, "The shell in an OS sandbox".
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { accessSync, constants, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmdirSync, writeFileSync } from 'node:fs';
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
   * host's network, unfiltered. bubblewrap has no per-host allow-list; see docs/tools.md for
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
 *   kill the whole PID namespace);
 * - `available: false`: `reason` says why, for the operator (it may name host paths; the
 *   model is told only that the sandbox is unavailable).
 */
export type ShellSandboxStatus =
  | { available: true; bwrapPath: string; processLimit: 'cgroup' | 'rlimit' | 'none' }
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
  const args = [...NAMESPACE_ARGS, '--ro-bind', '/', '/', '--proc', '/proc', '--dev', '/dev', '--', '/bin/sh', '-c', 'true'];
  const { code, stderr } = await runProbe(bwrap, args);
  if (code !== 0) {
    const detail = stderr.trim().split('\n')[0]?.slice(0, 300) || `exit code ${String(code)}`;
    return { available: false, reason: `bubblewrap could not create a sandbox here (${detail}); user namespaces may be disabled` };
  }
  return { available: true, bwrapPath: bwrap, processLimit: pidsCgroupRoot() !== undefined ? 'cgroup' : isRoot() || !hasPrlimit() ? 'none' : 'rlimit' };
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

/** How one command is started: the program, its arguments, and what to undo after it ended. */
export interface SandboxedSpawn {
  file: string;
  args: string[];
  /** Removes the command's cgroup, if one was made; bounded retries while its last processes are reaped. */
  release(): Promise<void>;
}

/** The policy of one `shell` tool, turned into bwrap arguments per command. */
export class ShellSandbox {
  readonly bwrap: string;
  readonly #maxProcesses: number;
  readonly #policyArgs: string[];

  constructor(options: ShellSandboxOptions, cwd: string) {
    this.bwrap = options.bwrapPath ?? findBwrap();
    this.#maxProcesses = options.maxProcesses ?? 1024;
    if (!Number.isInteger(this.#maxProcesses) || this.#maxProcesses < 8) {
      throw new RangeError(`shellTool: options.sandbox.maxProcesses must be an integer >= 8, received ${describeValue(options.maxProcesses)}`);
    }
    const network = options.network ?? 'none';
    if (network !== 'none' && network !== 'host') {
      throw new RangeError(`shellTool: options.sandbox.network must be 'none' or 'host', received ${describeValue(network)}`);
    }
    this.#policyArgs = policyArgs(options, network, cwd);
  }

  /** Whether it can start here (cached per process). */
  status(): Promise<ShellSandboxStatus> {
    return shellSandboxStatus({ bwrapPath: this.bwrap });
  }

  /**
   * The program and arguments that run `/bin/sh -c command` in the sandbox. With a cgroup,
   * a host `/bin/sh` first moves itself into the command's cgroup and then becomes bwrap
   * (`exec`), so every process of the sandbox is counted from its first fork.
   */
  spawnFor(command: string): SandboxedSpawn {
    const inner = ['/bin/sh', '-c', command];
    const cgroup = makeCgroup(this.#maxProcesses);
    if (cgroup !== undefined) {
      return {
        file: '/bin/sh',
        args: ['-c', 'echo $$ > "$0" || exit 125; exec "$@"', path.join(cgroup, 'cgroup.procs'), this.bwrap, ...this.#policyArgs, '--', ...inner],
        release: () => removeCgroup(cgroup),
      };
    }
    // RLIMIT_NPROC set inside the new user namespace counts only that namespace's processes; uid 0 is exempt, so root gets no bound here.
    const limited = isRoot() || !hasPrlimit() ? inner : [PRLIMIT, `--nproc=${this.#maxProcesses}`, '--', ...inner];
    return { file: this.bwrap, args: [...this.#policyArgs, '--', ...limited], release: () => Promise.resolve() };
  }
}

function policyArgs(options: ShellSandboxOptions, network: 'none' | 'host', cwd: string): string[] {
  const args = [...NAMESPACE_ARGS, '--hostname', 'sandbox'];
  if (network === 'host') args.push('--share-net');
  for (const entry of options.systemPaths ?? SANDBOX_SYSTEM_PATHS) {
    const where = path.resolve(entry);
    const link = readLink(where);
    if (link !== undefined) args.push('--symlink', link, where);
    else args.push('--ro-bind-try', where, where);
  }
  // Before the extra paths: one under /tmp must stay visible above the private /tmp.
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', SANDBOX_TMP);
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

let cgroupRoot: string | null | undefined;

/**
 * This process's own directory in the pids cgroup controller, if this process may create
 * children there with a `pids.max` (checked once by making and removing one); else
 * undefined. cgroup v1 (`pids` hierarchy) or v2 (`pids` enabled for the children of this
 * process's cgroup, as a delegated subtree has it).
 */
function pidsCgroupRoot(): string | undefined {
  if (cgroupRoot !== undefined) return cgroupRoot ?? undefined;
  cgroupRoot = null;
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
      if (fsType === 'cgroup' && superOptions?.split(',').includes('pids')) {
        relative = own.map((entry) => entry.split(':')).find((parts) => parts[1]?.split(',').includes('pids'))?.[2];
      } else if (fsType === 'cgroup2') {
        relative = own.find((entry) => entry.startsWith('0::'))?.slice(3);
      }
      if (relative === undefined || !relative.startsWith(mountRoot)) continue;
      const dir = path.join(mountPoint, relative.slice(mountRoot.length));
      const trial = path.join(dir, `toolrun-probe-${randomUUID()}`);
      try {
        mkdirSync(trial);
        writeFileSync(path.join(trial, 'pids.max'), '8');
        cgroupRoot = dir;
        return dir;
      } catch {
        // not writable, or pids not enabled below this cgroup (v2)
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

/** A new cgroup with `pids.max = max` for one command, or undefined when none can be made. */
function makeCgroup(max: number): string | undefined {
  const root = pidsCgroupRoot();
  if (root === undefined) return undefined;
  const dir = path.join(root, `toolrun-shell-${randomUUID()}`);
  try {
    mkdirSync(dir);
    writeFileSync(path.join(dir, 'pids.max'), String(max));
    return dir;
  } catch {
    try {
      rmdirSync(dir);
    } catch {
      // was not made
    }
    return undefined;
  }
}

/**
 * Removes a command's cgroup once it is empty. By the time the command's output has closed,
 * the PID namespace is gone (its init reaps every member before it exits), so the first try
 * normally succeeds; a few short retries cover a process still being torn down.
 */
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
