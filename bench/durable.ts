/**
 * What a durable batch costs per call on DBOS and PostgreSQL, side by side in one run, against
 * the same workflow without a journal and against a hand-written DBOS workflow that runs each
 * call as exactly one `DBOS.runStep` (what an application would write without toolrun). Every
 * variant is a DBOS workflow over N no-op calls (an async `execute` returning a string,
 * valibot-validated input):
 *
 * - `no journal`: `runTools` in the workflow, no journal (the floor: DBOS's own workflow rows);
 * - `toolrun run-again` / `toolrun unknown`: `runTools` with `dbosJournal({ interruptedCalls })`
 *   and the same policy (run-again: one row write per call, its result; unknown: a start
 *   marker first, committed before the call runs);
 * - `hand-written step`: `for (const call of calls) await DBOS.runStep(() => execute(call))`;
 *
 * each sequentially (`maxConcurrency: 1`; the hand-written loop awaits each step) and at
 * concurrency 8 (`maxConcurrency: 8`; eight loops taking the next call), for each N of
 * `--calls`, on two throwaway PostgreSQL servers: fsync off (the specs' settings) and fsync on
 * (`fsync`, `synchronous_commit`, `full_page_writes` on: every commit waits for the disk).
 *
 * Printed per row: wall ms per call (median of `--runs` runs after one warm-up, [lowest –
 * highest]); per call, from the median run: write transactions (transaction ids PostgreSQL
 * assigned, `pg_snapshot_xmax` before and after: a read-only transaction gets none), rows added
 * to DBOS's tables (`dbos.workflow_status`, `dbos.operation_outputs`) and to `toolrun.journal`,
 * and WAL bytes; and the ratio of toolrun's journal to the hand-written workflow at the same
 * concurrency (targets: ≤ 1.2 sequentially, ≤ 1.0 at concurrency 8).
 *
 *   npm run bench:durable [-- --runs 5] [--calls 50,1000] [--fsync off,on]
 *
 * The 10,000-call batch (memory per call, recovery after `kill -9`): bench/durable-big.ts.
 *
 * @module
 */
import { parseArgs } from 'node:util';
import { DBOS } from '@dbos-inc/dbos-sdk';
import { DBOSExecutor } from '@dbos-inc/dbos-sdk/internal/dbos-executor';
import * as v from 'valibot';
import { defineTool, runTools, type ToolCall, type ToolJournal } from '../lib/index.ts';
import { dbosJournal } from '../lib/dbos/index.ts';
import { startPostgres } from '../lib/dbos/postgres.ts';
import { median, nowMs } from './harness.ts';

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '5' }, calls: { type: 'string', default: '50,1000' }, fsync: { type: 'string', default: 'off,on' } },
});
const RUNS = Number(values.runs);
const SIZES = values.calls.split(',').map(Number);
const FSYNC = values.fsync.split(',') as Array<'off' | 'on'>;

const noopExecute = async ({ i }: { i: number }): Promise<string> => `done ${i}`;
const noop = defineTool({ name: 'noop', input: v.object({ i: v.number() }), execute: noopExecute });
const callsOf = (n: number): ToolCall[] => Array.from({ length: n }, (_, i) => ({ id: `c${i}`, name: 'noop', arguments: { i } }));

async function drain(calls: readonly ToolCall[], concurrency: number, journal: ToolJournal | undefined, policy: 'run-again' | 'unknown'): Promise<number> {
  const run = runTools(calls, { tools: [noop], maxConcurrency: concurrency, interruptedCalls: policy, ...(journal === undefined ? {} : { journal }) });
  for (;;) {
    const next = await run.next();
    if (next.done === true) return next.value.messages.length;
  }
}

type Variant = 'no journal' | 'toolrun run-again' | 'toolrun unknown' | 'hand-written step';
const VARIANTS: readonly Variant[] = ['no journal', 'toolrun run-again', 'toolrun unknown', 'hand-written step'];

const workflows = {
  'no journal': DBOS.registerWorkflow(async (calls: ToolCall[], c: number) => await drain(calls, c, undefined, 'run-again'), { name: 'bench-no-journal' }),
  'toolrun run-again': DBOS.registerWorkflow(async (calls: ToolCall[], c: number) => await drain(calls, c, dbosJournal({ interruptedCalls: 'run-again' }), 'run-again'), { name: 'bench-run-again' }),
  'toolrun unknown': DBOS.registerWorkflow(async (calls: ToolCall[], c: number) => await drain(calls, c, dbosJournal({ interruptedCalls: 'unknown' }), 'unknown'), { name: 'bench-unknown' }),
  'hand-written step': DBOS.registerWorkflow(
    async (calls: ToolCall[], c: number) => {
      let next = 0;
      const results: string[] = [];
      const worker = async (): Promise<void> => {
        while (next < calls.length) {
          const i = next++;
          results[i] = await DBOS.runStep(async () => await noopExecute(calls[i]!.arguments as { i: number }), { name: 'call' });
        }
      };
      await Promise.all(Array.from({ length: c }, worker));
      return results.length;
    },
    { name: 'bench-hand-written' },
  ),
} satisfies Record<Variant, (calls: ToolCall[], c: number) => Promise<number>>;

interface Pool {
  query(text: string, values?: readonly unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
}
const pool = (): Pool => (DBOSExecutor.globalInstance as unknown as { systemDatabase: { pool: Pool } }).systemDatabase.pool;

interface Counters {
  xid: bigint;
  rows: number;
  journalRows: number;
  wal: string;
}
async function counters(): Promise<Counters> {
  const { rows } = await pool().query(`SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS xid, pg_current_wal_insert_lsn()::text AS wal,
    (SELECT count(*) FROM dbos.workflow_status) + (SELECT count(*) FROM dbos.operation_outputs) AS rows,
    (SELECT count(*) FROM toolrun.journal) AS journal`);
  const r = rows[0]!;
  return { xid: BigInt(String(r.xid)), rows: Number(r.rows), journalRows: Number(r.journal), wal: String(r.wal) };
}
async function walBytes(from: string, to: string): Promise<number> {
  const { rows } = await pool().query('SELECT pg_wal_lsn_diff($2::pg_lsn, $1::pg_lsn)::float8 AS d', [from, to]);
  return Number(rows[0]!.d);
}

interface Measured {
  msPerCall: number[];
  txPerCall: number[];
  dbosRowsPerCall: number[];
  journalRowsPerCall: number[];
  walPerCall: number[];
}

async function measure(variant: Variant, n: number, concurrency: number): Promise<Measured> {
  const calls = callsOf(n);
  const m: Measured = { msPerCall: [], txPerCall: [], dbosRowsPerCall: [], journalRowsPerCall: [], walPerCall: [] };
  for (let r = 0; r <= RUNS; r++) {
    const before = await counters();
    const t0 = nowMs();
    const count = await (await DBOS.startWorkflow(workflows[variant])(calls, concurrency)).getResult();
    const ms = nowMs() - t0;
    const after = await counters();
    if (count !== n) throw new Error(`${variant}: ${count} results for ${n} calls`);
    if (r === 0) continue; // the warm-up
    m.msPerCall.push(ms / n);
    // The counters' own query takes no transaction id (read-only).
    m.txPerCall.push(Number(after.xid - before.xid) / n);
    m.dbosRowsPerCall.push((after.rows - before.rows) / n);
    m.journalRowsPerCall.push((after.journalRows - before.journalRows) / n);
    m.walPerCall.push((await walBytes(before.wal, after.wal)) / n);
  }
  return m;
}

const rows: string[][] = [];
const fmtMs = (x: number): string => (x >= 10 ? x.toFixed(1) : x >= 1 ? x.toFixed(2) : x.toFixed(3));
const fmtN = (x: number): string => (Number.isInteger(x) ? String(x) : x.toFixed(2));

for (const fsync of FSYNC) {
  const settings = fsync === 'on' ? { fsync: 'on', synchronous_commit: 'on', full_page_writes: 'on' } : {};
  const pg = await startPostgres({ settings });
  try {
    DBOS.setConfig({ name: 'toolrun-bench', systemDatabaseUrl: pg.databaseUrl('bench_dbos'), logLevel: 'error', applicationVersion: 'bench' });
    await DBOS.launch();
    // The journal's table is made on first use: once here, outside every measurement.
    await DBOS.startWorkflow(workflows['toolrun run-again'])(callsOf(1), 1).then((h) => h.getResult());
    for (const n of SIZES) {
      for (const concurrency of [1, 8]) {
        const byVariant = new Map<Variant, Measured>();
        for (const variant of VARIANTS) byVariant.set(variant, await measure(variant, n, concurrency));
        const hand = median(byVariant.get('hand-written step')!.msPerCall);
        for (const variant of VARIANTS) {
          const m = byVariant.get(variant)!;
          const ms = median(m.msPerCall);
          const ratio = variant.startsWith('toolrun') ? (ms / hand).toFixed(2) : '';
          rows.push([
            `fsync ${fsync}`,
            String(n),
            concurrency === 1 ? 'seq' : 'c8',
            variant,
            `${fmtMs(ms)} [${fmtMs(Math.min(...m.msPerCall))} – ${fmtMs(Math.max(...m.msPerCall))}]`,
            ratio,
            fmtN(median(m.txPerCall)),
            fmtN(median(m.dbosRowsPerCall)),
            fmtN(median(m.journalRowsPerCall)),
            String(Math.round(median(m.walPerCall))),
          ]);
        }
        process.stderr.write(`fsync ${fsync}, ${n} calls, concurrency ${concurrency}: done\n`);
      }
    }
    rows.push([`(PostgreSQL ${pg.version}, fsync ${fsync})`]);
  } finally {
    await DBOS.shutdown();
    await pg.stop();
  }
}

const head = ['server', 'N', 'conc', 'variant', `ms per call (median of ${RUNS} [low – high])`, '× hand', 'write tx/call', 'DBOS rows/call', 'journal rows/call', 'WAL B/call'];
const table = [head, ...rows.filter((r) => r.length > 1)];
const widths = head.map((_, i) => Math.max(...table.map((r) => (r[i] ?? '').length)));
console.log('durable batch cost per call: wall clock, and what each call writes to PostgreSQL');
for (const r of table) console.log(`  ${r.map((c, i) => (i >= 5 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ')}`);
for (const r of rows.filter((r) => r.length === 1)) console.log(`  ${r[0]}`);
console.log('  targets: toolrun ÷ hand-written ≤ 1.2 sequentially (seq), ≤ 1.0 at concurrency 8 (c8)');
