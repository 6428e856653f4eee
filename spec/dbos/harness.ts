/**
 * Shared by the `toolrun/dbos` specs: a throwaway PostgreSQL per spec file (lib/dbos/postgres.ts),
 * DBOS launched on it, and a driver that plays the core's side of the journal seam by the
 * contract in lib/core/seams/journal.ts (open every entry in call order, synchronously; await
 * `prior`; commit in call order) while the "tools" finish in any order the spec picks.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { DBOS } from '@dbos-inc/dbos-sdk';
import { afterAll, beforeAll } from 'vitest';
import type { JournalPrior, JournaledResult, ToolJournal } from '../../lib/core/seams/journal.ts';
import { startPostgres, type PostgresServer } from '../../lib/dbos/postgres.ts';

/** Starts PostgreSQL and points DBOS at a fresh system database on it (not launched). Fails loudly if PostgreSQL cannot start. */
export async function startDatabase(app: string): Promise<PostgresServer> {
  const pg = await startPostgres();
  DBOS.setConfig({ name: app, systemDatabaseUrl: pg.databaseUrl(`${app}_dbos`), logLevel: 'error', applicationVersion: 'spec' });
  return pg;
}

/**
 * The spec file's PostgreSQL and DBOS: started and launched before its tests, shut down and
 * stopped after them. Returns the server (read it inside a test, once `beforeAll` ran).
 */
export function launchDbosForFile(app: string): () => PostgresServer {
  let pg: PostgresServer | undefined;
  beforeAll(async () => {
    pg = await startDatabase(app);
    await DBOS.launch();
  }, 120_000);
  afterAll(async () => {
    await DBOS.shutdown();
    await pg?.stop();
  }, 60_000);
  return () => {
    if (pg === undefined) throw new Error(`PostgreSQL for ${app} is not started: read it inside a test`);
    return pg;
  };
}

/** A promise the spec resolves by hand. */
export interface Gate<T = void> {
  readonly promise: Promise<T>;
  open(value: T): void;
}
export function gate<T = void>(): Gate<T> {
  let open!: (value: T) => void;
  const promise = new Promise<T>((r) => (open = r));
  return { promise, open };
}

/** What the driver did with one call. */
export interface DrivenCall {
  prior: JournalPrior['state'];
  result: JournaledResult;
  key: string;
}

/**
 * Plays the core: opens call 0…n-1 in order (synchronously, one after the other), awaits
 * each prior, runs `execute(i, key)` for 'new' (and 'started': run again), then commits in
 * call order; a call whose prior is 'ended' keeps its journaled result.
 */
export async function driveBatch(
  journal: ToolJournal,
  n: number,
  execute: (index: number, key: string, entry: { progress?(v: unknown): void; decide(d: { approved: boolean }): unknown }) => Promise<JournaledResult>,
): Promise<DrivenCall[]> {
  const entries = Array.from({ length: n }, (_, index) => journal.open({ index, toolCallId: `toolu_${index}`, toolName: 'work', arguments: { n: index } }));
  const finished = entries.map(async (entry, index) => {
    const prior = await entry.prior;
    if (prior.state === 'ended') return { prior: prior.state, result: prior.result, key: entry.idempotencyKey, commit: false };
    return { prior: prior.state, result: await execute(index, entry.idempotencyKey, entry), key: entry.idempotencyKey, commit: true };
  });
  // A simulated crash (DBOS shut down under a running workflow) fails the abandoned
  // attempt's later entries; that attempt is gone, nobody awaits them.
  for (const f of finished) f.catch(() => undefined);
  const out: DrivenCall[] = [];
  for (const [index, entry] of entries.entries()) {
    const done = await finished[index]!;
    if (done.commit) await entry.commit(done.result);
    out.push({ prior: done.prior, result: done.result, key: done.key });
  }
  return out;
}

/** The finalized result a call `index` of the specs gets: distinct per call, so a swap shows. */
export function resultOf(index: number, attempt = ''): JournaledResult {
  return { message: { role: 'tool', toolCallId: `toolu_${index}`, toolName: 'work', content: [{ type: 'text', text: `call ${index} done${attempt}` }], isError: false }, outcome: 'ok' };
}

/** The workflow's recorded operations as `functionID name` lines. */
export async function operations(workflowId: string): Promise<string[]> {
  const steps = (await DBOS.listWorkflowSteps(workflowId)) ?? [];
  return steps.map((s) => `${s.functionID} ${s.name}`);
}

/** A connection pool to DBOS's system database (where `toolrun.journal` lives), DBOS's own. */
export interface SpecPool {
  query(text: string, values?: readonly unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
  connect(): Promise<{ query: SpecPool['query']; release(): void }>;
}
export async function systemPool(): Promise<SpecPool> {
  const { DBOSExecutor } = await import('@dbos-inc/dbos-sdk/internal/dbos-executor');
  return (DBOSExecutor.globalInstance as unknown as { systemDatabase: { pool: SpecPool } }).systemDatabase.pool;
}

/** The journal rows of a workflow's batch, in index order (the batch row, index -1, left out). */
export async function journalRows(workflowId: string, scope = 'batch'): Promise<Array<{ idx: number; tool_call_id: string; attempt: string | null; decision: string | null; result: string | null; xmin: string }>> {
  const pool = await systemPool();
  const { rows } = await pool.query('SELECT idx, tool_call_id, attempt, decision, result, xmin::text AS xmin FROM toolrun.journal WHERE workflow_id = $1 AND scope = $2 AND idx >= 0 ORDER BY idx', [workflowId, scope]);
  return rows as never;
}

/**
 * Starts a worker process (`node --import tsx <fixture>` with `ROLE=worker`, `DB_URL` and
 * `env`), kept in `children` while it lives; resolves once it printed `ready`, rejects with
 * its stderr when it exits first.
 */
export async function startWorkerProcess(fixture: string, url: string, env: Record<string, string>, children: Set<ChildProcess>): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', fixture], { env: { ...process.env, ROLE: 'worker', DB_URL: url, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  child.on('exit', () => children.delete(child));
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => d.toString().includes('ready') && resolve());
    child.on('exit', (code) => reject(new Error(`worker exited (${code}) before it was ready: ${err.slice(-2000)}`)));
  });
  return child;
}
