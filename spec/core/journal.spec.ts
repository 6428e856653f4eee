/**
 * Issue 21, item 1: the journal seam (contract J1–J10), with the reference in-memory
 * journal of `toolrun/testing`. A crash is simulated in process: a run is stopped midway
 * (its consumer leaves, or its signal aborts), and the same batch runs again with
 * `journal.copy()` — what an engine's store holds after the crash. The real `kill -9` trials
 * on DBOS + PostgreSQL are `toolrun/dbos`'s (npm run test:durable).
 */
import fc from 'fast-check';
import * as v from 'valibot';
import { describe, expect, it, vi } from 'vitest';
import {
  defineTool,
  JournalError,
  runTools,
  type InterruptedCallPolicy,
  type JournalEntry,
  type RunToolsOptions,
  type Tool,
  type ToolBatch,
  type ToolCall,
  type ToolEvent,
  type ToolJournal,
  withJsonSchema,
} from '../../lib/index.ts';
import { memoryJournal, type MemoryJournal, type MemoryJournalOperation } from '../../lib/testing.ts';
import { collect, expectRunInvariants, gate, ofType, settle, text, type Gate } from '../helpers.ts';

/** The side-effect log: every tool start, by call id. */
function mixedTools(starts: string[]) {
  const work = defineTool({
    name: 'work',
    input: v.object({ x: v.string() }),
    async *execute({ x }, { toolCallId }) {
      starts.push(toolCallId);
      yield `${x}: half`;
      yield `${x}: all`;
      return `did ${x}`;
    },
  });
  const boom = defineTool({
    name: 'boom',
    input: v.object({}),
    execute: (_input, { toolCallId }) => {
      starts.push(toolCallId);
      throw new Error(`call ${toolCallId} failed on purpose`);
    },
  });
  const slow = defineTool({
    name: 'slow',
    input: v.object({}),
    timeoutMs: 1,
    // Waits on its signal alone: it ends only by its time limit, whatever the clock does.
    execute: (_input, { toolCallId, signal }) => {
      starts.push(toolCallId);
      return new Promise<string>((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
    },
  });
  const lock = defineTool({
    name: 'lock',
    input: v.object({}),
    executionMode: 'sequential',
    execute: async (_input, { toolCallId }) => {
      starts.push(toolCallId);
      return { content: [{ type: 'text' as const, text: 'locked' }], details: { held: true } };
    },
  });
  const guarded = defineTool({
    name: 'guarded',
    input: v.object({}),
    execute: (_input, { toolCallId }) => {
      starts.push(toolCallId);
      return 'never';
    },
  });
  return [work, boom, slow, lock, guarded] as const;
}

/** A batch mixing ok, throw, unknown tool, bad argument, timeout, a throwing beforeToolCall, an afterToolCall override, an exclusive tool. */
const MIXED: ToolCall[] = [
  { id: 'c0', name: 'work', arguments: { x: 'a' } },
  { id: 'c1', name: 'boom', arguments: {} },
  { id: 'c2', name: 'nope', arguments: {} },
  { id: 'c3', name: 'work', arguments: { x: 7 } },
  { id: 'c4', name: 'slow', arguments: {} },
  { id: 'c5', name: 'guarded', arguments: {} },
  { id: 'c6', name: 'work', arguments: { x: 'override' } },
  { id: 'c7', name: 'lock', arguments: {} },
  { id: 'c8', name: 'work', arguments: { x: 'b' } },
];

function mixedOptions(tools: readonly Tool[], extra: Partial<RunToolsOptions> = {}): RunToolsOptions {
  return {
    tools,
    maxConcurrency: 2,
    beforeToolCall: ({ toolCall }) => {
      if (toolCall.name === 'guarded') throw new Error('the guard refuses');
    },
    afterToolCall: ({ args }) => ((args as { x?: string }).x === 'override' ? { content: [{ type: 'text', text: 'overridden' }] } : undefined),
    ...extra,
  };
}

async function* streamOf(calls: readonly ToolCall[]): AsyncGenerator<ToolCall> {
  for (const call of calls) {
    await Promise.resolve();
    yield call;
  }
}

/** Runs until `stopAfter` results were taken, then leaves the loop (a crash from the batch's point of view). */
async function runUntil(run: AsyncGenerator<ToolEvent, ToolBatch, undefined>, stopAfter: number): Promise<ToolEvent[]> {
  const events: ToolEvent[] = [];
  if (stopAfter === 0) {
    await run.return(undefined as never);
    return events;
  }
  for await (const event of run) {
    events.push(event);
    if (event.type === 'tool_result' && event.index === stopAfter - 1) break;
  }
  return events;
}

/** What the model sees of a batch: the results, JSON as an engine keeps them. */
function json(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value));
}

describe('J1: every journal operation of call i is issued when call i is handed out, in call order', () => {
  it('J1 opens the entries synchronously at hand-out, before the call is prepared, in call order (also for a stream of calls)', async () => {
    const order: string[] = [];
    const inner = memoryJournal();
    const journal: ToolJournal = {
      open(call) {
        order.push(`open ${call.index}`);
        return inner.open(call);
      },
    };
    const tool = defineTool({ name: 't', input: v.object({}), execute: (_i, { index }) => `r${index}` });
    const run = runTools(streamOf([0, 1, 2].map((i) => ({ id: `c${i}`, name: 't', arguments: {} }))), {
      tools: [tool],
      journal,
      beforeToolCall: ({ index }) => {
        order.push(`prepare ${index}`);
      },
    });
    const { events, batch } = await collect(run);
    // Fails if open is called after prepare, late, or out of order.
    expect(order).toEqual(['open 0', 'prepare 0', 'open 1', 'prepare 1', 'open 2', 'prepare 2']);
    expect(batch.messages.map(text)).toEqual(['r0', 'r1', 'r2']);
    expect(ofType(events, 'tool_execution_start')).toHaveLength(3);
  });

  it('J1 every completion order gives the same operations: opens and decides in one fixed sequence, each call committed once with the same result (fast-check, gates)', async () => {
    const n = 5;
    const logOf = async (order: readonly number[], schedule: number | 'sequential' | 'exclusive'): Promise<MemoryJournalOperation[]> => {
      const gates: Gate[] = Array.from({ length: n }, () => gate());
      const tool = defineTool({
        name: 'g',
        input: v.object({}),
        // 'exclusive': the tool waits for every earlier call and holds every later one (S3).
        ...(schedule === 'exclusive' ? { executionMode: 'sequential' as const } : {}),
        needsApproval: (_input, { index }) => index % 2 === 1,
        async *execute(_input, { index }) {
          yield `p${index}`;
          await gates[index]!.promise;
          return `r${index}`;
        },
      });
      const journal = memoryJournal({ async: true });
      const calls = Array.from({ length: n }, (_, i) => ({ id: `c${i}`, name: 'g', arguments: {} }));
      const scheduling: Partial<RunToolsOptions> = schedule === 'sequential' ? { mode: 'sequential' } : typeof schedule === 'number' ? { maxConcurrency: schedule } : {};
      const done = collect(runTools(calls, { tools: [tool], journal, ...scheduling, approve: (r) => ({ approvalId: r.approvalId, approved: true }) }));
      for (const i of order) {
        await settle(2);
        gates[i]!.open();
      }
      const { batch } = await done;
      expect(batch.messages.map(text)).toEqual(calls.map((_, i) => `r${i}`));
      return journal.log.filter((op) => op.op !== 'progress');
    };
    const key = (ops: readonly MemoryJournalOperation[], kinds: readonly string[]): string[] =>
      ops.filter((op) => kinds.includes(op.op)).map((op) => `${op.op} ${op.index}`);
    const reference = await logOf([0, 1, 2, 3, 4], Infinity);
    const byIndex = (ops: readonly MemoryJournalOperation[]) => ops.filter((op) => op.op === 'commit').sort((a, b) => a.index - b.index);
    // Fails if an open or a decide is issued when a call ends instead of at hand-out, or a
    // commit is missed, doubled or carries another call's result. Commits come as calls end
    // (J3): their order is the completion order, which an engine's sequence does not see.
    await fc.assert(
      fc.asyncProperty(fc.shuffledSubarray([0, 1, 2, 3, 4], { minLength: n, maxLength: n }), fc.constantFrom<number | 'sequential' | 'exclusive'>(1, 2, Infinity, 'sequential', 'exclusive'), async (order, max) => {
        const log = await logOf(order, max);
        expect(key(log, ['open', 'decide'])).toEqual(key(reference, ['open', 'decide']));
        expect(byIndex(log)).toEqual(byIndex(reference));
      }),
      { numRuns: 30 },
    );
  });
});

describe('J3, J4: committed as it ends, before the result is emitted; a committed call replays without running', () => {
  it('J3 commits each finalized result (timeout, hook, override, bound) exactly as its tool_result carries it, before emitting it', async () => {
    const starts: string[] = [];
    const journal = memoryJournal();
    const seen: string[] = [];
    const { events, batch } = await collect(runTools(MIXED, mixedOptions(mixedTools(starts), { journal })));
    expectRunInvariants(MIXED, events, batch);
    for (const event of ofType(events, 'tool_result')) {
      const entry = journal.entries.get(event.index)!;
      // Fails if the raw return (not the finalized result) were committed, or the commit came after the event.
      expect(entry.state).toBe('ended');
      expect(entry.result!.message).toEqual(json(event.message));
      seen.push(entry.result!.outcome);
    }
    expect(seen).toEqual(['ok', 'error', 'rejected', 'rejected', 'timed_out', 'rejected', 'ok', 'ok', 'ok']);
    expect(text(journal.entries.get(4)!.result!.message)).toBe('Tool "slow" timed out after 1 ms and was stopped.');
    expect(text(journal.entries.get(6)!.result!.message)).toBe('overridden');
  });

  it('J3 the tool_result waits for its commit, and for every earlier one (an engine slower than the tools)', async () => {
    const commits: Gate[] = [gate(), gate(), gate()];
    const inner = memoryJournal();
    const journal: ToolJournal = {
      open(call) {
        const entry = inner.open(call);
        return { ...entry, prior: entry.prior, idempotencyKey: entry.idempotencyKey, decide: entry.decide, commit: async (result) => {
          await commits[call.index]!.promise;
          await entry.commit(result);
        } } satisfies JournalEntry;
      },
    };
    const tool = defineTool({ name: 't', input: v.object({}), execute: (_i, { index }) => `r${index}` });
    const run = runTools([0, 1, 2].map((i) => ({ id: `c${i}`, name: 't', arguments: {} })), { tools: [tool], journal });
    const taken: ToolEvent[] = [];
    const reading = (async () => {
      for await (const event of run) taken.push(event);
    })();
    await settle();
    expect(ofType(taken, 'tool_execution_end')).toHaveLength(3);
    expect(ofType(taken, 'tool_result')).toHaveLength(0);
    commits[1]!.open();
    await settle();
    // Fails if call 1's result were emitted before call 0's commit settled.
    expect(ofType(taken, 'tool_result')).toHaveLength(0);
    commits[0]!.open();
    await settle();
    expect(ofType(taken, 'tool_result').map((e) => e.index)).toEqual([0, 1]);
    commits[2]!.open();
    await reading;
    expect(ofType(taken, 'tool_result').map((e) => e.index)).toEqual([0, 1, 2]);
  });

  it('J3 a call is committed as soon as it ends, while an earlier call still runs; its tool_result still waits for the earlier one', async () => {
    const first = gate();
    const tool = defineTool({
      name: 't',
      input: v.object({}),
      execute: async (_i, { index }) => {
        if (index === 0) await first.promise;
        return `r${index}`;
      },
    });
    const journal = memoryJournal({ async: true });
    const run = runTools([0, 1].map((i) => ({ id: `c${i}`, name: 't', arguments: {} })), { tools: [tool], journal });
    const taken: ToolEvent[] = [];
    const reading = (async () => {
      for await (const event of run) taken.push(event);
    })();
    await settle();
    // Fails if call 1's result waited in memory for call 0 (committed only at its release).
    expect(journal.entries.get(1)).toMatchObject({ state: 'ended', result: { outcome: 'ok' } });
    expect(journal.entries.get(0)!.state).toBe('started');
    expect(journal.log.filter((op) => op.op === 'commit').map((op) => op.index)).toEqual([1]);
    expect(ofType(taken, 'tool_result')).toHaveLength(0);
    first.open();
    await reading;
    expect(ofType(taken, 'tool_result').map((e) => e.index)).toEqual([0, 1]);
  });

  it('J3 a result held behind a call deferred for approval is committed before the batch pauses; the pause waits for every commit; a crash during the wait replays it', async () => {
    const starts: string[] = [];
    const work = defineTool({ name: 'work', input: v.object({ n: v.number() }), execute: async ({ n }, { toolCallId }) => (starts.push(toolCallId), `work ${n} done`) });
    const pay = defineTool({ name: 'pay', input: v.object({}), needsApproval: true, execute: (_i, { toolCallId }) => (starts.push(toolCallId), 'paid') });
    const calls: ToolCall[] = [
      { id: 'w0', name: 'work', arguments: { n: 0 } },
      { id: 'p1', name: 'pay', arguments: {} },
      { id: 'w2', name: 'work', arguments: { n: 2 } },
      { id: 'w3', name: 'work', arguments: { n: 3 } },
    ];
    const tools = [work, pay];
    const store = memoryJournal({ async: true });
    const slowWrite = gate();
    // An engine slow to write call 2's result.
    const journal: ToolJournal = {
      open(call) {
        const entry = store.open(call);
        if (call.index !== 2) return entry;
        return { ...entry, commit: async (result) => {
          await slowWrite.promise;
          await entry.commit(result);
        } } satisfies JournalEntry;
      },
    };
    let paused: { events: ToolEvent[]; batch: ToolBatch } | undefined;
    const first = collect(runTools(calls, { tools, journal })).then((r) => (paused = r));
    await settle();
    expect(store.entries.get(3)!.state).toBe('ended');
    // Fails if the batch paused (its state holding call 2's result in memory only) before call 2's commit settled.
    expect(paused).toBeUndefined();
    slowWrite.open();
    await first;
    expect(paused!.batch.paused).toBeDefined();
    expect([0, 2, 3].map((i) => store.entries.get(i)!.state)).toEqual(['ended', 'ended', 'ended']);
    expect(ofType(paused!.events, 'tool_result').map((e) => e.index)).toEqual([0]);

    // The crash while the person decides: the batch runs again on what the store holds.
    for (const policy of ['unknown', 'run-again'] as const) {
      const crashed = store.copy();
      const again = await collect(runTools(calls, { tools, journal: crashed, interruptedCalls: policy }));
      // Fails if a call that ended behind the deferral came back "outcome unknown" or ran again.
      expect(ofType(again.events, 'tool_execution_end').map((e) => [e.index, e.replayed === true])).toEqual([[0, true], [2, true], [3, true]]);
      expect(starts).toEqual(['w0', 'w2', 'w3']);
      const request = again.batch.paused!.requests[0]!;
      const resumed = await collect(runTools(calls, { tools, journal: crashed, interruptedCalls: policy, resume: { state: again.batch.paused!.state, approvals: [{ approvalId: request.approvalId, approved: true }] } }));
      expect(resumed.batch.messages.map(text)).toEqual(['work 0 done', 'paid', 'work 2 done', 'work 3 done']);
      starts.splice(3);
    }
  });

  for (const source of ['array', 'stream'] as const) {
    it(`J4 a crash after any number of results: the rerun gives the clean run's results, no committed call starts again (mixed batch, maxConcurrency 2, ${source})`, async () => {
      const cleanStarts: string[] = [];
      const clean = await collect(runTools(source === 'array' ? MIXED : streamOf(MIXED), mixedOptions(mixedTools(cleanStarts))));
      for (let stopAfter = 0; stopAfter <= MIXED.length; stopAfter++) {
        const starts: string[] = [];
        const tools = mixedTools(starts);
        const journal = memoryJournal({ async: stopAfter % 2 === 1 });
        await runUntil(runTools(source === 'array' ? MIXED : streamOf(MIXED), mixedOptions(tools, { journal })), stopAfter);
        const committed = [...journal.entries.values()].filter((e) => e.state === 'ended').map((e) => e.call.toolCallId);
        expect(committed.length).toBeGreaterThanOrEqual(stopAfter);
        const before = starts.length;
        const again = await collect(runTools(source === 'array' ? MIXED : streamOf(MIXED), mixedOptions(tools, { journal: journal.copy(), interruptedCalls: 'run-again' })));
        expectRunInvariants(MIXED, again.events, again.batch);
        // Fails if the result of one call were handed to another (results journaled in completion order) or the raw return replayed.
        expect(json(again.batch.messages)).toEqual(json(clean.batch.messages));
        expect(again.batch.terminate).toBe(clean.batch.terminate);
        // Fails if a committed call ran again.
        const rerun = starts.slice(before);
        expect(committed.filter((id) => rerun.includes(id)), `committed calls started again (stopped after ${stopAfter})`).toEqual([]);
        const replayed = ofType(again.events, 'tool_execution_end').filter((e) => e.replayed === true).map((e) => e.toolCallId);
        expect(replayed.sort()).toEqual([...committed].sort());
      }
    });
  }

  it('J4 a replayed call emits start → its journaled progress → end (replayed) → result, runs no hook, asks nobody, commits nothing', async () => {
    const starts: string[] = [];
    const tools = mixedTools(starts);
    const journal = memoryJournal();
    const first = await collect(runTools(MIXED, mixedOptions(tools, { journal })));
    const hooks: string[] = [];
    const copy = journal.copy();
    const again = await collect(
      runTools(MIXED, mixedOptions(tools, {
        journal: copy,
        beforeToolCall: () => {
          hooks.push('before');
        },
        afterToolCall: () => {
          hooks.push('after');
        },
      })),
    );
    expect(starts).toHaveLength(first.batch.messages.length - 3); // the unknown tool, the bad argument and the guarded call never start
    expect(hooks).toEqual([]);
    expect(copy.log.map((op) => op.op)).toEqual(MIXED.map(() => 'open'));
    const perCall = (events: ToolEvent[], index: number) => events.filter((e) => e.index === index).map((e) => e.type);
    for (let i = 0; i < MIXED.length; i++) expect(perCall(again.events, i)).toEqual(perCall(first.events, i));
    const updates = ofType(again.events, 'tool_execution_update').filter((e) => e.index === 0).map((e) => e.progress);
    expect(updates).toEqual(['a: half', 'a: all']);
    const end = ofType(again.events, 'tool_execution_end').find((e) => e.index === 7)!;
    expect(end).toMatchObject({ replayed: true, outcome: 'ok', result: { details: { held: true } } });
    expect(json(again.batch)).toEqual(json(first.batch));
  });
});

describe('J5: a call an earlier attempt started and committed no result for follows the interruptedCalls policy', () => {
  /** Call 1 is running when the run "crashes" (its consumer leaves); call 0 was committed. */
  async function crashWhileRunning(): Promise<{ journal: MemoryJournal; starts: string[]; tools: Tool[]; calls: ToolCall[]; keys: (string | undefined)[] }> {
    const starts: string[] = [];
    const keys: (string | undefined)[] = [];
    const hold = gate();
    const pay = defineTool({
      name: 'pay',
      input: v.object({ amount: v.number() }),
      execute: async ({ amount }, { toolCallId, idempotencyKey }) => {
        starts.push(toolCallId);
        keys.push(idempotencyKey);
        if (amount > 10) await hold.promise;
        return `paid ${amount}`;
      },
    });
    const calls = [
      { id: 'p0', name: 'pay', arguments: { amount: 5 } },
      { id: 'p1', name: 'pay', arguments: { amount: 50 } },
    ];
    const journal = memoryJournal();
    await runUntil(runTools(calls, { tools: [pay], journal }), 1);
    hold.open();
    return { journal, starts, tools: [pay], calls, keys };
  }

  it("J5 'unknown' (the default) answers it without running, interrupted, telling the model its outcome is unknown; the answer is committed", async () => {
    const { journal, starts, tools, calls } = await crashWhileRunning();
    expect(journal.entries.get(1)!.state).toBe('started');
    expect(starts).toEqual(['p0', 'p1']);
    const copy = journal.copy();
    const again = await collect(runTools(calls, { tools, journal: copy }));
    // Fails if the interrupted call ran again, or were answered silently.
    expect(starts).toEqual(['p0', 'p1']);
    const end = ofType(again.events, 'tool_execution_end').find((e) => e.index === 1)!;
    expect(end.outcome).toBe('interrupted');
    expect(end.isError).toBe(true);
    expect(text(again.batch.messages[1]!)).toMatch(/outcome is unknown \(it may or may not have taken effect\)\. Check whether it took effect before calling it again\./);
    expect(copy.entries.get(1)!.result!.outcome).toBe('interrupted');
    expect(text(again.batch.messages[0]!)).toBe('paid 5');
  });

  it("J5 'run-again' runs it again with the same ctx.idempotencyKey (at-least-once); a policy function decides per call", async () => {
    const { journal, starts, tools, calls, keys } = await crashWhileRunning();
    const asked: number[] = [];
    const policy: InterruptedCallPolicy = (call) => {
      asked.push(call.index);
      return 'run-again';
    };
    const again = await collect(runTools(calls, { tools, journal: journal.copy(), interruptedCalls: policy }));
    expect(asked).toEqual([1]);
    expect(starts).toEqual(['p0', 'p1', 'p1']);
    // Fails if the key changed between attempts (a service could not tell it is the same payment).
    expect(keys).toEqual(['memory:1'.replace('1', '0'), 'memory:1', 'memory:1']);
    expect(again.batch.messages.map(text)).toEqual(['paid 5', 'paid 50']);
  });

  it('J5 ctx.idempotencyKey reaches every attempt of withRetry and a child run by callTool / withTimeout', async () => {
    const { callTool, withRetry, withTimeout } = await import('../../lib/index.ts');
    const keys: (string | undefined)[] = [];
    let attempts = 0;
    const flaky = defineTool({
      name: 'flaky',
      input: v.object({}),
      execute: (_i, { idempotencyKey }) => {
        keys.push(idempotencyKey);
        if (++attempts < 2) throw new Error('try again');
        return 'ok';
      },
    });
    const child = defineTool({ name: 'child', input: v.object({}), execute: (_i, { idempotencyKey }) => (keys.push(idempotencyKey), 'child ok') });
    const parent = defineTool({
      name: 'parent',
      input: v.object({}),
      async *execute(_i, context) {
        return (yield* callTool(child, {}, context)).content;
      },
    });
    const tools = [withRetry(flaky, { retries: 1, backoff: { baseMs: 0, maxDelayMs: 0 } }), parent, withTimeout(defineTool({ name: 'timed', input: v.object({}), execute: (_i, { idempotencyKey }) => (keys.push(idempotencyKey), 't') }), 60_000)];
    const { batch } = await collect(runTools([{ id: 'f', name: 'flaky', arguments: {} }, { id: 'p', name: 'parent', arguments: {} }, { id: 't', name: 'timed', arguments: {} }], { tools, journal: memoryJournal({ key: 'wf' }), maxConcurrency: 1 }));
    expect(batch.messages.map((m) => m.isError)).toEqual([false, false, false]);
    // Fails if a wrapper drops the key (a spread copies no getter).
    expect(keys).toEqual(['wf:0', 'wf:0', 'wf:1', 'wf:2']);
  });

  /**
   * Calls 1–6 end while call 0 still runs, and the "crash" comes before any of their commits
   * landed (an engine whose writes were in flight): all seven are `'started'`.
   */
  it("J5 'unknown': a started call the run itself rejected before any application or tool code (unknown tool, not JSON, bad argument) gets its true result; a hook's block, an async schema and prepareArguments stay unknown", async () => {
    const starts: string[] = [];
    const hookCalls: string[] = [];
    const hold = gate();
    // Call 0 is held only in the attempt that "crashes".
    let holding = false;
    const pay = defineTool({
      name: 'pay',
      input: v.object({ amount: v.number() }),
      execute: async ({ amount }, { toolCallId }) => {
        starts.push(toolCallId);
        if (amount > 10 && holding) await hold.promise;
        return `paid ${amount}`;
      },
    });
    // An async refinement may ask a service whose answer changes between attempts.
    const lookup = defineTool({
      name: 'lookup',
      input: withJsonSchema(v.objectAsync({ id: v.pipeAsync(v.string(), v.checkAsync(async () => false, 'no such id')) }), { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] }),
      execute: ({ id }, { toolCallId }) => (starts.push(toolCallId), id),
    });
    // The tool's own code reads the arguments first: not the run's decision.
    const shaped = defineTool({
      name: 'shaped',
      input: v.object({ n: v.number() }),
      prepareArguments: (args) => args,
      execute: ({ n }, { toolCallId }) => (starts.push(toolCallId), `n ${n}`),
    });
    const calls: ToolCall[] = [
      { id: 'x0', name: 'pay', arguments: { amount: 50 } },
      { id: 'x1', name: 'nope', arguments: {} },
      { id: 'x2', name: 'pay', arguments: '{"amount": 3' },
      { id: 'x3', name: 'pay', arguments: { amount: 'lots' } },
      { id: 'x4', name: 'pay', arguments: { amount: 7 } },
      { id: 'x5', name: 'lookup', arguments: { id: 'k' } },
      { id: 'x6', name: 'shaped', arguments: { n: 'one' } },
    ];
    const beforeToolCall: RunToolsOptions['beforeToolCall'] = ({ toolCall }) => {
      hookCalls.push(toolCall.id);
      if (toolCall.id === 'x4') throw new Error('policy service down');
      return undefined;
    };
    const options = { tools: [pay, lookup, shaped], beforeToolCall };
    const clean = await collect(runTools(calls, options));
    starts.length = 0;
    hookCalls.length = 0;

    holding = true;
    const journal = memoryJournal();
    // The writes the crash lost: every commit of the first attempt stays in flight.
    const losing: ToolJournal = { open: (call) => ({ ...journal.open(call), commit: () => new Promise<void>(() => undefined) }) };
    const ended = new Set<number>();
    const first = runTools(calls, { ...options, journal: losing });
    for await (const event of first) {
      if (event.type === 'tool_execution_end') ended.add(event.index);
      if ([1, 2, 3, 4, 5, 6].every((i) => ended.has(i))) break;
    }
    hold.open();
    expect([...journal.entries.values()].map((e) => e.state)).toEqual(['started', 'started', 'started', 'started', 'started', 'started', 'started']);
    expect(starts).toEqual(['x0']);

    const again = await collect(runTools(calls, { ...options, journal: journal.copy() }));
    const texts = again.batch.messages.map(text);
    // Fails if the run's own rejections are answered "outcome unknown" (the behaviour before):
    // "No tool named …", the JSON error and the validation error are the clean run's, word for word.
    for (const i of [1, 2, 3]) expect(json(again.batch.messages[i]), `call ${i}`).toEqual(json(clean.batch.messages[i]));
    expect(texts[1]).toMatch(/^No tool named "nope"/);
    expect(ofType(again.events, 'tool_execution_end').filter((e) => [1, 2, 3].includes(e.index)).map((e) => e.outcome)).toEqual(['rejected', 'rejected', 'rejected']);
    // Fails if user code's answers are trusted across attempts: a throwing hook (it ran, it
    // may have had effects, it may answer differently now), an async schema and
    // prepareArguments stay "outcome unknown", as the running call 0 does.
    for (const i of [0, 4, 5, 6]) expect(texts[i], `call ${i}`).toMatch(/its outcome is unknown/);
    expect(ofType(again.events, 'tool_execution_end').filter((e) => [0, 4, 5, 6].includes(e.index)).map((e) => e.outcome)).toEqual(['interrupted', 'interrupted', 'interrupted', 'interrupted']);
    // No tool ran again.
    expect(starts).toEqual(['x0']);
  });

  it('J5 ctx.idempotencyKey is undefined without a journal', async () => {
    let key: string | undefined = 'unset';
    const tool = defineTool({ name: 't', input: v.object({}), execute: (_i, ctx) => ((key = ctx.idempotencyKey), 'ok') });
    await collect(runTools([{ id: 'a', name: 't', arguments: {} }], { tools: [tool] }));
    expect(key).toBeUndefined();
  });
});

describe('J6: decisions are journaled before the call runs; nobody is asked twice', () => {
  const calls: ToolCall[] = [
    { id: 'd0', name: 'remove', arguments: { path: 'a' } },
    { id: 'd1', name: 'remove', arguments: { path: 'b' } },
  ];
  function removeTool(starts: string[], hold?: Promise<void>) {
    return defineTool({
      name: 'remove',
      input: v.object({ path: v.string() }),
      needsApproval: true,
      execute: async ({ path }, { toolCallId }) => {
        starts.push(toolCallId);
        if (path === 'a' && hold !== undefined) await hold;
        return `removed ${path}`;
      },
    });
  }

  it('J6 a decision from approve is journaled (decide) before the call runs, and replayed calls ask nobody', async () => {
    const starts: string[] = [];
    const asked: number[] = [];
    const journal = memoryJournal({ async: true });
    const approve = (r: { approvalId: string; index: number }) => {
      asked.push(r.index);
      return r.index === 0 ? { approvalId: r.approvalId, approved: true } : { approvalId: r.approvalId, approved: false, reason: 'not b' };
    };
    await collect(runTools(calls, { tools: [removeTool(starts)], journal, approve }));
    expect(journal.log.filter((op) => op.op !== 'progress').map((op) => `${op.op} ${op.index}`)).toEqual(['open 0', 'decide 0', 'open 1', 'decide 1', 'commit 0', 'commit 1']);
    expect(journal.entries.get(1)!.decision).toEqual({ approved: false, reason: 'not b' });
    const again = await collect(runTools(calls, { tools: [removeTool(starts)], journal: journal.copy(), approve }));
    // Fails if approve were asked again for a call the journal answered.
    expect(asked).toEqual([0, 1]);
    expect(starts).toEqual(['d0']);
    expect(again.batch.messages.map(text)).toEqual(['removed a', 'A person denied this call to tool "remove", so it was not run. Their reason: "not b". Do not try it again unless the user asks you to.']);
  });

  it("J6 a call approved and interrupted runs again without asking ('run-again'); one waiting for approval at the crash is asked, not answered 'unknown'", async () => {
    const starts: string[] = [];
    const hold = gate();
    const asked: number[] = [];
    const journal = memoryJournal();
    const answers = gate();
    const approve = async (r: { approvalId: string; index: number }) => {
      asked.push(r.index);
      if (r.index === 1) await answers.promise; // the person has not answered call 1 yet at the crash
      return { approvalId: r.approvalId, approved: true };
    };
    // d0 runs (approved) and hangs; d1 waits for its approval: then the process "crashes" —
    // the copy is what the engine's store holds at that instant.
    const controller = new AbortController();
    const reading = collect(runTools(calls, { tools: [removeTool(starts, hold.promise)], journal, approve, signal: controller.signal, maxConcurrency: 2 }));
    await settle();
    expect(asked).toEqual([0, 1]);
    expect(starts).toEqual(['d0']);
    const crashed = journal.copy();
    controller.abort();
    hold.open();
    answers.open();
    await reading;
    expect(crashed.entries.get(0)).toMatchObject({ state: 'started', decision: { approved: true } });
    expect(crashed.entries.get(1)).toMatchObject({ state: 'started' });
    expect(crashed.entries.get(1)!.decision).toBeUndefined();
    // Default policy: d0 may have run → unknown, asked nobody; d1 never ran (no decision journaled) → asked and run.
    const again = await collect(runTools(calls, { tools: [removeTool(starts)], journal: crashed.copy(), approve }));
    expect(asked).toEqual([0, 1, 1]);
    expect(starts).toEqual(['d0', 'd1']);
    expect(ofType(again.events, 'tool_execution_end').map((e) => [e.index, e.outcome])).toEqual(expect.arrayContaining([[0, 'interrupted'], [1, 'ok']]));
    // 'run-again': d0 runs again on its journaled approval, nobody asked.
    const third = await collect(runTools(calls, { tools: [removeTool(starts)], journal: crashed.copy(), approve, interruptedCalls: 'run-again' }));
    expect(asked).toEqual([0, 1, 1, 1]);
    expect(starts).toEqual(['d0', 'd1', 'd0', 'd1']);
    expect(third.batch.messages.map(text)).toEqual(['removed a', 'removed b']);
  });

  it('J6 a call deferred for approval (no approve) is not committed; resumed with the same journal, ended calls replay and the resumed call runs', async () => {
    const starts: string[] = [];
    const read = defineTool({ name: 'read', input: v.object({}), execute: (_i, { toolCallId }) => (starts.push(toolCallId), 'read') });
    const batchCalls: ToolCall[] = [{ id: 'r0', name: 'read', arguments: {} }, calls[0]!];
    const tools = [read, removeTool(starts)];
    const journal = memoryJournal();
    const paused = await collect(runTools(batchCalls, { tools, journal }));
    expect(paused.batch.paused).toBeDefined();
    expect(journal.entries.get(0)!.state).toBe('ended');
    expect(journal.entries.get(1)!.state).toBe('started');
    const request = paused.batch.paused!.requests[0]!;
    const resumed = await collect(runTools(batchCalls, { tools, journal, resume: { state: paused.batch.paused!.state, approvals: [{ approvalId: request.approvalId, approved: true }] } }));
    // Fails if the deferred call were answered "unknown" (it never ran) or the resume's decision not journaled.
    expect(resumed.batch.messages.map(text)).toEqual(['read', 'removed a']);
    expect(journal.entries.get(1)).toMatchObject({ state: 'ended', decision: { approved: true } });
    expect(starts).toEqual(['r0', 'd0']);
  });
});

describe('J9: a journal that fails makes the generator throw a JournalError; every call is answered or aborted, nothing hangs', () => {
  function failing(operation: 'open' | 'prior' | 'decide' | 'commit', at: number, how: 'throw' | 'reject'): ToolJournal {
    const inner = memoryJournal();
    const fail = (): never => {
      throw new Error(`disk full at ${operation} ${at}`);
    };
    const failAsync = (): Promise<never> => Promise.reject(new Error(`disk full at ${operation} ${at}`));
    return {
      open(call) {
        if (operation === 'open' && call.index === at) fail();
        const entry = inner.open(call);
        if (call.index !== at) return entry;
        return {
          get prior() {
            if (operation === 'prior') return how === 'throw' ? fail() : failAsync();
            return entry.prior;
          },
          idempotencyKey: entry.idempotencyKey,
          decide: operation === 'decide' ? (how === 'throw' ? fail : failAsync) : entry.decide,
          commit: operation === 'commit' ? (how === 'throw' ? fail : failAsync) : entry.commit,
        };
      },
    };
  }

  for (const operation of ['open', 'prior', 'decide', 'commit'] as const) {
    for (const how of ['throw', 'reject'] as const) {
      it(`J9 ${operation} that ${how}s at call 1: JournalError naming the call and the operation; running tools aborted and returned; no result of call 1 or later emitted`, async () => {
        const finals: string[] = [];
        const tool = defineTool({
          name: 't',
          input: v.object({}),
          needsApproval: (_input, { index }) => index === 1,
          async *execute(_input, { index, signal }) {
            try {
              if (index === 2) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
              yield index;
              return `r${index}`;
            } finally {
              finals.push(`t${index}`);
            }
          },
        });
        const calls = [0, 1, 2].map((i) => ({ id: `c${i}`, name: 't', arguments: {} }));
        const events: ToolEvent[] = [];
        let thrown: unknown;
        try {
          for await (const event of runTools(calls, { tools: [tool], journal: failing(operation, 1, how), approve: (r) => ({ approvalId: r.approvalId, approved: true }) })) events.push(event);
        } catch (error) {
          thrown = error;
        }
        // Fails if the failure were swallowed (a result emitted that the journal does not hold) or the run hung.
        expect(thrown).toBeInstanceOf(JournalError);
        const error = thrown as JournalError;
        expect(error.operation).toBe(operation);
        expect(error.index).toBe(1);
        expect(error.message).toContain(`journal's ${operation} failed for call 1 (tool "t", id "c1")`);
        expect((error.cause as Error).message).toBe(`disk full at ${operation} 1`);
        expect(ofType(events, 'tool_result').map((e) => e.index).filter((i) => i >= 1)).toEqual([]);
        // Call 1 ran only when its commit failed (after it ran); otherwise the failure came before it could start.
        if (operation === 'commit') expect(finals).toContain('t1');
        else expect(finals).not.toContain('t1');
        if (finals.includes('t2') || events.some((e) => e.type === 'tool_execution_start' && e.index === 2)) expect(finals).toContain('t2');
      });
    }
  }
});

describe('J10: a run without a journal does no journal work', () => {
  it('J10 the same batch gives the same events with and without a journal (but replayed)', async () => {
    const a = await collect(runTools(MIXED, mixedOptions(mixedTools([]))));
    const b = await collect(runTools(MIXED, mixedOptions(mixedTools([]), { journal: memoryJournal() })));
    // Fails if journaling changed a result or an event.
    expect(json(b.events.map(strip))).toEqual(json(a.events.map(strip)));
  });

  it('J10 options are checked: a malformed journal or policy is a TypeError naming the field', () => {
    expect(() => runTools([], { tools: [], journal: {} as never })).toThrow(/options\.journal must be a journal \(an object with a open function\), received object \{\}/);
    expect(() => runTools([], { tools: [], interruptedCalls: 'retry' as never })).toThrow(/options\.interruptedCalls must be 'unknown', 'run-again' or a function of the call, received .*"retry"/);
  });
});

/** Events without what depends on timing: the end events' clock times (O7). */
function strip(event: ToolEvent): unknown {
  if (event.type !== 'tool_execution_end') return event;
  const { startedAt: _startedAt, endedAt: _endedAt, ...rest } = event;
  return rest;
}

void vi;

describe('J8: runAgent journals each model reply; a journaled turn is not asked again', () => {
  type Reply = import('../../lib/index.ts').AssistantMessage;
  /** A model whose replies differ on every ask (fresh ids): a turn asked again would change the run. */
  function model(streamed: boolean) {
    const asked: number[] = [];
    let asks = 0;
    const fn = (_messages: readonly unknown[], { turn }: { turn: number }) => {
      asked.push(turn);
      const n = ++asks;
      const reply: Reply =
        turn === 1
          ? { role: 'assistant', content: [{ type: 'text', text: 'two steps' }, { type: 'toolCall', id: `a${n}`, name: 'step', arguments: { x: 1 } }, { type: 'toolCall', id: `b${n}`, name: 'step', arguments: { x: 2 } }] }
          : turn === 2
            ? { role: 'assistant', content: [{ type: 'toolCall', id: `c${n}`, name: 'step', arguments: { x: 3 } }] }
            : { role: 'assistant', content: [{ type: 'text', text: 'done' }] };
      if (!streamed) return Promise.resolve(reply);
      return (async function* () {
        for (const block of reply.content) {
          await Promise.resolve();
          if (block.type === 'text') yield { type: 'text_delta' as const, text: block.text };
          else if (block.type === 'toolCall') yield { type: 'tool_call' as const, call: { id: block.id, name: block.name, arguments: block.arguments } };
        }
      })();
    };
    return { fn, asked };
  }
  function stepTool(starts: string[]) {
    return defineTool({ name: 'step', input: v.object({ x: v.number() }), execute: ({ x }, { toolCallId }) => (starts.push(toolCallId), `step ${x} done`) });
  }

  for (const streamed of [false, true]) {
    it(`J8 a crash in turn 2: the rerun replays turns 1–2's replies (model not asked), runs no committed call again, and ends as the clean run (${streamed ? 'streamed' : 'whole'} replies)`, async () => {
      const { runAgent } = await import('../../lib/index.ts');
      const { memoryAgentJournal } = await import('../../lib/testing.ts');
      const cleanStarts: string[] = [];
      const clean = model(streamed);
      const cleanRun = runAgent({ model: clean.fn as never, tools: [stepTool(cleanStarts)], messages: [{ role: 'user', content: 'go' }] });
      let cleanResult;
      for (let step = await cleanRun.next(); ; step = await cleanRun.next()) if (step.done === true) { cleanResult = step.value; break; }

      const starts: string[] = [];
      const first = model(streamed);
      const journal = memoryAgentJournal();
      const run = runAgent({ model: first.fn as never, tools: [stepTool(starts)], messages: [{ role: 'user', content: 'go' }], journal });
      for await (const event of run) if (event.type === 'tool_result' && event.message.toolCallId.startsWith('c')) break; // "crash" after turn 2's result, before turn 3
      expect(first.asked).toEqual([1, 2]);
      const again = model(streamed);
      const events: import('../../lib/index.ts').AgentEvent[] = [];
      const rerun = runAgent({ model: again.fn as never, tools: [stepTool(starts)], messages: [{ role: 'user', content: 'go' }], journal: journal.copy() });
      let result;
      for (let step = await rerun.next(); ; step = await rerun.next()) {
        if (step.done === true) {
          result = step.value;
          break;
        }
        events.push(step.value);
      }
      // Fails if a journaled turn asked the model again (its fresh ids would change the history).
      expect(again.asked).toEqual([3]);
      expect(starts).toEqual(['a1', 'b1', 'c2']);
      const messages = events.filter((e) => e.type === 'message');
      expect(messages.map((e) => (e as { replayed?: true }).replayed)).toEqual([true, true, undefined]);
      expect(events.filter((e) => e.type === 'message_update' && e.turn < 3)).toEqual([]);
      expect(result.reason).toBe('completed');
      // Fails if the rerun's history differs from the clean run's (a reply or a result replayed wrongly).
      expect(json(result.messages)).toEqual(json(cleanResult.messages));
    });
  }

  it('J8 a journaled run that pauses for approval resumes with the same journal; the resumed call is journaled', async () => {
    const { runAgent } = await import('../../lib/index.ts');
    const { memoryAgentJournal, scriptedModel } = await import('../../lib/testing.ts');
    const starts: string[] = [];
    const guarded = defineTool({ name: 'guarded', input: v.object({}), needsApproval: true, execute: (_i, { toolCallId }) => (starts.push(toolCallId), 'ran') });
    const script = scriptedModel([
      { role: 'assistant', content: [{ type: 'toolCall', id: 'g1', name: 'guarded', arguments: {} }] },
      { role: 'assistant', content: [{ type: 'text', text: 'ok' }] },
    ]);
    const journal = memoryAgentJournal();
    let paused;
    const run = runAgent({ model: script, tools: [guarded], messages: [{ role: 'user', content: 'go' }], journal });
    for (let step = await run.next(); ; step = await run.next()) if (step.done === true) { paused = step.value; break; }
    expect(paused.reason).toBe('paused');
    const request = paused.paused!.requests[0]!;
    const resumed = runAgent({ model: script, tools: [guarded], journal, resume: { state: paused.paused!.state, approvals: [{ approvalId: request.approvalId, approved: true }] } });
    let end;
    for (let step = await resumed.next(); ; step = await resumed.next()) if (step.done === true) { end = step.value; break; }
    expect(end.reason).toBe('completed');
    expect(starts).toEqual(['g1']);
    expect(journal.batches.get(1)!.entries.get(0)).toMatchObject({ state: 'ended', decision: { approved: true } });
    expect(journal.replies.size).toBe(2);
  });
});
