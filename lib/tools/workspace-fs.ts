/**
 * Opening files inside the workspace root without a window between the check and the open.
 *
 * A model that can also run commands (or any other process) may swap a directory for a
 * symbolic link, or a file for a FIFO, between the moment a path is checked and the moment
 * it is opened. So the path is never opened by name after the check. On Linux each
 * component is opened relative to the descriptor of its (already checked) parent through
 * `/proc/self/fd/<fd>/<name>` with `O_NOFOLLOW`, which is `openat(2)` without a symbolic
 * link being followed anywhere below the root; the last component is opened with
 * `O_NONBLOCK` (a FIFO cannot block a libuv thread) and must be a regular file by `fstat`
 * on the opened descriptor. Elsewhere the descriptor is opened with `O_NOFOLLOW |
 * O_NONBLOCK` and its device and inode are compared with the path's after the open, which
 * narrows the window but does not close it.
 *
 * @module
 */
import { constants } from 'node:fs';
import { open, readdir, readlink, realpath, stat } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { isInside } from './workspace.ts';

const DIR_FLAGS = constants.O_RDONLY | (constants.O_DIRECTORY ?? 0) | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);
const FILE_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);
/** Directory descriptors kept open per {@link WorkspaceFs} (the rest are reopened on demand). */
const MAX_CACHED_DIRS = 32;

/** Why a path was refused; `message` is written for the model. */
export class WorkspacePathError extends Error {
  /**
   * `'outside'`: it resolves outside the root; `'changed'`: a component turned into a symbolic
   * link (or stopped being a directory) after the path was resolved; `'not-regular'`: a FIFO,
   * device, socket or directory where a regular file was expected.
   */
  readonly reason: 'outside' | 'changed' | 'not-regular';
  constructor(reason: 'outside' | 'changed' | 'not-regular', message: string) {
    super(message);
    this.name = 'WorkspacePathError';
    this.reason = reason;
  }
}

/** A regular file opened inside the root. Close `handle` when done. */
export interface OpenedFile {
  handle: FileHandle;
  /** The file's real path (inside the real root). */
  real: string;
  /** Its size in bytes, from `fstat` on the descriptor. */
  size: number;
}

/**
 * The workspace root of one tool call, for opening and checking paths under it. Not safe
 * for concurrent use: call its methods one at a time, then {@link close}.
 */
export class WorkspaceFs {
  /** The root with symbolic links resolved. */
  readonly realRoot: string;
  readonly #rootHandle: FileHandle;
  /** True when `/proc/self/fd` resolves descriptors (Linux). */
  readonly #procFd: boolean;
  /** Open directories by path relative to the real root ('' is the root; not in the map). */
  readonly #dirs = new Map<string, FileHandle>();

  private constructor(realRoot: string, rootHandle: FileHandle, procFd: boolean) {
    this.realRoot = realRoot;
    this.#rootHandle = rootHandle;
    this.#procFd = procFd;
  }

  /**
   * Opens the root (resolving its own symbolic links: the root is the host's choice).
   *
   * @throws Error naming the root when it does not exist or is not a directory.
   */
  static async open(root: string): Promise<WorkspaceFs> {
    let realRoot: string;
    let handle: FileHandle;
    try {
      realRoot = await realpath(root);
      handle = await open(realRoot, DIR_FLAGS);
    } catch (error) {
      throw new Error(`the workspace root ${root} cannot be opened: ${(error as Error).message}`, { cause: error });
    }
    let procFd = false;
    try {
      procFd = (await readlink(`/proc/self/fd/${handle.fd}`)) === realRoot;
    } catch {
      procFd = false;
    }
    return new WorkspaceFs(realRoot, handle, procFd);
  }

  /**
   * Opens the regular file at `absolute` for reading. Symbolic links are followed only as far
   * as the real path they resolve to lies inside the root; then that real path is opened
   * component by component without following any link (Linux), so a link swapped in after
   * the check is refused rather than followed.
   *
   * @param requested - the path as the model wrote it, for error texts.
   * @throws the `realpath`/`open` error (`ENOENT`, `EACCES`, ...) unchanged, or a
   *   {@link WorkspacePathError}.
   */
  async openFile(absolute: string, requested: string): Promise<OpenedFile> {
    const real = await realpath(absolute);
    if (!isInside(this.realRoot, real)) {
      throw new WorkspacePathError(
        'outside',
        // The target is not named: it can be a host path or /proc/<pid>.
        `path ${JSON.stringify(requested)} leads through a symbolic link to a place outside the workspace root; use a path inside it`,
      );
    }
    if (real === this.realRoot) throw new WorkspacePathError('not-regular', `${JSON.stringify(requested)} is a directory, not a file`);
    const handle = this.#procFd ? await this.#openNoFollow(real, requested) : await this.#openChecked(real, requested);
    try {
      const info = await handle.stat();
      if (!info.isFile()) {
        throw new WorkspacePathError(
          'not-regular',
          info.isDirectory()
            ? `${JSON.stringify(requested)} is a directory, not a file`
            : `${JSON.stringify(requested)} is not a regular file (a device, socket or FIFO)`,
        );
      }
      return { handle, real, size: info.size };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /**
   * The paths of `found` (paths a crawl found, lexically under the real root) that are
   * regular files reached from the root without any symbolic link, in the same order.
   * Each directory is opened once from its parent's descriptor without following links
   * (Linux) and its entries are read through that descriptor, so a directory swapped for a
   * link during the crawl does not let a name from outside through.
   */
  async plainFiles(found: readonly string[]): Promise<string[]> {
    const byDir = new Map<string, Set<string> | undefined>();
    for (const absolute of found) byDir.set(path.dirname(absolute), undefined);
    for (const dir of byDir.keys()) byDir.set(dir, await this.#regularFilesIn(dir));
    return found.filter((absolute) => byDir.get(path.dirname(absolute))?.has(path.basename(absolute)) === true);
  }

  /** Names of the regular files directly in `dir` (absolute), or an empty set when it is not a plain directory inside the root. */
  async #regularFilesIn(dir: string): Promise<Set<string>> {
    if (!isInside(this.realRoot, dir)) return new Set();
    try {
      let entries;
      if (this.#procFd) {
        const handle = await this.#dirHandle(path.relative(this.realRoot, dir), dir);
        entries = await readdir(`/proc/self/fd/${handle.fd}`, { withFileTypes: true });
      } else {
        if ((await realpath(dir)) !== dir) return new Set();
        entries = await readdir(dir, { withFileTypes: true });
      }
      return new Set(entries.filter((entry) => entry.isFile()).map((entry) => entry.name));
    } catch {
      return new Set();
    }
  }

  /** Closes every descriptor this object opened (not the files handed out). */
  async close(): Promise<void> {
    const handles = [...this.#dirs.values(), this.#rootHandle];
    this.#dirs.clear();
    await Promise.all(handles.map((handle) => handle.close().catch(() => {})));
  }

  async #openNoFollow(real: string, requested: string): Promise<FileHandle> {
    const dir = await this.#dirHandle(path.relative(this.realRoot, path.dirname(real)), requested);
    try {
      return await open(`/proc/self/fd/${dir.fd}/${path.basename(real)}`, FILE_FLAGS);
    } catch (error) {
      throw changedOr(error, requested);
    }
  }

  /** The open directory at `rel` (relative to the real root), opened one component at a time without following links. */
  async #dirHandle(rel: string, requested: string): Promise<FileHandle> {
    if (rel === '') return this.#rootHandle;
    if (rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) {
      throw new WorkspacePathError('outside', `path ${JSON.stringify(requested)} is outside the workspace root`);
    }
    const cached = this.#dirs.get(rel);
    if (cached !== undefined) {
      // Most recently used last.
      this.#dirs.delete(rel);
      this.#dirs.set(rel, cached);
      return cached;
    }
    const parent = await this.#dirHandle(path.dirname(rel) === '.' ? '' : path.dirname(rel), requested);
    let handle: FileHandle;
    try {
      handle = await open(`/proc/self/fd/${parent.fd}/${path.basename(rel)}`, DIR_FLAGS);
    } catch (error) {
      throw changedOr(error, requested);
    }
    this.#dirs.set(rel, handle);
    if (this.#dirs.size > MAX_CACHED_DIRS) {
      // Never the parent chain just used: those were touched last. Evict the oldest.
      const [oldestRel, oldest] = this.#dirs.entries().next().value as [string, FileHandle];
      this.#dirs.delete(oldestRel);
      await oldest.close().catch(() => {});
    }
    return handle;
  }

  /** Fallback without `/proc/self/fd`: open without following the last link, then compare identities. */
  async #openChecked(real: string, requested: string): Promise<FileHandle> {
    let handle: FileHandle;
    try {
      handle = await open(real, FILE_FLAGS);
    } catch (error) {
      throw changedOr(error, requested);
    }
    try {
      const [opened, now, realNow] = await Promise.all([handle.stat(), stat(real), realpath(real)]);
      if (opened.dev !== now.dev || opened.ino !== now.ino || realNow !== real) {
        throw new WorkspacePathError('changed', changedMessage(requested));
      }
      return handle;
    } catch (error) {
      await handle.close();
      throw error;
    }
  }
}

/**
 * The bytes of an open file from position 0, in 64 KiB chunks, at most `maxBytes` in all (a
 * file that grows while it is read is cut there). Throws the signal's reason before each read
 * once it is aborted.
 */
export async function* readChunks(handle: FileHandle, maxBytes: number, signal: AbortSignal): AsyncGenerator<Buffer> {
  let position = 0;
  while (position < maxBytes) {
    signal.throwIfAborted();
    const size = Math.min(64 * 1024, maxBytes - position);
    const buffer = Buffer.allocUnsafe(size);
    const { bytesRead } = await handle.read(buffer, 0, size, position);
    if (bytesRead === 0) return;
    position += bytesRead;
    yield buffer.subarray(0, bytesRead);
  }
}

function changedMessage(requested: string): string {
  return (
    `path ${JSON.stringify(requested)} changed while it was opened (a directory or file was replaced by a symbolic ` +
    'link); nothing was read. Try again once the workspace is not being changed.'
  );
}

/** `ELOOP`/`ENOTDIR` on a no-follow open mean a component became a link (or a non-directory) after `realpath`. */
function changedOr(error: unknown, requested: string): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'ELOOP' || code === 'ENOTDIR') return new WorkspacePathError('changed', changedMessage(requested));
  return error;
}
