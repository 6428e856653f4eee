/**
 * The `grep` tool: searches the files of the workspace for a JavaScript regular expression,
 * line by line, streaming each file.
 *
 * No npm package fits: `@vscode/ripgrep` and its wrappers download a binary at install time,
 * and `find-in-files` reads whole files with no abort signal and no output bound. So this is
 * tinyglobby for the file list plus a streaming line scan.
 *
 * @module
 */
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import * as v from 'valibot';
import { describeValue } from '../core/values/guards.ts';
import type { Tool, ToolResult } from '../core/tool/tool.ts';
import { DEFAULT_IGNORE, assertCrawlInside, assertRelativePattern, displayPath, findFiles } from './workspace.ts';
import { WorkspaceFs, WorkspacePathError, readChunks } from './workspace-fs.ts';
import { matchLines } from './safe-regexp.ts';
import type { LineMatch } from './safe-regexp.ts';
import { defineTool } from '../core/schema/define-tool.ts';

/** Options of {@link grepTool}. */
export interface GrepToolOptions {
  /**
   * The workspace root: files are searched under it, and nothing outside it (lexically or
   * through a symbolic link) is read. Resolved when the tool is created.
   * @default process.cwd()
   */
  root?: string;
  /**
   * The most matching lines one result lists (case C20). The search stops at the next match
   * after that, and a marker says more exist.
   * @default 200
   */
  maxMatches?: number;
  /**
   * Files larger than this many bytes are skipped (and listed as skipped in the result): a
   * file is held in memory whole while it is searched (with the rest of its batch, at most
   * 4 MiB more), so this also bounds the memory a search uses.
   * @default 10485760 (10 MiB)
   */
  maxFileBytes?: number;
  /**
   * The most ms the pattern may spend matching, over all files of one call. The pattern runs
   * in a worker thread, so a catastrophic one (e.g. `^(a+)+$`) never blocks the event loop;
   * when this runs out the worker is terminated and the call fails with an error telling the
   * model to simplify the pattern. `ctx.signal` (abort, the runtime's timeout) stops it too.
   * @default 10000
   */
  regexTimeoutMs?: number;
  /**
   * Each matching line is cut to this many characters in the result, with a note of how
   * many were left out.
   * @default 500
   */
  maxLineChars?: number;
  /**
   * Glob patterns (tinyglobby `ignore`) never searched.
   * @default ['**\/node_modules/**', '**\/.git/**']
   */
  ignore?: readonly string[];
}

/** Progress of a search, yielded every 50 files. */
export interface GrepProgress {
  /** Files read so far (binary and skipped files included). */
  filesSearched: number;
  /** Matching lines found so far. */
  matches: number;
}

/** The `details` of a `grep` result. */
export interface GrepDetails {
  /** Files that matched the glob and were looked at. */
  filesSearched: number;
  /** Files with at least one matching line. */
  filesMatched: number;
  /** Matching lines listed. */
  matches: number;
  /** True when the search stopped after `maxMatches` because more matches existed. */
  truncated: boolean;
  /** Files skipped because a NUL byte in their first chunk (64 KiB) marks them as binary. */
  skippedBinary: number;
  /** Files skipped because they are larger than `maxFileBytes`. */
  skippedLarge: number;
  /** Files that could not be read (permissions, removed during the search, links leading outside the root, FIFOs and devices). */
  skippedUnreadable: number;
}

/** The input a `grep` call takes. */
export const grepInput = v.strictObject({
  pattern: v.pipe(
    v.string(),
    v.minLength(1),
    v.description(
      'A JavaScript regular expression, without slashes, matched against each line, e.g. "function\\s+\\w+" ' +
        'or "error|warning". Escape ( [ { . * + ? | \\ to match them literally.',
    ),
  ),
  glob: v.optional(
    v.pipe(
      v.string(),
      v.minLength(1),
      v.description('Only search files matching this glob, relative to the workspace root, e.g. "lib/**/*.ts". Default "**/*".'),
    ),
  ),
  ignoreCase: v.optional(v.pipe(v.boolean(), v.description('Match without regard to letter case. Default false.'))),
});

/** The validated input of a `grep` call. */
export type GrepInput = v.InferOutput<typeof grepInput>;

/** The `grep` tool's type. */
export type GrepTool = Tool<GrepInput, GrepProgress, ToolResult<GrepDetails>, 'grep'>;

/** How often (in files) progress is yielded. */
const PROGRESS_EVERY_FILES = 50;
/** Files (at most) whose lines go to the matching worker in one round trip… */
const BATCH_FILES = 25;
/** …and bytes (at least this many end a batch). */
const BATCH_BYTES = 4 * 1024 * 1024;

/**
 * Creates the `grep` tool: lists every line matching `pattern` in the files matching
 * `glob`, as `path:line:text` (path relative to the root, line 1-based), files in sorted
 * order.
 *
 * The pattern is compiled with the `u` flag (so `\p{L}` works) and, if that fails, without
 * it; `ignoreCase` adds `i`. Files come from tinyglobby (`dot: true`, `ignore`, symbolic
 * links not followed; a glob whose literal head leads through a link outside the root is
 * refused). Each file is opened through `WorkspaceFs` (nothing outside the root is read,
 * lexically or through a link, even one swapped in during the search; FIFOs and devices are
 * never opened blocking), skipped when binary (a NUL byte in its first 64 KiB) or larger
 * than `maxFileBytes`, and split on `\n` (a trailing `\r` is dropped). The pattern is
 * matched in a worker thread (`matchLines`, up to 25 files or 4 MiB per round trip), so a
 * catastrophic pattern leaves the event loop free and ends at `regexTimeoutMs` or at the
 * abort of `ctx.signal`. It is an async generator that yields {@link GrepProgress} every 50
 * files. The output is bounded (case C20): at most `maxMatches` lines, each cut to
 * `maxLineChars`, with markers saying what was left out.
 *
 * Throws (the runtime turns it into an error result for the model): a pattern that is not a
 * valid JavaScript regular expression (with the parser's message); a glob reaching outside
 * the root; a pattern that ran out of `regexTimeoutMs` (`RegExpTimeoutError`); the abort
 * reason when `ctx.signal` is aborted. Unreadable files do not throw; they are counted in
 * `details.skippedUnreadable`.
 *
 * @throws RangeError at creation when a numeric option is not a positive integer.
 * @example
 * ```ts
 * const grep = grepTool({ root: '/repo', maxMatches: 100 });
 * // model call: { "pattern": "export function \\w+", "glob": "lib/**\/*.ts" }
 * ```
 */
export function grepTool(options: GrepToolOptions = {}): GrepTool {
  const root = path.resolve(options.root ?? process.cwd());
  const maxMatches = options.maxMatches ?? 200;
  const maxFileBytes = options.maxFileBytes ?? 10 * 1024 * 1024;
  const maxLineChars = options.maxLineChars ?? 500;
  const regexTimeoutMs = options.regexTimeoutMs ?? 10_000;
  const ignore = [...(options.ignore ?? DEFAULT_IGNORE)];
  for (const [name, value] of [
    ['maxMatches', maxMatches],
    ['maxFileBytes', maxFileBytes],
    ['maxLineChars', maxLineChars],
    ['regexTimeoutMs', regexTimeoutMs],
  ] as const) {
    if (!Number.isInteger(value) || value < 1) {
      throw new RangeError(`grepTool: options.${name} must be a positive integer, received ${describeValue(value)}`);
    }
  }

  return defineTool<typeof grepInput, GrepProgress, ToolResult<GrepDetails>, 'grep'>({
    name: 'grep',
    description:
      'Search the files of the workspace for lines matching a JavaScript regular expression. Returns ' +
      `"path:line:text" lines, at most ${maxMatches}. Binary files, node_modules and .git are skipped.`,
    input: grepInput,
    async *execute(input, { signal }) {
      signal.throwIfAborted();
      const regex = compilePattern(input.pattern, input.ignoreCase ?? false);
      const globPattern = input.glob ?? '**/*';
      assertRelativePattern(globPattern, 'glob');
      const workspace = await WorkspaceFs.open(root);
      /** ms the pattern has spent matching so far in this call. */
      let matchMs = 0;
      const lines: string[] = [];
      const large: string[] = [];
      const details: GrepDetails = {
        filesSearched: 0,
        filesMatched: 0,
        matches: 0,
        truncated: false,
        skippedBinary: 0,
        skippedLarge: 0,
        skippedUnreadable: 0,
      };
      try {
        const realRoot = workspace.realRoot;
        await assertCrawlInside(realRoot, realRoot, globPattern, 'glob');
        const files = await findFiles(realRoot, realRoot, globPattern, ignore, signal);
        /** Files read but not counted yet: their batch is matched in one worker round trip, then counted in order. */
        let pending: Array<{ shown: string; read: FileRead }> = [];
        let pendingBytes = 0;
        const flush = async (): Promise<void> => {
          const batch = pending;
          pending = [];
          pendingBytes = 0;
          const texts = batch.flatMap((entry) => (entry.read.bytes === undefined ? [] : [entry.read.bytes]));
          let perFile: LineMatch[][] = [];
          let more = false;
          if (texts.length > 0) {
            const started = performance.now();
            ({ perFile, more } = await matchLines(regex, texts, {
              maxMatches: maxMatches - details.matches,
              maxLineChars,
              timeoutMs: Math.max(1, regexTimeoutMs - matchMs),
              signal,
            }));
            matchMs += performance.now() - started;
          }
          let next = 0;
          for (const { shown, read } of batch) {
            details.filesSearched++;
            if (read.skipped === 'binary') details.skippedBinary++;
            else if (read.skipped === 'large') {
              details.skippedLarge++;
              large.push(shown);
            } else if (read.skipped === 'unreadable') details.skippedUnreadable++;
            if (read.bytes === undefined) continue;
            const matches = perFile[next++] ?? [];
            for (const match of matches) lines.push(`${shown}:${match.line}:${cutLine(match.text, match.length, maxLineChars)}`);
            details.matches += matches.length;
            if (matches.length > 0) details.filesMatched++;
            if (more && next === perFile.length) {
              // The search stopped in this file: the files after it were not searched.
              details.truncated = true;
              return;
            }
          }
        };
        for (const file of files) {
          const read = await readForSearch(file, { workspace, maxFileBytes, signal });
          pending.push({ shown: displayPath(realRoot, file), read });
          pendingBytes += read.bytes?.length ?? 0;
          const counted = details.filesSearched + pending.length;
          if (pending.length < BATCH_FILES && pendingBytes < BATCH_BYTES && counted % PROGRESS_EVERY_FILES !== 0) continue;
          await flush();
          if (details.truncated) break;
          if (details.filesSearched % PROGRESS_EVERY_FILES === 0) {
            yield { filesSearched: details.filesSearched, matches: details.matches };
          }
        }
        if (!details.truncated) await flush();
      } finally {
        await workspace.close();
      }

      const shownPattern = `/${regex.source}/${regex.flags}`;
      let text =
        lines.length === 0
          ? `No matches for ${shownPattern} in ${plural(details.filesSearched, 'file')} matching ${JSON.stringify(globPattern)}.`
          : lines.join('\n');
      if (details.truncated) {
        text +=
          `\n[stopped after ${maxMatches} matching lines (the limit); more matches exist. ` +
          'Narrow the pattern or the glob to see them.]';
      }
      if (large.length > 0) {
        const names = large.slice(0, 10).join(', ') + (large.length > 10 ? `, and ${large.length - 10} more` : '');
        text += `\n[skipped ${plural(large.length, 'file')} larger than ${maxFileBytes} bytes: ${names}]`;
      }
      if (details.skippedUnreadable > 0) {
        text += `\n[${plural(details.skippedUnreadable, 'file')} could not be read and ${details.skippedUnreadable === 1 ? 'was' : 'were'} skipped]`;
      }
      return { content: [{ type: 'text', text }], details };
    },
  });
}

/**
 * Compiles the model's pattern: with the `u` flag when it parses that way, else without.
 *
 * @throws Error saying the pattern is not a valid JavaScript regular expression, with the
 *   parser's message.
 */
export function compilePattern(pattern: string, ignoreCase: boolean): RegExp {
  const flags = ignoreCase ? 'i' : '';
  try {
    return new RegExp(pattern, `${flags}u`);
  } catch {
    // Fall through: some patterns that models write (e.g. "\-") are only valid without `u`.
  }
  try {
    return new RegExp(pattern, flags);
  } catch (error) {
    throw new Error(
      `pattern ${JSON.stringify(pattern)} is not a valid JavaScript regular expression: ${(error as Error).message}. ` +
        'Fix the syntax; escape ( ) [ ] { } . * + ? | \\ with a backslash to match them literally.',
    );
  }
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/** `text` is the line's head (at most `maxChars`), `length` the whole line's length. */
function cutLine(text: string, length: number, maxChars: number): string {
  if (length <= maxChars) return text;
  return `${text.slice(0, maxChars)}… [line cut: ${length - maxChars} more chars]`;
}

/** A file read for the search: its bytes, or why it is skipped. */
interface FileRead {
  bytes?: Buffer;
  skipped?: 'binary' | 'large' | 'unreadable';
}

/**
 * Opens one file through the workspace (link target inside the root, no window for a swap,
 * regular files only), checks its size against `maxFileBytes` and reads it. Errors other
 * than the abort are reported as `'unreadable'`, never thrown: one bad file must not fail
 * the whole search.
 */
async function readForSearch(file: string, o: { workspace: WorkspaceFs; maxFileBytes: number; signal: AbortSignal }): Promise<FileRead> {
  let handle: FileHandle | undefined;
  try {
    const opened = await o.workspace.openFile(file, file);
    handle = opened.handle;
    if (opened.size > o.maxFileBytes) return { skipped: 'large' };
    const chunks: Buffer[] = [];
    for await (const chunk of readChunks(handle, o.maxFileBytes, o.signal)) {
      if (chunks.length === 0 && chunk.includes(0)) return { skipped: 'binary' };
      chunks.push(chunk);
    }
    return { bytes: Buffer.concat(chunks) };
  } catch (error) {
    if (o.signal.aborted) throw o.signal.reason;
    if (!isFileSystemError(error)) throw error;
    return { skipped: 'unreadable' };
  } finally {
    await handle?.close();
  }
}

function isFileSystemError(error: unknown): boolean {
  if (error instanceof WorkspacePathError) return true;
  return typeof error === 'object' && error !== null && typeof (error as { syscall?: unknown }).syscall === 'string';
}
