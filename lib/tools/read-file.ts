/**
 * The `read_file` tool: reads a UTF-8 file inside the workspace root, optionally a range of
 * lines, bounded to a byte budget.
 *
 * @module
 */
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import * as v from 'valibot';
import { describeValue } from '../core/values/guards.ts';
import type { Tool, ToolResult } from '../core/tool/tool.ts';
import { completeUtf8Prefix } from './bounded-output.ts';
import { displayPath, errorCode, resolveInsideRoot } from './workspace.ts';
import { WorkspaceFs, WorkspacePathError, readChunks } from './workspace-fs.ts';
import { defineTool } from '../core/schema/define-tool.ts';

/** Options of {@link readFileTool}. */
export interface ReadFileToolOptions {
  /**
   * The workspace root: paths are resolved against it, and paths outside it (lexically or
   * through a symbolic link) are refused. Resolved when the tool is created.
   * @default process.cwd()
   */
  root?: string;
  /**
   * The most bytes of file content one call returns (case C20). Reading stops there, at a
   * line boundary when possible, and a marker says where to continue with `offset`.
   * @default 262144 (256 KiB)
   */
  maxBytes?: number;
  /**
   * The most bytes of the file one call reads, whatever the line lengths: skipping to
   * `offset`, and looking for the end of a line longer than `maxBytes`, stop there (a 10 GB
   * file with one line costs this much, not 10 GB). Must be at least `maxBytes`.
   * @default 67108864 (64 MiB), or `maxBytes` when that is larger
   */
  maxScanBytes?: number;
}

/** The `details` of a `read_file` result. */
export interface ReadFileDetails {
  /** The path relative to the root, with `/` separators. */
  path: string;
  /** Size of the file in bytes. */
  fileBytes: number;
  /** The first line asked for (1-based). */
  startLine: number;
  /** The last line shown, in whole or in part; `startLine - 1` when nothing was shown. */
  endLine: number;
  /** True when the byte budget cut the output. */
  truncated: boolean;
  /**
   * The `offset` that continues after what was shown, or `null` when the file (or the asked
   * range) was shown to its end, or when the next line starts beyond `maxScanBytes` (the text says so).
   */
  nextOffset: number | null;
  /** Bytes of the file read to answer the call (at most `maxScanBytes`). */
  bytesRead: number;
}

/** The input a `read_file` call takes. */
export const readFileInput = v.strictObject({
  path: v.pipe(
    v.string(),
    v.minLength(1),
    v.description('Path of the file to read, relative to the workspace root, e.g. "src/index.ts".'),
  ),
  offset: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(1), v.description('The 1-based line number to start reading at. Default 1.')),
  ),
  limit: v.optional(
    v.pipe(
      v.number(),
      v.integer(),
      v.minValue(1),
      v.description('The most lines to return. Default: to the end of the file, within the size limit.'),
    ),
  ),
});

/** The validated input of a `read_file` call. */
export type ReadFileInput = v.InferOutput<typeof readFileInput>;

/** The `read_file` tool's type. */
export type ReadFileTool = Tool<ReadFileInput, never, ToolResult<ReadFileDetails>, 'read_file'>;

/** Bytes at the start of the file checked for a NUL byte to tell a binary file (what is returned is checked too). */
const BINARY_SNIFF_BYTES = 8192;

/**
 * Creates the `read_file` tool: returns the text of a UTF-8 file, from line `offset` (1-based)
 * for `limit` lines, at most `maxBytes` bytes.
 *
 * The file is read in 64 KiB chunks from one descriptor, never loaded whole: lines before
 * `offset` are only counted, and reading stops as soon as the range or the byte budget is
 * full, and in any case after `maxScanBytes` bytes, so a multi-gigabyte log (even one whose
 * first line is gigabytes long) costs no more than `maxBytes` of memory and `maxScanBytes`
 * of reading (case C20). When the budget cuts the output, it ends at the last whole line and
 * a marker states the limit, the lines shown, how many bytes of the file are left, and the
 * `offset` to continue with; a single line longer than the budget is shown cut. When `limit`
 * stops before the end of the file, a note gives the next `offset` too.
 *
 * The path is resolved inside `root`; symbolic links are followed only when their target is
 * inside the root, and the file is then opened without a window in which a component could
 * be swapped for a link leading outside or the file for a FIFO (see `WorkspaceFs`: on Linux
 * every component is opened from its parent's descriptor with `O_NOFOLLOW`, the file with
 * `O_NONBLOCK`, and only a regular file by `fstat` is read).
 *
 * Throws (the runtime turns it into an error result for the model), each message naming the
 * path and what to do instead:
 * - the path is outside the root, lexically or through a symbolic link, or it changed into
 *   a link while it was opened;
 * - the file does not exist (suggests `list_files`), or is a directory or another non-regular file;
 * - the file looks binary (a NUL byte in its first 8 KiB or in the text that would be returned);
 * - `offset` is past the last line, or starts beyond the first `maxScanBytes` bytes;
 * - the abort reason of `ctx.signal`.
 *
 * @throws RangeError at creation when `maxBytes` or `maxScanBytes` is not a positive
 *   integer, or `maxScanBytes < maxBytes`.
 * @example
 * ```ts
 * const readFile = readFileTool({ root: '/repo' });
 * // model call: { "path": "src/index.ts", "offset": 100, "limit": 50 }
 * ```
 */
export function readFileTool(options: ReadFileToolOptions = {}): ReadFileTool {
  const root = path.resolve(options.root ?? process.cwd());
  const maxBytes = options.maxBytes ?? 256 * 1024;
  if (!Number.isInteger(maxBytes) || maxBytes < 1) {
    throw new RangeError(`readFileTool: options.maxBytes must be a positive integer, received ${describeValue(maxBytes)}`);
  }
  const maxScanBytes = options.maxScanBytes ?? Math.max(64 * 1024 * 1024, maxBytes);
  if (!Number.isInteger(maxScanBytes) || maxScanBytes < maxBytes) {
    throw new RangeError(
      `readFileTool: options.maxScanBytes must be an integer >= maxBytes (${maxBytes}), received ${describeValue(maxScanBytes)}`,
    );
  }
  return defineTool<typeof readFileInput, never, ToolResult<ReadFileDetails>, 'read_file'>({
    name: 'read_file',
    description:
      'Read a UTF-8 text file in the workspace. Returns its text; use offset and limit (line numbers) to read part ' +
      `of a large file. At most ${maxBytes} bytes are returned per call; a note says where to continue.`,
    input: readFileInput,
    async execute(input, { signal }) {
      signal.throwIfAborted();
      const requested = input.path;
      const absolute = resolveInsideRoot(root, requested);
      const shown = displayPath(root, absolute);
      const workspace = await WorkspaceFs.open(root);
      let handle: FileHandle | undefined;
      try {
        let fileBytes: number;
        try {
          ({ handle, size: fileBytes } = await workspace.openFile(absolute, requested));
        } catch (error) {
          throw explainOpenError(error, requested, absolute);
        }
        const offset = input.offset ?? 1;
        const read = await readRange(handle, { offset, limit: input.limit, maxBytes, maxScanBytes, fileBytes, signal });
        if (read.binary) {
          throw new Error(
            `${JSON.stringify(requested)} looks like a binary file (it has a NUL byte in its first ${BINARY_SNIFF_BYTES} ` +
              'bytes or in the lines asked for); read_file returns UTF-8 text only. Use the shell tool (e.g. "file PATH" or ' +
              '"xxd PATH | head") to inspect it.',
          );
        }
        if (read.beyondScan) {
          throw new Error(
            `offset ${offset} of ${JSON.stringify(requested)} was not reached within the first ${maxScanBytes} bytes ` +
              `(read_file's scan limit; they hold ${read.totalLines} whole lines). Use the shell tool to read that far ` +
              `into the file, e.g. "tail -c +BYTE PATH | head -c 10000".`,
          );
        }
        if (read.pastEnd) {
          throw new Error(
            `offset ${offset} is past the end of ${JSON.stringify(requested)}, which has ${read.totalLines} ` +
              `line${read.totalLines === 1 ? '' : 's'}; use an offset between 1 and ${Math.max(1, read.totalLines)}`,
          );
        }
        return {
          content: [{ type: 'text', text: withNotes(read, { offset, maxBytes, maxScanBytes, shown, fileBytes }) }],
          details: {
            path: shown,
            fileBytes,
            startLine: offset,
            endLine: read.endLine,
            truncated: read.truncated || read.longLine,
            nextOffset: read.nextOffset,
            bytesRead: read.bytesRead,
          },
        };
      } finally {
        await handle?.close();
        await workspace.close();
      }
    },
  });
}

/** The error the model reads when the file could not be opened. */
function explainOpenError(error: unknown, requested: string, absolute: string): unknown {
  if (error instanceof WorkspacePathError) {
    if (error.reason === 'not-regular' && error.message.endsWith('is a directory, not a file')) {
      return new Error(
        `${JSON.stringify(requested)} is a directory, not a file; call list_files with path ${JSON.stringify(requested)} to see its files`,
      );
    }
    if (error.reason === 'not-regular') return new Error(`${error.message}; read_file reads files only`);
    return new Error(error.message);
  }
  const code = errorCode(error);
  if (code === 'ENOENT' || code === 'ENOTDIR') {
    return new Error(
      `file not found: ${JSON.stringify(requested)} (looked for ${absolute}). ` +
        'Call list_files with a pattern such as "**/*" to see which files exist.',
    );
  }
  return error;
}

function withNotes(
  read: RangeRead,
  o: { offset: number; maxBytes: number; maxScanBytes: number; shown: string; fileBytes: number },
): string {
  let text = read.text;
  let note: string | undefined;
  if (read.longLine) {
    const rest =
      read.nextOffset !== null
        ? ` ${read.cutBytes} bytes of the file follow; continue with offset=${read.nextOffset}.]`
        : read.endUnknown
          ? ` Its end was not found within the first ${o.maxScanBytes} bytes of the file (the scan limit).]`
          : ']';
    note =
      `[line ${read.endLine} alone is longer than the ${o.maxBytes}-byte limit; only its first ${read.shownBytes} bytes ` +
      `are shown. Use the shell tool (e.g. "cut -c 1-2000") to see the rest of it.${rest}`;
  } else if (read.truncated) {
    note =
      `[output limit of ${o.maxBytes} bytes reached: showing lines ${o.offset}-${read.endLine} of ${o.shown} ` +
      `(${o.fileBytes} bytes); ${read.cutBytes} bytes of the file after line ${read.endLine} are not shown. ` +
      `Call read_file with offset=${read.nextOffset} to continue.]`;
  } else if (read.nextOffset !== null) {
    note =
      `[showing lines ${o.offset}-${read.endLine}; the file continues (${read.cutBytes} more bytes): ` +
      `call read_file with offset=${read.nextOffset} to read on]`;
  }
  if (note !== undefined) text += `${text === '' || text.endsWith('\n') ? '' : '\n'}${note}`;
  return text;
}

interface RangeRead {
  text: string;
  binary: boolean;
  /** `offset` is after the last line (and not 1). */
  pastEnd: boolean;
  /** `offset` was not reached within `maxScanBytes`. */
  beyondScan: boolean;
  /** Lines in the file (whole lines seen, when `beyondScan`); exact only when the whole file was read. */
  totalLines: number;
  endLine: number;
  truncated: boolean;
  /** The output is the head of one line longer than the budget. */
  longLine: boolean;
  /** With `longLine`: the scan limit came before the line's end. */
  endUnknown: boolean;
  shownBytes: number;
  /** Bytes of the file after the shown text (after the whole long line, for `longLine`). */
  cutBytes: number;
  nextOffset: number | null;
  bytesRead: number;
}

/**
 * Reads `handle` and collects lines `offset .. offset + limit - 1`, at most `maxBytes`,
 * reading at most `maxScanBytes` of the file.
 *
 * Invariants while reading: `line` is the number of the line the byte at `filePos` belongs
 * to; it began at file position `lineFilePos`; when it is in range, its bytes start at
 * `parts[lineParts]` and at output length `lineOutBytes` (each part holds bytes of one line,
 * so a line always starts at a part boundary). `parts` hold at most `maxBytes` bytes.
 */
async function readRange(
  handle: FileHandle,
  o: { offset: number; limit: number | undefined; maxBytes: number; maxScanBytes: number; fileBytes: number; signal: AbortSignal },
): Promise<RangeRead> {
  const lastWanted = o.limit === undefined ? Infinity : o.offset + o.limit - 1;
  const parts: Buffer[] = [];
  let outBytes = 0;
  let line = 1;
  let lineFilePos = 0;
  let lineParts = 0;
  let lineOutBytes = 0;
  let filePos = 0;
  let skippingLongLine = false;
  let stop: 'range' | 'budget' | 'long-line' | undefined;
  let first = true;

  chunks: for await (const chunk of readChunks(handle, o.maxScanBytes, o.signal)) {
    if (first) {
      first = false;
      if (chunk.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return { ...emptyRead(), binary: true, bytesRead: chunk.length };
    }
    let pos = 0;
    while (pos < chunk.length) {
      const nl = chunk.indexOf(10, pos);
      const end = nl === -1 ? chunk.length : nl + 1;
      if (!skippingLongLine && line >= o.offset) {
        const size = end - pos;
        if (outBytes + size <= o.maxBytes) {
          parts.push(chunk.subarray(pos, end));
          outBytes += size;
        } else if (line === o.offset) {
          // The first line asked for is bigger than the whole budget: keep its head, skip the rest of it.
          parts.push(chunk.subarray(pos, pos + (o.maxBytes - outBytes)));
          outBytes = o.maxBytes;
          skippingLongLine = true;
        } else {
          // Drop the partial line so that the output ends on a whole line.
          parts.length = lineParts;
          outBytes = lineOutBytes;
          stop = 'budget';
          break chunks;
        }
      }
      filePos += end - pos;
      pos = end;
      if (nl !== -1) {
        if (skippingLongLine) {
          stop = 'long-line';
          break chunks;
        }
        line++;
        if (line > lastWanted) {
          stop = 'range';
          break chunks;
        }
        lineFilePos = filePos;
        lineParts = parts.length;
        lineOutBytes = outBytes;
      }
    }
  }
  const bytesRead = filePos;
  // The scan limit came before the end of the file.
  const scanCut = stop === undefined && filePos >= o.maxScanBytes && filePos < o.fileBytes;
  if (scanCut) {
    if (line < o.offset) return { ...emptyRead(), beyondScan: true, totalLines: line - 1, bytesRead };
    if (lineParts > 0) {
      // Lines were collected: end on the last whole one, as when the budget is full.
      parts.length = lineParts;
      outBytes = lineOutBytes;
      stop = 'budget';
    } else {
      skippingLongLine = true;
    }
  }
  if (skippingLongLine) stop = 'long-line';

  const out = Buffer.concat(parts, outBytes);
  // Binary detection over what is returned, not only the file's head.
  if (out.includes(0)) return { ...emptyRead(), binary: true, bytesRead };
  const base = { ...emptyRead(), text: out.toString('utf8'), shownBytes: outBytes, bytesRead };
  switch (stop) {
    case 'budget':
      return {
        ...base,
        endLine: line - 1,
        truncated: true,
        cutBytes: Math.max(0, o.fileBytes - lineFilePos),
        nextOffset: line,
      };
    case 'long-line': {
      const shownBytes = completeUtf8Prefix(out);
      const cutBytes = Math.max(0, o.fileBytes - filePos);
      return {
        ...base,
        text: out.toString('utf8', 0, shownBytes),
        shownBytes,
        endLine: line,
        longLine: true,
        endUnknown: scanCut,
        cutBytes,
        nextOffset: cutBytes > 0 && !scanCut ? line + 1 : null,
      };
    }
    case 'range': {
      const cutBytes = Math.max(0, o.fileBytes - filePos);
      return { ...base, endLine: line - 1, cutBytes, nextOffset: cutBytes > 0 ? line : null };
    }
    case undefined: {
      // End of file: the last line counts if it has bytes (no newline after it).
      const totalLines = filePos > lineFilePos ? line : line - 1;
      return {
        ...base,
        pastEnd: o.offset > 1 && o.offset > totalLines,
        totalLines,
        endLine: Math.max(o.offset - 1, totalLines),
      };
    }
  }
}

function emptyRead(): RangeRead {
  return {
    text: '',
    binary: false,
    pastEnd: false,
    beyondScan: false,
    totalLines: 0,
    endLine: 0,
    truncated: false,
    longLine: false,
    endUnknown: false,
    shownBytes: 0,
    cutBytes: 0,
    nextOffset: null,
    bytesRead: 0,
  };
}
