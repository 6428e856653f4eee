/**
 * `toolrun/dbos`'s journal table against a real PostgreSQL (docs/adr/0050-journal-table-group-commit.md,
 * docs/adr/0051-journal-claim.md): what each call writes, group commit, rows read as untrusted
 * input, and two attempts of one batch at once. The journal is driven by `runTools` (the core)
 * or, where commits must come in completion order, by hand.
 */
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { JournalError, type JournaledResult, type ToolJournal } from '../../lib/core/seams/journal.ts';
import { defineTool, runTools, type ToolCall } from '../../lib/index.ts';
import { tableJournal, type TableJournalSettings } from '../../lib/dbos/table-journal.ts';
import { gate, journalRows, launchDbosForFile, resultOf, systemPool, type Gate } from './harness.ts';

launchDbosForFile('toolrun_table');

const settings = (workflowId: string, interruptedCalls: TableJournalSettings['interruptedCalls'], database?: TableJournalSettings['database']): TableJournalSettings => ({
  workflowId,
  scope: 'batch',
  keepProgress: 100,
  streamProgress: false,
  interruptedCalls,
  ...(database === undefined ? {} : { database }),
});

/** DBOS's pool, counting the rows each journal write statement carries. */
async function countingPool(): Promise<{ database: NonNullable<TableJournalSettings['database']>; writes: number[] }> {
  const pool = await systemPool();
  const writes: number[] = [];
  return {
    writes,
    database: {
      query(text, values) {
        if (text.includes('unnest(')) writes.push((values![0] as unknown[]).length);
        return pool.query(text, values);
      },
    },
  };
}

const runs: Record<string, number> = {};
let hold: Gate | undefined;
const work = defineTool({
  name: 'work',
  input: v.object({ n: v.number() }),
  async execute({ n }) {
    runs[`${n}`] = (runs[`${n}`] ?? 0) + 1;
    await hold?.promise;
    return `work ${n} done`;
  },
});
const callsOf = (n: number, offset = 0): ToolCall[] => Array.from({ length: n }, (_, i) => ({ id: `toolu_${i}`, name: 'work', arguments: { n: i + offset } }));

/** Runs a batch to its end; the generator's error (a JournalError) is returned, not thrown. */
async function drain(calls: readonly ToolCall[], journal: ToolJournal, policy: 'unknown' | 'run-again', maxConcurrency = Infinity): Promise<{ texts: string[]; error?: unknown }> {
  const run = runTools(calls, { tools: [work], journal, interruptedCalls: policy, maxConcurrency });
  try {
    for (;;) {
      const next = await run.next();
      if (next.done === true) return { texts: next.value.messages.map((m) => (m.content[0] as { text: string }).text) };
    }
  } catch (error) {
    return { texts: [], error };
  }
}

describe('toolrun/dbos journal table (J14–J16)', () => {
  it("J14 one row write per call under 'run-again' (its result), two under 'unknown' (start marker, result); one row per call", async () => {
    // Fails if a call writes more than its result under 'run-again' (a marker or a second
    // write), or no start marker under 'unknown' (an interrupted call would look new and run again).
    for (const [policy, perCall] of [['run-again', 1], ['unknown', 2]] as const) {
      const { database, writes } = await countingPool();
      const workflowId = `writes-${policy}`;
      const { texts } = await drain(callsOf(20), tableJournal(settings(workflowId, policy, database)), policy, 4);
      expect(texts).toEqual(Array.from({ length: 20 }, (_, i) => `work ${i} done`));
      expect(writes.reduce((a, b) => a + b, 0)).toBe(20 * perCall);
      const rows = await journalRows(workflowId);
      expect(rows.map((r) => r.idx)).toEqual(Array.from({ length: 20 }, (_, i) => i));
      expect(rows.every((r) => r.result !== null)).toBe(true);
    }
  }, 60_000);

  it('J14 group commit: results committed while the writer\'s statement is in flight go to PostgreSQL as one transaction, whatever order the calls commit in', async () => {
    // The in-flight write is held by a real lock on the table (another session's SHARE ROW
    // EXCLUSIVE lock blocks every INSERT): call 0's result waits in PostgreSQL while calls 7…1
    // commit, in that order, each in its own turn of the event loop. Fails if each commit is its
    // own transaction (the rows would have eight different xmin), if a result is sent beside
    // the one in flight instead of waiting for it (results take one statement at a time), or if
    // a result lands in another call's row.
    const workflowId = 'group-1';
    const journal = tableJournal(settings(workflowId, 'run-again'));
    const n = 8;
    const entries = Array.from({ length: n }, (_, index) => journal.open({ index, toolCallId: `toolu_${index}`, toolName: 'work', arguments: { n: index } }));
    for (const entry of entries) expect((await entry.prior).state).toBe('new');
    const pool = await systemPool();
    /** Waits until `count` statements wait on the lock (bounded by a count of polls, not a time). */
    const waitingOnLock = async (count: number): Promise<void> => {
      for (let poll = 0; ; poll++) {
        const { rows } = await pool.query("SELECT count(*)::int AS waiting FROM pg_locks WHERE relation = 'toolrun.journal'::regclass AND NOT granted");
        if (Number(rows[0]!.waiting) >= count) return;
        if (poll === 10_000) throw new Error(`${count} writes never reached the lock`);
        await new Promise((r) => setImmediate(r));
      }
    };
    const locker = await pool.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE toolrun.journal IN SHARE ROW EXCLUSIVE MODE');
      const commits: Promise<void>[] = [Promise.resolve(entries[0]!.commit(resultOf(0)))];
      await waitingOnLock(1);
      for (let index = n - 1; index >= 1; index--) {
        commits.push(Promise.resolve(entries[index]!.commit(resultOf(index))));
        await new Promise((r) => setImmediate(r));
      }
      await locker.query('COMMIT');
      await Promise.all(commits);
    } finally {
      locker.release();
    }
    const rows = await journalRows(workflowId);
    expect(rows.map((r) => (JSON.parse(r.result!) as { result: JournaledResult }).result)).toEqual(Array.from({ length: n }, (_, i) => resultOf(i)));
    expect(new Set(rows.map((r) => r.xmin)).size).toBe(2);
    expect(new Set(rows.slice(1).map((r) => r.xmin)).size).toBe(1);
  }, 60_000);

  it('J14 a connection lost under a write: the write is sent again once the database answers, the call committed once, nothing failed', async () => {
    // Call 0's result is held on a table lock; its server process is then terminated (the
    // connection dies mid-statement, as at a PostgreSQL restart). Fails if the lost connection
    // fails the commit (the run would throw a JournalError), or if the write sent again is
    // refused as a second result.
    const workflowId = 'lost-1';
    const journal = tableJournal(settings(workflowId, 'unknown'));
    const entry = journal.open({ index: 0, toolCallId: 'toolu_0', toolName: 'work', arguments: { n: 0 } });
    expect((await entry.prior).state).toBe('new');
    const pool = await systemPool();
    const locker = await pool.connect();
    let committed: Promise<void>;
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE toolrun.journal IN SHARE ROW EXCLUSIVE MODE');
      committed = Promise.resolve(entry.commit(resultOf(0)));
      let pid: unknown;
      for (let poll = 0; pid === undefined; poll++) {
        const { rows } = await pool.query("SELECT pid FROM pg_locks WHERE relation = 'toolrun.journal'::regclass AND NOT granted");
        pid = rows[0]?.pid;
        if (poll === 10_000) throw new Error("call 0's write never reached the lock");
        await new Promise((r) => setImmediate(r));
      }
      await pool.query('SELECT pg_terminate_backend($1::int)', [pid]);
      await locker.query('COMMIT');
    } finally {
      locker.release();
    }
    await committed;
    const rows = await journalRows(workflowId);
    expect(rows).toHaveLength(1);
    expect((JSON.parse(rows[0]!.result!) as { result: JournaledResult }).result).toEqual(resultOf(0));
  }, 60_000);

  it('J15 a truncated or malformed result row, a bad decision, a result of another tool, or a workflow id reused with other calls: a JournalError naming the call, nothing run, nothing overwritten', async () => {
    // Fails if a bad row is replayed (or crashes the run with something other than a
    // JournalError), if the call is run instead, or if the row is overwritten.
    const pool = await systemPool();
    const cases: Array<{ name: string; spoil: string; calls?: ToolCall[]; message: RegExp }> = [
      { name: 'truncated', spoil: 'UPDATE toolrun.journal SET result = left(result, 25) WHERE workflow_id = $1::text AND idx = 1', message: /result for call 1 .* is not JSON/ },
      { name: 'malformed', spoil: `UPDATE toolrun.journal SET result = replace(result, '"outcome":"ok"', '"outcome":"hacked"') WHERE workflow_id = $1::text AND idx = 1`, message: /result for call 1 .* is malformed at result\.outcome/ },
      { name: 'decision', spoil: `UPDATE toolrun.journal SET decision = '{"approved":"yes"}' WHERE workflow_id = $1::text AND idx = 1`, message: /decision for call 1 .* is malformed at approved/ },
      { name: 'tool-name', spoil: `UPDATE toolrun.journal SET result = replace(result, '"toolName":"work"', '"toolName":"evil"') WHERE workflow_id = $1::text AND idx = 1`, message: /call 1 .* as tool "evil"/ },
      { name: 'reused', spoil: 'SELECT $1::text', calls: [...callsOf(1), ...callsOf(2, 10).slice(1)], message: /call 1 .* the workflow id was reused with other calls/ },
    ];
    for (const c of cases) {
      const workflowId = `hostile-${c.name}`;
      expect((await drain(callsOf(3), tableJournal(settings(workflowId, 'run-again')), 'run-again')).error).toBeUndefined();
      await pool.query(c.spoil, [workflowId]);
      const before = await journalRows(workflowId);
      for (const key of Object.keys(runs)) delete runs[key];
      const { error } = await drain(c.calls ?? callsOf(3), tableJournal(settings(workflowId, 'run-again')), 'run-again', 1);
      expect(error, c.name).toBeInstanceOf(JournalError);
      expect((error as JournalError).operation).toBe('prior');
      expect((error as JournalError).index).toBe(1);
      expect((error as Error).message).toMatch(c.message);
      expect(runs, c.name).toEqual({});
      expect(await journalRows(workflowId)).toEqual(before);
    }
  }, 60_000);

  it('J16 two attempts of one batch at once: no call runs twice, and an attempt that lost the batch fails naming the other attempt', async () => {
    // Two journals of one workflow's batch (two processes recovering it), started 0–5 turns
    // of the event loop apart, under 'unknown'; no call ends before both have read the batch.
    // Fails if a call runs in both (the claim, or the writer a row expects, not checked), or
    // if both finish with results of their own (one attempt's result would be lost).
    for (let lag = 0; lag < 6; lag++) {
      for (const key of Object.keys(runs)) delete runs[key];
      const workflowId = `twice-${lag}`;
      hold = gate();
      const firstPriors: Promise<unknown>[] = [];
      const attempt = (): ToolJournal => {
        const journal = tableJournal(settings(workflowId, 'unknown'));
        return {
          open(call) {
            const entry = journal.open(call);
            if (call.index === 0) firstPriors.push(Promise.resolve(entry.prior));
            return entry;
          },
        };
      };
      const first = drain(callsOf(4), attempt(), 'unknown', 2);
      for (let t = 0; t < lag; t++) await new Promise((r) => setImmediate(r));
      const second = drain(callsOf(4), attempt(), 'unknown', 2);
      for (let t = 0; firstPriors.length < 2; t++) {
        if (t === 100_000) throw new Error('the attempts never opened call 0');
        await new Promise((r) => setImmediate(r));
      }
      await Promise.allSettled(firstPriors);
      hold.open();
      const outcomes = await Promise.all([first, second]);
      hold = undefined;
      const why = JSON.stringify(outcomes.map((o) => (o.error === undefined ? o.texts : String((o.error as Error).message))));
      for (const [key, count] of Object.entries(runs)) expect(count, `lag ${lag}: call ${key}: ${why}`).toBe(1);
      const failed = outcomes.filter((o) => o.error !== undefined);
      expect(failed.length, `lag ${lag}: ${why}`).toBeGreaterThanOrEqual(1);
      for (const f of failed) {
        expect(f.error).toBeInstanceOf(JournalError);
        expect((f.error as Error).message).toMatch(/another attempt/);
      }
      const rows = await journalRows(workflowId);
      for (const row of rows) if (row.result !== null) expect((JSON.parse(row.result) as { result: JournaledResult }).result.message.toolCallId).toBe(`toolu_${row.idx}`);
    }
  }, 60_000);
  it('J15 a tool call id or tool name with a lone surrogate (a model may send any) replays on the next attempt: the row is the call\'s', async () => {
    // PostgreSQL's text holds UTF-8, which has no lone surrogate: the driver writes U+FFFD in
    // its place. Fails if the row, read back, is taken for another call's (the workflow id
    // "reused"): a recovered batch would fail instead of replaying its journaled results.
    const workflowId = 'lone-surrogate';
    const calls: ToolCall[] = [
      { id: 'toolu_\uD800a', name: 'work', arguments: { n: 0 } },
      { id: 'toolu_b', name: 'wo\uDC00rk', arguments: { n: 1 } },
    ];
    for (const key of Object.keys(runs)) delete runs[key];
    const first = await drain(calls, tableJournal(settings(workflowId, 'unknown')), 'unknown');
    expect(first.error).toBeUndefined();
    const again = await drain(calls, tableJournal(settings(workflowId, 'unknown')), 'unknown');
    expect(again.error).toBeUndefined();
    expect(again.texts).toEqual(first.texts);
    expect(runs).toEqual({ '0': 1 });
  }, 60_000);
  it('J15 a result or tool call id longer than Node\'s longest string (540,000,000 characters): a JournalError naming the call, the text never read, nothing run, nothing overwritten', async () => {
    // Fails if the row reaches this process: the driver's parser throws "Cannot create a string
    // longer than 0x1fffffe8 characters" where nobody can catch it (the process's uncaught
    // exception), and the batch's read never settles. (PostgreSQL compresses the repeated
    // character: the row costs the server little.)
    const pool = await systemPool();
    const workflowId = 'hostile-longest';
    expect((await drain(callsOf(3), tableJournal(settings(workflowId, 'run-again')), 'run-again')).error).toBeUndefined();
    await pool.query(`UPDATE toolrun.journal SET result = replace(result, 'work 1 done', repeat('x', 540000000)) WHERE workflow_id = $1::text AND idx = 1`, [workflowId]);
    const digest = 'SELECT idx, md5(result) AS m, xmin::text AS xmin FROM toolrun.journal WHERE workflow_id = $1 AND idx >= 0 ORDER BY idx';
    const before = (await pool.query(digest, [workflowId])).rows;
    for (const key of Object.keys(runs)) delete runs[key];
    const { error } = await drain(callsOf(3), tableJournal(settings(workflowId, 'run-again')), 'run-again', 1);
    expect(error).toBeInstanceOf(JournalError);
    expect((error as JournalError).index).toBe(1);
    expect((error as Error).message).toMatch(/result for call 1 .* is over 268435456 bytes: refused/);
    expect(runs).toEqual({});
    expect((await pool.query(digest, [workflowId])).rows).toEqual(before);
    // The same for a row's tool call id: it is not the call's, and is never read.
    const idWorkflow = 'hostile-longest-id';
    expect((await drain(callsOf(3), tableJournal(settings(idWorkflow, 'run-again')), 'run-again')).error).toBeUndefined();
    await pool.query(`UPDATE toolrun.journal SET tool_call_id = repeat('y', 540000000) WHERE workflow_id = $1::text AND idx = 1`, [idWorkflow]);
    for (const key of Object.keys(runs)) delete runs[key];
    const again = await drain(callsOf(3), tableJournal(settings(idWorkflow, 'run-again')), 'run-again', 1);
    expect((again.error as JournalError).index).toBe(1);
    expect((again.error as Error).message).toMatch(/call 1 .* the workflow id was reused with other calls/);
    expect(runs).toEqual({});
  }, 120_000);
});
