/**
 * `npm start -- replay --stream <file-or-folder>` (contract S4 shown live): the recorded
 * streams of the corpus replayed event by event through the stream adapters and `runTools`,
 * with the F4 check and the check that the streamed calls equal the assembled message's.
 */
import { execFile } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { CliInputError } from '../../lib/cli/errors.ts';
import { main } from '../../lib/cli/main.ts';
import { memoryIo, repoRoot } from './support.ts';
import { replay, type ReplayReport } from '../../lib/cli/replay.ts';
import type { RunView } from '../../lib/cli/view/index.ts';
import type { ToolEvent } from '../../lib/core/run/events.ts';
import type { ToolCall } from '../../lib/core/tool/tool.ts';
import { corpusDir, corpusSkipNote, hasCorpus } from '../formats/corpus.ts';

/** A view that remembers everything, in one timeline: run starts, events, lines. */
function timelineView() {
  const timeline: string[] = [];
  const begun: Array<readonly ToolCall[]> = [];
  const view: RunView = {
    begin: (title, calls) => {
      begun.push(calls);
      timeline.push(`begin ${title}`);
    },
    event: (event: ToolEvent) => void timeline.push(`${event.type} ${event.index}`),
    end: (summary) => void timeline.push(`end ${summary ?? ''}`),
    line: (text) => void timeline.push(text),
    close: () => {},
  };
  return { view, timeline, begun };
}

const STREAMED_FILES = [
  'anthropic/openllmetry__anthropic_tools_streaming_legacy.json',
  'anthropic/vercel-ai__anthropic-tool-no-args.chunks.jsonl',
  'openai-chat/llama-stack__function_call_ordering_2.json',
  'openai-chat/openllmetry__openai_streaming_parallel.json',
  'openai-chat/openllmetry__writer_streaming_seven_tool_calls.json',
];

describe.skipIf(!hasCorpus)(`replay --stream over the corpus${corpusSkipNote}`, () => {
  let report: ReplayReport;
  let recorded: ReturnType<typeof timelineView>;

  beforeAll(async () => {
    recorded = timelineView();
    report = await replay(corpusDir, { view: recorded.view, stream: true, eventDelayMs: 0, delayMs: 0 });
  }, 30_000);

  it('replays exactly the recordings that kept a stream, with no mismatch; the others are skipped with the reason', () => {
    expect(report.rows.map((r) => r.file)).toEqual(STREAMED_FILES);
    expect(report.totals).toMatchObject({ files: 5, messages: 6, calls: 16, mismatched: 0 });
    expect(report.exitCode).toBe(0);
    const skipped = report.skipped.filter((s) => s.reason === 'no recorded stream (replayed without --stream)').map((s) => s.file);
    expect(skipped).toContain('anthropic/pydantic-ai__anthropic_multiple_parallel_tool_calls.json');
    expect(skipped).toContain('openai-chat/openllmetry__writer_chat_seven_tool_calls.json');
  });

  it('starts each run with no calls listed, and shows every call but the last complete (and started) while the message still streams', () => {
    expect(recorded.begun.every((calls) => calls.length === 0)).toBe(true);
    const { timeline } = recorded;
    const writer = timeline.findIndex((line) => line.startsWith('begin openai-chat/openllmetry__writer_streaming_seven_tool_calls.json'));
    const ended = timeline.findIndex((line, i) => i > writer && line.includes('the message ended (complete, finish_reason "tool_calls"): 7 calls'));
    expect(writer).toBeGreaterThanOrEqual(0);
    expect(ended).toBeGreaterThan(writer);
    // Six calls were started (tool_execution_start) before the message's end was known.
    const startedBefore = timeline.slice(writer, ended).filter((line) => line.startsWith('tool_execution_start')).length;
    expect(startedBefore).toBeGreaterThanOrEqual(6);
    expect(timeline.slice(writer, ended).filter((line) => line.includes('the message is still streaming')).length).toBeGreaterThanOrEqual(6);
    // Every call's "complete" line comes before the line saying the message ended.
    expect(timeline.slice(writer, ended).filter((line) => / call #\d .* complete/.test(line))).toHaveLength(7);
  });

  it('refuses a recording without a stream, and a bad event delay, in one line', async () => {
    const { view } = timelineView();
    await expect(replay(`${corpusDir}openai-chat/pydantic-ai__deepseek_two_calls.json`, { view, stream: true })).rejects.toThrow(CliInputError);
    await expect(replay(`${corpusDir}openai-chat/pydantic-ai__deepseek_two_calls.json`, { view, stream: true })).rejects.toThrow(/kept no streamed response/);
    await expect(replay(`${corpusDir}bfcl`, { view, stream: true })).rejects.toThrow(/no recorded streams found/);
    await expect(replay(corpusDir, { view, stream: true, eventDelayMs: -1 })).rejects.toThrow(/--event-delay must be a number of ms ≥ 0/);
  });
});

describe.skipIf(!hasCorpus)(`toolrun replay --stream${corpusSkipNote}`, () => {
  it('in process: prints the calls starting mid-message, "the message ended" after the last call is complete, and exits 0', async () => {
    const io = memoryIo();
    const code = await main(['replay', '--stream', '--event-delay', '0', '--delay', '0', 'corpus/anthropic/openllmetry__anthropic_tools_streaming_legacy.json'], io);
    expect(io.err()).toBe('');
    expect(code).toBe(0);
    const lines = io.out().split('\n');
    const firstCall = lines.findIndex((l) => l.includes('call #1 toolu_014x5X91kx3fvdhpLvwXZWE2 get_weather complete, the message is still streaming'));
    const firstStart = lines.findIndex((l) => l.startsWith('start toolu_014x5X91kx3fvdhpLvwXZWE2 get_weather'));
    const lastCall = lines.findIndex((l) => / call #2 \S+ get_time complete/.test(l));
    const ended = lines.findIndex((l) => l.includes('the message ended (complete, stop_reason "tool_use"): 2 calls'));
    expect(firstCall).toBeGreaterThan(0);
    expect(firstStart).toBeGreaterThan(firstCall);
    expect(lastCall).toBeGreaterThan(firstStart);
    // The message ends after its last call is complete.
    expect(ended).toBeGreaterThan(lastCall);
    expect(io.out()).toContain('total: 1 file, 1 message, 2 calls: 0 matched, 1 explained, 0 mismatched');
  });

  it('the real program, piped: one replay end to end, exit 0 on its own', { timeout: 60_000 }, async () => {
    const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', 'lib/cli/main.ts', 'replay', '--stream', '--event-delay', '1', '--delay', '0', 'corpus/anthropic/openllmetry__anthropic_tools_streaming_legacy.json'],
        { cwd: repoRoot, env: { ...process.env, NO_COLOR: '1' }, timeout: 50_000 },
        (error, out, err) => resolve({ code: error === null ? 0 : Number(error.code), stdout: out, stderr: err }),
      );
    });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain('total: 1 file, 1 message, 2 calls: 0 matched, 1 explained, 0 mismatched');
  });
});
