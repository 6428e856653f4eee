/**
 * The `shell` tool's OS sandbox: each command runs in bubblewrap with its
 * own PID namespace and /proc, no network, the system read-only with secrets hidden, and
 * writes only to the workspace and a private /tmp. Every spec runs real commands in a real
 * sandbox, and most run the same command with `sandbox: false` too, to show what the sandbox
 * changes (and that the spec would fail without it).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, chown, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { runTools } from '../../lib/core/run/run-tools.ts';
import { mcpTools } from '../../lib/index.ts';
import { resultText } from '../../lib/extras/compose/call-tool.ts';
import { shellSandboxStatus, type ShellSandboxOptions } from '../../lib/tools/sandbox.ts';
import { shellTool, type ShellDetails, type ShellProgress } from '../../lib/tools/shell.ts';
import type { ToolResult } from '../../lib/core/tool/tool.ts';
import { asGenerator, callProcesses, contextFor, drain, pollUntil, tempDir, textOf } from './support.ts';
import { sandboxAvailable, sandboxSkipNote } from '../sandbox.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../..');
const execFileAsync = promisify(execFile);

async function runShell(command: string, options: { cwd: string; sandbox?: ShellSandboxOptions | false; timeoutMs?: number }): Promise<ToolResult<ShellDetails>> {
  const tool = shellTool(options);
  const gen = asGenerator<ShellProgress, ToolResult<ShellDetails>>(tool.execute({ command }, contextFor('shell')));
  return (await drain(gen)).result;
}

/** Runs `command` from a separate host process whose own environment holds `secret` (spec/tools/fixtures/shell-host.ts). */
function runFromHost(cwd: string, mode: 'on' | 'off', command: string, secret: string): Promise<{ hostPid: number; text: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', path.join(here, 'fixtures/shell-host.ts'), cwd, mode, command],
      { env: { ...process.env, TOOLRUN_HOST_SECRET: secret }, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error !== null) return reject(new Error(`host process failed: ${error.message}\n${stderr}`));
        const parsed = JSON.parse(stdout) as { hostPid: number; result: ToolResult<ShellDetails> };
        resolve({ hostPid: parsed.hostPid, text: textOf(parsed.result) });
      },
    );
  });
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** A real HTTP server on 127.0.0.1 that counts its requests. */
async function loopbackServer(): Promise<{ port: number; requests: () => number }> {
  let count = 0;
  const server = createServer((_request, response) => {
    count++;
    response.end('hello from the host');
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, requests: () => count };
}

// Where bubblewrap cannot start, every check here is skipped (spec/sandbox.ts prints why, once).
describe.skipIf(!sandboxAvailable)(`shellTool sandbox${sandboxSkipNote}`, () => {
  it('the sandbox starts on this machine (bubblewrap installed, user namespaces on): CI installs bubblewrap', async () => {
    // Fails where bwrap is missing or cannot create namespaces: every spec below depends on it.
    const status = await shellSandboxStatus();
    expect(status, JSON.stringify(status)).toMatchObject({ available: true });
  });

  it("cat /proc/$PPID/environ printed the host's secrets: no longer, sandboxed (own PID namespace, own /proc)", { timeout: 120_000 }, async () => {
    const dir = await tempDir();
    const secret = `sk-host-${randomUUID()}`;
    // $PPID, pid 1, and every process the command can see in /proc.
    const command = 'echo ppid=$PPID; cat /proc/$PPID/environ; echo; cat /proc/1/environ; echo; for f in /proc/[0-9]*/environ; do cat "$f"; done; echo';
    const sandboxed = await runFromHost(dir, 'on', command, secret);
    expect(sandboxed.text).toContain('ppid=1\n');
    expect(sandboxed.text).not.toContain(secret);
    expect(sandboxed.text).toMatch(/TOOLRUN_SHELL_CALL=/); // it did read environments: the clean one
    // Without the sandbox the same command reads the host process's environment (the bug).
    const plain = await runFromHost(dir, 'off', command, secret);
    expect(plain.text).toContain(`ppid=${plain.hostPid}\n`);
    expect(plain.text).toContain(secret);
  });

  it("the served shell (toolrun serve-mcp over stdio) no longer returns the server's own secret from /proc/$PPID/environ", { timeout: 120_000 }, async () => {
    const workspace = await tempDir();
    const secret = `sk-server-${randomUUID()}`;
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', 'lib/cli/main.ts', 'serve-mcp', path.join(here, 'fixtures/served-shell.ts')],
      cwd: repoRoot,
      env: { ...(process.env as Record<string, string>), TOOLRUN_SERVER_SECRET: secret, TOOLRUN_SPEC_WORKSPACE: workspace },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'spec', version: '0' });
    await client.connect(transport);
    try {
      const tools = await mcpTools(client);
      expect(tools.map((tool) => tool.name)).toEqual(['shell']);
      const texts: string[] = [];
      const command = 'cat /proc/$PPID/environ; echo; cat /proc/1/environ; echo; for f in /proc/[0-9]*/environ; do cat "$f"; done; echo; echo served-done';
      for await (const event of runTools([{ id: 's1', name: 'shell', arguments: { command } }], { tools })) {
        if (event.type === 'tool_result') texts.push(resultText(event.message));
      }
      expect(texts).toHaveLength(1);
      expect(texts[0]).toContain('served-done');
      // Fails when the served shell runs unsandboxed: $PPID is then the server process, started with the secret.
      expect(texts[0]).not.toContain(secret);
    } finally {
      await client.close();
    }
  });

  it("reading a ~/.ssh-like file outside the workspace fails; the host's home, /root and /etc/shadow are out of reach", async () => {
    const workspace = await tempDir();
    const home = await tempDir();
    await mkdir(path.join(home, '.ssh'));
    const key = path.join(home, '.ssh', 'id_ed25519');
    await writeFile(key, 'PRIVATE-KEY-MATERIAL\n');
    const command = `cat ${key}; echo "cat=$?"; ls -a ${os.homedir()} >/dev/null 2>&1; echo "home=$?"; ls /root >/dev/null 2>&1; echo "root=$?"; cat /etc/shadow 2>/dev/null | grep -c '^root:'`;
    const sandboxed = textOf(await runShell(command, { cwd: workspace }));
    expect(sandboxed).not.toContain('PRIVATE-KEY-MATERIAL');
    expect(sandboxed).toMatch(/^cat=1$/m);
    expect(sandboxed).toMatch(/^home=2$/m);
    expect(sandboxed).toMatch(/^root=2$/m);
    expect(sandboxed).toMatch(/^0\n/m); // no root entry of /etc/shadow (hidden: reads as empty)
    // Fails if the sandbox is bypassed: the same command unsandboxed reads the key.
    const plain = textOf(await runShell(command, { cwd: workspace, sandbox: false }));
    expect(plain).toContain('PRIVATE-KEY-MATERIAL');
  });

  it('writing outside the workspace fails; inside it works; /tmp is private to the command', async () => {
    const workspace = await tempDir();
    const outside = await tempDir();
    const probe = `toolrun-probe-${randomUUID()}`;
    const command =
      `echo inside > inside.txt; echo "inside=$?"; echo pwned > ${outside}/x 2>/dev/null; echo "outside=$?"; ` +
      `touch /usr/x /etc/x 2>/dev/null; echo "system=$?"; echo t > /tmp/${probe}; echo "tmp=$?"`;
    const text = textOf(await runShell(command, { cwd: workspace }));
    expect(text).toMatch(/^inside=0$/m);
    expect(await readFile(path.join(workspace, 'inside.txt'), 'utf8')).toBe('inside\n');
    expect(text).toMatch(/^outside=[12]$/m);
    expect(existsSync(path.join(outside, 'x'))).toBe(false);
    expect(text).toMatch(/^system=1$/m);
    // The command could write its /tmp, but that was a tmpfs of its own: nothing reached the host's /tmp.
    expect(text).toMatch(/^tmp=0$/m);
    expect(existsSync(path.join(os.tmpdir(), probe))).toBe(false);
    // Control: unsandboxed, the write outside lands (so the assertions above can fail).
    await runShell(`echo pwned > ${outside}/x`, { cwd: workspace, sandbox: false });
    expect(existsSync(path.join(outside, 'x'))).toBe(true);
  });

  it('readPaths adds read-only paths, writePaths writable ones, hiddenPaths masks files inside them', async () => {
    const workspace = await tempDir();
    const shared = await tempDir();
    const cache = await tempDir();
    await writeFile(path.join(shared, 'public.txt'), 'public\n');
    await writeFile(path.join(shared, 'secret.key'), 'SECRET-KEY\n');
    const sandbox = { readPaths: [shared], writePaths: [cache], hiddenPaths: [path.join(shared, 'secret*')] };
    const command = `cat ${shared}/public.txt; cat ${shared}/secret.key; echo "secret=$?"; touch ${shared}/new 2>/dev/null; echo "shared-write=$?"; echo c > ${cache}/c; echo "cache=$?"`;
    const text = textOf(await runShell(command, { cwd: workspace, sandbox }));
    expect(text).toMatch(/^public$/m);
    expect(text).not.toContain('SECRET-KEY');
    expect(text).toMatch(/^secret=0$/m); // readable, and empty
    expect(text).toMatch(/^shared-write=1$/m);
    expect(text).toMatch(/^cache=0$/m);
    expect(await readFile(path.join(cache, 'c'), 'utf8')).toBe('c\n');
    expect(existsSync(path.join(shared, 'new'))).toBe(false);
  });

  it("network is off by default: node's fetch and curl cannot reach a real server on the host's 127.0.0.1; network: 'host' can", async () => {
    const workspace = await tempDir();
    const server = await loopbackServer();
    const url = `http://127.0.0.1:${server.port}/`;
    const fetchCommand = `node -e "fetch('${url}').then((r) => r.text()).then((t) => console.log('GOT ' + t), (e) => { console.log('FAILED ' + (e.cause?.code ?? e.message)); process.exit(3); })"`;
    const curlCommand = `if command -v curl >/dev/null; then curl -sS -m 20 ${url} && echo; echo "curl=$?"; else echo "curl=absent"; fi`;

    const off = textOf(await runShell(`${fetchCommand}; ${curlCommand}`, { cwd: workspace }));
    expect(off).toMatch(/^FAILED ECONNREFUSED$/m); // the sandbox's own loopback has no listener
    expect(off).not.toContain('hello from the host');
    expect(off).toMatch(/^curl=(7|absent)$/m);
    expect(server.requests()).toBe(0);

    const on = textOf(await runShell(`${fetchCommand}; ${curlCommand}`, { cwd: workspace, sandbox: { network: 'host' } }));
    expect(on).toMatch(/^GOT hello from the host$/m);
    expect(server.requests()).toBeGreaterThanOrEqual(1);
  });

  it('a fork bomb is bounded (maxProcesses) and the call still gets its result; nothing of it survives', { timeout: 60_000 }, async (context) => {
    const status = await shellSandboxStatus();
    // Root without a writable pids cgroup has no bound but the call's timeout (docs/guide/built-in-tools.md): do not run a real bomb there.
    if (status.available && status.processLimit === 'none') context.skip();
    const workspace = await tempDir();
    const tool = shellTool({ cwd: workspace, timeoutMs: 30_000, maxOutputBytes: 4096, sandbox: { maxProcesses: 64 } });
    // Event-driven, whatever the load: the bomb runs in a subshell whose stderr goes to a file,
    // and the main shell waits, forking nothing (dash exits when one of its own forks fails),
    // until the first refused fork is written there; only builtins follow.
    const command =
      'echo $TOOLRUN_SHELL_CALL > .call; : > bomb.err; (b() { b | b & }; b) 2>bomb.err; ' +
      'until [ -s bomb.err ]; do :; done; read -r first < bomb.err; echo "first: $first"; echo bomb-done > done.txt';
    const gen = asGenerator<ShellProgress, ToolResult<ShellDetails>>(tool.execute({ command }, contextFor('shell')));
    const { result } = await drain(gen);
    const text = textOf(result);
    // Fails without a bound: no fork would fail, the loop would spin until the timeout kills it.
    expect(text).toMatch(/^first: .*(Cannot fork|Resource temporarily unavailable)/m);
    expect(result.details?.limitsReached).toContain('processes');
    expect(text).toContain("[the sandbox's process bound was reached: at most 64 processes and threads at once (sandbox.maxProcesses)");
    // The shell itself got to its end (a file, not the output: the bomb's failures may go on
    // printing until the namespace ends, and the middle of the output is cut).
    expect(await readFile(path.join(workspace, 'done.txt'), 'utf8')).toBe('bomb-done\n');
    expect(text).toMatch(/\[exit code 0\]\n/);
    expect(result.details).toMatchObject({ killed: false, sandboxed: true, survivors: [], exitCode: 0 });
    const callId = (await readFile(path.join(workspace, '.call'), 'utf8')).trim();
    await pollUntil(() => callProcesses(callId).size === 0, 'the bomb processes to be gone');
  });

  it('where the sandbox cannot start, the call is refused with a clear error result (no host paths), nothing runs, and one warning is emitted', async () => {
    const workspace = await tempDir();
    const missing = path.join(await tempDir(), 'no-bwrap-here');
    // A bwrap that fails as one without user namespaces does.
    const broken = path.join(await tempDir(), 'bwrap');
    await writeFile(broken, '#!/bin/sh\necho "bwrap: No permissions to create a new namespace" >&2\nexit 1\n', { mode: 0o755 });
    expect(await shellSandboxStatus({ bwrapPath: missing })).toEqual({ available: false, reason: expect.stringContaining('bubblewrap is not installed') });
    expect(await shellSandboxStatus({ bwrapPath: broken })).toEqual({ available: false, reason: expect.stringContaining('No permissions to create a new namespace') });

    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning.message);
    process.on('warning', onWarning);
    try {
      for (const bwrapPath of [missing, broken, missing]) {
        const tool = shellTool({ cwd: workspace, sandbox: { bwrapPath } });
        const results = [];
        for await (const event of runTools([{ id: 'c1', name: 'shell', arguments: '{"command":"touch ran"}' }], { tools: [tool] })) {
          if (event.type === 'tool_result') results.push(event.message);
        }
        const [message] = results;
        expect(message?.isError).toBe(true);
        const text = resultText(message!);
        expect(text).toContain('the command was not run');
        expect(text).toContain('sandbox cannot start on this machine');
        expect(text).toContain('shellTool({ sandbox: false })');
        expect(text).not.toContain(path.dirname(missing));
        expect(text).not.toContain(path.dirname(broken));
        expect(existsSync(path.join(workspace, 'ran'))).toBe(false);
      }
      // process.emitWarning is delivered on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((message) => message.includes('its OS sandbox is unavailable'))).toHaveLength(1);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('sandbox: false runs on the host, as before (details.sandboxed says which), and the model is told what the sandbox allows', async () => {
    const workspace = await tempDir();
    const on = await runShell('echo $HOME', { cwd: workspace });
    expect(on.details).toMatchObject({ sandboxed: true, exitCode: 0 });
    expect(textOf(on)).toBe('/tmp\n[exit code 0]'); // HOME points to the private /tmp
    vi.stubEnv('HOME', '/home/spec-user');
    try {
      const off = await runShell('echo $HOME', { cwd: workspace, sandbox: false });
      expect(off.details).toMatchObject({ sandboxed: false, exitCode: 0 });
      expect(textOf(off)).toBe('/home/spec-user\n[exit code 0]');
    } finally {
      vi.unstubAllEnvs();
    }
    expect(shellTool({ cwd: workspace }).description).toContain('It runs in a sandbox');
    expect(shellTool({ cwd: workspace }).description).toContain('there is no network');
    expect(shellTool({ cwd: workspace, sandbox: { network: 'host' } }).description).not.toContain('there is no network');
    expect(shellTool({ cwd: workspace, sandbox: false }).description).not.toContain('sandbox');
  });

  it('rejects bad sandbox options at creation', () => {
    expect(() => shellTool({ sandbox: { maxProcesses: 0 } })).toThrow('options.sandbox.maxProcesses must be an integer >= 8, received number 0');
    expect(() => shellTool({ sandbox: { maxMemoryBytes: -1 } })).toThrow('options.sandbox.maxMemoryBytes must be an integer number of bytes >= 16777216, received number -1');
    expect(() => shellTool({ sandbox: { maxMemoryBytes: '1G' as never } })).toThrow('options.sandbox.maxMemoryBytes must be an integer number of bytes');
    expect(() => shellTool({ sandbox: { tmpSizeBytes: 1.5 } })).toThrow('options.sandbox.tmpSizeBytes must be an integer number of bytes >= 1048576');
    expect(() => shellTool({ sandbox: { runAs: { uid: -1, gid: 0 } } })).toThrow('options.sandbox.runAs must be { uid, gid } with integers >= 0');
    expect(() => shellTool({ sandbox: { runAs: null as never } })).toThrow('options.sandbox.runAs must be { uid, gid }');
    expect(() => shellTool({ sandbox: { network: 'all' as never } })).toThrow("options.sandbox.network must be 'none' or 'host'");
  });
});

/** `/proc` entries that change the host, and what the specs check on them (never writing a new value). */
const SYSCTLS = ['kernel/core_pattern', 'kernel/modprobe', 'kernel/printk_ratelimit', 'vm/drop_caches', 'kernel/sysrq'];
/**
 * Prints `writable <path>` for any file under the host-changing parts of /proc (and /sys) that
 * the command may write (`find -writable` asks access(2), which sees read-only mounts), then
 * writes each readable setting's *current* value back and prints `wrote <name>` on success,
 * then the capability sets and no_new_privs.
 */
const ESCAPE_COMMAND =
  'for d in /proc/sys /proc/sysrq-trigger /proc/irq /proc/bus /proc/fs /sys; do [ -e "$d" ] && find "$d" -xdev -writable -type f 2>/dev/null | head -n 3 | sed "s/^/writable /"; done; ' +
  `for f in ${SYSCTLS.join(' ')}; do [ -w /proc/sys/$f ] && echo "w-ok $f"; if [ -r /proc/sys/$f ]; then v=$(cat /proc/sys/$f); printf '%s\\n' "$v" > /proc/sys/$f 2>/dev/null && echo "wrote $f"; fi; done; ` +
  'grep -E "^(Cap(Eff|Prm|Bnd|Amb)|NoNewPrivs|Uid):" /proc/self/status; echo escape-done';

/** The host's current values of {@link SYSCTLS} (the readable ones). */
async function hostSysctls(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of SYSCTLS) {
    try {
      out[name] = await readFile(`/proc/sys/${name}`, 'utf8');
    } catch {
      // write-only (drop_caches) or absent
    }
  }
  return out;
}

function expectNoEscape(text: string, uid: string): void {
  expect(text).toContain('escape-done');
  expect(text).not.toMatch(/^writable /m);
  expect(text).not.toMatch(/^w-ok /m);
  expect(text).not.toMatch(/^wrote /m);
  for (const set of ['CapEff', 'CapPrm', 'CapBnd', 'CapAmb']) expect(text).toMatch(new RegExp(`^${set}:\\s+0+$`, 'm'));
  expect(text).toMatch(/^NoNewPrivs:\s+1$/m);
  expect(text).toMatch(new RegExp(`^Uid:\\s+${uid}\\s`, 'm'));
}

const isRootHost = process.getuid?.() === 0;
const hasSetpriv = existsSync('/usr/bin/setpriv');

describe("shellTool sandbox: the host's kernel and memory are out of a command's reach", () => {
  it("as root (CI), or this process's user: no write under /proc/sys, sysrq-trigger, /proc/irq, /proc/bus, binfmt_misc, /sys; no capabilities, no_new_privs; the host's settings unchanged", { timeout: 60_000 }, async () => {
    const workspace = await tempDir(); // owned by this process's user: as root, the command stays the host's root, without capabilities
    const before = await hostSysctls();
    const text = textOf(await runShell(ESCAPE_COMMAND, { cwd: workspace, sandbox: { readPaths: ['/sys'] } }));
    expectNoEscape(text, String(process.getuid?.() ?? 0));
    expect(await hostSysctls()).toEqual(before);
    if (isRootHost) {
      // Control, without writing anything: unsandboxed root may write them (the spec can fail).
      const plain = textOf(await runShell('[ -w /proc/sys/kernel/core_pattern ] && echo "w-ok core_pattern"', { cwd: workspace, sandbox: false }));
      expect(plain).toMatch(/^w-ok core_pattern$/m);
    }
  });

  it('as root, a workspace owned by an unprivileged user: the command runs as that user, writes the workspace, and its files belong to it', { timeout: 60_000 }, async (context) => {
    if (!isRootHost) context.skip('this process is not root: only root switches users');
    const workspace = await tempDir();
    await chown(workspace, 65534, 65534);
    const before = await hostSysctls();
    const text = textOf(await runShell(`${ESCAPE_COMMAND}; echo made > made.txt; echo "made=$?"`, { cwd: workspace }));
    expectNoEscape(text, '65534');
    expect(text).toMatch(/^made=0$/m);
    expect((await stat(path.join(workspace, 'made.txt'))).uid).toBe(65534);
    expect(await hostSysctls()).toEqual(before);
    // runAs chooses the user; a workspace it cannot write is reported by the command itself.
    const other = await tempDir();
    await chmod(other, 0o755);
    const denied = textOf(await runShell('id -u; echo x > x.txt', { cwd: other, sandbox: { runAs: { uid: 65534, gid: 65534 } } }));
    expect(denied).toMatch(/^65534$/m);
    expect(denied).toMatch(/Permission denied/);
    expect(existsSync(path.join(other, 'x.txt'))).toBe(false);
  });

  it('as an unprivileged host user (setpriv --reuid=65534): the same escapes fail', { timeout: 120_000 }, async (context) => {
    if (!isRootHost || !hasSetpriv) context.skip('needs root and /usr/bin/setpriv to start a host process as uid 65534');
    const workspace = await tempDir();
    await chown(workspace, 65534, 65534);
    const before = await hostSysctls();
    const { stdout } = await execFileAsync(
      '/usr/bin/setpriv',
      ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, '--import', 'tsx', path.join(here, 'fixtures/shell-host.ts'), workspace, 'on', ESCAPE_COMMAND],
      { cwd: repoRoot, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 },
    );
    const text = textOf((JSON.parse(stdout) as { result: ToolResult<ShellDetails> }).result);
    expectNoEscape(text, '65534');
    expect(await hostSysctls()).toEqual(before);
  });

  it('a 6 GiB allocation ends with a result naming the memory bound, and the host never lends it more than the bound plus a margin', { timeout: 120_000 }, async (context) => {
    if (!existsSync('/usr/bin/python3')) context.skip('no /usr/bin/python3 on this host');
    const workspace = await tempDir();
    const status = await shellSandboxStatus();
    const sampler = memorySampler();
    const result = await runShell('/usr/bin/python3 -c "bytearray(6 * 1024**3)"; echo "python=$?"', { cwd: workspace, timeoutMs: 100_000 });
    const lowest = sampler.stop();
    const text = textOf(result);
    expect(result.details?.killed).toBe(false); // ended by the bound, not by the timeout
    expect(text).toMatch(/^python=(1|137)$/m); // MemoryError (RLIMIT_DATA) or killed by the cgroup's OOM killer
    expect(result.details?.limitsReached).toEqual(['memory']);
    expect(text).toContain("[the sandbox's memory bound was reached: at most 1 GiB (sandbox.maxMemoryBytes)");
    if (status.available && status.memoryLimit === 'cgroup') expect(result.details?.memoryPeakBytes).toBeLessThanOrEqual(1024 ** 3);
    // MemAvailable sampled every 20 ms: it may drop by the bound, not by 6 GiB (a 1 GiB margin for the rest of the machine).
    expect(sampler.baseline - lowest).toBeLessThan(2 * 1024 ** 3);
  });

  it('a 3 GiB write into /tmp ends at its size bound with a result naming it; both bounds are options', { timeout: 120_000 }, async () => {
    const workspace = await tempDir();
    const result = await runShell('dd if=/dev/zero of=/tmp/big bs=1M count=3072 2>&1 | head -n 1; wc -c < /tmp/big', { cwd: workspace, timeoutMs: 100_000 });
    const text = textOf(result);
    expect(text).toContain('No space left on device');
    expect(text).toMatch(/^268435456$/m);
    expect(result.details?.limitsReached).toContain('tmp');
    expect(text).toContain("[/tmp may be full: the sandbox's /tmp holds at most 256 MiB (sandbox.tmpSizeBytes)");
    const small = await runShell('dd if=/dev/zero of=/tmp/big bs=1M count=8 2>&1 | head -n 1; wc -c < /tmp/big', { cwd: workspace, sandbox: { tmpSizeBytes: 2 * 1024 ** 2 } });
    expect(textOf(small)).toMatch(/^2097152$/m);
    expect(textOf(small)).toContain('at most 2 MiB (sandbox.tmpSizeBytes)');
    if (existsSync('/usr/bin/python3')) {
      const tight = await runShell('/usr/bin/python3 -c "bytearray(256 * 1024**2)"; echo "python=$?"', { cwd: workspace, sandbox: { maxMemoryBytes: 64 * 1024 ** 2 } });
      expect(textOf(tight)).toMatch(/^python=(1|137)$/m);
      expect(textOf(tight)).toContain('at most 64 MiB (sandbox.maxMemoryBytes)');
      const roomy = await runShell('/usr/bin/python3 -c "bytearray(256 * 1024**2)"; echo "python=$?"', { cwd: workspace, sandbox: { maxMemoryBytes: 1024 ** 3 } });
      expect(textOf(roomy)).toMatch(/^python=0$/m);
      expect(roomy.details?.limitsReached).toEqual([]);
    }
  });
});

/** Samples the host's MemAvailable every 20 ms until stopped; returns the lowest value seen. */
function memorySampler(): { baseline: number; stop(): number } {
  const read = (): number => Number(/^MemAvailable:\s+(\d+) kB/m.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1] ?? 0) * 1024;
  const baseline = read();
  let lowest = baseline;
  const timer = setInterval(() => (lowest = Math.min(lowest, read())), 20);
  return {
    baseline,
    stop: () => {
      clearInterval(timer);
      return Math.min(lowest, read());
    },
  };
}
