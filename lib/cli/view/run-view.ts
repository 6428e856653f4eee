/**
 * The seam between the programs of `npm start` (demo, replay) and the terminal view that
 * draws a run. Programs report; the view decides how to draw (live lines on a TTY, plain
 * lines in a pipe).
 *
 * @module
 */
import type { ToolEvent } from '../../core/events.ts';
import type { ToolCall } from '../../core/tool.ts';

/** Draws one or more `runTools` runs, one after another. */
export interface RunView {
  /** A new assistant message is about to run: `title` says which (file, message number). */
  begin(title: string, calls: readonly ToolCall[]): void;
  /** Every event `runTools` yielded, in order. */
  event(event: ToolEvent): void;
  /** The run ended; `summary` is one line to print under it (e.g. "matched", a mismatch reason). */
  end(summary?: string): void;
  /** A line of text outside any run (headers, tables). */
  line(text: string): void;
  /** Stops any timer the view holds; call once when the program is done. */
  close(): void;
}
