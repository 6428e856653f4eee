/**
 * The one place where foreign values become results (contract P4, O1).
 *
 * A foreign value is anything toolrun did not build: what a tool returns or throws, what a
 * hook (`beforeToolCall`, `afterToolCall`) or a shim (`prepareArguments`) returns or throws,
 * what a Standard Schema's `validate` returns or throws. Any of them may be a revoked Proxy,
 * an object with a throwing getter, a cycle without a prototype, an Error whose `message`
 * getter throws… Every reader below is total: it reads each field once, inside a `try`,
 * copies what it keeps into a fresh object toolrun owns, and turns anything it cannot read
 * into a problem text for the model. The stages call foreign code only through these
 * readers, so nothing a tool, a hook or a schema does can make `runTools` throw.
 *
 * @module
 */
import type { StandardSchemaV1 } from '@standard-schema/spec';
import { readContentBlock } from './content.ts';
import { isObjectRecord, plainText, thrownText, typeName } from './guards.ts';
import type { ContentBlock } from '../tool/content.ts';
import type { ToolResult } from '../tool/tool.ts';

/** What a reader gives back: the value, or a sentence saying what was wrong with it. */
export type Read<T> = { ok: true; value: T } | { ok: false; problem: string };

/** A sentence saying what was wrong with a foreign value (returned, not thrown, by the hot-path readers). */
export class Problem {
  constructor(readonly problem: string) {}
}

/**
 * A tool's return value as a {@link ToolResult} toolrun owns (the rule of
 * `normalizeToolOutput`, made total):
 * - a string is one text block; `undefined` an empty text block;
 * - an object with a `content` array is checked block by block (`readContentBlock`, the
 *   rule every path shares: text blocks need a string `text`, image and audio blocks
 *   non-empty `data` and `mimeType`…) and copied, with `details` and a `meta` (a plain
 *   object) and a boolean `terminate`; one invalid block makes the whole value a problem;
 * - anything else is its JSON text, or its `String()` text, and the value itself is the
 *   result's `details` (a plain return reaches the events typed, see `ToolDetailsOf`).
 *
 * A value that cannot be read this way (a revoked Proxy, a throwing `content` getter, a
 * `null` block, a cycle whose `toString` throws) is a problem, never a throw.
 */
export function readToolOutput(output: unknown): ToolResult | Problem {
  if (typeof output === 'string') return { content: [{ type: 'text', text: output }] };
  if (output === undefined) return { content: [{ type: 'text', text: '' }] };
  try {
    if (typeof output === 'object' && output !== null) {
      const content: unknown = (output as { content?: unknown }).content;
      if (Array.isArray(content)) {
        const blocks = readContent(content);
        if (blocks instanceof Problem) return blocks;
        const result: ToolResult = { content: blocks };
        const details: unknown = (output as { details?: unknown }).details;
        if (details !== undefined) result.details = details;
        const meta: unknown = (output as { meta?: unknown }).meta;
        if (meta !== undefined && isObjectRecord(meta)) result.meta = meta;
        const terminate: unknown = (output as { terminate?: unknown }).terminate;
        if (terminate === true) result.terminate = true;
        return result;
      }
    }
  } catch (error) {
    return new Problem(`reading its result threw (${thrownText(error)})`);
  }
  const text = plainText(output);
  if (text === undefined) return new Problem('its result cannot be turned into text (JSON.stringify and String both threw)');
  // The value itself is the result's `details`, as `ToolDetailsOf` types it.
  return { content: [{ type: 'text', text }], details: output };
}

/** Checks and copies a content array, block by block by the one rule of `readContentBlock`; a {@link Problem} says what is wrong (no result wrapper). */
function readContent(content: unknown): ContentBlock[] | Problem {
  try {
    if (!Array.isArray(content)) return new Problem(`content must be an array of content blocks, got ${typeName(content)}`);
    const blocks: ContentBlock[] = new Array<ContentBlock>(content.length);
    for (let i = 0; i < content.length; i++) {
      const block = readContentBlock(content[i]);
      if (typeof block === 'string') return new Problem(`content[${i}] is ${block}`);
      blocks[i] = block;
    }
    return blocks;
  } catch (error) {
    return new Problem(`reading its content threw (${thrownText(error)})`);
  }
}

/** What toolrun keeps of a `beforeToolCall` answer. */
export interface BeforeAnswer {
  block: boolean;
  /** The hook's reason, when it gave a non-empty string (with `block` or `needsApproval`). */
  reason: string | undefined;
  /** True only when the call is blocked and the hook's `terminate` is `true` (P6). */
  terminate: boolean;
  /** True when the hook did not block and asked for a person's approval instead (H1). */
  needsApproval: boolean;
}

const ALLOWED: BeforeAnswer = Object.freeze({ block: false, reason: undefined, terminate: false, needsApproval: false });

/** Reads a `beforeToolCall` answer: `undefined`/`null` allow; `block` must be `true` to block; `needsApproval: true` (without a block) defers. */
export function readBeforeAnswer(answer: unknown): Read<BeforeAnswer> {
  if (answer === undefined || answer === null) return { ok: true, value: ALLOWED };
  try {
    if (typeof answer !== 'object') return { ok: false, problem: `it returned ${typeName(answer)}, not an object or undefined` };
    const block = (answer as { block?: unknown }).block === true;
    const needsApproval = !block && (answer as { needsApproval?: unknown }).needsApproval === true;
    if (!block && !needsApproval) return { ok: true, value: ALLOWED };
    const reason: unknown = (answer as { reason?: unknown }).reason;
    const terminate = block && (answer as { terminate?: unknown }).terminate === true;
    return { ok: true, value: { block, reason: typeof reason === 'string' && reason !== '' ? reason : undefined, terminate, needsApproval } };
  } catch (error) {
    return { ok: false, problem: `reading its answer threw (${thrownText(error)})` };
  }
}

/**
 * Reads what an `approve` function answered (H2): `undefined`/`null` is no answer now (the
 * call is deferred); otherwise `approved` must be a boolean, and `reason` is kept when it is
 * a non-empty string.
 */
export function readApprovalAnswer(answer: unknown): Read<{ approved: boolean; reason: string | undefined; always: boolean } | undefined> {
  if (answer === undefined || answer === null) return { ok: true, value: undefined };
  try {
    if (typeof answer !== 'object') return { ok: false, problem: `it returned ${typeName(answer)}, not an object or undefined` };
    const approved: unknown = (answer as { approved?: unknown }).approved;
    if (typeof approved !== 'boolean') return { ok: false, problem: `its answer's approved is ${typeName(approved)}, not a boolean` };
    const reason: unknown = (answer as { reason?: unknown }).reason;
    const always: unknown = (answer as { always?: unknown }).always;
    if (always !== undefined && typeof always !== 'boolean') return { ok: false, problem: `its answer's always is ${typeName(always)}, not a boolean or undefined` };
    return { ok: true, value: { approved, reason: typeof reason === 'string' && reason !== '' ? reason : undefined, always: always === true } };
  } catch (error) {
    return { ok: false, problem: `reading its answer threw (${thrownText(error)})` };
  }
}

/**
 * Calls a tool's `timeoutMs` function with the call's validated input and reads its answer:
 * a non-negative number of ms; `0` and `Infinity` mean no limit (`undefined`). A throw, or
 * anything else (a string, `NaN`, a negative number, a promise), is a {@link Problem}.
 */
export function readTimeoutLimit(limit: (input: unknown) => unknown, input: unknown): number | undefined | Problem {
  let ms: unknown;
  try {
    ms = limit(input);
  } catch (error) {
    return new Problem(`threw ${thrownText(error)}`);
  }
  if (typeof ms !== 'number' || Number.isNaN(ms) || ms < 0) return new Problem(`returned ${typeName(ms)}, not a non-negative number of ms`);
  return ms === 0 || ms === Infinity ? undefined : ms;
}

/** The overrides toolrun keeps of an `afterToolCall` answer; a field left `undefined` keeps the result's own. */
export interface AfterAnswer {
  content: ContentBlock[] | undefined;
  details: unknown;
  meta: Record<string, unknown> | undefined;
  isError: boolean | undefined;
  terminate: boolean | undefined;
}

/**
 * Reads an `afterToolCall` answer field by field (P3): `content` must be a valid content
 * array, `meta` a plain object, `isError` and `terminate` booleans; `undefined` keeps a
 * field, and so does `null` for every field but `details` (a `null` details replaces the
 * tool's). Other fields are not read.
 */
export function readAfterAnswer(answer: unknown): Read<AfterAnswer | undefined> {
  if (answer === undefined || answer === null) return { ok: true, value: undefined };
  try {
    if (typeof answer !== 'object') return { ok: false, problem: `it returned ${typeName(answer)}, not an object or undefined` };
    const a = answer as Record<string, unknown>;
    const rawContent = a.content;
    let content: ContentBlock[] | undefined;
    if (rawContent !== undefined && rawContent !== null) {
      const read = readContent(rawContent);
      if (read instanceof Problem) return { ok: false, problem: read.problem };
      content = read;
    }
    const details = a.details;
    const rawMeta = a.meta;
    if (rawMeta !== undefined && rawMeta !== null && !isObjectRecord(rawMeta)) return { ok: false, problem: `meta is ${typeName(rawMeta)}, not a plain object` };
    const isError = a.isError;
    if (isError !== undefined && isError !== null && typeof isError !== 'boolean') return { ok: false, problem: `isError is ${typeName(isError)}, not a boolean` };
    const terminate = a.terminate;
    if (terminate !== undefined && terminate !== null && typeof terminate !== 'boolean') return { ok: false, problem: `terminate is ${typeName(terminate)}, not a boolean` };
    return { ok: true, value: { content, details, meta: (rawMeta ?? undefined) as Record<string, unknown> | undefined, isError: isError ?? undefined, terminate: terminate ?? undefined } };
  } catch (error) {
    return { ok: false, problem: `reading its answer threw (${thrownText(error)})` };
  }
}

/**
 * Reads what a Standard Schema's `validate` returned (not a promise): its output, the issues
 * as `[dotted path, message]` pairs, or a {@link Problem} when reading it threw. One object
 * on success (the hot path): `{ ok: true, value }`, the shape validation hands on.
 */
export function readSchemaResult(result: unknown): { ok: true; value: unknown } | { ok: false; issues: [string, string][] } | Problem {
  try {
    // A Standard Schema result is `{ value }` or `{ issues }`; anything else (a number, `{}`)
    // is the schema failing, never a success with `undefined` arguments.
    if (typeof result !== 'object' || result === null) return new Problem(`its validate returned ${typeName(result)}, not a result object`);
    const r = result as StandardSchemaV1.Result<unknown>;
    const issues = r.issues;
    if (issues === undefined) {
      if (!('value' in r)) return new Problem('its validate returned an object with neither value nor issues');
      return { ok: true, value: (r as StandardSchemaV1.SuccessResult<unknown>).value };
    }
    const lines: [string, string][] = [];
    for (const issue of issues) lines.push([pathText(issue.path), String(issue.message)]);
    return { ok: false, issues: lines };
  } catch (error) {
    return new Problem(thrownText(error));
  }
}

function pathText(path: StandardSchemaV1.Issue['path']): string {
  if (path === undefined || path.length === 0) return 'arguments';
  return path.map((p) => String(typeof p === 'object' && p !== null ? p.key : p)).join('.');
}
