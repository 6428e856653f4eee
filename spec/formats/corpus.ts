/**
 * Access to the recorded corpus in `../shared/corpus` (read at run time, never copied into
 * the repository). Specs that need it use `describe.skipIf(!hasCorpus)` and put
 * {@link corpusSkipNote} in their name, so a clone without the corpus reports one line of
 * reason instead of failing.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { collect } from '../helpers.ts';
import { defineTool, runTools, type ContentBlock, type Tool, type ToolCall, type ToolResultMessage } from '../../lib/index.ts';

/** Absolute path of `../shared/corpus/` (with a trailing slash). */
export const corpusDir = fileURLToPath(new URL('../../../shared/corpus/', import.meta.url));

/** True when the corpus folder is present. */
export const hasCorpus = existsSync(corpusDir);

/** Appended to the names of corpus specs: empty when the corpus is there, else the skip reason. */
export const corpusSkipNote = hasCorpus ? '' : ' [skipped: ../shared/corpus is absent]';

// The default reporter does not print the names of skipped specs: say it once per spec file.
if (!hasCorpus) console.warn('corpus specs skipped: ../shared/corpus (the recorded conversations kept beside the repository) is absent');

/** Parses a corpus JSON file. */
export function readCorpusJson(relative: string): any {
  return JSON.parse(readFileSync(`${corpusDir}${relative}`, 'utf8'));
}

/** Parses a corpus JSON Lines file. */
export function readCorpusLines(relative: string): any[] {
  return readFileSync(`${corpusDir}${relative}`, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line));
}

/**
 * Runs `calls` through the real runtime with one tool per name that returns `outputs[i]`
 * for the i-th call (by position, whatever the ids) — the recorded output of that call.
 */
export async function runWithOutputs(calls: ToolCall[], outputs: ReadonlyArray<string | ContentBlock[]>): Promise<ToolResultMessage[]> {
  const next = new Map<string, number[]>();
  calls.forEach((call, i) => next.set(call.id, [...(next.get(call.id) ?? []), i]));
  const tools: Tool[] = [...new Set(calls.map((call) => call.name))].map((name) =>
    defineTool({
      name,
      input: { type: 'object' },
      execute: (_input, { toolCallId }) => {
        const i = next.get(toolCallId)?.shift() ?? -1;
        const output = outputs[i];
        return typeof output === 'string' ? output : { content: output ?? [] };
      },
    }),
  );
  const { batch } = await collect(runTools(calls, { tools, mode: 'sequential' }));
  return batch.messages;
}
