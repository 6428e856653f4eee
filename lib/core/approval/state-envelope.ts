/**
 * The signed envelope of a paused state, and reading one back without trusting it (contract
 * H9): `{ version: 2, kind, payload, signature? }`, where `payload` is the state's body as
 * JSON text and `signature` the HMAC-SHA256 of exactly that text (after a kind tag). Shared by
 * the batch's state (`pause.ts`, `resume.ts`) and `runAgent`'s (`extras/agent/paused-state.ts`).
 *
 * Why an envelope around a string: the signature covers the payload's exact characters, so
 * it is checked before the body is parsed (no structure is built from an unsigned text when a
 * secret is set), and nothing has to be re-serialized in a canonical form to check it. A state
 * given as an object is four fields: it is read as it is, never stringified and parsed again.
 * In the process that sealed it, the object itself also carries (in a `WeakMap`) the body
 * its payload was written from: a resume from that object, its payload unchanged, reads
 * that body instead of parsing the payload, after the same bounds, signature and scan.
 *
 * Every text is bounded before `JSON.parse` sees it: its length, then one linear scan that
 * counts nesting, keys, objects and arrays, and values (parsing cost grows with those, far
 * more than with characters: docs/adr/0014-paused-state.md) and refuses keys a state never has.
 * Nothing is walked after parsing, and nothing here recurses.
 *
 * Portable: Web Crypto only, no `node:` import.
 *
 * @module
 */
import * as v from 'valibot';
import { describeValue } from '../values/guards.ts';
import { ResumeError } from './resume-error.ts';

/** The format version this toolrun writes and reads. */
const STATE_VERSION = 2;

/** The kinds of paused state; the kind is part of what is signed, so one cannot pass for the other. */
export type StateKind = 'toolrun/paused-batch' | 'toolrun/paused-agent';

/** A paused state as it is stored and sent: JSON, the body inside as text. */
export interface StateEnvelope<K extends StateKind = StateKind> {
  readonly version: 2;
  readonly kind: K;
  /** The state's body as JSON text; read it with nothing but `runTools` / `runAgent`. */
  readonly payload: string;
  /** HMAC-SHA256 (hex) of the kind tag and `payload`, when the run had a `signingSecret`. */
  readonly signature?: string;
}

/**
 * Bounds on a payload's JSON, checked by a scan before it is parsed (H9). Sized so that
 * `JSON.parse` of the worst text within them stays short (measured by `bench/state-limits.ts`):
 * parsing time follows keys and nesting, not characters.
 */
const PAYLOAD_LIMITS: ScanLimits = {
  /** Nesting of arrays and objects. */
  depth: 256,
  /** Object keys, over the whole payload (a 1,000-call batch with 2 KB results has about 20,000). */
  keys: 100_000,
  /** Objects and arrays, over the whole payload (that batch has about 7,000): parsing nested ones costs the most. */
  containers: 200_000,
  /** Values, counted as every `[`, `{` and `,` outside strings (that batch: about 22,000). */
  values: 1_000_000,
};

/** The envelope's own fields. */
const ENVELOPE_KEYS = new Set(['version', 'kind', 'payload', 'signature']);

/** Keys refused everywhere in a payload: one that turns a later merge into a prototype change. */
const POISON_KEY = '__proto__';
/** Keys refused outside free JSON values: names that, as a tool name or record key, mean something to objects. */
const OBJECT_NAMES = new Set(['constructor', 'prototype']);
/**
 * Fields whose value is free JSON from the model, a tool or a hook (call arguments, a
 * request's input, a result's details): `constructor` and `prototype` are plain data there.
 */
const DATA_FIELDS = new Set(['arguments', 'input', 'details']);

const malformed = (message: string): never => {
  throw new ResumeError('malformed', message);
};

/** Bounds a scan checks; see {@link PAYLOAD_LIMITS}. */
interface ScanLimits {
  readonly depth: number;
  readonly keys: number;
  readonly containers: number;
  readonly values: number;
}

/**
 * Refuses `text` (JSON) without parsing it when its nesting, keys, containers or values pass
 * `limits`, or when a key is a name a state never has: `__proto__` anywhere, `constructor`
 * or `prototype` outside free JSON values ({@link DATA_FIELDS}). One pass: a string is
 * skipped with `indexOf` to its closing quote, character by character only when it holds a
 * backslash (known from the position of the next backslash in the text, itself found with
 * `indexOf` and searched again only once passed: linear over the whole text). A key is
 * compared only when its length is one of the names' ({@link KEY_LENGTHS}), first by its first
 * character, in place (without copying it out), or it has an escape (then decoded exactly, by `JSON.parse` of that one string).
 * Whether the scan is inside a free JSON value is one number, the depth where the outermost
 * one opened. Text that is not JSON passes if it stays within the limits: `JSON.parse`
 * refuses it next.
 */
function scanJson(text: string, limits: ScanLimits, what: string): void {
  let depth = 0;
  let keys = 0;
  let containers = 0;
  let values = 0;
  /** The depth of the outermost free JSON value the scan is in (a container opened under a data field); Infinity: none. */
  let dataFrom = Infinity;
  /** The last string token's quotes, whether it has an escape, and whether a key just named a data field. */
  let stringStart = -1;
  let stringEnd = -1;
  let stringEscaped = false;
  let dataKey = false;
  /** Where the next backslash is (`length`: none left); searched again once the scan is past it (-1: not searched yet). */
  let backslash = -1;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      let quote = text.indexOf('"', i + 1);
      if (quote < 0) return;
      if (backslash <= i) {
        backslash = text.indexOf('\\', i + 1);
        if (backslash < 0) backslash = length;
      }
      stringEscaped = backslash < quote;
      if (stringEscaped) {
        // Character by character from the first backslash, skipping what each one escapes.
        for (quote = backslash; quote < length; quote++) {
          const d = text.charCodeAt(quote);
          if (d === 0x5c /* \ */) quote++;
          else if (d === 0x22) break;
        }
        if (quote >= length) return;
        backslash = -1;
      }
      stringStart = i;
      stringEnd = quote;
      i = quote;
    } else if (c === 0x3a /* : */) {
      if (++keys > limits.keys) malformed(`${what} has more than ${limits.keys} keys`);
      dataKey = (stringEscaped || keyLengthMatches(stringEnd - stringStart - 1)) && checkKey(text, stringStart, stringEnd, stringEscaped, depth >= dataFrom, what);
    } else if (c === 0x2c /* , */) {
      if (++values > limits.values) malformed(`${what} has more than ${limits.values} values`);
      dataKey = false;
    } else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > limits.depth) malformed(`${what} is nested more than ${limits.depth} deep`);
      if (++containers > limits.containers) malformed(`${what} has more than ${limits.containers} objects and arrays`);
      if (++values > limits.values) malformed(`${what} has more than ${limits.values} values`);
      if (dataKey && depth < dataFrom) dataFrom = depth;
      dataKey = false;
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) {
      if (--depth < dataFrom) dataFrom = Infinity;
      dataKey = false;
    }
  }
}

/** The names {@link checkKey} looks for: refused ones and data fields. */
const KEY_NAMES = [POISON_KEY, ...OBJECT_NAMES, ...DATA_FIELDS];
/** Their lengths, as bits of one number (all are below 32): a key of any other length (most of a state's) is not compared at all. */
const KEY_LENGTHS = KEY_NAMES.reduce((bits, name) => bits | (1 << name.length), 0);
/** True when a key of `chars` characters could be one of {@link KEY_NAMES}. */
const keyLengthMatches = (chars: number): boolean => chars >= 0 && chars < 32 && ((KEY_LENGTHS >>> chars) & 1) === 1;

/**
 * The key between the quotes at `start` and `end` (`escaped`: it holds a backslash): refused
 * when it is a name a state never has there; true when it names a data field (its value is
 * free JSON).
 */
function checkKey(text: string, start: number, end: number, escaped: boolean, inData: boolean, what: string): boolean {
  if (start < 0) return false;
  let key: string | undefined;
  if (escaped) {
    try {
      key = JSON.parse(text.slice(start, end + 1)) as string;
    } catch {
      return false; // Not a JSON string: JSON.parse of the whole text refuses it.
    }
  } else {
    // Compared in place: most keys have none of the names' lengths, the rest are not copied out.
    const chars = end - start - 1;
    for (const name of KEY_NAMES) {
      if (name.length === chars && text.charCodeAt(start + 1) === name.charCodeAt(0) && text.startsWith(name, start + 1)) {
        key = name;
        break;
      }
    }
    if (key === undefined) return false;
  }
  if (key === POISON_KEY || (!inData && OBJECT_NAMES.has(key))) malformed(`${what} has a key named ${JSON.stringify(key)}, which a state never has`);
  return !inData && DATA_FIELDS.has(key);
}

/** The length of `JSON.stringify(text)`: `text`, its quotes, and a backslash per `"` or `\` (a payload is JSON text: no control character is raw in it). */
function quotedLength(text: string): number {
  let length = text.length + 2;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 || c === 0x5c) length++;
  }
  return length;
}

/**
 * The bytes a signature covers: the kind and version, a newline, then the payload as UTF-8.
 * Encoded in two parts and copied together, not as one joined string: joining makes a
 * string V8 must flatten (copy) before encoding it, which cost ~0.4 µs per call of a
 * 1,000-call batch, more than encoding and copying the bytes (the parts split at the
 * newline, a code point boundary, so the bytes are the same).
 */
function signedBytes(kind: StateKind, payload: string): Uint8Array<ArrayBuffer> {
  const encoder = new TextEncoder();
  const head = encoder.encode(`${kind}@${STATE_VERSION}\n`);
  const body = encoder.encode(payload);
  const bytes = new Uint8Array(head.length + body.length);
  bytes.set(head);
  bytes.set(body, head.length);
  return bytes;
}

/** An HMAC-SHA256 key for `secret` (its type, CryptoKey, is a DOM type name, left to inference). */
async function hmacKey(secret: string | Uint8Array) {
  const bytes = typeof secret === 'string' ? new TextEncoder().encode(secret) : new Uint8Array(secret);
  return crypto.subtle.importKey('raw', bytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
}

function hex(bytes: ArrayBuffer): string {
  let text = '';
  for (const byte of new Uint8Array(bytes)) text += byte.toString(16).padStart(2, '0');
  return text;
}

/**
 * Bodies kept with the state objects {@link sealState} made, for a resume from that very
 * object in this process: the payload they were written as, and the body. Weak: a body goes
 * when the application lets go of its state object; taken (deleted) by the first reading.
 */
const keptBodies = new WeakMap<object, { readonly payload: string; readonly body: unknown }>();

/**
 * The envelope of `body` (plain JSON), signed with `secret` when there is one. With `keep`,
 * the caller vouches that `body` is exactly what `JSON.parse` of its payload gives and that
 * nothing else holds any part of it: it is kept with the envelope object, and a reading of
 * that object whose payload is still this text takes it instead of parsing the text again.
 */
export async function sealState<K extends StateKind>(kind: K, body: unknown, secret: string | Uint8Array | undefined, keep = false): Promise<StateEnvelope<K>> {
  const payload = JSON.stringify(body);
  const envelope: StateEnvelope<K> =
    secret === undefined ? { version: STATE_VERSION, kind, payload } : { version: STATE_VERSION, kind, payload, signature: hex(await crypto.subtle.sign('HMAC', await hmacKey(secret), signedBytes(kind, payload))) };
  if (keep) keptBodies.set(envelope, { payload, body });
  return envelope;
}

/** What reading a state needs: the kind it must be, its bound, the secret (if any). */
export interface OpenStateOptions {
  readonly kind: StateKind;
  /** Longest JSON text of the whole state (`JSON.stringify(state).length`), in characters. */
  readonly maxChars: number;
  readonly secret: string | Uint8Array | undefined;
  /** Added to the `malformed` message when the state is of the other kind. */
  readonly otherKindHint?: string;
}

/**
 * Reads a state given to `resume` (its JSON text, or the envelope object) into its parsed,
 * unvalidated body: bounded (length, then nesting, keys and values) before anything is
 * parsed, the signature checked over the payload's exact text before the body is built, and
 * no `__proto__` key anywhere. Throws a {@link ResumeError} and nothing else.
 */
async function openState(given: unknown, options: OpenStateOptions): Promise<unknown> {
  const { kind, maxChars } = options;
  let envelope: Record<string, unknown>;
  if (typeof given === 'string') {
    if (given.length > maxChars) malformed(`resume.state is ${given.length} characters of JSON; at most ${maxChars} are read (maxStateChars)`);
    // An envelope is one flat object of four fields: anything nested or longer is refused unparsed.
    try {
      scanJson(given, { depth: 1, keys: ENVELOPE_KEYS.size, containers: 1, values: ENVELOPE_KEYS.size + 1 }, 'resume.state (a paused state is { version, kind, payload, signature? })');
    } catch (error) {
      // A state of format 1 was its body itself, as JSON.stringify wrote it.
      if (/^\s*\{"version":1,"kind":"toolrun\/paused-/.test(given.slice(0, 64))) {
        throw new ResumeError('version', 'resume.state has format version 1; this toolrun reads version 2 (a state of another format version cannot be resumed: pause the batch again)');
      }
      throw error;
    }
    let raw: unknown;
    try {
      raw = JSON.parse(given);
    } catch (error) {
      throw new ResumeError('malformed', `resume.state is not JSON: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return malformed(`resume.state is not a paused state (an object { version, kind, payload }): ${describeValue(raw)}`);
    envelope = raw as Record<string, unknown>;
  } else {
    if (typeof given !== 'object' || given === null || Array.isArray(given)) return malformed(`resume.state is not a paused state (an object { version, kind, payload }, or its JSON text): ${describeValue(given)}`);
    envelope = given as Record<string, unknown>;
  }
  // Each field is read once: a getter cannot answer one thing to the check and another to the use.
  const version = envelope.version;
  const givenKind = envelope.kind;
  const payload = envelope.payload;
  const signature = envelope.signature;
  if (givenKind !== kind) {
    const hint = typeof givenKind === 'string' && givenKind.startsWith('toolrun/paused-') && options.otherKindHint !== undefined ? options.otherKindHint : '';
    malformed(`resume.state is not a paused state of kind "${kind}" (its kind is ${describeValue(givenKind)})${hint}`);
  }
  if (version !== STATE_VERSION) {
    throw new ResumeError('version', `resume.state has format version ${describeValue(version)}; this toolrun reads version ${STATE_VERSION} (a state of another format version cannot be resumed: pause the batch again)`);
  }
  for (const key of Object.keys(envelope)) if (!ENVELOPE_KEYS.has(key)) malformed(`resume.state has a field "${key}" a paused state does not have`);
  if (typeof payload !== 'string') return malformed(`resume.state.payload must be the state's JSON text, received ${describeValue(payload)}`);
  if (signature !== undefined && !(typeof signature === 'string' && /^[0-9a-f]{64}$/.test(signature))) malformed(`resume.state.signature must be 64 hex digits, received ${describeValue(signature)}`);
  if (typeof given !== 'string') {
    // The text this object would be: a cheap bound first, then the exact count.
    if (payload.length > maxChars) malformed(`resume.state's payload is ${payload.length} characters; at most ${maxChars} are read (maxStateChars)`);
    // {"version":2,"kind":"…","payload":…} and ,"signature":"…": JSON.stringify's exact length,
    // counted only when the payload could pass the bound with every character escaped (a
    // backslash more each): most states are far below it, and the count is a scan of the text.
    const envelopeChars = 34 + kind.length + (typeof signature === 'string' ? 79 : 0);
    const chars = 2 * payload.length + 2 + envelopeChars <= maxChars ? 0 : quotedLength(payload) + envelopeChars;
    if (chars > maxChars) malformed(`resume.state is ${chars} characters of JSON; at most ${maxChars} are read (maxStateChars)`);
  }
  // A lone surrogate encodes as U+FFFD: two payloads would share one signature.
  if (!isWellFormed(payload)) malformed('resume.state.payload holds a lone UTF-16 surrogate, which a state never has');
  if (options.secret !== undefined) {
    if (signature === undefined) throw new ResumeError('signature', 'resume.state is not signed, and this run has a signingSecret: it resumes only states signed with it');
    const bytes = new Uint8Array(32);
    for (let i = 0; i < 32; i++) bytes[i] = Number.parseInt((signature as string).slice(2 * i, 2 * i + 2), 16);
    const valid = await crypto.subtle.verify('HMAC', await hmacKey(options.secret), bytes, signedBytes(kind, payload));
    if (!valid) throw new ResumeError('signature', 'resume.state has a signature that does not match its content and this signingSecret: it was changed, or signed with another secret');
  }
  scanJson(payload, PAYLOAD_LIMITS, 'resume.state.payload');
  // The very object sealState made, its payload unchanged: the body it was made from is
  // what parsing would give (every check of the text above has run all the same). Taken
  // once: a second reading parses, and the body is handed to one resume only.
  const kept = typeof given === 'string' ? undefined : keptBodies.get(envelope);
  if (kept !== undefined && kept.payload === payload) {
    keptBodies.delete(envelope);
    return kept.body;
  }
  let body: unknown;
  try {
    body = JSON.parse(payload);
  } catch (error) {
    throw new ResumeError('malformed', `resume.state.payload is not JSON: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  return body;
}

/** `String.prototype.isWellFormed` (ES2024: Node 20, current browsers), with a regular-expression fallback. */
function isWellFormed(text: string): boolean {
  const native = (text as { isWellFormed?: () => boolean }).isWellFormed;
  if (typeof native === 'function') return native.call(text);
  return !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text);
}

/**
 * {@link openState}, then the body checked against `schema` (a valibot schema of the state's
 * kind): the one reader of `runTools`' and `runAgent`'s states. `quick`, when given, is the
 * same check written by hand (`state-schema.ts`' `quickBody`): its output is taken when it
 * gives one, and valibot reads the body when it gives `undefined`. The first issue is the
 * `malformed` message, with its path. Throws a {@link ResumeError} and nothing else.
 */
export async function openStateBody<S extends v.GenericSchema>(
  given: unknown,
  schema: S,
  options: OpenStateOptions & { readonly quick?: (body: unknown) => v.InferOutput<S> | undefined },
): Promise<v.InferOutput<S>> {
  const body = await openState(given, options);
  const quick = options.quick?.(body);
  if (quick !== undefined) return quick;
  const parsed = v.safeParse(schema, body);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    throw new ResumeError('malformed', `resume.state is malformed at ${v.getDotPath(issue) ?? '(root)'}: ${issue.message}`);
  }
  return parsed.output;
}
