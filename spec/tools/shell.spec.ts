import { existsSync, readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { getEventListeners } from 'node:events';
import path from 'node:path';
import { toJsonSchema } from '@valibot/to-json-schema';
import { describe, expect, it, vi } from 'vitest';
import { shellTool } from '../../lib/tools/shell.ts';
import type { ShellDetails, ShellProgress } from '../../lib/tools/shell.ts';
import type { ShellSandboxOptions } from '../../lib/tools/sandbox.ts';
import { itSandboxed, sandboxAvailable } from '../sandbox.ts';
import type { ToolResult } from '../../lib/core/tool/tool.ts';
import { asGenerator, callProcesses, contextFor, drain, isGone, pollUntil, readPids, tempDir, textOf } from './support.ts';

type ShellGen = AsyncGenerator<ShellProgress, ToolResult<ShellDetails>, undefined>;

function run(tool: ReturnType<typeof shellTool>, command: string, signal?: AbortSignal, timeoutMs?: number): ShellGen {
  const input = timeoutMs === undefined ? { command } : { command, timeoutMs };
  return asGenerator(tool.execute(input, contextFor('shell', signal)));
}

/** Pulls progress until some chunk's text contains `marker` (the command's "I am set up" gate). */
async function nextUntil(gen: ShellGen, marker: string): Promise<ShellProgress[]> {
  const seen: ShellProgress[] = [];
  for (;;) {
    const step = await gen.next();
    if (step.done === true) throw new Error(`command ended before printing ${marker}: ${textOf(step.value)}`);
    seen.push(step.value);
    if (seen.map((p) => p.text).join('').includes(marker)) return seen;
  }
}

/**
 * The process-tree specs run both ways: in the OS sandbox (the default) and with
 * `sandbox: false`. Sandboxed, `$$` and `$!` are pids inside the command's PID namespace,
 * and the shell's exit status comes through bwrap (128 + the signal number).
 */
// Where bubblewrap cannot start, the sandboxed half is skipped (spec/sandbox.ts says why).
const modes = ([
  { mode: 'sandboxed', sandbox: {}, terminated: { exitCode: 143, signal: null }, endNote: '; exit code 143' },
  { mode: 'unsandboxed', sandbox: false, terminated: { exitCode: null, signal: 'SIGTERM' }, endNote: '' },
] as const).filter((m) => sandboxAvailable || m.mode === 'unsandboxed');

/** Prefix for a command whose pids the spec translates: it writes its call id to `.call`. */
const WRITE_CALL = 'echo $TOOLRUN_SHELL_CALL > .call; ';

/**
 * The host pids of the pids a command wrote to `file` (one per line): sandboxed, translated
 * from the command's PID namespace through /proc, by the call id the command wrote to
 * `.call`; unsandboxed, as written. Call it while the processes run.
 */
function hostPids(dir: string, file = 'pids'): number[] {
  const written = readPids(path.join(dir, file));
  const callId = readFileSync(path.join(dir, '.call'), 'utf8').trim();
  const byNsPid = new Map([...callProcesses(callId)].map(([host, inner]) => [inner, host]));
  return written.map((pid) => {
    const host = byNsPid.get(pid);
    if (host === undefined) throw new Error(`no live process of call ${callId} has pid ${pid} in its namespace`);
    return host;
  });
}

/** No live process carries the call id the command wrote to `.call` (fails if one survived the kill). */
async function expectCallGone(dir: string): Promise<void> {
  const callId = readFileSync(path.join(dir, '.call'), 'utf8').trim();
  expect(callId).toMatch(/^[0-9a-f-]{36}$/);
  await pollUntil(() => callProcesses(callId).size === 0, `the processes of call ${callId} to be gone`);
}

async function expectAllGone(pids: number[]): Promise<void> {
  await pollUntil(() => pids.every(isGone), `processes ${pids.join(', ')} to be gone`);
  for (const pid of pids) expect(isGone(pid), `pid ${pid}`).toBe(true);
}

/** True when `python3` runs where the command runs (the setsid spec adds a python grandchild then). */
async function hasPython(sandbox: ShellSandboxOptions | false): Promise<boolean> {
  const dir = await tempDir();
  const { result } = await drain(run(shellTool({ cwd: dir, sandbox }), "python3 -c 'pass'"));
  return result.details?.exitCode === 0;
}

/** Abort listeners on `signal`. */
function abortListeners(signal: AbortSignal): number {
  return getEventListeners(signal, 'abort').length;
}

/**
 * Records the timers that lib/tools/shell*.ts create (by creation stack) and which of them
 * are still pending: neither fired nor cleared.
 */
function trackShellTimers(): { pending: Set<unknown>; readonly created: number; restore(): void } {
  const realSet = globalThis.setTimeout;
  const realClear = globalThis.clearTimeout;
  const pending = new Set<unknown>();
  let created = 0;
  const set = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((fn: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) => {
    // shell.ts and the files it is split into (shell-process.ts, shell-kill.ts).
    const fromShell = /lib[\\/]tools[\\/]shell(\.ts|-[a-z]+\.ts)/.test(new Error().stack ?? '');
    const handle = realSet(() => {
      pending.delete(handle);
      fn(...args);
    }, ms);
    if (fromShell) {
      created++;
      pending.add(handle);
    }
    return handle;
  }) as unknown as typeof setTimeout);
  const clear = vi.spyOn(globalThis, 'clearTimeout').mockImplementation(((handle?: Parameters<typeof clearTimeout>[0]) => {
    pending.delete(handle);
    realClear(handle);
  }) as typeof clearTimeout);
  return {
    pending,
    get created() {
      return created;
    },
    restore() {
      set.mockRestore();
      clear.mockRestore();
    },
  };
}

describe('shellTool', () => {
  itSandboxed('streams stdout chunks as progress while the process is still running', async () => {
    const dir = await tempDir();
    const tool = shellTool({ cwd: dir, timeoutMs: 15_000 });
    // The command cannot finish before the spec creates `gate`, so a progress item that
    // arrives before then was streamed live, not buffered to the end.
    const gen = run(tool, 'echo $$ > pid; printf a; while [ ! -e gate ]; do sleep 0.01; done; printf b');
    const first = await gen.next();
    expect(first).toEqual({ done: false, value: { stream: 'stdout', text: 'a' } });
    const [pid] = readPids(path.join(dir, 'pid'));
    expect(pid).toBeTypeOf('number');
    expect(isGone(pid!)).toBe(false);
    expect(existsSync(path.join(dir, 'gate'))).toBe(false);

    await writeFile(path.join(dir, 'gate'), '');
    const { progress, result } = await drain(gen);
    expect(progress).toEqual([{ stream: 'stdout', text: 'b' }]);
    expect(textOf(result)).toBe('ab\n[exit code 0]');
    expect(result.details).toMatchObject({ exitCode: 0, signal: null, killed: false, killReason: null, truncatedBytes: 0 });
  });

  itSandboxed('reports stdout and stderr chunks with their stream, and both in the result text', async () => {
    const dir = await tempDir();
    const { progress, result } = await drain(run(shellTool({ cwd: dir }), 'echo out; echo err >&2'));
    expect(progress).toContainEqual({ stream: 'stdout', text: 'out\n' });
    expect(progress).toContainEqual({ stream: 'stderr', text: 'err\n' });
    expect(textOf(result)).toMatch(/^(out\nerr\n|err\nout\n)\[exit code 0\]$/);
  });

  itSandboxed('runs in the configured cwd', async () => {
    const dir = await tempDir();
    const { result } = await drain(run(shellTool({ cwd: dir }), 'pwd'));
    expect(textOf(result)).toBe(`${dir}\n[exit code 0]`);
  });

  itSandboxed('returns exit code 1 as a normal result, not a throw (case C2: grep finding nothing)', async () => {
    const dir = await tempDir();
    const { result } = await drain(run(shellTool({ cwd: dir }), 'echo out; echo err >&2; exit 1'));
    const text = textOf(result);
    expect(text).toContain('out\n');
    expect(text).toContain('err\n');
    expect(text.endsWith('[exit code 1]')).toBe(true);
    expect(result.details).toMatchObject({ exitCode: 1, signal: null, killed: false });

    const grep = await drain(run(shellTool({ cwd: dir }), 'echo hello | grep nothing-like-this'));
    expect(textOf(grep.result)).toBe('(no output)\n[exit code 1]');
  });

  it.each(modes)('on abort kills every process of the group, and says the call was aborted (case C9; $mode)', async ({ sandbox, terminated, endNote }) => {
    const dir = await tempDir();
    const controller = new AbortController();
    const tool = shellTool({ cwd: dir, killGraceMs: 5000, sandbox });
    // Two background sleeps, a nested shell with its own background sleep, and the shell itself.
    const gen = run(
      tool,
      WRITE_CALL +
        'echo $$ >> pids; sleep 100 & echo $! >> pids; sleep 100 & echo $! >> pids; ' +
        "sh -c 'sleep 100 & echo $! >> pids; wait' & echo $! >> pids; echo ready; wait",
      controller.signal,
    );
    await nextUntil(gen, 'ready');
    const pidFile = path.join(dir, 'pids');
    await pollUntil(() => readPids(pidFile).length === 5, 'the nested shell to write its pid');
    const pids = hostPids(dir);
    for (const pid of pids) expect(isGone(pid)).toBe(false);

    controller.abort();
    const { result } = await drain(gen);
    expect(result.details).toMatchObject({ killed: true, killReason: 'aborted', forcedKill: false, ...terminated });
    expect(textOf(result)).toBe(`ready\n[killed: the run was aborted; the process group got SIGTERM${endNote}]`);
    await expectAllGone(pids);
  });

  it.each(modes)('an abort while the shell waits on a command stops the shell too: it never runs its next command ($mode)', async ({ sandbox, terminated }) => {
    // Sandboxed, SIGTERM went to each process one by one: the sleep died first, and the shell
    // printed "Terminated" and ran its next command before its own signal came (2 runs of 8
    // here; the demo's Ctrl+C spec saw "13 lines of TypeScript" after the kill). One kill() to
    // the sandbox's process group reaches them together.
    for (let attempt = 0; attempt < 6; attempt++) {
      const dir = await tempDir();
      const controller = new AbortController();
      const gen = run(shellTool({ cwd: dir, sandbox }), 'echo go; sleep 100; touch after; echo after', controller.signal);
      await nextUntil(gen, 'go');
      controller.abort();
      const { result } = await drain(gen);
      expect(existsSync(path.join(dir, 'after'))).toBe(false);
      expect(textOf(result)).toBe(`go\n[killed: the run was aborted; the process group got SIGTERM${terminated.exitCode === null ? '' : '; exit code 143'}]`);
      expect(result.details).toMatchObject({ killed: true, ...terminated });
    }
  });

  it.each(modes)("kills the group when the tool's own timeoutMs runs out, and says so ($mode)", async ({ sandbox, terminated }) => {
    const dir = await tempDir();
    const tool = shellTool({ cwd: dir, timeoutMs: 60_000, sandbox });
    // The input's timeoutMs overrides the tool's default.
    const gen = run(tool, WRITE_CALL + 'echo $$ >> pids; sleep 100 & echo $! >> pids; sleep 100 & echo $! >> pids; wait', undefined, 1000);
    const { result } = await drain(gen);
    expect(result.details).toMatchObject({ killed: true, killReason: 'timeout', ...terminated });
    expect(textOf(result)).toContain('[killed: timed out after 1000 ms; if the command needs longer, call shell again with a larger timeoutMs');
    expect(readPids(path.join(dir, 'pids'))).toHaveLength(3);
    // Every process that carries the call's id (the shell, both sleeps; sandboxed also bwrap) is gone.
    await expectCallGone(dir);
    if (sandbox === false) await expectAllGone(readPids(path.join(dir, 'pids')));
  });

  it.each(modes)('descendants that leave the process group (setsid, a double fork, python os.setsid) do not survive abort and timeout ($mode)', async ({ sandbox }) => {
    const python = await hasPython(sandbox);
    // A plain abort, and an abort whose reason is a TimeoutError (the runtime's per-call timeout; the tool's own timer takes the same path).
    for (const how of ['aborted', 'run-timeout'] as const) {
      const dir = await tempDir();
      const controller = new AbortController();
      const tool = shellTool({ cwd: dir, killGraceMs: 300, sandbox });
      const command =
        WRITE_CALL +
        // A new session, child of the shell.
        "setsid sh -c 'echo $$ >> pids; exec sleep 1000' & " +
        // A double fork: the subshell exits at once, so the sleeper's parent is init.
        "( setsid sh -c 'echo $$ >> pids; exec sleep 1000' & ) ; " +
        (python ? `python3 -c 'import os,time; os.setsid(); open("pids","a").write("%d\\n" % os.getpid()); time.sleep(1000)' & ` : '') +
        'sleep 1000';
      const gen = run(tool, command, controller.signal);
      const expected = python ? 3 : 2;
      const pidFile = path.join(dir, 'pids');
      const pending = drain(gen);
      await pollUntil(() => existsSync(pidFile) && readPids(pidFile).length === expected, `${expected} pids written`, { timeoutMs: 10_000 });
      const pids = hostPids(dir);
      for (const pid of pids) expect(isGone(pid)).toBe(false);
      controller.abort(how === 'aborted' ? undefined : new DOMException('timed out', 'TimeoutError'));
      const { result } = await pending;
      expect(result.details).toMatchObject({ killed: true, killReason: how, survivors: [] });
      // Bounded polling of /proc: the kill sequence already waited for them, so they are gone at once.
      await expectAllGone(pids);
    }
  });

  itSandboxed("shell passes an allowlist of the host's environment by default, not all of it", async () => {
    const dir = await tempDir();
    vi.stubEnv('TOOLRUN_SPEC_API_KEY', 'sk-spec-secret');
    vi.stubEnv('LC_SPEC', 'yes');
    try {
      const plain = textOf((await drain(run(shellTool({ cwd: dir }), 'env'))).result);
      expect(plain).not.toContain('sk-spec-secret');
      expect(plain).toMatch(/^PATH=/m);
      expect(plain).toMatch(/^LC_SPEC=yes$/m);
      expect(plain).toMatch(/^TOOLRUN_SHELL_CALL=[0-9a-f-]{36}$/m);
      const names = plain.split('\n').filter((line) => line.includes('=')).map((line) => line.slice(0, line.indexOf('=')));
      const allowed = new Set(['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LANGUAGE', 'TERM', 'TMPDIR', 'TZ', 'PWD', 'SHLVL', 'OLDPWD', '_', 'TOOLRUN_SHELL_CALL']);
      expect(names.filter((name) => !allowed.has(name) && !name.startsWith('LC_'))).toEqual([]);

      const passed = textOf((await drain(run(shellTool({ cwd: dir, passEnv: ['TOOLRUN_SPEC_*'] }), 'env'))).result);
      expect(passed).toMatch(/^TOOLRUN_SPEC_API_KEY=sk-spec-secret$/m);

      const full = textOf((await drain(run(shellTool({ cwd: dir, env: { ONLY: '1', PATH: process.env.PATH } }), 'env'))).result);
      expect(full).toMatch(/^ONLY=1$/m);
      expect(full).not.toMatch(/^(HOME|LC_SPEC)=/m);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  itSandboxed('tells a TimeoutError abort of ctx.signal (the runtime timeout) from a plain abort', async () => {
    const dir = await tempDir();
    const controller = new AbortController();
    const gen = run(shellTool({ cwd: dir }), WRITE_CALL + 'echo $$ > pid; echo ready; sleep 100', controller.signal);
    await nextUntil(gen, 'ready');
    const pids = hostPids(dir, 'pid');
    controller.abort(new DOMException('shell timed out after 50 ms', 'TimeoutError'));
    const { result } = await drain(gen);
    expect(result.details).toMatchObject({ killed: true, killReason: 'run-timeout' });
    expect(textOf(result)).toContain("[killed: the call's time limit ran out (shell timed out after 50 ms)");
    await expectAllGone(pids);
  });

  it.each(modes)('sends SIGKILL after killGraceMs to a group that ignores SIGTERM ($mode)', async ({ sandbox }) => {
    const dir = await tempDir();
    const controller = new AbortController();
    const tool = shellTool({ cwd: dir, killGraceMs: 200, sandbox });
    // `trap '' TERM` ignores SIGTERM in the shell, and the sleep inherits the ignored disposition.
    const gen = run(tool, WRITE_CALL + "trap '' TERM; echo $$ >> pids; sleep 100 & echo $! >> pids; echo ready; wait", controller.signal);
    await nextUntil(gen, 'ready');
    const pids = hostPids(dir);
    expect(pids).toHaveLength(2);

    controller.abort();
    const { result } = await drain(gen);
    expect(result.details).toMatchObject({ killed: true, forcedKill: true, signal: 'SIGKILL', exitCode: null });
    expect(textOf(result)).toContain('SIGTERM did not stop it, so the process group got SIGKILL after 200 ms');
    await expectAllGone(pids);
  });

  it.each(modes)('kills the group when the consumer closes the generator early (finally; $mode)', async ({ sandbox }) => {
    const dir = await tempDir();
    const signal = new AbortController().signal;
    const gen = run(shellTool({ cwd: dir, sandbox }), WRITE_CALL + 'echo $$ >> pids; sleep 100 & echo $! >> pids; echo ready; wait', signal);
    await nextUntil(gen, 'ready');
    const pids = hostPids(dir);
    expect(pids).toHaveLength(2);
    expect(abortListeners(signal)).toBe(1);

    await expect(gen.return(undefined as never)).resolves.toEqual({ done: true, value: undefined });
    await expectAllGone(pids);
    expect(abortListeners(signal)).toBe(0);
  });

  itSandboxed('bounds the output: head and tail kept, the middle replaced by a marker (case C20)', async () => {
    const dir = await tempDir();
    const tool = shellTool({ cwd: dir, maxOutputBytes: 10_000 });
    const { progress, result } = await drain(
      run(tool, "printf START; head -c 500000 /dev/zero | tr '\\0' a; printf END"),
    );
    const text = textOf(result);
    expect(result.details).toMatchObject({ exitCode: 0, truncatedBytes: 490_008, outputBytes: 500_008 });
    expect(text.startsWith('STARTaaaa')).toBe(true);
    expect(text).toContain('[... 490008 bytes cut: the output was 500008 bytes, over the 10000-byte limit;');
    expect(text.endsWith('aaaaEND\n[exit code 0]')).toBe(true);
    expect(text.length).toBeLessThan(10_000 + 300);
    // Progress is not cut: every byte reached the consumer.
    expect(progress.reduce((sum, p) => sum + p.text.length, 0)).toBe(500_008);
  });

  itSandboxed('leaves no abort listener on ctx.signal after the call, however it ends', async () => {
    const dir = await tempDir();
    const tool = shellTool({ cwd: dir, killGraceMs: 200 });

    const normal = new AbortController();
    const gen = run(tool, 'echo hi', normal.signal);
    expect(abortListeners(normal.signal)).toBe(0);
    await gen.next();
    expect(abortListeners(normal.signal)).toBe(1);
    await drain(gen);
    expect(abortListeners(normal.signal)).toBe(0);

    const aborted = new AbortController();
    const gen2 = run(tool, 'echo ready; sleep 100', aborted.signal);
    await nextUntil(gen2, 'ready');
    aborted.abort();
    await drain(gen2);
    expect(abortListeners(aborted.signal)).toBe(0);

    const timedOut = new AbortController();
    await drain(run(tool, 'sleep 100', timedOut.signal, 50));
    expect(abortListeners(timedOut.signal)).toBe(0);
  });

  itSandboxed('leaves no timer running after the call', async () => {
    const dir = await tempDir();
    const tool = shellTool({ cwd: dir, timeoutMs: 60_000, killGraceMs: 60_000 });
    const timers = trackShellTimers();
    try {
      await drain(run(tool, 'echo hi'));
      // At least the tool's timeout and the exit-drain timer armed at 'exit' (so the tracker
      // does see the shell's timers; a loaded CI run once saw a third). What matters is that
      // none is left pending.
      expect(timers.created).toBeGreaterThanOrEqual(2);
      expect(timers.pending.size).toBe(0);

      const controller = new AbortController();
      const gen = run(tool, 'echo ready; sleep 100', controller.signal);
      await nextUntil(gen, 'ready');
      expect(timers.pending.size).toBe(1);
      controller.abort();
      await drain(gen);
      expect(timers.created).toBeGreaterThanOrEqual(5); // + timeout, kill grace, exit drain
      expect(timers.pending.size).toBe(0);
    } finally {
      timers.restore();
    }
  });

  it('spawns nothing when ctx.signal is already aborted', async () => {
    const dir = await tempDir();
    const controller = new AbortController();
    controller.abort(new Error('user pressed stop'));
    const gen = run(shellTool({ cwd: dir }), 'touch ran', controller.signal);
    await expect(gen.next()).rejects.toThrow('user pressed stop');
    expect(existsSync(path.join(dir, 'ran'))).toBe(false);
  });

  itSandboxed('throws a clear error when the shell cannot start', async () => {
    const dir = await tempDir();
    const missing = path.join(dir, 'no-such-dir');
    const gen = run(shellTool({ cwd: missing }), 'echo hi');
    await expect(gen.next()).rejects.toThrow(`shell: could not start /bin/sh in ${missing}`);
  });

  it('stops reading exitDrainMs after the shell exits when a background process holds the output (unsandboxed)', async () => {
    const dir = await tempDir();
    const tool = shellTool({ cwd: dir, exitDrainMs: 100, sandbox: false });
    const { result } = await drain(run(tool, 'echo $$ > pgid; sleep 30 & echo started'));
    try {
      expect(result.details).toMatchObject({ exitCode: 0, killed: false });
      expect(textOf(result)).toContain('started\n[exit code 0]\n[the shell exited, but a process it started in the background');
    } finally {
      const [pgid] = readPids(path.join(dir, 'pgid'));
      if (pgid !== undefined) process.kill(-pgid, 'SIGKILL');
    }
  });

  itSandboxed('sandboxed, a process left in the background ends with the command (its PID namespace), so the output closes at once', async () => {
    const dir = await tempDir();
    // A long exitDrainMs: the result comes without waiting for it, and says nothing about background output.
    const tool = shellTool({ cwd: dir, exitDrainMs: 60_000 });
    const { result } = await drain(run(tool, WRITE_CALL + 'sleep 30 & echo started'));
    expect(textOf(result)).toBe('started\n[exit code 0]');
    expect(result.details).toMatchObject({ exitCode: 0, killed: false, sandboxed: true });
    // Fails if the sleep outlived the sandbox (e.g. without --unshare-pid).
    await expectCallGone(dir);
  });

  itSandboxed('pauses the pipes while the consumer does not pull, so the queue stays bounded (backpressure)', async () => {
    const dir = await tempDir();
    const tool = shellTool({ cwd: dir, timeoutMs: 30_000 });
    // 200 blocks of 64 KiB (12.5 MiB); `count` says how many the command got written.
    const gen = run(tool, "i=0; while [ $i -lt 200 ]; do printf '%065536d' 0; i=$((i+1)); echo $i > count; done; touch done");
    const countFile = path.join(dir, 'count');
    const count = async (): Promise<number> => Number((await readFile(countFile, 'utf8').catch(() => '0')).trim() || '0');
    const first = await gen.next();
    expect(first.done).toBe(false);
    // Not pulling now. Wait until the writer stalls: its count unchanged over 5 polls.
    let last = -1;
    let same = 0;
    await pollUntil(
      async () => {
        const now = await count();
        same = now === last ? same + 1 : 0;
        last = now;
        return same >= 5;
      },
      'the writer to stall',
      { timeoutMs: 15_000, intervalMs: 50 },
    );
    // About 1 MiB of queued progress plus the pipe buffers, far from all 200 blocks.
    expect(last).toBeLessThan(60);
    expect(existsSync(path.join(dir, 'done'))).toBe(false);

    const { progress, result } = await drain(gen);
    expect(result.details?.exitCode).toBe(0);
    expect(await count()).toBe(200);
    const firstChars = first.done === true ? 0 : first.value.text.length;
    expect(progress.reduce((sum, p) => sum + p.text.length, firstChars)).toBe(200 * 65_536);
  });

  itSandboxed('keeps every line in order when chunks are merged for a slow consumer', async () => {
    const dir = await tempDir();
    const tool = shellTool({ cwd: dir, maxOutputBytes: 1 << 22 });
    const gen = run(tool, 'seq 1 300000');
    const chunks: string[] = [];
    for (;;) {
      const step = await gen.next();
      if (step.done === true) {
        expect(step.value.details?.exitCode).toBe(0);
        break;
      }
      chunks.push(step.value.text);
      if (chunks.length % 4 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    const lines = chunks.join('').trimEnd().split('\n');
    expect(lines).toHaveLength(300_000);
    expect(lines[0]).toBe('1');
    expect(lines.at(-1)).toBe('300000');
    expect(lines.every((line, i) => line === String(i + 1))).toBe(true);
  });

  it('rejects bad options at creation', () => {
    expect(() => shellTool({ maxOutputBytes: 0 })).toThrow(RangeError);
    expect(() => shellTool({ killGraceMs: -1 })).toThrow('options.killGraceMs must be a number >= 0, received number -1');
    expect(() => shellTool({ timeoutMs: 0 })).toThrow(RangeError);
  });

  it('describes its input for the model (strict object, every field described)', () => {
    const schema = toJsonSchema(shellTool().input as never) as Record<string, unknown>;
    expect(schema).toMatchObject({
      type: 'object',
      required: ['command'],
      additionalProperties: false,
      properties: {
        command: { type: 'string', description: expect.stringContaining('/bin/sh -c') },
        timeoutMs: { type: 'integer', minimum: 1, description: expect.any(String) },
      },
    });
  });
});
