/**
 * What journaling costs per call: one batch of N no-op calls (an async
 * `execute` returning a string, valibot-validated input, `maxConcurrency: Infinity`), timed
 *
 * - `plain`: `runTools` without a journal;
 * - `memoryJournal`: with `memoryJournal()` from `toolrun/testing` (a fresh one per batch) —
 *   the seam's own cost: an entry per call, its prior awaited, the commit in call order;
 * - `DBOS` (unless `--no-dbos`): the batch as a DBOS workflow with `dbosJournal()` on a
 *   throwaway PostgreSQL (lib/dbos/postgres.ts): three DBOS steps per call, each a write to
 *   the system database — the cost a durable batch pays per call on a real engine.
 *
 *   npx tsx bench/durable.ts [--runs 7] [--calls 200] [--dbos-calls 50] [--no-dbos]
 *
 * Each variant is run `--runs` times after one warm-up batch; printed per variant: the median
 * of the runs in µs per call (wall clock: the DBOS figure is mostly waiting on PostgreSQL),
 * their lowest and highest, and the added cost per call over `plain`.
 *
 * @module
 */
import { parseArgs } from 'node:util';
import * as v from 'valibot';
import { defineTool, runTools, type ToolCall, type ToolJournal } from '../lib/index.ts';
import { memoryJournal } from '../lib/testing.ts';
import { median, nowMs } from './harness.ts';

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '7' }, calls: { type: 'string', default: '200' }, 'dbos-calls': { type: 'string', default: '50' }, 'no-dbos': { type: 'boolean', default: false } },
});
const RUNS = Number(values.runs);

const noop = defineTool({ name: 'noop', input: v.object({ i: v.number() }), execute: async ({ i }) => `done ${i}` });
const callsOf = (n: number): ToolCall[] => Array.from({ length: n }, (_, i) => ({ id: `c${i}`, name: 'noop', arguments: { i } }));

/** Runs one batch to its end. */
async function batch(calls: readonly ToolCall[], journal: ToolJournal | undefined): Promise<void> {
  const run = runTools(calls, { tools: [noop], maxConcurrency: Infinity, ...(journal === undefined ? {} : { journal }) });
  while ((await run.next()).done !== true);
}

/** µs per call of `once()` over `RUNS` runs after a warm-up: median, lowest, highest. */
async function time(n: number, once: () => Promise<void>): Promise<{ median: number; low: number; high: number }> {
  await once();
  const perCall: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    const t0 = nowMs();
    await once();
    perCall.push(((nowMs() - t0) * 1000) / n);
  }
  return { median: median(perCall), low: Math.min(...perCall), high: Math.max(...perCall) };
}

const rows: Array<[string, number, { median: number; low: number; high: number }]> = [];
const n = Number(values.calls);
const calls = callsOf(n);
const plain = await time(n, () => batch(calls, undefined));
rows.push(['plain', n, plain]);
rows.push(['memoryJournal', n, await time(n, () => batch(calls, memoryJournal()))]);

let dbosPlain: { median: number } | undefined;
if (!values['no-dbos']) {
  const { startPostgres } = await import('../lib/dbos/postgres.ts');
  const { DBOS } = await import('@dbos-inc/dbos-sdk');
  const { dbosJournal } = await import('../lib/dbos/index.ts');
  const pg = await startPostgres();
  try {
    DBOS.setConfig({ name: 'toolrun-bench', systemDatabaseUrl: pg.databaseUrl('bench_dbos'), logLevel: 'error', applicationVersion: 'bench' });
    const journaled = DBOS.registerWorkflow(async (batchCalls: ToolCall[]) => await batch(batchCalls, dbosJournal()), { name: 'bench-journaled' });
    const unjournaled = DBOS.registerWorkflow(async (batchCalls: ToolCall[]) => await batch(batchCalls, undefined), { name: 'bench-plain' });
    await DBOS.launch();
    const m = Number(values['dbos-calls']);
    const dbosCalls = callsOf(m);
    const inWorkflow = await time(m, async () => await (await DBOS.startWorkflow(unjournaled)(dbosCalls)).getResult());
    dbosPlain = inWorkflow;
    rows.push(['DBOS workflow, no journal', m, inWorkflow]);
    rows.push(['DBOS workflow, dbosJournal', m, await time(m, async () => await (await DBOS.startWorkflow(journaled)(dbosCalls)).getResult())]);
    rows.push([`(PostgreSQL ${pg.version})`, 0, { median: NaN, low: NaN, high: NaN }]);
  } finally {
    await DBOS.shutdown();
    await pg.stop();
  }
}

const fmt = (us: number): string => (Number.isNaN(us) ? '' : us >= 1000 ? `${(us / 1000).toFixed(2)} ms` : `${us.toFixed(1)} µs`);
console.log(`journaling cost per call (${RUNS} runs each, median [lowest – highest]; wall clock)`);
for (const [name, calls_, t] of rows) {
  if (calls_ === 0) {
    console.log(`  ${name}`);
    continue;
  }
  const base = name.startsWith('DBOS') ? dbosPlain : plain;
  const added = base === undefined || name === 'plain' || name === 'DBOS workflow, no journal' ? '' : `   +${fmt(t.median - base.median)} per call`;
  console.log(`  ${name.padEnd(28)} ${String(calls_).padStart(4)} calls  ${fmt(t.median).padStart(10)}  [${fmt(t.low)} – ${fmt(t.high)}]${added}`);
}
