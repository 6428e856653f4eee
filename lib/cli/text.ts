/**
 * Text for the terminal, in one place: every string the CLI prints that may hold someone
 * else's bytes (tool output, a model's arguments, an MCP server's stderr, a recording's
 * contents, a file name) goes through {@link terminalSafe} or {@link oneLine} first, so
 * no control character reaches the terminal raw — the live frame, the plain lines and the
 * one-line errors of `toolrun: …` all escape them the same way.
 *
 * Widths are terminal columns (`string-width`: East Asian wide characters and emoji count
 * 2, ANSI styles 0); cutting keeps styles intact (`slice-ansi`).
 *
 * @module
 */
import sliceAnsi from 'slice-ansi';
import stripAnsi from 'strip-ansi';
import stringWidth from 'string-width';

// Every C0 control but \n (handled by the callers that keep lines), DEL, and every C1 control.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x09\x0b-\x1f\x7f-\x9f]/g;

/**
 * Text safe to print: ANSI escape sequences (colors, cursor moves, OSC titles and links)
 * removed, tabs as two spaces, and every other C0 or C1 control character and DEL written
 * as a visible escape (`\x1b`, `\x7f`, `\r`…). Newlines are kept; see {@link oneLine}.
 *
 * @example
 * ```ts
 * terminalSafe('\x1b[31mred\x1b[0m\x7f'); // 'red\\x7f'
 * ```
 */
export function terminalSafe(text: string): string {
  return stripAnsi(text)
    .replace(/\t/g, '  ')
    .replace(CONTROL, (ch) => (ch === '\r' ? '\\r' : `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`));
}

/** {@link terminalSafe} on one line: runs of line breaks (and the spaces around them) become one space. */
export function oneLine(text: string): string {
  return terminalSafe(text.replace(/\s*[\r\n]+\s*/g, ' ')).trim();
}

/** The non-empty lines of `text`, each {@link terminalSafe}. */
export function splitLines(text: string): string[] {
  return text
    .split(/\r\n|\r|\n/)
    .map(terminalSafe)
    .filter((line) => line.trim() !== '');
}

/** `1 result`, `2 results`: a count with its noun in the right number (`plural` for irregular ones). */
export function count(n: number, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`;
}

/** Cuts `text` to at most `max` UTF-16 units, ending with `…` when cut (plain lines, no width). */
export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
}

/** Terminal columns `text` takes (ANSI styles take none). */
export function displayWidth(text: string): number {
  return stringWidth(text);
}

/**
 * Cuts `text` (which may carry ANSI styles) to at most `max` terminal columns, ending with
 * `…` when cut. A wide character that would straddle the edge is dropped whole.
 */
export function truncateWidth(text: string, max: number): string {
  if (max <= 0) return '';
  if (stringWidth(text) <= max) return text;
  let end = max - 1;
  let out = sliceAnsi(text, 0, end);
  while (end > 0 && stringWidth(out) > max - 1) out = sliceAnsi(text, 0, --end);
  return `${out}…`;
}

/** `text` padded with spaces to `width` columns. */
export function padWidth(text: string, width: number): string {
  return text + ' '.repeat(Math.max(0, width - stringWidth(text)));
}

/** Compact JSON of a value on one line, `''` for `undefined`, `String()` when it cannot be serialized. */
export function compactJson(value: unknown): string {
  if (value === undefined) return '';
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return oneLine(text);
}

/**
 * A call's arguments as the model meant them: OpenAI Chat and Responses send arguments as
 * a JSON *text*; when a string parses as a JSON object or array, that value is returned
 * (so it is shown as `{"location":"Paris"}`, not `"{\"location\": \"Paris\"}"`). Any other
 * value is returned as it is.
 */
export function parsedArguments(args: unknown): unknown {
  if (typeof args !== 'string') return args;
  const trimmed = args.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return args;
  try {
    return JSON.parse(trimmed) as unknown;
  } catch {
    return args;
  }
}

/**
 * A call's arguments in a few words: an object's values joined by spaces (strings as they
 * are, other values as compact JSON), e.g. `package.json` or `error lib true`; any other
 * value as compact JSON. JSON text arguments are parsed first ({@link parsedArguments}).
 */
export function argsSummary(args: unknown): string {
  const value = parsedArguments(args);
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    return oneLine(
      Object.values(value)
        .map((item) => (typeof item === 'string' ? item : compactJson(item)))
        .join(' '),
    );
  }
  return typeof value === 'string' ? oneLine(value) : compactJson(value);
}
