/**
 * I4 "never a hang": a log whose line never ends (a pipe, a device, a file still being
 * written) is refused once the line is longer than LINE_LIMIT, without waiting for its end
 * and without buffering it. The log is a real FIFO (made with mkfifo) whose writer sends the
 * header and then 2 MiB of one line, and keeps the pipe open.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EventLogError, LINE_LIMIT, readEventLog } from '../../lib/inspect/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'toolrun-endless-log-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('I4 the event log: a line that never ends is refused at LINE_LIMIT, not awaited', () => {
  it('I4 a FIFO holding the header and an endless line: readEventLog rejects while the writer still holds the pipe open', { timeout: 60_000 }, async () => {
    const fifo = join(dir, 'endless.jsonl');
    execFileSync('mkfifo', [fifo]);
    const reading = readEventLog(fifo);
    // Opening the write end waits for the read end, which readEventLog opens; writes are async, so the reader runs between them.
    const writer = await open(fifo, 'w');
    try {
      await writer.write('{"format":"toolrun-events","version":1}\n"');
      const chunk = 'x'.repeat(64 * 1024);
      // A reader that stops reading ends the writes with EPIPE: that is fine, the pipe was refused.
      const writing = (async () => {
        for (let sent = 0; sent < 2 * LINE_LIMIT; sent += chunk.length) await writer.write(chunk);
      })().catch(() => undefined);
      // The pipe stays open and the line unterminated: only a reader that refuses at the bound settles.
      const outcome = await Promise.race([
        reading.then(() => 'read', (error: unknown) => error),
        new Promise((resolve) => setTimeout(() => resolve('still waiting after 20 s'), 20_000)),
      ]);
      expect(outcome).toBeInstanceOf(EventLogError);
      expect((outcome as EventLogError).message).toMatch(/:2: a line of more than 1048576 characters/);
      expect((outcome as EventLogError).line).toBe(2);
      await writing;
    } finally {
      await writer.close();
    }
  });
});
