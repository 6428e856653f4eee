/**
 * The journal seam (lib/core/seams/journal.ts) on a table of its own, `toolrun.journal`, in
 * DBOS's system database, reached through DBOS's own connection pool: one row per call, keyed
 * by (workflow id, scope, call index), written by a group-commit writer. Why a table and not
 * DBOS steps, and what each write is for: docs/adr/0050-journal-table-group-commit.md; how two
 * attempts of one batch are kept from running a call twice: docs/adr/0051-journal-claim.md.
 *
 * What a batch writes:
 *
 * | when | row | why |
 * | --- | --- | --- |
 * | its first `open()` | the batch row (`idx` −1), claimed for this attempt, in the same statement that reads every row of the batch | a second live attempt loses the claim and fails before running anything |
 * | a new call is handed out, its policy `'unknown'` | the call's row with no result (its start marker), before its prior resolves | at-most-once needs to know after a crash that the call may have run |
 * | `decide()` | the row's decision | nobody is asked twice |
 * | `commit()` | the row's result (and the progress kept for a replay) | the call is never run again |
 *
 * Writes queued while the writer's previous statement is in flight go to PostgreSQL together,
 * as one multi-row upsert (one statement, one transaction): calls that finish together share
 * one commit. Every write is keyed, so a workflow function DBOS executes again writes nothing
 * twice; none ever overwrites a result. A lost connection pauses the batch until PostgreSQL
 * answers again (DBOS's own `withDbRetry`, as for DBOS's writes), so a database restart is a
 * pause, not a failed run.
 *
 * Nothing here is a DBOS operation (it takes no operation number), so the workflow's DBOS
 * operations do not depend on the batch at all — except with `streamProgress`, where each
 * call has one step, issued in `open()` in call order, that writes its progress to a DBOS
 * stream.
 *
 * @module
 */
import { createHash, randomUUID } from 'node:crypto';
import { DBOS } from '@dbos-inc/dbos-sdk';
import { DBOSExecutor } from '@dbos-inc/dbos-sdk/internal/dbos-executor';
import { withDbRetry } from '@dbos-inc/dbos-sdk/internal/system_database';
import * as v from 'valibot';
import type { InterruptedCallPolicy, JournalCall, JournalEntry, JournaledDecision, JournaledResult, JournalPrior, ToolJournal } from '../core/seams/journal.ts';
import { KeptProgress, ProgressStream } from './journal.ts';

/** The part of a `pg` pool (DBOS's) the journal uses. */
interface Queryable {
  query(text: string, values?: readonly unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
}

/** How one table journal names and keys its rows. */
export interface TableJournalSettings {
  /** The workflow whose batch this is (`DBOS.workflowID`): the rows' first key. */
  readonly workflowId: string;
  /** Distinguishes the batches of one workflow (an agent's turns, an approval round). */
  readonly scope: string;
  /** Most progress values kept per call for a replay (the newest are kept). */
  readonly keepProgress: number;
  /** Also write each progress value to the DBOS stream `progressStreamKey(scope, index)`. */
  readonly streamProgress: boolean;
  /** Which calls get a start marker: those the run answers `'unknown'` when interrupted (the run's own policy). */
  readonly interruptedCalls: InterruptedCallPolicy;
  /** The database; default DBOS's system database pool. */
  readonly database?: Queryable;
}

/**
 * Statements one writer has in flight at once. Results wait for the statement in flight and
 * then go together; a start marker or a decision (each holds its call back, a marker the next
 * call's hand-out too) does not wait behind results: it goes in a second statement at once,
 * with whatever is queued. Writes queued while both are in flight share the next statement.
 */
const MAX_IN_FLIGHT = 2;
/** Most rows one statement carries; more queued rows go in the next one. */
const MAX_ROWS_PER_STATEMENT = 1000;
/**
 * A row's result or decision longer than this is refused on read (a hostile or corrupted row),
 * in bytes of UTF-8 as PostgreSQL holds it (never fewer than the text's UTF-16 units). Checked
 * by PostgreSQL, so a longer text never reaches this process: one over Node's longest string
 * (2^29 − 24 units) would throw inside the driver's parser, out of reach of any caller.
 */
const MAX_ROW_BYTES = 256 * 1024 * 1024;

const CREATE_TABLE = `
CREATE SCHEMA IF NOT EXISTS toolrun;
CREATE TABLE IF NOT EXISTS toolrun.journal (
  workflow_id text NOT NULL,
  scope text NOT NULL,
  idx integer NOT NULL,
  tool_call_id text NOT NULL,
  tool_name text NOT NULL,
  args_hash text NOT NULL,
  attempt text,
  seen text,
  decision text,
  result text,
  PRIMARY KEY (workflow_id, scope, idx)
)`;

/** A text column as a row's read selects it: NULL when over `limit` bytes (it never reaches this process; see {@link MAX_ROW_BYTES}). */
function bounded(column: string, limit: string): string {
  return `CASE WHEN octet_length(${column}) > ${limit} THEN NULL ELSE ${column} END AS ${column}`;
}

// One round trip at a batch's start: claims the batch row for this attempt — only if nobody
// took it since this statement's snapshot (`prev`), so of two attempts starting at once one
// loses — and reads every call row of the batch (the snapshot before the claim).
const LOAD_AND_CLAIM = `
WITH prev AS (SELECT attempt FROM toolrun.journal WHERE workflow_id = $1 AND scope = $2 AND idx = -1),
claim AS (
  INSERT INTO toolrun.journal AS j (workflow_id, scope, idx, tool_call_id, tool_name, args_hash, attempt)
  VALUES ($1, $2, -1, '', '', '', $3)
  ON CONFLICT (workflow_id, scope, idx) DO UPDATE SET attempt = EXCLUDED.attempt
  WHERE j.attempt IS NOT DISTINCT FROM (SELECT attempt FROM prev)
  RETURNING j.idx)
SELECT idx, ${bounded('tool_call_id', '$4')}, ${bounded('tool_name', '$4')}, ${bounded('args_hash', '$4')}, ${bounded('attempt', '$4')},
  CASE WHEN octet_length(decision) > $4 THEN NULL ELSE decision END AS decision, octet_length(decision) > $4 AS decision_too_long,
  CASE WHEN octet_length(result) > $4 THEN NULL ELSE result END AS result, octet_length(result) > $4 AS result_too_long
FROM toolrun.journal
WHERE workflow_id = $1 AND scope = $2 AND idx >= 0
UNION ALL SELECT -1, NULL, NULL, NULL, $3::text, NULL, NULL, NULL, NULL FROM claim`;

// The group write: every queued row in one statement. A row is written only while its
// attempt holds its batch's claim (a stale attempt's writes are refused), and an existing row
// only when it has no result (or this very result: a statement sent again after a lost
// connection, which may have committed), is the same call (tool call id, tool name, arguments), and was
// last written by this attempt or is as this attempt read it (`seen`: the attempt that wrote
// it, or NULL when there was no row — so a start marker never takes a row another attempt
// wrote meanwhile).
const WRITE = `
INSERT INTO toolrun.journal AS j (workflow_id, scope, idx, tool_call_id, tool_name, args_hash, attempt, decision, result, seen)
SELECT u.*
FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[])
  AS u(workflow_id, scope, idx, tool_call_id, tool_name, args_hash, attempt, decision, result, seen)
WHERE EXISTS (SELECT 1 FROM toolrun.journal b WHERE b.workflow_id = u.workflow_id AND b.scope = u.scope AND b.idx = -1 AND b.attempt = u.attempt)
ON CONFLICT (workflow_id, scope, idx) DO UPDATE SET
  attempt = EXCLUDED.attempt,
  seen = EXCLUDED.seen,
  decision = COALESCE(EXCLUDED.decision, j.decision),
  result = COALESCE(EXCLUDED.result, j.result)
WHERE (j.result IS NULL OR (j.attempt = EXCLUDED.attempt AND j.result = EXCLUDED.result)) AND j.tool_call_id = EXCLUDED.tool_call_id AND j.tool_name = EXCLUDED.tool_name AND j.args_hash = EXCLUDED.args_hash
  AND (j.attempt = EXCLUDED.attempt OR j.attempt IS NOT DISTINCT FROM EXCLUDED.seen)
RETURNING j.attempt, j.workflow_id, j.scope, j.idx`;

/** One row write waiting for the writer. */
interface RowWrite {
  readonly workflowId: string;
  readonly scope: string;
  readonly idx: number;
  readonly toolCallId: string;
  readonly toolName: string;
  readonly argsHash: string;
  readonly attempt: string;
  /** The attempt that wrote the row as this attempt read it; `null`: there was no row. */
  readonly seen: string | null;
  decision: string | null;
  result: string | null;
  readonly waiters: Array<{ resolve: () => void; reject: (error: Error) => void }>;
}

/** A row write's identity: one attempt's write of one row. */
function keyOf(attempt: string, workflowId: string, scope: string, idx: number): string {
  return `${attempt}\u0000${workflowId}\u0000${scope}\u0000${idx}`;
}

/** A database's table (created once) and its writer. */
interface Store {
  readonly database: Queryable;
  readonly ready: Promise<void>;
  readonly writer: Writer;
}

const stores = new WeakMap<object, Store>();

/** DBOS's system database pool (the journal's table lives beside DBOS's own). */
function dbosPool(): Queryable {
  const pool = (DBOSExecutor.globalInstance as { systemDatabase?: { pool?: unknown } } | undefined)?.systemDatabase?.pool;
  if (typeof (pool as Queryable | undefined)?.query !== 'function') {
    throw new TypeError("toolrun/dbos: DBOS's system database is not available (is DBOS launched?): the journal's table lives there");
  }
  return pool as Queryable;
}

function storeOf(database: Queryable): Store {
  let store = stores.get(database);
  if (store === undefined) {
    const ready = createTable(database);
    // A failure is reported to every journal that waits for it; the next journal tries again.
    ready.catch(() => stores.delete(database));
    store = { database, ready, writer: new Writer(database) };
    stores.set(database, store);
  }
  return store;
}

async function createTable(database: Queryable): Promise<void> {
  try {
    await withDbRetry(() => database.query(CREATE_TABLE));
  } catch (error) {
    // Two processes creating it at once: one of them gets a unique violation on the catalog; the table is there.
    if ((error as { code?: string }).code !== '23505' && (error as { code?: string }).code !== '42P07' && (error as { code?: string }).code !== '42P06') {
      throw new Error(`toolrun/dbos: could not create the journal's table toolrun.journal: ${(error as Error).message}`, { cause: error });
    }
    await database.query(CREATE_TABLE);
  }
}

/**
 * The group-commit writer of one database: rows queued while its statements are in flight are
 * sent together as the next one (up to {@link MAX_ROWS_PER_STATEMENT}); rows queued in one
 * turn of the event loop (calls released together) go in one statement too.
 */
class Writer {
  readonly #database: Queryable;
  #queue = new Map<string, RowWrite>();
  /** Statements sent and not settled (at most {@link MAX_IN_FLIGHT}). */
  #inFlight = 0;
  #scheduled = false;

  constructor(database: Queryable) {
    this.#database = database;
  }

  /** Queues a row write; resolves once it is committed, rejects with why it was refused. */
  write(row: Omit<RowWrite, 'waiters'>): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      // Writes of one row queued together are merged: one statement may not touch a row twice.
      const key = keyOf(row.attempt, row.workflowId, row.scope, row.idx);
      const queued = this.#queue.get(key);
      if (queued === undefined) this.#queue.set(key, { ...row, waiters: [{ resolve, reject }] });
      else {
        if (row.decision !== null) queued.decision = row.decision;
        if (row.result !== null) queued.result = row.result;
        queued.waiters.push({ resolve, reject });
      }
      this.#schedule();
    });
  }

  /** Whether a statement may be sent now: none in flight, or one and a queued write holds a call back. */
  #maySend(): boolean {
    if (this.#queue.size === 0 || this.#inFlight === MAX_IN_FLIGHT) return false;
    if (this.#inFlight === 0) return true;
    for (const row of this.#queue.values()) if (row.result === null) return true;
    return false;
  }

  #schedule(): void {
    if (this.#scheduled || !this.#maySend()) return;
    this.#scheduled = true;
    // After this turn of the event loop: a call's result and the next call's start marker,
    // queued one after the other as a sequential batch goes on, share one statement.
    setImmediate(() => {
      this.#scheduled = false;
      if (!this.#maySend()) return;
      const batch: RowWrite[] = [];
      for (const [key, row] of this.#queue) {
        if (batch.length === MAX_ROWS_PER_STATEMENT) break;
        batch.push(row);
        this.#queue.delete(key);
      }
      this.#inFlight++;
      void this.#send(batch).finally(() => {
        this.#inFlight--;
        this.#schedule();
      });
      this.#schedule();
    });
  }

  async #send(batch: readonly RowWrite[]): Promise<void> {
    let written: Set<string>;
    try {
      // As DBOS does with its own writes: a lost connection pauses the batch until PostgreSQL is back.
      const { rows } = await withDbRetry(() => this.#database.query(WRITE, [
        batch.map((r) => r.workflowId),
        batch.map((r) => r.scope),
        batch.map((r) => r.idx),
        batch.map((r) => r.toolCallId),
        batch.map((r) => r.toolName),
        batch.map((r) => r.argsHash),
        batch.map((r) => r.attempt),
        batch.map((r) => r.decision),
        batch.map((r) => r.result),
        batch.map((r) => r.seen),
      ]));
      // Keyed by attempt too: two attempts' writes of one row may share a statement (one refused).
      written = new Set(rows.map((r) => keyOf(String(r.attempt), String(r.workflow_id), String(r.scope), Number(r.idx))));
    } catch (error) {
      // One statement is all or nothing: a row PostgreSQL refuses must fail its own call only.
      if (batch.length > 1) {
        for (const row of batch) await this.#send([row]);
        return;
      }
      const failure = new Error(`toolrun/dbos: writing the journal's row for call ${batch[0]!.idx} failed: ${(error as Error).message}`, { cause: error });
      for (const w of batch[0]!.waiters) w.reject(failure);
      return;
    }
    for (const row of batch) {
      if (written.has(keyOf(row.attempt, row.workflowId, row.scope, row.idx))) for (const w of row.waiters) w.resolve();
      else {
        const failure = await this.#explain(row);
        for (const w of row.waiters) w.reject(failure);
      }
    }
  }

  /** Why a row was not written (read back; only on this failure path). */
  async #explain(row: RowWrite): Promise<Error> {
    const what = `call ${row.idx} of batch ${JSON.stringify(row.scope)} of workflow ${JSON.stringify(row.workflowId)}`;
    try {
      const { rows } = await this.#database.query(
        `SELECT idx, ${bounded('tool_call_id', '$4')}, ${bounded('tool_name', '$4')}, ${bounded('args_hash', '$4')}, ${bounded('attempt', '$4')}, result IS NOT NULL AS ended FROM toolrun.journal WHERE workflow_id = $1 AND scope = $2 AND idx IN (-1, $3)`,
        [row.workflowId, row.scope, row.idx, MAX_ROW_BYTES],
      );
      const claim = rows.find((r) => Number(r.idx) === -1);
      const existing = rows.find((r) => Number(r.idx) === row.idx);
      if (claim?.attempt !== row.attempt) {
        return new Error(`toolrun/dbos: another attempt of the workflow took the batch over (two processes ran it at once), so this attempt's result for ${what} was not journaled; this attempt must stop`);
      }
      if (existing !== undefined && (existing.tool_call_id !== row.toolCallId || existing.tool_name !== row.toolName || existing.args_hash !== row.argsHash)) {
        return reusedError(what, existing, row);
      }
      if (existing !== undefined && existing.attempt !== row.attempt && existing.attempt !== row.seen && existing.ended !== true) {
        return new Error(`toolrun/dbos: another attempt of the workflow wrote ${what} after this attempt read the batch (two processes ran it at once); this attempt must stop, and runs nothing more`);
      }
      if (existing?.ended === true) return new Error(`toolrun/dbos: ${what} already has a journaled result (written by another attempt); it was not overwritten`);
      return new Error(`toolrun/dbos: the journal's row for ${what} was not written, for no reason the journal can see`);
    } catch (error) {
      return new Error(`toolrun/dbos: the journal's row for ${what} was not written, and reading why failed: ${(error as Error).message}`, { cause: error });
    }
  }
}

function reusedError(what: string, row: Record<string, unknown>, call: { toolCallId: string; toolName: string }): Error {
  return new Error(
    `toolrun/dbos: the journal holds ${what} as tool ${JSON.stringify(String(row.tool_name).slice(0, 100))} (id ${JSON.stringify(String(row.tool_call_id).slice(0, 100))}), ` +
      `but this run's call is tool ${JSON.stringify(call.toolName.slice(0, 100))} (id ${JSON.stringify(call.toolCallId.slice(0, 100))}) or has other arguments: ` +
      'the workflow id was reused with other calls. Nothing was run and nothing was overwritten; run other calls under a workflow id (or scope) of their own.',
  );
}

/** What a row's `result` holds: the finalized result and the progress kept for a replay. */
const ResultRecord = v.object({
  result: v.looseObject({
    message: v.looseObject({ role: v.literal('tool'), toolCallId: v.string(), toolName: v.string(), content: v.array(v.unknown()), isError: v.boolean() }),
    outcome: v.picklist(['ok', 'error', 'rejected', 'not_run', 'interrupted', 'abandoned', 'timed_out']),
    terminate: v.optional(v.boolean()),
  }),
  progress: v.optional(v.array(v.unknown())),
  progressDropped: v.optional(v.number()),
});
const Decision = v.object({ approved: v.boolean(), reason: v.optional(v.string()), always: v.optional(v.boolean()) });

/** A row as read at the batch's start (untrusted until checked). */
interface ReadRow {
  readonly tool_call_id: unknown;
  readonly tool_name: unknown;
  readonly args_hash: unknown;
  readonly attempt: unknown;
  readonly decision: unknown;
  readonly result: unknown;
  /** True when PostgreSQL left the column out: over {@link MAX_ROW_BYTES}. */
  readonly decision_too_long?: unknown;
  readonly result_too_long?: unknown;
}

/** A stable hash of a call's raw arguments (the same call journals the same hash on every attempt). */
function argumentsHash(args: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(args) ?? 'undefined';
  } catch {
    text = `unserializable ${typeof args}`;
  }
  return createHash('sha256').update(text).digest('base64url');
}

/** Parses a row's JSON text by `schema`; a clear error naming the column otherwise. */
function parseColumn<S extends v.GenericSchema>(schema: S, text: unknown, column: string, what: string, tooLong: unknown): v.InferOutput<S> {
  if (tooLong === true) throw new Error(`toolrun/dbos: the journal's ${column} for ${what} is over ${MAX_ROW_BYTES} bytes: refused`);
  if (typeof text !== 'string') throw new Error(`toolrun/dbos: the journal's ${column} for ${what} is ${text === null ? 'null' : typeof text}, not JSON text`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`toolrun/dbos: the journal's ${column} for ${what} is not JSON (a truncated or altered row): ${(error as Error).message}`);
  }
  const parsed = v.safeParse(schema, value);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const path = issue.path?.map((p) => String(p.key)).join('.') ?? '';
    throw new Error(`toolrun/dbos: the journal's ${column} for ${what} is malformed${path === '' ? '' : ` at ${path}`}: ${issue.message}`);
  }
  return parsed.output;
}

/** A NUL, or a UTF-16 surrogate that is not half of a pair. */
const NOT_IN_TEXT = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * A tool call id or tool name as a text column: PostgreSQL's text holds no NUL character and,
 * being UTF-8, no lone surrogate (the driver would write U+FFFD for it, so the row read back
 * would not be the call's), so either (a model's id may have any) is kept as U+FFFD, the same
 * on every attempt.
 */
function columnText(text: string): string {
  NOT_IN_TEXT.lastIndex = 0;
  return NOT_IN_TEXT.test(text) ? text.replace(NOT_IN_TEXT, '\uFFFD') : text;
}

/**
 * A journal whose entries are rows of `toolrun.journal` (see the module comment). Made inside
 * a DBOS workflow (its id keys the rows); reads and claims the batch at the first `open()`.
 */
export function tableJournal(settings: TableJournalSettings): ToolJournal {
  const attempt = randomUUID();
  let loaded: Promise<Map<number, ReadRow>> | undefined;
  const load = (): Promise<Map<number, ReadRow>> =>
    (loaded ??= (async () => {
      const store = storeOf(settings.database ?? dbosPool());
      await store.ready;
      // Sent again after a lost connection, the claim finds itself (the snapshot sees it) and holds.
      const { rows } = await withDbRetry(() => store.database.query(LOAD_AND_CLAIM, [settings.workflowId, settings.scope, attempt, MAX_ROW_BYTES]));
      const byIndex = new Map<number, ReadRow>();
      let claimed = false;
      for (const row of rows) {
        const idx = Number(row.idx);
        if (idx === -1) claimed = row.attempt === attempt;
        else byIndex.set(idx, row as unknown as ReadRow);
      }
      if (!claimed) {
        throw new Error(
          `toolrun/dbos: another attempt of workflow ${JSON.stringify(settings.workflowId)} claimed batch ${JSON.stringify(settings.scope)} at the same moment (two processes recovering it at once); this attempt runs none of its calls`,
        );
      }
      return byIndex;
    })());
  const writer = (): Writer => storeOf(settings.database ?? dbosPool()).writer;
  return {
    open(call) {
      const first = loaded === undefined;
      const rows = load();
      if (first) rows.catch(() => undefined);
      return openEntry(call, settings, attempt, rows, writer);
    },
  };
}

function policyOf(policy: InterruptedCallPolicy, call: JournalCall): 'unknown' | 'run-again' {
  if (typeof policy !== 'function') return policy;
  try {
    return policy(call) === 'run-again' ? 'run-again' : 'unknown';
  } catch {
    // The run itself answers such a call 'unknown' (with a warning): the marker it needs is written.
    return 'unknown';
  }
}

function openEntry(call: JournalCall, settings: TableJournalSettings, attempt: string, rows: Promise<Map<number, ReadRow>>, writer: () => Writer): JournalEntry {
  const index = call.index;
  const what = `call ${index} of batch ${JSON.stringify(settings.scope)} of workflow ${JSON.stringify(settings.workflowId)}`;
  const argsHash = argumentsHash(call.arguments);
  const toolCallId = columnText(call.toolCallId);
  const toolName = columnText(call.toolName);
  const identity = { workflowId: settings.workflowId, scope: settings.scope, idx: index, toolCallId, toolName, argsHash, attempt, seen: null as string | null };
  const progress = new KeptProgress(settings.keepProgress);
  let decided: Promise<void> | undefined;
  let committed = false;

  // With streamProgress: one DBOS step per call, issued now (call order), writing the values
  // to the stream until the call's commit.
  const progressStream = settings.streamProgress ? new ProgressStream(settings.scope, index) : undefined;
  const stream = progressStream === undefined ? undefined : DBOS.runStep(() => progressStream.write(), { name: `toolrun:${settings.scope}:${index}:progress` });
  stream?.catch(() => undefined);

  const prior: Promise<JournalPrior> = rows.then(async (byIndex): Promise<JournalPrior> => {
    const row = byIndex.get(index);
    // The row is read once: a long batch does not keep every call's journaled result twice.
    byIndex.delete(index);
    if (row === undefined) {
      if (policyOf(settings.interruptedCalls, call) === 'unknown') await writer().write({ ...identity, decision: null, result: null });
      return { state: 'new' };
    }
    if (row.tool_call_id !== toolCallId || row.tool_name !== toolName || row.args_hash !== argsHash) throw reusedError(what, row as unknown as Record<string, unknown>, call);
    identity.seen = typeof row.attempt === 'string' ? row.attempt : null;
    const decision = row.decision === null && row.decision_too_long !== true ? undefined : (parseColumn(Decision, row.decision, 'decision', what, row.decision_too_long) as JournaledDecision);
    const decisionField = decision === undefined ? {} : { decision };
    if (row.result === null && row.result_too_long !== true) return { state: 'started', ...decisionField };
    const record = parseColumn(ResultRecord, row.result, 'result', what, row.result_too_long);
    // The row's columns were checked; its result is the call's too (an edited row replays nothing else).
    if (record.result.message.toolCallId !== call.toolCallId || record.result.message.toolName !== call.toolName) throw reusedError(what, { tool_name: record.result.message.toolName, tool_call_id: record.result.message.toolCallId }, call);
    return { state: 'ended', result: record.result as unknown as JournaledResult, ...decisionField, ...(record.progress === undefined ? {} : { progress: record.progress }) };
  });

  return {
    prior,
    idempotencyKey: `${settings.workflowId}:${settings.scope}:${index}`,
    progress(value) {
      if (committed) return;
      progress.keep(value);
      progressStream?.push(value);
    },
    decide(d) {
      decided ??= writer().write({
        ...identity,
        decision: JSON.stringify({ approved: d.approved === true, ...(typeof d.reason === 'string' ? { reason: d.reason } : {}), ...(d.always === true ? { always: true } : {}) }),
        result: null,
      });
      return decided;
    },
    async commit(r) {
      if (committed) throw new Error(`toolrun/dbos: ${what} was committed twice`);
      committed = true;
      progressStream?.close();
      const text = JSON.stringify({
        result: r,
        ...progress.fields(),
      });
      // A decision still being written goes first (or with it, merged into one row write).
      await Promise.all([writer().write({ ...identity, decision: null, result: text }), decided, stream]);
    },
  };
}
