import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { defineTool, runTools, type ToolCall } from '../../../lib/index.ts';
import { collect, expectRunInvariants, gate, ofType, settle, text } from '../../helpers.ts';

const echo = defineTool({ name: 'echo', input: v.object({ say: v.string() }), execute: ({ say }) => say });

describe('P1 prepare runs serially in call order; execution does not wait for later calls', () => {
  it('asks beforeToolCall about one call at a time, in call order, each answer reaching its own call', async () => {
    const asked: string[] = [];
    const answers = [gate<{ block?: boolean; reason?: string } | void>(), gate<{ block?: boolean; reason?: string } | void>(), gate<{ block?: boolean; reason?: string } | void>()];
    let concurrentPrompts = 0;
    let peakPrompts = 0;
    const input: ToolCall[] = ['x', 'y', 'z'].map((say, i) => ({ id: `c${i}`, name: 'echo', arguments: { say } }));
    const running = collect(
      runTools(input, {
        tools: [echo],
        async beforeToolCall({ index, args }) {
          asked.push(`${index}:${(args as { say: string }).say}`);
          peakPrompts = Math.max(peakPrompts, ++concurrentPrompts);
          try {
            return await answers[index]!.promise;
          } finally {
            concurrentPrompts--;
          }
        },
      }),
    );
    await settle();
    expect(asked).toEqual(['0:x']); // the second prompt waits for the first answer
    answers[0]!.open();
    await settle();
    expect(asked).toEqual(['0:x', '1:y']);
    answers[1]!.open({ block: true, reason: 'user said no to y' });
    await settle();
    answers[2]!.open();
    const { events, batch } = await running;
    expectRunInvariants(input, events, batch);
    expect(peakPrompts).toBe(1);
    expect(batch.messages.map(text)).toEqual(['x', 'user said no to y', 'z']);
  });

  it('starts executing call 0 while call 1 is still being prepared', async () => {
    const answer = gate();
    const started: string[] = [];
    const tool = defineTool({
      name: 'work',
      input: v.object({}),
      execute: (_input, { toolCallId }) => {
        started.push(toolCallId);
        return 'ok';
      },
    });
    const running = collect(
      runTools(
        [
          { id: 'first', name: 'work', arguments: {} },
          { id: 'second', name: 'work', arguments: {} },
        ],
        {
          tools: [tool],
          beforeToolCall: ({ index }) => (index === 1 ? answer.promise : undefined),
        },
      ),
    );
    await settle();
    expect(started).toEqual(['first']);
    answer.open();
    await running;
    expect(started).toEqual(['first', 'second']);
  });

  it('runs prepareArguments before validation, and execute gets its output', async () => {
    const edit = defineTool({
      name: 'edit',
      input: v.object({ edits: v.array(v.object({ old: v.string(), new: v.string() })) }),
      prepareArguments: (raw) => {
        const r = raw as Record<string, unknown>;
        return 'oldText' in r ? { edits: [{ old: r.oldText, new: r.newText }] } : r;
      },
      execute: ({ edits }) => JSON.stringify(edits),
    });
    const { batch } = await collect(runTools([{ id: '1', name: 'edit', arguments: { oldText: 'a', newText: 'b' } }], { tools: [edit] }));
    expect(text(batch.messages[0]!)).toBe('[{"old":"a","new":"b"}]');
  });
});

describe('P2 a failure in prepare gives an immediate outcome with the same shape', () => {
  it('emits start, end and result for rejected calls like for executed ones', async () => {
    const input: ToolCall[] = [
      { id: 'ok', name: 'echo', arguments: { say: 'hi' } },
      { id: 'bad', name: 'echo', arguments: { say: 5 } },
    ];
    const { events, batch } = await collect(runTools(input, { tools: [echo] }));
    expectRunInvariants(input, events, batch);
    const ends = ofType(events, 'tool_execution_end');
    expect(ends.map((e) => [e.toolCallId, e.outcome, e.isError])).toEqual(
      expect.arrayContaining([
        ['ok', 'ok', false],
        ['bad', 'rejected', true],
      ]),
    );
    for (const end of ends) expect(Object.keys(end).sort()).toEqual(['endedAt', 'index', 'isError', 'outcome', 'result', 'startedAt', 'toolCallId', 'toolName', 'type']);
  });
});

describe('P5 error text the model can act on', () => {
  const lookup = defineTool({ name: 'lookup', input: v.object({ q: v.string() }), execute: ({ q }) => q });
  const status = defineTool({ name: 'status', input: { type: 'object', properties: {} }, execute: () => 'green' });
  const grepItems = defineTool({
    name: 'grep_items',
    input: {
      type: 'object',
      properties: { pattern: { type: 'string' }, limit: { type: 'integer', minimum: 1, maximum: 100 } },
      required: ['pattern'],
      additionalProperties: false,
    },
    execute: () => 'found',
  });
  const tools = [lookup, status, grepItems];

  async function resultText(call: Omit<ToolCall, 'id'>): Promise<{ text: string; isError: boolean }> {
    const { batch } = await collect(runTools([{ id: 'x', ...call }], { tools }));
    return { text: text(batch.messages[0]!), isError: batch.messages[0]!.isError };
  }

  it('unknown tool: names it and lists the available tools', async () => {
    const r = await resultText({ name: 'web_search', arguments: {} });
    expect(r.text).toBe('No tool named "web_search". Available tools: lookup, status, grep_items. Call one of these instead.');
    expect((await resultText({ name: '', arguments: {} })).text).toMatch(/no tool name\. Available tools: lookup, status, grep_items/);
  });

  it('unknown tool: the name is quoted with JSON escapes and cut to 100 characters', async () => {
    // Fails if the name is written raw (the escape sequence reaches the text) or in full.
    const hostile = `x\u001b[2J\n"${'y'.repeat(100_000)}`;
    const r = await resultText({ name: hostile, arguments: {} });
    expect(r.isError).toBe(true);
    expect(r.text).not.toMatch(/[\u0000-\u001f]/);
    expect(r.text.startsWith(String.raw`No tool named "x\u001b[2J\n\"yyy`)).toBe(true);
    expect(r.text).toContain('y…". Available tools: lookup, status, grep_items.');
    expect(r.text.length).toBeLessThan(250);
  });

  it('invalid JSON: says so, with the parser message and the raw text', async () => {
    const r = await resultText({ name: 'lookup', arguments: '{"{"q":"x"}' });
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/^The arguments for tool "lookup" are not valid JSON \(.*position \d+.*\)\. Received: \{"\{"q":"x"\}/);
  });

  it('truncates a long raw text in the error', async () => {
    const r = await resultText({ name: 'lookup', arguments: `{"q": "${'z'.repeat(5000)}` });
    expect(r.text.length).toBeLessThan(1000);
    expect(r.text).toContain('chars in all');
  });

  it('empty-string arguments are {} and then validated', async () => {
    expect(await resultText({ name: 'status', arguments: '' })).toEqual({ text: 'green', isError: false });
    const missing = await resultText({ name: 'lookup', arguments: '' });
    expect(missing.isError).toBe(true);
    expect(missing.text).toMatch(/^Invalid arguments for tool "lookup":\n- q: /);
  });

  it('schema failure: one line per issue with its dotted path, then the received arguments', async () => {
    const r = await resultText({ name: 'grep_items', arguments: '{"limit":"ten","extra":1}' });
    expect(r.text).toBe(
      [
        'Invalid arguments for tool "grep_items":',
        '- pattern: required',
        '- limit: expected integer, got string',
        '- extra: not allowed',
        'Received arguments: {"limit":"ten","extra":1}',
        'Fix these and call the tool again.',
      ].join('\n'),
    );
    expect((await resultText({ name: 'grep_items', arguments: { pattern: 'x', limit: 500 } })).text).toContain('- limit: must be ≤ 100');
  });

  it('non-object JSON: says an object is needed and what came', async () => {
    expect((await resultText({ name: 'lookup', arguments: '[1,2]' })).text).toMatch(/must be a JSON object, got array \[1,2\]/);
    expect((await resultText({ name: 'lookup', arguments: 'null' })).text).toMatch(/must be a JSON object, got null/);
  });

  it('blocked: the hook’s reason, or a default', async () => {
    const { batch } = await collect(
      runTools(
        [
          { id: 'a', name: 'lookup', arguments: { q: '1' } },
          { id: 'b', name: 'lookup', arguments: { q: '2' } },
        ],
        { tools, beforeToolCall: ({ index }) => ({ block: true, ...(index === 0 ? { reason: 'not today' } : {}) }) },
      ),
    );
    expect(batch.messages.map(text)).toEqual(['not today', 'Tool call "lookup" was blocked by the application and did not run.']);
  });
});

describe('P5 a call cut off before its arguments were complete (case C16)', () => {
  it('never runs, and tells the model to send it again, shorter', async () => {
    let ran = 0;
    const write = defineTool({
      name: 'write_note',
      input: v.object({ path: v.string(), content: v.string() }),
      execute: () => String(++ran),
    });
    const { batch } = await collect(
      runTools([{ id: 'c1', name: 'write_note', arguments: '{"path":"n.txt","content":"line1', incomplete: 'the output limit (max_tokens)' }], { tools: [write] }),
    );
    expect(ran).toBe(0);
    expect(text(batch.messages[0]!)).toBe(
      'Your call to tool "write_note" was cut off by the output limit (max_tokens) before its arguments were complete, so it was not run. Send the call again, shorter (for long content, split it across several calls).',
    );
  });
});

describe('P5: an unknown tool when no tools are registered', () => {
  it('says that no tool is available and to answer without one, instead of listing "(none)"', async () => {
    const { batch } = await collect(runTools([{ id: 'c1', name: 'web_search', arguments: {} }, { id: 'c2', name: '', arguments: {} }], { tools: [] }));
    expect(batch.messages.map(text)).toEqual([
      'No tool named "web_search". No tools are available in this turn: answer without calling a tool.',
      'The tool call has no tool name. No tools are available in this turn: answer without calling a tool.',
    ]);
    expect(batch.messages.every((m) => m.isError)).toBe(true);
  });
});
