/**
 * The journal: the seam through which a durable-execution engine keeps a batch (and an agent
 * run) across a crash (contract J). The core imports no engine: an engine adapter
 * (`toolrun/dbos`, or one a user writes for Restate, Temporal or Vercel Workflow) implements
 * these interfaces, and `runTools(calls, { journal })` / `runAgent(…, { journal })` drive them.
 *
 * The one rule an engine needs: **every operation of call *i* is issued when call *i* is
 * handed out, and calls are handed out in call order.** Engines that match their journal by
 * operation number (DBOS, Temporal, Restate) then see the same sequence of operations on
 * every attempt, whatever order the calls finish in; an engine that issued them when calls
 * finished would hand one call's result to another after a crash. `commit` comes when the
 * call ends, in completion order: it settles what `open` issued, and it comes before the
 * call's `tool_result`, so no result the consumer saw is lost.
 *
 * States of one call's entry, as the run sees them:
 *
 * ```
 * open(call) ──▶ prior ─┬─ 'new'      → prepare, (decide), execute, finalize → commit(result) → tool_result
 *                       ├─ 'started'  → an earlier attempt began it and journaled no result:
 *                       │               the run's `interruptedCalls` policy either answers it
 *                       │               'unknown' without running (commit) or runs it again
 *                       │               with the same `ctx.idempotencyKey` (at-least-once)
 *                       └─ 'ended'    → not executed: start → end (replayed) → tool_result, the
 *                                       journaled result, in call order; no commit
 * ```
 *
 * @module
 */
import type { CallOutcome } from '../tool/tool.ts';
import type { ToolResultMessage } from '../tool/tool.ts';

/** A call as the journal sees it when the run opens its entry. */
export interface JournalCall {
  /** The call's position in the batch (0-based): the entry's identity within the batch. */
  readonly index: number;
  readonly toolCallId: string;
  /** The name the model used (maybe a name no tool has). */
  readonly toolName: string;
  /** The call's raw arguments, as the model sent them. */
  readonly arguments: unknown;
}

/**
 * What the journal keeps of a call that ended: its finalized result (after validation,
 * timeout, abort, `afterToolCall` and approval), not the tool's raw return value. It must
 * survive `JSON.stringify` / `JSON.parse`: `details` and `meta` are kept as JSON keeps them.
 */
export interface JournaledResult {
  /** The call's result message, as its `tool_result` event carried it. */
  readonly message: ToolResultMessage;
  readonly outcome: CallOutcome;
  /** The result's `terminate` flag (contract O6), when set. */
  readonly terminate?: boolean;
}

/** A person's decision on a call that needed approval (contract H2), journaled before the call runs. */
export interface JournaledDecision {
  readonly approved: boolean;
  readonly reason?: string;
  /** `true` when the decision was given with `always` (H11): a later attempt makes it stand again for the tool. */
  readonly always?: boolean;
}

/** What an earlier attempt of the same durable run left for a call. */
export type JournalPrior =
  | { readonly state: 'new' }
  | { readonly state: 'started'; readonly decision?: JournaledDecision }
  | {
      readonly state: 'ended';
      readonly result: JournaledResult;
      readonly decision?: JournaledDecision;
      /** The call's progress values, in the order the tool yielded them, when the engine kept them ({@link JournalEntry.progress}); replayed as updates. */
      readonly progress?: readonly unknown[];
    };

/** One call's entry in the journal, returned by {@link ToolJournal.open}. */
export interface JournalEntry {
  /** What an earlier attempt left for the call; the call's prepare stage waits for it. */
  readonly prior: JournalPrior | PromiseLike<JournalPrior>;
  /**
   * A key that is the same on every attempt of this call in this durable run (for example
   * the engine's workflow id and the call's index). The tool reads it as
   * `ctx.idempotencyKey` and passes it to the services it calls, so a call run again after
   * a crash is not applied twice by a service that honours the key.
   */
  readonly idempotencyKey: string;
  /**
   * Optional: keeps a progress value the tool yielded (called in the order it yielded them,
   * before the call's commit; not awaited, so a slow engine never holds the tool back). An
   * engine that keeps them returns them in a later attempt's `prior.progress`.
   */
  progress?(value: unknown): void;
  /** Journals a person's decision (from `approve`, or a resume's `approvals`) before the call runs, so nobody is asked twice (contract J6). */
  decide(decision: JournaledDecision): void | PromiseLike<void>;
  /**
   * Journals the call's finalized result. Called once, when the call ends — so in the order
   * calls finish, at any time after `open` — and before its `tool_result` is emitted: the
   * event waits until this commit and every earlier call's have settled, so a result the
   * consumer saw is always one the journal holds. A result waiting for an earlier call (or in
   * a batch paused for approval) is committed already. Not called for a call whose prior was
   * `'ended'`. A rejection fails the run (the generator throws it): a result that cannot be
   * journaled is never handed to the consumer. An engine that numbers its operations issued
   * this one in `open`; `commit` only settles it.
   */
  commit(result: JournaledResult): void | PromiseLike<void>;
}

/**
 * A batch's journal: `RunToolsOptions.journal`. An engine adapter returns one per durable
 * batch (the batch's workflow).
 */
export interface ToolJournal {
  /**
   * Opens call `call.index`'s entry. Called once per call, in call order, synchronously
   * when the run hands the call out and before its prepare stage: the engine issues every
   * operation it will need for this call here.
   */
  open(call: JournalCall): JournalEntry;
}

/** A value journaled once per step of a sequence (an agent's model reply per turn). */
export interface JournalValueEntry<V> {
  /** The value an earlier attempt journaled, or `undefined`. */
  readonly prior: V | undefined | PromiseLike<V | undefined>;
  /** Journals the value (once, when the step produced it). */
  commit(value: V): void | PromiseLike<void>;
}

/**
 * An agent run's journal: `RunAgentOptions.journal`. Turns are strictly sequential, so the
 * engine sees: turn 0's model reply, turn 0's batch, turn 1's model reply, …
 */
export interface AgentJournal<Reply = unknown> {
  /** Opens turn `turn`'s model reply, before the model is asked; a journaled reply is used without asking it. */
  modelReply(turn: number): JournalValueEntry<Reply>;
  /** The journal of turn `turn`'s tool batch. */
  batch(turn: number): ToolJournal;
}

/**
 * What the run does with a call an earlier attempt started and journaled no result for (it
 * was running at the crash): `'unknown'` (the default) answers it without running, with a
 * result telling the model its outcome is unknown; `'run-again'` runs it again with the same
 * `ctx.idempotencyKey` (at-least-once). A function decides per call.
 */
export type InterruptedCallPolicy = 'unknown' | 'run-again' | ((call: JournalCall) => 'unknown' | 'run-again');

/** Which journal operation failed: `RunToolsOptions.journal`'s `open`, an entry's `prior`, `decide` or `commit`; or, for `runAgent`, a model reply's. */
export type JournalOperation = 'open' | 'prior' | 'decide' | 'commit' | 'model-reply';

/**
 * Thrown by the `runTools` (or `runAgent`) generator when its journal failed: `open` threw,
 * an entry's `prior` rejected or was malformed, `decide` or `commit` threw or rejected (or,
 * for `runAgent`, a model reply's `prior` or `commit` did). A result that cannot be
 * journaled is never handed to the consumer: the run stops like a consumer exit (every
 * running call's signal aborts, every generator is returned, their cleanup is waited for up
 * to `abortGraceMs`, contract A5), nothing more is journaled, and the generator throws this
 * error from its next `next()` (contract J9). The durable run can then be retried by its
 * engine: calls whose result was committed replay, the others are `'started'` or `'new'`.
 *
 * @example
 * ```ts
 * try {
 *   for await (const event of runTools(calls, { tools, journal })) render(event);
 * } catch (error) {
 *   if (error instanceof JournalError) console.error(`journal ${error.operation} failed for call ${error.index}`, error.cause);
 *   else throw error;
 * }
 * ```
 */
export class JournalError extends Error {
  override readonly name = 'JournalError';
  /** The call's index in the batch (for `'model-reply'`: the turn). */
  readonly index: number;
  readonly operation: JournalOperation;

  constructor(operation: JournalOperation, index: number, what: string, cause: unknown) {
    super(`toolrun: the journal's ${operation} failed for ${what}: ${causeText(cause)}`, { cause });
    this.operation = operation;
    this.index = index;
  }
}

function causeText(cause: unknown): string {
  try {
    if (cause instanceof Error) return cause.message;
    return typeof cause === 'string' ? cause : String(cause);
  } catch {
    return 'an unreadable value';
  }
}
