/**
 * The event log: JSON Lines, one object a line, UTF-8.
 *
 * ```
 * {"format":"toolrun-events","version":1}
 * {"t":1764698400000,"batch":1,"event":{"type":"batch_start","label":"demo"}}
 * {"t":1764698400003,"batch":1,"event":{"type":"tool_execution_start","toolCallId":"a","toolName":"shell","index":0,"args":{…}}}
 * {"t":1764698402510,"batch":1,"event":{"type":"batch_end","aborted":false,"paused":0}}
 * ```
 *
 * The first line names the format and its version; every other line is one event of a
 * batch at `t` (epoch ms, `Date.now()` when the recorder saw it). `event` is a toolrun
 * event (`error` left out: it is a live value, not data) or one of the recorder's own two,
 * `batch_start` and `batch_end`. Values are bounded when written ({@link LINE_VALUE_LIMIT}).
 *
 * @module
 */
import { createReadStream } from 'node:fs';
import { textOf, Timeline } from './timeline.ts';
import type { ToolEvent } from '../core/run/events.ts';

/** The `format` of an event log's first line. */
export const LOG_FORMAT = 'toolrun-events';
/** The version this code writes and reads. */
export const LOG_VERSION = 1;
/** Characters of one value (arguments, progress, details, a text block) written to a log; longer ones become a cut string. */
export const LINE_VALUE_LIMIT = 16_384;
/** Longest line read from a log, in characters: a longer line is refused, not parsed. */
export const LINE_LIMIT = 1_048_576;

/** An event log that cannot be read: which file, which line, and why. */
export class EventLogError extends Error {
  override readonly name = 'EventLogError';
  constructor(
    message: string,
    /** 1-based line of the log, when the problem is on a line. */
    readonly line?: number,
  ) {
    super(message);
  }
}

/** A value bounded for the log: itself when its JSON is short, else its text cut to {@link LINE_VALUE_LIMIT}. */
function bounded(value: unknown): unknown {
  const text = textOf(value, LINE_VALUE_LIMIT);
  if (typeof value === 'string') return text;
  if (text.length >= LINE_VALUE_LIMIT || text.startsWith('[unreadable')) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** One log line for `event` of `batch` at `t` (no newline). */
export function logLine(t: number, batch: number, event: ToolEvent | { type: 'batch_start'; label: string } | { type: 'batch_end'; aborted: boolean; paused: number }): string {
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(event)) {
    if (key === 'error') continue;
    if (key === 'args' || key === 'progress') copy[key] = bounded(value);
    else if (key === 'result' || key === 'message') {
      const r = value as { content?: unknown; details?: unknown };
      copy[key] = { ...r, content: bounded(r?.content), ...('details' in (r ?? {}) ? { details: bounded(r.details) } : {}) };
    } else copy[key] = typeof value === 'object' && value !== null ? bounded(value) : value;
  }
  return JSON.stringify({ t, batch, event: copy });
}

/** The first line of a log. */
export function headerLine(): string {
  return JSON.stringify({ format: LOG_FORMAT, version: LOG_VERSION });
}

/**
 * Reads an event log into a {@link Timeline}, line by line (a log of any length is read in
 * bounded memory: the timeline keeps its bounds).
 *
 * @throws EventLogError when the file cannot be read, its first line is not this format's
 *   header, or a line is not JSON, too long, or not a log line; the message names the line.
 *   A log whose last line is cut off (a recorder killed mid-write) is read up to that line
 *   and says so in `truncated`.
 */
export async function readEventLog(file: string): Promise<{ timeline: Timeline; lines: number; truncated: boolean }> {
  const timeline = new Timeline({ title: file, live: false });
  const stream = createReadStream(file, { encoding: 'utf8' });
  const opened = new Promise<void>((resolve, reject) => {
    stream.once('open', () => resolve());
    stream.once('error', (error: NodeJS.ErrnoException) =>
      reject(new EventLogError(error.code === 'ENOENT' ? `no such event log: ${file}` : `cannot read ${file}: ${error.message}`)),
    );
  });
  await opened;
  const lines = linesOf(stream, LINE_LIMIT);
  let n = 0;
  let pendingError: EventLogError | undefined;
  let truncated = false;
  try {
    for await (const line of lines) {
      n++;
      if (pendingError !== undefined) throw pendingError;
      if (line === undefined) throw new EventLogError(`${file}:${n}: a line of more than ${LINE_LIMIT} characters: not an event log written by toolrun`, n);
      if (line.trim() === '') continue;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch (error) {
        // A bad line that is the last one is a cut-off write; one with lines after it is a broken log.
        pendingError = new EventLogError(`${file}:${n}: not JSON (${(error as Error).message})`, n);
        continue;
      }
      if (n === 1) {
        const header = value as { format?: unknown; version?: unknown } | null;
        if (typeof header !== 'object' || header === null || header.format !== LOG_FORMAT) {
          throw new EventLogError(`${file}:1: not a toolrun event log (its first line must be {"format":"${LOG_FORMAT}","version":${LOG_VERSION}}; write one with recordEvents)`, 1);
        }
        if (header.version !== LOG_VERSION) throw new EventLogError(`${file}:1: event log version ${shown(header.version)}; this toolrun reads version ${LOG_VERSION}`, 1);
        continue;
      }
      apply(timeline, value, file, n);
    }
  } finally {
    stream.destroy();
  }
  if (n === 0) throw new EventLogError(`${file} is empty: not an event log`);
  if (pendingError !== undefined) {
    if (n === 1) throw pendingError;
    truncated = true;
  }
  timeline.finish();
  return { timeline, lines: n, truncated };
}

/**
 * The lines of `stream` (LF or CRLF), each yielded as soon as it ends; a line past `limit`
 * characters is yielded as `undefined` the moment it is that long, unread further: a log of
 * one endless line (a pipe, a device, a file still growing) is refused, not buffered.
 * Not the MCP stdio `LineReader` (lib/mcp/stdio-lines.ts): that one bounds a wire message in
 * bytes (the MCP SDK's limit), keeps a long line's edges to answer its id and reads on, and
 * drops blank lines; a log is refused at its first long line, is bounded in characters like
 * the values it holds, and counts blank lines in the line numbers its errors name.
 */
async function* linesOf(stream: AsyncIterable<string>, limit: number): AsyncGenerator<string | undefined> {
  let rest = '';
  for await (const chunk of stream) {
    let start = 0;
    for (let end = chunk.indexOf('\n'); end !== -1; end = chunk.indexOf('\n', start)) {
      const line = rest + chunk.slice(start, end);
      rest = '';
      start = end + 1;
      yield line.length > limit ? undefined : line.endsWith('\r') ? line.slice(0, -1) : line;
    }
    rest += chunk.slice(start);
    if (rest.length > limit + 1) return yield undefined;
  }
  if (rest !== '') yield rest.length > limit ? undefined : rest;
}

function apply(timeline: Timeline, value: unknown, file: string, n: number): void {
  const entry = value as { t?: unknown; batch?: unknown; event?: unknown } | null;
  const where = `${file}:${n}`;
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw new EventLogError(`${where}: a log line must be an object {"t", "batch", "event"}, received ${shown(entry)}`, n);
  const { t, batch, event } = entry;
  if (typeof t !== 'number' || !Number.isFinite(t)) throw new EventLogError(`${where}: "t" must be a time in epoch ms, received ${shown(t)}`, n);
  if (typeof batch !== 'number' || !Number.isSafeInteger(batch)) throw new EventLogError(`${where}: "batch" must be an integer, received ${shown(batch)}`, n);
  const e = event as { type?: unknown; label?: unknown; aborted?: unknown; paused?: unknown } | null;
  if (typeof e !== 'object' || e === null || typeof e.type !== 'string') throw new EventLogError(`${where}: "event" must be an object with a "type", received ${shown(event)}`, n);
  if (e.type === 'batch_start') timeline.beginBatch(batch, typeof e.label === 'string' ? e.label : `batch ${batch}`, t);
  else if (e.type === 'batch_end') timeline.endBatch(batch, t, { aborted: e.aborted === true, ...(typeof e.paused === 'number' ? { paused: e.paused } : {}) });
  else timeline.event(batch, t, e as ToolEvent);
}

/** A value for an error message: strings quoted, at most 80 characters. */
function shown(value: unknown): string {
  return textOf(typeof value === 'string' ? JSON.stringify(value) : value, 80);
}
