/**
 * The `list_files` tool: lists the files matching a glob pattern inside the workspace root.
 *
 * @module
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import * as v from 'valibot';
import { describeValue } from '../core/values/guards.ts';
import type { Tool, ToolResult } from '../core/tool/tool.ts';
import {
  DEFAULT_IGNORE,
  assertCrawlInside,
  assertRelativePattern,
  displayPath,
  errorCode,
  findFiles,
  realpathInsideRoot,
  resolveInsideRoot,
} from './workspace.ts';
import { WorkspaceFs } from './workspace-fs.ts';
import { defineTool } from '../core/schema/define-tool.ts';

/** Options of {@link listFilesTool}. */
export interface ListFilesToolOptions {
  /**
   * The workspace root: `path` is resolved against it and nothing outside it is listed.
   * Resolved when the tool is created.
   * @default process.cwd()
   */
  root?: string;
  /**
   * The most paths one result lists (case C20); a marker gives the number left out.
   * @default 1000
   */
  maxEntries?: number;
  /**
   * Glob patterns (tinyglobby `ignore`) never listed.
   * @default ['**\/node_modules/**', '**\/.git/**']
   */
  ignore?: readonly string[];
}

/** The `details` of a `list_files` result. */
export interface ListFilesDetails {
  /** Files that matched. */
  total: number;
  /** Files listed in the text (at most `maxEntries`). */
  shown: number;
  /** True when `total > shown`. */
  truncated: boolean;
}

/** The input a `list_files` call takes. */
export const listFilesInput = v.strictObject({
  pattern: v.pipe(
    v.string(),
    v.minLength(1),
    v.description(
      'Glob pattern of the files to list, relative to path, e.g. "lib/**/*.ts", "**/*.md" or "*". ' +
        'Supports ** (any depth), * , ? , {a,b} and [abc]. Only files are listed, not directories.',
    ),
  ),
  path: v.optional(
    v.pipe(
      v.string(),
      v.minLength(1),
      v.description('Directory to search in, relative to the workspace root, e.g. "src". Default: the root.'),
    ),
  ),
});

/** The validated input of a `list_files` call. */
export type ListFilesInput = v.InferOutput<typeof listFilesInput>;

/** The `list_files` tool's type. */
export type ListFilesTool = Tool<ListFilesInput, never, ToolResult<ListFilesDetails>, 'list_files'>;

/**
 * Creates the `list_files` tool: the files under `path` that match `pattern`, one path per
 * line relative to the workspace root (ready to pass to `read_file`), sorted by code unit.
 *
 * Uses tinyglobby with `dot: true` (dotfiles are listed), `ignore` (default: `node_modules`
 * and `.git`), and `followSymbolicLinks: false` (symbolic links are neither followed nor
 * listed, so nothing outside the root shows up through one). The crawl starts at the real
 * path of `path` (which must be inside the root), a pattern whose literal head leads through
 * a link outside the root is refused, and every name found is checked on the descriptor of
 * its directory (`WorkspaceFs`): only regular files reached from the root without a symbolic
 * link are listed, even when a directory is swapped for a link during the crawl. Paths are
 * shown relative to the root's real path. At most `maxEntries` paths are listed; a marker
 * states how many more matched (case C20). No match is not an error: the text says nothing matched.
 *
 * Throws (the runtime turns it into an error result for the model): a `path` or `pattern`
 * that reaches outside the root, lexically or through a symbolic link; a `path` that does
 * not exist or is not a directory; the abort reason when `ctx.signal` is aborted (also when it is aborted during the crawl, which
 * tinyglobby would otherwise end silently with partial results).
 *
 * @throws RangeError at creation when `maxEntries` is not a positive integer.
 * @example
 * ```ts
 * const listFiles = listFilesTool({ root: '/repo' });
 * // model call: { "pattern": "**\/*.spec.ts", "path": "spec" }
 * ```
 */
export function listFilesTool(options: ListFilesToolOptions = {}): ListFilesTool {
  const root = path.resolve(options.root ?? process.cwd());
  const maxEntries = options.maxEntries ?? 1000;
  const ignore = [...(options.ignore ?? DEFAULT_IGNORE)];
  if (!Number.isInteger(maxEntries) || maxEntries < 1) {
    throw new RangeError(`listFilesTool: options.maxEntries must be a positive integer, received ${describeValue(maxEntries)}`);
  }
  return defineTool<typeof listFilesInput, never, ToolResult<ListFilesDetails>, 'list_files'>({
    name: 'list_files',
    description:
      'List the files in the workspace that match a glob pattern, one path per line, relative to the workspace root. ' +
      `node_modules and .git are skipped. At most ${maxEntries} paths are returned.`,
    input: listFilesInput,
    async execute(input, { signal }) {
      signal.throwIfAborted();
      assertRelativePattern(input.pattern, 'pattern');
      const requested = input.path ?? '.';
      const dir = resolveInsideRoot(root, requested);
      const workspace = await WorkspaceFs.open(root);
      const files: string[] = [];
      try {
        const realRoot = workspace.realRoot;
        // The crawl starts at the real directory, which must be inside the real root.
        const realDir = await realDirectoryInside(root, dir, requested);
        await assertCrawlInside(realRoot, realDir, input.pattern, 'pattern');
        const found = await findFiles(realRoot, realDir, input.pattern, ignore, signal);
        // Each name is checked on its directory's descriptor: a directory swapped for a link
        // during the crawl does not let a name from outside through.
        for (const absolute of await workspace.plainFiles(found)) files.push(displayPath(realRoot, absolute));
        signal.throwIfAborted();
      } finally {
        await workspace.close();
      }
      const where = input.path === undefined ? 'the workspace root' : JSON.stringify(input.path);
      let text: string;
      if (files.length === 0) {
        text = `No files match ${JSON.stringify(input.pattern)} in ${where}.`;
      } else {
        text = files.slice(0, maxEntries).join('\n');
        if (files.length > maxEntries) {
          text +=
            `\n[... ${files.length - maxEntries} more files not shown: ${files.length} matched, the limit is ${maxEntries}. ` +
            'Narrow the pattern or the path to see them.]';
        }
      }
      return {
        content: [{ type: 'text', text }],
        details: { total: files.length, shown: Math.min(files.length, maxEntries), truncated: files.length > maxEntries },
      };
    },
  });
}

/** The real path of the directory `dir`, checked to lie inside the real root. */
async function realDirectoryInside(root: string, dir: string, requested: string): Promise<string> {
  try {
    const real = await realpathInsideRoot(root, dir, requested);
    if ((await stat(real)).isDirectory()) return real;
  } catch (error) {
    const code = errorCode(error);
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
    throw new Error(
      `directory ${JSON.stringify(requested)} does not exist in the workspace root ${root}; ` +
        'call list_files without path to see what is there',
    );
  }
  throw new Error(`${JSON.stringify(requested)} is a file, not a directory; use read_file to read it, or give its directory as path`);
}


