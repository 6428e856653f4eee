/**
 * The program's inspector (I1): `toolrun --inspect` serves the demo's timeline live and
 * keeps it up after the run until Ctrl+C; `toolrun inspect <log>` serves a recorded one.
 * Real child processes; the page's data is read over loopback HTTP.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../cli/support.ts';

const dir = mkdtempSync(join(tmpdir(), 'toolrun-inspect-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Starts the program; resolves with the child and its output once `marker` is printed. */
function start(args: string[], marker: RegExp): Promise<{ child: ChildProcess; out: () => string; exit: Promise<number | null> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'lib/cli/main.ts', ...args], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const exit = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (marker.test(out)) resolve({ child, out: () => out, exit });
    });
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    void exit.then((code) => reject(new Error(`exited ${code} before ${marker}: ${out}`)));
  });
}

/** The first SSE message of the timeline's stream. */
async function snapshot(url: string): Promise<{ live: boolean; batches: Array<{ label: string; end?: number }>; calls: Array<{ index: number; name: string; outcome?: string; release?: number; end?: number }> }> {
  const controller = new AbortController();
  const response = await fetch(`${url}events`, { signal: controller.signal });
  const reader = response.body!.getReader();
  let text = '';
  while (!text.includes('\n\n')) text += new TextDecoder().decode((await reader.read()).value);
  controller.abort();
  return JSON.parse(text.split('data: ')[1]!.split('\n')[0]!);
}

describe('I1 the program serves the inspector', () => {
  it('I1 toolrun --inspect: the demo runs, its URL is printed with its token, the timeline stays up until Ctrl+C (exit 0)', async () => {
    const { child, out, exit } = await start(['--inspect', '--approve'], /the timeline stays at (http:\/\/127\.0\.0\.1:\d+\/[0-9a-f]{64}\/) until Ctrl\+C/);
    try {
      const url = /the timeline stays at (\S+)/.exec(out())![1]!;
      const timeline = await snapshot(url);
      expect(timeline.batches.map((b) => b.label)).toEqual(['demo']);
      expect(timeline.calls.sort((a, b) => a.index - b.index).map((c) => [c.name, c.outcome])).toEqual([
        ['shell', 'ok'], ['shell', 'ok'], ['read_file', 'ok'], ['grep', 'ok'], ['list_files', 'ok'], ['shell', 'ok'],
      ]);
      // The file tools ended long before the first shell call and were held behind it.
      const [first, , readFile] = timeline.calls;
      expect(readFile!.release! - readFile!.end!).toBeGreaterThan(500);
      expect(readFile!.release!).toBeGreaterThanOrEqual(first!.end!);
      expect((await fetch(new URL(url).origin + '/')).status).toBe(404);
    } finally {
      child.kill('SIGINT');
    }
    expect(await exit).toBe(0);
  }, 60_000);

  it('I1 toolrun inspect <log>: serves a recorded log until Ctrl+C', async () => {
    const file = join(dir, 'one.jsonl');
    writeFileSync(
      file,
      [
        '{"format":"toolrun-events","version":1}',
        '{"t":1,"batch":1,"event":{"type":"batch_start","label":"recorded"}}',
        '{"t":2,"batch":1,"event":{"type":"tool_execution_start","toolCallId":"a","toolName":"echo","index":0,"args":{}}}',
        '{"t":9,"batch":1,"event":{"type":"tool_execution_end","toolCallId":"a","toolName":"echo","index":0,"outcome":"ok","isError":false,"result":{"content":[]}}}',
        '{"t":10,"batch":1,"event":{"type":"tool_result","toolCallId":"a","toolName":"echo","index":0}}',
      ].join('\n'),
    );
    const { child, out, exit } = await start(['inspect', file], /the timeline is at (\S+)/);
    try {
      expect(out()).toContain('1 batch, 1 call');
      const timeline = await snapshot(/the timeline is at (\S+)/.exec(out())![1]!);
      expect(timeline.live).toBe(false);
      expect(timeline.calls.map((c) => [c.name, c.outcome, c.release])).toEqual([['echo', 'ok', 10]]);
    } finally {
      child.kill('SIGINT');
    }
    expect(await exit).toBe(0);
  }, 60_000);
});
