/**
 * The terminal view of the CLI: draws `runTools` runs as they happen — live on a TTY
 * (`tty.ts`, laid out by `frame.ts`), as plain lines anywhere else (`plain.ts`); both keep
 * one record per call (`calls.ts`) and show results through `lines.ts`.
 *
 * @module
 */
import type { Writable } from 'node:stream';
import { PlainView } from './plain.ts';
import type { RunView } from './run-view.ts';
import { TtyView } from './tty.ts';

export type { RunView } from './run-view.ts';

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

/**
 * Creates the view the CLI draws runs with.
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
  return tty ? new TtyView(stream, now) : new PlainView(stream, now, options.maxProgressLinesPerCall ?? 20);
}
