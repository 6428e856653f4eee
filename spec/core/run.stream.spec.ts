/**
 * Contract S4: `runTools` over an `AsyncIterable<ToolCall>` (calls still arriving while the
 * model streams). Every ordering rule of S1–S3, O1–O4 and P1 holds unchanged; the specs
 * below drive a hand-controlled stream with gates, never sleeps.
 */
import * as v from 'valibot';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { defineTool, runTools, type ToolCall, type ToolEvent } from '../../lib/index.ts';
import { Run } from '../../lib/core/run/run.ts';
import { MergeEngine } from '../../lib/core/streams/merge.ts';
import { collect, expectRunInvariants, gate, ofType, settle, text, type Gate } from '../helpers.ts';

/**
 * A stream of calls the test feeds by hand: `push` delivers a call, `fail` makes the next
 * read throw, `end` finishes it. Counts reads and remembers whether `return()` was called.
 */
function callStream() {
  const queued: Array<{ call: ToolCall } | { error: unknown } | { done: true }> = [];
  let waiting: Gate<void> | undefined;
  const probe = { reads: 0, returned: false };
  const deliver = (item: (typeof queued)[number]) => {
    queued.push(item);
    waiting?.open();
  };
  const iterator: AsyncIterator<ToolCall> = {
    async next() {
      probe.reads++;
      while (queued.length === 0) {
        waiting = gate();
        await waiting.promise;
        waiting = undefined;
      }
      const item = queued.shift()!;
      if ('error' in item) throw item.error;
      if ('done' in item) return { done: true, value: undefined };
      return { done: false, value: item.call };
    },
    async return() {
      probe.returned = true;
      return { done: true, value: undefined };
    },
  };
  return {
    iterable: { [Symbol.asyncIterator]: () => iterator } as AsyncIterable<ToolCall>,
    push: (call: ToolCall) => deliver({ call }),
    fail: (error: unknown) => deliver({ error }),
    end: () => deliver({ done: true }),
    probe,
  };
}

/** Tools whose bodies wait on a gate per call id and log `start`/`end`. */
function gatedTools() {
  const gates = new Map<string, Gate>();
  const log: string[] = [];
  const gateOf = (id: string) => {
    if (!gates.has(id)) gates.set(id, gate());
    return gates.get(id)!;
  };
  const body = async (id: string, signal: AbortSignal) => {
    log.push(`start ${id}`);
    try {
      await Promise.race([
        gateOf(id).promise,
        new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true })),
      ]);
      return `done ${id}`;
    } finally {
      log.push(`end ${id}`);
    }
  };
  const p = defineTool({ name: 'p', input: v.object({}), execute: (_i, { toolCallId, signal }) => body(toolCallId, signal) });
  const x = defineTool({ name: 'x', input: v.object({}), executionMode: 'sequential', execute: (_i, { toolCallId, signal }) => body(toolCallId, signal) });
  return { tools: [p, x], log, open: (id: string) => gateOf(id).open() };
}

const call = (id: string, name = 'p'): ToolCall => ({ id, name, arguments: {} });

/** Collects a run's events while the test drives it; `done` settles with the batch or the error. */
function drive(run: AsyncGenerator<ToolEvent, unknown, undefined>) {
  const events: ToolEvent[] = [];
  const done = (async () => {
    for (;;) {
      const step = await run.next();
      if (step.done === true) return step.value;
      events.push(step.value);
    }
  })();
  done.catch(() => {});
  return { events, done };
}

describe('S4 calls from an async iterable are prepared and started on arrival', () => {
  afterEach(() => {
    vi.restoreAllMocks();
    vi.useRealTimers();
  });

  it('prepares each call as soon as it arrives and starts it while the stream is still open', async () => {
    const s = callStream();
    const t = gatedTools();
    const prepared: string[] = [];
    const run = drive(runTools(s.iterable, { tools: t.tools, beforeToolCall: ({ toolCall }) => void prepared.push(toolCall.id) }));
    await settle();
    expect(run.events).toEqual([]);

    s.push(call('a'));
    await settle();
    expect(prepared).toEqual(['a']);
    expect(t.log).toEqual(['start a']);
    expect(ofType(run.events, 'tool_execution_start').map((e) => e.toolCallId)).toEqual(['a']);

    s.push(call('b'));
    await settle();
    // b runs next to a: it did not wait for a, nor for the end of the stream.
    expect(prepared).toEqual(['a', 'b']);
    expect(t.log).toEqual(['start a', 'start b']);

    s.end();
    t.open('b');
    t.open('a');
    const batch = await run.done;
    expectRunInvariants([call('a'), call('b')], run.events, batch as never);
  });

  it('keeps prepare serial in arrival order: a call arriving during a pending permission prompt waits for it (P1)', async () => {
    const s = callStream();
    const t = gatedTools();
    const prompts = new Map<string, Gate<void>>();
    const asked: string[] = [];
    const run = drive(
      runTools(s.iterable, {
        tools: t.tools,
        beforeToolCall: async ({ toolCall }) => {
          asked.push(toolCall.id);
          const g = gate();
          prompts.set(toolCall.id, g);
          await g.promise;
        },
      }),
    );
    s.push(call('a'));
    s.push(call('b'));
    await settle();
    expect(asked).toEqual(['a']);
    expect(t.log).toEqual([]);

    prompts.get('a')!.open();
    await settle();
    // a starts as soon as its own prompt is answered; b's prompt comes only now.
    expect(t.log).toEqual(['start a']);
    expect(asked).toEqual(['a', 'b']);

    prompts.get('b')!.open();
    await settle();
    expect(t.log).toEqual(['start a', 'start b']);
    s.end();
    t.open('a');
    t.open('b');
    await run.done;
  });

  it('starts a call as soon as the scheduler allows: at the concurrency cap it starts when a slot frees (S1)', async () => {
    const s = callStream();
    const t = gatedTools();
    const run = drive(runTools(s.iterable, { tools: t.tools, maxConcurrency: 1 }));
    s.push(call('a'));
    s.push(call('b'));
    await settle();
    expect(t.log).toEqual(['start a']);
    t.open('a');
    await settle();
    expect(t.log).toEqual(['start a', 'end a', 'start b']);
    t.open('b');
    s.end();
    await run.done;
  });

  it('releases tool_result events in call order while tool_execution_end follows completion order (O2, O3)', async () => {
    const s = callStream();
    const t = gatedTools();
    const run = drive(runTools(s.iterable, { tools: t.tools }));
    s.push(call('a'));
    s.push(call('b'));
    s.push(call('c'));
    await settle();
    t.open('c');
    t.open('b');
    await settle();
    expect(ofType(run.events, 'tool_execution_end').map((e) => e.toolCallId)).toEqual(['c', 'b']);
    expect(ofType(run.events, 'tool_result')).toEqual([]);
    t.open('a');
    await settle();
    expect(ofType(run.events, 'tool_result').map((e) => e.message.toolCallId)).toEqual(['a', 'b', 'c']);
    s.end();
    const batch = await run.done;
    expectRunInvariants([call('a'), call('b'), call('c')], run.events, batch as never);
  });

  it('an exclusive tool arriving on the stream still waits for every earlier call, and holds back later ones (S3)', async () => {
    const s = callStream();
    const t = gatedTools();
    const run = drive(runTools(s.iterable, { tools: t.tools }));
    s.push(call('p0'));
    s.push(call('x1', 'x'));
    s.push(call('p2'));
    await settle();
    expect(t.log).toEqual(['start p0']);
    t.open('p0');
    await settle();
    expect(t.log).toEqual(['start p0', 'end p0', 'start x1']);
    t.open('x1');
    await settle();
    expect(t.log).toEqual(['start p0', 'end p0', 'start x1', 'end x1', 'start p2']);
    t.open('p2');
    s.end();
    const batch = await run.done;
    expectRunInvariants([call('p0'), call('x1', 'x'), call('p2')], run.events, batch as never);
  });

  it('a call waiting behind an exclusive tool costs no CPU: no timer, no wake-up, no read while it waits', async () => {
    vi.useFakeTimers();
    const pumps = vi.spyOn(Run.prototype, 'pump');
    const handles = vi.spyOn(Run.prototype, 'handle');
    const waits = vi.spyOn(MergeEngine.prototype, 'wait');
    const s = callStream();
    const t = gatedTools();
    const run = drive(runTools(s.iterable, { tools: t.tools }));
    s.push(call('x0', 'x'));
    s.push(call('p1'));
    s.push(call('p2'));
    await settle();
    expect(t.log).toEqual(['start x0']);
    const before = { pumps: pumps.mock.calls.length, handles: handles.mock.calls.length, waits: waits.mock.calls.length, reads: s.probe.reads };

    // Many turns of the event loop and a long stretch of (fake) time while x0 runs.
    await settle(50);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(vi.getTimerCount()).toBe(0);
    expect({ pumps: pumps.mock.calls.length, handles: handles.mock.calls.length, waits: waits.mock.calls.length, reads: s.probe.reads }).toEqual(before);
    expect(t.log).toEqual(['start x0']);

    t.open('x0');
    await settle();
    expect(t.log).toEqual(['start x0', 'end x0', 'start p1', 'start p2']);
    t.open('p1');
    t.open('p2');
    s.end();
    await run.done;
  });

  it('stream throws mid-stream: every received call gets its result, running ones finish, nothing more starts, then the error is rethrown (O1)', async () => {
    const s = callStream();
    const t = gatedTools();
    const upstream = new Error('upstream 503');
    const run = drive(runTools(s.iterable, { tools: t.tools }));
    s.push(call('a'));
    s.push(call('b'));
    await settle();
    s.fail(upstream);
    s.push(call('never'));
    await settle();
    expect(t.log).toEqual(['start a', 'start b']);
    // The error waits until every running call has been answered.
    expect(ofType(run.events, 'tool_result')).toEqual([]);
    t.open('b');
    t.open('a');
    await expect(run.done).rejects.toBe(upstream);
    expect(t.log).toEqual(['start a', 'start b', 'end b', 'end a']);
    expect(ofType(run.events, 'tool_result').map((e) => [e.message.toolCallId, e.message.isError])).toEqual([
      ['a', false],
      ['b', false],
    ]);
    expect(ofType(run.events, 'tool_execution_start').map((e) => e.toolCallId)).toEqual(['a', 'b']);
  });

  it('stream throws while an exclusive call runs: the call finishes and is answered before the error', async () => {
    const s = callStream();
    const t = gatedTools();
    const run = drive(runTools(s.iterable, { tools: t.tools }));
    s.push(call('x0', 'x'));
    await settle();
    s.fail(new Error('connection reset'));
    await settle();
    t.open('x0');
    await expect(run.done).rejects.toThrow('connection reset');
    expect(ofType(run.events, 'tool_result').map((e) => e.message.toolCallId)).toEqual(['x0']);
  });

  it('run aborted mid-stream: received calls are answered (interrupted), the stream is let go, nothing more starts (O1, A2)', async () => {
    const s = callStream();
    const t = gatedTools();
    const controller = new AbortController();
    const run = drive(runTools(s.iterable, { tools: t.tools, signal: controller.signal }));
    s.push(call('a'));
    await settle();
    expect(t.log).toEqual(['start a']);
    controller.abort();
    await settle();
    // A call the model finishes after the abort is never started.
    s.push(call('late'));
    await settle();
    const batch = (await run.done) as { aborted: boolean; messages: { toolCallId: string }[] };
    expect(batch.aborted).toBe(true);
    expect(batch.messages.map((m) => m.toolCallId)).toEqual(['a']);
    expect(t.log).toEqual(['start a', 'end a']);
    expect(ofType(run.events, 'tool_execution_end').map((e) => e.outcome)).toEqual(['interrupted']);
    expect(s.probe.returned).toBe(true);
  });

  it('run aborted mid-stream while the stream read is pending: a late call or a late stream error after the abort changes nothing', async () => {
    for (const late of ['call', 'error'] as const) {
      const s = callStream();
      const stopped = gate();
      // Ignores its signal for a while, so the run is still winding down (grace) when the late item comes.
      const slow = defineTool({ name: 'p', input: v.object({}), execute: async () => void (await stopped.promise) });
      const controller = new AbortController();
      const run = drive(runTools(s.iterable, { tools: [slow], signal: controller.signal, abortGraceMs: 60_000 }));
      s.push(call('a'));
      await settle();
      controller.abort();
      await settle();
      if (late === 'call') s.push(call('late'));
      else s.fail(new DOMException('This operation was aborted', 'AbortError'));
      await settle();
      stopped.open();
      const batch = (await run.done) as { aborted: boolean; messages: { toolCallId: string }[] };
      expect(batch.aborted, late).toBe(true);
      expect(batch.messages.map((m) => m.toolCallId), late).toEqual(['a']);
      expect(ofType(run.events, 'tool_execution_start').map((e) => e.toolCallId), late).toEqual(['a']);
    }
  });

  it('a call arriving after an abort of a run blocked behind an exclusive call gets no result and never starts', async () => {
    const s = callStream();
    const t = gatedTools();
    const controller = new AbortController();
    const run = drive(runTools(s.iterable, { tools: t.tools, signal: controller.signal }));
    s.push(call('x0', 'x'));
    s.push(call('p1'));
    await settle();
    controller.abort();
    const batch = (await run.done) as { messages: { toolCallId: string }[] };
    expect(batch.messages.map((m) => m.toolCallId)).toEqual(['x0']);
    expect(t.log).toEqual(['start x0', 'end x0']);
  });

  it('a call the stream adapter marked incomplete is answered with the cut-off error and never runs (case C16)', async () => {
    const bodies: string[] = [];
    const write = defineTool({ name: 'write', input: v.object({ path: v.string() }), execute: ({ path }) => void bodies.push(path) });
    async function* stream(): AsyncGenerator<ToolCall> {
      yield { id: 'w1', name: 'write', arguments: '{"path":"a"}' };
      yield { id: 'w2', name: 'write', arguments: '{"path":"b', incomplete: 'the output limit (stop_reason "max_tokens")' };
    }
    const { events, batch } = await collect(runTools(stream(), { tools: [write] }));
    expect(bodies).toEqual(['a']);
    expect(batch.messages[1]!.isError).toBe(true);
    expect(text(batch.messages[1]!)).toContain('cut off by the output limit (stop_reason "max_tokens")');
    expect(ofType(events, 'tool_execution_end').find((e) => e.index === 1)!.outcome).toBe('rejected');
  });
});
