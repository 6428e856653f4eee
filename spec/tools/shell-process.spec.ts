/**
 * ShellProcess (lib/tools/shell-process.ts): the progress queue of one running command, now a
 * core `Channel` read with take()/wait(). A real `/bin/sh` writes chunks one at a time; the
 * spec waits for each chunk to reach the process's output (`proc.output`, fed by every
 * chunk) before letting the command write the next, so each chunk is its own `data` event.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ShellProcess } from '../../lib/tools/shell-process.ts';
import { pollUntil, tempDir } from './support.ts';

/** A command that prints `a`, then `b` once `go1` exists, then `c` once `go2` exists. */
const STEPPED = 'printf a; while [ ! -e go1 ]; do sleep 0.01; done; printf b; while [ ! -e go2 ]; do sleep 0.01; done; printf c';

function start(dir: string): ShellProcess {
  return new ShellProcess(STEPPED, { cwd: dir, maxOutputBytes: 1024, exitDrainMs: 1000, env: { PATH: process.env.PATH }, launch: undefined });
}

/** Waits until the process has received `text` in all (each chunk is a separate data event). */
async function received(proc: ShellProcess, text: string): Promise<void> {
  await pollUntil(() => proc.output.render().text === text, `output "${text}"`, { timeoutMs: 15_000 });
}

describe('ShellProcess: its progress queue (a Channel)', () => {
  // Fails if chunks are no longer merged while unread: three separate data events would
  // come out as three items.
  it('chunks of one stream that wait unread are merged into one progress item, in order', async () => {
    const dir = await tempDir();
    const proc = start(dir);
    await received(proc, 'a');
    await writeFile(path.join(dir, 'go1'), '');
    await received(proc, 'ab');
    await writeFile(path.join(dir, 'go2'), '');
    await proc.closed;
    expect(proc.take()).toEqual({ stream: 'stdout', text: 'abc' });
    expect(proc.take()).toBeUndefined();
    expect(proc.exitCode).toBe(0);
    await proc.changed(); // closed: resolves at once
  });

  // Fails if a chunk is merged into an item the consumer already took (the consumer's object
  // would change under it, and the text would be yielded twice or lost).
  it('a chunk after the consumer took everything starts a new item; the taken item never changes', async () => {
    const dir = await tempDir();
    const proc = start(dir);
    await received(proc, 'a');
    const first = proc.take();
    expect(first).toEqual({ stream: 'stdout', text: 'a' });
    await writeFile(path.join(dir, 'go1'), '');
    await proc.changed(); // woken by the push of 'b'
    const second = proc.take();
    expect(second).toEqual({ stream: 'stdout', text: 'b' });
    await writeFile(path.join(dir, 'go2'), '');
    await proc.closed;
    expect(proc.take()).toEqual({ stream: 'stdout', text: 'c' });
    expect(first).toEqual({ stream: 'stdout', text: 'a' });
    expect(second).toEqual({ stream: 'stdout', text: 'b' });
  });

  // Fails if discardProgress() stops dropping: chunks after it would still be queued.
  it('discardProgress() drops what waits and ignores later chunks; the output keeps them', async () => {
    const dir = await tempDir();
    const proc = start(dir);
    await received(proc, 'a');
    proc.discardProgress();
    expect(proc.take()).toBeUndefined();
    await writeFile(path.join(dir, 'go1'), '');
    await writeFile(path.join(dir, 'go2'), '');
    await proc.closed;
    expect(proc.take()).toBeUndefined();
    expect(proc.output.render().text).toBe('abc');
  });
});
