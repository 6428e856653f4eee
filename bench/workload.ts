/**
 * The work every implementation runs: the same tool bodies (async generators), and a
 * driver per implementation that runs one batch of calls through them.
 *
 * - toolrun: `runTools(calls, options)`, drained with `next()`.
 * - the minimal runner (bench/minimal-runner.ts): the same bodies and schema, the same three
 *   events in the same order, drained like toolrun; no hooks, timeouts or abort. A
 *   reference for what the event protocol itself costs.
 * - floor (no validation): the bodies driven by a bare `Promise.all` (or a `for` loop in
 *   sequential mode): no events, no validation, no result messages. Nothing can run the same
 *   bodies cheaper. "The floor" alone always means this one.
 * - floor + validation: the same, each call's arguments first checked with the valibot
 *   schema toolrun and the minimal runner use (`v.safeParse`): what validation adds to the
 *   floor, with still no events and no result messages.
 * - pi-agent-core 0.73.1: its `executeToolCalls` is not exported, so `runAgentLoop` is
 *   driven with a fake `streamFn` that answers one assistant message holding the N
 *   `toolCall` blocks, and `shouldStopAfterTurn: () => true`. The time reported is its own
 *   window, from the first `tool_execution_start` to `turn_end`
 *   (what it does before and after is not tool running). Its tools are the same bodies behind an
 *   adapter that drains the generator and passes each yielded value to `onUpdate`.
 * - a `Promise.race` merge over the pending `next()` of every source: the textbook merge,
 *   written here as the baseline it is (O(N) per item).
 *
 * @module
 */
import { merge as ixMerge } from 'ix/asynciterable';
import * as v from 'valibot';
import { defineTool, runTools, type RunToolsOptions, type Tool, type ToolCall, type ToolEvent } from '../lib/index.ts';
import { cpuNs, nowNs, type Window } from './harness.ts';
import { minimalRun, type MinimalEvent, type MinimalTool } from './minimal-runner.ts';
import type { PiEvent, Peers, PiTool, PiToolResult } from './peers.ts';

// ---------------------------------------------------------------------------------------
// Tool bodies

/**
 * A tool body: what `execute` returns for one call. It gets the context object itself and
 * reads `signal` only if it needs it: toolrun makes a call's AbortSignal on first read (an
 * AbortSignal costs several µs on Node 20), and a tool that never looks at it should not
 * pay for it here either.
 */
export type Body = (args: { i: number }, ctx: BodyContext) => AsyncGenerator<unknown, BodyResult, undefined>;

/** What a body returns: a string, or a result with content blocks and details (both runtimes take it as is). */
type BodyResult = string | { content: { type: 'text'; text: string }[]; details: unknown };

/** What a body may read from its context. */
interface BodyContext {
  readonly signal: AbortSignal;
}

/** A no-op call: returns at once. */
export const noopBody: Body = async function* () {
  return 'ok';
};

/**
 * The headline no-op: returns what a real tool returns, a text block and
 * `details` (`{ content, details }`), at once. Both runtimes pass the result on as it is.
 */
export const detailsBody: Body = async function* (args) {
  return { content: [{ type: 'text', text: 'ok' }], details: { i: args.i } };
};

/** The workloads of the overhead scenarios: the headline `{ content, details }` one, and the plain string. */
export const WORKLOADS = [
  { name: '{ content, details }', body: detailsBody },
  { name: "'ok'", body: noopBody },
] as const;

/**
 * A case that runs `k` batches back to back and reports their CPU and wall time divided by
 * `k`: what a batch costs over a block, garbage collection included (a median of single
 * batches leaves the batches a collection fell in out). A run that times its own window
 * (pi-agent-core's) adds its windows.
 */
export function inBlocks(k: number, run: () => Promise<Window | void>): () => Promise<Window> {
  return async () => {
    let cpu = 0;
    let wall = 0;
    for (let i = 0; i < k; i++) {
      const c0 = cpuNs();
      const t0 = nowNs();
      const own = await run();
      if (own !== undefined) {
        cpu += own.cpu;
        wall += own.wall;
      } else {
        cpu += cpuNs() - c0;
        wall += nowNs() - t0;
      }
    }
    return { cpu: cpu / k, wall: wall / k };
  };
}

/** A call that yields `k` progress values, then returns. */
export function progressBody(k: number): Body {
  return async function* () {
    for (let j = 0; j < k; j++) yield j;
    return 'ok';
  };
}

/** Drains a body; returns its return value. */
export async function drain<R>(it: AsyncIterator<unknown, R, undefined>): Promise<R> {
  for (;;) {
    const step = await it.next();
    if (step.done === true) return step.value;
  }
}

/** `n` calls to tool `name`, with ids `call_0…` and arguments `{ i }`. */
export function makeCalls(n: number, name = 'work'): ToolCall[] {
  return Array.from({ length: n }, (_, i) => ({ id: `call_${i}`, name, arguments: { i } }));
}

// ---------------------------------------------------------------------------------------
// toolrun

const argsSchema = v.object({ i: v.number() });

/** A toolrun tool running `body`, with the valibot schema every call is validated against. */
export function toolrunTool(body: Body, name = 'work'): Tool {
  return defineTool({
    name,
    input: argsSchema,
    execute: (args, ctx) => body(args, ctx),
  });
}

/** Runs one batch through `runTools` and drains it; `onEvent` sees every event. */
export async function runToolrun(calls: ToolCall[], options: RunToolsOptions, onEvent?: (event: ToolEvent) => void): Promise<void> {
  const run = runTools(calls, options);
  for (;;) {
    const step = await run.next();
    if (step.done === true) return;
    onEvent?.(step.value);
  }
}

// ---------------------------------------------------------------------------------------
// the minimal runner (bench/minimal-runner.ts)

/** The minimal runner's tool running `body`, with the same valibot schema as {@link toolrunTool}. */
export function minimalTool(body: Body, name = 'work'): MinimalTool<{ i: number }> {
  return { name, schema: argsSchema, body };
}

/**
 * Runs one batch through the minimal runner and drains it with the same `next()` loop as
 * {@link runToolrun}, so that the two rows consume their events the same way. (`for await`
 * is the same protocol; measured interleaved at N = 1,000, load 8–10, it read the minimal
 * runner 10–15 % lower and toolrun 3–15 % higher than this loop, within the rounds' p10–p90.)
 */
export async function runMinimal(calls: readonly ToolCall[], tool: MinimalTool<{ i: number }>, onEvent?: (event: MinimalEvent) => void): Promise<void> {
  const run = minimalRun(calls, tool);
  for (;;) {
    const step = await run.next();
    if (step.done === true) return;
    onEvent?.(step.value);
  }
}

// ---------------------------------------------------------------------------------------
// floor

/** The floor in parallel: every body started at once, awaited with `Promise.all`. */
export async function runFloorParallel(calls: readonly ToolCall[], body: Body, signal: AbortSignal = neverAborted): Promise<void> {
  const ctx: BodyContext = { signal };
  await Promise.all(calls.map((c) => drain(body(c.arguments as { i: number }, ctx))));
}

/**
 * The floor + validation, in parallel: each call's arguments checked with the same valibot
 * schema as toolrun's tool (an invalid call is skipped), then every body awaited with
 * `Promise.all`.
 */
export async function runFloorValidatedParallel(calls: readonly ToolCall[], body: Body, signal: AbortSignal = neverAborted): Promise<void> {
  const ctx: BodyContext = { signal };
  const runs: Promise<unknown>[] = [];
  for (const c of calls) {
    const parsed = v.safeParse(argsSchema, c.arguments);
    if (parsed.success) runs.push(drain(body(parsed.output, ctx)));
  }
  await Promise.all(runs);
}

/** The floor in sequence: one body after the other. */
export async function runFloorSequential(calls: readonly ToolCall[], body: Body, signal: AbortSignal = neverAborted): Promise<void> {
  const ctx: BodyContext = { signal };
  for (const c of calls) await drain(body(c.arguments as { i: number }, ctx));
}

const neverAborted = new AbortController().signal;

// ---------------------------------------------------------------------------------------
// pi-agent-core

/** The prepared input of one pi-agent-core batch: build it outside the timed window. */
export interface PiBatch {
  prompt: unknown;
  message: unknown;
  tools: PiTool[];
  ids: Map<string, number>;
}

/** The assistant message with `n` `toolCall` blocks, and the pi tool running `body`. */
export function makePiBatch(peers: Peers, n: number, body: Body): PiBatch {
  const { Type } = peers.piAi;
  const tool: PiTool = {
    name: 'work',
    label: 'work',
    description: 'bench tool',
    parameters: Type.Object({ i: Type.Number() }),
    execute: async (_id, params, signal, onUpdate) => {
      const it = body(params as { i: number }, { signal: signal ?? neverAborted });
      for (;;) {
        const step = await it.next();
        if (step.done === true) return typeof step.value === 'string' ? textResult(step.value) : (step.value as PiToolResult);
        onUpdate({ content: [], details: step.value });
      }
    },
  };
  const content = Array.from({ length: n }, (_, i) => ({ type: 'toolCall', id: `call_${i}`, name: 'work', arguments: { i } }));
  const message = {
    role: 'assistant',
    content,
    api: 'bench',
    provider: 'bench',
    model: 'bench',
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    stopReason: 'toolUse',
    timestamp: 0,
  };
  const ids = new Map(content.map((c, i) => [c.id, i]));
  return { prompt: { role: 'user', content: 'go', timestamp: 0 }, message, tools: [tool], ids };
}

function textResult(text: string): PiToolResult {
  return { content: [{ type: 'text', text }], details: undefined };
}

const piModel = { id: 'bench', name: 'bench', api: 'bench', provider: 'bench', baseUrl: '', reasoning: false, input: ['text'], contextWindow: 1e6, maxTokens: 1e6, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } };

/**
 * Runs one batch through pi-agent-core's `runAgentLoop`; returns its window (CPU and wall
 * ns), from the first `tool_execution_start` to `turn_end`. `onEvent` sees every event.
 */
export async function runPi(
  peers: Peers,
  batch: PiBatch,
  options: { mode: 'parallel' | 'sequential'; signal?: AbortSignal; onEvent?: (event: PiEvent) => void },
): Promise<Window> {
  let t0 = 0;
  let t1 = 0;
  let c0 = 0;
  let c1 = 0;
  const onEvent = options.onEvent;
  const emit = (event: PiEvent): void => {
    if (t0 === 0 && event.type === 'tool_execution_start') {
      c0 = cpuNs();
      t0 = nowNs();
    } else if (t1 === 0 && event.type === 'turn_end') {
      t1 = nowNs();
      c1 = cpuNs();
    }
    onEvent?.(event);
  };
  const streamFn = () => {
    const stream = peers.piAi.createAssistantMessageEventStream();
    stream.push({ type: 'done', reason: 'toolUse', message: batch.message });
    return stream;
  };
  await peers.piAgentCore.runAgentLoop(
    [batch.prompt],
    { systemPrompt: '', messages: [], tools: batch.tools },
    { model: piModel, convertToLlm: (m: unknown) => m, toolExecution: options.mode, shouldStopAfterTurn: () => true },
    emit,
    options.signal,
    streamFn,
  );
  if (t0 === 0 || t1 === 0) throw new Error('pi-agent-core run ended without tool_execution_start or turn_end');
  return { cpu: c1 - c0, wall: t1 - t0 };
}

// ---------------------------------------------------------------------------------------
// merges

/** The textbook merge: `Promise.race` over every source's pending `next()`, once per item. */
export async function* raceMerge<T>(sources: readonly AsyncIterator<T>[]): AsyncGenerator<T, void, undefined> {
  const pending = new Map<number, Promise<{ i: number; step: IteratorResult<T> }>>();
  const pull = (i: number): void => {
    pending.set(
      i,
      sources[i]!.next().then((step) => ({ i, step })),
    );
  };
  for (let i = 0; i < sources.length; i++) pull(i);
  while (pending.size > 0) {
    const { i, step } = await Promise.race(pending.values());
    if (step.done === true) {
      pending.delete(i);
      continue;
    }
    pull(i);
    yield step.value;
  }
}

/** ix's `merge(first, ...rest)` over a list of sources. */
export function ixMergeAll<T>(list: readonly AsyncIterable<T>[]): AsyncIterable<T> {
  const [first, ...rest] = list;
  if (first === undefined) throw new RangeError('ix merge needs at least one source');
  return ixMerge(first, ...rest);
}

/** Drains an async iterable and returns how many items it gave. */
export async function count(it: AsyncIterable<unknown>): Promise<number> {
  let n = 0;
  for await (const _ of it) n++;
  return n;
}

/** Drains a `mergeGenerators` stream and returns how many values (not return values) it gave. */
export async function countMerged(it: AsyncIterable<{ done: boolean }>): Promise<number> {
  let n = 0;
  for await (const item of it) if (!item.done) n++;
  return n;
}

/** `n` fresh sources, each yielding `k` values. */
export function sources(n: number, k: number): AsyncGenerator<number, string, undefined>[] {
  const body = progressBody(k);
  const ctx: BodyContext = { signal: neverAborted };
  return Array.from({ length: n }, (_, i) => body({ i }, ctx) as AsyncGenerator<number, string, undefined>);
}
