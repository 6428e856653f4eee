/**
 * The registry of named scenarios: `npm run bench -- <name>…` picks from it.
 *
 * Each scenario is a function `(budget, options) => Promise<ScenarioResult>` that returns its
 * rows, so the smoke spec (`spec/bench/scenarios.spec.ts`) can run it in-process at tiny sizes.
 *
 * @module
 */
import type { Budget } from '../harness.ts';
import type { ScenarioName, ScenarioOptions, ScenarioResult } from '../rows.ts';
import { abort, ABORT_SIZES } from './abort.ts';
import { coldStart, COLD_START_SIZES } from './cold-start.ts';
import { journal, JOURNAL_SIZES } from './journal.ts';
import { mcpHttp, mcpStdio, MCP_SIZES } from './mcp-serve.ts';
import { memory, MEMORY_SIZES } from './memory.ts';
import { overhead, OVERHEAD_SIZES } from './overhead.ts';
import { progress, PROGRESS_SIZES } from './progress.ts';
import { releaseLatency, RELEASE_SIZES } from './release-latency.ts';
import { resume, RESUME_SIZES } from './resume.ts';
import { scaling, SCALING_SIZES } from './scaling.ts';
import { streamStart, STREAM_START_SIZES } from './stream-start.ts';
import { tracing, TRACING_SIZES } from './tracing.ts';

export { abort, coldStart, journal, mcpHttp, mcpStdio, memory, overhead, progress, releaseLatency, resume, scaling, streamStart, tracing };

/** A scenario function and its sizes in a default run and in a `--full` run. */
export interface ScenarioEntry {
  run: (budget: Budget, options?: ScenarioOptions) => Promise<ScenarioResult>;
  sizes: readonly number[];
  fullSizes: readonly number[];
  /**
   * Run it in several fresh processes and report medians over them (bench/runs.ts;
   * `--runs K`, default {@link DEFAULT_RUNS}): set for the scenarios whose targets are CPU
   * ratios measured in one process. `cold-start`, `tracing` and the MCP scenarios are not: each of
   * their figures already is a median over fresh processes of their own.
   */
  repeated?: boolean;
}

/** Fresh processes per repeated scenario when `--runs` is not given. */
export const DEFAULT_RUNS = 3;

export const SCENARIOS: Record<ScenarioName, ScenarioEntry> = {
  overhead: { run: overhead, sizes: OVERHEAD_SIZES, fullSizes: OVERHEAD_SIZES, repeated: true },
  progress: { run: progress, sizes: PROGRESS_SIZES, fullSizes: [...PROGRESS_SIZES, 10_000] },
  scaling: { run: scaling, sizes: SCALING_SIZES, fullSizes: SCALING_SIZES },
  'release-latency': { run: releaseLatency, sizes: RELEASE_SIZES, fullSizes: [...RELEASE_SIZES, 5_000] },
  memory: { run: memory, sizes: MEMORY_SIZES, fullSizes: [1_000, 10_000, ...MEMORY_SIZES] },
  abort: { run: abort, sizes: ABORT_SIZES, fullSizes: [...ABORT_SIZES, 30_000] },
  'stream-start': { run: streamStart, sizes: STREAM_START_SIZES, fullSizes: [...STREAM_START_SIZES, 64] },
  'mcp-stdio': { run: mcpStdio, sizes: MCP_SIZES, fullSizes: [10_000] },
  'mcp-http': { run: mcpHttp, sizes: MCP_SIZES, fullSizes: [10_000] },
  'cold-start': { run: coldStart, sizes: COLD_START_SIZES, fullSizes: [1_000] },
  resume: { run: resume, sizes: RESUME_SIZES, fullSizes: [10, ...RESUME_SIZES], repeated: true },
  journal: { run: journal, sizes: JOURNAL_SIZES, fullSizes: [100, ...JOURNAL_SIZES, 10_000] },
  tracing: { run: tracing, sizes: TRACING_SIZES, fullSizes: TRACING_SIZES },
};

/** The scenarios run in several fresh processes (`repeated`). */
export const REPEATED = (Object.keys(SCENARIOS) as ScenarioName[]).filter((n) => SCENARIOS[n].repeated === true);
