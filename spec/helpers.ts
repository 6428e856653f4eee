/**
 * Test helpers shared by the specs: gates instead of sleeps, an event collector, and the
 * invariants every run must keep (O1–O4, I1–I5 of docs/contract.md).
 */
import { expect, vi } from 'vitest';
import type { ToolBatch, ToolEvent } from '../lib/core/run/events.ts';
import type { ToolCall } from '../lib/core/tool/tool.ts';

/** A promise the test resolves by hand. */
export interface Gate<T = void> {
  promise: Promise<T>;
  open(value: T): void;
  fail(error: unknown): void;
  readonly opened: boolean;
}

export function gate<T = void>(): Gate<T> {
  let open!: (value: T) => void;
  let fail!: (error: unknown) => void;
  let opened = false;
  const promise = new Promise<T>((resolve, reject) => {
    open = (v) => {
      opened = true;
      resolve(v);
    };
    fail = reject;
  });
  return {
    promise,
    open,
    fail,
    get opened() {
      return opened;
    },
  };
}

/** Lets every queued microtask and a few macrotask turns run (also under fake timers, without moving the clock). */
export async function settle(turns = 5): Promise<void> {
  for (let i = 0; i < turns; i++) {
    if (vi.isFakeTimers()) await vi.advanceTimersByTimeAsync(0);
    else await new Promise<void>((r) => setImmediate(r));
  }
}

/** Drains a run; returns every event and the batch. */
export async function collect(run: AsyncGenerator<ToolEvent, ToolBatch, undefined>): Promise<{ events: ToolEvent[]; batch: ToolBatch }> {
  const events: ToolEvent[] = [];
  for (;;) {
    const step = await run.next();
    if (step.done === true) return { events, batch: step.value };
    events.push(step.value);
  }
}

/** The text of a result message's content. */
export function text(message: { content: { type: string }[] }): string {
  return message.content.map((b) => (b.type === 'text' ? (b as unknown as { text: string }).text : `[${b.type}]`)).join('');
}

/** Calls `c1…cN` of one tool. */
export function calls(name: string, args: unknown[]): ToolCall[] {
  return args.map((a, i) => ({ id: `c${i + 1}`, name, arguments: a }));
}

/** Events of one kind, narrowed. */
export function ofType<K extends ToolEvent['type']>(events: ToolEvent[], type: K): Extract<ToolEvent, { type: K }>[] {
  return events.filter((e): e is Extract<ToolEvent, { type: K }> => e.type === type);
}

/**
 * The invariants of a completed run: one result per call in call order with the call's
 * own id (O1, O2, I1); per call start → update* → end → result, nothing after (O4, I4);
 * the returned messages equal the emitted results (O6).
 */
export function expectRunInvariants(input: readonly ToolCall[], events: ToolEvent[], batch: ToolBatch): void {
  const results = ofType(events, 'tool_result');
  expect(results.map((r) => r.index)).toEqual(input.map((_, i) => i));
  expect(results.map((r) => r.message.toolCallId)).toEqual(input.map((c) => c.id));
  expect(batch.messages).toEqual(results.map((r) => r.message));
  // Each event checked in plain code, the broken rules collected and asserted once: an
  // expect() per event cost more CPU than the runs themselves in the specs that call this often.
  const phase = new Map<number, 'started' | 'ended' | 'released'>();
  const broken: string[] = [];
  for (const e of events) {
    const index = e.index;
    const now = phase.get(index);
    switch (e.type) {
      case 'tool_execution_start':
        if (now !== undefined) broken.push(`second start for call ${index}`);
        phase.set(index, 'started');
        break;
      case 'tool_execution_update':
        if (now !== 'started') broken.push(`update for call ${index} outside start..end`);
        break;
      case 'tool_execution_end':
        if (now !== 'started') broken.push(`end for call ${index} without start`);
        phase.set(index, 'ended');
        break;
      case 'tool_result':
        if (now !== 'ended') broken.push(`result for call ${index} before its end`);
        phase.set(index, 'released');
        break;
    }
  }
  for (const [index, p] of phase) if (p !== 'released') broken.push(`call ${index} ${p}, never released`);
  expect(broken).toEqual([]);
}
