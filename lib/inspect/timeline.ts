/**
 * The inspector's model of a run: per batch, one bounded record per call — what the page
 * draws. It is built from timestamped tool events (a live run, or the lines of an event
 * log) and never keeps more than its bounds, so an hour of a live run keeps bounded memory
 * in the process and in the page:
 *
 * - per call: the arguments and the result as text of at most {@link TEXT_LIMIT} characters,
 *   the first and last {@link TICKS_KEPT} progress ticks (each at most {@link TICK_TEXT_LIMIT}
 *   characters) and the count of all of them;
 * - per timeline: at most {@link CALLS_KEPT} calls; past it the oldest batches are dropped
 *   whole (their count is kept and shown), and a single batch past it keeps its first ones.
 *
 * @module
 */
import type { ToolEvent } from '../core/run/events.ts';
import type { ContentBlock } from '../core/tool/content.ts';
import { contentBlockText, omittedBlockText, readContentBlock } from '../core/values/content.ts';
import { clipText } from '../core/values/guards.ts';

/** Characters kept of a call's arguments and of its result. */
export const TEXT_LIMIT = 400;
/** Progress ticks kept at each end of a call's progress (first N and last N). */
export const TICKS_KEPT = 5;
/** Characters kept of one progress tick. */
export const TICK_TEXT_LIMIT = 160;
/** Calls kept over all batches of a timeline. */
export const CALLS_KEPT = 50_000;

/** One progress tick: when (epoch ms) and its text. */
export type Tick = [t: number, text: string];

/** What the page draws of one call; times are epoch ms. */
export interface CallView {
  batch: number;
  /** Position of the call in its batch's message. */
  index: number;
  id: string;
  name: string;
  args: string;
  /** `tool_execution_start`. */
  start?: number;
  /** `tool_execution_end`. */
  end?: number;
  /** `tool_result`: released, in call order. */
  release?: number;
  outcome?: string;
  isError?: boolean;
  replayed?: boolean;
  result?: string;
  /** `tool_approval_request`, and the reason a person was given. */
  approval?: { t: number; reason: string };
  ticks: { count: number; first: Tick[]; last: Tick[] };
  /** Version of the timeline when this record last changed (for live updates). */
  v: number;
}

/** What the page draws of one batch. */
export interface BatchView {
  batch: number;
  label: string;
  /** The batch's first `next()`: calls wait for a slot from here. */
  start: number;
  end?: number;
  aborted?: boolean;
  /** Calls still waiting for approval when the batch ended paused. */
  paused?: number;
  v: number;
}

/** What the server sends the page: the batches and calls changed after a version. */
export interface TimelineDelta {
  version: number;
  live: boolean;
  title: string;
  /** Server time of the delta (epoch ms): the page draws running calls up to it. */
  now: number;
  droppedCalls: number;
  batches: BatchView[];
  calls: CallView[];
  /** Batches dropped (to stay in {@link CALLS_KEPT}) since that version. */
  removed: number[];
}

/**
 * Any value as short text: strings as they are, the rest as JSON (a BigInt as `5n`, a cycle
 * as `[circular]`), cut by `clipText`; never throws. Not `describeValue`: that one prefixes
 * the type (`object {…}`) for error messages, while this text is what the page shows and,
 * when short, the JSON the event log writes back as the value (lib/inspect/log.ts).
 */
export function textOf(value: unknown, limit: number): string {
  if (typeof value === 'string') return clipText(value, limit);
  try {
    const seen = new WeakSet<object>();
    const json = JSON.stringify(value, (_key, v: unknown) => {
      if (typeof v === 'bigint') return `${v}n`;
      if (typeof v === 'function' || typeof v === 'symbol') return String(v);
      if (typeof v === 'object' && v !== null) {
        if (seen.has(v)) return '[circular]';
        seen.add(v);
      }
      return v;
    });
    return clipText(json ?? String(value), limit);
  } catch (error) {
    return unreadable(error);
  }
}

/**
 * A result's content blocks as text, one line each, as a provider format sends them: a text
 * block's text, an image as `[image]`, any other block as `contentBlockText` writes it, and
 * a block that is not one (a hand-edited log) as `omittedBlockText` does.
 */
function contentText(content: unknown): string {
  if (!Array.isArray(content)) return textOf(content, TEXT_LIMIT);
  return clipText(content.map(blockText).join('\n'), TEXT_LIMIT);
}

function blockText(value: unknown): string {
  let block: ContentBlock | string;
  try {
    block = readContentBlock(value);
  } catch (error) {
    return unreadable(error);
  }
  if (typeof block === 'string') return omittedBlockText(block, value);
  if (block.type === 'text') return block.text;
  return contentBlockText(block) ?? `[${block.type}]`;
}

const unreadable = (error: unknown): string => `[unreadable: ${error instanceof Error ? error.message : 'thrown'}]`;

/** The bounded model; see the module's comment for its bounds. */
export class Timeline {
  #version = 0;
  readonly #batches = new Map<number, BatchView>();
  /** Calls by batch, by index. */
  readonly #calls = new Map<number, Map<number, CallView>>();
  #callCount = 0;
  #droppedCalls = 0;
  /** Dropped batches, with the version they were dropped at. */
  #removed: Array<[batch: number, v: number]> = [];
  #live: boolean;
  readonly #title: string;
  readonly #listeners = new Set<() => void>();

  constructor(options: { title: string; live: boolean }) {
    this.#title = options.title;
    this.#live = options.live;
  }

  /** Grows by one at every change; the page asks for what changed since the version it has. */
  get version(): number {
    return this.#version;
  }

  /** The batches kept now (the oldest are dropped whole past `CALLS_KEPT` calls). */
  get batchCount(): number {
    return this.#batches.size;
  }

  /** The calls kept now, over every batch. */
  get callCount(): number {
    return this.#callCount;
  }

  /** Called (synchronously) after each change. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Marks the timeline finished: no more events come (the page stops drawing "now"). */
  finish(): void {
    this.#live = false;
    this.#changed();
  }

  /** A batch starts at `t` (its first `next()`). */
  beginBatch(batch: number, label: string, t: number): void {
    // A batch begun again (a hostile or concatenated log) starts over: its old calls leave the count.
    const old = this.#calls.get(batch);
    if (old !== undefined) {
      this.#callCount -= old.size;
      this.#batches.delete(batch);
    }
    // At most CALLS_KEPT batches too: a log of empty batches stays bounded.
    this.#dropOldest('batch');
    this.#version++;
    this.#batches.set(batch, { batch, label: clipText(label, TEXT_LIMIT), start: t, v: this.#version });
    this.#calls.set(batch, new Map());
    this.#changed();
  }

  /** The batch's generator returned at `t`. */
  endBatch(batch: number, t: number, outcome: { aborted?: boolean; paused?: number }): void {
    const view = this.#batches.get(batch);
    if (view === undefined) return;
    this.#version++;
    view.end = t;
    if (outcome.aborted === true) view.aborted = true;
    if (outcome.paused !== undefined && outcome.paused > 0) view.paused = outcome.paused;
    view.v = this.#version;
    this.#changed();
  }

  /** One tool event of `batch`, at `t`. Anything that is not a tool event of a known batch is ignored. */
  event(batch: number, t: number, event: ToolEvent): void {
    const calls = this.#calls.get(batch);
    if (calls === undefined || typeof event !== 'object' || event === null) return;
    const index = typeof event.index === 'number' && Number.isSafeInteger(event.index) && event.index >= 0 ? event.index : undefined;
    if (index === undefined) return;
    let call = calls.get(index);
    if (call === undefined) {
      if (event.type !== 'tool_execution_start' && event.type !== 'tool_execution_end' && event.type !== 'tool_result') return;
      if (!this.#room()) return;
      call = { batch, index, id: clipText(String(event.toolCallId), TEXT_LIMIT), name: clipText(String(event.toolName), TEXT_LIMIT), args: '', ticks: { count: 0, first: [], last: [] }, v: 0 };
      calls.set(index, call);
      this.#callCount++;
    }
    this.#version++;
    call.v = this.#version;
    switch (event.type) {
      case 'tool_execution_start':
        call.start = t;
        call.args = textOf(event.args, TEXT_LIMIT);
        break;
      case 'tool_execution_update': {
        const tick: Tick = [t, textOf(event.progress, TICK_TEXT_LIMIT)];
        const ticks = call.ticks;
        ticks.count++;
        if (ticks.first.length < TICKS_KEPT) ticks.first.push(tick);
        else {
          ticks.last.push(tick);
          if (ticks.last.length > TICKS_KEPT) ticks.last.shift();
        }
        break;
      }
      case 'tool_approval_request':
        call.approval = { t, reason: textOf(event.request?.reason ?? '', TEXT_LIMIT) };
        break;
      case 'tool_execution_end':
        call.end = t;
        call.start ??= t;
        call.outcome = clipText(String(event.outcome), TEXT_LIMIT);
        call.isError = event.isError === true;
        if (event.replayed === true) call.replayed = true;
        call.result = contentText(event.result?.content);
        break;
      case 'tool_result':
        call.release = t;
        call.end ??= t;
        break;
    }
    this.#changed();
  }

  /** Whether one more call fits; drops the oldest batches to make room. */
  #room(): boolean {
    this.#dropOldest('call');
    if (this.#callCount < CALLS_KEPT) return true;
    this.#droppedCalls++;
    return false;
  }

  /** Drops the oldest batches, never the last one, until one more call (or batch) fits in CALLS_KEPT. */
  #dropOldest(room: 'call' | 'batch'): void {
    while ((room === 'call' ? this.#callCount : this.#batches.size) >= CALLS_KEPT && this.#batches.size > 1) {
      const oldest = this.#batches.keys().next().value as number;
      const size = this.#calls.get(oldest)?.size ?? 0;
      this.#batches.delete(oldest);
      this.#calls.delete(oldest);
      this.#callCount -= size;
      this.#droppedCalls += size;
      this.#removed.push([oldest, this.#version + 1]);
      if (this.#removed.length > 1000) this.#removed.shift();
    }
  }

  /** The batches and calls changed after version `since` (0: everything). */
  delta(since: number, now: number): TimelineDelta {
    const batches: BatchView[] = [];
    const calls: CallView[] = [];
    for (const view of this.#batches.values()) if (view.v > since) batches.push(view);
    for (const byIndex of this.#calls.values()) for (const call of byIndex.values()) if (call.v > since) calls.push(call);
    const removed = since === 0 ? [] : this.#removed.filter(([, v]) => v > since).map(([batch]) => batch);
    return { version: this.#version, live: this.#live, title: this.#title, now, droppedCalls: this.#droppedCalls, batches, calls, removed };
  }

  #changed(): void {
    for (const listener of this.#listeners) listener();
  }
}
