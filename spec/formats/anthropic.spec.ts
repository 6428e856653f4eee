import { describe, expect, it } from 'vitest';
import { assembleAnthropicStream } from '../../lib/cli/recordings/streams.ts';
import { fromAnthropic, toAnthropic, type ToolResultMessage } from '../../lib/index.ts';
import { corpusSkipNote, hasCorpus, readCorpusJson, readCorpusLines, runWithOutputs } from './corpus.ts';

const result = (toolCallId: string, text: string, isError = false): ToolResultMessage => ({
  role: 'tool',
  toolCallId,
  toolName: 't',
  content: [{ type: 'text', text }],
  isError,
});

describe('F1 Anthropic: fromAnthropic', () => {
  it('reads tool_use blocks in content order, with input as is', () => {
    const calls = fromAnthropic({
      role: 'assistant',
      content: [
        { type: 'text', text: 'Let me look.' },
        { type: 'tool_use', id: 'toolu_1', name: 'read', input: { path: 'a' } },
        { type: 'thinking', thinking: '…' },
        { type: 'tool_use', id: 'toolu_2', name: 'read', input: { path: 'b' } },
      ],
    });
    expect(calls).toEqual([
      { id: 'toolu_1', name: 'read', arguments: { path: 'a' } },
      { id: 'toolu_2', name: 'read', arguments: { path: 'b' } },
    ]);
  });

  it('accepts a whole Messages response body and skips server_tool_use and *_tool_result blocks', () => {
    const body = {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      stop_reason: 'end_turn',
      content: [
        { type: 'server_tool_use', id: 'srvtoolu_1', name: 'code_execution', input: { code: '' } },
        { type: 'tool_use', id: 'toolu_1', name: 'rollDie', input: { player: 'p1' }, caller: { type: 'code_execution_20250825', tool_id: 'srvtoolu_1' } },
        { type: 'code_execution_tool_result', tool_use_id: 'srvtoolu_1', content: {} },
      ],
    };
    expect(fromAnthropic(body)).toEqual([{ id: 'toolu_1', name: 'rollDie', arguments: { player: 'p1' } }]);
  });

  it('keeps string arguments (a joined stream), "" for a no-argument call, and repeated or missing ids', () => {
    const calls = fromAnthropic({
      content: [
        { type: 'tool_use', id: 'dup', name: 'a', input: '{"x":1}' },
        { type: 'tool_use', id: 'dup', name: 'a', input: '' },
        { type: 'tool_use', name: 'b' },
      ],
    });
    expect(calls).toEqual([
      { id: 'dup', name: 'a', arguments: '{"x":1}' },
      { id: 'dup', name: 'a', arguments: '' },
      { id: '', name: 'b' },
    ]);
  });

  it('gives no calls for a text-only message, and a TypeError for a value that is not a message', () => {
    expect(fromAnthropic({ role: 'assistant', content: 'hello' })).toEqual([]);
    expect(fromAnthropic({ role: 'assistant', content: [] })).toEqual([]);
    expect(() => fromAnthropic(null as never)).toThrow(TypeError);
    expect(() => fromAnthropic({ content: { type: 'text' } } as never)).toThrow(/content.*array/);
  });
});

describe('F1 Anthropic: toAnthropic', () => {
  it('builds ONE user message of tool_result blocks in call order, is_error only on errors', () => {
    const message = toAnthropic([result('toolu_1', 'one'), result('toolu_2', 'boom', true), result('toolu_3', 'three')]);
    expect(message).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'one' }] },
        { type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: 'boom' }], is_error: true },
        { type: 'tool_result', tool_use_id: 'toolu_3', content: [{ type: 'text', text: 'three' }] },
      ],
    });
    expect('is_error' in (message.content[0] ?? {})).toBe(false);
  });

  it('maps image blocks to base64 sources and never sends details', () => {
    const message = toAnthropic([
      {
        role: 'tool',
        toolCallId: 'toolu_1',
        toolName: 'screenshot',
        content: [{ type: 'text', text: 'here' }, { type: 'image', data: 'iVBORw0K', mimeType: 'image/png' }],
        details: { secret: true },
        isError: false,
      },
    ]);
    expect(message.content[0]).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_1',
      content: [
        { type: 'text', text: 'here' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0K' } },
      ],
    });
  });

  it('drops empty text blocks (the API rejects them) and omits content when nothing is left', () => {
    const message = toAnthropic([result('toolu_1', ''), result('', 'id may be empty')]);
    expect(message.content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_1' },
      { type: 'tool_result', tool_use_id: '', content: [{ type: 'text', text: 'id may be empty' }] },
    ]);
  });

  it('gives an empty user message for no results', () => {
    expect(toAnthropic([])).toEqual({ role: 'user', content: [] });
  });
});

/** The recorded tool_result blocks with the two spellings frameworks use normalized: string content, `is_error: false`. */
function normalizeRecorded(message: { content: Array<Record<string, unknown>> }) {
  return message.content
    .filter((block) => block.type === 'tool_result')
    .map((block) => {
      const { is_error: isError, content, ...rest } = block;
      const out: Record<string, unknown> = { ...rest };
      if (typeof content === 'string') {
        if (content !== '') out.content = [{ type: 'text', text: content }];
      } else if (content !== undefined) out.content = content;
      if (isError === true) out.is_error = true;
      return out;
    });
}

describe.skipIf(!hasCorpus)(`F1 Anthropic round trips on corpus recordings${corpusSkipNote}`, () => {
  for (const file of [
    'anthropic/pydantic-ai__anthropic_multiple_parallel_tool_calls.json',
    'anthropic/crewai__anthropic_parallel_native_tool_calling_agent_kickoff.json',
  ]) {
    it(`${file}: the results of the recorded calls equal the follow-up the framework sent`, async () => {
      const cassette = readCorpusJson(file);
      const response = cassette.interactions[0].response.body;
      const calls = fromAnthropic(response);
      const history = cassette.interactions[1].request.body.messages;
      const assistantAt = history.findIndex((m: { role: string }) => m.role === 'assistant');
      const recorded = history[assistantAt + 1];
      const outputs = normalizeRecorded(recorded).map((block) => (block.content as Array<{ text: string }>)[0]?.text ?? '');

      const produced = toAnthropic(await runWithOutputs(calls, outputs));

      expect(calls.length).toBeGreaterThanOrEqual(3);
      expect(produced.role).toBe('user');
      expect(produced.content).toEqual(normalizeRecorded(recorded));
    });
  }

  it('pydantic-ai: 4 parallel calls to the same tool keep their toolu_ ids and order', () => {
    const response = readCorpusJson('anthropic/pydantic-ai__anthropic_multiple_parallel_tool_calls.json').interactions[0].response.body;
    const calls = fromAnthropic(response);
    expect(calls.map((c) => c.name)).toEqual(Array(4).fill('retrieve_entity_info'));
    expect(calls.map((c) => (c.arguments as { name: string }).name)).toEqual(['Alice', 'Bob', 'Charlie', 'Daisy']);
    for (const call of calls) expect(call.id).toMatch(/^toolu_[A-Za-z0-9]{24}$/);
  });

  it('programmatic tool calling body: 4 client calls, the server_tool_use skipped despite stop_reason "end_turn"', () => {
    const body = readCorpusJson('anthropic/vercel-ai__anthropic-programmatic-tool-calling.1.json');
    const calls = fromAnthropic(body);
    expect(body.stop_reason).toBe('end_turn');
    expect(calls.map((c) => c.name)).toEqual(['rollDie', 'rollDie', 'rollDie', 'rollDie']);
    expect(calls.every((c) => c.id.startsWith('toolu_'))).toBe(true);
  });

  it('stream with input_json_delta fragments: arguments are the joined partial_json strings', () => {
    const cassette = readCorpusJson('anthropic/openllmetry__anthropic_tools_streaming_legacy.json');
    const calls = fromAnthropic(assembleAnthropicStream(cassette.interactions[0].response.events));
    expect(calls).toEqual([
      { id: 'toolu_014x5X91kx3fvdhpLvwXZWE2', name: 'get_weather', arguments: '{"location": "San Francisco, CA", "unit": "celsius"}' },
      { id: 'toolu_0121kXsENLvoDZ72LCuAnCCz', name: 'get_time', arguments: '{"timezone": "America/Los_Angeles"}' },
    ]);
  });

  it('stream of a no-argument call: arguments are "" (not "{}"), and the runtime runs it with {}', async () => {
    const calls = fromAnthropic(assembleAnthropicStream(readCorpusLines('anthropic/vercel-ai__anthropic-tool-no-args.chunks.jsonl')));
    expect(calls).toEqual([{ id: 'toolu_01QE1WLsSVp5hy5Q3GmGTmjP', name: 'updateIssueList', arguments: '' }]);
    const [produced] = toAnthropic(await runWithOutputs(calls, ['updated'])).content;
    expect(produced).toEqual({ type: 'tool_result', tool_use_id: 'toolu_01QE1WLsSVp5hy5Q3GmGTmjP', content: [{ type: 'text', text: 'updated' }] });
  });
});
