/**
 * One run's shared state: the checked options, the tool table, cancellation, and the
 * progress counters the scheduler waits on.
 *
 * @module
 */
import { RunAbort } from './abort.ts';
import type { RunToolsOptions } from './options.ts';
import { thrownText } from './stages/foreign.ts';
import { assertToolShape, describeValue, type Tool, type ToolCall } from './tool.ts';

/** Defaults of {@link RunToolsOptions}, in one place. */
export const DEFAULTS = {
  mode: 'parallel',
  maxConcurrency: 10,
  abortGraceMs: 100,
  maxResultChars: 100_000,
} as const;

/**
 * Invariants:
 * - `received[i]` is call i, in call order; the scheduler appends before handing it out.
 * - `firstUnended` is the lowest index whose call has not ended; every lower one has.
 */
export class RunState {
  readonly tools: ReadonlyMap<string, Tool>;
  readonly options: RunToolsOptions;
  readonly concurrency: number;
  readonly abortGraceMs: number;
  readonly maxResultChars: number;
  readonly abort: RunAbort;
  /** The calls, in call order: the caller's array, or those received so far from a stream. */
  received: ToolCall[] = [];
  firstUnended = 0;
  /**
   * True once the run's signal changed an outcome: a call not run, interrupted or abandoned
   * because of it, or an `afterToolCall` whose answer was dropped because of it. Only ever
   * goes from false to true. What `ToolBatch.aborted` reports.
   */
  abortChangedOutcome = false;
  readonly #ended: boolean[] = [];
  /** Called once when the run stops (abort or consumer exit), to wake the run loop. */
  onStop: () => void = () => {};
  /** Executing call ids, with a count per id since ids can repeat (see `onInProgressChange`). */
  readonly inProgress = new Set<string>();
  readonly #inProgressCounts = new Map<string, number>();
  #toolNames: string | undefined;

  constructor(options: RunToolsOptions) {
    this.options = options;
    this.tools = toolTable(options.tools);
    this.concurrency = options.mode === 'sequential' ? 1 : (options.maxConcurrency ?? DEFAULTS.maxConcurrency);
    this.abortGraceMs = options.abortGraceMs ?? DEFAULTS.abortGraceMs;
    this.maxResultChars = options.maxResultChars ?? DEFAULTS.maxResultChars;
    this.abort = new RunAbort(options.signal, () => this.onStop());
  }

  /** The available tool names, for "unknown tool" errors: computed once per run. */
  get toolNames(): string {
    return (this.#toolNames ??= [...this.tools.keys()].join(', ') || '(none)');
  }

  /** True once the run was aborted or the consumer left: nothing new may start. */
  get stopped(): boolean {
    return this.abort.cause !== undefined;
  }

  /** Call `index` ended (its `tool_execution_end` is being emitted). */
  markEnded(index: number): void {
    this.#ended[index] = true;
    while (this.#ended[this.firstUnended] === true) {
      this.#ended[this.firstUnended] = false; // keeps the array from holding a flag per call
      this.firstUnended++;
    }
  }

  /** Adds or removes one executing call and tells `onInProgressChange` (a throw there is reported, not raised). */
  setInProgress(id: string, running: boolean): void {
    const count = (this.#inProgressCounts.get(id) ?? 0) + (running ? 1 : -1);
    if (count > 0) this.#inProgressCounts.set(id, count);
    else this.#inProgressCounts.delete(id);
    const changed = running ? count === 1 : count === 0;
    if (!changed) return;
    if (running) this.inProgress.add(id);
    else this.inProgress.delete(id);
    const listener = this.options.onInProgressChange;
    if (listener === undefined) return;
    try {
      listener(this.inProgress);
    } catch (error) {
      process.emitWarning(`toolrun: onInProgressChange threw and was ignored: ${thrownText(error)}`, 'ToolrunWarning');
    }
  }

  /** Ends the run's hold on the caller's signal. */
  dispose(): void {
    this.abort.dispose();
  }
}

function toolTable(tools: readonly Tool[]): Map<string, Tool> {
  const table = new Map<string, Tool>();
  tools.forEach((tool, i) => {
    assertToolShape(tool, `runTools: options.tools[${i}]`);
    if (table.has(tool.name)) {
      throw new TypeError(`runTools: options.tools has two tools named "${tool.name}" (at ${[...table.keys()].indexOf(tool.name)} and ${i}); names must be unique`);
    }
    table.set(tool.name, tool);
  });
  return table;
}

/**
 * Checks `runTools`' arguments before anything starts (a synchronous iterable of calls is
 * materialized into an array first, so its calls are checked too); throws one `TypeError` naming the
 * field and the value received.
 */
export function checkRunToolsArguments(calls: unknown, options: unknown): asserts options is RunToolsOptions {
  if (calls === null || typeof calls !== 'object' || !(Symbol.iterator in calls || Symbol.asyncIterator in calls)) {
    throw new TypeError(`runTools: calls must be an array or an (async) iterable of tool calls, received ${describeValue(calls)}`);
  }
  if (Array.isArray(calls)) calls.forEach((call, i) => checkCall(call, i));
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`runTools: options must be an object with a tools array, received ${describeValue(options)}`);
  }
  const o = options as Record<string, unknown>;
  if (!Array.isArray(o.tools)) throw new TypeError(`runTools: options.tools must be an array of tools, received ${describeValue(o.tools)}`);
  if (o.mode !== undefined && o.mode !== 'parallel' && o.mode !== 'sequential') {
    throw new TypeError(`runTools: options.mode must be 'parallel' or 'sequential', received ${describeValue(o.mode)}`);
  }
  const max = o.maxConcurrency;
  if (max !== undefined && !(max === Infinity || (Number.isInteger(max) && (max as number) > 0))) {
    throw new TypeError(`runTools: options.maxConcurrency must be a positive integer or Infinity, received ${describeValue(max)}`);
  }
  for (const key of ['timeoutMs', 'abortGraceMs', 'maxResultChars'] as const) {
    const value = o[key];
    if (value !== undefined && !(typeof value === 'number' && value >= 0 && !Number.isNaN(value))) {
      throw new TypeError(`runTools: options.${key} must be a non-negative number, received ${describeValue(value)}`);
    }
  }
  for (const key of ['beforeToolCall', 'afterToolCall', 'onInProgressChange'] as const) {
    if (o[key] !== undefined && typeof o[key] !== 'function') {
      throw new TypeError(`runTools: options.${key} must be a function, received ${describeValue(o[key])}`);
    }
  }
  if (o.signal !== undefined && !(o.signal instanceof AbortSignal)) {
    throw new TypeError(`runTools: options.signal must be an AbortSignal, received ${describeValue(o.signal)}`);
  }
}

/** A call from the caller's own code must have string `id` and `name` (empty is the model's business). */
export function checkCall(call: unknown, index: number): asserts call is ToolCall {
  if (call === null || typeof call !== 'object') {
    throw new TypeError(`runTools: calls[${index}] must be a tool call object {id, name, arguments}, received ${describeValue(call)}`);
  }
  const c = call as Record<string, unknown>;
  if (typeof c.name !== 'string') {
    throw new TypeError(`runTools: calls[${index}].name must be a string, received ${describeValue(c.name)}`);
  }
  if (typeof c.id !== 'string') {
    throw new TypeError(`runTools: calls[${index}].id must be a string, received ${describeValue(c.id)}`);
  }
}
