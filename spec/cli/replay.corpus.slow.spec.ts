/**
 * Contract F4 over the whole recorded corpus (../shared/corpus, when it is there): every
 * recording replays with zero mismatched messages, and the files with a known story are
 * matched or explained as expected. In `npm run test:slow`: replaying all 28 files costs
 * about 0.7 s of CPU; spec/cli/replay.spec.ts replays one folder of it in `npm test`.
 * Fails on any mismatched message, a file missing from the report, or a changed count.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { formatReportTable, replay, type ReplayReport } from '../../lib/cli/replay.ts';
import type { ToolEvent } from '../../lib/core/run/events.ts';
import { corpusDir, corpusSkipNote, hasCorpus } from '../formats/corpus.ts';
import { recordingView, row } from './replay-view.ts';

describe.skipIf(!hasCorpus)(`replay over the whole corpus (F4)${corpusSkipNote}`, () => {
  let report: ReplayReport;
  let recorder: ReturnType<typeof recordingView>;

  beforeAll(async () => {
    recorder = recordingView();
    report = await replay(corpusDir, { view: recorder.view, delayMs: 0 });
  }, 30_000);

  it('has zero mismatched messages and exit code 0', () => {
    const mismatched = report.rows.flatMap((r) => r.results.filter((m) => m.status === 'mismatched').map((m) => `${r.file} ${m.label}: ${m.reasons.join('; ')}`));
    expect(mismatched).toEqual([]);
    expect(report.totals.mismatched).toBe(0);
    expect(report.exitCode).toBe(0);
  });

  it('gives every recording file a row with at least one message, and skips only INDEX.json', () => {
    expect(report.rows.map((r) => r.file)).toEqual([...report.rows.map((r) => r.file)].sort());
    expect(report.rows).toHaveLength(28);
    for (const r of report.rows) expect(r.messages, r.file).toBeGreaterThan(0);
    expect(report.skipped.map((s) => s.file)).toEqual(['INDEX.json']);
    // BFCL answers are read with their question files, not as rows of their own.
    expect(report.rows.filter((r) => r.file.includes('possible_answer'))).toEqual([]);
    expect(row(report, 'bfcl/BFCL_v4_parallel.json').companions).toEqual(['bfcl/possible_answer_BFCL_v4_parallel.json']);
  });

  it('counts add up: matched + explained + mismatched = messages, per file and in total', () => {
    for (const r of report.rows) expect(r.matched + r.explained + r.mismatched + r.interrupted, r.file).toBe(r.messages);
    const sum = (key: 'messages' | 'calls') => report.rows.reduce((n, r) => n + r[key], 0);
    expect(report.totals.messages).toBe(sum('messages'));
    expect(report.totals.calls).toBe(sum('calls'));
  });

  it('pydantic-ai Anthropic: 4 parallel calls, matched', () => {
    expect(row(report, 'anthropic/pydantic-ai__anthropic_multiple_parallel_tool_calls.json')).toMatchObject({
      format: 'Anthropic Messages cassette',
      messages: 1,
      calls: 4,
      matched: 1,
      explained: 0,
    });
  });

  it('crewAI Anthropic and OpenAI parallel tests, pydantic-ai HITL, DeepSeek and Responses retry: matched', () => {
    expect(row(report, 'anthropic/crewai__anthropic_parallel_native_tool_calling_agent_kickoff.json')).toMatchObject({ calls: 3, matched: 1 });
    expect(row(report, 'openai-chat/crewai__openai_parallel_native_tool_calling_agent_kickoff.json')).toMatchObject({ calls: 3, matched: 1 });
    expect(row(report, 'openai-chat/pydantic-ai__openai_chat_hitl_two_calls.json')).toMatchObject({ calls: 2, matched: 1 });
    expect(row(report, 'openai-chat/pydantic-ai__deepseek_two_calls.json')).toMatchObject({ messages: 2, calls: 3, matched: 2 });
    expect(row(report, 'openai-responses/pydantic-ai__openai_responses_model_retry.json')).toMatchObject({ calls: 2, matched: 1 });
  });

  it('crewAI max usage: the two multi-call turns are explained (history rewritten to keep 1 call), the single calls match', () => {
    const r = row(report, 'openai-chat/crewai__openai_max_usage_count_multi_turn.json');
    expect(r).toMatchObject({ messages: 4, calls: 9, matched: 2, explained: 2, mismatched: 0 });
    expect(r.results.map((m) => [m.calls, m.status])).toEqual([[4, 'explained'], [3, 'explained'], [1, 'matched'], [1, 'matched']]);
    expect(r.results[0]?.reasons.join(' ')).toMatch(/rewrote the assistant message in history to hold 1 of its 4 calls/);
  });

  it('Bedrock reused call_0 and Gemini calls without ids: explained, paired by position', () => {
    const bedrock = row(report, 'openai-responses/pydantic-ai__bedrock_mantle_reused_call_ids.json');
    expect(bedrock).toMatchObject({ messages: 2, calls: 2, explained: 2 });
    expect(bedrock.reasons.join('\n')).toMatch(/rewrote the call ids in history \(call_0 → resp_\w+:call_0\)/);
    const gemini = row(report, 'other/pydantic-ai__gemini_three_identical_calls_no_ids.json');
    expect(gemini).toMatchObject({ messages: 5, calls: 7, explained: 5 });
    expect(gemini.results[0]).toMatchObject({ calls: 3, status: 'explained' });
    expect(gemini.results[0]?.reasons.join(' ')).toMatch(/without ids; the framework assigned its own ids/);
  });

  it('recordings without a follow-up are explained as such, never matched', () => {
    for (const file of [
      'anthropic/openinference__anthropic_multiple_tool_calling.json',
      'anthropic/vercel-ai__anthropic-programmatic-tool-calling.1.json',
      'anthropic/vercel-ai__anthropic-tool-no-args.chunks.jsonl',
      'openai-chat/vercel-ai__cohere-tool-call.json',
      'openai-chat/openllmetry__writer_streaming_seven_tool_calls.json',
    ]) {
      const r = row(report, file);
      expect(r.matched, file).toBe(0);
      expect(r.reasons.join(' '), file).toMatch(/no (request or )?follow-up recorded/);
    }
    expect(row(report, 'openai-chat/openllmetry__writer_streaming_seven_tool_calls.json').calls).toBe(7);
    expect(row(report, 'anthropic/vercel-ai__anthropic-programmatic-tool-calling.1.json').calls).toBe(4);
  });

  it('BFCL: one message per entry, built from the ground truth; schema failures of the ground truth are reported', () => {
    expect(row(report, 'bfcl/BFCL_v4_parallel.json')).toMatchObject({ messages: 200, calls: 540, explained: 200 });
    expect(row(report, 'bfcl/BFCL_v4_parallel_multiple.json')).toMatchObject({ messages: 200, calls: 607 });
    expect(row(report, 'bfcl/BFCL_v4_live_parallel.json')).toMatchObject({ messages: 16, calls: 39 });
    expect(row(report, 'bfcl/BFCL_v4_live_parallel_multiple.json')).toMatchObject({ messages: 24, calls: 55 });
    // parallel_152: BFCL accepts null for `mod` (type float, "Default is None"); JSON Schema does not.
    expect(row(report, 'bfcl/BFCL_v4_parallel.json').reasons.join('\n')).toMatch(/'math\.power': the recorded arguments fail the recorded schema.*mod: expected number, got null/);
  });

  it('Claude Code: completion-order logs, rejections and cancelled siblings are explained; subagent messages counted once', () => {
    const short = row(report, 'claude-code/spotter__short.jsonl');
    expect(short).toMatchObject({ messages: 1, calls: 2, explained: 1 });
    expect(short.reasons.join(' ')).toMatch(/the user rejected 2 of 2 calls/);
    const heavy = row(report, 'claude-code/spotter__tool_heavy.jsonl');
    expect(heavy.reasons.join(' ')).toMatch(/completion order, not call order \(logged: calls 2, 1\)/);
    const agent = row(report, 'claude-code/spotter__agent-a2898e3.subagent.jsonl');
    expect(agent).toMatchObject({ messages: 11, calls: 33 });
    expect(agent.reasons.join(' ')).toMatch(/cancelled 7 sibling calls/);
    // 11 top-level messages and 5 embedded subagent messages (agent_progress lines), each once: 25 calls.
    const sub = row(report, 'claude-code/spotter__subagent.jsonl');
    expect(sub).toMatchObject({ messages: 16, calls: 25 });
    expect(sub.results.filter((m) => m.label.startsWith('subagent '))).toHaveLength(5);
    expect(row(report, 'claude-code/spotter__8463c716.session.jsonl')).toMatchObject({ calls: 196 });
  });

  it('drives the view: one begin/end per message, and per call a start, an end and a tool_result', () => {
    const { runs } = recorder;
    expect(runs).toHaveLength(report.totals.messages);
    for (const run of runs) {
      const count = (type: ToolEvent['type']) => run.events.filter((e) => e.type === type).length;
      expect(count('tool_execution_start'), run.title).toBe(run.calls.length);
      expect(count('tool_execution_end'), run.title).toBe(run.calls.length);
      expect(count('tool_result'), run.title).toBe(run.calls.length);
      expect(count('tool_execution_update'), run.title).toBeLessThanOrEqual(run.calls.length);
      expect(run.summary, run.title).toMatch(/^(matched|explained: .+)$/);
    }
    expect(runs[0]?.title).toMatch(/^anthropic\/crewai__.*· interaction 0$/);
    expect(recorder.lines.some((line) => line.startsWith('── bfcl/BFCL_v4_parallel.json with bfcl/possible_answer_BFCL_v4_parallel.json'))).toBe(true);
    expect(recorder.closedCount()).toBe(0);
  });

  it('formatReportTable: a header, one row per file with its reasons, a totals line, the skipped files', () => {
    const table = formatReportTable(report);
    const lines = table.split('\n');
    expect(lines[0]).toMatch(/^file\s+format\s+msgs\s+calls\s+matched\s+explained\s+mismatched$/);
    expect(table).toMatch(/\nanthropic\/pydantic-ai__anthropic_multiple_parallel_tool_calls\.json\s+Anthropic Messages cassette\s+1\s+4\s+1\s+0\s+0\n/);
    expect(table).toMatch(/\n {4}explained ×200: no follow-up recorded \(BFCL ground truth/);
    expect(table).toContain(`total: 28 files, ${report.totals.messages} messages, ${report.totals.calls} calls: `);
    expect(lines.at(-1)).toMatch(/^skipped INDEX\.json: not a recording: a JSON array/);
  });

});

