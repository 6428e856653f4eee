/**
 * The TTY rendering: the frame of `frame.ts` redrawn in place with `log-update` — a spinner
 * and each call's latest progress while it runs, then ✓ / ✗, its duration and its last
 * line — and a footer with the counts. When the run ends the final frame stays in the
 * scrollback and the result messages follow in call order, then the summary line.
 *
 * @module
 */
import type { Writable } from 'node:stream';
import { createLogUpdate } from 'log-update';
import picocolors from 'picocolors';
import type { ToolCall, ToolResultMessage } from '../../core/tool/tool.ts';
import type { TreeChange } from '../agent-tree.ts';
import { displayWidth, oneLine, terminalSafe, truncateWidth } from '../text.ts';
import { BaseView, chunkKey, isChunk, progressLines, type CallRecord } from './calls.ts';
import { renderFrame, SPINNER } from './frame.ts';

/** Live lines redrawn in place, for a terminal. */
export class TtyView extends BaseView {
  private readonly logUpdate: ReturnType<typeof createLogUpdate>;
  private readonly colors: ReturnType<typeof picocolors.createColors>;
  private timer: NodeJS.Timeout | undefined;
  /** Index of the spinner frame drawn next to running calls. */
  private frame = 0;
  /** The question drawn under the frame ({@link TtyView.prompt}), if any. */
  private question: string | undefined;
  /** The notice drawn under the frame ({@link TtyView.notice}) until the run ends, if any. */
  private note: string | undefined;

  constructor(stream: NodeJS.WriteStream | Writable, now: () => number) {
    super(stream, now);
    // log-update hides the cursor on process.stderr (cli-cursor); only do that when we draw on
    // the real terminal, never when a test or a caller hands us some other stream.
    const ownsTerminal = stream === process.stdout || stream === process.stderr;
    this.logUpdate = createLogUpdate(stream, { showCursor: !ownsTerminal });
    this.colors = picocolors.createColors(true);
  }

  override begin(title: string, calls: readonly ToolCall[], earlier?: ReadonlyMap<number, ToolResultMessage>): void {
    super.begin(title, calls, earlier);
    this.draw();
  }

  override prompt(text: string | undefined): void {
    this.question = text === undefined ? undefined : oneLine(text);
    this.draw();
  }

  /** Drawn under the frame (and the question) until the run ends; kept for the next run when none is live. */
  notice(text: string): void {
    this.note = oneLine(text);
    this.draw();
  }

  override end(summary?: string): void {
    if (!this.live) return;
    this.stopTimer();
    this.live = false;
    this.question = undefined;
    this.note = undefined;
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
    for (const r of this.resultRows()) {
      const status = r.status === 'ok' ? c.green('ok') : r.status === 'error' ? c.red('error') : c.yellow(r.status);
      const head = `  ${r.id || '""'} ${r.status} `;
      out += `  ${c.bold(r.id || '""')} ${status} ${truncateWidth(r.text, width - displayWidth(head) - r.more.length)}${c.dim(r.more)}\n`;
    }
    if (summary !== undefined && summary !== '') out += `${oneLine(summary)}\n`;
    this.write(out);
    this.calls = [];
  }

  override line(text: string): void {
    if (this.closed) return;
    const safe = text
      .split('\n')
      .map((line) => terminalSafe(line))
      .join('\n');
    if (this.live) {
      // Above the live frame: persist() erases the frame, writes the text, and the next draw
      // starts a fresh frame below it.
      this.logUpdate.persist(safe);
      this.draw();
    } else {
      this.write(`${safe}\n`);
    }
  }

  override close(): void {
    if (this.closed) return;
    if (this.live) this.end();
    this.note = undefined;
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
    const candidate = tail !== undefined && tail.trim() !== '' ? terminalSafe(tail) : lines.at(-1);
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

  protected onApproval(): void {
    this.draw();
  }

  protected onAgentProgress(record: CallRecord, change: TreeChange | undefined): void {
    const agent = record.agent;
    if (agent === undefined) return;
    // The call's own line shows where its sub-agent is; its nested calls are drawn below it.
    const said = agent.said === undefined ? '' : ` · ${oneLine(agent.said)}`;
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

  private render(withFooter: boolean): string {
    const c = this.colors;
    const lines = [renderFrame({ title: this.title, calls: this.calls, width: this.width(), t: this.now(), spinnerFrame: this.frame, colors: c }, withFooter)];
    if (withFooter && this.question !== undefined) lines.push(c.bold(c.yellow(truncateWidth(this.question, this.width()))));
    if (withFooter && this.note !== undefined) lines.push(c.yellow(truncateWidth(this.note, this.width())));
    return lines.join('\n');
  }
}
