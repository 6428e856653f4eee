/**
 * The agent loop: model turn, tool batch, model turn, … until the model answers without
 * tool calls — the outer loop around `runTools` that seed 000 calls `runLoop`.
 *
 * ```
 * runAgent ─ turn 1: model(messages) ─▶ assistant message ─▶ runTools(its calls) ─▶ results
 *          ─ turn 2: model(messages + message + results) ─▶ …
 *          ─ agent_end { reason: completed | terminated | max_turns | aborted | error | paused }
 * ```
 *
 * A turn whose batch pauses for a person's approval ends the run (`paused`), its state
 * built by `paused-state.ts`; a run given `resume` starts with that turn's batch.
 *
 * One turn is `turn.ts`; the types are `messages.ts`.
 *
 * @module
 */
import { CancelScope } from '../../core/streams/abort.ts';
import { STANDING_DECISIONS, type StandingDecision, type ToolApprovalResponse } from '../../core/approval/approval.ts';
import type { StateClaim } from '../../core/approval/claims.ts';
import { DEFAULTS } from '../../core/values/defaults.ts';
import type { AgentJournal } from '../../core/seams/journal.ts';
import { checkClaim, checkJournalOptions, checkRunToolsArguments, type RunToolsOptions } from '../../core/run/options.ts';
import { assertToolShape } from '../../core/schema/define-tool.ts';
import { describeValue } from '../../core/values/guards.ts';
import type { Tool } from '../../core/tool/tool.ts';
import type { AgentEndReason, AgentEvent, AgentMessage, AgentModel, AgentResult, PausedAgentState } from './messages.ts';
import { pausedAgentState, readPausedAgentState } from './paused-state.ts';
import { answerPending, resumedTurn, runTurn, type TurnOutcome } from './turn.ts';

/**
 * The `resume` option of {@link runAgent}: continues a run that ended `paused`.
 *
 * @example
 * ```ts
 * runAgent({ model, tools, resume: { state: JSON.parse(text), approvals: [{ approvalId, approved: true }] } });
 * ```
 */
export interface AgentResumeOptions {
  /** `AgentResult.paused.state`, as an object or as its JSON text. */
  state: PausedAgentState | string;
  /** Decisions on some or all pending requests; a request with none stays pending (the run pauses again). @default [] */
  approvals?: readonly ToolApprovalResponse[];
  /**
   * Claims the paused batch's state id once in the application's store (one id per pause);
   * see `runTools`' `resume.claim` and {@link StateClaim}. Required with `signingSecret`.
   * @default none: a second resume is refused within this process only
   */
  claim?: StateClaim;
}

/**
 * Options of {@link runAgent}: the agent's own, plus every `runTools` option but `tools`,
 * `signal`, `resume` and `journal` (each of which the agent has in its own form), applied
 * to each batch — `approve`, `signingSecret` and `interruptedCalls` included.
 */
export interface RunAgentOptions<T extends readonly Tool[] = readonly Tool[], AfterDetails = unknown> extends Omit<RunToolsOptions<T, AfterDetails>, 'tools' | 'signal' | 'resume' | 'journal'> {
  /** The model; see {@link AgentModel}. */
  model: AgentModel;
  /** The tools the model may call. */
  tools: T;
  /**
   * The conversation so far (not modified). Required, except with `resume`, where it must
   * be left out: the paused state carries the history (so a resumed run cannot be handed a
   * stale or edited one).
   */
  messages?: readonly AgentMessage[];
  /**
   * Continues a run that ended `paused`: the paused turn's batch resumes (approved calls
   * run, denied ones get an error result, unanswered ones stay pending and the run pauses
   * again), then its message and all its results join the state's history and the run goes
   * on with the next model turn. `tools` must be the paused run's; `signingSecret` checks
   * the state's signature, and then `claim` is required (single use across processes,
   * H7). A state that cannot be resumed makes the first `next()` throw a `ResumeError`,
   * before any event.
   * @default none
   */
  resume?: AgentResumeOptions;
  /**
   * Most model turns; the run ends with reason `max_turns` after the last one's tool batch.
   * A positive integer or `Infinity`.
   * @default 10 (the OpenAI Agents SDK's default)
   */
  maxTurns?: number;
  /** Aborts the model call in flight and the running tools; the run ends with reason `aborted`. */
  signal?: AbortSignal;
  /**
   * Makes the run durable through a durable-execution engine (contract J8): before turn
   * `t`'s model call the run opens `journal.modelReply(t)`; a reply an earlier attempt
   * committed is used without asking the model (its `message` event has `replayed: true`,
   * and no `message_update`s), otherwise the reply is committed once the model finished,
   * before its calls are handed out. Turn `t`'s batch runs with `journal.batch(t)` (see
   * `RunToolsOptions.journal`; `interruptedCalls` applies to each batch). With a journal, a
   * streamed reply is read to its end before its calls start (a reply that was never
   * committed may differ on the next attempt, and a batch's entries must belong to the
   * committed reply). A journal that fails makes the generator throw a `JournalError`.
   * `memoryAgentJournal()` from `toolrun/testing` is one in memory; see docs/durable.md.
   * @default none
   */
  journal?: AgentJournal;
}

/** The text a call gets when its turn could not pause because the model failed: it ends `not_run`. */
const MODEL_FAILED_BEFORE_APPROVAL = 'The model failed in the turn of this call before a person answered its approval request';

/** Default of {@link RunAgentOptions.maxTurns}. */
export const DEFAULT_MAX_TURNS = 10;

/**
 * Runs an agent: calls the model, runs the tool calls of its reply with `runTools`, feeds
 * the results back, and repeats until the model answers without tool calls, a batch asks
 * to terminate, `maxTurns` is reached, the signal aborts, or the model fails — never by
 * throwing: the returned {@link AgentResult} says why, and its history is always valid to
 * send again.
 *
 * - Abort during a tool batch: `runTools` answers every call (interrupted or not run),
 *   the results join the history. Abort during the model call: no message is added (a
 *   streamed reply keeps what had arrived, `stopReason: 'aborted'`, with every call in it
 *   answered). The run puts one listener on `signal` and removes it when it ends.
 * - A streamed reply (an async iterable) starts each complete call at once (S4); calls
 *   the run could not take before an abort are answered as not run.
 * - Leaving the loop early (`break`) aborts the model call and the running tools (A5);
 *   nothing more is yielded.
 * - A call that needs a person's approval, with no `approve` option or one that answers
 *   `undefined`, pauses the run when the rest of its batch is done: reason `paused`,
 *   `messages` is the history without the paused turn (valid to send: no call without its
 *   result), `paused` the requests and the JSON state. `runAgent({ model, tools, resume:
 *   { state, approvals } })` continues it, in this process or another; `maxTurns` counts
 *   across the pause. A turn whose model failed (a broken stream) does not pause: its
 *   pending calls end not run and the run ends with `error`.
 *
 * @throws TypeError at once when an option is malformed (no model function, a bad
 *   `maxTurns`, `messages` not an array, both or neither of `messages` and `resume`, or
 *   anything `runTools` would reject). With `resume`, a `ResumeError` from the first
 *   `next()` when the state cannot be resumed (see its `code`). With `journal`, a
 *   `JournalError` from `next()` when the journal fails (contract J9): the one ending that
 *   is a throw, not an {@link AgentResult}.
 *
 * @example
 * ```ts
 * const run = runAgent({ model, tools: codingTools({ root }), messages: [{ role: 'user', content: 'Where is runTools defined?' }], signal });
 * for (let step = await run.next(); ; step = await run.next()) {
 *   if (step.done) { history = step.value.messages; break; }
 *   if (step.value.type === 'message') print(assistantText(step.value.message));
 * }
 * ```
 */
export function runAgent<const T extends readonly Tool[], AfterDetails = never>(
  options: RunAgentOptions<T, AfterDetails>,
): AsyncGenerator<AgentEvent<T[number], AfterDetails>, AgentResult, undefined> {
  checkRunAgentOptions(options);
  // Type-level only: the batches' events are the tools' own.
  return agentLoop(options) as AsyncGenerator<AgentEvent, AgentResult, undefined> as AsyncGenerator<AgentEvent<T[number], AfterDetails>, AgentResult, undefined>;
}

function checkRunAgentOptions(options: unknown): asserts options is RunAgentOptions {
  if (options === null || typeof options !== 'object') throw new TypeError(`runAgent: options must be an object, received ${describeValue(options)}`);
  const o = options as Record<string, unknown>;
  if (typeof o.model !== 'function') throw new TypeError(`runAgent: options.model must be a function (messages, context) => reply, received ${describeValue(o.model)}`);
  if (o.resume !== undefined) {
    const resume = o.resume as Record<string, unknown> | null;
    if (typeof resume !== 'object' || resume === null) throw new TypeError(`runAgent: options.resume must be an object { state, approvals }, received ${describeValue(resume)}`);
    if (o.messages !== undefined) {
      throw new TypeError('runAgent: options.messages must be left out with options.resume: the paused state carries the history the run continues from');
    }
    if (resume.approvals !== undefined && !Array.isArray(resume.approvals)) {
      throw new TypeError(`runAgent: options.resume.approvals must be an array of { approvalId, approved, reason? }, received ${describeValue(resume.approvals)}`);
    }
    checkClaim(resume.claim, o.signingSecret, 'runAgent');
  } else if (!Array.isArray(o.messages)) throw new TypeError(`runAgent: options.messages must be an array of messages, received ${describeValue(o.messages)}`);
  const max = o.maxTurns;
  if (max !== undefined && !(max === Infinity || (Number.isInteger(max) && (max as number) > 0))) {
    throw new TypeError(`runAgent: options.maxTurns must be a positive integer or Infinity, received ${describeValue(max)}`);
  }
  if (o.signal !== undefined && !(o.signal instanceof AbortSignal)) {
    throw new TypeError(`runAgent: options.signal must be an AbortSignal, received ${describeValue(o.signal)}`);
  }
  // Every batch option, with runTools' own checks and messages (the signal was checked above).
  checkRunToolsArguments([], { ...o, signal: undefined, resume: undefined, journal: undefined });
  checkJournalOptions(o.journal, undefined, 'runAgent', 'modelReply', 'batch');
  checkToolTable(o.tools as readonly unknown[]);
}

/**
 * What `runTools` checks of its tool list when a run is created (each tool's shape, unique
 * names), with its messages: a malformed list fails at `runAgent()`, not at the first batch.
 */
function checkToolTable(tools: readonly unknown[]): void {
  const names = new Map<string, number>();
  tools.forEach((tool, i) => {
    assertToolShape(tool, `runTools: options.tools[${i}]`);
    const first = names.get(tool.name);
    if (first !== undefined) throw new TypeError(`runTools: options.tools has two tools named "${tool.name}" (at ${first} and ${i}); names must be unique`);
    names.set(tool.name, i);
  });
}

async function* agentLoop(options: RunAgentOptions): AsyncGenerator<AgentEvent, AgentResult, undefined> {
  const { model, tools, messages = [], maxTurns = DEFAULT_MAX_TURNS, signal: caller, resume, journal, ...batchOptions } = options;
  // One map of standing decisions (H11) for every turn's batch: a decision given with
  // `always: true` in turn 2, or in the resume of a paused turn (the batch's state carries
  // the map's entries), answers the requests of later turns too.
  (batchOptions as { [STANDING_DECISIONS]?: Map<string, StandingDecision> })[STANDING_DECISIONS] = new Map();
  const history: AgentMessage[] = [...messages];
  // One scope for the run: the model and every batch get its signal. It follows the
  // caller's signal through one listener, removed by close() (A6), and aborts when the
  // consumer leaves (A5).
  const scope = new CancelScope();
  scope.listen(caller);
  const signal = scope.signal;
  let turn = 0;
  let completed = false;
  try {
    // A resumed run: its first turn is the paused one, its batch continued.
    let resumed: AsyncGenerator<AgentEvent, TurnOutcome, undefined> | undefined;
    if (resume !== undefined) {
      const restored = await readPausedAgentState(resume.state, batchOptions.signingSecret, batchOptions.maxStateChars ?? DEFAULTS.maxStateChars);
      history.push(...restored.messages);
      turn = restored.turn;
      const { state: _state, ...decisions } = resume;
      resumed = resumedTurn({ message: restored.message, batch: restored.batch }, decisions, { turn, tools, signal, batchOptions, journal });
    }
    let reason: AgentEndReason;
    let error: { error: unknown } | undefined;
    let paused: AgentResult['paused'];
    for (;;) {
      let outcome: TurnOutcome;
      if (resumed !== undefined) {
        outcome = yield* resumed;
        resumed = undefined;
      } else {
        if (signal.aborted) {
          reason = 'aborted';
          break;
        }
        turn++;
        yield { type: 'turn_start', turn };
        outcome = yield* runTurn(model, history, { turn, tools, signal, batchOptions, journal });
      }
      if (outcome.paused !== undefined && outcome.message !== undefined) {
        if (outcome.error === undefined) {
          // The turn stays out of the history until it resumes: what is returned is valid to send.
          const state = await pausedAgentState({ turn, messages: history, message: outcome.message, batch: outcome.paused.state, signingSecret: batchOptions.signingSecret });
          paused = { requests: outcome.paused.requests, state };
          reason = 'paused';
          break;
        }
        // The model failed: nothing to continue from, so no pause; the pending calls end not run.
        outcome.results = yield* answerPending(outcome.message, outcome.paused, { turn, tools, signal, batchOptions }, MODEL_FAILED_BEFORE_APPROVAL);
      }
      if (outcome.message !== undefined) history.push(outcome.message);
      history.push(...outcome.results);
      yield { type: 'turn_end', turn, message: outcome.message, toolResults: outcome.results };
      if (signal.aborted) {
        reason = 'aborted';
        break;
      }
      if (outcome.error !== undefined) {
        reason = 'error';
        error = outcome.error;
        break;
      }
      if (outcome.results.length === 0) {
        reason = outcome.message?.stopReason === 'aborted' ? 'aborted' : 'completed';
        break;
      }
      if (outcome.terminate) {
        reason = 'terminated';
        break;
      }
      if (turn >= maxTurns) {
        reason = 'max_turns';
        break;
      }
    }
    const result: AgentResult = { messages: history, reason, turns: turn };
    if (error !== undefined) result.error = error.error;
    if (paused !== undefined) result.paused = paused;
    yield { type: 'agent_end', ...result };
    completed = true;
    return result;
  } finally {
    // The consumer left: the model call in flight and the running tools are stopped (A5).
    // An earlier abort (the caller's) wins: its reason stays the signal's.
    if (!completed && !signal.aborted) {
      scope.abort('consumer', new DOMException('The consumer stopped iterating runAgent before the run ended', 'AbortError'));
    }
    scope.close();
  }
}
