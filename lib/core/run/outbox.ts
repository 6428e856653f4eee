/**
 * `Outbox`: what the consumer of a run is handed, in order (contract O3–O5): the run's
 * events, and between them the {@link PullMark}s that let a generator tool step again once
 * the consumer has taken its update (M3). The run generator only takes events out; the marks
 * are acted on here, at the moment the consumer reaches them.
 *
 * ```
 * Run ─ push(event) ────────▶ [ event | mark | event … ] ─▶ take(): the next event
 *     ─ pullAfter(mark) ────▶                              (a mark on the way: its tool is pulled)
 * ```
 *
 * @module
 */
import type { ToolEvent } from './events.ts';
import { Channel } from '../streams/channel.ts';
import type { MergeEngine, MergeSlot } from '../streams/merge.ts';

/**
 * A pull mark: queued right after a tool's `tool_execution_update`. When the consumer
 * reaches it, the update before it has been taken, so the tool is asked for its next step:
 * a tool runs at most one step ahead of the consumer (M3). A source has at most one step
 * outstanding, so at most one of its marks is queued at a time: the run makes one per
 * source, on its first update, and queues it again for each later one.
 */
export class PullMark<T> {
  constructor(readonly slot: MergeSlot<T>) {}
}

/** The run's outbox; `T` is the tag of its merge engine's sources. */
export class Outbox<T> {
  readonly #items = new Channel<ToolEvent | PullMark<T>>({ highWaterMark: Infinity, capacity: 16 });
  readonly #engine: MergeEngine<T>;
  /**
   * How many marks are queued. While none is, `take()` skips the `instanceof PullMark` test of
   * each event: on the events' several shapes that test made `take()` ≈ 300 ns per call at
   * N = 1,000, ≈ 30 without it (`bench/ab.ts`).
   */
  #marks = 0;

  constructor(engine: MergeEngine<T>) {
    this.#engine = engine;
  }

  /** How many items (events and marks) wait. */
  get size(): number {
    return this.#items.size;
  }

  /** Queues an event for the consumer. */
  push(event: ToolEvent): void {
    this.#items.push(event);
  }

  /** Queues `mark`: its source is pulled once the consumer has taken everything queued before it (M3). */
  pullAfter(mark: PullMark<T>): void {
    this.#marks++;
    this.#items.push(mark);
  }

  /** Takes the next event, pulling the source of every mark on the way; `undefined` when no event waits. */
  take(): ToolEvent | undefined {
    // No mark queued (no tool yielded, the common case): every item is an event.
    if (this.#marks === 0) return this.#items.take() as ToolEvent | undefined;
    for (;;) {
      const item = this.#items.take();
      if (!(item instanceof PullMark)) return item;
      this.#marks--;
      this.#engine.pull(item.slot);
    }
  }
}
