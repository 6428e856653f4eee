/**
 * `toolrun/dbos`: durable batches and agent runs on DBOS Transact and PostgreSQL (contract J).
 *
 * - {@link dbosJournal} / {@link dbosAgentJournal}: the journal of a batch (an agent run) run
 *   inside a DBOS workflow of your own: one row per call in the table `toolrun.journal` of
 *   DBOS's system database, holding its start marker, approval decision and finalized result,
 *   keyed by the call's index; calls that finish together share one commit
 *   (docs/adr/0050-journal-table-group-commit.md). An agent's model replies are DBOS steps.
 * - {@link registerDurableBatch}: registers a workflow that runs `runTools` with that journal,
 *   in this process or, with `queueName`, with each call run by a worker process through a
 *   DBOS queue; a batch paused for approval waits for {@link sendApproval} through DBOS
 *   messages and resumes in whichever process recovers the workflow.
 *
 * `@dbos-inc/dbos-sdk` is an optional peer dependency: `toolrun` and its other entries never
 * load it. How the seam maps onto DBOS, and why: docs/adr/0024-dbos.md.
 *
 * @module
 */
import { DBOS, type DBOSClient, type WorkflowHandle } from '@dbos-inc/dbos-sdk';
import type { CallOutcome } from '../core/tool/tool.ts';
import type { ToolBatch, ToolEvent } from '../core/run/events.ts';
import type { AgentJournal, InterruptedCallPolicy, JournaledResult, JournalValueEntry, ToolJournal } from '../core/seams/journal.ts';
import type { RunToolsOptions } from '../core/run/options.ts';
import { runTools } from '../core/run/run-tools.ts';
import type { Tool, ToolCall, ToolResultMessage } from '../core/tool/tool.ts';
import type { ToolApprovalRequest, ToolApprovalResponse } from '../core/approval/approval.ts';
import { queueJournal, queuedCallJournal, queuedCallWorkflows, stepJournal, type QueuedCallResult } from './journal.ts';
import { tableJournal } from './table-journal.ts';
import { emitWarning } from '../core/values/platform.ts';
import { ApprovalNotPendingError, configFingerprint, DurableConfigMismatchError, KEEP_DROPPED, matchDecisions, pendingOf, refusedOf, type DroppedApproval } from './approvals.ts';

export { progressStreamKey } from './journal.ts';
export { ApprovalNotPendingError, DurableConfigMismatchError, type DroppedApproval, type RefusedApproval } from './approvals.ts';

/** @default 1000 */
const DEFAULT_KEEP_PROGRESS = 1000;

/** Options of {@link dbosJournal}. */
export interface DbosJournalOptions {
  /**
   * Names this batch among the batches of one workflow (part of every step name and
   * idempotency key): give each batch of a workflow its own.
   * @default 'batch'
   */
  scope?: string;
  /**
   * Most progress values kept per call in the journal, replayed when the call is replayed
   * (the newest are kept).
   * @default 1000
   */
  keepProgress?: number;
  /**
   * Also write each progress value to the DBOS stream `progressStreamKey(scope, index)` of
   * the workflow, which any process reads live with `DBOS.readStream(workflowId, key)` or a
   * `DBOSClient`. One database write per value, and one DBOS step per call: off by default.
   * @default false
   */
  streamProgress?: boolean;
  /**
   * The `interruptedCalls` policy of the `runTools` (or `runAgent`) this journal is given to:
   * pass the same one. A call the policy answers `'unknown'` after a crash needs a start
   * marker, written (and committed) before the call runs — a second write per call; a call
   * it runs again (`'run-again'`, at-least-once) needs none, so it costs one write, its
   * result. A journal told `'run-again'` for a run whose policy is `'unknown'` reports an
   * interrupted call as new, and the run runs it again.
   * @default 'unknown'
   */
  interruptedCalls?: InterruptedCallPolicy;
}

/**
 * The journal of a batch run inside the calling DBOS workflow: pass it as `runTools`'s
 * `journal`. Each call's entry is one row of `toolrun.journal` (in DBOS's system database,
 * created on first use), keyed by (workflow id, `scope`, call index): its result is written
 * when the run commits it, together in one transaction with every other result (and start
 * marker, and decision) queued while the previous write was in flight. The batch's first
 * `open()` reads every row of the batch in one query and claims the batch for this attempt.
 * Its idempotency key is `<workflowId>:<scope>:<index>`. The journal takes no DBOS operation
 * number (except one step per call with `streamProgress`).
 *
 * A row is checked when read: a row for the same index with another tool call id, tool name
 * or arguments (the workflow id reused with other calls), a row that is not JSON or not a
 * result, or a batch another process claimed at the same moment fails the run with a
 * `JournalError` (contract J9) — nothing is run and nothing is overwritten.
 *
 * @throws TypeError when called outside a DBOS workflow function (in a step, or with no
 *   workflow), or when `scope` is not 1–64 letters, digits, `_`, `.` or `-`, or
 *   `keepProgress` is not a non-negative integer, or `interruptedCalls` is not a policy.
 * @example
 * ```ts
 * const batch = DBOS.registerWorkflow(async (calls: ToolCall[]) => {
 *   const run = runTools(calls, { tools, journal: dbosJournal({ interruptedCalls: 'run-again' }), interruptedCalls: 'run-again' });
 *   for (;;) { const next = await run.next(); if (next.done) return next.value.messages; }
 * }, { name: 'tool-batch' });
 * ```
 */
export function dbosJournal(options: DbosJournalOptions = {}): ToolJournal {
  if (!DBOS.isInWorkflow()) {
    throw new TypeError('toolrun/dbos: a journal can only be made inside a DBOS workflow function (registered with DBOS.registerWorkflow), not in a step or outside');
  }
  return tableJournal({
    workflowId: DBOS.workflowID ?? '',
    scope: checkScope(options.scope ?? 'batch'),
    keepProgress: checkKeep(options.keepProgress),
    streamProgress: options.streamProgress === true,
    interruptedCalls: checkPolicy(options.interruptedCalls),
  });
}

/**
 * The journal of an agent run inside the calling DBOS workflow: pass it as `runAgent`'s
 * `journal`. Turn *n*'s model reply is the DBOS step `toolrun:turn-<n>:reply` (the model is
 * not asked again for a turn whose reply was journaled; one step per turn, so it stays a
 * step), its tool batch a {@link dbosJournal} with scope `turn-<n>`. Turns are sequential,
 * so the operation order is fixed.
 *
 * @throws TypeError when called outside a DBOS workflow function. (`keepProgress` is checked
 *   when a turn's batch journal is made, so a bad one fails the run at its first batch.)
 * @example
 * ```ts
 * const agent = DBOS.registerWorkflow(async (messages: AgentMessage[]) => {
 *   const run = runAgent({ model, tools, messages, journal: dbosAgentJournal() });
 *   for (;;) { const next = await run.next(); if (next.done) return next.value; }
 * }, { name: 'agent' });
 * ```
 */
export function dbosAgentJournal<Reply = unknown>(options: Omit<DbosJournalOptions, 'scope'> = {}): AgentJournal<Reply> {
  if (!DBOS.isInWorkflow()) throw new TypeError('toolrun/dbos: dbosAgentJournal() can only be called inside a DBOS workflow function');
  checkPolicy(options.interruptedCalls);
  return {
    modelReply: (turn) => replyEntry<Reply>(`toolrun:turn-${turn}:reply`),
    batch: (turn) => dbosJournal({ ...options, scope: `turn-${turn}` }),
  };
}

/** One journaled value as a step whose function waits for `commit` (see lib/dbos/journal.ts for the rule). */
function replyEntry<V>(name: string): JournalValueEntry<V> {
  let resolve!: (value: { value: V }) => void;
  const value = new Promise<{ value: V }>((r) => (resolve = r));
  let ran!: () => void;
  const running = new Promise<void>((r) => (ran = r));
  const step = DBOS.runStep(
    async () => {
      ran();
      return await value;
    },
    { name },
  );
  step.catch(() => undefined);
  return {
    prior: Promise.race([step.then((v) => v.value), running.then(() => undefined)]),
    async commit(v) {
      resolve({ value: v });
      await step;
    },
  };
}

/**
 * The DBOS message topic {@link sendApproval} sends decisions on (`DBOS.send(workflowId,
 * decisions, APPROVAL_TOPIC)` does the same).
 *
 * @example
 * ```ts
 * await client.send(workflowId, [{ index: 1, approved: true }], APPROVAL_TOPIC);
 * ```
 */
export const APPROVAL_TOPIC = 'toolrun.approval';
/**
 * The DBOS event that says which requests of a durable batch are pending — waiting for a
 * person's decision — at every moment: its `ToolApprovalRequest[]` (in call order), set when
 * the batch pauses, set again as soon as the batch has received decisions (to the requests
 * still undecided), and `[]` once none is pending. Not set for a batch that never paused.
 * A client restarted after a crash reads it and asks the person only about what it lists.
 * (Between a decision's send and its receipt it still lists that call; `sendApproval` then
 * sends the second decision, and the batch drops it: {@link APPROVAL_DROPPED_EVENT}.)
 *
 * @example
 * ```ts
 * const pending = await DBOS.getEvent<ToolApprovalRequest[]>(workflowId, APPROVAL_EVENT, { timeoutSeconds: 0 });
 * ```
 */
export const APPROVAL_EVENT = 'toolrun.approval.requests';

/**
 * The DBOS event a durable batch sets to the decisions it received on {@link APPROVAL_TOPIC}
 * and dropped, because each answers no request pending when it was read (its call was
 * decided already or is not deferred, its `toolCallId` names another call, it is not a
 * decision): `DroppedApproval[]`, the newest 100. The workflow's process also emits a
 * `ToolrunWarning` for each. A dropped decision never answers a later pause.
 *
 * @example
 * ```ts
 * const dropped = await DBOS.getEvent<DroppedApproval[]>(workflowId, APPROVAL_DROPPED_EVENT, { timeoutSeconds: 0 });
 * for (const d of dropped ?? []) console.warn(`decision dropped: ${d.why}`);
 * ```
 */
export const APPROVAL_DROPPED_EVENT = 'toolrun.approval.dropped';

/**
 * A person's decision on a call of a paused durable batch, as {@link sendApproval} sends it
 * (e.g. `{ index: 2, approved: false, reason: 'Over the limit.' }`):
 * by the call's position (an `approvalId` is made afresh each time a run defers a call, so
 * it is not stable across a recovery; the index is).
 */
export interface DurableApproval {
  /** The call's position in the batch (0-based), `ToolApprovalRequest.index`. */
  index: number;
  /** When given, the pending request's `toolCallId` must be this one, or the decision is refused (dropped by the batch). */
  toolCallId?: string;
  approved: boolean;
  /** With `approved: false`: why, told to the model. */
  reason?: string;
}

/** Options of {@link registerDurableBatch}. */
export interface DurableBatchConfig<T extends readonly Tool[]> {
  /** The workflow's name: unique in the application, the same in every process that runs it. */
  name: string;
  tools: T;
  /** `runTools` options for every run of the batch (not `signal`, `resume`, `journal`, `approve`: approvals come through {@link sendApproval}). */
  options?: Omit<RunToolsOptions<T>, 'tools' | 'signal' | 'resume' | 'journal' | 'approve' | 'interruptedCalls'>;
  /**
   * What a call running at a crash becomes: `'unknown'` (answered without running) or
   * `'run-again'` (run again with the same `ctx.idempotencyKey`).
   * @default 'unknown'
   */
  interruptedCalls?: InterruptedCallPolicy;
  /**
   * Queue mode: each call runs as its own workflow (`<name>.call`, id `<batch id>:call:<index>`)
   * on this DBOS queue, executed by whichever process dequeues it (register the same batch,
   * and the queue, in every worker). Every call is enqueued when the batch starts, in call
   * order; results are awaited in call order. How many calls run at once is the queue's
   * (`workerConcurrency`, `concurrency`): `maxConcurrency` and exclusive tools act inside each
   * call's own one-call run, not across calls. A call that needs approval fails its workflow
   * (approvals are not supported in queue mode). A worker's crash re-runs (or, under
   * `'unknown'`, answers) only the calls it was running, with the same `ctx.idempotencyKey`.
   * A worker that never comes back holds its calls until {@link recoverWorker} hands them to
   * the others (docs/durable.md, "Workers on several machines").
   * @default none: calls run in the batch's process
   */
  queueName?: string;
  /** See {@link DbosJournalOptions.streamProgress}. @default false */
  streamProgress?: boolean;
  /** See {@link DbosJournalOptions.keepProgress}. @default 1000 */
  keepProgress?: number;
  /** How long a paused batch waits for a decision before it asks DBOS again, in seconds (the wait itself never ends). @default 3600 */
  approvalPollSeconds?: number;
}

/**
 * What a durable batch's workflow returns (JSON-safe: DBOS records it), e.g.
 * `{ messages: [{ role: 'tool', toolCallId: 'call_1', … }], outcomes: ['ok'], terminate: false, approvalRounds: 0 }`.
 */
export interface DurableBatchResult {
  /** One result per call, in call order. */
  messages: ToolResultMessage[];
  /** Each call's outcome, in call order. */
  outcomes: CallOutcome[];
  terminate: boolean;
  /** How many times the batch paused for approval and resumed. */
  approvalRounds: number;
}

/** Options of {@link DurableBatch.start}. */
export interface DurableBatchStartOptions {
  /** The workflow id: starting again with the same id attaches to the existing run. @default a random UUID */
  workflowId?: string;
  /** Receives the run's events while it runs in this process (not after a recovery elsewhere). */
  onEvent?: (event: ToolEvent) => void;
}

/** A durable batch registered by {@link registerDurableBatch}. */
export interface DurableBatch {
  /** The workflow's name. */
  readonly name: string;
  /** Starts the batch's workflow (or attaches to the one with `workflowId`); DBOS must be launched. */
  start(calls: readonly ToolCall[], options?: DurableBatchStartOptions): Promise<WorkflowHandle<DurableBatchResult>>;
  /** `start`, then its result. */
  run(calls: readonly ToolCall[], options?: DurableBatchStartOptions): Promise<DurableBatchResult>;
}

/** Event listeners of the runs started in this process, by workflow id. */
const listeners = new Map<string, (event: ToolEvent) => void>();

/**
 * Registers a DBOS workflow that runs a batch durably: a crash re-runs no call whose result
 * was journaled, and results stay in call order. Call before `DBOS.launch()`, in every
 * process that may run or recover it (workers included, in queue mode).
 *
 * A batch that pauses for approval sets the DBOS event {@link APPROVAL_EVENT} to its
 * requests and waits for {@link sendApproval}; the decisions are journaled, so a recovered
 * run asks nobody again.
 *
 * A recovery may run in **any** process of the application that registered the batch (DBOS
 * re-enqueues a workflow whose process died, and any launched process may dequeue it), so
 * register it with the same `tools`, `options.mode` and `interruptedCalls` everywhere. The
 * batch journals its config (tool names, each tool's `executionMode` and `needsApproval`, `mode`,
 * `interruptedCalls`; a policy function counts as "a function", whatever it does) as its
 * first step, and a process registered otherwise fails the workflow with a
 * {@link DurableConfigMismatchError} instead of running on.
 *
 * @throws TypeError for a malformed config.
 * @example
 * ```ts
 * const batch = registerDurableBatch({ name: 'support-tools', tools, interruptedCalls: 'run-again' });
 * DBOS.setConfig({ name: 'app', systemDatabaseUrl: process.env.DBOS_SYSTEM_DATABASE_URL });
 * await DBOS.launch();
 * const { messages } = await batch.run(toolCallsOf(reply), { workflowId: `turn-${turnId}` });
 * ```
 */
export function registerDurableBatch<const T extends readonly Tool[]>(config: DurableBatchConfig<T>): DurableBatch {
  if (typeof config?.name !== 'string' || config.name === '') throw new TypeError('registerDurableBatch: config.name must be a non-empty string');
  if (!Array.isArray(config.tools)) throw new TypeError('registerDurableBatch: config.tools must be an array of tools');
  const keepProgress = checkKeep(config.keepProgress);
  const pollSeconds = config.approvalPollSeconds ?? 3600;
  const streamProgress = config.streamProgress === true;
  const queueName = config.queueName;
  const interruptedCalls = checkPolicy(config.interruptedCalls);
  const fingerprint = configFingerprint(config.tools, (config.options as RunToolsOptions | undefined)?.mode, config.interruptedCalls);

  const baseOptions = (journal: ToolJournal): RunToolsOptions => ({
    ...(config.options as RunToolsOptions | undefined),
    tools: config.tools,
    journal,
    ...(config.interruptedCalls === undefined ? {} : { interruptedCalls: config.interruptedCalls }),
  } as RunToolsOptions);

  // Queue mode: one call as its own workflow, run by whichever process dequeues it.
  const callWorkflow = DBOS.registerWorkflow(
    (call: ToolCall, index: number, keyBase: string): Promise<QueuedCallResult> => runQueuedCall(call, index, keyBase, { keepProgress, streamProgress, options: baseOptions }),
    { name: `${config.name}.call` },
  );
  queuedCallWorkflows.set(config.name, callWorkflow);

  const workflow = DBOS.registerWorkflow(
    async (calls: ToolCall[]): Promise<DurableBatchResult> => {
      const workflowId = DBOS.workflowID ?? '';
      const listener = listeners.get(workflowId);
      const journalFor = (round: number): ToolJournal => {
        const scope = round === 0 ? 'batch' : `batch-r${round}`;
        return queueName === undefined
          ? tableJournal({ workflowId, scope, keepProgress, streamProgress, interruptedCalls })
          : queueJournal(callWorkflow, queueName, workflowId, round, calls);
      };
      // The first operation: a recovery may run in any process of the application, and one
      // registered with other tools or another policy must not go on (docs/adr/0045-durable-approvals-pending-only.md).
      const recorded = await DBOS.runStep(async () => fingerprint, { name: 'toolrun:config' });
      if (recorded !== fingerprint) throw new DurableConfigMismatchError(config.name, String(recorded), fingerprint);
      let { outcomes, batch } = await drain(runTools(calls, baseOptions(journalFor(0))), listener);
      let round = 0;
      const dropped: DroppedApproval[] = [];
      while (batch.paused !== undefined) {
        // Deterministic point: the paused batch has ended, so the events and the receives below
        // take the same operation numbers on every attempt (a receive's message is journaled).
        const requests = batch.paused.requests;
        await DBOS.setEvent(APPROVAL_EVENT, requests);
        const approvals = await receiveDecisions(workflowId, requests, pollSeconds, dropped);
        // The event says what is pending as soon as decisions are in: a client that reads it
        // now (one restarted after a crash) asks nobody about a call decided already.
        const answered = new Set(approvals.map((a) => a.approvalId));
        await DBOS.setEvent(APPROVAL_EVENT, requests.filter((r) => !answered.has(r.approvalId)));
        round++;
        const resumed = await drain(runTools(calls, { ...baseOptions(journalFor(round)), resume: { state: batch.paused.state, approvals } } as RunToolsOptions), listener);
        outcomes = mergeOutcomes(outcomes, resumed.outcomes, batch.messages.length);
        batch = { ...resumed.batch, messages: [...batch.messages, ...resumed.batch.messages.slice(batch.messages.length)] };
      }
      if (round > 0) await DBOS.setEvent(APPROVAL_EVENT, []);
      return { messages: batch.messages, outcomes, terminate: batch.terminate, approvalRounds: round };
    },
    { name: config.name },
  );

  return {
    name: config.name,
    async start(calls, options = {}) {
      const workflowId = options.workflowId ?? crypto.randomUUID();
      if (options.onEvent !== undefined) listeners.set(workflowId, options.onEvent);
      const handle = await DBOS.startWorkflow(workflow, { workflowID: workflowId })([...calls]);
      if (options.onEvent !== undefined) void handle.getResult().finally(() => listeners.delete(workflowId)).catch(() => undefined);
      return handle;
    },
    async run(calls, options) {
      return await (await this.start(calls, options)).getResult();
    },
  };
}

/** A queued call's workflow body: runs the one call with its own journal and returns its finalized result. */
async function runQueuedCall(
  call: ToolCall,
  index: number,
  keyBase: string,
  settings: { keepProgress: number; streamProgress: boolean; options: (journal: ToolJournal) => RunToolsOptions },
): Promise<QueuedCallResult> {
  // A progress stream is written from stepJournal's result step; without one, one step per call.
  const journal = settings.streamProgress
    ? stepJournal({ scope: 'batch', keyBase, indexOffset: index, keepProgress: settings.keepProgress, streamProgress: true })
    : queuedCallJournal({ scope: 'batch', keyBase, indexOffset: index });
  let progress: unknown[] | undefined;
  const run = runTools([call], settings.options(capture(journal, (p) => (progress = p))));
  const { outcomes, batch } = await drain(run, undefined);
  const message = batch.messages[0];
  if (message === undefined) throw new Error(`toolrun/dbos: queued call ${index} ended without a result${batch.paused === undefined ? '' : ' (it needs approval: approvals are not supported in queue mode)'}`);
  const result: JournaledResult = { message, outcome: outcomes[0] ?? 'ok', ...(batch.terminate ? { terminate: true } : {}) };
  return { result, ...(progress === undefined ? {} : { progress }) };
}

/**
 * Waits in the workflow until a message on {@link APPROVAL_TOPIC} answers at least one of
 * `requests`. A decision answers only a request pending now: one for a call decided already, or
 * not deferred, is dropped, visibly (a `ToolrunWarning`, {@link APPROVAL_DROPPED_EVENT}), and
 * can never answer a later pause. Each receive and event is a DBOS operation, issued in the same
 * order on every attempt (a receive's message is journaled).
 */
async function receiveDecisions(workflowId: string, requests: readonly ToolApprovalRequest[], pollSeconds: number, dropped: DroppedApproval[]): Promise<ToolApprovalResponse[]> {
  const approvals: ToolApprovalResponse[] = [];
  while (approvals.length === 0) {
    const message = await receive(pollSeconds);
    if (message === null) continue;
    const matched = 'unreadable' in message ? { accepted: [], dropped: [{ why: message.unreadable }] } : matchDecisions(message.value, requests);
    for (const a of matched.accepted) approvals.push(a);
    if (matched.dropped.length > 0) {
      // A message is bounded (matchDecisions drops an over-long one whole), and the list kept too.
      for (const d of matched.dropped) emitWarning(`toolrun/dbos: durable batch ${workflowId} dropped a decision: ${d.why}`);
      for (const d of matched.dropped.slice(-KEEP_DROPPED)) dropped.push(d);
      dropped.splice(0, Math.max(0, dropped.length - KEEP_DROPPED));
      await DBOS.setEvent(APPROVAL_DROPPED_EVENT, dropped);
    }
  }
  return approvals;
}

/**
 * The next message on {@link APPROVAL_TOPIC}, or `null` at the timeout. DBOS records a message
 * as it was sent and decodes it on every read: one this process cannot decode (sent through a
 * `DBOSClient` with a serializer of its own, or not written by DBOS) throws each time, and would
 * fail the batch for good; it is dropped instead, the same way on every attempt.
 */
async function receive(timeoutSeconds: number): Promise<{ value: unknown } | { unreadable: string } | null> {
  try {
    const value = await DBOS.recv<unknown>(APPROVAL_TOPIC, { timeoutSeconds });
    return value === null ? null : { value };
  } catch (error) {
    // Decoding fails with these; a cancelled workflow or a database error is DBOS's, and goes on up.
    if (!(error instanceof TypeError || error instanceof SyntaxError)) throw error;
    return { unreadable: `the message could not be decoded: ${error.message}`.slice(0, 200) };
  }
}

/** Wraps a journal so the progress an entry kept (or an earlier attempt journaled) reaches `keep`. */
function capture(journal: ToolJournal, keep: (progress: unknown[]) => void): ToolJournal {
  return {
    open(call) {
      const entry = journal.open(call);
      const seen: unknown[] = [];
      void Promise.resolve(entry.prior).then((p) => {
        if (p.state === 'ended' && p.progress !== undefined) keep([...p.progress]);
      }, () => undefined);
      return {
        prior: entry.prior,
        idempotencyKey: entry.idempotencyKey,
        progress(value) {
          seen.push(value);
          entry.progress?.(value);
        },
        decide: (d) => entry.decide(d),
        commit(r) {
          if (seen.length > 0) keep(seen);
          return entry.commit(r);
        },
      };
    },
  };
}

/** Runs a batch to its end, handing its events to `listener`; collects each call's outcome. */
async function drain(run: AsyncGenerator<ToolEvent, ToolBatch, undefined>, listener: ((event: ToolEvent) => void) | undefined): Promise<{ outcomes: CallOutcome[]; batch: ToolBatch }> {
  const outcomes: CallOutcome[] = [];
  for (;;) {
    const next = await run.next();
    if (next.done === true) return { outcomes, batch: next.value };
    const event = next.value;
    if (event.type === 'tool_execution_end') outcomes[event.index] = event.outcome;
    try {
      listener?.(event);
    } catch {
      // A listener's failure is the listener's; the durable run goes on.
    }
  }
}

/** The outcomes of a resumed run fill in the calls the paused run had not answered. */
function mergeOutcomes(before: CallOutcome[], after: CallOutcome[], answered: number): CallOutcome[] {
  const merged = [...before];
  after.forEach((o, i) => {
    if (i >= answered || merged[i] === undefined) merged[i] = o;
  });
  return merged;
}

/** Options of {@link sendApproval}. */
export interface SendApprovalOptions {
  /**
   * Send through this client (a process that has not launched DBOS). Give it the serializer
   * the batch's processes use (DBOS's default unless configured): a message they cannot
   * decode is dropped (`APPROVAL_DROPPED_EVENT`), not taken as decisions.
   * @default `DBOS.send` (DBOS launched in this process)
   */
  client?: DBOSClient;
  /** Sent once per key: a retried send with the same key is not delivered twice. */
  idempotencyKey?: string;
}

/**
 * Sends decisions to a durable batch paused for approval, from any process: the batch's
 * workflow receives them (a DBOS message on {@link APPROVAL_TOPIC}), journals them, and
 * resumes — in whichever process runs or recovers it. Calls not decided stay pending (the
 * batch waits again, with {@link APPROVAL_EVENT} set to what is still pending).
 *
 * It first reads {@link APPROVAL_EVENT}, and sends nothing when a decision answers no request
 * pending there: a call decided already (a client restarted after a crash, asking again), a
 * call not deferred (the batch not paused yet, or ended), two decisions for one call, or a
 * `toolCallId` that is not the call's. A decision that still reaches the batch for a request
 * no longer pending (sent in the moment before the event was updated, or with `DBOS.send`
 * directly) is dropped there ({@link APPROVAL_DROPPED_EVENT}), so it never answers a later pause.
 *
 * @throws TypeError for a malformed decision; {@link ApprovalNotPendingError} when a decision
 *   answers no pending request; DBOS's error when the workflow does not exist.
 * @example
 * ```ts
 * const pending = await DBOS.getEvent<ToolApprovalRequest[]>(workflowId, APPROVAL_EVENT);
 * await sendApproval(workflowId, pending!.map((r) => ({ index: r.index, approved: true })));
 * ```
 */
export async function sendApproval(workflowId: string, approvals: readonly DurableApproval[], options: SendApprovalOptions = {}): Promise<void> {
  if (typeof workflowId !== 'string' || workflowId === '') throw new TypeError('sendApproval: workflowId must be a non-empty string');
  if (!Array.isArray(approvals)) throw new TypeError('sendApproval: approvals must be an array of { index, approved, reason? }');
  const clean = approvals.map((a, i) => {
    if (typeof a !== 'object' || a === null || !Number.isInteger(a.index) || a.index < 0 || typeof a.approved !== 'boolean' || (a.toolCallId !== undefined && typeof a.toolCallId !== 'string')) {
      throw new TypeError(`sendApproval: approvals[${i}] must be { index: non-negative integer, approved: boolean, reason?: string, toolCallId?: string }`);
    }
    return { index: a.index, approved: a.approved, ...(typeof a.reason === 'string' ? { reason: a.reason } : {}), ...(a.toolCallId === undefined ? {} : { toolCallId: a.toolCallId }) };
  });
  const event = options.client !== undefined ? await options.client.getEvent<unknown>(workflowId, APPROVAL_EVENT, { timeoutSeconds: 0 }) : await DBOS.getEvent<unknown>(workflowId, APPROVAL_EVENT, { timeoutSeconds: 0 });
  const pending = pendingOf(event);
  const refused = refusedOf(clean, pending);
  if (refused.length > 0) throw new ApprovalNotPendingError(workflowId, refused, pending.map((r) => r.index));
  if (options.client !== undefined) await options.client.send(workflowId, clean, APPROVAL_TOPIC, options.idempotencyKey);
  else await DBOS.send(workflowId, clean, APPROVAL_TOPIC, options.idempotencyKey);
}

function checkScope(scope: string): string {
  if (typeof scope !== 'string' || !/^[\w.-]{1,64}$/.test(scope)) throw new TypeError(`toolrun/dbos: scope must be 1–64 letters, digits, '_', '.' or '-', received ${JSON.stringify(scope)}`);
  return scope;
}

function checkPolicy(policy: InterruptedCallPolicy | undefined): InterruptedCallPolicy {
  if (policy === undefined) return 'unknown';
  if (policy !== 'unknown' && policy !== 'run-again' && typeof policy !== 'function') throw new TypeError(`toolrun/dbos: interruptedCalls must be 'unknown', 'run-again' or a function, received ${String(policy)}`);
  return policy;
}

function checkKeep(keep: number | undefined): number {
  if (keep === undefined) return DEFAULT_KEEP_PROGRESS;
  if (!Number.isInteger(keep) || keep < 0) throw new TypeError(`toolrun/dbos: keepProgress must be a non-negative integer, received ${String(keep)}`);
  return keep;
}

/** Options of {@link recoverWorker}. */
export interface RecoverWorkerOptions {
  /** Act through this client (an operator's script, a process that has not launched DBOS). @default DBOS, launched in this process */
  client?: DBOSClient;
  /**
   * Hand back only the workflows of this application version (what DBOS's own recovery at
   * launch does: a process runs only its own version's workflows).
   * @default without `client`: this process's `DBOS.applicationVersion`; with one: every version
   */
  applicationVersion?: string;
}

/**
 * Hands the workflows a dead DBOS process held back to their queues, so the other processes
 * take them over — what `DBOS.launch()` does for its own executor id when a process comes
 * back, for a process that will not (its machine is gone, a replacement got a new executor
 * id). In queue mode: every call the dead worker had dequeued and not finished goes back on
 * its queue, and a live worker runs it from its journal — a call whose result was journaled
 * is not run again; a call it was running is run again with the same `ctx.idempotencyKey`
 * (`'run-again'`) or answered "outcome unknown" (`'unknown'`). A batch it was orchestrating
 * goes to DBOS's internal queue and is recovered by any live process of its version.
 *
 * Only for an executor known to be dead (killed, its machine gone): a live one would have a
 * second copy of its running workflows started beside it (DBOS stops the stale copy at its
 * next write, but a tool it was running may run twice). A recovered workflow's count of
 * recovery attempts starts again at 0 (DBOS's `resumeWorkflows`). Why it is called and never
 * automatic: docs/adr/0055-queue-mode-workers.md.
 *
 * @param executorId the dead process's DBOS executor id (`executorID` in its DBOS config, or `DBOS__VMID`)
 * @returns the ids of the workflows handed back (none when it held none)
 * @throws TypeError for an empty `executorId`; DBOS's error when the database cannot be reached.
 * @example
 * ```ts
 * // An operator's script, after the machine of executor 'worker-3' was lost:
 * const client = await DBOSClient.create({ systemDatabaseUrl });
 * await recoverWorker('worker-3', { client, applicationVersion: 'v42' });
 * await client.destroy();
 * ```
 */
export async function recoverWorker(executorId: string, options: RecoverWorkerOptions = {}): Promise<string[]> {
  if (typeof executorId !== 'string' || executorId === '') throw new TypeError('recoverWorker: executorId must be a non-empty string');
  const version = options.applicationVersion ?? (options.client === undefined ? DBOS.applicationVersion : undefined);
  const query = { executorId, status: 'PENDING' as const, loadInput: false, loadOutput: false, ...(version === undefined ? {} : { applicationVersion: version }) };
  const held = options.client !== undefined ? await options.client.listWorkflows(query) : await DBOS.listWorkflows(query);
  // Each back on its own queue (a workflow started without one: DBOS's internal queue).
  const byQueue = new Map<string | undefined, string[]>();
  for (const w of held) byQueue.set(w.queueName, [...(byQueue.get(w.queueName) ?? []), w.workflowID]);
  for (const [queueName, ids] of byQueue) {
    const opts = queueName === undefined ? {} : { queueName };
    if (options.client !== undefined) await options.client.resumeWorkflows(ids, opts);
    else await DBOS.resumeWorkflows(ids, opts);
  }
  return held.map((w) => w.workflowID);
}
