/**
 * Section 4 of the reliability issue: what `runTools` does with malformed input.
 *
 * - The caller's own mistakes (calls that are not a list, a call without a string name or
 *   id, a malformed tool list or option) throw ONE `TypeError`, synchronously, at the call,
 *   before anything starts; the message names the field and the value received.
 * - The model's mistakes (garbage arguments, unknown or empty tool names, odd ids) never
 *   throw: each becomes that call's error result (contract O1, P4, P5).
 */
import { getEventListeners } from 'node:events';
import * as v from 'valibot';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defineTool, runTools, type RunToolsOptions, type Tool, type ToolCall } from '../../lib/index.ts';
import { collect, expectRunInvariants, ofType, text } from '../helpers.ts';

/** Spies: a tool body or a hook running means something started. */
function probes() {
  const started: string[] = [];
  const tool = defineTool({
    name: 'lookup',
    input: v.object({ q: v.string() }),
    execute: ({ q }) => {
      started.push(`body:${q}`);
      return q;
    },
  });
  const options = (extra: Record<string, unknown> = {}): RunToolsOptions =>
    ({
      tools: [tool],
      beforeToolCall: () => {
        started.push('before');
      },
      afterToolCall: () => {
        started.push('after');
      },
      onInProgressChange: () => {
        started.push('progress');
      },
      ...extra,
    }) as RunToolsOptions;
  return { started, tool, options };
}

const good: ToolCall[] = [{ id: 'c1', name: 'lookup', arguments: '{"q":"a"}' }];
const badTool = (fields: Record<string, unknown>) => ({ name: 'bad', input: v.object({}), execute: () => 'x', ...fields }) as unknown as Tool;

/** [what, calls, extra options, pattern naming the field, pattern naming the value]. */
const callerMistakes: [string, unknown, Record<string, unknown>, RegExp, RegExp][] = [
  ['calls is a number', 42, {}, /calls must be an array or an \(async\) iterable/, /number 42/],
  ['calls is null', null, {}, /calls must be/, /null/],
  ['calls is undefined', undefined, {}, /calls must be/, /undefined/],
  ['calls is a plain object', { id: 'c1', name: 'lookup' }, {}, /calls must be/, /object \{"id":"c1","name":"lookup"\}/],
  ['calls is a string', '[{"id":"c1"}]', {}, /calls must be/, /string "\[\{\\"id\\":\\"c1\\"\}\]"/],
  ['a call without a name', [{ id: 'c1', arguments: {} }], {}, /calls\[0\]\.name must be a string/, /received undefined/],
  ['a call whose name is a number', [good[0], { id: 'c2', name: 7 }], {}, /calls\[1\]\.name must be a string/, /number 7/],
  ['a call without an id', [{ name: 'lookup', arguments: {} }], {}, /calls\[0\]\.id must be a string/, /received undefined/],
  ['a call that is null', [good[0], null], {}, /calls\[1\] must be a tool call object/, /null/],
  // A hole is a missing call, not a skipped one: fails if the check walks the array with forEach (which skips holes; the run then threw a bare TypeError from its first next()).
  ['a hole in a sparse array of calls', [good[0], , good[0]], {}, /calls\[1\] must be a tool call object/, /undefined/],
  ['options.tools missing', good, { tools: undefined }, /options\.tools must be an array/, /undefined/],
  ['options.tools not an array', good, { tools: 'lookup' }, /options\.tools must be an array/, /string "lookup"/],
  ['duplicate tool names', good, { tools: [badTool({ name: 'dup' }), badTool({ name: 'dup' })] }, /two tools named "dup"/, /at 0 and 1/],
  ['a tool with no name', good, { tools: [badTool({ name: '' })] }, /options\.tools\[0\].*name must be a non-empty string/, /string ""/],
  ['a non-function execute', good, { tools: [badTool({ execute: 'run me' })] }, /options\.tools\[0\]: tool "bad"\.execute must be a function/, /string "run me"/],
  ['a tool without input schema', good, { tools: [badTool({ input: undefined })] }, /tool "bad"\.input must be/, /undefined/],
  ['a negative tool timeoutMs', good, { tools: [badTool({ timeoutMs: -5 })] }, /tool "bad"\.timeoutMs must be a positive number/, /number -5/],
  ['a bad executionMode', good, { tools: [badTool({ executionMode: 'serial' })] }, /executionMode must be 'parallel' or 'sequential'/, /string "serial"/],
  ['negative maxConcurrency', good, { maxConcurrency: -1 }, /options\.maxConcurrency must be a positive integer or Infinity/, /number -1/],
  ['zero maxConcurrency', good, { maxConcurrency: 0 }, /options\.maxConcurrency/, /number 0/],
  ['fractional maxConcurrency', good, { maxConcurrency: 2.5 }, /options\.maxConcurrency/, /number 2\.5/],
  ['NaN maxConcurrency', good, { maxConcurrency: Number.NaN }, /options\.maxConcurrency/, /NaN|null/],
  ['string maxConcurrency', good, { maxConcurrency: '4' }, /options\.maxConcurrency/, /string "4"/],
  ['a bad mode', good, { mode: 'serial' }, /options\.mode must be 'parallel' or 'sequential'/, /string "serial"/],
  ['a negative timeoutMs', good, { timeoutMs: -1 }, /options\.timeoutMs must be a non-negative number/, /number -1/],
  ['a string abortGraceMs', good, { abortGraceMs: '100' }, /options\.abortGraceMs must be a non-negative number/, /string "100"/],
  ['a non-function beforeToolCall', good, { beforeToolCall: true }, /options\.beforeToolCall must be a function/, /boolean true/],
  ['a non-function afterToolCall', good, { afterToolCall: {} }, /options\.afterToolCall must be a function/, /object \{\}/],
  ['a signal that is not an AbortSignal', good, { signal: { aborted: false } }, /options\.signal must be an AbortSignal/, /object \{"aborted":false\}/],
];

describe('runTools input: the caller’s mistakes throw one TypeError at the call, before anything starts', () => {
  it.each(callerMistakes)('%s', (_what, calls, extra, field, value) => {
    const { started, options } = probes();
    const signal = new AbortController().signal;
    const opts = { signal, ...options(extra) };
    let thrown: unknown[] = [];
    let returned: unknown;
    try {
      returned = runTools(calls as ToolCall[], opts);
    } catch (error) {
      thrown = [error];
    }
    expect(returned, 'runTools returned instead of throwing').toBeUndefined();
    expect(thrown).toHaveLength(1);
    const error = thrown[0] as Error;
    expect(error).toBeInstanceOf(TypeError);
    expect(error.message).toMatch(/^runTools: /);
    expect(error.message).toMatch(field);
    expect(error.message).toMatch(value);
    // Nothing started: no hook, no body, no listener left on the caller's signal.
    expect(started).toEqual([]);
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  });

  it('options itself missing or not an object', () => {
    for (const options of [undefined, null, 'tools', [good]]) {
      expect(() => runTools(good, options as unknown as RunToolsOptions)).toThrow(TypeError);
      expect(() => runTools(good, options as unknown as RunToolsOptions)).toThrow(/options must be an object with a tools array|options\.tools must be an array/);
    }
  });

  it('a sync iterable (not an array) holding a call without a name throws the same TypeError, before anything starts', () => {
    const { started, options } = probes();
    let pulled = 0;
    function* calls(): Generator<ToolCall> {
      pulled++;
      yield good[0]!;
      pulled++;
      yield { id: 'c2' } as ToolCall;
    }
    expect(() => runTools(calls(), options())).toThrow(TypeError);
    expect(() => runTools(new Set([good[0]!, { id: 'c2' } as ToolCall]), options())).toThrow(/calls\[1\]\.name must be a string, received undefined/);
    expect(pulled).toBe(2);
    expect(started).toEqual([]);
  });

  it('reports the first mistake only, as one TypeError, even when several fields are wrong', () => {
    let count = 0;
    try {
      runTools([{ id: 1 } as unknown as ToolCall], { tools: 'x', maxConcurrency: -1 } as unknown as RunToolsOptions);
    } catch (error) {
      count++;
      expect(error).toBeInstanceOf(TypeError);
      expect((error as Error).message).toMatch(/calls\[0\]\.name must be a string, received undefined/);
    }
    expect(count).toBe(1);
  });

  it('accepts Infinity and large integers for maxConcurrency, and 0 for timeouts and grace', async () => {
    for (const extra of [{ maxConcurrency: Infinity }, { maxConcurrency: 1_000_000 }, { abortGraceMs: 0 }, { maxResultChars: 0 }]) {
      const { options } = probes();
      const { events, batch } = await collect(runTools(good, options(extra)));
      expectRunInvariants(good, events, batch);
    }
  });
});

describe('runTools input: the model’s mistakes never throw, each becomes that call’s error result', () => {
  let unhandled: unknown[];
  const onUnhandled = (reason: unknown): void => {
    unhandled.push(reason);
  };
  beforeEach(() => {
    unhandled = [];
    process.on('unhandledRejection', onUnhandled);
  });
  afterEach(() => {
    process.off('unhandledRejection', onUnhandled);
  });

  const circular: Record<string, unknown> = { q: 'loop' };
  circular.self = circular;
  /** [what the model sent, the call, a pattern the error text must match]. */
  const modelMistakes: [string, ToolCall, RegExp][] = [
    ['invalid JSON', { id: 'm1', name: 'lookup', arguments: '{"q":' }, /not valid JSON/],
    ['JSON with a trailing comma', { id: 'm2', name: 'lookup', arguments: '{"q":"a",}' }, /not valid JSON \(.*position \d+\)/],
    ['an array', { id: 'm3', name: 'lookup', arguments: '[1,2]' }, /must be a JSON object, got array \[1,2\]/],
    ['a number as text', { id: 'm4', name: 'lookup', arguments: '42' }, /must be a JSON object, got number 42/],
    ['null as text', { id: 'm5', name: 'lookup', arguments: 'null' }, /must be a JSON object, got null/],
    ['a JSON string that is not an object', { id: 'm6', name: 'lookup', arguments: '"hello"' }, /must be a JSON object, got string "hello"/],
    ['a raw number', { id: 'm7', name: 'lookup', arguments: 7 }, /must be a JSON object, got number 7/],
    ['a raw boolean', { id: 'm8', name: 'lookup', arguments: true }, /must be a JSON object, got boolean true/],
    ['a raw array', { id: 'm9', name: 'lookup', arguments: ['q'] }, /must be a JSON object, got array \["q"\]/],
    ['an empty string for a required field', { id: 'm10', name: 'lookup', arguments: '' }, /q: /],
    ['a wrong-typed field', { id: 'm11', name: 'lookup', arguments: '{"q":5}' }, /q: .*string/i],
    ['an unknown tool', { id: 'm12', name: 'web_search', arguments: '{}' }, /No tool named "web_search"\. Available tools: lookup/],
    ['an empty tool name', { id: 'm13', name: '', arguments: '{}' }, /no tool name\. Available tools: lookup/],
    ['a prototype-ish tool name', { id: 'm14', name: '__proto__', arguments: '{}' }, /No tool named "__proto__"/],
    ['a constructor tool name', { id: 'm15', name: 'constructor', arguments: '{}' }, /No tool named "constructor"/],
    ['a __proto__ key in the JSON', { id: 'm16', name: 'lookup', arguments: '{"__proto__":{"q":"x"}}' }, /q: /],
    ['a huge invalid argument text', { id: 'm17', name: 'lookup', arguments: `{"q":"${'x'.repeat(100_000)}` }, /not valid JSON.*chars in all/s],
    ['a circular object with a wrong field', { id: 'm18', name: 'lookup', arguments: { ...circular, q: 1 } }, /q: /],
  ];

  it.each(modelMistakes)('%s', async (_what, call, pattern) => {
    let bodies = 0;
    const lookup = defineTool({
      name: 'lookup',
      input: v.object({ q: v.string() }),
      execute: () => {
        bodies++;
        return 'ok';
      },
    });
    const input: ToolCall[] = [good[0]!, call, { ...good[0]!, id: 'c3' }];
    let run: ReturnType<typeof runTools> | undefined;
    expect(() => {
      run = runTools(input, { tools: [lookup] });
    }).not.toThrow();
    const { events, batch } = await collect(run!);
    expectRunInvariants(input, events, batch);
    const [first, bad, last] = batch.messages;
    expect(first!.isError).toBe(false);
    expect(last!.isError).toBe(false);
    expect(bad!.isError).toBe(true);
    expect(bad!.toolCallId).toBe(call.id);
    expect(text(bad!)).toMatch(pattern);
    expect(text(bad!).length).toBeLessThan(2_000);
    expect(text(bad!)).not.toMatch(/\n\s+at |TypeError|SyntaxError/);
    expect(ofType(events, 'tool_execution_end').find((e) => e.index === 1)!.outcome).toBe('rejected');
    expect(bodies).toBe(2);
    expect(unhandled).toEqual([]);
  });

  it('empty and repeated ids are kept as given and paired by position', async () => {
    const lookup = defineTool({ name: 'lookup', input: v.object({ q: v.string() }), execute: ({ q }) => q });
    const input: ToolCall[] = [
      { id: '', name: 'lookup', arguments: '{"q":"a"}' },
      { id: 'dup', name: 'lookup', arguments: '{"q":"b"}' },
      { id: 'dup', name: 'nope', arguments: '{}' },
      { id: '', name: 'lookup', arguments: '{"q":"d"}' },
    ];
    const { events, batch } = await collect(runTools(input, { tools: [lookup] }));
    expectRunInvariants(input, events, batch);
    expect(batch.messages.map((m) => [m.toolCallId, m.isError, text(m).slice(0, 13)])).toEqual([
      ['', false, 'a'],
      ['dup', false, 'b'],
      ['dup', true, 'No tool named'],
      ['', false, 'd'],
    ]);
  });

  it('calls arriving on an async iterable are answered even when malformed (not checkable up front)', async () => {
    const lookup = defineTool({ name: 'lookup', input: v.object({ q: v.string() }), execute: ({ q }) => q });
    async function* stream(): AsyncGenerator<ToolCall> {
      yield good[0]!;
      yield { id: 7, arguments: '{' } as unknown as ToolCall;
      yield null as unknown as ToolCall;
      yield { id: 'c4', name: 'lookup', arguments: '{"q":"z"}' };
    }
    const { events, batch } = await collect(runTools(stream(), { tools: [lookup] }));
    expect(batch.messages).toHaveLength(4);
    expect(batch.messages.map((m) => m.isError)).toEqual([false, true, true, false]);
    expect(batch.messages.map((m) => m.toolCallId)).toEqual(['c1', '', '', 'c4']);
    expect(ofType(events, 'tool_result').map((r) => r.index)).toEqual([0, 1, 2, 3]);
    expect(unhandled).toEqual([]);
  });
});
