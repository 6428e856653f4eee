/**
 * The row model of the view: what it knows about each call of the run being drawn, and
 * the bookkeeping both renderings share (events in, one record per call out).
 *
 * Calls are tracked by their position in the message (`event.index`), never by id: ids can
 * repeat or be empty in real data.
 *
 * @module
 */
import type { Writable } from 'node:stream';
import type { CallOutcome } from '../../core/tool/tool.ts';
import type { ToolEvent } from '../../core/run/events.ts';
import type { ToolCall, ToolResultMessage } from '../../core/tool/tool.ts';
import { applyAgentProgress, isAgentProgress, newAgentState, type AgentState, type TreeChange } from '../agent-tree.ts';
import { compactJson, oneLine, splitLines } from '../text.ts';
import { contentLines, finishedLine, moreLines } from './lines.ts';
import type { RunView } from './run-view.ts';

/** Where one call is in its life; states only move forward. */
type CallState = 'waiting' | 'running' | 'ended';

/** What the view knows about one call of the current run (keyed by position). */
export interface CallRecord {
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
  /** The line a finished row shows ({@link finishedLine}), and how many other lines the result has. */
  resultLine?: string;
  resultMore?: number;
  /** TTY: the last non-empty progress line, already made terminal-safe. */
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
  /** Set while the call waits for a person's approval: what its row says (`waits for approval: <reason>`). */
  approval?: string;
  /** The call ended before the batch paused (a resumed run): its result comes from the saved state. */
  earlier?: boolean;
  /** The call was not run: its result was replayed from a durable run's journal (`replayed: true` on its `tool_execution_end`, contract J4). */
  replayed?: boolean;
}

/** A record for a call that has not started; `id` and `name` are made terminal-safe. */
function newRecord(id: string, name: string, args: unknown): CallRecord {
  // Ids and names come from the model: made terminal-safe once, here.
  return { id: oneLine(id), name: oneLine(name), args, state: 'waiting', partial: new Map(), printed: 0, skipped: 0 };
}

/** One row of the results list printed after a run, in call order. */
export interface ResultRow {
  id: string;
  status: 'ok' | 'error' | 'missing' | 'pending';
  /** The line of the result message its row shows ({@link finishedLine}, as the call's end line). */
  text: string;
  /** ` (+N lines)` or `''`. */
  more: string;
}

/** State and event bookkeeping shared by both renderings (plain lines and the TTY frame). */
export abstract class BaseView implements RunView {
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

  begin(title: string, calls: readonly ToolCall[], earlier?: ReadonlyMap<number, ToolResultMessage>): void {
    if (this.live) this.end();
    this.title = oneLine(title);
    this.calls = calls.map((call) => newRecord(call.id, call.name, call.arguments));
    for (const [index, message] of earlier ?? []) {
      const record = this.calls[index];
      if (record === undefined) continue;
      const lines = contentLines(message.content);
      Object.assign(record, { state: 'ended', earlier: true, message, isError: message.isError, outcome: message.isError ? 'error' : 'ok', durationMs: 0 } satisfies Partial<CallRecord>);
      record.resultLine = finishedLine(lines, record.outcome);
      record.resultMore = Math.max(0, lines.length - 1);
    }
    this.live = true;
  }

  event(event: ToolEvent): void {
    if (!this.live) return;
    const record = this.record(event);
    switch (event.type) {
      case 'tool_execution_start':
        if (record.state !== 'waiting') return;
        record.state = 'running';
        // Why a waiting approval is kept: the run asks for it while preparing the call, which
        // can be before this event reaches the view; only an answer (`approval(…, false)`)
        // or the call's end clears it.
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
        this.onProgress(record, displayedProgress(event.progress));
        return;
      case 'tool_execution_end': {
        if (record.state === 'ended') return;
        this.flushPartial(record);
        record.state = 'ended';
        delete record.approval;
        record.durationMs = Math.round(this.now() - (record.startedAt ?? this.now()));
        record.outcome = event.outcome;
        record.isError = event.isError;
        if (event.replayed === true) record.replayed = true;
        const lines = contentLines(event.result.content);
        record.resultLine = finishedLine(lines, event.outcome);
        record.resultMore = Math.max(0, lines.length - 1);
        this.onEnd(record);
        return;
      }
      case 'tool_approval_request':
        this.approval(event.index, event.request.reason, true);
        return;
      case 'tool_result':
        record.message = event.message;
        this.onResult(record);
        return;
    }
  }

  abstract prompt(text: string | undefined): void;

  approval(index: number, reason: string | undefined, waiting: boolean): void {
    const record = this.calls[index];
    if (!this.live || record === undefined || record.state === 'ended') return;
    if (waiting) record.approval = `waits for approval${reason === undefined ? '' : `: ${oneLine(reason)}`}`;
    else {
      delete record.approval;
      // The time shown is the call's own: the wait for the person is not counted (as H6 says of time limits).
      if (record.state === 'running') record.startedAt = this.now();
    }
    this.onApproval(record);
  }

  abstract end(summary?: string): void;
  abstract line(text: string): void;
  abstract close(): void;

  protected abstract onStart(record: CallRecord): void;
  protected abstract onProgress(record: CallRecord, progress: unknown): void;
  /** A sub-agent's event changed the call's tree; `change` says what, when it is worth a line. */
  protected abstract onAgentProgress(record: CallRecord, change: TreeChange | undefined): void;
  protected abstract onEnd(record: CallRecord): void;
  /** The call started or stopped waiting for a person's approval (`record.approval` says which). */
  protected abstract onApproval(record: CallRecord): void;
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

  /**
   * The result rows printed after a run, in call order: each result message by the same line
   * its call's end line showed ({@link finishedLine}), so a call reads the same in both places.
   */
  protected resultRows(): ResultRow[] {
    return this.calls.map((record) => {
      const message = record.message;
      if (message === undefined && record.approval !== undefined) return { id: record.id, status: 'pending', text: record.approval, more: '' };
      if (message === undefined) return { id: record.id, status: 'missing', text: '(no result message)', more: '' };
      const lines = contentLines(message.content);
      const text = finishedLine(lines, record.outcome ?? (message.isError ? 'error' : 'ok'));
      return { id: oneLine(message.toolCallId), status: message.isError ? 'error' : 'ok', text, more: moreLines(Math.max(0, lines.length - 1)) };
    });
  }

  protected write(text: string): void {
    // A destroyed stream (the reader of a pipe went away) takes no more output.
    if (this.closed || (this.stream as Writable).destroyed === true) return;
    this.stream.write(text);
  }
}

/**
 * A progress value as the views draw it. An MCP progress payload (`{ progress, total?,
 * message? }`, what an MCP tool of `mcpTools` yields) is drawn like a native tool's progress:
 * its `message` as text — or, when the message is the JSON text of a streamed chunk
 * `{ stream, text }` (how a toolrun MCP server sends its shell tool's output), that chunk —
 * with `progress/total` as a bar in front when the total is known. Any other value is
 * returned as it is.
 *
 * @example
 * ```ts
 * displayedProgress({ progress: 2, total: 4, message: 'copying' }); // '[█████░░░░░] 2/4 copying'
 * displayedProgress({ progress: 1, message: '{"stream":"stdout","text":"step 1\\n"}' }); // { stream: 'stdout', text: 'step 1\n' }
 * ```
 */
export function displayedProgress(progress: unknown): unknown {
  if (!isMcpProgress(progress)) return progress;
  const message = progress.message ?? '';
  if (message.startsWith('{')) {
    let decoded: unknown;
    try {
      decoded = JSON.parse(message);
    } catch {
      decoded = undefined;
    }
    if (isChunk(decoded) && progress.total === undefined) return decoded;
  }
  const bar = progress.total === undefined ? '' : progressBar(progress.progress, progress.total);
  if (bar === '') return message === '' ? `${progress.progress}` : message;
  return message === '' ? bar : `${bar} ${oneLine(message)}`;
}

/** True for `{ progress: number, total?: number, message?: string }` and nothing more: an MCP progress payload. */
function isMcpProgress(value: unknown): value is { progress: number; total?: number; message?: string } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  if (typeof v.progress !== 'number' || !Number.isFinite(v.progress)) return false;
  if (v.total !== undefined && (typeof v.total !== 'number' || !Number.isFinite(v.total))) return false;
  if (v.message !== undefined && typeof v.message !== 'string') return false;
  return Object.keys(v).every((key) => key === 'progress' || key === 'total' || key === 'message');
}

/** Cells of {@link progressBar}. */
const BAR_CELLS = 10;

/** `[█████░░░░░] 2/4`: `progress` of `total` in ten cells (half cells drawn as `▌`); `''` when `total` is not positive. */
export function progressBar(progress: number, total: number): string {
  if (!(total > 0)) return '';
  const halves = Math.round(Math.min(1, Math.max(0, progress / total)) * BAR_CELLS * 2);
  const full = Math.floor(halves / 2);
  const half = halves % 2 === 1 ? '▌' : '';
  return `[${'█'.repeat(full)}${half}${'░'.repeat(BAR_CELLS - full - half.length)}] ${progress}/${total}`;
}

/**
 * The displayable lines of one progress value, terminal-safe:
 * - a string: its non-empty lines;
 * - a streamed chunk `{ stream, text }` (the shell tool's output): its complete non-empty
 *   lines; an unterminated tail is kept in `record.partial` until the next chunk of the
 *   same stream or the call's end;
 * - anything else: its compact JSON.
 */
export function progressLines(record: CallRecord, progress: unknown): string[] {
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

/** True for a streamed output chunk `{ stream, text }` (the shell tool's progress). */
export function isChunk(value: unknown): value is { stream?: unknown; text: string } {
  return typeof value === 'object' && value !== null && typeof (value as { text?: unknown }).text === 'string' && 'stream' in value;
}

/** The key a chunk's partial line is kept under: its stream name. */
export function chunkKey(chunk: { stream?: unknown }): string {
  return typeof chunk.stream === 'string' ? chunk.stream : '';
}
