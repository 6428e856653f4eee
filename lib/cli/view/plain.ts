/**
 * The plain rendering: one line per event worth seeing, no ANSI escapes, no timers — for
 * pipes, files and CI logs.
 *
 * ```
 * run demo (3 calls)
 * start toolu_01 read_file {"path":"package.json"}
 *   toolu_02 | step 1
 * end toolu_01 ok 3ms: }
 * end toolu_03 ok replayed (from the journal, not run): 4
 * …
 * results (call order):
 *   toolu_01 ok { (+20 lines)
 *   toolu_02 error interrupted: the run was aborted
 * ```
 *
 * @module
 */
import type { Writable } from 'node:stream';
import type { ToolCall, ToolResultMessage } from '../../core/tool/tool.ts';
import type { TreeChange } from '../agent-tree.ts';
import { compactJson, count, oneLine, parsedArguments, terminalSafe, truncate } from '../text.ts';
import { BaseView, progressLines, type CallRecord } from './calls.ts';
import { moreLines } from './lines.ts';

/** Plain lines: for pipes, files and CI logs. */
export class PlainView extends BaseView {
  constructor(
    stream: NodeJS.WriteStream | Writable,
    now: () => number,
    private readonly maxProgress: number,
  ) {
    super(stream, now);
  }

  override begin(title: string, calls: readonly ToolCall[], earlier?: ReadonlyMap<number, ToolResultMessage>): void {
    super.begin(title, calls, earlier);
    // A streamed run lists no calls up front: they appear as the stream completes them. The
    // count is left out when the title already gives it ("demo: 6 parallel tool calls …").
    const counted = calls.length === 0 || new RegExp(`\\b${calls.length} (?:[\\w-]+ ){0,2}calls?\\b`).test(this.title);
    this.write(`run ${this.title}${counted ? '' : ` (${count(calls.length, 'call')})`}\n`);
    if (this.pendingNote !== undefined) this.line(this.pendingNote);
    this.pendingNote = undefined;
    for (const record of this.calls) {
      if (record.earlier !== true) continue;
      const text = record.resultLine === undefined || record.resultLine === '' ? '' : `: ${truncate(record.resultLine, 120)}`;
      this.write(`earlier ${record.id || '""'} ${record.isError === true ? 'error' : 'ok'} (before the pause)${text}${moreLines(record.resultMore)}\n`);
    }
  }

  /** A notice given before the run began, printed after its title line. */
  private pendingNote: string | undefined;

  notice(text: string): void {
    if (this.live) this.line(text);
    else this.pendingNote = text;
  }

  override prompt(text: string | undefined): void {
    if (text !== undefined) this.line(text);
  }

  override end(summary?: string): void {
    if (!this.live) return;
    this.live = false;
    let out = 'results (call order):\n';
    for (const r of this.resultRows()) out += `  ${r.id || '""'} ${r.status} ${truncate(r.text, 200)}${r.more}\n`;
    if (summary !== undefined && summary !== '') out += `${oneLine(summary)}\n`;
    this.write(out);
    this.calls = [];
  }

  override line(text: string): void {
    for (const line of text.split('\n')) this.write(`${terminalSafe(line)}\n`);
  }

  override close(): void {
    if (this.live) this.end();
    this.pendingNote = undefined;
    this.closed = true;
  }

  protected onStart(record: CallRecord): void {
    const args = compactJson(parsedArguments(record.args));
    this.write(`start ${record.id || '""'} ${oneLine(record.name)}${args === '' ? '' : ` ${truncate(args, 120)}`}\n`);
  }

  protected onProgress(record: CallRecord, progress: unknown): void {
    for (const text of progressLines(record, progress)) this.progressLine(record, text);
  }

  protected flushPartial(record: CallRecord): void {
    for (const rest of record.partial.values()) {
      const text = terminalSafe(rest);
      if (text.trim() !== '') this.progressLine(record, text);
    }
    record.partial.clear();
  }

  protected onEnd(record: CallRecord): void {
    let out = '';
    if (record.skipped > 0) {
      out += `  ${record.id || '""'} | … ${count(record.skipped, 'more progress line')} not shown\n`;
    }
    const status = record.isError === true ? 'error' : 'ok';
    const outcome = record.outcome === 'ok' || record.outcome === 'error' ? '' : ` (${record.outcome})`;
    const text = record.resultLine === undefined || record.resultLine === '' ? '' : `: ${truncate(record.resultLine, 120)}`;
    // A replayed call did not run: "replayed" takes the place of its duration (J4).
    const took = record.replayed === true ? 'replayed (from the journal, not run)' : `${record.durationMs}ms`;
    out += `end ${record.id || '""'} ${status} ${took}${outcome}${text}${moreLines(record.resultMore)}\n`;
    this.write(out);
  }

  protected onResult(): void {
    // Results are printed together, in call order, when the run ends.
  }

  protected onApproval(record: CallRecord): void {
    if (record.approval === undefined) return;
    this.write(`approval ${record.id || '""'} ${oneLine(record.name)}: ${truncate(record.approval ?? '', 200)}\n`);
  }

  /**
   * One line per nested start, end, sub-agent message and sub-agent end, indented by depth
   * under the call's id (`  toolu_1 |   start c1 read_file {…}`). Not capped like progress
   * lines: they are the record of what the sub-agent did.
   */
  protected onAgentProgress(record: CallRecord, change: TreeChange | undefined): void {
    if (change === undefined) return;
    const indent = '  '.repeat(change.depth - 1);
    let text: string;
    if (change.kind === 'start') {
      const args = compactJson(parsedArguments(change.node.args));
      text = `start ${change.node.id || '""'} ${oneLine(change.node.name)}${args === '' ? '' : ` ${truncate(args, 120)}`}`;
    } else if (change.kind === 'end') {
      const node = change.node;
      const outcome = node.outcome === 'ok' || node.outcome === 'error' ? '' : ` (${node.outcome})`;
      text = `end ${node.id || '""'} ${node.isError === true ? 'error' : 'ok'} ${node.durationMs}ms${outcome}`;
    } else if (change.kind === 'said') {
      text = `says: ${truncate(oneLine(change.text), 160)}`;
    } else {
      text = `sub-agent done: ${change.text}`;
    }
    this.write(`  ${record.id || '""'} | ${indent}${text}\n`);
  }

  private progressLine(record: CallRecord, text: string): void {
    if (record.printed >= this.maxProgress) {
      record.skipped++;
      return;
    }
    record.printed++;
    this.write(`  ${record.id || '""'} | ${truncate(text, 200)}\n`);
  }
}
