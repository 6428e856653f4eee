/**
 * Harness for the case specs (docs/contract.md, "Cases from public bug reports"): the scripts of the cases'
 * notation (`sleep(n)`, `sleep!(n)`, `hang`) on vitest's fake timers, a driver that runs a
 * batch in virtual time and stamps every event with its time, and the global invariants
 * I1–I5 that every case asserts.
 *
 * Every case runs under `vi.useFakeTimers()`: times below are virtual milliseconds since
 * the run was created, exact rather than "about".
 */
import { getEventListeners } from 'node:events';
import { expect, vi } from 'vitest';
import type { ToolBatch, ToolEvent } from '../../lib/core/run/events.ts';
import type { ToolCall } from '../../lib/core/tool/tool.ts';
import { expectRunInvariants, ofType } from '../helpers.ts';

/** `sleep(n)`: an abort-aware delay; rejects with the signal's reason when it fires. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** `sleep!(n)`: a delay that ignores every signal. */
export function sleepIgnoring(ms: number): Promise<void> {
  return new Promise<void>((resolve) => setTimeout(resolve, ms));
}

/** `hang`: never settles, ignores abort. */
export function hang(): Promise<never> {
  return new Promise<never>(() => {});
}

/** Virtual ms since `t0`. */
export function clockFrom(t0: number): () => number {
  return () => Date.now() - t0;
}

/**
 * I3: counts `unhandledRejection`, `uncaughtException` and `MaxListenersExceededWarning`
 * while a case runs. The listeners are added here and removed by `dispose()`.
 */
export interface ProcessWatch {
  readonly unhandled: unknown[];
  readonly uncaught: unknown[];
  readonly maxListenerWarnings: Error[];
  /** Asserts all three are empty. */
  expectClean(): void;
  dispose(): void;
}

export function watchProcess(): ProcessWatch {
  const unhandled: unknown[] = [];
  const uncaught: unknown[] = [];
  const maxListenerWarnings: Error[] = [];
  const onUnhandled = (reason: unknown): void => {
    unhandled.push(reason);
  };
  const onUncaught = (error: unknown): void => {
    uncaught.push(error);
  };
  const onWarning = (warning: Error): void => {
    if (warning.name === 'MaxListenersExceededWarning') maxListenerWarnings.push(warning);
  };
  process.on('unhandledRejection', onUnhandled);
  process.on('uncaughtException', onUncaught);
  process.on('warning', onWarning);
  return {
    unhandled,
    uncaught,
    maxListenerWarnings,
    expectClean() {
      expect(unhandled, 'I3: unhandledRejection').toEqual([]);
      expect(uncaught, 'I3: uncaughtException').toEqual([]);
      expect(maxListenerWarnings.map((w) => w.message), 'I3: MaxListenersExceededWarning').toEqual([]);
    },
    dispose() {
      process.off('unhandledRejection', onUnhandled);
      process.off('uncaughtException', onUncaught);
      process.off('warning', onWarning);
    },
  };
}

/** One event and the virtual time (ms since the run was created) the consumer got it. */
export interface Timed {
  at: number;
  event: ToolEvent;
}

/** A run driven to its end in virtual time. */
export interface Driven {
  events: ToolEvent[];
  timed: Timed[];
  batch: ToolBatch;
  /** Virtual ms at which the generator returned (I2). */
  settledAt: number;
  run: AsyncGenerator<ToolEvent, ToolBatch, undefined>;
}

export interface DriveOptions {
  /** Virtual ms since the run was created; defaults to `Date.now()` now. */
  t0?: number;
  /** I2: the run must settle within this many virtual ms. @default 10_000 */
  limitMs?: number;
  /** Called for every event as it arrives; may await (a slow consumer, case C21 B). */
  onEvent?: (event: ToolEvent, at: number) => void | Promise<void>;
}

/**
 * Consumes `run` while advancing fake time in 5 ms steps, until it returns. Fails (I2) if
 * it has not returned `limitMs` after `t0`. Each event is stamped with the virtual time the
 * consumer received it; fake timers fire at their exact time, so stamps are exact.
 */
export async function drive(run: AsyncGenerator<ToolEvent, ToolBatch, undefined>, options: DriveOptions = {}): Promise<Driven> {
  const t0 = options.t0 ?? Date.now();
  const now = clockFrom(t0);
  const limit = options.limitMs ?? 10_000;
  const timed: Timed[] = [];
  let outcome: { batch: ToolBatch; settledAt: number } | { error: unknown } | undefined;
  void (async () => {
    try {
      for (;;) {
        const step = await run.next();
        if (step.done === true) {
          outcome = { batch: step.value, settledAt: now() };
          return;
        }
        const at = now();
        timed.push({ at, event: step.value });
        await options.onEvent?.(step.value, at);
      }
    } catch (error) {
      outcome = { error };
    }
  })();
  await vi.advanceTimersByTimeAsync(0);
  while (outcome === undefined && now() <= limit) await vi.advanceTimersByTimeAsync(5);
  if (outcome === undefined) throw new Error(`I2: the run did not settle within ${limit} virtual ms (${timed.length} events so far)`);
  if ('error' in outcome) throw outcome.error;
  return { events: timed.map((t) => t.event), timed, batch: outcome.batch, settledAt: outcome.settledAt, run };
}

/**
 * I1 and I4 (plus O2, O6 through {@link expectRunInvariants}): one result per call, in call
 * order, with the call's own id and nothing extra; per call start → update* → end → result.
 */
export function expectInvariants(input: readonly ToolCall[], driven: Driven): void {
  expectRunInvariants(input, driven.events, driven.batch);
  const ids = new Set(input.map((c) => c.id));
  for (const r of ofType(driven.events, 'tool_result')) expect(ids.has(r.message.toolCallId)).toBe(true);
  expect(ofType(driven.events, 'tool_execution_start')).toHaveLength(input.length);
  expect(ofType(driven.events, 'tool_execution_end')).toHaveLength(input.length);
}

/**
 * I5: after the run settled, lets `ms` more virtual ms pass (tools that ignored their
 * signal finish meanwhile) and asserts the generator yields nothing more and `probe` (e.g.
 * how many tool bodies started, how many side effects happened) is unchanged.
 */
export async function expectQuiescent(driven: Driven, probe: () => unknown, options: { ms?: number; noTimersLeft?: boolean } = {}): Promise<void> {
  const before = JSON.stringify(probe());
  await vi.advanceTimersByTimeAsync(options.ms ?? 5_000);
  expect(await driven.run.next(), 'I5: nothing after the generator returned').toEqual({ done: true, value: undefined });
  expect(JSON.stringify(probe()), 'I5: no tool body starts and nothing happens after the run settled').toBe(before);
  if (options.noTimersLeft !== false) expect(vi.getTimerCount(), `no timer left behind; pending: ${pendingTimers()}`).toBe(0);
}

/**
 * The fake clock's pending timers, each as its delay and the first line of its callback, for
 * the failure message of "no timer left behind" (so a leaked timer names its code). The
 * clock is the one `vi.useFakeTimers()` installed: @sinonjs/fake-timers hangs it on the
 * faked `setTimeout` as `.clock`.
 */
function pendingTimers(): string {
  const clock = (globalThis.setTimeout as unknown as { clock?: { timers?: Record<string, { delay?: number; func: unknown }> } }).clock;
  const timers = Object.values(clock?.timers ?? {});
  return timers.map((t) => `${t.delay ?? 0} ms: ${String(t.func).split('\n')[0]?.slice(0, 120)}`).join(' | ') || 'none';
}

/** A6: no listener left on the caller's signal. */
export function expectNoListeners(signal: AbortSignal): void {
  expect(getEventListeners(signal, 'abort')).toHaveLength(0);
}

/** The virtual time at which the consumer received the first event matching `test`. */
export function timeOf(driven: Driven, test: (event: ToolEvent) => boolean): number {
  const found = driven.timed.find((t) => test(t.event));
  if (found === undefined) throw new Error('no such event');
  return found.at;
}

/** The end event of call `id`. */
export function endOf(driven: Driven, id: string): Extract<ToolEvent, { type: 'tool_execution_end' }> {
  const end = ofType(driven.events, 'tool_execution_end').find((e) => e.toolCallId === id);
  if (end === undefined) throw new Error(`no end event for ${id}`);
  return end;
}
