/**
 * Contract O7: `tool_execution_end` carries the value itself that was thrown when the outcome
 * came from a throw (`error`), and the call's start and end times (`startedAt`, `endedAt`,
 * epoch ms); the thrown value never reaches what the model sees, a result message, a paused
 * state or a journal.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import * as v from 'valibot';
import { collect, gate, ofType, text } from '../helpers.ts';
import { defineTool, runTools, toOpenAIResponses, type ToolCall, type ToolEvent } from '../../lib/index.ts';
import { memoryJournal } from '../../lib/testing.ts';

const endOf = (events: ToolEvent[], id: string) => ofType(events, 'tool_execution_end').find((e) => e.toolCallId === id)!;

/** A tool that throws whatever the test gives it: synchronously, from a promise, or from a generator. */
function thrower(value: () => unknown) {
  return [
    defineTool({ name: 'sync', input: v.object({}), execute: () => { throw value(); } }),
    defineTool({ name: 'async', input: v.object({}), execute: async () => { throw value(); } }),
    // eslint-disable-next-line require-yield
    defineTool({ name: 'gen', input: v.object({}), execute: async function* () { yield 'half'; throw value(); } }),
  ];
}
const CALLS: ToolCall[] = [
  { id: 's', name: 'sync', arguments: {} },
  { id: 'a', name: 'async', arguments: {} },
  { id: 'g', name: 'gen', arguments: {} },
];

afterEach(() => {
  vi.useRealTimers();
});

describe('O7 the end event carries the thrown value itself', () => {
  it('O7 a RangeError thrown by execute (sync, async, generator) is the same object on tool_execution_end; the model gets its text', async () => {
    const thrown: unknown[] = [];
    const tools = thrower(() => {
      const error = new RangeError('boom');
      thrown.push(error);
      return error;
    });
    const { events, batch } = await collect(runTools(CALLS, { tools }));
    // Fails if the end event carried only the text, a copy, or nothing.
    expect(['s', 'a', 'g'].map((id) => endOf(events, id).error)).toEqual(thrown);
    for (const [i, id] of ['s', 'a', 'g'].entries()) expect(endOf(events, id).error).toBe(thrown[i]);
    expect(batch.messages.map(text)).toEqual(['RangeError: boom', 'RangeError: boom', 'RangeError: boom']);
    // The result message has no trace of it: not as a field, not in meta.
    for (const message of batch.messages) expect(Object.keys(message).sort()).toEqual(['content', 'isError', 'role', 'toolCallId', 'toolName']);
  });

  it("O7 any thrown value is kept as it is: a plain object, a string, undefined ('error' in event tells it from nothing thrown)", async () => {
    const object = { code: 'E_QUOTA', retryAfterMs: 3 };
    const values: unknown[] = [object, 'plain text', undefined];
    const tools = values.map((value, i) => defineTool({ name: `t${i}`, input: v.object({}), execute: async () => { throw value; } }));
    const ok = defineTool({ name: 'ok', input: v.object({}), execute: () => 'fine' });
    const calls: ToolCall[] = [...values.map((_, i) => ({ id: `c${i}`, name: `t${i}`, arguments: {} })), { id: 'ok', name: 'ok', arguments: {} }, { id: 'bad', name: 'ok', arguments: '{' }, { id: 'nope', name: 'missing', arguments: {} }];
    const { events } = await collect(runTools(calls, { tools: [...tools, ok] }));
    expect(endOf(events, 'c0').error).toBe(object);
    expect(endOf(events, 'c1').error).toBe('plain text');
    // Fails if a thrown undefined were dropped (no key) or the key were set when nothing threw.
    expect('error' in endOf(events, 'c2')).toBe(true);
    expect(endOf(events, 'c2').error).toBeUndefined();
    for (const id of ['ok', 'bad', 'nope']) expect('error' in endOf(events, id)).toBe(false);
    expect(endOf(events, 'bad').outcome).toBe('rejected');
  });

  it('O7 a throw from a hook or a function of the tool decides the outcome: its value is the error (prepareArguments, beforeToolCall, afterToolCall, needsApproval, approve)', async () => {
    const fromPrepare = new SyntaxError('cannot read');
    const fromBefore = new Error('policy store down');
    const fromAfter = new TypeError('bad audit');
    const fromRule = new Error('rule crashed');
    const fromApprove = new Error('approval service down');
    const tools = [
      defineTool({ name: 'prep', input: v.object({}), prepareArguments: () => { throw fromPrepare; }, execute: () => 'x' }),
      defineTool({ name: 'guarded', input: v.object({}), execute: () => 'x' }),
      defineTool({ name: 'audited', input: v.object({}), execute: () => 'x' }),
      defineTool({ name: 'ruled', input: v.object({}), needsApproval: () => { throw fromRule; }, execute: () => 'x' }),
      defineTool({ name: 'asked', input: v.object({}), needsApproval: true, execute: () => 'x' }),
    ];
    const calls: ToolCall[] = tools.map((t) => ({ id: t.name, name: t.name, arguments: {} }));
    const { events } = await collect(
      runTools(calls, {
        tools,
        beforeToolCall: ({ toolCall }) => {
          if (toolCall.name === 'guarded') throw fromBefore;
        },
        afterToolCall: ({ toolCall }) => {
          if (toolCall.name === 'audited') throw fromAfter;
          return undefined;
        },
        approve: () => {
          throw fromApprove;
        },
      }),
    );
    // Fails if any of these stages dropped the value (only its text would be left).
    expect(endOf(events, 'prep')).toMatchObject({ outcome: 'rejected' });
    expect(endOf(events, 'prep').error).toBe(fromPrepare);
    expect(endOf(events, 'guarded').error).toBe(fromBefore);
    expect(endOf(events, 'audited')).toMatchObject({ outcome: 'error' });
    expect(endOf(events, 'audited').error).toBe(fromAfter);
    expect(endOf(events, 'ruled').error).toBe(fromRule);
    expect(endOf(events, 'asked').error).toBe(fromApprove);
  });

  it("O7 a call stopped by the run's abort: the tool's rejection with the signal's reason is the error of its interrupted outcome", async () => {
    const started = gate();
    const controller = new AbortController();
    const reason = new Error('user pressed stop');
    const waits = defineTool({
      name: 'waits',
      input: v.object({}),
      execute: (_input, { signal }) =>
        new Promise((_resolve, reject) => {
          started.open();
          signal.addEventListener('abort', () => reject(signal.reason));
        }),
    });
    const run = collect(runTools([{ id: 'w', name: 'waits', arguments: {} }], { tools: [waits], signal: controller.signal }));
    await started.promise;
    controller.abort(reason);
    const { events } = await run;
    expect(endOf(events, 'w').outcome).toBe('interrupted');
    // Fails if only the tool's own failures (outcome error) kept their value.
    expect(endOf(events, 'w').error).toBe(reason);
  });

  it('O7 the thrown value never reaches the model, the messages, a paused state or a journal commit', async () => {
    // Its text is "quota exceeded"; the value itself would show its token if anything serialized it.
    const secret = Object.assign(new Error('quota exceeded'), { toJSON: () => ({ token: 'S3CRET-VALUE' }) });
    const leaky = defineTool({ name: 'leaky', input: v.object({}), execute: async () => { throw secret; } });
    const approvable = defineTool({ name: 'approvable', input: v.object({}), needsApproval: true, execute: () => 'done' });
    const journal = memoryJournal();
    const calls: ToolCall[] = [
      { id: 'l', name: 'leaky', arguments: {} },
      { id: 'p', name: 'approvable', arguments: {} },
    ];
    const { events, batch } = await collect(runTools(calls, { tools: [leaky, approvable], journal }));
    expect(endOf(events, 'l').error).toBe(secret);
    expect(batch.paused).toBeDefined();
    expect(text(batch.messages[0]!)).toBe('quota exceeded');
    const stored = JSON.stringify({ state: batch.paused!.state, messages: batch.messages, provider: toOpenAIResponses(batch.messages), journal: journal.log });
    // Fails if the value were put on the message, its meta, the paused state or the commit.
    expect(stored).toContain('quota exceeded');
    expect(stored).not.toContain('S3CRET-VALUE');
    for (const message of batch.messages) expect('error' in message || 'error' in (message.meta ?? {})).toBe(false);
  });
});

describe('O7 the end event carries the call start and end times (epoch ms)', () => {
  it('O7 startedAt is the hand-out (tool_execution_start), endedAt the end, both Date.now() ms: prepare, execution and afterToolCall are inside', async () => {
    vi.useFakeTimers({ now: 1_700_000_000_000 });
    const slow = defineTool({
      name: 'slow',
      input: v.object({ ms: v.number() }),
      execute: async ({ ms }) => {
        await new Promise((resolve) => setTimeout(resolve, ms));
        return 'done';
      },
    });
    const run = collect(
      runTools(
        [
          { id: 'a', name: 'slow', arguments: { ms: 250 } },
          { id: 'b', name: 'slow', arguments: { ms: 40 } },
          { id: 'x', name: 'slow', arguments: { ms: 'no' } },
        ],
        {
          tools: [slow],
          // The hook's own wait counts: endedAt is when the end event is emitted.
          afterToolCall: async () => {
            await new Promise((resolve) => setTimeout(resolve, 10));
            return undefined;
          },
        },
      ),
    );
    await vi.advanceTimersByTimeAsync(1_000);
    const { events } = await run;
    const times = (id: string) => [endOf(events, id).startedAt - 1_700_000_000_000, endOf(events, id).endedAt - 1_700_000_000_000];
    // Fails if the times were of another clock (performance.now), of execute only, or taken before afterToolCall.
    expect(times('a')).toEqual([0, 260]);
    expect(times('b')).toEqual([0, 50]);
    expect(times('x')).toEqual([0, 0]);
  });

  it('O7 a replayed call (J4) has no error (the journal keeps the text only) and the times of the replay', async () => {
    const boom = defineTool({ name: 'boom', input: v.object({}), execute: () => { throw new RangeError('boom'); } });
    const calls: ToolCall[] = [{ id: 'b', name: 'boom', arguments: {} }];
    const journal = memoryJournal();
    const first = await collect(runTools(calls, { tools: [boom], journal }));
    expect(endOf(first.events, 'b').error).toBeInstanceOf(RangeError);
    vi.useFakeTimers({ now: 1_800_000_000_000 });
    const again = await collect(runTools(calls, { tools: [boom], journal: journal.copy() }));
    const end = endOf(again.events, 'b');
    expect(end.replayed).toBe(true);
    // Fails if a replay invented a thrown value, or carried the first attempt's times.
    expect('error' in end).toBe(false);
    expect([end.startedAt, end.endedAt]).toEqual([1_800_000_000_000, 1_800_000_000_000]);
    expect(text(again.batch.messages[0]!)).toBe('RangeError: boom');
  });
});
