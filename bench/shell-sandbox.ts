/**
 * What the `shell` tool's OS sandbox costs per command: the wall time of one `shell` call
 * (from `execute` to its result: spawn, the command, output closed, cgroup removed), for the
 * command `true`, unsandboxed and sandboxed, interleaved so that machine load hits every
 * variant alike:
 *
 *   npx tsx bench/shell-sandbox.ts [--runs 40] [--command true]
 *
 * - `unsandboxed`: `shellTool({ sandbox: false })`: `/bin/sh -c` in a process group;
 * - `sandboxed`: the default: bubblewrap with every namespace new, no network, plus a pids
 *   cgroup per command where the host allows one (`shellSandboxStatus().processLimit`);
 * - `sandboxed, network: 'host'`: the same without a new network namespace.
 *
 * The sandbox's one-time check (`shellSandboxStatus`, one trial sandbox per process) is
 * timed on its own and left out of the per-command figures. Printed per variant: median,
 * lowest and highest, and the 90th percentile, in ms, and the median's difference to
 * `unsandboxed`.
 *
 * @module
 */
import { NO_CLIENT } from '../lib/core/values/client.ts';
import { performance } from 'node:perf_hooks';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { shellSandboxStatus } from '../lib/tools/sandbox.ts';
import { shellTool, type ShellTool } from '../lib/tools/shell.ts';

function argValue(name: string, fallback: string): string {
  const at = process.argv.indexOf(name);
  return at >= 0 && process.argv[at + 1] !== undefined ? process.argv[at + 1]! : fallback;
}

const runs = Number(argValue('--runs', '40'));
const command = argValue('--command', 'true');

async function once(tool: ShellTool): Promise<number> {
  const started = performance.now();
  const gen = tool.execute({ command }, { toolCallId: 'bench', toolName: 'shell', index: 0, signal: new AbortController().signal, client: NO_CLIENT }) as AsyncGenerator<
    unknown,
    { details?: { exitCode: number | null } }
  >;
  for (;;) {
    const step = await gen.next();
    if (step.done === true) {
      if (step.value.details?.exitCode !== 0) throw new Error(`the command failed: ${JSON.stringify(step.value)}`);
      return performance.now() - started;
    }
  }
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

async function main(): Promise<void> {
  const cwd = mkdtempSync(path.join(os.tmpdir(), 'toolrun-bench-shell-'));
  try {
    const probeStart = performance.now();
    const status = await shellSandboxStatus();
    const probeMs = performance.now() - probeStart;
    if (!status.available) throw new Error(`the sandbox is unavailable here: ${status.reason}`);
    const variants: [string, ShellTool][] = [
      ['unsandboxed', shellTool({ cwd, sandbox: false })],
      ['sandboxed', shellTool({ cwd })],
      ["sandboxed, network: 'host'", shellTool({ cwd, sandbox: { network: 'host' } })],
    ];
    // Warm-up: module loading, the first spawns.
    for (const [, tool] of variants) for (let i = 0; i < 3; i++) await once(tool);
    const times = new Map<string, number[]>(variants.map(([name]) => [name, []]));
    for (let run = 0; run < runs; run++) {
      for (const [name, tool] of variants) times.get(name)!.push(await once(tool));
    }
    console.log(`shell tool, command ${JSON.stringify(command)}, ${runs} runs per variant, interleaved; node ${process.version}, ${os.cpus().length} cores, load ${os.loadavg()[0]!.toFixed(2)}`);
    console.log(`sandbox check (once per process): ${probeMs.toFixed(1)} ms; process limit: ${status.processLimit}`);
    console.log('| variant | median ms | min–max ms | p90 ms | median − unsandboxed |');
    console.log('| --- | --- | --- | --- | --- |');
    const base = [...times.get('unsandboxed')!].sort((a, b) => a - b);
    for (const [name] of variants) {
      const sorted = [...times.get(name)!].sort((a, b) => a - b);
      const median = quantile(sorted, 0.5);
      console.log(
        `| ${name} | ${median.toFixed(1)} | ${sorted[0]!.toFixed(1)}–${sorted.at(-1)!.toFixed(1)} | ${quantile(sorted, 0.9).toFixed(1)} | ${(median - quantile(base, 0.5)).toFixed(1)} |`,
      );
    }
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}

await main();
