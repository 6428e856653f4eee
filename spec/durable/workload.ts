/**
 * What the crash trials run: one batch of tool calls (and, for `runAgent`, a three-turn
 * script) that exercises every path a durable run has to get right after a crash:
 *
 * | call | tool | what happens | outcome |
 * | --- | --- | --- | --- |
 * | 0, 1, 10, 11 | `work` | yields progress, sleeps; 0 ends after 1, 10 after 11 (out of call order, by a gate) | ok |
 * | 2 | `exclusive` | `executionMode: 'sequential'`: runs alone | ok |
 * | 3 | `work` | throws `call 3 failed on purpose` | error |
 * | 4 | `slow` | would sleep an hour: its 250 ms limit stops it | timed_out |
 * | 5 | `work` | `n: 'seven'`: a bad argument | rejected |
 * | 6 | `no_such_tool` | an unknown tool | rejected |
 * | 7 | `guarded` | `beforeToolCall` throws for it | rejected |
 * | 8, 9 | `pay` | `needsApproval`: approved (8) and denied (9) by `approve` | ok / error |
 *
 * The run has `maxConcurrency: 2`, an `afterToolCall` that adds `meta` to every executed
 * call (so a journal that keeps the tool's raw return instead of the finalized result is
 * seen), and may take its calls from an async iterable (`stream`). Every tool records a
 * `start` and an `end` in the side-effect log with its call index and `ctx.idempotencyKey`;
 * `approve` records an `asked`; the agent's model records a `model` line per reply it makes.
 *
 * Everything a result says depends on the call only (never on time, attempt or process), so
 * a clean run's results are the expected results of every trial.
 *
 * @module
 */
import * as v from 'valibot';
import { defineTool, type RunToolsOptions, type Tool, type ToolCall, type ToolContext } from '../../lib/index.ts';
import type { AgentModel, AssistantMessage } from '../../lib/extras/agent.ts';
import { readEffects, recordEffect } from './side-effects.ts';

/** Where a tool run reports to: the side-effect log and the run's attempt. */
export interface WorkloadContext {
  /** The side-effect log file. */
  log: string;
  /** This process's attempt in its trial (0: the first). */
  attempt: number;
  /** Called with each executed call's raw end (return value or throw), for the harness's broken journal. */
  onRawEnd?(turn: number, index: number, raw: { returned: unknown } | { threw: string }): void;
  /** Called when a call's tool finished executing (before finalization), for the placed kills. */
  onToolDone?(turn: number, index: number): void;
  /** Called when a call's tool started (its `start` is in the log; with a journal, its start was journaled before), for the placed kills. */
  onToolStart?(turn: number, index: number): void;
}

/** The turn a call belongs to, from its id (`call_t<turn>_<i>`, see {@link workloadCalls}). */
export function turnOf(toolCallId: string): number {
  return Number(/^call_t(\d+)_/.exec(toolCallId)?.[1] ?? -1);
}

/**
 * The call's index in its turn's batch, from its id (`call_t<turn>_<i>`): `ctx.index` in a
 * plain run, but a queued call runs as a one-call batch in its worker (`ctx.index` is 0 there).
 */
function indexOf(ctx: ToolContext): number {
  return Number(/_(\d+)$/.exec(ctx.toolCallId)?.[1] ?? ctx.index);
}

/** `ctx.idempotencyKey` when the run has a journal (contract J); `undefined` otherwise. */
function keyOf(ctx: ToolContext): string | undefined {
  return (ctx as ToolContext & { idempotencyKey?: string }).idempotencyKey;
}

/** Sleeps `ms`, or rejects with the signal's reason when it aborts first. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Runs `body` as a logged side effect: `start` before, `end` after (also when it throws),
 * and reports the raw end to the harness.
 */
async function logged<T>(w: WorkloadContext, ctx: ToolContext, body: () => Promise<T>): Promise<T> {
  const turn = turnOf(ctx.toolCallId);
  const line = { attempt: w.attempt, turn, index: indexOf(ctx), toolCallId: ctx.toolCallId, key: keyOf(ctx), pid: process.pid };
  recordEffect(w.log, { kind: 'start', ...line });
  w.onToolStart?.(turn, line.index);
  try {
    const value = await body();
    w.onRawEnd?.(turn, indexOf(ctx), { returned: value });
    return value;
  } catch (error) {
    w.onRawEnd?.(turn, indexOf(ctx), { threw: error instanceof Error ? error.message : String(error) });
    throw error;
  } finally {
    recordEffect(w.log, { kind: 'end', ...line });
    w.onToolDone?.(turn, indexOf(ctx));
  }
}

/**
 * Waits until call `index` of `turn` has ended in some attempt (an `end` line in the log):
 * how the batch makes calls finish out of call order whatever the machine's load — a
 * journal that issued its operations in completion order would otherwise pass by luck
 * whenever the load made calls finish in call order. A call replayed from the journal
 * ended in an earlier attempt. A call whose process was killed while it ran (a `killed`
 * line for the pid of its last start) may never end: under `'unknown'` it is answered
 * without running again, so the wait stops there too — what matters in queue mode, where
 * the waiting call runs in another worker that survives the kill (in one process, the
 * kill interrupts both). So nothing waits forever.
 */
async function endOf(w: WorkloadContext, turn: number, index: number, signal: AbortSignal): Promise<void> {
  const settled = (): boolean => {
    const effects = readEffects(w.log);
    const mine = effects.filter((e) => (e.kind === 'start' || e.kind === 'end') && e.turn === turn && e.index === index);
    if (mine.some((e) => e.kind === 'end')) return true;
    const last = mine.at(-1);
    return last !== undefined && effects.some((e) => e.kind === 'killed' && e.pid === last.pid);
  };
  while (!settled()) await sleep(5, signal);
}

/** The trial's tools, reporting to `w`. */
export function workloadTools(w: WorkloadContext): Tool[] {
  const work = defineTool({
    name: 'work',
    description: 'Squares n after a while; n = 3 fails on purpose.',
    input: v.object({ n: v.number(), ms: v.number(), after: v.optional(v.number()) }),
    async *execute({ n, ms, after }, ctx) {
      const turn = turnOf(ctx.toolCallId);
      const line = { attempt: w.attempt, turn, index: indexOf(ctx), toolCallId: ctx.toolCallId, key: keyOf(ctx), pid: process.pid };
      recordEffect(w.log, { kind: 'start', ...line });
      w.onToolStart?.(turn, line.index);
      try {
        if (after !== undefined) await endOf(w, turn, after, ctx.signal);
        yield { step: 1, of: 2 };
        await sleep(ms / 2, ctx.signal);
        yield { step: 2, of: 2 };
        await sleep(ms / 2, ctx.signal);
        if (n === 3) throw new Error('call 3 failed on purpose');
        const value = { n, square: n * n };
        w.onRawEnd?.(turn, indexOf(ctx), { returned: value });
        return value;
      } catch (error) {
        w.onRawEnd?.(turn, indexOf(ctx), { threw: error instanceof Error ? error.message : String(error) });
        throw error;
      } finally {
        recordEffect(w.log, { kind: 'end', ...line });
        w.onToolDone?.(turn, indexOf(ctx));
      }
    },
  });
  const exclusive = defineTool({
    name: 'exclusive',
    description: 'Runs alone (no other call of the batch runs meanwhile).',
    input: v.object({ label: v.string() }),
    executionMode: 'sequential',
    execute: ({ label }, ctx) => logged(w, ctx, async () => (await sleep(20, ctx.signal), `exclusive ${label} done`)),
  });
  const slow = defineTool({
    name: 'slow',
    description: 'Never returns; stopped by its time limit.',
    input: v.object({}),
    timeoutMs: 250,
    execute: (_input, ctx) => logged(w, ctx, () => sleep(3_600_000, ctx.signal).then(() => 'never')),
  });
  const guarded = defineTool({
    name: 'guarded',
    description: 'Its beforeToolCall hook throws.',
    input: v.object({}),
    execute: (_input, ctx) => logged(w, ctx, async () => 'guarded ran'),
  });
  const pay = defineTool({
    name: 'pay',
    description: 'Pays an amount; a person approves it first.',
    input: v.object({ amount: v.number() }),
    needsApproval: true,
    execute: ({ amount }, ctx) => logged(w, ctx, async () => (await sleep(10, ctx.signal), `paid ${amount}`)),
  });
  return [work, exclusive, slow, guarded, pay] as Tool[];
}

/**
 * The calls of each turn the run rejects by its own checks, before any code of the workload
 * runs: 5 (a bad argument, a synchronous schema) and 6 (an unknown tool). Interrupted, they
 * still get their true result under `'unknown'` (J5); call 7 (a throwing `beforeToolCall`)
 * does not: the hook is the application's code.
 */
export const REJECTED_BY_RUN: readonly number[] = [5, 6];

/** Turn `turn`'s batch (ids carry the turn, so an agent's turns never repeat an id; a plain batch is turn 0). */
export function workloadCalls(turn = 0): ToolCall[] {
  const id = (i: number): string => `call_t${turn}_${String(i).padStart(2, '0')}`;
  const calls: Array<[string, unknown]> = [
    ['work', { n: 1, ms: 40, after: 1 }],
    ['work', { n: 2, ms: 30 }],
    ['exclusive', { label: `t${turn}` }],
    ['work', { n: 3, ms: 60 }],
    ['slow', {}],
    ['work', { n: 'seven', ms: 10 }],
    ['no_such_tool', { anything: true }],
    ['guarded', {}],
    ['pay', { amount: 50 + turn }],
    ['pay', { amount: 500 }],
    ['work', { n: 5 + turn, ms: 20, after: 11 }],
    ['work', { n: 6, ms: 30 }],
  ];
  return calls.map(([name, args], i) => ({ id: id(i), name, arguments: args }));
}

/** `calls` as an async iterable that hands them out one by one, a few ms apart (a streamed message). */
export async function* streamed(calls: readonly ToolCall[]): AsyncGenerator<ToolCall> {
  for (const call of calls) {
    await new Promise((resolve) => setTimeout(resolve, 5));
    yield call;
  }
}

/** The run's options besides `tools` and `journal`: concurrency, hooks and the approval rule. */
export function workloadOptions(w: WorkloadContext): Pick<RunToolsOptions, 'maxConcurrency' | 'beforeToolCall' | 'afterToolCall' | 'approve' | 'abortGraceMs'> {
  return {
    maxConcurrency: 2,
    abortGraceMs: 50,
    beforeToolCall: ({ tool }) => {
      if (tool.name === 'guarded') throw new Error('the policy service refused guarded calls');
    },
    afterToolCall: ({ toolCall, isError }) => ({ meta: { reviewed: toolCall.name, failed: isError } }),
    approve: (request) => {
      recordEffect(w.log, { kind: 'asked', attempt: w.attempt, turn: turnOf(request.toolCallId), index: request.index, toolCallId: request.toolCallId, pid: process.pid });
      const amount = (request.input as { amount: number }).amount;
      return amount <= 100 ? { approvalId: request.approvalId, approved: true } : { approvalId: request.approvalId, approved: false, reason: 'Over the 100 limit.' };
    },
  };
}

/** How many turns of the agent script run a batch (turns 1–3); turn 4 answers. */
export const AGENT_TURNS = 3;

/**
 * The agent's model: turns 1–3 (`context.turn` is 1-based) reply with the turn's batch, turn 4 with a text that counts
 * the tool results it was given. Records a `model` line per reply it makes (a journaled
 * reply is not asked for again, so a replayed turn adds no line).
 */
export function workloadModel(w: WorkloadContext): AgentModel {
  return (messages, context) => {
    recordEffect(w.log, { kind: 'model', attempt: w.attempt, turn: context.turn, pid: process.pid });
    if (context.turn <= AGENT_TURNS) {
      const reply: AssistantMessage = {
        role: 'assistant',
        content: [
          { type: 'text', text: `Turn ${context.turn}: running the batch.` },
          ...workloadCalls(context.turn).map((call) => ({ type: 'toolCall' as const, id: call.id, name: call.name, arguments: call.arguments as Record<string, unknown> })),
        ],
        stopReason: 'toolUse',
      };
      return reply;
    }
    const results = messages.filter((m) => m.role === 'tool').length;
    return { role: 'assistant', content: [{ type: 'text', text: `Done: ${results} tool results seen.` }], stopReason: 'stop' };
  };
}

/**
 * The queue modes' batch: calls 0–7 of {@link workloadCalls} (ids and positions the same):
 * a call that ends after the next one, an exclusive tool, a throw, a timeout, a bad argument,
 * an unknown tool and a throwing `beforeToolCall`. Left out: the approvals (8, 9; queue mode
 * runs no call that needs approval) and calls 10, 11 (another out-of-order pair, kept out to
 * keep a trial short).
 */
export function queueWorkloadCalls(): ToolCall[] {
  return workloadCalls(0).slice(0, 8);
}
