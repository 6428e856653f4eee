/**
 * Reading recording files: JSON or JSONL, with syntax errors reported as one line that
 * names the file, the line and the column (a {@link CliInputError}).
 *
 * @module
 */
import { readFile } from 'node:fs/promises';
import { CliInputError } from '../errors.ts';

/** A parsed recording file: one JSON document, or the records of a JSON Lines file. */
export type ParsedFile =
  | { kind: 'json'; value: unknown }
  | { kind: 'jsonl'; records: JsonlRecord[] };

/** One record of a JSON Lines file and the 1-based line it came from. */
export interface JsonlRecord {
  line: number;
  value: unknown;
}

/**
 * Reads and parses `path`; `shownPath` is how the file is named in error messages.
 *
 * A `.jsonl` file is read line by line. A `.json` file is parsed as one document; when that
 * fails but every non-empty line parses on its own, it is JSON Lines after all (the BFCL
 * files are JSONL despite their `.json` extension, see `../shared/corpus/SOURCES.md`,
 * "Format observations" 10).
 *
 * @throws CliInputError `"<file>:<line>:<column>: JSON syntax error: <parser message>"`.
 */
export async function readRecordingFile(path: string, shownPath: string): Promise<ParsedFile> {
  // A byte-order mark is not JSON; editors on Windows add one.
  const text = (await readFile(path, 'utf8')).replace(/^\uFEFF/, '');
  if (path.endsWith('.jsonl')) return { kind: 'jsonl', records: parseJsonLines(text, shownPath) };
  try {
    return { kind: 'json', value: JSON.parse(text) as unknown };
  } catch (error) {
    const lines = nonEmptyLines(text);
    if (lines.length > 1 && lines.every(({ text: line }) => parsesAsJson(line))) {
      return { kind: 'jsonl', records: parseJsonLines(text, shownPath) };
    }
    // A JSONL file with one bad line reads better as "line N" than as a whole-file position.
    if (lines.length > 1 && lines[0] !== undefined && parsesAsJson(lines[0].text)) {
      return { kind: 'jsonl', records: parseJsonLines(text, shownPath) };
    }
    throw syntaxError(shownPath, text, error, 1);
  }
}

/**
 * Parses JSON Lines text: one JSON value per non-empty line.
 *
 * @throws CliInputError naming the file, the line and the column of the first bad line.
 */
function parseJsonLines(text: string, shownPath: string): JsonlRecord[] {
  const records: JsonlRecord[] = [];
  for (const { line, text: lineText } of nonEmptyLines(text)) {
    try {
      records.push({ line, value: JSON.parse(lineText) as unknown });
    } catch (error) {
      throw syntaxError(shownPath, lineText, error, line);
    }
  }
  return records;
}

function nonEmptyLines(text: string): Array<{ line: number; text: string }> {
  const out: Array<{ line: number; text: string }> = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] ?? '').replace(/\r$/, '');
    if (line.trim() !== '') out.push({ line: i + 1, text: line });
  }
  return out;
}

function parsesAsJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * Builds the one-line error: V8's messages give a position for some errors only (`… at
 * position N`) and quote the text around the token for others, newlines included; so the
 * first error is located here by a small JSON scanner, and its offset becomes line:column.
 */
function syntaxError(shownPath: string, text: string, error: unknown, firstLine: number): CliInputError {
  const located = locateJsonError(text);
  if (located === undefined) {
    const message = (error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, ' ');
    return new CliInputError(`${shownPath}:${firstLine}: JSON syntax error: ${truncate(message, 160)}`);
  }
  const before = text.slice(0, located.offset);
  const line = firstLine + (before.match(/\n/g)?.length ?? 0);
  const column = located.offset - before.lastIndexOf('\n');
  return new CliInputError(`${shownPath}:${line}:${column}: JSON syntax error: ${located.message}`);
}

/** Thrown inside {@link locateJsonError} at the first error. */
class JsonScanError {
  constructor(
    readonly offset: number,
    readonly message: string,
  ) {}
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/**
 * Finds the offset and a short description of the first JSON syntax error in `text`
 * (RFC 8259 grammar), or `undefined` when the scanner finds none (or nests too deep).
 */
function locateJsonError(text: string): { offset: number; message: string } | undefined {
  let i = 0;
  const fail = (message: string): never => {
    throw new JsonScanError(i, message);
  };
  const unexpected = (): never => fail(i >= text.length ? 'unexpected end of input' : `unexpected character ${JSON.stringify(text[i])}`);
  const ws = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text[i] ?? '')) i++;
  };
  const string = (): void => {
    i++;
    for (;;) {
      if (i >= text.length) fail('unterminated string');
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return;
      }
      if (c < 0x20) fail('control character in a string (escape it)');
      if (c === 0x5c) {
        const e = text[i + 1] ?? '';
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) fail('invalid \\u escape');
          i += 6;
          continue;
        }
        if (!'"\\/bfnrt'.includes(e) || e === '') fail(`invalid escape \\${e}`);
        i += 2;
        continue;
      }
      i++;
    }
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail(i >= text.length ? 'unexpected end of input' : 'expected a double-quoted property name');
        string();
        ws();
        if (text[i] !== ':') fail("expected ':' after a property name");
        i++;
        value();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return;
        }
        fail(i >= text.length ? 'unexpected end of input' : "expected ',' or '}' after a property value");
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (;;) {
        value();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return;
        }
        fail(i >= text.length ? 'unexpected end of input' : "expected ',' or ']' after an array element");
      }
    }
    if (c === '"') return string();
    for (const word of ['true', 'false', 'null']) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return;
      }
    }
    NUMBER.lastIndex = i;
    const number = NUMBER.exec(text);
    if (number !== null) {
      i += number[0].length;
      return;
    }
    unexpected();
  };
  try {
    value();
    ws();
    if (i < text.length) fail(`unexpected ${JSON.stringify(text[i])} after the JSON value`);
    return undefined;
  } catch (caught) {
    if (caught instanceof JsonScanError) return { offset: caught.offset, message: caught.message };
    return undefined; // RangeError: nested too deep for the scanner; the caller falls back.
  }
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
