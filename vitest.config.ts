import { defineConfig } from 'vitest/config';

/**
 * The end-to-end specs: `npm run test:slow` (`vitest run --project slow`), which `.ci/run`
 * runs after `npm test`. Each group is here for one reason; everything else is `npm test`
 * (`--project fast`), which must stay under a minute on a 2-core machine. `npx vitest run`
 * with no project runs both. Why: docs/adr/0030-suite-and-checks.md.
 */
const SLOW_SPECS = [
  // Child processes: the CLI as a program, MCP servers over stdio and HTTP, approval across
  // processes, the shell tool and its sandbox, a process's exit and heap after 10,000 runs
  // (`*.process.spec.ts`: any spec that starts node with tsx, about 1.3 s of CPU each).
  'spec/cli/main.spec.ts',
  'spec/cli/approval.spec.ts',
  'spec/cli/serve-mcp.spec.ts',
  'spec/cli/serve-mcp-timeout.spec.ts',
  'spec/cli/mcp.spec.ts',
  'spec/cli/replay-stream.spec.ts',
  'spec/cli/durable.spec.ts',
  'spec/mcp/lifetimes.spec.ts',
  'spec/mcp/serve.spec.ts',
  'spec/mcp/stdio.spec.ts',
  'spec/mcp/stdio-backpressure.spec.ts',
  'spec/mcp/stdio-calls.spec.ts',
  'spec/extras/mcp.spec.ts',
  'spec/otel/mcp-trace.spec.ts',
  'spec/**/*.process.spec.ts',
  'spec/core/resources.spec.ts',
  'spec/tools/shell.spec.ts',
  'spec/tools/shell-sandbox.spec.ts',
  'spec/tools/workspace-race.spec.ts',
  // A real PostgreSQL (started by lib/dbos/postgres.ts) and DBOS workers in child processes.
  'spec/dbos/**/*.spec.ts',
  // Whole-program typechecks (the project with every docs block, the public types, no `any`)
  // and the docs' programs, run as a user runs them.
  'spec/docs/**/*.spec.ts',
  'spec/package/**/*.spec.ts',
  'spec/core/types.spec.ts',
  'spec/types/**/*.spec.ts',
  'spec/examples/**/*.spec.ts',
  // Thousands of generated cases, and the benchmark's scenarios.
  'spec/property/**/*.spec.ts',
  'spec/bench/**/*.spec.ts',
  // A rule checked at scale or over a whole corpus, where `npm test` keeps a smaller instance
  // of the same check (M6 with 100,000 sources, H7 after 10,000 resumes, BFCL's 440 entries).
  'spec/**/*.slow.spec.ts',
];

export default defineConfig({
  test: {
    testTimeout: 20_000,
    // Transformed lib/ and spec/ modules are kept on disk (node_modules/.experimental-vitest-cache,
    // keyed by each file's content, the config and the lockfile), so a run transforms only
    // what changed: vitest's main process, which serves every module to the workers, spent
    // 2.9-3.0 s of CPU on spec/core + formats + mcp without it and 1.0-1.2 s with a warm cache
    // (a cold cache costs the same as none).
    experimental: { fsModuleCache: true },
    // Specs that spawn real processes or replay the corpus share 2 cores with the rest.
    pool: 'forks',
    // Three workers on two cores: against 2 and 4, the least CPU for `npm test` and the
    // shortest wall time under load (measured with `/usr/bin/time` under `stress-ng --cpu 4`).
    // Set it here: `--maxWorkers` on the command line does not reach the projects. Specs wait
    // on gates, events and fake timers; a time limit is only a hang guard. Two end-to-end specs
    // of test:slow still race a real sleep, by a wide margin: spec/extras/mcp.spec.ts (an abort
    // at step 2 of a 5 s, 50-step server operation stops it before step 50) and
    // spec/cli/main.spec.ts (Ctrl+C at step 1 of the demo's shell call, 2 s of sleeps left,
    // stops it before step 5).
    maxWorkers: 3,
    projects: [
      {
        extends: true,
        // isolate: false — a worker runs its files one after another in one module graph,
        // instead of a fresh process importing lib/ and the SDKs again for each file: 40 s of
        // CPU instead of 97 s (`time npx vitest run --project fast`). So a spec that leaves
        // process-wide state changed (fake timers, listeners, env) can break a later file of
        // the same worker: restore it in afterEach.
        // spec/setup/quiet-peers.ts stops a peer SDK's background timer that would otherwise
        // outlive the file that imported it; spec/setup/cpu-profile.ts logs each file's and
        // test's CPU when TOOLRUN_SPEC_CPU names a file (docs/reliability.md, the CPU budget).
        test: { name: 'fast', include: ['spec/**/*.spec.ts'], exclude: SLOW_SPECS, isolate: false, setupFiles: ['spec/setup/quiet-peers.ts', 'spec/setup/cpu-profile.ts'] },
      },
      { extends: true, test: { name: 'slow', include: SLOW_SPECS } },
      {
        // Type tests (`spec/types/*.test-d.ts`): `expectTypeOf` and `@ts-expect-error` lines
        // checked by `tsc -p spec/types/tsconfig.json` (strict, exactOptionalPropertyTypes,
        // nodenext), each error reported on its test; the same files under `bundler`
        // resolution are compiled by spec/types/resolutions.spec.ts.
        extends: true,
        test: {
          name: 'types',
          include: [],
          typecheck: { enabled: true, only: true, include: ['spec/types/**/*.test-d.ts'], tsconfig: 'spec/types/tsconfig.json' },
        },
      },
    ],
  },
});
