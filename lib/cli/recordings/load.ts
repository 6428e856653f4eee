/**
 * Finding recording files and recognizing their format.
 *
 * @module
 */
import { existsSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { basename, extname, join, relative } from 'node:path';
import { CliInputError } from '../errors.ts';
import { answerPathsFor, loadBfcl, looksLikeBfclAnswers, looksLikeBfclQuestions, questionPathsFor } from './bfcl.ts';
import { isKnownCassette, loadAnthropicStream, loadCassette, loadRawBody, looksLikeAnthropicStream, looksLikeCassette, rawBodyKind } from './cassette.ts';
import { loadClaudeCode, looksLikeClaudeCode } from './claude-code.ts';
import { readRecordingFile } from './read.ts';
import type { LoadedRecording } from './types.ts';
import { isObjectRecord } from '../../core/values/guards.ts';

/** The formats replay reads, for error messages and `--help`. */
export const KNOWN_FORMATS = [
  'converted cassette JSON ({api, interactions}; api anthropic-messages, openai-chat-completions, openai-responses or a Gemini generateContent URL)',
  'raw response body JSON (Anthropic Messages, OpenAI Chat Completions, Cohere v2 chat, OpenAI Responses)',
  'Anthropic stream events JSONL (*.chunks.jsonl)',
  'Claude Code transcript JSONL',
  'BFCL question JSONL with its possible_answer_<name> file',
] as const;

/** The outcome of loading one file: a recording, or why the file is not one (unknown format). */
export type LoadOutcome = { ok: true; recording: LoadedRecording } | { ok: false; reason: string };

/**
 * Loads one recording file.
 *
 * @param path - the file on disk.
 * @param shown - how the file is named in messages (relative to the replay target).
 * @throws CliInputError for a JSON syntax error, or a BFCL file whose companion is missing.
 */
export async function loadRecording(path: string, shown: string): Promise<LoadOutcome> {
  const parsed = await readRecordingFile(path, shown);
  if (parsed.kind === 'json') {
    const doc = parsed.value;
    if (isKnownCassette(doc)) return { ok: true, recording: loadCassette(doc) };
    if (looksLikeCassette(doc)) {
      const api = isObjectRecord(doc) ? JSON.stringify(doc.api) : '';
      return { ok: false, reason: `a cassette with an unknown api ${api}` };
    }
    const raw = rawBodyKind(doc);
    if (raw !== undefined && isObjectRecord(doc)) return { ok: true, recording: loadRawBody(doc, raw) };
    return { ok: false, reason: describeUnknown(doc) };
  }
  const { records } = parsed;
  if (looksLikeBfclQuestions(records)) {
    const answerPath = answerPathsFor(path).find((candidate) => existsSync(candidate));
    if (answerPath === undefined) {
      throw new CliInputError(`${shown}: BFCL question file without its answers (looked for ${answerPathsFor(path).map((p) => basename(p)).join(', ')})`);
    }
    const answers = await readRecordingFile(answerPath, join(shown, '..', basename(answerPath)));
    if (answers.kind !== 'jsonl' || !looksLikeBfclAnswers(answers.records)) {
      throw new CliInputError(`${basename(answerPath)}: expected BFCL ground-truth lines ({"id", "ground_truth"}) for ${shown}`);
    }
    return { ok: true, recording: loadBfcl(records, answers.records, join(shown, '..', basename(answerPath)).split('\\').join('/')) };
  }
  if (looksLikeBfclAnswers(records)) {
    const questionPath = questionPathsFor(path).find((candidate) => existsSync(candidate));
    if (questionPath === undefined) {
      throw new CliInputError(`${shown}: BFCL answers file without its question file (looked for ${questionPathsFor(path).map((p) => basename(p)).join(', ') || 'a name without the possible_answer_ prefix'})`);
    }
    return loadRecording(questionPath, join(shown, '..', basename(questionPath)));
  }
  const values = records.map((record) => record.value);
  if (looksLikeAnthropicStream(values)) return { ok: true, recording: loadAnthropicStream(values) };
  if (looksLikeClaudeCode(records)) return { ok: true, recording: loadClaudeCode(records) };
  return { ok: false, reason: `JSON Lines whose first record is ${describeUnknown(records[0]?.value)}` };
}

function describeUnknown(value: unknown): string {
  if (Array.isArray(value)) return `a JSON array of ${value.length} items`;
  if (isObjectRecord(value)) return `an object with keys ${Object.keys(value).slice(0, 6).join(', ')}`;
  return `a JSON ${value === null ? 'null' : typeof value}`;
}

/** The message of the error for a file of unknown format. */
export function unknownFormatMessage(shown: string, reason: string): string {
  return `${shown}: unknown recording format (${reason}); known formats: ${KNOWN_FORMATS.join('; ')}`;
}

/** A file found under the replay target. */
export interface FoundFile {
  path: string;
  /** Relative to the target folder, with `/` separators. */
  shown: string;
}

/**
 * Lists the `.json` and `.jsonl` files under `folder`, recursively, sorted by relative
 * path. BFCL answers files whose question file is also listed are left out: they are read
 * with their question file.
 */
export async function listRecordingFiles(folder: string): Promise<FoundFile[]> {
  const found: FoundFile[] = [];
  const walk = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true });
    for (const entry of entries) {
      if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile() && ['.json', '.jsonl'].includes(extname(entry.name))) {
        found.push({ path, shown: relative(folder, path).split('\\').join('/') });
      }
    }
  };
  await walk(folder);
  found.sort((a, b) => (a.shown < b.shown ? -1 : a.shown > b.shown ? 1 : 0));
  const listed = new Set(found.map((file) => file.path));
  return found.filter((file) => !questionPathsFor(file.path).some((question) => listed.has(question)));
}

/** `stat` that answers `undefined` for a missing path. */
export async function statOrUndefined(path: string): Promise<Awaited<ReturnType<typeof stat>> | undefined> {
  try {
    return await stat(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw error;
  }
}
