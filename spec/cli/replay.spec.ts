import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliInputError } from '../../lib/cli/errors.ts';
import { formatReportTable, replay, type ReplayReport } from '../../lib/cli/replay.ts';
import { createRunView, type RunView } from '../../lib/cli/view/index.ts';
import type { ToolEvent } from '../../lib/core/run/events.ts';
import { corpusDir, corpusSkipNote, hasCorpus } from '../formats/corpus.ts';
import { recordingView, row } from './replay-view.ts';

// The whole corpus (28 files, about 0.7 s of CPU) is replayed by replay.corpus.slow.spec.ts in
// `npm run test:slow`; `npm test` replays one folder of it and single files, with the same checks.
describe.skipIf(!hasCorpus)(`replay over one folder of the corpus (F4)${corpusSkipNote}`, () => {
  let report: ReplayReport;
  let recorder: ReturnType<typeof recordingView>;

  beforeAll(async () => {
    recorder = recordingView();
    report = await replay(join(corpusDir, 'anthropic'), { view: recorder.view, delayMs: 0 });
  }, 30_000);

  it('has zero mismatched messages, exit code 0, and counts that add up per file', () => {
    const mismatched = report.rows.flatMap((r) => r.results.filter((m) => m.status === 'mismatched').map((m) => `${r.file} ${m.label}: ${m.reasons.join('; ')}`));
    expect(mismatched).toEqual([]);
    expect(report.exitCode).toBe(0);
    expect(report.rows.length).toBeGreaterThan(3);
    for (const r of report.rows) expect(r.matched + r.explained + r.mismatched + r.interrupted, r.file).toBe(r.messages);
  });

  it('pydantic-ai Anthropic: 4 parallel calls, matched; one begin/end and one start, end, tool_result per call', () => {
    expect(row(report, 'pydantic-ai__anthropic_multiple_parallel_tool_calls.json')).toMatchObject({ format: 'Anthropic Messages cassette', messages: 1, calls: 4, matched: 1, explained: 0 });
    expect(recorder.runs).toHaveLength(report.totals.messages);
    for (const run of recorder.runs) {
      const count = (type: ToolEvent['type']) => run.events.filter((e) => e.type === type).length;
      expect([count('tool_execution_start'), count('tool_execution_end'), count('tool_result')], run.title).toEqual([run.calls.length, run.calls.length, run.calls.length]);
    }
  });

  it('replays one file given directly, and a BFCL answers file through its question file', async () => {
    const one = await replay(join(corpusDir, 'anthropic/pydantic-ai__anthropic_multiple_parallel_tool_calls.json'), { view: recordingView().view, delayMs: 0 });
    expect(one.rows).toEqual([expect.objectContaining({ file: 'pydantic-ai__anthropic_multiple_parallel_tool_calls.json', matched: 1 })]);
    const answers = await replay(join(corpusDir, 'bfcl/possible_answer_BFCL_v4_live_parallel.json'), { view: recordingView().view, delayMs: 0 });
    expect(answers.rows).toEqual([expect.objectContaining({ messages: 16, calls: 39 })]);
  });
});

describe('replay: the check is not vacuous (synthetic recordings in a temp folder)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'toolrun-replay-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** A two-interaction OpenAI Chat cassette whose follow-up is `followUp`. */
  function chatCassette(followUp: unknown[]): unknown {
    const tools = [{ type: 'function', function: { name: 'echo', parameters: { type: 'object', properties: { v: { type: 'string' } }, required: ['v'] } } }];
    const assistant = {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_a', type: 'function', function: { name: 'echo', arguments: '{"v":"a"}' } },
        { id: 'call_b', type: 'function', function: { name: 'echo', arguments: '{"v":"b"}' } },
      ],
    };
    const user = { role: 'user', content: 'go' };
    return {
      api: 'openai-chat-completions',
      interactions: [
        { request: { body: { messages: [user], tools } }, response: { status: 200, body: { choices: [{ message: assistant }] } } },
        { request: { body: { messages: [user, assistant, ...followUp], tools } }, response: { status: 200, body: { choices: [{ message: { role: 'assistant', content: 'done' } }] } } },
      ],
    };
  }

  async function replayJson(name: string, doc: unknown): Promise<ReplayReport> {
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify(doc));
    return replay(path, { view: recordingView().view, delayMs: 0 });
  }

  it('a follow-up in call order matches', async () => {
    const report = await replayJson('ok.json', chatCassette([
      { role: 'tool', tool_call_id: 'call_a', content: 'A' },
      { role: 'tool', tool_call_id: 'call_b', content: 'B' },
    ]));
    expect(report.rows[0]).toMatchObject({ matched: 1, mismatched: 0 });
    expect(report.exitCode).toBe(0);
  });

  it('a follow-up in another order is mismatched, with exit code 1', async () => {
    const report = await replayJson('swapped.json', chatCassette([
      { role: 'tool', tool_call_id: 'call_b', content: 'B' },
      { role: 'tool', tool_call_id: 'call_a', content: 'A' },
    ]));
    expect(report.rows[0]).toMatchObject({ mismatched: 1 });
    expect(report.rows[0]?.reasons.join(' ')).toMatch(/not in call order \(recorded: calls 2, 1\)/);
    expect(report.exitCode).toBe(1);
  });

  it('a recorded result for an id no call has is mismatched', async () => {
    const report = await replayJson('stranger.json', chatCassette([
      { role: 'tool', tool_call_id: 'call_a', content: 'A' },
      { role: 'tool', tool_call_id: 'call_zzz', content: '?' },
    ]));
    expect(report.rows[0]?.reasons.join(' ')).toMatch(/mismatched: the recorded result for id 'call_zzz' answers no call/);
  });

  it('Ctrl+C during a folder replay: the aborted message is interrupted, not mismatched; the replay stops there', async () => {
    const folder = join(dir, 'folder');
    mkdirSync(folder);
    const followUp = [
      { role: 'tool', tool_call_id: 'call_a', content: 'A' },
      { role: 'tool', tool_call_id: 'call_b', content: 'B' },
    ];
    writeFileSync(join(folder, '1.json'), JSON.stringify(chatCassette(followUp)));
    writeFileSync(join(folder, '2.json'), JSON.stringify(chatCassette(followUp)));
    const controller = new AbortController();
    const recorder = recordingView();
    // Ctrl+C as the first call of the first message starts.
    const view: RunView = {
      ...recorder.view,
      event: (event) => {
        recorder.view.event(event);
        if (event.type === 'tool_execution_start') controller.abort();
      },
    };
    const report = await replay(folder, { view, delayMs: 0, signal: controller.signal });
    expect(report.aborted).toBe(true);
    expect(report.rows).toHaveLength(1);
    expect(report.rows[0]).toMatchObject({ messages: 1, matched: 0, explained: 0, mismatched: 0, interrupted: 1 });
    expect(report.rows[0]?.results[0]).toMatchObject({ status: 'interrupted' });
    expect(report.totals).toMatchObject({ mismatched: 0, interrupted: 1 });
    expect(recorder.runs[0]?.summary).toMatch(/^interrupted: Ctrl\+C aborted this message's run/);
    expect(formatReportTable(report)).toMatch(/total: 1 file, 1 message, 2 calls: 0 matched, 0 explained, 0 mismatched, 1 interrupted \(stopped early by Ctrl\+C\)/);
  });

  it('OpenAI Chat arguments reach the view as the recorded JSON text; the plain view prints them parsed', async () => {
    const path = join(dir, 'args.json');
    writeFileSync(path, JSON.stringify(chatCassette([
      { role: 'tool', tool_call_id: 'call_a', content: 'A' },
      { role: 'tool', tool_call_id: 'call_b', content: 'B' },
    ])));
    let out = '';
    const stream = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        out += chunk.toString();
        callback();
      },
    });
    await replay(path, { view: createRunView({ stream, tty: false }), delayMs: 0 });
    expect(out).toContain('start call_a echo {"v":"a"}\n');
    expect(out).not.toContain('\\"');
  });

  it('recorded arguments that fail the recorded schema are explained and named', async () => {
    const doc = chatCassette([
      { role: 'tool', tool_call_id: 'call_a', content: 'A' },
      { role: 'tool', tool_call_id: 'call_b', content: 'B' },
    ]) as { interactions: Array<{ response: { body: { choices: Array<{ message: { tool_calls: Array<{ function: { arguments: string } }> } }> } } }> };
    const second = doc.interactions[0]?.response.body.choices[0]?.message.tool_calls[1];
    if (second !== undefined) second.function.arguments = '{"v": 2}';
    const report = await replayJson('invalid.json', doc);
    expect(report.rows[0]).toMatchObject({ explained: 1, mismatched: 0 });
    expect(report.rows[0]?.reasons.join(' ')).toMatch(/call #2 'echo': the recorded arguments fail the recorded schema.*v: expected string, got integer/);
  });
});

describe('replay: Anthropic follow-ups with errors and text (synthetic)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'toolrun-replay-anthropic-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function anthropicCassette(followUpContent: unknown[], secondName = 'read'): unknown {
    const tools = [{ name: 'read', input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } }];
    const assistant = {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Reading both.' },
        { type: 'tool_use', id: 'toolu_a', name: 'read', input: { path: 'a' } },
        { type: 'tool_use', id: 'toolu_b', name: secondName, input: { path: 'b' } },
      ],
    };
    const user = { role: 'user', content: 'read a and b' };
    return {
      api: 'anthropic-messages',
      interactions: [
        { request: { body: { messages: [user], tools } }, response: { status: 200, body: { type: 'message', ...assistant, stop_reason: 'tool_use' } } },
        { request: { body: { messages: [user, assistant, { role: 'user', content: followUpContent }], tools } }, response: { status: 200, body: { type: 'message', role: 'assistant', content: [] } } },
      ],
    };
  }

  async function replayJson(name: string, doc: unknown): Promise<ReplayReport> {
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify(doc));
    return replay(path, { view: recordingView().view, delayMs: 0 });
  }

  it('a recorded is_error result is replayed as a throw and matches an error result', async () => {
    const report = await replayJson('error.json', anthropicCassette([
      { type: 'tool_result', tool_use_id: 'toolu_a', content: 'contents of a' },
      { type: 'tool_result', tool_use_id: 'toolu_b', content: [{ type: 'text', text: 'ENOENT: b' }], is_error: true },
    ]));
    expect(report.rows[0]).toMatchObject({ matched: 1, mismatched: 0 });
  });

  it('text before the tool_result blocks is an irregular recording: explained (F1 wants them first)', async () => {
    const report = await replayJson('text-first.json', anthropicCassette([
      { type: 'text', text: 'here you go' },
      { type: 'tool_result', tool_use_id: 'toolu_a', content: 'A' },
      { type: 'tool_result', tool_use_id: 'toolu_b', content: 'B' },
    ]));
    expect(report.rows[0]).toMatchObject({ explained: 1, mismatched: 0 });
    expect(report.rows[0]?.reasons.join(' ')).toMatch(/non-tool_result block comes before the tool_result blocks/);
  });

  it('a call to a tool the request did not define: explained, toolrun answers with its unknown-tool error', async () => {
    const report = await replayJson('unknown-tool.json', anthropicCassette([
      { type: 'tool_result', tool_use_id: 'toolu_a', content: 'A' },
      { type: 'tool_result', tool_use_id: 'toolu_b', content: 'no such tool', is_error: true },
    ], 'write'));
    expect(report.rows[0]).toMatchObject({ explained: 1, mismatched: 0 });
    expect(report.rows[0]?.reasons.join(' ')).toMatch(/call #2 names tool 'write', which the recorded request did not define; toolrun answered with its unknown-tool error/);
  });
});

describe('replay: bad input is one CliInputError line naming the file', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'toolrun-replay-bad-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const run = (target: string) => replay(target, { view: recordingView().view, delayMs: 0 });

  it('a missing path', async () => {
    const missing = join(dir, 'nope.json');
    await expect(run(missing)).rejects.toThrow(CliInputError);
    await expect(run(missing)).rejects.toThrow(`${missing}: no such file or folder`);
  });

  it('a JSON syntax error, with line and column', async () => {
    const path = join(dir, 'broken.json');
    writeFileSync(path, '{\n  "api": "openai-chat-completions",\n  "interactions": [,]\n}\n');
    const error = await run(path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CliInputError);
    expect((error as Error).message).toMatch(/^\/.*\/broken\.json:3:20: JSON syntax error: unexpected character ","$/);
    expect((error as Error).message.startsWith(`${path}:3:20:`)).toBe(true);
    expect((error as Error).message).not.toContain('\n');
  });

  it('a JSON syntax error on one line of a JSON Lines file names that line', async () => {
    const path = join(dir, 'broken.jsonl');
    writeFileSync(path, '{"type":"message_start"}\n{"type": oops}\n');
    await expect(run(path)).rejects.toThrow(`${path}:2:10: JSON syntax error: unexpected character "o"`);
  });

  it('an unknown format, listing the known formats', async () => {
    const path = join(dir, 'weird.json');
    writeFileSync(path, JSON.stringify({ hello: 'world' }));
    const error = await run(path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CliInputError);
    expect((error as Error).message).toMatch(/weird\.json: unknown recording format \(an object with keys hello\); known formats: converted cassette JSON/);
    expect((error as Error).message).toMatch(/Claude Code transcript JSONL.*BFCL question JSONL/);
  });

  it('a cassette with an unknown api', async () => {
    const path = join(dir, 'other-api.json');
    writeFileSync(path, JSON.stringify({ api: 'mistral-chat', interactions: [] }));
    await expect(run(path)).rejects.toThrow(/other-api\.json: unknown recording format \(a cassette with an unknown api "mistral-chat"\)/);
  });

  it('a BFCL question file without its answers', async () => {
    const path = join(dir, 'BFCL_v4_lonely.json');
    writeFileSync(path, `${JSON.stringify({ id: 'x_0', question: [[]], function: [] })}\n${JSON.stringify({ id: 'x_1', question: [[]], function: [] })}\n`);
    await expect(run(path)).rejects.toThrow(/BFCL_v4_lonely\.json: BFCL question file without its answers \(looked for possible_answer_BFCL_v4_lonely\.json/);
  });

  it('a folder without any recording', async () => {
    const empty = mkdtempSync(join(dir, 'empty-'));
    writeFileSync(join(empty, 'notes.json'), '[1, 2]');
    await expect(run(empty)).rejects.toThrow(/no recordings found \(1 \.json\/\.jsonl files/);
  });
});
