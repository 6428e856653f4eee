/**
 * Total checks and readings of values toolrun did not build, used by every layer (core,
 * schemas, formats, extras, mcp, otel, the CLI): none of them throws, whatever the value is (a revoked Proxy,
 * a throwing getter), `describeValue`, the bounded text of a value for error messages, and
 * `clipText`, the one way a text is cut (its marker says the whole length, wherever the cut
 * text is shown: an error message, the inspector's page). It imports nothing.
 *
 * @module
 */
const UNREADABLE = 'a value that could not be read (its message, name and text all threw)';
const UNREADABLE_ERROR = 'an Error whose name or message could not be read (its getter threw)';

/**
 * A text for a thrown value: an Error's message (with its name unless plain `Error`), a
 * string as is, anything else as its JSON or `String()` text. Never throws: a value whose
 * every reading throws (a revoked Proxy) gets a fixed sentence.
 */
export function thrownText(error: unknown): string {
  let isError = false;
  try {
    isError = error instanceof Error;
    if (isError) {
      const name: unknown = (error as Error).name;
      const message: unknown = (error as Error).message;
      const text = typeof message === 'string' ? message : String(message);
      return typeof name === 'string' && name !== '' && name !== 'Error' ? `${name}: ${text}` : text;
    }
    if (typeof error === 'string') return error;
  } catch {
    // A throwing getter or a revoked Proxy: an Error says so; anything else gets the plainer readings below.
    if (isError) return UNREADABLE_ERROR;
  }
  return plainText(error) ?? UNREADABLE;
}

/** JSON text, else `String()` text, else `undefined` when both throw. */
export function plainText(value: unknown): string | undefined {
  try {
    const json = JSON.stringify(value);
    if (typeof json === 'string') return json;
  } catch {
    // A cycle, a BigInt, a throwing toJSON: fall back to String().
  }
  try {
    return String(value);
  } catch {
    return undefined;
  }
}

/** True for any object that is not an array (whatever its prototype: a class instance, a `Date`); false, not a throw, for a revoked Proxy. */
export function isObjectRecord(value: unknown): value is Record<string, unknown> {
  try {
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

/** True for async iterators (async generators included). */
export function isAsyncIterator(value: unknown): value is AsyncIterator<unknown, unknown, undefined> {
  if (typeof value !== 'object' || value === null) return false;
  try {
    return typeof (value as AsyncIterator<unknown>).next === 'function' && Symbol.asyncIterator in value;
  } catch {
    return false; // a revoked Proxy: the result reader reports it
  }
}

/** True for promises and other thenables; false (never a throw) for a value whose `then` cannot be read. */
export function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return false;
  try {
    return typeof (value as PromiseLike<unknown>).then === 'function';
  } catch {
    return false; // a revoked Proxy or a throwing `then` getter: not a promise; its reader reports it
  }
}

/**
 * A short name of a value's type for problem texts (`null`, `an array`, `the string "ab"`,
 * `a number (5)`); a string is cut at 40 characters. Never reads the value's fields.
 */
export function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (typeof value === 'string') return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  if (typeof value === 'object') {
    try {
      return Array.isArray(value) ? 'an array' : 'an object';
    } catch {
      return 'a revoked Proxy';
    }
  }
  // Not a function's String(): that is its whole source text.
  if (typeof value === 'function') return 'a function';
  return `a ${typeof value} (${String(value as number)})`;
}

/**
 * `text` bounded to `limit` characters: itself when it is that short, else its first `limit`
 * characters and the marker `… (N chars)`, N being the whole text's length. With `quote`,
 * the kept characters are JSON-quoted and the marker stays outside the quotes, so a reader
 * tells the text (which may be a hostile peer's) from what toolrun added.
 *
 * @example
 * ```ts
 * clipText('abcdef', 3); // 'abc… (6 chars)'
 * clipText('abcdef', 3, { quote: true }); // '"abc"… (6 chars)'
 * clipText('abc', 3, { quote: true }); // '"abc"'
 * ```
 */
export function clipText(text: string, limit: number, options: { quote?: boolean } = {}): string {
  const kept = text.length <= limit ? text : text.slice(0, limit);
  const shown = options.quote === true ? JSON.stringify(kept) : kept;
  return kept === text ? shown : `${shown}… (${text.length} chars)`;
}

/** A short, bounded description of a value and its type, for error messages. */
export function describeValue(value: unknown, maxChars = 120): string {
  if (value === undefined) return 'undefined';
  if (value === null) return 'null';
  if (typeof value === 'function') return `a function (${value.name || 'anonymous'})`;
  let kind: string;
  try {
    kind = Array.isArray(value) ? 'array' : typeof value;
  } catch {
    return 'a revoked Proxy';
  }
  let text: string;
  try {
    text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  } catch {
    try {
      text = String(value);
    } catch {
      text = '(unreadable)'; // a revoked Proxy, or a cycle whose toString throws
    }
  }
  text = clipText(text, maxChars);
  return kind === 'string' ? `string ${text}` : `${kind} ${text}`;
}
