/**
 * Helpers for the tool specs: contexts, temp directories, process checks, polling.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { onTestFinished } from 'vitest';
import type { ContentBlock } from '../../lib/core/tool/content.ts';
import type { ToolContext, ToolResult } from '../../lib/core/tool/tool.ts';
import { NO_CLIENT } from '../../lib/core/values/client.ts';

/** A context for calling `execute` directly. */
export function contextFor(toolName: string, signal: AbortSignal = new AbortController().signal): ToolContext {
  return { toolCallId: `call-${toolName}`, toolName, index: 0, signal, client: NO_CLIENT };
}

/**
 * A fresh real temp directory, removed when the current test finishes. Why `onTestFinished`
 * and not a module-level `afterEach`: the fast project runs a worker's files in one module
 * graph (`isolate: false`), so this module is evaluated once per worker and a hook it
 * registered would belong to the first file that imported it only; the other files' dirs
 * stayed behind.
 */
export async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'toolrun-tools-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** The value `execute` returned, typed as the generator it is. */
export function asGenerator<P, R>(value: unknown): AsyncGenerator<P, R, undefined> {
  const gen = value as AsyncGenerator<P, R, undefined>;
  if (typeof gen?.next !== 'function') throw new TypeError('execute did not return an async generator');
  return gen;
}

/** Pulls a generator to its end. */
export async function drain<P, R>(gen: AsyncGenerator<P, R, undefined>): Promise<{ progress: P[]; result: R }> {
  const progress: P[] = [];
  for (;;) {
    const step = await gen.next();
    if (step.done === true) return { progress, result: step.value };
    progress.push(step.value);
  }
}

/** The text of a result's single text block. */
export function textOf(result: ToolResult | { content: ContentBlock[] }): string {
  const [block] = result.content;
  if (block?.type !== 'text' || result.content.length !== 1) throw new Error(`expected one text block, got ${JSON.stringify(result.content)}`);
  return block.text;
}

/**
 * True once `pid` no longer runs: `kill(pid, 0)` fails with ESRCH, or (Linux) the process
 * is a zombie. Orphans are reaped by PID 1, which on some machines (this one's init reaps
 * about every 2 s) leaves a dead process visible to `kill(pid, 0)` for a while; a zombie
 * runs no code, so it counts as gone.
 */
export function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return true;
    throw error;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    return state === 'Z' || state === 'X';
  } catch {
    return false;
  }
}

/** Polls `condition` every `intervalMs` until it holds; throws `message` after `timeoutMs`. */
export async function pollUntil(
  condition: () => boolean | Promise<boolean>,
  message: string,
  { timeoutMs = 3000, intervalMs = 20 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for: ${message}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Reads a file of one pid per line. */
export function readPids(file: string): number[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map(Number);
}

/**
 * The live processes (zombies left out) whose environment holds `TOOLRUN_SHELL_CALL=<callId>`
 * (every process a `shell` call starts inherits it, sandboxed or not): host pid → its pid in
 * its innermost PID namespace (the same number outside a sandbox).
 */
export function callProcesses(callId: string): Map<number, number> {
  const marker = Buffer.from(`TOOLRUN_SHELL_CALL=${callId}\0`);
  const found = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (!readFileSync(`/proc/${name}/environ`).includes(marker) || isGone(Number(name))) continue;
      const nsPids = /^NSpid:\s*(.+)$/m.exec(readFileSync(`/proc/${name}/status`, 'utf8'))?.[1]?.trim().split(/\s+/) ?? [name];
      found.set(Number(name), Number(nsPids.at(-1)));
    } catch {
      // gone meanwhile, or not readable
    }
  }
  return found;
}
