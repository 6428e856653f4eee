/**
 * Every file system a sandboxed command may write is bounded: bwrap's own `/` and `/dev` are
 * tmpfs mounts with no size bound (half the host's memory each), writable by the command, so
 * without a memory cgroup (an unprivileged host, `memoryLimit: 'rlimit'`) a command could fill
 * the host's memory past `maxMemoryBytes` and `tmpSizeBytes` by writing files there, or by
 * mounting its own tmpfs in a nested user namespace. The sandbox makes `/` and `/dev`
 * read-only, gives `/dev/shm` a bounded tmpfs like `/tmp`, and refuses nested user namespaces.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chown } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { shellTool, type ShellDetails, type ShellProgress } from '../../lib/tools/shell.ts';
import type { ToolResult } from '../../lib/core/tool/tool.ts';
import { asGenerator, contextFor, drain, tempDir, textOf } from './support.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../..');

/** Writes 4 MiB (past the 1 MiB bounds below) to each place, then prints what landed and whether a nested user namespace starts. */
const FILL_COMMAND =
  'for f in /fill /dev/fill /dev/shm/fill /tmp/fill; do dd if=/dev/zero of=$f bs=1M count=4 2>/dev/null; echo "$f $(wc -c < $f 2>/dev/null || echo none)"; done; ' +
  'unshare -Ur true 2>/dev/null && echo nested-userns; echo n > /dev/null && echo null-ok; echo fill-done';

function expectBounded(text: string): void {
  expect(text).toContain('fill-done');
  expect(text).toMatch(/^\/fill none$/m);
  expect(text).toMatch(/^\/dev\/fill none$/m);
  expect(text).toMatch(/^\/dev\/shm\/fill 1048576$/m);
  expect(text).toMatch(/^\/tmp\/fill 1048576$/m);
  expect(text).not.toMatch(/^nested-userns$/m);
  expect(text).toMatch(/^null-ok$/m);
}

const SANDBOX = { tmpSizeBytes: 1024 ** 2 };

describe('shellTool sandbox: every file system the command may write is bounded (/ and /dev read-only, /dev/shm and /tmp sized, no nested user namespace)', () => {
  it('as this process (root: a root-owned workspace), writes to / and /dev fail and /dev/shm holds at most tmpSizeBytes', { timeout: 60_000 }, async () => {
    const workspace = await tempDir();
    const tool = shellTool({ cwd: workspace, sandbox: SANDBOX });
    const result = (await drain(asGenerator<ShellProgress, ToolResult<ShellDetails>>(tool.execute({ command: FILL_COMMAND }, contextFor('shell'))))).result;
    expect(result.details?.sandboxed).toBe(true);
    expectBounded(textOf(result));
    // The workspace itself stays writable.
    const ok = (await drain(asGenerator<ShellProgress, ToolResult<ShellDetails>>(tool.execute({ command: 'echo x > made.txt && cat made.txt' }, contextFor('shell'))))).result;
    expect(textOf(ok)).toMatch(/^x$/m);
  });

  it('a refused nested user namespace (unshare: No space left on device) is not reported as a full /tmp', { timeout: 60_000 }, async () => {
    const workspace = await tempDir();
    const tool = shellTool({ cwd: workspace, sandbox: SANDBOX });
    const result = (await drain(asGenerator<ShellProgress, ToolResult<ShellDetails>>(tool.execute({ command: 'unshare -Ur true; echo done' }, contextFor('shell'))))).result;
    expect(textOf(result)).toMatch(/^done$/m);
    expect(textOf(result)).not.toContain('/tmp may be full');
    expect(result.details?.limitsReached ?? []).not.toContain('tmp');
    // A real full /tmp still says so.
    const full = (await drain(asGenerator<ShellProgress, ToolResult<ShellDetails>>(tool.execute({ command: 'dd if=/dev/zero of=/tmp/f bs=1M count=4' }, contextFor('shell'))))).result;
    expect(textOf(full)).toContain('/tmp may be full');
  });

  it('as an unprivileged host user (setpriv --reuid=65534), with no memory cgroup: the same', { timeout: 120_000 }, async (context) => {
    if (process.getuid?.() !== 0 || !existsSync('/usr/bin/setpriv')) context.skip('needs root and /usr/bin/setpriv to start a host process as uid 65534');
    const workspace = await tempDir();
    await chown(workspace, 65534, 65534);
    const { stdout } = await promisify(execFile)(
      '/usr/bin/setpriv',
      ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, '--import', 'tsx', path.join(here, 'fixtures/shell-host.ts'), workspace, 'on', FILL_COMMAND, JSON.stringify(SANDBOX)],
      { cwd: repoRoot, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 },
    );
    const result = (JSON.parse(stdout) as { result: ToolResult<ShellDetails> }).result;
    expect(result.details?.sandboxed).toBe(true);
    expectBounded(textOf(result));
  });
});
