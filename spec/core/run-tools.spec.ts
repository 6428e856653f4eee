import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { defineTool, runTools, type ToolCall } from '../../lib/index.ts';
import { collect, expectRunInvariants, gate, ofType, settle, text, type Gate } from '../helpers.ts';

/** A tool whose calls each wait on their own gate, keyed by the `key` argument. */
function gatedTool(gates: Map<string, Gate<string>>, log: string[] = []) {
  return defineTool({
    name: 'gated',
    input: v.object({ key: v.string() }),
    async *execute({ key }) {
      log.push(`run ${key}`);
      yield `waiting ${key}`;
      return await gates.get(key)!.promise;
    },
  });
}

const gatedCalls = (keys: string[]): ToolCall[] => keys.map((key, i) => ({ id: `id-${i}`, name: 'gated', arguments: { key } }));

describe('O1 every call gets exactly one tool_result, paired by position', () => {
  it('answers success, throw, unknown tool and bad arguments alike', async () => {
    const ok = defineTool({ name: 'ok', input: v.object({}), execute: () => 'fine' });
    const boom = defineTool({
      name: 'boom',
      input: v.object({}),
      execute: () => {
        throw new Error('kaput');
      },
    });
    const input: ToolCall[] = [
      { id: 'a', name: 'ok', arguments: {} },
      { id: 'b', name: 'boom', arguments: {} },
      { id: 'c', name: 'missing', arguments: {} },
      { id: 'd', name: 'ok', arguments: '{not json' },
    ];
    const { events, batch } = await collect(runTools(input, { tools: [ok, boom] }));
    expectRunInvariants(input, events, batch);
    expect(batch.messages.map((m) => m.isError)).toEqual([false, true, true, true]);
  });

  it('keeps repeated and empty ids, and identical calls, apart by position', async () => {
    let n = 0;
    const counter = defineTool({ name: 'count', input: v.object({}), execute: () => `call ${n++}` });
    const input: ToolCall[] = [
      { id: 'same', name: 'count', arguments: {} },
      { id: 'same', name: 'count', arguments: {} },
      { id: '', name: 'count', arguments: {} },
      { id: '', name: 'count', arguments: {} },
    ];
    const { events, batch } = await collect(runTools(input, { tools: [counter] }));
    expectRunInvariants(input, events, batch);
    expect(batch.messages.map(text).sort()).toEqual(['call 0', 'call 1', 'call 2', 'call 3']);
    expect(new Set(ofType(events, 'tool_result').map((r) => r.index)).size).toBe(4);
  });

  it('answers an empty batch with no events and no messages', async () => {
    const { events, batch } = await collect(runTools([], { tools: [] }));
    expect(events).toEqual([]);
    expect(batch).toEqual({ messages: [], terminate: false, aborted: false });
  });
});

describe('O2 tool_result in call order, each released as soon as every earlier call ended', () => {
  it('releases result i when calls 0..i have ended, not at the end of the batch', async () => {
    const gates = new Map(['a', 'b', 'c'].map((k) => [k, gate<string>()]));
    const run = runTools(gatedCalls(['a', 'b', 'c']), { tools: [gatedTool(gates)] });
    const seen: string[] = [];
    const consuming = (async () => {
      for await (const e of run) {
        if (e.type === 'tool_execution_end') seen.push(`end ${e.index}`);
        if (e.type === 'tool_result') seen.push(`result ${e.index}`);
      }
    })();
    gates.get('b')!.open('B');
    await settle();
    expect(seen).toEqual(['end 1']); // b is done but a is not: nothing released yet
    gates.get('a')!.open('A');
    await settle();
    expect(seen).toEqual(['end 1', 'end 0', 'result 0', 'result 1']); // released before c ends
    gates.get('c')!.open('C');
    await consuming;
    expect(seen.slice(4)).toEqual(['end 2', 'result 2']);
  });

  it('is byte-identical whatever the completion order (case C1 determinism)', async () => {
    async function once(order: string[]) {
      const gates = new Map(['a', 'b', 'c'].map((k) => [k, gate<string>()]));
      const running = collect(runTools(gatedCalls(['a', 'b', 'c']), { tools: [gatedTool(gates)] }));
      await settle();
      for (const k of order) {
        gates.get(k)!.open(k.toUpperCase());
        await settle();
      }
      return JSON.stringify((await running).batch.messages);
    }
    expect(await once(['c', 'a', 'b'])).toBe(await once(['b', 'c', 'a']));
  });
});

describe('O3 tool_execution_end in completion order, right after finalize', () => {
  it('does not hold a fast call back behind a slow sibling', async () => {
    const gates = new Map(['slow', 'fast'].map((k) => [k, gate<string>()]));
    const run = runTools(gatedCalls(['slow', 'fast']), { tools: [gatedTool(gates)] });
    const ends: number[] = [];
    const consuming = (async () => {
      for await (const e of run) if (e.type === 'tool_execution_end') ends.push(e.index);
    })();
    gates.get('fast')!.open('F');
    await settle();
    expect(ends).toEqual([1]);
    gates.get('slow')!.open('S');
    await consuming;
    expect(ends).toEqual([1, 0]);
  });
});

describe('O4 per call: start, updates in yield order, end, result; nothing after', () => {
  it('orders each call’s events and emits nothing once the generator returned', async () => {
    const chatty = defineTool({
      name: 'chatty',
      input: v.object({ n: v.number() }),
      async *execute({ n }) {
        for (let i = 0; i < n; i++) yield i;
        return `said ${n}`;
      },
    });
    const input: ToolCall[] = [3, 0, 5].map((n, i) => ({ id: `c${i}`, name: 'chatty', arguments: { n } }));
    const { events, batch } = await collect(runTools(input, { tools: [chatty] }));
    expectRunInvariants(input, events, batch);
    for (const [i, n] of [3, 0, 5].entries()) {
      const updates = ofType(events, 'tool_execution_update').filter((e) => e.index === i);
      expect(updates.map((u) => u.progress)).toEqual([...Array(n).keys()]);
    }
  });
});

describe('O5 updates reach the consumer while the tool still runs, none dropped', () => {
  it('delivers progress before the tool finishes, interleaved across calls', async () => {
    const steps = [gate(), gate()];
    const slow = defineTool({
      name: 'slow',
      input: v.object({}),
      async *execute() {
        yield 'first';
        await steps[0]!.promise;
        yield 'second';
        await steps[1]!.promise;
        return 'done';
      },
    });
    const quick = defineTool({ name: 'quick', input: v.object({}), execute: async () => 'q' });
    const run = runTools(
      [
        { id: 's', name: 'slow', arguments: {} },
        { id: 'q', name: 'quick', arguments: {} },
      ],
      { tools: [slow, quick] },
    );
    const seen: string[] = [];
    const consuming = (async () => {
      for await (const e of run) {
        if (e.type === 'tool_execution_update') seen.push(`${e.toolCallId}:${String(e.progress)}`);
        if (e.type === 'tool_execution_end') seen.push(`end ${e.toolCallId}`);
      }
    })();
    await settle();
    expect(seen).toEqual(['s:first', 'end q']);
    steps[0]!.open();
    await settle();
    expect(seen).toEqual(['s:first', 'end q', 's:second']);
    steps[1]!.open();
    await consuming;
    expect(seen.at(-1)).toBe('end s');
  });
});

describe('M3 through runTools: a generator tool runs at most one step ahead of the consumer', () => {
  it('is pulled for its next step only when the consumer has taken its update (the pull mark)', async () => {
    const produced: number[] = [];
    const counter = defineTool({
      name: 'counter',
      input: v.object({}),
      async *execute() {
        for (let i = 0; i < 5; i++) {
          produced.push(i);
          yield i;
        }
        return 'done';
      },
    });
    const run = runTools([{ id: 'c', name: 'counter', arguments: {} }], { tools: [counter] });
    expect((await run.next()).value).toMatchObject({ type: 'tool_execution_start' });
    const first = await run.next();
    expect(first.value).toMatchObject({ type: 'tool_execution_update', progress: 0 });
    // The consumer holds off: however long it waits, the tool is not asked for step 1.
    // Fails if the run pulls a tool when its step settles rather than when the consumer
    // reaches the step's pull mark.
    await settle(20);
    expect(produced).toEqual([0]);
    const second = await run.next();
    expect(second.value).toMatchObject({ type: 'tool_execution_update', progress: 1 });
    await settle(20);
    expect(produced).toEqual([0, 1]);
    await run.return(undefined as never);
  });
});

describe('O6 the return value: all messages in call order; terminate only when every result asks', () => {
  const finisher = (terminate: boolean | undefined) =>
    defineTool({
      name: `t_${String(terminate)}`,
      input: v.object({}),
      execute: () => (terminate === undefined ? 'plain' : { content: [{ type: 'text' as const, text: 'x' }], terminate }),
    });
  const tools = [finisher(true), finisher(false), finisher(undefined)];

  it('terminates when every result asks to', async () => {
    const { batch } = await collect(
      runTools(
        [
          { id: '1', name: 't_true', arguments: {} },
          { id: '2', name: 't_true', arguments: {} },
        ],
        { tools },
      ),
    );
    expect(batch.terminate).toBe(true);
    expect(batch.messages.map((m) => m.toolCallId)).toEqual(['1', '2']);
  });

  it('does not terminate when one result does not ask, or is an error', async () => {
    for (const other of ['t_false', 't_undefined', 'unknown_tool']) {
      const { batch } = await collect(
        runTools(
          [
            { id: '1', name: 't_true', arguments: {} },
            { id: '2', name: other, arguments: {} },
          ],
          { tools },
        ),
      );
      expect(batch.terminate, other).toBe(false);
    }
  });
});
