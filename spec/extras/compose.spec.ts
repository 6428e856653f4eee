/**
 * Composition (lib/extras/compose.ts): callTool, withTimeout, withRetry, mapProgress, and event
 * pipelines through ix operators that keep the run's cleanup (A5).
 */
import { getEventListeners } from 'node:events';
import { first, from, toArray } from 'ix/asynciterable';
import { filter, map, take, takeUntil } from 'ix/asynciterable/operators';
import * as v from 'valibot';
import { afterEach, describe, expect, expectTypeOf, it, vi } from 'vitest';
import {
  callTool,
  defineTool,
  mapProgress,
  pipeEvents,
  resultText,
  runAgent,
  runTools,
  ToolInputError,
  withRetry,
  withTimeout,
  type Tool,
  type ToolContext,
  type ToolEvent,
  type ToolOutputOf,
  type ToolResult,
  NO_CLIENT,
} from '../../lib/index.ts';
import { scriptedModel } from '../../lib/testing.ts';
import { collect, gate, ofType, settle, text } from '../helpers.ts';

afterEach(() => {
  vi.useRealTimers();
});

/** A context as the runtime would give, on a signal the test owns. */
function context(signal: AbortSignal = new AbortController().signal): ToolContext {
  return { toolCallId: 'parent_1', toolName: 'parent', index: 0, signal, client: NO_CLIENT };
}

/** Drains a generator, returning what it yielded and what it returned. */
async function drain<Y, R>(generator: AsyncGenerator<Y, R, undefined>): Promise<{ yielded: Y[]; returned: R }> {
  const yielded: Y[] = [];
  for (;;) {
    const step = await generator.next();
    if (step.done === true) return { yielded, returned: step.value };
    yielded.push(step.value);
  }
}

const reader = defineTool({
  name: 'read',
  input: v.object({ path: v.string(), lines: v.optional(v.number(), 10) }),
  async *execute({ path, lines }) {
    yield { opened: path };
    return { content: [{ type: 'text' as const, text: `${path}:${lines}` }], details: { bytes: 42 } };
  },
});

describe('callTool: delegating to another tool in one line', () => {
  it('validates with the child schema (defaults applied), forwards progress, returns the normalized result with its types', async () => {
    const parent = defineTool({
      name: 'parent',
      input: v.object({ path: v.string() }),
      async *execute({ path }, ctx) {
        const child = yield* callTool(reader, { path, lines: 3 }, ctx);
        expectTypeOf(child).toEqualTypeOf<ToolResult<{ bytes: number }>>();
        return `${resultText(child)} (${child.details?.bytes} bytes)`;
      },
    });
    expectTypeOf(parent).toEqualTypeOf<Tool<{ path: string }, { opened: string }, string, 'parent'>>();
    const { events, batch } = await collect(runTools([{ id: 'p', name: 'parent', arguments: { path: 'a.txt' } }], { tools: [parent] }));
    expect(ofType(events, 'tool_execution_update').map((e) => e.progress)).toEqual([{ opened: 'a.txt' }]);
    expect(text(batch.messages[0]!)).toBe('a.txt:3 (42 bytes)');

    // A string output comes back as one text block; the schema's default is applied.
    const plain = defineTool({ name: 'plain', input: v.object({ n: v.optional(v.number(), 7) }), execute: ({ n }) => `n=${n}` });
    const { returned } = await drain(callTool(plain, {} as { n: number }, context()));
    expect(returned).toEqual({ content: [{ type: 'text', text: 'n=7' }] });
    expectTypeOf(returned).toEqualTypeOf<ToolResult<never>>();
  });

  it('throws a ToolInputError with the P5 text when the arguments do not fit the schema', async () => {
    const error = await drain(callTool(reader, { path: 5 } as unknown as { path: string; lines: number }, context())).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolInputError);
    expect((error as ToolInputError).toolName).toBe('read');
    expect((error as Error).message).toMatch(/^Invalid arguments for tool "read":\n- path: Invalid type: Expected string but received 5\nReceived arguments: \{"path":5\}\nFix these and call the tool again\.$/);

    // Under runTools, the parent's result carries that text (P4: a throw is the call's error).
    const parent = defineTool({
      name: 'parent',
      input: v.object({}),
      async *execute(_input, ctx) {
        return yield* callTool(reader, { path: 1 } as unknown as { path: string; lines: number }, ctx);
      },
    });
    const { batch } = await collect(runTools([{ id: 'p', name: 'parent', arguments: {} }], { tools: [parent] }));
    expect(batch.messages[0]!.isError).toBe(true);
    expect(text(batch.messages[0]!)).toMatch(/^ToolInputError: Invalid arguments for tool "read":\n- path:/);
  });

  it('puts one listener on the parent signal and removes it when the child ends', async () => {
    const parent = new AbortController();
    const before = getEventListeners(parent.signal, 'abort').length;
    const hold = gate();
    let during = -1;
    const slow = defineTool({
      name: 'slow',
      input: v.object({}),
      async *execute() {
        during = getEventListeners(parent.signal, 'abort').length;
        await hold.promise;
        return 'ok';
      },
    });
    const running = drain(callTool(slow, {}, context(parent.signal)));
    await settle();
    expect(during).toBe(before + 1);
    hold.open();
    await running;
    expect(getEventListeners(parent.signal, 'abort').length).toBe(before);
  });

  it('aborts the child with the parent’s reason; a child that ignores it is let go of after graceMs', async () => {
    vi.useFakeTimers();
    const parent = new AbortController();
    let childSignal: AbortSignal | undefined;
    let returned = false;
    const stubborn = defineTool({
      name: 'stubborn',
      input: v.object({}),
      async *execute(_i, { signal }) {
        childSignal = signal;
        try {
          yield 'working';
          await new Promise<never>(() => {});
        } finally {
          returned = true;
        }
      },
    });
    const gen = callTool(stubborn, {}, context(parent.signal), { graceMs: 50 });
    expect(await gen.next()).toEqual({ done: false, value: 'working' });
    const next = gen.next().catch((e: unknown) => e);
    await settle();
    const reason = new Error('user pressed Esc');
    parent.abort(reason);
    expect(childSignal?.aborted).toBe(true);
    expect(childSignal?.reason).toBe(reason);
    await vi.advanceTimersByTimeAsync(49);
    expect(await Promise.race([next, 'pending'])).toBe('pending');
    await vi.advanceTimersByTimeAsync(1);
    expect(await next).toBe(reason);
    // The child's generator got return(); it is parked in an await, so its finally waits
    // for that await (never here), but the caller was not held up.
    expect(returned).toBe(false);
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(0);
  });

  it('refuses to start a child when the parent signal already aborted', async () => {
    const parent = new AbortController();
    parent.abort(new Error('too late'));
    let ran = false;
    const child = defineTool({ name: 'child', input: v.object({}), execute: () => void (ran = true) });
    await expect(drain(callTool(child, {}, context(parent.signal)))).rejects.toThrow('too late');
    expect(ran).toBe(false);
  });

  it('A5 through composition: when the consumer leaves runTools, the child’s finally runs and its signal aborts', async () => {
    const log: string[] = [];
    let childSignal: AbortSignal | undefined;
    const child = defineTool({
      name: 'child',
      input: v.object({}),
      async *execute(_i, { signal }) {
        childSignal = signal;
        try {
          for (let i = 0; ; i++) yield `tick ${i}`;
        } finally {
          log.push('child finally');
        }
      },
    });
    const parent = defineTool({
      name: 'parent',
      input: v.object({}),
      async *execute(_i, ctx) {
        try {
          return yield* callTool(child, {}, ctx);
        } finally {
          log.push('parent finally');
        }
      },
    });
    for await (const event of runTools([{ id: 'p', name: 'parent', arguments: {} }], { tools: [parent] })) {
      if (event.type === 'tool_execution_update' && event.progress === 'tick 2') break;
    }
    await settle();
    expect(log).toEqual(['child finally', 'parent finally']);
    expect(childSignal?.aborted).toBe(true);
    expect((childSignal?.reason as Error).name).toBe('AbortError');
  });

  it('honours the child tool’s own timeoutMs, with the runtime’s TimeoutError text', async () => {
    vi.useFakeTimers();
    const child = defineTool({
      name: 'child',
      input: v.object({}),
      timeoutMs: 200,
      execute: (_i, { signal }) => new Promise((_r, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true })),
    });
    const running = drain(callTool(child, {}, context())).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(200);
    const error = (await running) as DOMException;
    expect(error.name).toBe('TimeoutError');
    expect(error.message).toBe('Tool "child" timed out after 200 ms');
  });
});

describe('withTimeout', () => {
  it('keeps the tool’s name, schema and types; aborts its signal with a TimeoutError like the runtime’s', async () => {
    vi.useFakeTimers();
    let seen: unknown;
    const slow = defineTool({
      name: 'slow',
      input: v.object({ ms: v.number() }),
      async *execute({ ms }, { signal }) {
        yield 1;
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(resolve, ms);
          signal.addEventListener('abort', () => {
            clearTimeout(timer);
            seen = signal.reason;
            reject(signal.reason);
          }, { once: true });
        });
        return 'done';
      },
    });
    const limited = withTimeout(slow, 100);
    expectTypeOf(limited).toEqualTypeOf(slow);
    expect(limited.name).toBe('slow');
    expect(limited.input).toBe(slow.input);

    const run = collect(runTools([{ id: 'a', name: 'slow', arguments: { ms: 1000 } }, { id: 'b', name: 'slow', arguments: { ms: 50 } }], { tools: [limited] }));
    await vi.advanceTimersByTimeAsync(100);
    const { events, batch } = await run;
    expect((seen as DOMException).name).toBe('TimeoutError');
    expect(text(batch.messages[0]!)).toBe('TimeoutError: Tool "slow" timed out after 100 ms');
    expect(batch.messages[0]!.isError).toBe(true);
    expect(ofType(events, 'tool_execution_end').find((e) => e.index === 0)?.outcome).toBe('error');
    expect(text(batch.messages[1]!)).toBe('done');
  });

  it('lets go of a tool that ignores the timeout after graceMs, and drops output that comes after it', async () => {
    vi.useFakeTimers();
    const deaf = defineTool({ name: 'deaf', input: v.object({}), execute: () => new Promise<string>(() => {}) });
    const late = defineTool({ name: 'late', input: v.object({}), execute: () => new Promise<string>((r) => setTimeout(() => r('too late'), 120)) });
    const a = drain(withTimeout(deaf, 100, { graceMs: 30 }).execute({}, context()) as AsyncGenerator<never, string, undefined>).catch((e: unknown) => e);
    const b = drain(withTimeout(late, 100).execute({}, context()) as AsyncGenerator<never, string, undefined>).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(129);
    expect(await Promise.race([a, 'pending'])).toBe('pending');
    expect(((await b) as DOMException).name).toBe('TimeoutError');
    await vi.advanceTimersByTimeAsync(1);
    expect(((await a) as DOMException).message).toBe('Tool "deaf" timed out after 100 ms');
  });

  it('rejects a limit that is not a positive number of ms', () => {
    expect(() => withTimeout(reader, 0)).toThrow(/withTimeout: the time limit must be a positive number of ms, received number 0/);
  });
});

describe('withRetry (abort-controller-x retry)', () => {
  /** A tool that fails `failures` times, then succeeds; yields `attempt n` first each time. */
  function flaky(failures: number, error: () => unknown = () => new Error('503 Service Unavailable')) {
    let calls = 0;
    const signals: AbortSignal[] = [];
    const tool = defineTool({
      name: 'fetch_page',
      input: v.object({ url: v.string() }),
      async *execute({ url }, { signal }) {
        signals.push(signal);
        calls++;
        yield `attempt ${calls}`;
        if (calls <= failures) throw error();
        return `page ${url}`;
      },
    });
    return { tool, calls: () => calls, signals };
  }

  it('a tool that fails twice then succeeds: three attempts, backoff waits, every attempt’s progress forwarded, one result', async () => {
    vi.useFakeTimers();
    const { tool, calls } = flaky(2);
    const retried: Array<[string, number, number]> = [];
    const robust = withRetry(tool, { retries: 3, backoff: { baseMs: 100, maxDelayMs: 1000 }, onRetry: (e, attempt, ms) => retried.push([(e as Error).message, attempt, ms]) });
    expectTypeOf(robust).toEqualTypeOf(tool);
    const run = collect(runTools([{ id: 'c1', name: 'fetch_page', arguments: { url: 'https://x' } }], { tools: [robust] }));
    await settle();
    expect(calls()).toBe(1);
    // Attempt 0 failed: the wait is between 50 and 100 ms (jitter); attempt 1: 100..200 ms.
    await vi.advanceTimersByTimeAsync(100);
    expect(calls()).toBe(2);
    await vi.advanceTimersByTimeAsync(200);
    expect(calls()).toBe(3);
    const { events, batch } = await run;
    expect(ofType(events, 'tool_execution_update').map((e) => e.progress)).toEqual(['attempt 1', 'attempt 2', 'attempt 3']);
    expect(batch.messages.map((m) => [text(m), m.isError])).toEqual([['page https://x', false]]);
    expect(retried.map(([m, a]) => [m, a])).toEqual([
      ['503 Service Unavailable', 0],
      ['503 Service Unavailable', 1],
    ]);
    expect(retried[0]![2]).toBeGreaterThanOrEqual(50);
    expect(retried[0]![2]).toBeLessThanOrEqual(100);
  });

  it('throws the last error when the attempts run out (retries + 1 attempts)', async () => {
    const { tool, calls } = flaky(5);
    const robust = withRetry(tool, { retries: 2, backoff: { baseMs: 0 } });
    const { batch } = await collect(runTools([{ id: 'c1', name: 'fetch_page', arguments: { url: 'u' } }], { tools: [robust] }));
    expect(calls()).toBe(3);
    expect(text(batch.messages[0]!)).toBe('503 Service Unavailable');
  });

  it('never retries an AbortError, a ToolInputError, or anything once the call’s signal aborted; shouldRetry can refuse', async () => {
    const abortError = flaky(5, () => new DOMException('fetch aborted', 'AbortError'));
    await collect(runTools([{ id: 'c1', name: 'fetch_page', arguments: { url: 'u' } }], { tools: [withRetry(abortError.tool, { retries: 3, backoff: { baseMs: 0 } })] }));
    expect(abortError.calls()).toBe(1);

    const inputError = flaky(5, () => new ToolInputError('Invalid arguments for tool "x"', 'x'));
    await collect(runTools([{ id: 'c1', name: 'fetch_page', arguments: { url: 'u' } }], { tools: [withRetry(inputError.tool, { retries: 3, backoff: { baseMs: 0 } })] }));
    expect(inputError.calls()).toBe(1);

    const refused = flaky(5);
    await collect(runTools([{ id: 'c1', name: 'fetch_page', arguments: { url: 'u' } }], { tools: [withRetry(refused.tool, { retries: 3, backoff: { baseMs: 0 }, shouldRetry: (e) => !(e as Error).message.startsWith('503') })] }));
    expect(refused.calls()).toBe(1);

    // A timeout of the runtime aborts the call's signal with a TimeoutError: not retried,
    // and the backoff wait ends at once.
    vi.useFakeTimers();
    const timed = flaky(5);
    const run = collect(runTools([{ id: 'c1', name: 'fetch_page', arguments: { url: 'u' } }], { tools: [withRetry(timed.tool, { retries: 3, backoff: { baseMs: 10_000 } })], timeoutMs: 1_000 }));
    await vi.advanceTimersByTimeAsync(1_000);
    const { events } = await run;
    expect(timed.calls()).toBe(1);
    expect(ofType(events, 'tool_execution_end')[0]!.outcome).toBe('timed_out');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('aborting the run during an attempt stops it and retries nothing; the parent listener is removed', async () => {
    const controller = new AbortController();
    let calls = 0;
    let attemptSignal: AbortSignal | undefined;
    const waiting = defineTool({
      name: 'wait',
      input: v.object({}),
      execute: (_i, { signal }) => {
        calls++;
        attemptSignal = signal;
        return new Promise((_r, reject) => signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true }));
      },
    });
    const run = collect(runTools([{ id: 'c1', name: 'wait', arguments: {} }], { tools: [withRetry(waiting, { retries: 5, backoff: { baseMs: 0 } })], signal: controller.signal }));
    await settle();
    const reason = new Error('Esc');
    controller.abort(reason);
    const { events } = await run;
    expect(calls).toBe(1);
    expect(attemptSignal?.reason).toBe(reason);
    expect(ofType(events, 'tool_execution_end')[0]!.outcome).toBe('interrupted');
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('leaving the loop mid-attempt returns the attempt’s generator: its finally runs, its signal aborted', async () => {
    const log: string[] = [];
    let attemptSignal: AbortSignal | undefined;
    const endless = defineTool({
      name: 'endless',
      input: v.object({}),
      async *execute(_i, { signal }) {
        attemptSignal = signal;
        try {
          for (let i = 0; ; i++) yield i;
        } finally {
          log.push('attempt finally');
        }
      },
    });
    for await (const event of runTools([{ id: 'e', name: 'endless', arguments: {} }], { tools: [withRetry(endless, { retries: 3 })] })) {
      if (event.type === 'tool_execution_update' && event.progress === 2) break;
    }
    await settle();
    expect(log).toEqual(['attempt finally']);
    expect(attemptSignal?.aborted).toBe(true);
  });

  it('forwards progress with backpressure: an attempt is pulled at most one step ahead of the consumer (M3)', async () => {
    let pulled = 0;
    const counting = defineTool({
      name: 'count',
      input: v.object({}),
      async *execute() {
        for (let i = 0; i < 4; i++) {
          pulled++;
          yield i;
        }
        return 'done';
      },
    });
    const run = withRetry(counting, { retries: 1 }).execute({}, context()) as AsyncGenerator<number, string, undefined>;
    for (let k = 0; k < 4; k++) {
      expect(await run.next()).toEqual({ done: false, value: k });
      await settle();
      expect(pulled).toBe(k + 1);
    }
    expect(await run.next()).toEqual({ done: true, value: 'done' });
  });

  it('rejects bad options at once', () => {
    expect(() => withRetry(reader, { retries: -1 })).toThrow('withRetry: options.retries must be a non-negative integer, received number -1');
    expect(() => withRetry(reader, { retries: 1, backoff: { baseMs: -5 } })).toThrow(/backoff\.baseMs/);
  });
});

describe('mapProgress', () => {
  it('maps each progress value in order, keeps name, schema, input and output types', async () => {
    const mapped = mapProgress(reader, (p, ctx) => `${ctx.toolCallId} opened ${p.opened}`);
    expectTypeOf(mapped).toEqualTypeOf<Tool<{ path: string; lines: number }, string, ToolOutputOf<typeof reader>, 'read'>>();
    const { events, batch } = await collect(runTools([{ id: 'r1', name: 'read', arguments: { path: 'x' } }], { tools: [mapped] }));
    expect(ofType(events, 'tool_execution_update').map((e) => e.progress)).toEqual(['r1 opened x']);
    expect(text(batch.messages[0]!)).toBe('x:10');
  });
});

describe('mapProgress cleanup', () => {
  it('a throw from fn fails the call and returns the inner generator', async () => {
    const log: string[] = [];
    const inner = defineTool({
      name: 'inner',
      input: v.object({}),
      async *execute() {
        try {
          yield 1;
          yield 2;
          return 'never';
        } finally {
          log.push('inner finally');
        }
      },
    });
    const mapped = mapProgress(inner, (n) => {
      if (n === 1) throw new Error('cannot map 1');
      return n;
    });
    const { batch } = await collect(runTools([{ id: 'm', name: 'inner', arguments: {} }], { tools: [mapped] }));
    await settle();
    expect(text(batch.messages[0]!)).toBe('cannot map 1');
    expect(log).toEqual(['inner finally']);
  });
});

describe('A5 through ix operators: leaving a pipeline closes every tool', () => {
  /** Three tools that yield forever; records their finally blocks and signals. */
  function endless() {
    const closed: string[] = [];
    const signals: AbortSignal[] = [];
    const tool = defineTool({
      name: 'tick',
      input: v.object({}),
      async *execute(_i, { signal, toolCallId }) {
        signals.push(signal);
        try {
          for (let i = 0; ; i++) {
            yield i;
            await Promise.resolve();
          }
        } finally {
          closed.push(toolCallId);
        }
      },
    });
    const calls = ['c1', 'c2', 'c3'].map((id) => ({ id, name: 'tick', arguments: {} }));
    return { tool, calls, closed, signals };
  }

  const isUpdate = <E extends ToolEvent>(e: E): e is Extract<E, { type: 'tool_execution_update' }> => e.type === 'tool_execution_update';

  it('break out of from(runTools(...)).pipe(filter, map)', async () => {
    const t = endless();
    let n = 0;
    for await (const progress of from(runTools(t.calls, { tools: [t.tool] })).pipe(filter(isUpdate), map((e) => e.progress))) {
      // The tool's own progress type flows through the operators: no cast.
      expectTypeOf(progress).toEqualTypeOf<number>();
      if (++n === 5) break;
    }
    await settle();
    expect(t.closed.sort()).toEqual(['c1', 'c2', 'c3']);
    expect(t.signals.map((s) => s.aborted)).toEqual([true, true, true]);
  });

  it('take(n) with toArray, first(), and a throw inside map', async () => {
    for (const consume of [
      (events: AsyncIterable<ToolEvent>) => toArray(from(events).pipe(filter(isUpdate), take(4))),
      (events: AsyncIterable<ToolEvent>) => first(from(events).pipe(filter(isUpdate))),
      async (events: AsyncIterable<ToolEvent>) => {
        for await (const _ of from(events).pipe(map((e, i) => {
          if (i === 6) throw new Error('boom');
          return e;
        }))) {
          // consume
        }
      },
    ]) {
      const t = endless();
      await consume(runTools(t.calls, { tools: [t.tool] })).catch((e: unknown) => expect((e as Error).message).toBe('boom'));
      await settle();
      expect(t.closed.sort()).toEqual(['c1', 'c2', 'c3']);
      expect(t.signals.every((s) => s.aborted)).toBe(true);
    }
  });

  it('known gap: ix 7 takeUntil abandons its source without return(), so the tools stay open', async () => {
    // TakeUntilAsyncIterable drives its source by hand and `break`s out without calling
    // return() on it: the run is never told, the tools are never aborted.
    const t = endless();
    const stop = gate();
    let seen = 0;
    // The tools produce on microtasks only: the gate opens from inside the loop, after 3 items.
    for await (const _ of from(runTools(t.calls, { tools: [t.tool] })).pipe(takeUntil(() => stop.promise))) {
      if (++seen === 3) stop.open();
    }
    await settle();
    expect(t.closed).toEqual([]);
    expect(t.signals.some((s) => s.aborted)).toBe(false);
  });

  it('pipeEvents closes the run whatever the operators do: takeUntil, and a tool parked in an await', async () => {
    const t = endless();
    const parkedSignal: AbortSignal[] = [];
    const parkedDone: string[] = [];
    const parked = defineTool({
      name: 'parked',
      input: v.object({}),
      execute: (_i, { signal }) => {
        parkedSignal.push(signal);
        return new Promise<string>((resolve) => signal.addEventListener('abort', () => {
          parkedDone.push('stopped');
          resolve('stopped');
        }, { once: true }));
      },
    });
    const stop = gate();
    const outer = new AbortController();
    const progress = pipeEvents(
      (signal) => runTools([...t.calls, { id: 'p', name: 'parked', arguments: {} }], { tools: [t.tool, parked], signal }),
      (events) => from(events).pipe(filter(isUpdate), map((e) => e.progress), takeUntil(() => stop.promise)),
      { signal: outer.signal },
    );
    let seen = 0;
    const consumer = (async () => {
      for await (const _ of progress) {
        if (++seen === 3) stop.open();
      }
    })();
    await consumer;
    await settle();
    expect(t.closed.sort()).toEqual(['c1', 'c2', 'c3']);
    expect(t.signals.every((s) => s.aborted)).toBe(true);
    expect(parkedDone).toEqual(['stopped']);
    expect(getEventListeners(outer.signal, 'abort')).toHaveLength(0);
  });

  it('pipeEvents works for runAgent too: takeUntil mid-batch stops the agent’s tools', async () => {
    const t = endless();
    const stop = gate();
    const model = scriptedModel([{ role: 'assistant', content: t.calls.map((c) => ({ type: 'toolCall' as const, id: c.id, name: c.name, arguments: {} })) }]);
    let seen = 0;
    for await (const _ of pipeEvents(
      (signal) => runAgent({ model, tools: [t.tool], messages: [{ role: 'user', content: 'go' }], signal }),
      (events) => from(events).pipe(filter((e) => e.type === 'tool_execution_update'), takeUntil(() => stop.promise)),
    )) {
      if (++seen === 3) stop.open();
    }
    await settle();
    expect(t.closed.sort()).toEqual(['c1', 'c2', 'c3']);
    expect(t.signals.every((s) => s.aborted)).toBe(true);
  });

  it('pipeEvents returns the run’s own return value when the run finished (ix drops it)', async () => {
    const one = defineTool({ name: 'one', input: v.object({}), execute: () => 'ok' });
    const gen = pipeEvents((signal) => runTools([{ id: 'a', name: 'one', arguments: {} }], { tools: [one], signal }), (events) => from(events).pipe(map((e) => e.type)));
    const { yielded, returned } = await drain(gen);
    expect(yielded).toEqual(['tool_execution_start', 'tool_execution_end', 'tool_result']);
    expect(returned?.messages.map(text)).toEqual(['ok']);
    expect(returned?.aborted).toBe(false);
  });
});
