/**
 * Loader for Berkeley Function Calling Leaderboard files: a question file (one entry per
 * line: `id`, `question`, `function` definitions) and its `possible_answer` file (same ids,
 * `ground_truth`: one `{ name: { param: [acceptable values] } }` per expected call).
 *
 * BFCL records no assistant messages, so one is built per entry from the ground truth (the
 * first acceptable value of each parameter) and replayed with no follow-up: the check is
 * that every call gets its result, in order, and that the arguments pass the converted
 * schema. Source of the format: `../shared/corpus/SOURCES.md`, section B. The schema
 * dialect converter and the ground-truth reader are the library's (`lib/schemas/bfcl.ts`).
 *
 * @module
 */
import { basename, dirname, join } from 'node:path';
import { bfclGroundTruthArguments, convertBfclSchema } from '../../schemas/bfcl.ts';
import type { ToolCall } from '../../core/tool/tool.ts';
import type { JsonlRecord } from './read.ts';
import type { LoadedRecording, RecordedMessage, RecordedTool } from './types.ts';
import { isObjectRecord } from '../../core/values/guards.ts';

/** The prefix of a BFCL answers file name: `possible_answer_<question file name>`. */
const ANSWER_PREFIX = 'possible_answer_';

/** True when the records are BFCL question entries. */
export function looksLikeBfclQuestions(records: readonly JsonlRecord[]): boolean {
  return records.length > 0 && records.every(({ value }) => isObjectRecord(value) && typeof value.id === 'string' && Array.isArray(value.function));
}

/** True when the records are BFCL ground-truth entries. */
export function looksLikeBfclAnswers(records: readonly JsonlRecord[]): boolean {
  return records.length > 0 && records.every(({ value }) => isObjectRecord(value) && typeof value.id === 'string' && Array.isArray(value.ground_truth));
}

/**
 * Where a question file's answers may be: `possible_answer_<name>` next to it (the corpus
 * layout), or `possible_answer/<name>` below it (the BFCL repository layout).
 */
export function answerPathsFor(questionPath: string): string[] {
  const dir = dirname(questionPath);
  const name = basename(questionPath);
  return [join(dir, `${ANSWER_PREFIX}${name}`), join(dir, 'possible_answer', name)];
}

/** Where an answers file's questions may be (the inverse of {@link answerPathsFor}). */
export function questionPathsFor(answerPath: string): string[] {
  const dir = dirname(answerPath);
  const name = basename(answerPath);
  const paths: string[] = [];
  if (name.startsWith(ANSWER_PREFIX)) paths.push(join(dir, name.slice(ANSWER_PREFIX.length)));
  if (basename(dir) === 'possible_answer') paths.push(join(dirname(dir), name));
  return paths;
}

/**
 * Loads a question file and its answers: one message per entry, calls in ground-truth
 * order with ids `<entry id>#<n>` (BFCL has no call ids; its grader is order-insensitive
 * for parallel categories, so the ground-truth order is kept as the call order).
 *
 * @param answerFile - how the answers file is named in the report.
 */
export function loadBfcl(questions: readonly JsonlRecord[], answers: readonly JsonlRecord[], answerFile: string): LoadedRecording {
  const truth = new Map<string, unknown[]>();
  for (const { value } of answers) {
    if (isObjectRecord(value) && typeof value.id === 'string' && Array.isArray(value.ground_truth)) truth.set(value.id, value.ground_truth);
  }
  const messages: RecordedMessage[] = [];
  const warnings: string[] = [];
  for (const { value, line } of questions) {
    if (!isObjectRecord(value) || typeof value.id !== 'string' || !Array.isArray(value.function)) continue;
    const id = value.id;
    const groundTruth = truth.get(id);
    const tools: RecordedTool[] = value.function.flatMap((fn) =>
      isObjectRecord(fn) && typeof fn.name === 'string' ? [{ name: fn.name, schema: convertBfclSchema(fn.parameters) }] : [],
    );
    if (groundTruth === undefined) {
      warnings.push(`entry ${id} (line ${line}) has no ground truth in ${answerFile}; skipped`);
      continue;
    }
    const notes: string[] = [];
    const calls: ToolCall[] = [];
    groundTruth.forEach((entry, n) => {
      if (!isObjectRecord(entry)) return;
      for (const [name, params] of Object.entries(entry)) {
        calls.push({ id: `${id}#${n}`, name, arguments: bfclGroundTruthArguments(isObjectRecord(params) ? params : {}) });
      }
    });
    if (calls.length === 0) continue;
    const names = new Set(tools.map((tool) => tool.name));
    calls.forEach((call, index) => {
      if (!names.has(call.name)) notes.push(`call #${index + 1} names tool '${call.name}', which the entry's function list does not define`);
    });
    messages.push({
      label: `entry ${id}`,
      calls,
      tools: dedupeByName(tools),
      followUp: { none: 'no follow-up recorded (BFCL ground truth: assistant message built from the first acceptable values)' },
      notes,
    });
  }
  return { format: 'BFCL questions + possible answers', messages, companions: [answerFile], warnings };
}

function dedupeByName(tools: RecordedTool[]): RecordedTool[] {
  const seen = new Set<string>();
  return tools.filter((tool) => (seen.has(tool.name) ? false : (seen.add(tool.name), true)));
}
