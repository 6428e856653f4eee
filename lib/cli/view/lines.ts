/**
 * The lines a row shows of a tool result: its content as terminal-safe lines, the one line a
 * finished call's row shows, and the count of the others. Shared by the call rows and the
 * sub-agent tree.
 *
 * @module
 */
import type { CallOutcome } from '../../core/tool/tool.ts';
import { providerBlock } from '../../core/values/content.ts';
import type { ContentBlock } from '../../core/tool/content.ts';
import { count, splitLines, terminalSafe } from '../text.ts';

/**
 * The non-empty lines of a result's content, trimmed and terminal-safe (an image block
 * reads as `[image <mime>]`, an audio or resource block as the text `contentBlockText`
 * writes).
 */
export function contentLines(content: readonly ContentBlock[]): string[] {
  const lines: string[] = [];
  for (const block of content.map(providerBlock)) {
    if (block.type === 'image') lines.push(`[image ${terminalSafe(block.mimeType)}]`);
    else for (const line of splitLines(block.text)) lines.push(line.trim());
  }
  return lines;
}

/**
 * The line a finished call's row shows: where the tool got to — its *last* line (a shell
 * call that printed `step 1 of 5` … `finished` shows `finished`); when that last line is a
 * bracketed status note such as `[exit code 0]` or `[killed: …]`, the line before it comes
 * first (`finished [exit code 0]`). A call that failed before producing anything of its own
 * (`error`, `rejected`, `not_run`) shows its *first* line instead: the reason.
 */
export function finishedLine(lines: readonly string[], outcome: CallOutcome | undefined): string {
  if (outcome === 'error' || outcome === 'rejected' || outcome === 'not_run') return lines[0] ?? '';
  const last = lines.at(-1) ?? '';
  const before = lines.at(-2);
  return /^\[.*\]$/.test(last) && before !== undefined ? `${before} ${last}` : last;
}

/** ` (+1 line)`, ` (+N lines)` after a shown line, or nothing. */
export function moreLines(more: number | undefined): string {
  return more === undefined || more === 0 ? '' : ` (+${count(more, 'line')})`;
}

