/**
 * The journal of queue mode on DBOS Transact: {@link queueJournal}, the orchestrator's, and
 * {@link stepJournal}, the one a queued call's own workflow runs its single call with — one
 * call's entry as three DBOS steps, all issued synchronously in `open()`, so the operation
 * sequence is a function of call order alone (docs/adr/0024-dbos.md). A
 * batch run in the process journals to a table instead, one row per call with group commit
 * (table-journal.ts, docs/adr/0050-journal-table-group-commit.md); a queued call's workflow
 * has one call, so there is nothing to group, and the crash trials read its step names.
 *
 * DBOS numbers a workflow's operations (steps, child workflows, send/recv, events) in the
 * order they are issued, and on replay matches its journal by that number, checking only
 * the operation's name. `DBOS.runStep` takes its number synchronously, before its first
 * await (dbos-executor.js, `callStepFunction`: "advance the function ID before any awaits"),
 * and steps of one workflow may run concurrently. So call *i*'s entry issues, when it is
 * opened (calls are opened in call order):
 *
 * | # | step name | its function (run only when the journal has no result for it) | resolves |
 * | --- | --- | --- | --- |
 * | n | `toolrun:<scope>:<i>:started` | returns this attempt's random nonce | at once |
 * | n+1 | `toolrun:<scope>:<i>:decision` | waits for `decide()` (or `commit()`: no decision) | when decided |
 * | n+2 | `toolrun:<scope>:<i>:result` | waits for `commit()`; writes progress to a DBOS stream meanwhile | when committed |
 *
 * A step whose function is not run returns the value an earlier attempt recorded. That
 * gives `prior`: the started step returned another attempt's nonce → an earlier attempt
 * began the call; then the result step either returned a recorded value without running
 * its function (→ `'ended'`) or ran it (→ `'started'`, with the decision if that step was
 * recorded). The call's index is in every step name, so a journal read in another order
 * fails with DBOS's `DBOSUnexpectedStepError` instead of handing a call another's result.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { DBOS } from '@dbos-inc/dbos-sdk';
import type { JournalCall, JournalEntry, JournaledDecision, JournaledResult, JournalPrior, ToolJournal } from '../core/seams/journal.ts';
import type { ToolCall } from '../core/tool/tool.ts';

/** What the `result` step records: the finalized result and the progress kept for a replay. */
interface ResultRecord {
  readonly result: JournaledResult;
  readonly progress?: readonly unknown[];
  /** Set when more than {@link JournalSettings.keepProgress} values were yielded: the oldest were dropped. */
  readonly progressDropped?: number;
}

/** How one journal names and keys its entries. */
export interface JournalSettings {
  /** Distinguishes the batches of one workflow (an agent's turns): part of every step name and key. */
  readonly scope: string;
  /** The base of every idempotency key: the batch's workflow id. */
  readonly keyBase: string;
  /** Added to a call's index in step names and keys (a queued call's own one-call batch). */
  readonly indexOffset: number;
  /** Most progress values kept per call for a replay (the newest are kept). */
  readonly keepProgress: number;
  /** Also write each progress value to the DBOS stream {@link progressStreamKey} (read live from any process). */
  readonly streamProgress: boolean;
}

/**
 * The DBOS stream key a call's progress is written to (with `streamProgress`):
 * `toolrun.progress:<scope>:<index>`. The stream is closed when the call's result is journaled;
 * a call run again after a crash appends to it (at-least-once).
 *
 * @example
 * ```ts
 * for await (const value of DBOS.readStream(workflowId, progressStreamKey('batch', 2))) show(value);
 * ```
 */
export function progressStreamKey(scope: string, index: number): string {
  return `toolrun.progress:${scope}:${index}`;
}

/**
 * The progress a call's entry keeps for a replay: the newest `limit` values, and how many older
 * ones were dropped — the `progress` and `progressDropped` fields of what the entry commits.
 */
export class KeptProgress {
  readonly #limit: number;
  readonly #values: unknown[] = [];
  #dropped = 0;

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Keeps `value`, dropping the oldest kept one when over the limit. */
  keep(value: unknown): void {
    this.#values.push(value);
    if (this.#values.length > this.#limit) {
      this.#values.shift();
      this.#dropped++;
    }
  }

  /** The fields of a committed record: none for what was not kept or not dropped. */
  fields(): { progress?: unknown[]; progressDropped?: number } {
    return { ...(this.#values.length === 0 ? {} : { progress: [...this.#values] }), ...(this.#dropped === 0 ? {} : { progressDropped: this.#dropped }) };
  }
}

/**
 * A call's progress on its way to the DBOS stream {@link progressStreamKey}`(scope, index)`:
 * `push` queues a value, `write()` — run inside a step, since a stream written from a step takes
 * no operation number and one written from the workflow would — writes them until `close()`,
 * then closes the stream.
 */
export class ProgressStream {
  readonly #key: string;
  readonly #pending: unknown[] = [];
  #closed = false;
  #wake: (() => void) | undefined;

  constructor(scope: string, index: number) {
    this.#key = progressStreamKey(scope, index);
  }

  /** Queues `value` for the stream (`undefined` is not a stream value: skipped). */
  push(value: unknown): void {
    if (value === undefined) return;
    this.#pending.push(value);
    this.#wake?.();
  }

  /** No more values: `write()` ends once the queued ones are written. */
  close(): void {
    this.#closed = true;
    this.#wake?.();
  }

  /** Writes the queued values as they come, until closed; then closes the stream. */
  async write(): Promise<void> {
    for (;;) {
      const value = this.#pending.shift();
      if (value !== undefined) await DBOS.writeStream(this.#key, value);
      else if (this.#closed) break;
      else await new Promise<void>((r) => (this.#wake = r));
    }
    await DBOS.closeStream(this.#key);
  }
}

/** A promise with its resolve function outside. */
function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** A journal whose entries are DBOS steps of the calling workflow (must be called inside one). */
export function stepJournal(settings: JournalSettings): ToolJournal {
  if (!DBOS.isInWorkflow()) {
    throw new TypeError('toolrun/dbos: a journal can only be made inside a DBOS workflow function (registered with DBOS.registerWorkflow), not in a step or outside');
  }
  return { open: (call) => openEntry(call, settings) };
}

function openEntry(call: JournalCall, settings: JournalSettings): JournalEntry {
  const index = call.index + settings.indexOffset;
  const name = `toolrun:${settings.scope}:${index}`;
  const nonce = randomUUID();
  const decision = deferred<JournaledDecision | null>();
  const decisionRan = deferred<void>();
  const result = deferred<ResultRecord>();
  const resultRan = deferred<void>();
  const progress = new KeptProgress(settings.keepProgress);
  let decided = false;
  let committed = false;
  // Progress for the stream, written by the result step while the call runs.
  const stream = settings.streamProgress ? new ProgressStream(settings.scope, index) : undefined;

  // The three operations, issued now, in this order, before anything is awaited.
  const started = DBOS.runStep(async () => nonce, { name: `${name}:started` });
  const decisionStep = DBOS.runStep(
    async () => {
      decisionRan.resolve();
      return await decision.promise;
    },
    { name: `${name}:decision` },
  );
  const resultStep = DBOS.runStep(
    async (): Promise<ResultRecord> => {
      resultRan.resolve();
      await stream?.write();
      return await result.promise;
    },
    { name: `${name}:result` },
  );
  // Each is awaited below or by commit/decide; until then a rejection (the workflow was
  // cancelled, the database went away) must not surface as unhandled.
  for (const p of [started, decisionStep, resultStep]) p.catch(() => undefined);

  const recordedDecision = Promise.race([
    decisionStep.then((d) => ({ recorded: d ?? undefined })),
    decisionRan.promise.then(() => undefined),
  ]);
  const prior: Promise<JournalPrior> = started.then(async (startedBy): Promise<JournalPrior> => {
    if (startedBy === nonce) return { state: 'new' };
    const ended = await Promise.race([resultStep, resultRan.promise.then(() => undefined)]);
    const earlier = await recordedDecision;
    const decisionField = earlier?.recorded === undefined ? {} : { decision: earlier.recorded };
    if (ended === undefined) return { state: 'started', ...decisionField };
    return { state: 'ended', result: ended.result, ...decisionField, ...(ended.progress === undefined ? {} : { progress: ended.progress }) };
  });

  return {
    prior,
    idempotencyKey: `${settings.keyBase}:${settings.scope}:${index}`,
    progress(value) {
      if (committed) return;
      progress.keep(value);
      stream?.push(value);
    },
    decide(d) {
      if (!decided) {
        decided = true;
        decision.resolve({ approved: d.approved, ...(d.reason === undefined ? {} : { reason: d.reason }) });
      }
      return decisionStep.then(() => undefined);
    },
    async commit(r) {
      if (committed) throw new Error(`toolrun/dbos: call ${index} was committed twice`);
      committed = true;
      // The decision step is recorded before the result, so an ended call always has both.
      if (!decided) decision.resolve(null);
      await decisionStep;
      result.resolve({
        result: r,
        ...progress.fields(),
      });
      stream?.close();
      await resultStep;
    },
  };
}

/**
 * The journal of a queued call's own workflow (queue mode, without `streamProgress`): one
 * step per call, `toolrun:<scope>:<i>:started`, which returns this attempt's nonce as
 * {@link stepJournal}'s does. The call's result is not a step of its own: it is the call
 * workflow's output, which DBOS records when the workflow returns and which the orchestrator
 * reads. A workflow that returned is never run again, so a later attempt of the call finds
 * its start and no result: `'started'`, and `interruptedCalls` decides. A `decision` step
 * would have nothing to record: a queued call that needs approval fails its workflow. One
 * DBOS operation per call instead of three (docs/adr/0055-queue-mode-workers.md).
 */
export function queuedCallJournal(settings: Pick<JournalSettings, 'scope' | 'keyBase' | 'indexOffset'>): ToolJournal {
  if (!DBOS.isInWorkflow()) throw new TypeError('toolrun/dbos: a journal can only be made inside a DBOS workflow function');
  return {
    open(call: JournalCall): JournalEntry {
      const index = call.index + settings.indexOffset;
      const nonce = randomUUID();
      const started = DBOS.runStep(async () => nonce, { name: `toolrun:${settings.scope}:${index}:started` });
      return {
        prior: started.then((by): JournalPrior => (by === nonce ? { state: 'new' } : { state: 'started' })),
        idempotencyKey: `${settings.keyBase}:${settings.scope}:${index}`,
        decide: () => undefined,
        commit: () => undefined,
      };
    },
  };
}

/** A queued call's workflow: runs one call of batch `keyBase` (its index in the batch: `index`) and returns its finalized result. */
export type CallWorkflow = (call: ToolCall, index: number, keyBase: string) => Promise<QueuedCallResult>;

/** The queued-call workflow of each durable batch registered in this process, by batch name. */
export const queuedCallWorkflows = new Map<string, CallWorkflow>();

/** What a queued call's workflow returns: its finalized result and the progress kept. */
export interface QueuedCallResult {
  result: JournaledResult;
  progress?: unknown[];
}

/**
 * How often a result step polls for the call it waits on, in ms. With DBOS's default (1 s),
 * each time the orchestrator catches up with the workers costs up to a second of waiting for
 * a call that has already ended; this costs one row read per poll, for the one call the batch
 * waits on (docs/adr/0055-queue-mode-workers.md).
 */
const RESULT_POLL_MS = 50;
/**
 * Most results of later calls one result step reads along with its own: the calls after it
 * that have already ended, in call order, each then answered without an operation of its
 * own (docs/adr/0055-queue-mode-workers.md).
 */
const READ_AHEAD = 64;

/**
 * The orchestrator's journal in queue mode. When it is made, it starts every call of the
 * batch as its own workflow on the queue (child workflows with deterministic ids
 * `<workflowId>:call:<index>`, so a re-run after a crash attaches to them instead of
 * enqueueing again), all at once and in call order. Every call is executed and journaled by
 * a worker; here every call is answered from the journal: call *i*'s entry waits for that
 * workflow's result in a step (`toolrun:queue:<i>:result`, issued in `open()`), which also
 * returns the results of the calls right after *i* that have already ended (up to
 * {@link READ_AHEAD}); those calls' entries take their result from it and issue nothing. The
 * steps' recorded outputs decide which calls issue a step, so a replay issues the same
 * operations (docs/adr/0055-queue-mode-workers.md).
 *
 * Why every call is enqueued up front and not in `open()`: the run hands call *i*+1 out only
 * once call *i*'s prior is known (P1, J2), and here a prior is the call's result, so
 * enqueueing in `open()` would run the calls one at a time — and deadlock a batch whose calls
 * wait for each other (spec/dbos/queue.spec.ts, "J-dbos-queue-parallel").
 */
export function queueJournal(
  callWorkflow: CallWorkflow,
  queueName: string,
  workflowId: string,
  round: number,
  calls: readonly ToolCall[],
): ToolJournal {
  const idOf = (index: number): string => `${workflowId}:call:${index}${round === 0 ? '' : `:r${round}`}`;
  // One operation per call, taken synchronously in this loop (DBOS reserves a child
  // workflow's operation number before its first await): the same sequence on every attempt.
  const started = calls.map((call, index) => {
    const start = DBOS.startWorkflow(callWorkflow, { workflowID: idOf(index), queueName })(call, index, workflowId);
    start.catch(() => undefined);
    return start;
  });
  /** Results read ahead by an earlier call's step, by call index, until that call is opened. */
  const ahead = new Map<number, QueuedCallResult>();
  return {
    open(call: JournalCall): JournalEntry {
      const id = idOf(call.index);
      const start = started[call.index];
      if (start === undefined) throw new RangeError(`toolrun/dbos: queue journal asked for call ${call.index}, but the batch has ${calls.length} calls`);
      let result: Promise<QueuedCallResult | null>;
      const read = ahead.get(call.index);
      if (read !== undefined) {
        ahead.delete(call.index);
        result = Promise.resolve(read);
      } else {
        const step = DBOS.runStep(
          async (): Promise<Array<QueuedCallResult | null>> => {
            await start;
            const own = await DBOS.getResult<QueuedCallResult>(id, { pollingIntervalMs: RESULT_POLL_MS });
            const later: string[] = [];
            for (let i = call.index + 1; i < Math.min(calls.length, call.index + 1 + READ_AHEAD); i++) later.push(idOf(i));
            if (own === null || later.length === 0) return [own];
            const ended = await DBOS.listWorkflows({ workflowIDs: later, status: 'SUCCESS', loadInput: false, loadOutput: true });
            const outputs = new Map(ended.map((w) => [w.workflowID, w.output as QueuedCallResult]));
            const results: Array<QueuedCallResult | null> = [own];
            // Only the calls right after this one: the next call not ended yet issues its own step.
            for (const laterId of later) {
              const output = outputs.get(laterId);
              if (output === undefined || output === null) break;
              results.push(output);
            }
            return results;
          },
          { name: `toolrun:queue:${call.index}:result` },
        );
        result = step.then((results) => {
          results.slice(1).forEach((r, n) => r !== null && ahead.set(call.index + 1 + n, r));
          return results[0] ?? null;
        });
      }
      const prior: Promise<JournalPrior> = result.then((r) => {
        if (r === null) throw new Error(`toolrun/dbos: queued call ${call.index} (workflow ${id}) returned no result`);
        return { state: 'ended', result: r.result, ...(r.progress === undefined ? {} : { progress: r.progress }) };
      });
      return {
        prior,
        idempotencyKey: `${workflowId}:batch:${call.index}`,
        decide: () => undefined,
        commit: () => undefined,
      };
    },
  };
}
