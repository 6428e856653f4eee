/**
 * The seam between the commands of the program (demo, replay, agent, mcp, durable) and the
 * terminal view that draws a run. Commands report; the view decides how to draw (live lines
 * on a TTY, plain lines in a pipe).
 *
 * @module
 */
import type { ToolEvent } from '../../core/run/events.ts';
import type { ToolCall, ToolResultMessage } from '../../core/tool/tool.ts';

/** Draws one or more `runTools` runs, one after another. */
export interface RunView {
  /**
   * A new assistant message is about to run: `title` says which (file, message number).
   * `earlier`: for a resumed batch, the results of calls that ended before it paused, by index.
   */
  begin(title: string, calls: readonly ToolCall[], earlier?: ReadonlyMap<number, ToolResultMessage>): void;
  /** Every event `runTools` yielded, in order. */
  event(event: ToolEvent): void;
  /** The run ended; `summary` is one line to print under it (e.g. "matched", a mismatch reason). */
  end(summary?: string): void;
  /**
   * A question for the person at the keyboard (an approval prompt), shown under the live
   * calls until it is replaced or cleared with `undefined`; plain mode prints it once.
   */
  prompt?(text: string | undefined): void;
  /**
   * The call at `index` waits for a person's approval (its row says so, with `reason`), or
   * no longer does (`waiting: false`). A deferred call's `tool_approval_request` event does
   * the same.
   */
  approval?(index: number, reason: string | undefined, waiting: boolean): void;
  /**
   * A word about the run as a whole from outside it (the Ctrl+C notice). On a TTY it is drawn
   * under the live frame until the run ends (the summary line then says what happened); in
   * plain mode it is one line. Given before a run begins, it is shown with that run, after its
   * title, never above it; given when no run follows, it is dropped.
   */
  notice?(text: string): void;
  /** A line of text outside any run (headers, tables). */
  line(text: string): void;
  /** Stops any timer the view holds; call once when the program is done. */
  close(): void;
}
