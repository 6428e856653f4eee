/**
 * The recordings shipped in `examples/recordings/` (contract F4 on the project's own data):
 * `toolrun replay` matches every message of them, streamed or not, and `examples/record.ts`
 * writes them again byte for byte (a fake provider on 127.0.0.1, the official SDKs, the
 * coding tools on a fixed workspace).
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { replay, type ReplayReport } from '../../lib/cli/replay.ts';
import type { RunView } from '../../lib/cli/view/run-view.ts';
import { writeRecordings } from '../../examples/record.ts';
import { itSandboxed } from '../sandbox.ts';

const recordings = fileURLToPath(new URL('../../examples/recordings/', import.meta.url));
const FILES = ['anthropic-session.json', 'openai-chat-session.json'];

/** A view that draws nothing. */
const quiet: RunView = { begin: () => undefined, event: () => undefined, end: () => undefined, line: () => undefined, close: () => undefined };

function statuses(report: ReplayReport): string[] {
  return report.rows.flatMap((row) => row.results.map((result) => `${row.file} ${result.label}: ${result.status}${result.reasons.length > 0 ? ` (${result.reasons.join('; ')})` : ''}`));
}

describe('the shipped recordings replay with every message matched (F4)', () => {
  it('replay examples/recordings: 3 messages, 8 calls, all matched, exit code 0', async () => {
    const report = await replay(recordings, { view: quiet, delayMs: 0 });
    expect(report.rows.map((row) => row.file)).toEqual(FILES);
    expect(statuses(report).filter((line) => !line.endsWith(': matched'))).toEqual([]);
    expect(report.totals).toMatchObject({ files: 2, messages: 3, calls: 8, matched: 3, explained: 0, mismatched: 0 });
    expect(report.skipped).toEqual([]);
    expect(report.exitCode).toBe(0);
  });

  it('replay --stream plays the OpenAI session event by event: matched', async () => {
    const report = await replay(join(recordings, 'openai-chat-session.json'), { view: quiet, delayMs: 0, stream: true, eventDelayMs: 0 });
    expect(statuses(report)).toEqual(['openai-chat-session.json interaction 0: matched']);
    expect(report.exitCode).toBe(0);
  });
});

describe('examples/record.ts', () => {
  const out = mkdtempSync(join(tmpdir(), 'toolrun-recordings-'));
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  itSandboxed('writes the committed recordings again, byte for byte', async () => {
    await writeRecordings(out);
    expect(readdirSync(out).sort()).toEqual(FILES);
    for (const file of FILES) expect(readFileSync(join(out, file), 'utf8'), file).toBe(readFileSync(join(recordings, file), 'utf8'));
  });
});
