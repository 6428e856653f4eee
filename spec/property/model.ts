/**
 * The model behind the property tests of `runTools`: random batches over random tool
 * behaviours, hooks, options, aborts and consumers, run in virtual time, and the checks
 * every run must pass. Shared by `run-tools.property.spec.ts` (a few thousand cases in
 * `npm test`) and `bench/soak.ts` (100,000 cases, replayable with `--seed S --path P`),
 * so a failure of one replays in the other.
 *
 * The checks are the contract of docs/contract.md: O1–O6 (when the consumer read to
 * the end), P1, S1–S3, A1–A6, and the invariants I1–I5 of docs/contract.md.
 * Every outcome is checked against what the model observed the tool do (when it started,
 * settled, saw its signal abort), so the oracle needs no knowledge of microtask order.
 *
 * This file generates scenarios, runs one in virtual time and records what happened into
 * an `Observed` record; the checkers of each contract group read it: `checks/ordering.ts`
 * (O1–O6), `checks/stages.ts` (P1–P5 and each call's outcome, A1–A4), `checks/scheduling.ts`
 * (P1, S2, S3), `checks/cancellation.ts` (A5, A6). What is left here checks the run as a
 * whole (I1–I5, A6's listeners and timers).
 *
 * Time is virtual: {@link VirtualClock} replaces the global `setTimeout`/`clearTimeout`
 * (all toolrun uses) for the duration of one case and fires timers in order, draining
 * every microtask between two timers as Node's event loop does. vitest's `vi` fake timers
 * cannot run outside vitest, and the soak must run the very same code.
 *
 * @module
 */
import { getEventListeners } from 'node:events';
import { checkConsumerExit, checkExit } from './checks/cancellation.ts';
import type { Observed } from './checks/observed.ts';
import { checkOrdering } from './checks/ordering.ts';
import { checkScheduling } from './checks/scheduling.ts';
import { checkStages } from './checks/stages.ts';
import fc from 'fast-check';
import * as v from 'valibot';
import { runTools } from '../../lib/index.ts';
import type {
  AfterToolCallContext,
  AfterToolCallResult,
  BeforeToolCallContext,
  BeforeToolCallResult,
  RunToolsOptions,
  Tool,
  ToolBatch,
  ToolCall,
  ToolEvent,
} from '../../lib/index.ts';

// ---------------------------------------------------------------------------------------
// Virtual time
// ---------------------------------------------------------------------------------------

/** Who made a timer: toolrun (through the global `setTimeout`) or the model's own scripts. */
type Owner = 'runtime' | 'model';

interface Timer {
  id: number;
  at: number;
  /** Creation order: timers due at the same time fire in the order they were made. */
  order: number;
  fn: () => void;
  every: number | undefined;
  owner: Owner;
}

/** A Node-like `Timeout` handle, for code that calls `unref()` on what `setTimeout` returns. */
class FakeTimeout {
  constructor(readonly id: number) {}
  ref(): this {
    return this;
  }
  unref(): this {
    return this;
  }
  hasRef(): boolean {
    return true;
  }
  [Symbol.toPrimitive](): number {
    return this.id;
  }
}

/** The real `setImmediate`, taken before anything can fake it. */
const realSetImmediate = globalThis.setImmediate;

type TimerGlobals = Pick<typeof globalThis, 'setTimeout' | 'clearTimeout' | 'setInterval' | 'clearInterval'>;

/**
 * Virtual time for one case. Invariants: `now` only grows; every pending timer has
 * `at >= now`; a timer fires at most once (intervals are re-armed with a new order).
 */
export class VirtualClock {
  #now = 0;
  #order = 0;
  #nextId = 1;
  readonly #timers = new Map<number, Timer>();
  #saved: TimerGlobals | undefined;
  /** Throws from timer callbacks: in a real process each would be an `uncaughtException`. */
  readonly thrown: unknown[] = [];

  now(): number {
    return this.#now;
  }

  /** Replaces the global timer functions; toolrun's timers become `runtime` timers. */
  install(): void {
    if (this.#saved !== undefined) return;
    const g = globalThis as unknown as Record<keyof TimerGlobals, unknown>;
    this.#saved = { setTimeout: globalThis.setTimeout, clearTimeout: globalThis.clearTimeout, setInterval: globalThis.setInterval, clearInterval: globalThis.clearInterval };
    const make =
      (every: boolean) =>
      (fn: (...args: unknown[]) => void, ms?: number, ...args: unknown[]): FakeTimeout =>
        new FakeTimeout(this.#add(() => fn(...args), ms ?? 0, 'runtime', every));
    const clear = (handle: unknown): void => {
      if (handle !== undefined && handle !== null) this.clearTimeout(Number(handle));
    };
    g.setTimeout = make(false);
    g.setInterval = make(true);
    g.clearTimeout = clear;
    g.clearInterval = clear;
  }

  /** Puts the real timer functions back. */
  uninstall(): void {
    const saved = this.#saved;
    if (saved === undefined) return;
    Object.assign(globalThis, saved);
    this.#saved = undefined;
  }

  /** A `model` timer (the scripts' own waits; never counted as toolrun's). */
  setTimeout(fn: () => void, ms: number): number {
    return this.#add(fn, ms, 'model', false);
  }

  clearTimeout(id: number): void {
    this.#timers.delete(id);
  }

  /** Pending timers, of one owner or all. */
  pending(owner?: Owner): number {
    if (owner === undefined) return this.#timers.size;
    let n = 0;
    for (const t of this.#timers.values()) if (t.owner === owner) n++;
    return n;
  }

  /** One real macrotask turn: every queued microtask and `nextTick` runs. */
  flush(): Promise<void> {
    return new Promise<void>((resolve) => realSetImmediate(resolve));
  }

  /** Fires the earliest timer (then drains microtasks); false when none is pending. */
  async fireNext(): Promise<boolean> {
    let first: Timer | undefined;
    for (const t of this.#timers.values()) {
      if (first === undefined || t.at < first.at || (t.at === first.at && t.order < first.order)) first = t;
    }
    if (first === undefined) return false;
    this.#now = Math.max(this.#now, first.at);
    if (first.every !== undefined) {
      first.at = this.#now + Math.max(1, first.every);
      first.order = this.#order++;
    } else {
      this.#timers.delete(first.id);
    }
    try {
      first.fn();
    } catch (error) {
      this.thrown.push(error);
    }
    await this.flush();
    return true;
  }

  #add(fn: () => void, ms: number, owner: Owner, every: boolean): number {
    const delay = Number.isFinite(ms) && ms > 0 ? Math.floor(ms) : 0;
    const id = this.#nextId++;
    this.#timers.set(id, { id, at: this.#now + delay, order: this.#order++, fn, every: every ? delay : undefined, owner });
    return id;
  }
}

// ---------------------------------------------------------------------------------------
// Scenarios
// ---------------------------------------------------------------------------------------

/** One step of a tool's script. */
export type Step =
  /** `n` awaits of an already settled promise: microtask jitter. */
  | { kind: 'micro'; n: number }
  /** A timer of `ms`; `honour` makes it reject with the signal's reason when the call's signal aborts. */
  | { kind: 'wait'; ms: number; honour: boolean }
  /** A progress value (generator tools only). */
  | { kind: 'yield' };

/** How a tool's script ends. */
export type Ending =
  | { kind: 'return'; value: 'text' | 'json' | 'content' | 'terminate' | 'undefined' | 'long' | PoisonReturn }
  | { kind: 'throw'; value: 'error' | 'string' | 'object' | 'ownAbortError' | PoisonThrow }
  /** Waits for its signal, then throws the reason. */
  | { kind: 'hangHonour' }
  /** Waits for its signal, then returns normally (a success, by the documented decision). */
  | { kind: 'hangHonourReturn' }
  /** Never settles, ignores its signal. */
  | { kind: 'hangIgnore' };

/**
 * Poisoned results (P4): a `content` array holding `null`, a throwing `content`
 * getter, a revoked Proxy, an object whose `toJSON` and `toString` both throw. Only a
 * synchronous `execute` returns them as they are (an async one resolving a revoked Proxy
 * rejects), so the generator gives them to sync tools only.
 */
export type PoisonReturn = 'poisonNullBlock' | 'poisonGetter' | 'poisonRevoked' | 'poisonUnprintable';
/** Poisoned thrown values: a revoked Proxy, an Error whose `name` and `message` getters throw. */
export type PoisonThrow = 'poisonRevoked' | 'poisonGetters';

export const isPoisonReturn = (e: Ending): boolean => e.kind === 'return' && e.value.startsWith('poison');

/** The model's own mistakes in the arguments, and the good shapes. */
export type ArgsShape =
  | 'object'
  | 'json'
  | 'double'
  | 'empty'
  | 'blank'
  | 'absent'
  | 'null'
  | 'invalidJson'
  | 'array'
  | 'number'
  | 'nullText'
  | 'wrongType';

export interface CallSpec {
  id: string;
  /** False: the call names a tool that does not exist (or no tool: `''`). */
  known: boolean;
  emptyName: boolean;
  args: ArgsShape;
  /** `throwing`: a valibot schema whose transform throws on every well-formed input. */
  schema: 'valibot' | 'json' | 'jsonOptional' | 'throwing';
  /** `executionMode: 'sequential'` on the call's tool (contract S3). */
  exclusive: boolean;
  /** The tool's own `timeoutMs`. */
  timeoutMs: number | undefined;
  shape: 'generator' | 'async' | 'sync';
  /** Reads `ctx.signal` at the start and records when it aborts (else the signal is read only if a step honours it). */
  watchSignal: boolean;
  steps: Step[];
  ending: Ending;
}

export type BeforeHook =
  | { kind: 'pass' }
  | { kind: 'passAsync'; micro: number }
  | { kind: 'passLater'; ms: number; honour: boolean }
  | { kind: 'block'; reason: boolean }
  | { kind: 'throwSync'; value: 'error' | 'string' }
  | { kind: 'throwLater'; ms: number }
  | { kind: 'abortRun' }
  /** Returns synchronously an object whose `block` getter throws. */
  | { kind: 'poisonAnswer' };

export type AfterHook =
  | { kind: 'pass' }
  | { kind: 'passLater'; ms: number }
  | { kind: 'override' }
  | { kind: 'markError' }
  | { kind: 'throwSync' }
  | { kind: 'throwLater'; ms: number }
  /** Returns synchronously an object whose `content` getter throws. */
  | { kind: 'poisonAnswer' };

export interface Scenario {
  calls: CallSpec[];
  /** False: every hanging ending became a plain return (most batches have no hung tool). */
  hangs: boolean;
  /** How the calls are handed to `runTools`: an array, a sync iterable, or an async stream (S4). */
  input: 'array' | 'iterable' | 'async';
  /** Gaps in ms before each call of an async stream (cycled). */
  inputGaps: number[];
  mode: 'parallel' | 'sequential' | undefined;
  maxConcurrency: number | undefined;
  timeoutMs: number | undefined;
  abortGraceMs: number | undefined;
  maxResultChars: number | undefined;
  /** Per call (cycled); `undefined`: no `beforeToolCall`. */
  before: BeforeHook[] | undefined;
  after: AfterHook[] | undefined;
  progressListener: boolean;
  abort: {
    pre: boolean;
    atMs: number | undefined;
    atEvent: number | undefined;
    reason: 'error' | 'string' | 'default';
  };
  consumer: {
    /** Stop after receiving this many events (0-based index of the last one read); -1: before the first next(). */
    stopAt: number | undefined;
    how: 'break' | 'throw' | 'return' | 'throwInto';
    /** What the consumer does per event (cycled): 0 nothing, -1 a few microtasks, >0 a timer. */
    delays: number[];
  };
}

const GRACE_DEFAULT = 100;

/** An arbitrary that picks from weighted options. */
function weighted<T>(...options: [number, fc.Arbitrary<T>][]): fc.Arbitrary<T> {
  return fc.oneof(...options.map(([weight, arbitrary]) => ({ weight, arbitrary })));
}

const stepArb: fc.Arbitrary<Step> = weighted<Step>(
  [3, fc.record({ kind: fc.constant('micro' as const), n: fc.integer({ min: 1, max: 4 }) })],
  [3, fc.record({ kind: fc.constant('wait' as const), ms: fc.integer({ min: 0, max: 60 }), honour: fc.boolean() })],
  [4, fc.constant({ kind: 'yield' as const })],
);

const endingArb: fc.Arbitrary<Ending> = weighted<Ending>(
  [6, fc.record({ kind: fc.constant('return' as const), value: fc.constantFrom('text', 'json', 'content', 'terminate', 'undefined', 'long') })],
  [3, fc.record({ kind: fc.constant('throw' as const), value: fc.constantFrom('error', 'string', 'object', 'ownAbortError') })],
  [1, fc.record({ kind: fc.constant('return' as const), value: fc.constantFrom<PoisonReturn>('poisonNullBlock', 'poisonGetter', 'poisonRevoked', 'poisonUnprintable') })],
  [1, fc.record({ kind: fc.constant('throw' as const), value: fc.constantFrom<PoisonThrow>('poisonRevoked', 'poisonGetters') })],
  [1, fc.constant({ kind: 'hangHonour' as const })],
  [1, fc.constant({ kind: 'hangHonourReturn' as const })],
  [1, fc.constant({ kind: 'hangIgnore' as const })],
);

const argsArb: fc.Arbitrary<ArgsShape> = weighted<ArgsShape>(
  [24, fc.constantFrom<ArgsShape>('object', 'json', 'double')],
  [2, fc.constantFrom<ArgsShape>('empty', 'blank', 'absent', 'null')],
  [2, fc.constantFrom<ArgsShape>('invalidJson', 'array', 'number', 'nullText', 'wrongType')],
);

function callArb(): fc.Arbitrary<Omit<CallSpec, 'id'>> {
  return fc
    .record({
      known: weighted([30, fc.constant(true)], [1, fc.constant(false)]),
      emptyName: fc.boolean(),
      args: argsArb,
      schema: weighted<CallSpec['schema']>([6, fc.constantFrom<CallSpec['schema']>('valibot', 'json', 'jsonOptional')], [1, fc.constant('throwing')]),
      exclusive: weighted([8, fc.constant(false)], [1, fc.constant(true)]),
      timeoutMs: weighted<number | undefined>([4, fc.constant(undefined)], [1, fc.integer({ min: 1, max: 150 })]),
      shape: weighted<CallSpec['shape']>([5, fc.constant('generator')], [3, fc.constant('async')], [1, fc.constant('sync')]),
      watchSignal: fc.boolean(),
      steps: fc.array(stepArb, { maxLength: 24 }),
      ending: endingArb,
    })
    .map((c) => {
      // A sync execute has no steps and cannot hang; an async one has no yields.
      if (c.shape === 'sync') {
        const ending: Ending = c.ending.kind === 'return' || c.ending.kind === 'throw' ? c.ending : { kind: 'throw', value: 'error' };
        return { ...c, steps: [], ending };
      }
      // A poisoned result reaches toolrun as it is only from a sync execute.
      if (isPoisonReturn(c.ending)) c = { ...c, ending: { kind: 'throw', value: 'poisonRevoked' } };
      if (c.shape === 'async') return { ...c, steps: c.steps.filter((s) => s.kind !== 'yield') };
      // At most 20 progress values per tool.
      let yields = 0;
      return { ...c, steps: c.steps.filter((s) => s.kind !== 'yield' || ++yields <= 20) };
    });
}

const beforeArb: fc.Arbitrary<BeforeHook> = weighted<BeforeHook>(
  [6, fc.constant({ kind: 'pass' as const })],
  [3, fc.record({ kind: fc.constant('passAsync' as const), micro: fc.integer({ min: 0, max: 3 }) })],
  [3, fc.record({ kind: fc.constant('passLater' as const), ms: fc.integer({ min: 0, max: 40 }), honour: fc.boolean() })],
  [1, fc.record({ kind: fc.constant('block' as const), reason: fc.boolean() })],
  [1, fc.record({ kind: fc.constant('throwSync' as const), value: fc.constantFrom<'error' | 'string'>('error', 'string') })],
  [1, fc.record({ kind: fc.constant('throwLater' as const), ms: fc.integer({ min: 0, max: 30 }) })],
  [1, fc.constant({ kind: 'abortRun' as const })],
  [1, fc.constant({ kind: 'poisonAnswer' as const })],
);

const afterArb: fc.Arbitrary<AfterHook> = weighted<AfterHook>(
  [6, fc.constant({ kind: 'pass' as const })],
  [3, fc.record({ kind: fc.constant('passLater' as const), ms: fc.integer({ min: 0, max: 40 }) })],
  [1, fc.constant({ kind: 'override' as const })],
  [1, fc.constant({ kind: 'markError' as const })],
  [1, fc.constant({ kind: 'throwSync' as const })],
  [1, fc.record({ kind: fc.constant('throwLater' as const), ms: fc.integer({ min: 0, max: 30 }) })],
  [1, fc.constant({ kind: 'poisonAnswer' as const })],
);

/** Unique ids (`c0`, `c1`…) most of the time; otherwise empty and repeated ids (pairing is by position). */
function idsArb(n: number): fc.Arbitrary<string[]> {
  return weighted(
    [5, fc.constant(Array.from({ length: n }, (_, i) => `c${i}`))],
    [1, fc.array(fc.constantFrom('', 'dup', 'x'), { minLength: n, maxLength: n })],
  );
}

/**
 * What a property focuses on: `reads-all` — the consumer reads every event (O1–O6 hold in
 * full); `leaves-early` — it stops at a random event (A5); `any` — either.
 */
export type Focus = 'any' | 'reads-all' | 'leaves-early';

const stopAtArb: Record<Focus, fc.Arbitrary<number | undefined>> = {
  any: weighted<number | undefined>([3, fc.constant(undefined)], [1, fc.integer({ min: 0, max: 40 })]),
  'reads-all': fc.constant(undefined),
  'leaves-early': weighted<number>([10, fc.integer({ min: 0, max: 30 })], [1, fc.constant(-1)]),
};

/** Every random scenario of the property (1–40 calls). */
export function scenarioArbitrary(focus: Focus = 'any'): fc.Arbitrary<Scenario> {
  return fc
    .array(callArb(), { minLength: 1, maxLength: 40 })
    .chain((calls) =>
      fc.record({
        calls: idsArb(calls.length).map((ids) => calls.map((c, i) => ({ id: ids[i]!, ...c }))),
        hangs: weighted([2, fc.constant(false)], [1, fc.constant(true)]),
        input: weighted<Scenario['input']>([6, fc.constant('array')], [1, fc.constant('iterable')], [2, fc.constant('async')]),
        inputGaps: fc.array(fc.integer({ min: 0, max: 20 }), { minLength: 1, maxLength: 4 }),
        mode: fc.constantFrom<Scenario['mode']>(undefined, 'parallel', 'sequential'),
        maxConcurrency: fc.constantFrom<number | undefined>(undefined, 1, 2, 3, 5, 16, Infinity),
        timeoutMs: weighted<number | undefined>([3, fc.constant(undefined)], [1, fc.integer({ min: 0, max: 200 })]),
        abortGraceMs: weighted<number | undefined>([2, fc.constant(undefined)], [1, fc.constant(0)], [2, fc.integer({ min: 1, max: 150 })]),
        maxResultChars: weighted<number | undefined>([3, fc.constant(undefined)], [1, fc.integer({ min: 0, max: 60 })], [1, fc.integer({ min: 61, max: 400 })]),
        before: weighted<BeforeHook[] | undefined>([1, fc.constant(undefined)], [1, fc.array(beforeArb, { minLength: 1, maxLength: 8 })]),
        after: weighted<AfterHook[] | undefined>([1, fc.constant(undefined)], [1, fc.array(afterArb, { minLength: 1, maxLength: 8 })]),
        progressListener: fc.boolean(),
        abort: fc.record({
          pre: weighted([15, fc.constant(false)], [1, fc.constant(true)]),
          atMs: weighted<number | undefined>([3, fc.constant(undefined)], [1, fc.integer({ min: 0, max: 300 })]),
          atEvent: weighted<number | undefined>([6, fc.constant(undefined)], [1, fc.integer({ min: 0, max: 60 })]),
          reason: fc.constantFrom<Scenario['abort']['reason']>('error', 'string', 'default'),
        }),
        consumer: fc.record({
          stopAt: stopAtArb[focus],
          how: fc.constantFrom<Scenario['consumer']['how']>('break', 'throw', 'return', 'throwInto'),
          delays: weighted<number[]>(
            [2, fc.constant([0])],
            [1, fc.array(fc.constantFrom(0, 0, -1, 1, 5, 20), { minLength: 1, maxLength: 5 })],
          ),
        }),
      }),
    )
    .map(ensureTermination);
}

/** The effective time limit of call `c`, if any. */
export function timeoutOf(sc: Scenario, c: CallSpec): number | undefined {
  return c.timeoutMs ?? sc.timeoutMs;
}

/**
 * A tool that hangs is only ended by its timeout or an abort; a scenario where neither can
 * come would legitimately never finish. Such scenarios get an abort at a fixed time.
 */
function ensureTermination(generated: Scenario): Scenario {
  const isHang = (e: Ending): boolean => e.kind === 'hangHonour' || e.kind === 'hangHonourReturn' || e.kind === 'hangIgnore';
  const sc = generated.hangs
    ? generated
    : { ...generated, calls: generated.calls.map((c) => (isHang(c.ending) ? { ...c, ending: { kind: 'return' as const, value: 'text' as const } } : c)) };
  const hangs = sc.calls.some((c) => isHang(c.ending) && timeoutOf(sc, c) === undefined);
  if (!hangs || sc.abort.pre || sc.abort.atMs !== undefined) return sc;
  return { ...sc, abort: { ...sc.abort, atMs: 400 } };
}

// ---------------------------------------------------------------------------------------
// Observation
// ---------------------------------------------------------------------------------------

/** A moment: the global order of everything the model saw, and the virtual time. */
export interface Mark {
  seq: number;
  at: number;
}

/** What the model saw of one call. */
export interface CallLog {
  beforeCalls: (Mark & { args: unknown; sameCall: boolean; index: number })[];
  beforeSettled: Mark | undefined;
  afterCalls: Mark[];
  afterSettled: Mark | undefined;
  bodyStart: (Mark & { abortedAtStart: boolean; inProgress: boolean | undefined }) | undefined;
  /** The body finished by itself: returned (value) or threw. */
  bodySettled: (Mark & { kind: 'return' | 'throw' }) | undefined;
  yields: (Mark & { value: number })[];
  finallyRan: Mark | undefined;
  returnCalled: Mark | undefined;
  signal: AbortSignal | undefined;
  signalAborted: (Mark & { reason: unknown }) | undefined;
}

/** One event as the consumer received it. */
export interface Received extends Mark {
  event: ToolEvent;
}

export class ModelViolation extends Error {
  override name = 'ModelViolation';
}

export function check(condition: boolean, message: string | (() => string)): asserts condition {
  if (!condition) throw new ModelViolation(typeof message === 'string' ? message : message());
}

/** Counts across runs: which outcomes and paths the generated cases reached (coverage). */
export class Coverage {
  readonly counts = new Map<string, number>();
  add(key: string): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }
  get(key: string): number {
    return this.counts.get(key) ?? 0;
  }
  toString(): string {
    return [...this.counts.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, n]) => `${k}=${n}`)
      .join(' ');
  }
}

// ---------------------------------------------------------------------------------------
// Running one scenario
// ---------------------------------------------------------------------------------------

const MAX_VIRTUAL_MS = 1_000_000;
const MAX_TIMERS = 200_000;

/** What the tool returns, and the text that result must have. */
function returnValue(i: number, value: Extract<Ending, { kind: 'return' }>['value']): unknown {
  switch (value) {
    case 'text':
      return `ret-${i}`;
    case 'json':
      return { ret: i, list: [i, 'x'] };
    case 'content':
      return { content: [{ type: 'text', text: `content-${i}` }] };
    case 'terminate':
      return { content: [{ type: 'text', text: `stop-${i}` }], terminate: true };
    case 'undefined':
      return undefined;
    case 'long':
      return `head-${i}-${'x'.repeat(150)}-tail-${i}`;
    case 'poisonNullBlock':
      return { content: [null] };
    case 'poisonGetter':
      return {
        get content(): never {
          throw new Error(`getter-${i}`);
        },
      };
    case 'poisonRevoked':
      return revokedProxy();
    case 'poisonUnprintable':
      return unprintable(i);
  }
}

function revokedProxy(): object {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
}

function unprintable(i: number): object {
  return {
    toJSON(): never {
      throw new Error(`toJSON-${i}`);
    },
    toString(): never {
      throw new Error(`toString-${i}`);
    },
  };
}

export function expectedReturnText(i: number, value: Extract<Ending, { kind: 'return' }>['value']): string {
  if (value.startsWith('poison')) return `Tool "t${i}" returned a result toolrun cannot use: `;
  const out = returnValue(i, value);
  if (typeof out === 'string') return out;
  if (out === undefined) return '';
  if (typeof out === 'object' && out !== null && 'content' in out) return (out as { content: { text: string }[] }).content[0]!.text;
  return JSON.stringify(out);
}

function thrownValue(i: number, value: Extract<Ending, { kind: 'throw' }>['value']): unknown {
  switch (value) {
    case 'error':
      return new Error(`boom-${i}`);
    case 'string':
      return `str-${i}`;
    case 'object':
      return { code: `obj-${i}` };
    case 'ownAbortError':
      return new DOMException(`own-${i}`, 'AbortError');
    case 'poisonRevoked':
      return revokedProxy();
    case 'poisonGetters': {
      const error = new Error(`hidden-${i}`);
      for (const key of ['name', 'message']) {
        Object.defineProperty(error, key, {
          get(): never {
            throw new Error(`${key}-getter-${i}`);
          },
        });
      }
      return error;
    }
  }
}

/** A marker the error text of a thrown value contains. */
export function thrownMarker(i: number, value: Extract<Ending, { kind: 'throw' }>['value']): string {
  return {
    error: `boom-${i}`,
    string: `str-${i}`,
    object: `obj-${i}`,
    ownAbortError: `own-${i}`,
    poisonRevoked: 'a value that could not be read',
    poisonGetters: 'an Error whose name or message could not be read',
  }[value];
}

/** The raw `arguments` call `i` carries. */
function rawArguments(i: number, shape: ArgsShape): unknown {
  switch (shape) {
    case 'object':
      return { n: i };
    case 'json':
      return JSON.stringify({ n: i });
    case 'double':
      return JSON.stringify(JSON.stringify({ n: i }));
    case 'empty':
      return '';
    case 'blank':
      return '  \n ';
    case 'absent':
      return undefined;
    case 'null':
      return null;
    case 'invalidJson':
      return `{"n":${i},`;
    case 'array':
      return `[${i}]`;
    case 'number':
      return String(i);
    case 'nullText':
      return 'null';
    case 'wrongType':
      return `{"n":"${i}"}`;
  }
}

/** What prepare must conclude about a call before any hook (P5). */
type Verdict = { ok: true; args: Record<string, unknown> } | { ok: false; pattern: RegExp };

export function verdictOf(i: number, c: CallSpec): Verdict {
  if (!c.known) return { ok: false, pattern: c.emptyName ? /^The tool call has no tool name\. (Available tools: |No tools are available)/ : /^No tool named "nope\d+"\. (Available tools: |No tools are available)/ };
  switch (c.args) {
    case 'object':
    case 'json':
    case 'double':
      if (c.schema === 'throwing') return { ok: false, pattern: /^Tool "t\d+" could not validate its arguments: its input schema threw SyntaxError: schema-throws-/ };
      return { ok: true, args: { n: i } };
    case 'empty':
    case 'blank':
    case 'absent':
    case 'null':
      return c.schema === 'jsonOptional' ? { ok: true, args: {} } : { ok: false, pattern: /^Invalid arguments for tool "t\d+":\n- n: / };
    case 'invalidJson':
      return { ok: false, pattern: /^The arguments for tool "t\d+" are not valid JSON \(.+\)\. Received: / };
    case 'array':
    case 'number':
    case 'nullText':
      return { ok: false, pattern: /^The arguments for tool "t\d+" must be a JSON object, got / };
    case 'wrongType':
      return { ok: false, pattern: /^Invalid arguments for tool "t\d+":\n- n: / };
  }
}

export function cycled<T>(list: readonly T[] | undefined, i: number): T | undefined {
  return list === undefined || list.length === 0 ? undefined : list[i % list.length];
}

/** Runs one scenario in virtual time and checks everything; throws a {@link ModelViolation} on the first broken rule. */
export async function runScenario(sc: Scenario, coverage?: Coverage): Promise<void> {
  const clock = new VirtualClock();
  let seq = 0;
  const mark = (): Mark => ({ seq: ++seq, at: clock.now() });
  const n = sc.calls.length;
  const logs: CallLog[] = sc.calls.map(() => ({
    beforeCalls: [],
    beforeSettled: undefined,
    afterCalls: [],
    afterSettled: undefined,
    bodyStart: undefined,
    bodySettled: undefined,
    yields: [],
    finallyRan: undefined,
    returnCalled: undefined,
    signal: undefined,
    signalAborted: undefined,
  }));
  /** Broken rules seen inside callbacks (a throw there would become a tool error). */
  const violations: string[] = [];
  const note = (condition: boolean, message: () => string): void => {
    if (!condition) violations.push(message());
  };
  const controller = new AbortController();
  const abortReason = sc.abort.reason === 'error' ? new Error('user abort') : sc.abort.reason === 'string' ? 'user abort (string)' : undefined;
  let runAbort: Mark | undefined;
  const abortRun = (): void => {
    if (controller.signal.aborted) return;
    runAbort = mark();
    if (abortReason === undefined) controller.abort();
    else controller.abort(abortReason);
  };
  /** The live Set `onInProgressChange` hands out (the same object each time). */
  let inProgress: ReadonlySet<string> | undefined;
  const unhandled: unknown[] = [];
  const warnings: Error[] = [];
  const onUnhandled = (reason: unknown): void => {
    unhandled.push(reason);
  };
  const onWarning = (warning: Error): void => {
    if (warning.name === 'MaxListenersExceededWarning') warnings.push(warning);
  };
  process.on('unhandledRejection', onUnhandled);
  process.on('warning', onWarning);
  clock.install();
  try {
    await exercise();
  } finally {
    clock.uninstall();
    process.off('unhandledRejection', onUnhandled);
    process.off('warning', onWarning);
  }

  async function exercise(): Promise<void> {
    const grace = sc.abortGraceMs ?? GRACE_DEFAULT;
    const ids = sc.calls.map((c) => c.id);
    const uniqueIds = new Set(ids).size === ids.length;

    // --- the tools: one per call, named t<i>; unknown calls name nope<i> or nothing.
    const calls: ToolCall[] = sc.calls.map((c, i) => {
      const call: ToolCall = { id: c.id, name: c.known ? `t${i}` : c.emptyName ? '' : `nope${i}` };
      if (c.args !== 'absent') call.arguments = rawArguments(i, c.args);
      return call;
    });
    const tools: Tool[] = [];
    sc.calls.forEach((c, i) => {
      if (c.known) tools.push(makeTool(i, c));
    });

    // --- hooks
    const inProgressViolations: string[] = [];
    /** Snapshots of the executing set, each time it changed. */
    const progressLog: (Mark & { ids: string[] })[] = [];
    const options: RunToolsOptions = { tools, signal: controller.signal };
    if (sc.mode !== undefined) options.mode = sc.mode;
    if (sc.maxConcurrency !== undefined) options.maxConcurrency = sc.maxConcurrency;
    if (sc.timeoutMs !== undefined) options.timeoutMs = sc.timeoutMs;
    if (sc.abortGraceMs !== undefined) options.abortGraceMs = sc.abortGraceMs;
    if (sc.maxResultChars !== undefined) options.maxResultChars = sc.maxResultChars;
    const concurrency = sc.mode === 'sequential' ? 1 : (sc.maxConcurrency ?? 10);
    if (sc.progressListener) {
      options.onInProgressChange = (set) => {
        if (inProgress !== undefined && inProgress !== set) inProgressViolations.push('onInProgressChange got a different Set object');
        inProgress = set;
        if (!uniqueIds) return;
        if (set.size > concurrency) inProgressViolations.push(`S1: ${set.size} calls executing at once, maxConcurrency ${concurrency}: ${[...set].join(',')}`);
        for (const id of set) {
          const i = ids.indexOf(id);
          if (i < 0) inProgressViolations.push(`onInProgressChange: unknown id ${id}`);
          else if (sc.calls[i]!.exclusive && set.size > 1) inProgressViolations.push(`S3: exclusive call ${i} executing together with ${[...set].join(',')}`);
        }
        progressLog.push({ ...mark(), ids: [...set] });
      };
    }
    if (sc.before !== undefined) {
      const specs = sc.before;
      options.beforeToolCall = (ctx) => beforeHook(ctx, cycled(specs, ctx.index)!);
    }
    if (sc.after !== undefined) {
      const specs = sc.after;
      options.afterToolCall = (ctx) => afterHook(ctx, cycled(specs, ctx.index)!);
    }

    // --- the input
    let delivered = 0;
    /** When each call of a stream was handed to the run (S4). */
    const deliveries: Mark[] = [];
    let input: Iterable<ToolCall> | AsyncIterable<ToolCall>;
    if (sc.input === 'array') {
      input = calls;
      delivered = n;
    } else if (sc.input === 'iterable') {
      input = (function* () {
        for (const call of calls) {
          delivered++;
          yield call;
        }
      })();
    } else {
      input = (async function* () {
        for (const [i, call] of calls.entries()) {
          const gap = cycled(sc.inputGaps, i) ?? 0;
          if (gap > 0) await new Promise<void>((resolve) => clock.setTimeout(resolve, gap));
          delivered++;
          deliveries.push(mark());
          yield call;
        }
      })();
    }

    if (sc.abort.pre) abortRun();
    if (sc.abort.atMs !== undefined) clock.setTimeout(abortRun, sc.abort.atMs);

    let run: AsyncGenerator<ToolEvent, ToolBatch, undefined>;
    try {
      run = runTools(input, options);
    } catch (error) {
      throw new ModelViolation(`runTools threw synchronously on valid input: ${String(error)}`);
    }

    // --- the consumer
    const received: Received[] = [];
    let batch: ToolBatch | undefined;
    let consumerError: unknown;
    let stopped: Mark | undefined;
    let stopDone = false;
    /** When the consumer's exit (break, return(), throw()) completed. */
    let stopDoneMark: Mark | undefined;
    let finished: Mark | undefined;
    const stopError = new Error('consumer stops');
    let maxCallerListeners = 0;
    const consumerWait = async (k: number): Promise<void> => {
      const d = cycled(sc.consumer.delays, k) ?? 0;
      if (d < 0) for (let j = 0; j < 3; j++) await Promise.resolve();
      else if (d > 0) await new Promise<void>((resolve) => clock.setTimeout(resolve, d));
    };
    const onEvent = (event: ToolEvent): void => {
      received.push({ ...mark(), event });
      maxCallerListeners = Math.max(maxCallerListeners, getEventListeners(controller.signal, 'abort').length);
      if (sc.abort.atEvent === received.length - 1) abortRun();
    };
    const consumer = (async () => {
      try {
        const how = sc.consumer.how;
        const stopAt = sc.consumer.stopAt;
        if (stopAt === -1) {
          // The consumer leaves before its first next() (A6).
          stopped = mark();
          if (how === 'break' || how === 'return') {
            const r = await run.return(undefined as never);
            check(r.done === true, 'return() before the first next() did not finish the generator');
          } else {
            let rethrown: unknown;
            try {
              await run.throw(stopError);
            } catch (error) {
              rethrown = error;
            }
            check(rethrown === stopError, () => `throw() before the first next() did not rethrow the consumer's error: ${String(rethrown)}`);
          }
          stopDoneMark = mark();
          stopDone = true;
          return;
        }
        if (stopAt !== undefined && (how === 'break' || how === 'throw')) {
          try {
            for await (const event of run) {
              onEvent(event);
              if (stopAt === received.length - 1) {
                stopped = mark();
                if (how === 'throw') throw stopError;
                break;
              }
              await consumerWait(received.length - 1);
            }
          } catch (error) {
            if (error !== stopError) throw error;
          }
          // (A for-await loop drops the return value: reading to the end uses next() below.)
          if (stopped !== undefined) {
            stopDoneMark = mark();
            stopDone = true;
          }
          else finished = mark();
          return;
        }
        for (;;) {
          const step = await run.next();
          if (step.done === true) {
            batch = step.value;
            finished = mark();
            return;
          }
          onEvent(step.value);
          if (stopAt === received.length - 1) {
            stopped = mark();
            if (how === 'return') {
              const r = await run.return(undefined as never);
              check(r.done === true, 'return() did not finish the generator');
            } else {
              let rethrown: unknown;
              try {
                await run.throw(stopError);
              } catch (error) {
                rethrown = error;
              }
              check(rethrown === stopError, () => `throw() into the run did not rethrow the consumer's error: ${String(rethrown)}`);
            }
            stopDoneMark = mark();
            stopDone = true;
            return;
          }
          await consumerWait(received.length - 1);
        }
      } catch (error) {
        consumerError = error;
      }
    })();
    let consumerDone = false;
    void consumer.then(() => {
      consumerDone = true;
    });

    // --- drive virtual time until the consumer is done (I2)
    let fired = 0;
    await clock.flush();
    while (!consumerDone) {
      check(clock.now() <= MAX_VIRTUAL_MS && fired <= MAX_TIMERS, () => `I2: the run had not settled after ${clock.now()} virtual ms (${fired} timers)`);
      const any = await clock.fireNext();
      fired++;
      if (!any) {
        await clock.flush();
        check(consumerDone, () => `I2: the run hung: nothing pending in virtual time and the generator neither yielded nor returned (${received.length} events so far, last: ${JSON.stringify(received.at(-1)?.event.type)})`);
      }
    }
    if (consumerError !== undefined) {
      throw consumerError instanceof ModelViolation ? consumerError : new ModelViolation(`P4: the run threw to the consumer: ${String(consumerError)}${consumerError instanceof Error ? `\n${consumerError.stack}` : ''}`);
    }

    const endOfRun = mark();
    const consumerStopped = stopped !== undefined;
    check(consumerStopped ? stopDone : finished !== undefined, 'consumer neither finished nor stopped');

    // Nothing after the generator returned (O4), whatever ended it.
    const after = await run.next();
    check(after.done === true && after.value === undefined, () => `O4: the generator yielded after it returned: ${JSON.stringify(after)}`);

    const observed: Observed = { sc, n, calls, logs, received, batch, stopped, stopDoneMark, consumerStopped, runAbort, grace, maxCallerListeners, deliveries, delivered, uniqueIds, progressLog, signalReason: controller.signal.reason, coverage };
    checkExit(observed);
    // A6: no listener left on the caller's signal, at most one while the run ran.
    check(getEventListeners(controller.signal, 'abort').length === 0, 'A6: a listener was left on the caller’s signal');
    check(maxCallerListeners <= 1, () => `A6: ${maxCallerListeners} listeners on the caller’s signal during the run`);
    // No toolrun timer survives the run (A6: nothing keeps the process alive).
    await clock.flush();
    check(clock.pending('runtime') === 0, () => `A6: ${clock.pending('runtime')} toolrun timer(s) still pending after the run ended`);

    const seen = checkOrdering(observed);
    check(inProgressViolations.length === 0, () => inProgressViolations.join('\n'));
    check(violations.length === 0, () => violations.join('\n'));
    if (sc.progressListener && !consumerStopped && inProgress !== undefined) check(inProgress.size === 0, 'onInProgressChange: calls still in progress after the run');

    checkConsumerExit(observed, seen);
    checkStages(observed, seen);
    checkScheduling(observed, seen);

    // --- I5 and A5: let everything settle; nothing more happens to the run.
    const bodiesBefore = logs.filter((l) => l.bodyStart !== undefined).length;
    while (clock.pending() > 0) {
      check(fired++ <= MAX_TIMERS, 'timers never stop');
      await clock.fireNext();
    }
    await clock.flush();
    check(logs.filter((l) => l.bodyStart !== undefined).length === bodiesBefore, 'I5: a tool body started after the run settled');
    check(logs.every((l) => (l.bodyStart?.seq ?? 0) < endOfRun.seq && l.beforeCalls.every((b) => b.seq < endOfRun.seq) && l.afterCalls.every((a) => a.seq < endOfRun.seq)), 'I5: a hook or body ran after the run settled');
    for (const [i, log] of logs.entries()) {
      const c = sc.calls[i]!;
      if (c.shape !== 'generator' || log.bodyStart === undefined) continue;
      const foreverHung = c.ending.kind === 'hangIgnore' && log.bodySettled === undefined;
      if (foreverHung) check(log.returnCalled !== undefined || log.finallyRan !== undefined, () => `A3/A5: the hung generator of call ${i} never got return()`);
      else check(log.finallyRan !== undefined, () => `A5: the generator of call ${i} never finished nor ran its finally`);
    }
    check(clock.thrown.length === 0, () => `I3: a timer callback threw: ${String(clock.thrown[0])}`);
    check(unhandled.length === 0, () => `I3: unhandled rejection: ${String(unhandled[0])}${unhandled[0] instanceof Error ? `\n${unhandled[0].stack}` : ''}`);
    check(warnings.length === 0, () => `I3/A6: ${warnings[0]!.message}`);
    coverage?.add(consumerStopped ? `consumer:${sc.consumer.how}` : 'consumer:read-all');
    if (runAbort !== undefined) coverage?.add('run-aborted');

  }


  function makeTool(i: number, c: CallSpec): Tool {
    const log = logs[i]!;
    const input = SCHEMAS[c.schema];
    let yieldCount = 0;
    const wait = (ms: number, honour: boolean, signal: () => AbortSignal): Promise<void> =>
      new Promise<void>((resolve, reject) => {
        if (!honour) {
          clock.setTimeout(resolve, ms);
          return;
        }
        const s = signal();
        if (s.aborted) {
          reject(s.reason);
          return;
        }
        const onAbort = (): void => {
          clock.clearTimeout(timer);
          reject(s.reason);
        };
        const timer = clock.setTimeout(() => {
          s.removeEventListener('abort', onAbort);
          resolve();
        }, ms);
        s.addEventListener('abort', onAbort, { once: true });
      });
    const begin = (context: { signal: AbortSignal; toolCallId: string }, args: unknown): (() => AbortSignal) => {
      const verdict = verdictOf(i, c);
      note(log.bodyStart === undefined, () => `tool body of call ${i} started twice`);
      note(verdict.ok && JSON.stringify(args) === JSON.stringify(verdict.args), () => `call ${i}'s tool got ${JSON.stringify(args)}`);
      note(context.toolCallId === c.id, () => `call ${i}'s tool got toolCallId ${context.toolCallId}`);
      let abortedAtStart = false;
      if (c.watchSignal) {
        const s = context.signal;
        log.signal = s;
        abortedAtStart = s.aborted;
        s.addEventListener('abort', () => {
          log.signalAborted = { ...mark(), reason: s.reason };
        });
      }
      log.bodyStart = { ...mark(), abortedAtStart, inProgress: inProgressHas(c.id) };
      return () => {
        const s = context.signal;
        if (log.signal === undefined) {
          log.signal = s;
          if (!s.aborted) s.addEventListener('abort', () => (log.signalAborted = { ...mark(), reason: s.reason }));
        }
        return s;
      };
    };
    const settle = (kind: 'return' | 'throw'): void => {
      log.bodySettled = { ...mark(), kind };
    };
    const finish = async (signal: () => AbortSignal): Promise<unknown> => {
      const e = c.ending;
      switch (e.kind) {
        case 'return':
          settle('return');
          return returnValue(i, e.value);
        case 'throw':
          settle('throw');
          throw thrownValue(i, e.value);
        case 'hangHonour':
        case 'hangHonourReturn': {
          const s = signal();
          if (!s.aborted) await new Promise<void>((resolve) => s.addEventListener('abort', () => resolve(), { once: true }));
          if (e.kind === 'hangHonourReturn') {
            settle('return');
            return `returned-after-abort-${i}`;
          }
          settle('throw');
          throw s.reason;
        }
        case 'hangIgnore':
          return new Promise<never>(() => {});
      }
    };
    const runSteps = async function* (signal: () => AbortSignal): AsyncGenerator<number, void, undefined> {
      for (const step of c.steps) {
        if (step.kind === 'micro') for (let k = 0; k < step.n; k++) await Promise.resolve();
        else if (step.kind === 'wait') await wait(step.ms, step.honour, signal);
        else {
          const value = i * 1000 + yieldCount++;
          log.yields.push({ ...mark(), value });
          yield value;
        }
      }
    };
    let execute: Tool['execute'];
    if (c.shape === 'sync') {
      execute = (args: unknown, context) => {
        begin(context, args);
        const e = c.ending;
        if (e.kind === 'throw') {
          settle('throw');
          throw thrownValue(i, e.value);
        }
        settle('return');
        return returnValue(i, (e as Extract<Ending, { kind: 'return' }>).value);
      };
    } else if (c.shape === 'async') {
      execute = async (args: unknown, context) => {
        const signal = begin(context, args);
        try {
          for await (const _ of runSteps(signal)) {
            // async tools have no yields
          }
        } catch (error) {
          settle('throw');
          throw error;
        }
        return finish(signal);
      };
    } else {
      execute = (args: unknown, context) => {
        const signal = begin(context, args);
        async function* body(): AsyncGenerator<number, unknown, undefined> {
          try {
            try {
              yield* runSteps(signal);
            } catch (error) {
              settle('throw');
              throw error;
            }
            return await finish(signal);
          } finally {
            log.finallyRan = mark();
          }
        }
        const gen = body();
        // A spy on return(): cleanup is asserted, not inferred (A3, A5).
        const spied: AsyncIterator<number, unknown, undefined> & AsyncIterable<number> = {
          next: (...a: [] | [undefined]) => gen.next(...a),
          return: (value?: unknown) => {
            log.returnCalled ??= mark();
            return gen.return(value);
          },
          throw: (error?: unknown) => gen.throw(error),
          [Symbol.asyncIterator]() {
            return this;
          },
        };
        return spied as AsyncGenerator<number, unknown, undefined>;
      };
    }
    const definition: Tool = { name: `t${i}`, input, execute };
    return {
      ...definition,
      ...(c.exclusive ? { executionMode: 'sequential' as const } : {}),
      ...(c.timeoutMs !== undefined ? { timeoutMs: c.timeoutMs } : {}),
    };
  }

  function inProgressHas(id: string): boolean | undefined {
    return inProgress?.has(id);
  }

  function beforeHook(ctx: BeforeToolCallContext, spec: BeforeHook): BeforeToolCallResult | void | Promise<BeforeToolCallResult | void> {
    const i = ctx.index;
    const log = logs[i]!;
    log.beforeCalls.push({ ...mark(), args: ctx.args, sameCall: ctx.toolCall.id === sc.calls[i]?.id, index: i });
    const settled = (): void => {
      log.beforeSettled = mark();
    };
    switch (spec.kind) {
      case 'pass':
        settled();
        return;
      case 'passAsync':
        return (async () => {
          for (let k = 0; k < spec.micro; k++) await Promise.resolve();
          settled();
        })();
      case 'passLater':
        return new Promise<void>((resolve, reject) => {
          const timer = clock.setTimeout(() => {
            ctx.signal.removeEventListener('abort', onAbort);
            settled();
            resolve();
          }, spec.ms);
          const onAbort = (): void => {
            clock.clearTimeout(timer);
            settled();
            reject(ctx.signal.reason);
          };
          if (spec.honour) {
            if (ctx.signal.aborted) onAbort();
            else ctx.signal.addEventListener('abort', onAbort, { once: true });
          }
        });
      case 'block':
        settled();
        return spec.reason ? { block: true, reason: `blocked-${i}` } : { block: true };
      case 'throwSync':
        settled();
        throw spec.value === 'error' ? new Error(`bboom-${i}`) : `bstr-${i}`;
      case 'throwLater':
        return new Promise<void>((_, reject) =>
          clock.setTimeout(() => {
            settled();
            reject(new Error(`bboom-${i}`));
          }, spec.ms),
        );
      case 'abortRun':
        settled();
        abortRun();
        return;
      case 'poisonAnswer':
        settled();
        return Object.defineProperty({}, 'block', {
          get(): never {
            throw new Error(`block-getter-${i}`);
          },
        }) as BeforeToolCallResult;
    }
  }

  function afterHook(ctx: AfterToolCallContext, spec: AfterHook): AfterToolCallResult | void | Promise<AfterToolCallResult | void> {
    const i = ctx.index;
    const log = logs[i]!;
    log.afterCalls.push(mark());
    const settled = (): void => {
      log.afterSettled = mark();
    };
    switch (spec.kind) {
      case 'pass':
        settled();
        return;
      case 'passLater':
        return new Promise<void>((resolve) =>
          clock.setTimeout(() => {
            settled();
            resolve();
          }, spec.ms),
        );
      case 'override':
        settled();
        return { content: [{ type: 'text', text: `after-${i}` }] };
      case 'markError':
        settled();
        return { isError: true };
      case 'throwSync':
        settled();
        throw new Error(`aboom-${i}`);
      case 'throwLater':
        return new Promise<void>((_, reject) =>
          clock.setTimeout(() => {
            settled();
            reject(new Error(`aboom-${i}`));
          }, spec.ms),
        );
      case 'poisonAnswer':
        settled();
        return Object.defineProperty({}, 'content', {
          get(): never {
            throw new Error(`content-getter-${i}`);
          },
        }) as AfterToolCallResult;
    }
  }
}

/** The tools' input schemas, shared by every case (a JSON Schema object is prepared once). */
const SCHEMAS = {
  valibot: v.object({ n: v.number() }),
  json: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
  jsonOptional: { type: 'object', properties: { n: { type: 'number' } } },
  // A transform that throws on every well-formed input, as `JSON.parse` of a bad string would.
  throwing: v.pipe(
    v.object({ n: v.number() }),
    v.transform((value): never => {
      throw new SyntaxError(`schema-throws-${value.n}`);
    }),
  ),
} as const;

const TRUNCATED = /\n?\[truncated: (\d+) chars, (\d+) cut; showing (\d+)\]\n?/;

/**
 * C20: `test` holds for the result text `t`, or `t` is a whole result bounded to `max`: one
 * marker stating the original size and the cut, and exactly `max` characters kept around it.
 * (Every result is bounded, error texts too; which text was cut is checked by `test`
 * when it is short enough to survive, and by spec/cases/C20 precisely.)
 */
export function fits(t: string, max: number | undefined, test: (t: string) => boolean): boolean {
  if (test(t)) return true;
  const m = TRUNCATED.exec(t);
  if (m === null || max === undefined) return false;
  return Number(m[3]) === max && Number(m[1]) - Number(m[2]) === max && t.length - m[0].length === max;
}

/** `actual` is `expected`, or `expected` bounded to `max` chars around the truncation marker (C20). */
export function boundedEquals(actual: string, expected: string, max: number): boolean {
  if (expected.length <= max) return actual === expected;
  const marker = `[truncated: ${expected.length} chars, ${expected.length - max} cut; showing ${max}]`;
  const at = actual.indexOf(marker);
  if (at < 0) return false;
  const head = actual.slice(0, at).replace(/\n$/, '');
  const tail = actual.slice(at + marker.length).replace(/^\n/, '');
  return head.length + tail.length <= max && expected.startsWith(head) && expected.endsWith(tail);
}

// ---------------------------------------------------------------------------------------
// Running the property
// ---------------------------------------------------------------------------------------

/** Parameters for `fc.assert`, from a run count and an optional replay (`seed`, `path`). */
export function propertyParameters(options: { numRuns: number; seed?: number | undefined; path?: string | undefined }): fc.Parameters<[Scenario]> {
  const parameters: fc.Parameters<[Scenario]> = { numRuns: options.numRuns };
  if (options.seed !== undefined) parameters.seed = options.seed;
  if (options.path !== undefined) parameters.path = options.path;
  return parameters;
}

/** The property: every scenario of `focus` passes {@link runScenario}. */
export function runToolsProperty(focus: Focus, coverage?: Coverage): fc.IAsyncProperty<[Scenario]> {
  return fc.asyncProperty(scenarioArbitrary(focus), (sc) => runScenario(sc, coverage));
}
