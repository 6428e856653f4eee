/**
 * The journal's side of a call (contract J1–J10), used only when `RunToolsOptions.journal`
 * is set: {@link JournaledCall} (what the run keeps of a call's entry) and the stage that
 * reads an entry's prior before the call is prepared ({@link prepareJournaled}).
 *
 * ```
 * hand-out ─ open(call) ─▶ prior ─┬─ 'ended'   → REPLAYED: the run emits the journaled progress, end (replayed), result
 *                                 ├─ 'started' → policy 'run-again': prepare as new (a journaled decision is not asked again)
 *                                 │              policy 'unknown':   prepare; answered "outcome unknown" unless the
 *                                 │                                  run proves the earlier attempt never ran it
 *                                 │                                  (rejected by the run's own checks, or waiting
 *                                 │                                  for / denied an approval): then its true result
 *                                 └─ 'new'     → prepare as without a journal (a decision from approve is journaled)
 * ```
 *
 * @module
 */
import { abortable } from 'abort-controller-x';
import { standingDecision } from '../../approval/approval.ts';
import type { CallRecord } from '../call.ts';
import { JournaledCall, type EndedPrior } from '../journaled-call.ts';
import type { InterruptedCallPolicy, JournalCall, JournaledDecision, JournaledResult, JournalEntry, JournalOperation, JournalPrior, ToolJournal } from '../../seams/journal.ts';
import { emitWarning } from '../../values/platform.ts';
import { readContentBlock } from '../../values/content.ts';
import type { CallOutcome, ToolCall, ToolResult, ToolResultMessage } from '../../tool/tool.ts';
import { describeValue as describeForeign, isObjectRecord, isPromiseLike, thrownText } from '../../values/guards.ts';
import { boundResult } from './execute.ts';
import { outcomeText, type Outcome } from './outcome.ts';
import { notRun, prepareToolCall, type JournalInput, type Prepared } from './prepare.ts';

/** What prepare gives for a call whose prior is `'ended'`: the run replays it ({@link JournaledCall.replay}). */
export const REPLAYED = Symbol('replayed');

/** The call as `journal.open` sees it. */
function journalCall(index: number, call: ToolCall): JournalCall {
  return { index, toolCallId: call.id, toolName: call.name, arguments: call.arguments };
}

/** Opens call `record`'s entry (J1); a throw or a malformed entry is a journal failure (`undefined`). */
export function openEntry(run: JournalInput, journal: ToolJournal, record: CallRecord): JournaledCall | undefined {
  let entry: unknown;
  try {
    entry = journal.open(journalCall(record.index, record.call));
  } catch (error) {
    run.journalFailed(record, 'open', error);
    return undefined;
  }
  let wellFormed: boolean;
  try {
    wellFormed = isObjectRecord(entry) && typeof entry.commit === 'function' && typeof entry.decide === 'function' && typeof entry.idempotencyKey === 'string';
  } catch {
    wellFormed = false;
  }
  if (!wellFormed) {
    run.journalFailed(record, 'open', new TypeError(`open returned ${describeForeign(entry)}, not an entry { prior, idempotencyKey, decide, commit }`));
    return undefined;
  }
  return new JournaledCall(entry as unknown as JournalEntry);
}

/**
 * Stage 1 of a journaled call: waits for the entry's prior (P1 still holds: the next call is
 * handed out once this one is prepared), then replays, answers or prepares it (J4, J5).
 */
function prepareJournaled(run: JournalInput, record: CallRecord): Prepared | typeof REPLAYED | Promise<Prepared | typeof REPLAYED> {
  let prior: unknown;
  try {
    prior = record.journal!.entry.prior;
  } catch (error) {
    return run.journalFailed(record, 'prior', error);
  }
  if (!isPromiseLike(prior)) return afterPrior(run, record, prior);
  // An engine that never answers must not hold a stopped run: the wait ends when the run stops.
  return abortable(run.signal, Promise.resolve(prior)).then(
    (p: unknown) => afterPrior(run, record, p),
    (error: unknown) => (run.stopped ? notRun(record.call) : run.journalFailed(record, 'prior', error)),
  );
}

function afterPrior(run: JournalInput, record: CallRecord, given: unknown): Prepared | typeof REPLAYED | Promise<Prepared | typeof REPLAYED> {
  const journaled = record.journal!;
  let prior: JournalPrior | string;
  try {
    prior = readPrior(given);
  } catch (error) {
    // A getter of the engine's object threw.
    prior = `prior could not be read: ${thrownText(error)}`;
  }
  if (typeof prior === 'string') return run.journalFailed(record, 'prior', new TypeError(prior));
  // A decision given with always (H11) stands again for the tool, whether the call replays or is prepared.
  if (prior.state !== 'new' && prior.decision?.always === true) run.standing.set(record.call.name, standingDecision(prior.decision.approved, prior.decision.reason));
  if (prior.state === 'ended') {
    journaled.replay = prior;
    return REPLAYED;
  }
  if (prior.state === 'started') {
    journaled.decision = prior.decision;
    if (policyOf(run.interruptedCalls, journalCall(record.index, record.call)) === 'unknown') {
      // Known without asking anything: a journaled approval may have let it run; a denial kept it from running.
      if (prior.decision?.approved === true) return unknownOutcome(record.call);
      journaled.unknown = true;
    }
  }
  return prepareToolCall(run, record);
}

/** The policy for one interrupted call; a policy function that throws or answers something else gives `'unknown'` (the safe answer), with a warning. */
function policyOf(policy: InterruptedCallPolicy, call: JournalCall): 'unknown' | 'run-again' {
  if (typeof policy !== 'function') return policy;
  let answer: unknown;
  try {
    answer = policy(call);
  } catch (error) {
    emitWarning(`toolrun: interruptedCalls threw, so call ${call.index} is answered 'unknown': ${thrownText(error)}`);
    return 'unknown';
  }
  if (answer === 'unknown' || answer === 'run-again') return answer;
  emitWarning(`toolrun: interruptedCalls answered ${describeForeign(answer)} for call ${call.index}, not 'unknown' or 'run-again'; the call is answered 'unknown'`);
  return 'unknown';
}

const OUTCOMES: ReadonlySet<string> = new Set<CallOutcome>(['ok', 'error', 'rejected', 'not_run', 'interrupted', 'abandoned', 'timed_out']);

/** Reads a prior the engine gave: the prior, or what is wrong with it. */
function readPrior(given: unknown): JournalPrior | string {
  if (!isObjectRecord(given)) return `prior is ${describeForeign(given)}, not { state: 'new' | 'started' | 'ended' }`;
  const state = given.state;
  if (state === 'new') return given as JournalPrior;
  const decision = given.decision;
  if (decision !== undefined && !(isObjectRecord(decision) && typeof decision.approved === 'boolean')) return `prior.decision is ${describeForeign(decision)}, not { approved: boolean, reason? }`;
  if (state === 'started') return given as JournalPrior;
  if (state !== 'ended') return `prior.state is ${describeForeign(state)}, not 'new', 'started' or 'ended'`;
  const result = given.result;
  if (!isObjectRecord(result) || !isObjectRecord(result.message) || !Array.isArray(result.message.content) || typeof result.message.isError !== 'boolean') {
    return `prior.result is ${describeForeign(result)}, not { message: { content: [...], isError, … }, outcome }`;
  }
  // A journal row is data from outside (a database, a file): every block is checked as a tool's would be, before it replays to the model.
  const content = result.message.content as unknown[];
  for (let i = 0; i < content.length; i++) {
    const block = readContentBlock(content[i]);
    if (typeof block === 'string') return `prior.result.message.content[${i}] is ${block}`;
  }
  if (typeof result.outcome !== 'string' || !OUTCOMES.has(result.outcome)) return `prior.result.outcome is ${describeForeign(result.outcome)}, not a call outcome`;
  if (given.progress !== undefined && !Array.isArray(given.progress)) return `prior.progress is ${describeForeign(given.progress)}, not an array`;
  return given as JournalPrior;
}

/**
 * The outcome of a call an earlier attempt started and journaled no result for, under the
 * `'unknown'` policy (J5): the same words as a call abandoned at an abort (A3) — its outcome
 * is unknown — and what to do about it.
 */
export function unknownOutcome(call: ToolCall): Outcome {
  return outcomeText(
    'interrupted',
    `Interrupted: an earlier attempt of this run stopped while tool "${call.name}" was running, and its result was not recorded; ` +
      'its outcome is unknown (it may or may not have taken effect). Check whether it took effect before calling it again.',
  );
}

/**
 * Stage 1 for any call: the plain prepare, or the journaled one (the entry's prior first),
 * in the call's span when it is traced. A plain call has no extras (no trace, no journal
 * entry): one load decides.
 */
export function prepareStage(run: JournalInput, record: CallRecord): Prepared | typeof REPLAYED | Promise<Prepared | typeof REPLAYED> {
  const extras = record.extras;
  if (extras === undefined) return prepareToolCall(run, record);
  // Traced: prepare (prepareArguments, an async schema, beforeToolCall) runs in the call's span.
  if (extras.trace !== undefined) return extras.trace.run(prepareUntraced, record);
  return prepareUntraced(record);
}

/** Stage 1 as a function of the record alone (run in the call's span without a closure). */
function prepareUntraced(record: CallRecord): Prepared | typeof REPLAYED | Promise<Prepared | typeof REPLAYED> {
  const run = record.owner as unknown as JournalInput;
  return record.journal === undefined ? prepareToolCall(run, record) : prepareJournaled(run, record);
}

/** What a call whose prior is `'ended'` (J4) replays: its journaled progress, end and result. */
export function replayedEnd(journaled: JournaledCall, maxResultChars: number): { progress: readonly unknown[] | undefined; result: ToolResult; message: ToolResultMessage; outcome: CallOutcome } {
  const { result: journaledResult, progress } = journaled.replay!;
  let message = journaledResult.message;
  // Committed within the bound; a row changed since (or written by another configuration) is cut like a result run now (C20).
  const bounded = boundResult({ content: message.content }, maxResultChars);
  if (bounded.content !== message.content) message = { ...message, content: bounded.content };
  const result: ToolResult = { content: message.content };
  if (message.details !== undefined) result.details = message.details;
  if (message.meta !== undefined) result.meta = message.meta;
  if (journaledResult.terminate !== undefined) result.terminate = journaledResult.terminate;
  return { progress, result, message, outcome: journaledResult.outcome };
}
