/**
 * Issue 13 point 4: hooks as pi-agent-core (≥ 0.84) and Claude Code have them —
 * `beforeToolCall` blocking with `terminate: true` (contract P6), a tool's `timeoutMs` as a
 * function of its validated input (A4), and `meta` from `afterToolCall` (P3).
 */
import * as v from 'valibot';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { defineTool, runTools, type ToolCall } from '../../lib/index.ts';
import { collect, expectRunInvariants, gate, ofType, text } from '../helpers.ts';

const echo = defineTool({ name: 'echo', input: v.object({ text: v.string() }), execute: ({ text }) => `echo: ${text}` });
const twoCalls: ToolCall[] = [
  { id: 'a', name: 'echo', arguments: { text: 'one' } },
  { id: 'b', name: 'echo', arguments: { text: 'two' } },
];

describe('P6 beforeToolCall { block, reason, terminate: true } ends the agent loop after this batch', () => {
  it('P6: the blocked call is an error result with the reason; the other calls run; ToolBatch.terminate is true', async () => {
    const { events, batch } = await collect(
      runTools(twoCalls, {
        tools: [echo],
        beforeToolCall: ({ index }) => (index === 0 ? { block: true, reason: 'Not allowed here.', terminate: true } : undefined),
      }),
    );
    expectRunInvariants(twoCalls, events, batch);
    expect(batch.terminate).toBe(true);
    expect(batch.messages.map((m) => [m.toolCallId, m.isError, text(m)])).toEqual([
      ['a', true, 'Not allowed here.'],
      ['b', false, 'echo: two'],
    ]);
    // The blocked call's result is an ordinary error result: it carries no extra field for the provider.
    expect(Object.keys(batch.messages[0]!).sort()).toEqual(['content', 'isError', 'role', 'toolCallId', 'toolName']);
    expect(ofType(events, 'tool_execution_end')[0]).toMatchObject({ outcome: 'rejected', isError: true, result: { terminate: true } });
  });

  it('P6: a block without terminate, or terminate without block, leaves ToolBatch.terminate false', async () => {
    const blockOnly = await collect(runTools(twoCalls, { tools: [echo], beforeToolCall: () => ({ block: true, reason: 'no' }) }));
    expect(blockOnly.batch.terminate).toBe(false);
    const terminateOnly = await collect(runTools(twoCalls, { tools: [echo], beforeToolCall: () => ({ terminate: true }) }));
    expect(terminateOnly.batch.terminate).toBe(false);
    expect(terminateOnly.batch.messages.map(text)).toEqual(['echo: one', 'echo: two']);
  });

  it('P6: an asynchronous hook that blocks with terminate counts too, in sequential mode', async () => {
    const { batch } = await collect(
      runTools(twoCalls, {
        tools: [echo],
        mode: 'sequential',
        beforeToolCall: async ({ index }) => (index === 1 ? { block: true, terminate: true } : undefined),
      }),
    );
    expect(batch.terminate).toBe(true);
    expect(batch.messages.map((m) => m.isError)).toEqual([false, true]);
    expect(text(batch.messages[1]!)).toBe('Tool call "echo" was blocked by the application and did not run.');
  });

  it('O6 unchanged: an afterToolCall that makes a result an error with terminate does not terminate the batch', async () => {
    const { batch } = await collect(runTools(twoCalls, { tools: [echo], afterToolCall: () => ({ isError: true, terminate: true }) }));
    expect(batch.terminate).toBe(false);
  });
});

describe('A4 a tool’s timeoutMs may be a function of its validated input', () => {
  const slow = (limit: (input: { ms: number }) => number) => {
    const seen: unknown[] = [];
    const tool = defineTool({
      name: 'wait',
      // The transform shows the function gets the validated output, not the raw arguments.
      input: v.object({ ms: v.pipe(v.string(), v.transform(Number)) }),
      timeoutMs: (input) => {
        seen.push(input);
        return limit(input);
      },
      execute: (_input, { signal }) =>
        new Promise<string>((resolve) => {
          if (signal.aborted) resolve('aborted at start');
          signal.addEventListener('abort', () => resolve('stopped'), { once: true });
        }),
    });
    return { tool, seen };
  };

  it('A4: the limit it returns applies to that call, computed once per call from the validated input', async () => {
    const { tool, seen } = slow(({ ms }) => ms);
    const { batch, events } = await collect(runTools([{ id: 'w', name: 'wait', arguments: { ms: '5' } }], { tools: [tool] }));
    expect(seen).toEqual([{ ms: 5 }]);
    expect(ofType(events, 'tool_execution_end')[0]!.outcome).toBe('timed_out');
    expect(text(batch.messages[0]!)).toContain('timed out after 5 ms');
  });

  it('A4: 0 or Infinity means no limit, even when the run has one', async () => {
    for (const none of [0, Infinity]) {
      const release = gate<string>();
      const tool = defineTool({
        name: 'held',
        input: v.object({}),
        timeoutMs: () => none,
        execute: async (_input, { signal }) => {
          // The run's 1 ms limit would fire long before this 30 ms timer: timers fire in order.
          setTimeout(() => release.open(signal.aborted ? 'aborted' : 'not aborted'), 30);
          return await release.promise;
        },
      });
      const { batch } = await collect(runTools([{ id: 'h', name: 'held', arguments: {} }], { tools: [tool], timeoutMs: 1 }));
      expect(text(batch.messages[0]!), `timeoutMs() => ${none}`).toBe('not aborted');
    }
  });

  it.each([
    ['throws', () => { throw new RangeError('no limit known'); }, 'its timeoutMs function threw RangeError: no limit known'],
    ['returns a string', () => '5' as unknown as number, 'its timeoutMs function returned the string "5", not a non-negative number of ms'],
    ['returns NaN', () => NaN, 'returned a number (NaN)'],
    ['returns a negative number', () => -1, 'returned a number (-1)'],
  ])('A4: a timeoutMs function that %s is that call’s error result; the tool does not run and the run goes on', async (_name, limit, expected) => {
    let ran = 0;
    const tool = defineTool({ name: 'limited', input: v.object({}), timeoutMs: limit, execute: () => `ran ${++ran}` });
    const calls: ToolCall[] = [{ id: 'l', name: 'limited', arguments: {} }, twoCalls[0]!];
    const { batch, events } = await collect(runTools(calls, { tools: [tool, echo] }));
    expectRunInvariants(calls, events, batch);
    expect(ran).toBe(0);
    expect(batch.messages[0]!.isError).toBe(true);
    expect(text(batch.messages[0]!)).toContain(expected);
    expect(text(batch.messages[0]!)).toContain('not in your call');
    expect(text(batch.messages[1]!)).toBe('echo: one');
  });

  it('A4: the function’s parameter is the schema’s output type (types)', () => {
    defineTool({
      name: 't',
      input: v.object({ n: v.number() }),
      timeoutMs: (input) => {
        expectTypeOf(input).toEqualTypeOf<{ n: number }>();
        // @ts-expect-error the input has no field `m`
        return input.m;
      },
      execute: () => 1,
    });
    // @ts-expect-error timeoutMs is a number or a function, not a string
    expect(() => defineTool({ name: 't', input: v.object({}), timeoutMs: '5', execute: () => 1 })).toThrow(TypeError);
  });
});

describe('P3 afterToolCall: meta, and fields it does not know', () => {
  const withDetails = defineTool({
    name: 'd',
    input: v.object({}),
    execute: () => ({ content: [{ type: 'text' as const, text: 'done' }], details: { rows: 3 } }),
  });
  const one: ToolCall[] = [{ id: 'd1', name: 'd', arguments: {} }];

  it('P3: meta lands on the result message and the end event, next to the tool’s details (not replacing them)', async () => {
    const { batch, events } = await collect(
      runTools(one, { tools: [withDetails], afterToolCall: () => ({ meta: { usage: { inputTokens: 12 } } }) }),
    );
    expect(batch.messages[0]).toEqual({
      role: 'tool',
      toolCallId: 'd1',
      toolName: 'd',
      content: [{ type: 'text', text: 'done' }],
      details: { rows: 3 },
      meta: { usage: { inputTokens: 12 } },
      isError: false,
    });
    expect(ofType(events, 'tool_execution_end')[0]!.result.meta).toEqual({ usage: { inputTokens: 12 } });
  });

  it('P3: other fields of the answer (usage at the top level) are not read', async () => {
    const { batch } = await collect(runTools(one, { tools: [withDetails], afterToolCall: () => ({ usage: { inputTokens: 12 } }) as never }));
    expect(batch.messages[0]).not.toHaveProperty('meta');
    expect(batch.messages[0]).not.toHaveProperty('usage');
    expect(batch.messages[0]!.details).toEqual({ rows: 3 });
  });

  it('P3/P4: a meta that is not a plain object makes the result an error naming the hook', async () => {
    // @ts-expect-error meta is a record
    const { batch } = await collect(runTools(one, { tools: [withDetails], afterToolCall: () => ({ meta: 5 }) }));
    expect(batch.messages[0]!.isError).toBe(true);
    expect(text(batch.messages[0]!)).toContain('afterToolCall failed: meta is a number (5), not a plain object');
  });

  it('a tool may return meta itself; afterToolCall’s meta replaces it (no deep merge, P3)', async () => {
    const metered = defineTool({ name: 'm', input: v.object({}), execute: () => ({ content: [{ type: 'text' as const, text: 'x' }], meta: { ms: 1 } }) });
    const calls: ToolCall[] = [{ id: 'm1', name: 'm', arguments: {} }];
    expect((await collect(runTools(calls, { tools: [metered] }))).batch.messages[0]!.meta).toEqual({ ms: 1 });
    const replaced = await collect(runTools(calls, { tools: [metered], afterToolCall: () => ({ meta: { cost: 2 } }) }));
    expect(replaced.batch.messages[0]!.meta).toEqual({ cost: 2 });
  });
});
