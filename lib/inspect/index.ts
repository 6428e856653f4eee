/**
 * `toolrun/inspect`: a timeline of a batch, in the browser — and the event log it can be
 * read from. Node only (an HTTP server on 127.0.0.1, a file), so it is its own entry:
 * `import 'toolrun'` stays free of `node:` modules.
 *
 * - {@link inspectRun}: serve a live timeline of one `runTools` run; {@link openInspector}
 *   for several batches (an agent's turns) on one page.
 * - {@link recordEvents}: write a run's events to a JSON Lines file, which
 *   `npx toolrun inspect <file>` opens; {@link readEventLog} reads one.
 *
 * docs/inspect.md has the page, the log format, the security model and the bounds.
 *
 * @example
 * ```ts
 * import { runTools } from 'toolrun';
 * import { inspectRun } from 'toolrun/inspect';
 *
 * const inspection = await inspectRun(runTools(calls, { tools }));
 * console.log(`timeline: ${inspection.url}`);
 * for await (const event of inspection.run) if (event.type === 'tool_result') console.log(event.toolCallId);
 * await inspection.close();
 * ```
 *
 * @module
 */
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import type { ToolBatch, ToolEvent } from '../core/run/events.ts';
import { headerLine, logLine } from './log.ts';
import { serveTimeline } from './server.ts';
import { Timeline } from './timeline.ts';
import { timelineSink, watchRun, type BatchSink } from './watch.ts';

export { EventLogError, LINE_LIMIT, LINE_VALUE_LIMIT, LOG_FORMAT, LOG_VERSION, readEventLog } from './log.ts';
export { CALLS_KEPT, TEXT_LIMIT, TICKS_KEPT, TICK_TEXT_LIMIT, Timeline } from './timeline.ts';
export type { BatchView, CallView, Tick, TimelineDelta } from './timeline.ts';

/** Options of {@link openInspector} and {@link inspectRun}. */
export interface InspectorOptions {
  /**
   * The port on 127.0.0.1 to listen on.
   * @default 0: a free port the system picks
   */
  port?: number;
  /**
   * The page's title (the program, the request…).
   * @default 'live run'
   */
  title?: string;
}

/** A live inspector: one page, any number of batches. */
export interface Inspector {
  /** The page, token included (`http://127.0.0.1:<port>/<token>/`): give it only to who may see the run. */
  url: string;
  /**
   * `run` unchanged (same events, same return value), drawn on the page as one batch while
   * it is consumed.
   * @param label - the batch's name on the page. @default `batch <n>`
   */
  watch<E extends ToolEvent, B extends ToolBatch>(run: AsyncGenerator<E, B, undefined>, label?: string): AsyncGenerator<E, B, undefined>;
  /**
   * A batch told event by event, for code that sees a run's events without holding its
   * generator (an agent loop's events): `event` each tool event, `end` once.
   */
  begin(label: string): {
    /** Draws one tool event of the batch (its time is when this is called). */
    event(event: ToolEvent): void;
    /** Ends the batch; `aborted: true` draws it as aborted. Call it once. */
    end(outcome?: { aborted?: boolean }): void;
  };
  /** Stops the server; open pages say they lost it. Idempotent. */
  close(): Promise<void>;
}

/**
 * Starts a live inspector on 127.0.0.1 (a free port, a random token in the URL).
 *
 * @throws the server's listen error (e.g. `EADDRINUSE` for a `port` in use).
 * @example
 * ```ts
 * const inspector = await openInspector({ title: 'my agent' });
 * console.log(inspector.url);
 * for await (const event of inspector.watch(runTools(calls, { tools }), 'turn 1')) handle(event);
 * ```
 */
export async function openInspector(options: InspectorOptions = {}): Promise<Inspector> {
  const timeline = new Timeline({ title: options.title ?? 'live run', live: true });
  const server = await serveTimeline(timeline, options.port === undefined ? {} : { port: options.port });
  const sink = timelineSink(timeline);
  let batches = 0;
  return {
    url: server.url,
    watch: (run, label) => {
      batches++;
      return watchRun(run, sink, batches, label ?? `batch ${batches}`);
    },
    begin: (label) => {
      const batch = ++batches;
      timeline.beginBatch(batch, label, Date.now());
      return {
        event: (event) => timeline.event(batch, Date.now(), event),
        end: (outcome = {}) => timeline.endBatch(batch, Date.now(), outcome),
      };
    },
    close: async () => {
      timeline.finish();
      await server.close();
    },
  };
}

/** What {@link inspectRun} gives: the run to consume, the page, and how to stop it. */
export interface Inspection<E extends ToolEvent, B extends ToolBatch> {
  /** The run, unchanged: consume it as you would have. */
  run: AsyncGenerator<E, B, undefined>;
  /** The page, token included. */
  url: string;
  /** Stops the server. Idempotent. */
  close(): Promise<void>;
}

/**
 * Serves a live timeline of one `runTools` run: {@link openInspector} and one
 * {@link Inspector.watch}. The page keeps working after the run ends, until `close()`.
 *
 * @example
 * ```ts
 * const { run, url, close } = await inspectRun(runTools(calls, { tools }));
 * console.log(url);
 * for await (const event of run) void event;
 * await close();
 * ```
 */
export async function inspectRun<E extends ToolEvent, B extends ToolBatch>(run: AsyncGenerator<E, B, undefined>, options: InspectorOptions = {}): Promise<Inspection<E, B>> {
  const inspector = await openInspector(options);
  return { run: inspector.watch(run, options.title ?? 'batch 1'), url: inspector.url, close: () => inspector.close() };
}

/** Options of {@link recordEvents}. */
export interface RecordEventsOptions {
  /**
   * The batch's name in the log (the page shows it).
   * @default 'batch 1'
   */
  label?: string;
}

/**
 * `run` unchanged, with each event written to `file` as a line of JSON Lines, with the time
 * it was seen (docs/inspect.md, the format). The file is created (or emptied) at the first
 * `next()`, and is complete once the run has returned (or the consumer left) and the write
 * has finished: the generator's return waits for it.
 *
 * Values are bounded in the log (16,384 characters each, `LINE_VALUE_LIMIT`); the `error`
 * of an end event is left out (a live value).
 *
 * @example
 * ```ts
 * for await (const event of recordEvents(runTools(calls, { tools }), 'run.jsonl')) void event;
 * // then: npx toolrun inspect run.jsonl
 * ```
 */
export async function* recordEvents<E extends ToolEvent, B extends ToolBatch>(run: AsyncGenerator<E, B, undefined>, file: string, options: RecordEventsOptions = {}): AsyncGenerator<E, B, undefined> {
  const out = createWriteStream(file, { encoding: 'utf8' });
  const failed = once(out, 'error').then(([error]) => error as Error);
  out.write(`${headerLine()}\n`);
  const sink: BatchSink = {
    begin: (batch, label, t) => out.write(`${logLine(t, batch, { type: 'batch_start', label })}\n`),
    event: (batch, t, event) => out.write(`${logLine(t, batch, event)}\n`),
    end: (batch, t, outcome) => out.write(`${logLine(t, batch, { type: 'batch_end', ...outcome })}\n`),
  };
  try {
    return yield* watchRun(run, sink, 1, options.label ?? 'batch 1');
  } finally {
    out.end();
    const error = await Promise.race([once(out, 'finish').then(() => undefined), failed]);
    if (error !== undefined) throw error;
  }
}
