/**
 * Keeping the file tools inside one workspace root: path resolution, glob checks, and the
 * error text the model reads when it asks for something outside.
 *
 * @module
 */
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { glob } from 'tinyglobby';

/** Directories the file tools skip unless told otherwise (tinyglobby `ignore` patterns). */
export const DEFAULT_IGNORE: readonly string[] = ['**/node_modules/**', '**/.git/**'];

/** True when `target` (absolute) is `root` itself or lies under it. Both must be normalized absolute paths. */
export function isInside(root: string, target: string): boolean {
  const rel = path.relative(root, target);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/**
 * Resolves `requested` (relative to `root`, or absolute) to an absolute path and checks that
 * it stays inside `root`, lexically (`..` segments and absolute paths).
 *
 * @param root - the workspace root, absolute.
 * @param requested - the path as the model wrote it.
 * @returns the absolute path.
 * @throws Error naming the path and the root and telling the model to use a path inside it;
 *   the runtime turns it into an error result for the model.
 */
export function resolveInsideRoot(root: string, requested: string): string {
  const absolute = path.resolve(root, requested);
  if (!isInside(root, absolute)) {
    throw new Error(
      `path ${JSON.stringify(requested)} is outside the workspace root ${root}; ` +
        'use a path inside it (relative to the root, e.g. "src/index.ts")',
    );
  }
  return absolute;
}

/**
 * Checks that an existing path, once symbolic links are resolved, is still inside `root`.
 *
 * @param root - the workspace root, absolute.
 * @param absolute - a path already checked by {@link resolveInsideRoot}.
 * @param requested - the path as the model wrote it, for the error text.
 * @returns the real path.
 * @throws the `realpath` error (e.g. `ENOENT`) unchanged, or an Error saying the path leads
 *   outside the root through a symbolic link.
 */
export async function realpathInsideRoot(root: string, absolute: string, requested: string): Promise<string> {
  const [realRoot, realTarget] = await Promise.all([realpath(root), realpath(absolute)]);
  if (!isInside(realRoot, realTarget)) {
    throw new Error(
      // The target is not named: it can be a host path or /proc/<pid>.
      `path ${JSON.stringify(requested)} leads through a symbolic link to a place outside the workspace root ` +
        `${root}; use a path inside it`,
    );
  }
  return realTarget;
}

/**
 * Rejects glob patterns that would reach outside the directory they are matched in: absolute
 * patterns and patterns with a `..` segment. (Results are filtered as well, so a pattern that
 * slips past this check, e.g. inside braces, still lists nothing outside the root.)
 *
 * @throws Error telling the model to write the pattern relative to the root.
 */
export function assertRelativePattern(pattern: string, field: string): void {
  if (path.isAbsolute(pattern) || pattern.split(/[\\/]/).includes('..')) {
    throw new Error(
      `${field} ${JSON.stringify(pattern)} reaches outside the workspace; write it relative to the workspace root ` +
        'without ".." segments, e.g. "src/**/*.ts"',
    );
  }
}

/** Characters that make a glob segment dynamic (picomatch syntax). */
const GLOB_MAGIC = /[*?[\]{}()!+@\\]/;

/**
 * Checks that the directory a glob crawl starts from stays inside the root once symbolic
 * links are resolved: the longest existing run of `pattern`'s leading literal segments
 * under `dir` (tinyglobby starts its crawl there, following links on the way, so
 * `link/etc/*` with `link -> /` would crawl `/etc`). Results are checked one by one as well;
 * this only keeps the crawl itself from walking outside.
 *
 * @param realRoot - the root with links resolved.
 * @throws Error naming the pattern (not where its link leads: a host path), telling the model to stay inside.
 */
export async function assertCrawlInside(realRoot: string, dir: string, pattern: string, field: string): Promise<void> {
  const segments = pattern.split('/');
  const literal: string[] = [];
  for (const segment of segments.slice(0, -1)) {
    if (GLOB_MAGIC.test(segment)) break;
    literal.push(segment);
  }
  for (let n = literal.length; n >= 1; n--) {
    let real: string;
    try {
      real = await realpath(path.join(dir, ...literal.slice(0, n)));
    } catch {
      continue;
    }
    if (!isInside(realRoot, real)) {
      throw new Error(
        `${field} ${JSON.stringify(pattern)} leads through a symbolic link to a place outside the workspace root; ` +
          'symbolic links leading outside are not followed',
      );
    }
    return;
  }
}

/** `absolute` relative to `root`, with `/` separators, for showing to the model. */
export function displayPath(root: string, absolute: string): string {
  const rel = path.relative(root, absolute);
  return (rel === '' ? '.' : rel).split(path.sep).join('/');
}

/** The `code` of a Node.js system error, or undefined. */
export function errorCode(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error) {
    const code = (error as { code: unknown }).code;
    return typeof code === 'string' ? code : undefined;
  }
  return undefined;
}

/**
 * The files under `dir` matching the glob `pattern` (tinyglobby; dot files included,
 * symbolic links neither followed nor listed, `ignore` patterns left out), as absolute
 * paths inside `root`, sorted by UTF-16 code units so the order is the same on every
 * machine. Throws the signal's reason when it aborts (tinyglobby ends its crawl early and
 * resolves with what it had, so the check after it matters).
 */
export async function findFiles(root: string, dir: string, pattern: string, ignore: readonly string[], signal: AbortSignal): Promise<string[]> {
  const found = await glob(pattern, { cwd: dir, dot: true, onlyFiles: true, followSymbolicLinks: false, ignore: [...ignore], signal });
  signal.throwIfAborted();
  return found
    .map((entry) => path.resolve(dir, entry))
    .filter((absolute) => isInside(root, absolute))
    .sort(compareCodeUnits);
}

/** Orders strings by UTF-16 code units, independent of the locale. */
function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
