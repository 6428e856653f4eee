/**
 * The terminal view of `npm start`: draws `runTools` runs as they happen.
 *
 * - On a TTY: one line per call, redrawn in place with `log-update` — a spinner and the
 *   call's latest progress while it runs, then ✓ / ✗, its duration and the first line of
 *   its result — and a footer with the counts. When the run ends the final frame stays in
 *   the scrollback and the result messages follow in call order.
 * - Anywhere else (CI, pipes, files): plain lines, one per event worth seeing, no ANSI
 *   escapes, no timers:
 *
 *   ```
 *   run demo (3 calls)
 *   start toolu_01 read_file {"path":"package.json"}
 *     toolu_02 | step 1
 *   end toolu_01 ok 3ms
 *   …
 *   results (call order):
 *     toolu_01 ok {
 *     toolu_02 error interrupted: the run was aborted
 *   ```
 *
 * Calls are tracked by their position in the message (`event.index`), never by id: ids can
 * repeat or be empty in real data.
 *
 * @module
 */
import type { Writable } from 'node:stream';
import cliSpinners from 'cli-spinners';
import { createLogUpdate } from 'log-update';
import picocolors from 'picocolors';
import type { CallOutcome, ToolEvent } from '../core/events.ts';
import type { ContentBlock, ToolCall, ToolResultMessage } from '../core/tool.ts';
import { applyAgentProgress, isAgentProgress, newAgentState, type AgentState, type TreeChange, type TreeNode } from './agent-tree.ts';
import type { RunView } from './view.ts';

/** Options of {@link createRunView}. */
export interface RunViewOptions {
  /** Where to draw; usually `process.stdout`. */
  stream: NodeJS.WriteStream | Writable;
  /**
   * Draw live (spinner, redrawn lines, colors) or as plain lines.
   * @default stream.isTTY === true
   */
  tty?: boolean;
  /** Clock for durations, in ms. @default performance.now */
  now?: () => number;
  /**
   * Plain mode only: how many progress lines to print per call; the rest are counted and
   * reported in one line when the call ends.
   * @default 20
   */
  maxProgressLinesPerCall?: number;
}

/** Where one call is in its life; states only move forward. */
type CallState = 'waiting' | 'running' | 'ended';

/** What the view knows about one call of the current run (keyed by position). */
interface CallRecord {
  id: string;
  name: string;
  args: unknown;
  state: CallState;
  /** `now()` at `tool_execution_start`; set once. */
  startedAt?: number;
  /** Whole ms between start and end; set once at `tool_execution_end`. */
  durationMs?: number;
  outcome?: CallOutcome;
  isError?: boolean;
  /** First line of the end event's result text, with how many more lines follow. */
  resultLine?: string;
  resultMore?: number;
  /** TTY: the last non-empty progress line, already sanitized. */
  latest?: string;
  /** A call that runs a sub-agent (an agent tool): the tree of its nested calls (`agent_progress` values). */
  agent?: AgentState;
  /** Partial (unterminated) text of streamed chunks, per stream name, so lines are not cut mid-way. */
  partial: Map<string, string>;
  /** Plain mode: progress lines printed and skipped (over the cap). */
  printed: number;
  skipped: number;
  /** The `tool_result` message, when it arrived. */
  message?: ToolResultMessage;
}

/** Most nested calls drawn per sub-agent in the live frame (the latest ones). */
const TREE_CHILDREN = 6;

/** The spinner drawn next to running calls (`dots` from cli-spinners, 80 ms a frame). */
const SPINNER = cliSpinners.dots;

/**
 * Creates the view `npm start` draws runs with.
 *
 * On a TTY it holds an unref'd ~80 ms timer while a run has running calls (it never keeps
 * the process alive); `end()` and `close()` stop it. In plain mode it holds no timer.
 *
 * @example
 * ```ts
 * const view = createRunView({ stream: process.stdout });
 * view.begin('demo', calls);
 * for await (const event of runTools(calls, { tools })) view.event(event);
 * view.end();
 * view.close();
 * ```
 */
export function createRunView(options: RunViewOptions): RunView {
  const stream = options.stream;
  const tty = options.tty ?? (stream as Partial<NodeJS.WriteStream>).isTTY === true;
  const now = options.now ?? (() => performance.now());
  const maxProgress = options.maxProgressLinesPerCall ?? 20;
  return tty ? new LiveView(stream, now) : new PlainView(stream, now, maxProgress);
}

/** State and event bookkeeping shared by both renderings. */
abstract class BaseView implements RunView {
  /** The current run's calls, by position; empty between runs. */
  protected calls: CallRecord[] = [];
  protected title = '';
  /** True between `begin()` and `end()`. */
  protected live = false;
  protected closed = false;

  constructor(
    protected readonly stream: NodeJS.WriteStream | Writable,
    protected readonly now: () => number,
  ) {}

  begin(title: string, calls: readonly ToolCall[]): void {
    if (this.live) this.end();
    this.title = oneLine(title);
    this.calls = calls.map((call) => newRecord(call.id, call.name, call.arguments));
    this.live = true;
  }

  event(event: ToolEvent): void {
    if (!this.live) return;
    const record = this.record(event);
    switch (event.type) {
      case 'tool_execution_start':
        if (record.state !== 'waiting') return;
        record.state = 'running';
        record.startedAt = this.now();
        record.args = event.args;
        this.onStart(record);
        return;
      case 'tool_execution_update':
        if (record.state === 'ended') return;
        if (isAgentProgress(event.progress)) {
          record.agent ??= newAgentState();
          this.onAgentProgress(record, applyAgentProgress(record.agent, event.progress, this.now()));
          return;
        }
        this.onProgress(record, event.progress);
        return;
      case 'tool_execution_end':
        if (record.state === 'ended') return;
        this.flushPartial(record);
        record.state = 'ended';
        record.durationMs = Math.round(this.now() - (record.startedAt ?? this.now()));
        record.outcome = event.outcome;
        record.isError = event.isError;
        ({ first: record.resultLine, more: record.resultMore } = firstLine(event.result.content));
        this.onEnd(record);
        return;
      case 'tool_result':
        record.message = event.message;
        this.onResult(record);
        return;
    }
  }

  abstract end(summary?: string): void;
  abstract line(text: string): void;
  abstract close(): void;

  protected abstract onStart(record: CallRecord): void;
  protected abstract onProgress(record: CallRecord, progress: unknown): void;
  /** A sub-agent's event changed the call's tree; `change` says what, when it is worth a line. */
  protected abstract onAgentProgress(record: CallRecord, change: TreeChange | undefined): void;
  protected abstract onEnd(record: CallRecord): void;
  protected abstract onResult(record: CallRecord): void;
  /** A streamed chunk's last partial line, released when its call ends. */
  protected abstract flushPartial(record: CallRecord): void;

  /** The record of the event's call; calls that `begin()` did not list (streamed calls) are added. */
  private record(event: ToolEvent): CallRecord {
    const index = event.index;
    let record = this.calls[index];
    if (record === undefined) {
      const id = event.type === 'tool_result' ? event.message.toolCallId : event.toolCallId;
      const name = event.type === 'tool_result' ? event.message.toolName : event.toolName;
      record = newRecord(id, name, event.type === 'tool_execution_start' ? event.args : undefined);
      for (let i = this.calls.length; i < index; i++) this.calls[i] ??= newRecord('', '?', undefined);
      this.calls[index] = record;
    }
    return record;
  }

  /** The result lines printed after a run, in call order. */
  protected resultLines(): { id: string; status: 'ok' | 'error' | 'missing'; text: string; more: string }[] {
    return this.calls.map((record) => {
      const message = record.message;
      if (message === undefined) return { id: record.id, status: 'missing', text: '(no result message)', more: '' };
      const { first, more } = firstLine(message.content);
      return { id: message.toolCallId, status: message.isError ? 'error' : 'ok', text: first, more: moreLines(more) };
    });
  }

  protected write(text: string): void {
    // A destroyed stream (the reader of a pipe went away) takes no more output.
    if (this.closed || (this.stream as Writable).destroyed === true) return;
    this.stream.write(text);
  }
}

/** Plain lines: for pipes, files and CI logs. */
class PlainView extends BaseView {
  constructor(
    stream: NodeJS.WriteStream | Writable,
    now: () => number,
    private readonly maxProgress: number,
  ) {
    super(stream, now);
  }

  override begin(title: string, calls: readonly ToolCall[]): void {
    super.begin(title, calls);
    // A streamed run lists no calls up front: they appear as the stream completes them.
    this.write(`run ${this.title}${calls.length === 0 ? '' : ` (${plural(calls.length, 'call')})`}\n`);
  }

  override end(summary?: string): void {
    if (!this.live) return;
    this.live = false;
    const lines = this.resultLines();
    let out = 'results (call order):\n';
    for (const r of lines) out += `  ${r.id || '""'} ${r.status} ${truncate(r.text, 200)}${r.more}\n`;
    if (summary !== undefined && summary !== '') out += `${oneLine(summary)}\n`;
    this.write(out);
    this.calls = [];
  }

  override line(text: string): void {
    this.write(`${stripAnsi(text)}\n`);
  }

  override close(): void {
    if (this.live) this.end();
    this.closed = true;
  }

  protected onStart(record: CallRecord): void {
    const args = compactJson(record.args);
    this.write(`start ${record.id || '""'} ${record.name}${args === '' ? '' : ` ${truncate(args, 120)}`}\n`);
  }

  protected onProgress(record: CallRecord, progress: unknown): void {
    for (const text of progressLines(record, progress)) this.progressLine(record, text);
  }

  protected flushPartial(record: CallRecord): void {
    for (const rest of record.partial.values()) {
      const text = sanitize(rest);
      if (text.trim() !== '') this.progressLine(record, text);
    }
    record.partial.clear();
  }

  protected onEnd(record: CallRecord): void {
    let out = '';
    if (record.skipped > 0) {
      out += `  ${record.id || '""'} | … ${plural(record.skipped, 'more progress line')} not shown\n`;
    }
    const status = record.isError === true ? 'error' : 'ok';
    const outcome = record.outcome === 'ok' || record.outcome === 'error' ? '' : ` (${record.outcome})`;
    out += `end ${record.id || '""'} ${status} ${record.durationMs}ms${outcome}\n`;
    this.write(out);
  }

  protected onResult(): void {
    // Results are printed together, in call order, when the run ends.
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
      const args = compactJson(change.node.args);
      text = `start ${change.node.id || '""'} ${change.node.name}${args === '' ? '' : ` ${truncate(args, 120)}`}`;
    } else if (change.kind === 'end') {
      const node = change.node;
      const outcome = node.outcome === 'ok' || node.outcome === 'error' ? '' : ` (${node.outcome})`;
      text = `end ${node.id || '""'} ${node.isError === true ? 'error' : 'ok'} ${node.durationMs}ms${outcome}`;
    } else if (change.kind === 'said') {
      text = `says: ${truncate(sanitize(change.text), 160)}`;
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

/** Live lines redrawn in place, for a terminal. */
class LiveView extends BaseView {
  private readonly logUpdate: ReturnType<typeof createLogUpdate>;
  private readonly colors: ReturnType<typeof picocolors.createColors>;
  private timer: NodeJS.Timeout | undefined;
  /** Index of the spinner frame drawn next to running calls. */
  private frame = 0;

  constructor(stream: NodeJS.WriteStream | Writable, now: () => number) {
    super(stream, now);
    // log-update hides the cursor on process.stderr (cli-cursor); only do that when we draw on
    // the real terminal, never when a test or a caller hands us some other stream.
    const ownsTerminal = stream === process.stdout || stream === process.stderr;
    this.logUpdate = createLogUpdate(stream, { showCursor: !ownsTerminal });
    this.colors = picocolors.createColors(true);
  }

  override begin(title: string, calls: readonly ToolCall[]): void {
    super.begin(title, calls);
    this.draw();
  }

  override end(summary?: string): void {
    if (!this.live) return;
    this.stopTimer();
    this.live = false;
    // The final frame (without the footer) is the record of the run and stays in the
    // scrollback. Why clear() and a plain write rather than one more logUpdate() + done():
    // log-update clips a frame taller than the terminal, and a clipped final frame would lose
    // its first calls; written plainly, every line reaches the scrollback.
    this.logUpdate.clear();
    this.logUpdate.done();
    this.write(`${this.render(false)}\n`);
    const c = this.colors;
    const width = this.width();
    let out = `${c.dim('results (call order):')}\n`;
    for (const r of this.resultLines()) {
      const status = r.status === 'ok' ? c.green('ok') : r.status === 'error' ? c.red('error') : c.yellow('missing');
      const head = `  ${r.id || '""'} ${r.status} `;
      out += `  ${c.bold(r.id || '""')} ${status} ${truncateWidth(r.text, width - displayWidth(head) - r.more.length)}${c.dim(r.more)}\n`;
    }
    if (summary !== undefined && summary !== '') out += `${oneLine(summary)}\n`;
    this.write(out);
    this.calls = [];
  }

  override line(text: string): void {
    if (this.closed) return;
    if (this.live) {
      // Above the live frame: persist() erases the frame, writes the text, and the next draw
      // starts a fresh frame below it.
      this.logUpdate.persist(text);
      this.draw();
    } else {
      this.write(`${text}\n`);
    }
  }

  override close(): void {
    if (this.closed) return;
    if (this.live) this.end();
    this.stopTimer();
    this.logUpdate.done();
    this.closed = true;
  }

  protected onStart(): void {
    this.ensureTimer();
    this.draw();
  }

  protected onProgress(record: CallRecord, progress: unknown): void {
    const lines = progressLines(record, progress);
    // A streamed line still being written is the freshest thing to show.
    const tail = isChunk(progress) ? record.partial.get(chunkKey(progress)) : undefined;
    const candidate = tail !== undefined && tail.trim() !== '' ? sanitize(tail) : lines.at(-1);
    if (candidate !== undefined && candidate.trim() !== '') record.latest = candidate.trim();
    // Drawn by the next spinner tick: a tool that floods progress costs one redraw per 80 ms.
  }

  protected flushPartial(record: CallRecord): void {
    record.partial.clear();
  }

  protected onEnd(): void {
    if (!this.calls.some((r) => r.state === 'running')) this.stopTimer();
    this.draw();
  }

  protected onResult(): void {
    // The result line of the frame comes from the end event; result messages are listed at end().
  }

  protected onAgentProgress(record: CallRecord, change: TreeChange | undefined): void {
    const agent = record.agent;
    if (agent === undefined) return;
    // The call's own line shows where its sub-agent is; its nested calls are drawn below it.
    const said = agent.said === undefined ? '' : ` · ${sanitize(agent.said)}`;
    record.latest = agent.ended === undefined ? `turn ${agent.turn}${said}` : `done: ${agent.ended}`;
    if (change?.kind === 'start' || change?.kind === 'end') this.ensureTimer();
    // Drawn by the next spinner tick, as other progress.
  }

  private ensureTimer(): void {
    if (this.timer !== undefined || this.closed) return;
    this.timer = setInterval(() => {
      this.frame = (this.frame + 1) % SPINNER.frames.length;
      this.draw();
    }, SPINNER.interval);
    // Why unref: a view must never be the reason a finished program stays alive.
    this.timer.unref();
  }

  private stopTimer(): void {
    if (this.timer === undefined) return;
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private draw(): void {
    if (!this.live || this.closed) return;
    this.logUpdate(this.render(true));
  }

  private width(): number {
    const columns = (this.stream as Partial<NodeJS.WriteStream>).columns;
    return typeof columns === 'number' && columns > 0 ? columns : 80;
  }

  /** The frame: title, one line per call, and (while running) the footer. */
  private render(withFooter: boolean): string {
    const c = this.colors;
    const width = this.width();
    const lines = [c.bold(truncateWidth(this.title, width))];
    const nameWidth = Math.min(16, Math.max(0, ...this.calls.map((r) => displayWidth(r.name))));
    const argsWidth = Math.min(Math.floor(width * 0.3), Math.max(0, ...this.calls.map((r) => displayWidth(argsSummary(r.args)))));
    const t = this.now();
    for (const record of this.calls) {
      lines.push(this.callLine(record, { nameWidth, argsWidth, width, t }));
      if (record.agent !== undefined) lines.push(...this.treeLines(record.agent, '  ', width, t));
    }
    if (withFooter) {
      const running = this.calls.filter((r) => r.state === 'running').length;
      const done = this.calls.filter((r) => r.state === 'ended').length;
      const waiting = this.calls.length - running - done;
      const parts = [`${running} running`, `${done}/${this.calls.length} done`];
      if (waiting > 0) parts.push(`${waiting} waiting`);
      lines.push(c.dim(truncateWidth(parts.join(' · '), width)));
    }
    return lines.join('\n');
  }

  /**
   * A sub-agent's calls under its call line, `├ ✓ name args time text`, nested sub-agents
   * indented further. Only the last {@link TREE_CHILDREN} calls of each sub-agent are drawn
   * (with a line counting the others), so a long sub-agent keeps the frame short.
   */
  private treeLines(agent: AgentState, indent: string, width: number, t: number): string[] {
    const c = this.colors;
    const lines: string[] = [];
    const shown = agent.children.slice(-TREE_CHILDREN);
    const hidden = agent.children.length - shown.length;
    if (hidden > 0) lines.push(c.dim(truncateWidth(`${indent}│ … ${plural(hidden, 'earlier call')}`, width)));
    shown.forEach((node, i) => {
      const last = i === shown.length - 1;
      const branch = `${indent}${last ? '└' : '├'} `;
      lines.push(this.nodeLine(node, branch, width, t));
      if (node.agent !== undefined) lines.push(...this.treeLines(node.agent, `${indent}${last ? '  ' : '│ '}`, width, t));
    });
    return lines;
  }

  private nodeLine(node: TreeNode, branch: string, width: number, t: number): string {
    const c = this.colors;
    const ms = node.state === 'running' ? `${((t - node.startedAt) / 1000).toFixed(1)}s` : `${node.durationMs ?? 0}ms`;
    const head = `${node.name} ${argsSummary(node.args)}`;
    const headText = truncateWidth(head, Math.max(8, Math.floor(width * 0.45) - displayWidth(branch)));
    const rest = width - displayWidth(branch) - 2 - displayWidth(headText) - 1 - ms.length - 1;
    const detail = node.state === 'running' ? (node.agent !== undefined ? `turn ${node.agent.turn}${node.agent.said === undefined ? '' : ` · ${node.agent.said}`}` : (node.latest ?? '')) : (node.resultLine ?? '');
    const text = truncateWidth(sanitize(detail), rest);
    const mark = node.state === 'running' ? c.cyan(SPINNER.frames[this.frame] ?? '*') : node.isError === true ? c.red('✗') : c.green('✓');
    return `${c.dim(branch)}${mark} ${headText} ${c.dim(ms)} ${node.isError === true ? c.red(text) : text}`;
  }

  /**
   * One call: `mark name args time detail`, columns aligned across calls, within `width`.
   * The plain text is budgeted first, then colored: truncation never cuts an escape sequence.
   */
  private callLine(record: CallRecord, layout: { nameWidth: number; argsWidth: number; width: number; t: number }): string {
    const c = this.colors;
    const name = padWidth(truncateWidth(record.name, layout.nameWidth), layout.nameWidth);
    const args = padWidth(truncateWidth(argsSummary(record.args), layout.argsWidth), layout.argsWidth);
    const ms =
      record.state === 'running'
        ? `${((layout.t - (record.startedAt ?? layout.t)) / 1000).toFixed(1)}s`
        : record.state === 'ended'
          ? `${record.durationMs ?? 0}ms`
          : '';
    const time = ms.padStart(7);
    // mark, name, args and time, each followed by one space.
    const rest = layout.width - (2 + layout.nameWidth + 1 + layout.argsWidth + 1 + time.length + 1);
    const head = `${name} ${c.dim(args)} ${c.dim(time)} `;
    if (record.state === 'waiting') {
      return `${c.dim('·')} ${head}${c.dim(truncateWidth('waiting', rest))}`;
    }
    if (record.state === 'running') {
      return `${c.cyan(SPINNER.frames[this.frame] ?? '*')} ${head}${truncateWidth(record.latest ?? '', rest)}`;
    }
    const ok = record.isError !== true;
    const mark = ok ? c.green('✓') : c.red('✗');
    // Why the outcome shows apart from the text: `rejected`, `not_run`, `timed_out` tell why
    // a call failed at a glance; skipped when the text already starts with it.
    const label = record.outcome === 'ok' || record.outcome === 'error' || record.outcome === undefined ? '' : record.outcome.replace('_', ' ');
    const outcome = label === '' || (record.resultLine ?? '').toLowerCase().startsWith(label) ? '' : `${label} · `;
    const more = moreLines(record.resultMore);
    const textWidth = rest - outcome.length - more.length;
    let text = truncateWidth(record.resultLine ?? '', textWidth);
    text = ok ? text : c.red(text);
    return `${mark} ${head}${outcome === '' ? '' : c.yellow(truncateWidth(outcome, rest))}${textWidth > 0 ? text + c.dim(more) : ''}`;
  }
}

function newRecord(id: string, name: string, args: unknown): CallRecord {
  return { id, name, args, state: 'waiting', partial: new Map(), printed: 0, skipped: 0 };
}

/**
 * The displayable lines of one progress value, sanitized (no escapes, no control characters):
 * - a string: its non-empty lines;
 * - a streamed chunk `{ stream, text }` (the shell tool's output): its complete non-empty
 *   lines; an unterminated tail is kept in `record.partial` until the next chunk of the
 *   same stream or the call's end;
 * - anything else: its compact JSON.
 */
function progressLines(record: CallRecord, progress: unknown): string[] {
  if (typeof progress === 'string') return splitLines(progress);
  if (isChunk(progress)) {
    const key = chunkKey(progress);
    const text = (record.partial.get(key) ?? '') + progress.text;
    const cut = text.lastIndexOf('\n');
    if (cut === -1) {
      record.partial.set(key, text.slice(-4096));
      return [];
    }
    record.partial.set(key, text.slice(cut + 1).slice(-4096));
    if (record.partial.get(key) === '') record.partial.delete(key);
    return splitLines(text.slice(0, cut));
  }
  const json = compactJson(progress);
  return json === '' ? [] : [json];
}

function isChunk(value: unknown): value is { stream?: unknown; text: string } {
  return typeof value === 'object' && value !== null && typeof (value as { text?: unknown }).text === 'string' && 'stream' in value;
}

function chunkKey(chunk: { stream?: unknown }): string {
  return typeof chunk.stream === 'string' ? chunk.stream : '';
}

function splitLines(text: string): string[] {
  return text
    .split(/\r\n|\r|\n/)
    .map(sanitize)
    .filter((line) => line.trim() !== '');
}

/**
 * The first non-empty line of a result's content (an image block reads as `[image <mime>]`),
 * and how many non-empty lines follow it in the whole content.
 */
function firstLine(content: readonly ContentBlock[]): { first: string; more: number } {
  const lines: string[] = [];
  for (const block of content) {
    if (block.type === 'image') lines.push(`[image ${block.mimeType}]`);
    else for (const line of splitLines(block.text)) lines.push(line.trim());
  }
  return { first: lines[0] ?? '', more: Math.max(0, lines.length - 1) };
}

/** ` (+N lines)` after a first line, or nothing. */
function moreLines(more: number | undefined): string {
  return more === undefined || more === 0 ? '' : ` (+${plural(more, 'line')})`;
}

/**
 * A call's arguments in a few words: an object's values joined by spaces (strings as they
 * are, other values as compact JSON), e.g. `package.json` or `error lib true`;
 * any other value as compact JSON.
 */
function argsSummary(args: unknown): string {
  if (typeof args === 'object' && args !== null && !Array.isArray(args)) {
    return oneLine(
      Object.values(args)
        .map((value) => (typeof value === 'string' ? value : compactJson(value)))
        .join(' '),
    );
  }
  return typeof args === 'string' ? oneLine(args) : compactJson(args);
}

/** Compact JSON of a value, `''` for `undefined`, `String()` when it cannot be serialized. */
function compactJson(value: unknown): string {
  if (value === undefined) return '';
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return oneLine(text);
}

/** ANSI escape sequences (CSI, OSC and two-character escapes). */
// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

/** Text safe to put on one terminal line: escapes and control characters removed, tabs as spaces. */
function sanitize(text: string): string {
  return stripAnsi(text).replace(/\t/g, '  ').replace(CONTROL, '');
}

function oneLine(text: string): string {
  return sanitize(text.replace(/\s*[\r\n]+\s*/g, ' '));
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
}

/** Terminal columns of one code point: 2 for wide East Asian characters and emoji, else 1. */
function charWidth(codePoint: number): number {
  if (
    (codePoint >= 0x1100 && codePoint <= 0x115f) ||
    (codePoint >= 0x2e80 && codePoint <= 0xa4cf && codePoint !== 0x303f) ||
    (codePoint >= 0xac00 && codePoint <= 0xd7a3) ||
    (codePoint >= 0xf900 && codePoint <= 0xfaff) ||
    (codePoint >= 0xfe30 && codePoint <= 0xfe4f) ||
    (codePoint >= 0xff00 && codePoint <= 0xff60) ||
    (codePoint >= 0xffe0 && codePoint <= 0xffe6) ||
    (codePoint >= 0x1f300 && codePoint <= 0x1faff) ||
    (codePoint >= 0x20000 && codePoint <= 0x3fffd)
  ) {
    return 2;
  }
  return 1;
}

function displayWidth(text: string): number {
  let width = 0;
  for (const ch of text) width += charWidth(ch.codePointAt(0) ?? 0);
  return width;
}

/** Cuts plain text to at most `max` terminal columns, ending with `…` when cut. */
function truncateWidth(text: string, max: number): string {
  if (max <= 0) return '';
  if (displayWidth(text) <= max) return text;
  let out = '';
  let width = 0;
  for (const ch of text) {
    const w = charWidth(ch.codePointAt(0) ?? 0);
    if (width + w > max - 1) break;
    out += ch;
    width += w;
  }
  return `${out}…`;
}

function padWidth(text: string, width: number): string {
  return text + ' '.repeat(Math.max(0, width - displayWidth(text)));
}
