/**
 * Stage 1, prepare (contract P1, P2, P5, H1, H2): tool lookup, argument parsing,
 * `prepareArguments`, validation, the tool's `needsApproval` (then `approve`, or a
 * deferral), `beforeToolCall` (which may itself ask for approval). Runs serially in call
 * order (the run guarantees it), so a permission prompt in `beforeToolCall` or `approve`
 * asks about one call at a time (seed 002).
 *
 * @module
 */
import { abortable } from 'abort-controller-x';
import { approvalRequest, deniedText, standingDecision, type ResumePlan, type StandingDecision, type ToolApprovalRequest } from '../../approval/approval.ts';
import type { CallRecord } from '../call.ts';
import type { InterruptedCallPolicy, JournaledDecision, JournalOperation } from '../../seams/journal.ts';
import type { RunToolsOptions } from '../options.ts';
import { parseArguments, validateArguments, type Checked } from '../../schema/schema.ts';
import type { Tool, ToolCall } from '../../tool/tool.ts';
import { readApprovalAnswer, readBeforeAnswer } from '../../values/foreign.ts';
import { fromThrow, isRuleDenial, outcomeText, type Outcome } from './outcome.ts';
import { isObjectRecord, isPromiseLike, thrownText } from '../../values/guards.ts';

/** What prepare reads of the run: nothing more. */
export interface PrepareInput {
  /** True once the run was aborted or the consumer left: nothing new may start. */
  readonly stopped: boolean;
  /** The available tool names, for "unknown tool" errors. */
  readonly toolNames: string;
  readonly beforeToolCall: RunToolsOptions['beforeToolCall'];
  /** The run's signal, handed to `beforeToolCall` (read only if the hook reads it). */
  readonly signal: AbortSignal;
  readonly approve: RunToolsOptions['approve'];
  /** What a resumed run starts from (`undefined` for a fresh run): the pending calls' requests and decisions. */
  readonly resumed: ResumePlan | undefined;
  /** Decisions that stand for a tool (H11), by name: read before `approve` is asked, written by an answer with `always: true`. */
  readonly standing: Map<string, StandingDecision>;
}

/**
 * What prepare gives when a call waits for a person's approval (H3): its request is on
 * `record.approval`.
 */
export const DEFERRED = Symbol('deferred');

/** The outcome of prepare: an outcome (the call will not run), `undefined` (it may run), or {@link DEFERRED}. */
export type Prepared = Outcome | undefined | typeof DEFERRED;

/** Text of a call the run never started (contract A2; differs from the interrupted text). */
function notRunText(call: ToolCall): string {
  return `Not run: the run was aborted before tool "${call.name}" started, so it had no effect. Call it again if it is still needed.`;
}

/** The outcome of a call the run never started (A2). */
export function notRun(call: ToolCall): Outcome {
  return outcomeText('not_run', notRunText(call));
}

/** Text of a call whose arguments were cut off before they were complete (case C16). */
function incompleteText(call: ToolCall): string {
  return (
    `Your call to tool "${call.name}" was cut off by ${call.incomplete} before its arguments were complete, so it was not run. ` +
    `Send the call again, shorter (for long content, split it across several calls).`
  );
}

/**
 * Prepares `record` (its `tool` already looked up). Returns `undefined` when the call may
 * run — its validated arguments are then on `record.args` — or the call's outcome when it
 * cannot: `rejected` (unknown tool, bad arguments, a throwing `prepareArguments`, schema or
 * `beforeToolCall`, a block) or `not_run` (the run stopped first). Never throws (P4).
 *
 * Synchronous when nothing on the way is asynchronous (no hook, a synchronous schema), so
 * a batch of plain calls pays for no promise here.
 */
export function prepareToolCall(run: PrepareInput, record: CallRecord): Prepared | Promise<Prepared> {
  const call = record.call;
  if (run.stopped) return notRun(call);
  // A call pending in a resumed batch (H5): a denial answers it before anything else runs.
  if (run.resumed !== undefined) {
    const pending = run.resumed.pending.get(record.index);
    if (pending !== undefined) {
      const decision = pending.decision;
      if (decision !== undefined && !decision.approved) {
        const denied = (): Outcome => outcomeText('rejected', deniedText(call.name, decision.reason));
        const journaled = record.journal;
        if (journaled === undefined) return denied();
        // A deferred call never ran (J5); the resume's decision is journaled like one from approve (J6).
        journaled.unknown = false;
        return journaled.decision !== undefined ? denied() : journalDecision(run as JournalInput, record, false, decision.reason, denied);
      }
      record.approval = pending.request;
    }
  }
  const name = call.name;
  const tool = record.tool;
  if (tool === undefined) {
    const available = run.toolNames;
    const text =
      available === ''
        ? `${name === '' ? 'The tool call has no tool name' : `No tool named ${quotedName(name)}`}. No tools are available in this turn: answer without calling a tool.`
        : name === ''
          ? `The tool call has no tool name. Available tools: ${available}. Call one of these by name.`
          : `No tool named ${quotedName(name)}. Available tools: ${available}. Call one of these instead.`;
    return decidedByRun(record, outcomeText('rejected', text));
  }
  if (call.incomplete !== undefined) return decidedByRun(record, outcomeText('rejected', incompleteText(call)));
  // Arguments that are already an object (Anthropic's, most callers') skip the parser.
  let args: unknown = call.arguments;
  if (!isObjectRecord(args)) {
    const parsed = parseArguments(args, name);
    if (!parsed.ok) return decidedByRun(record, outcomeText('rejected', parsed.message));
    args = parsed.value;
  }
  if (tool.prepareArguments !== undefined) return prepareWithShim(run, record, tool, args);
  // The plain path, in one function: a fresh process runs it in V8's interpreter, where each
  // call of a helper costs (counted by `bench/cold-calls.ts`).
  const checked = validateArguments(tool.input, args as Record<string, unknown>, name);
  // validateArguments' only promise is its own (an async Standard Schema).
  if (checked instanceof Promise) return afterAsyncValidation(run, record, tool, checked);
  // Synchronous, on the model's own arguments: a failure is the run's decision (J5).
  if (!checked.ok) return decidedByRun(record, outcomeText('rejected', checked.message));
  record.args = checked.value;
  const rule = tool.needsApproval;
  // Nothing to ask: no pending approval of a resumed batch, no rule, no beforeToolCall.
  if (record.approval === undefined && (rule === undefined || rule === false) && run.beforeToolCall === undefined) return undefined;
  return validated(run, record, tool);
}

/** Prepare from `prepareArguments` on (a synchronous or asynchronous shim), then validation and approval. */
function prepareWithShim(run: PrepareInput, record: CallRecord, tool: Tool, parsed: unknown): Prepared | Promise<Prepared> {
  const name = record.call.name;
  let args: unknown;
  try {
    args = tool.prepareArguments!(parsed);
  } catch (error) {
    return fromThrow(outcomeText('rejected', `Tool "${name}" could not read its arguments: ${thrownText(error)}`), error);
  }
  if (isPromiseLike(args)) {
    // Foreign code that may never settle: its wait ends when the run stops, as the hooks' do.
    return abortable(run.signal, Promise.resolve(args)).then(
      (value: unknown) => (run.stopped ? notRun(record.call) : validateShimmed(run, record, tool, value)),
      (error: unknown) => (run.stopped ? notRun(record.call) : fromThrow(outcomeText('rejected', `Tool "${name}" could not read its arguments: ${thrownText(error)}`), error)),
    );
  }
  return validateShimmed(run, record, tool, args);
}

/**
 * A rejection the run decided before any code of the application or the tool ran: no tool
 * of that name, arguments cut off or not JSON, or a synchronous schema validation of the
 * model's own arguments (no `prepareArguments`). It is a function of the call and the tools
 * alone, so an earlier attempt decided the same and never ran the tool: a call found
 * `'started'` gets this result, not "outcome unknown" (J5). Not for an async schema (it may
 * ask a service whose answer changes), `prepareArguments`, `needsApproval`, `approve` or
 * `beforeToolCall`: code with possible effects whose answer may differ between attempts.
 */
function decidedByRun(record: CallRecord, outcome: Outcome): Outcome {
  if (record.journal !== undefined) record.journal.unknown = false;
  return outcome;
}

/** Validation of what `prepareArguments` made (its failure is not the run's own decision, J5), then approval. */
function validateShimmed(run: PrepareInput, record: CallRecord, tool: Tool, args: unknown): Prepared | Promise<Prepared> {
  const name = record.call.name;
  if (!isObjectRecord(args)) {
    return outcomeText('rejected', `Tool "${name}" could not read its arguments: prepareArguments returned a non-object.`);
  }
  const checked = validateArguments(tool.input, args, name);
  if (checked instanceof Promise) return afterAsyncValidation(run, record, tool, checked);
  if (!checked.ok) return outcomeText('rejected', checked.message);
  record.args = checked.value;
  return validated(run, record, tool);
}

/**
 * An async schema (a refinement that asks a server) may never settle: the wait ends when
 * the run stops, and the call is answered "not run" like every call not started. Its
 * failure is not the run's own decision (J5: its answer may differ between attempts).
 */
function afterAsyncValidation(run: PrepareInput, record: CallRecord, tool: Tool, checking: Promise<Checked<unknown>>): Promise<Prepared> {
  const name = record.call.name;
  return abortable(run.signal, checking).then(
    (checked) => {
      if (run.stopped) return notRun(record.call);
      if (!checked.ok) return outcomeText('rejected', checked.message);
      record.args = checked.value;
      return validated(run, record, tool);
    },
    (error: unknown) => (run.stopped ? notRun(record.call) : fromThrow(outcomeText('rejected', `Tool "${name}" could not validate its arguments: ${thrownText(error)}`), error)),
  );
}

/** After validation (`record.args` set): a pending approval of a resumed batch, the tool's rule, then `beforeToolCall`. */
function validated(run: PrepareInput, record: CallRecord, tool: Tool): Prepared | Promise<Prepared> {
  // A call pending in a resumed batch: its rule or hook already asked (H1), the decision is the resume's.
  if (record.approval !== undefined) return resumedApproval(run, record, tool, record.approval);
  const rule = tool.needsApproval;
  if (rule === undefined || rule === false) return ask(run, record, tool);
  return toolRule(run, record, tool, rule);
}

/** The tool's own `needsApproval` (H1): `true`, or a function of the validated input. */
function toolRule(run: PrepareInput, record: CallRecord, tool: Tool, rule: Exclude<NonNullable<Tool['needsApproval']>, false>): Prepared | Promise<Prepared> {
  if (rule === true) return requestApproval(run, record, tool, approvalRequest(record.call, record.index, record.args, 'tool', undefined));
  let answer: unknown;
  try {
    answer = rule(record.args, { toolCall: record.call, index: record.index });
  } catch (error) {
    return ruleThrew(run, record, error);
  }
  if (!isPromiseLike(answer)) return afterRule(run, record, tool, answer);
  return abortable(run.signal, Promise.resolve(answer)).then(
    (a) => afterRule(run, record, tool, a),
    (error: unknown) => ruleThrew(run, record, error),
  );
}

function afterRule(run: PrepareInput, record: CallRecord, tool: Tool, answer: unknown): Prepared | Promise<Prepared> {
  if (run.stopped) return notRun(record.call);
  if (answer === false) return ask(run, record, tool);
  if (answer !== true) return ruleFailed(run, record, `returned ${typeof answer === 'object' ? (answer === null ? 'null' : 'an object') : typeof answer}, not a boolean`);
  return requestApproval(run, record, tool, approvalRequest(record.call, record.index, record.args, 'tool', undefined));
}

/** A throwing rule: a {@link RuleDenial} refuses the call with its own text; anything else is a problem in the tool (P4). */
function ruleThrew(run: PrepareInput, record: CallRecord, error: unknown): Outcome {
  if (run.stopped) return notRun(record.call);
  if (isRuleDenial(error)) return outcomeText('rejected', thrownText(error));
  return fromThrow(ruleFailed(run, record, `threw ${thrownText(error)}`), error);
}

function ruleFailed(run: PrepareInput, record: CallRecord, problem: string): Outcome {
  if (run.stopped) return notRun(record.call);
  return outcomeText('rejected', `Tool "${record.call.name}" was not run: its needsApproval ${problem}. This is a problem in the tool definition, not in your call.`);
}

/** A call pending in a resumed batch, its arguments validated again: approved, it goes on where the request stopped it; unanswered, it is asked again (H5). */
function resumedApproval(run: PrepareInput, record: CallRecord, tool: Tool, request: ToolApprovalRequest): Prepared | Promise<Prepared> {
  const decision = run.resumed!.pending.get(record.index)?.decision;
  if (decision === undefined) return requestApproval(run, record, tool, request);
  record.approval = undefined;
  // Approved: a request of the tool's rule has not met beforeToolCall yet; one of the hook's is allowed (H1).
  const journaled = record.journal;
  // No closure on this path, once per resumed call (under tsx each closure also has its name set: ~1 µs).
  if (journaled === undefined) return request.source === 'tool' ? ask(run, record, tool) : undefined;
  const goOn = (): Prepared | Promise<Prepared> => (request.source === 'tool' ? ask(run, record, tool) : undefined);
  // A deferred call never ran (J5); the resume's decision is journaled like one from approve (J6).
  journaled.unknown = false;
  return journaled.decision !== undefined ? goOn() : journalDecision(run as JournalInput, record, true, undefined, goOn);
}

/**
 * Asks the run's `approve` function about `request`, if there is one (H2): approved, the
 * call goes on (to `beforeToolCall` after the tool's rule, to execute after the hook's);
 * denied, it is rejected; no answer (or no function), it is deferred (H3).
 */
function requestApproval(run: PrepareInput, record: CallRecord, tool: Tool, request: ToolApprovalRequest): Prepared | Promise<Prepared> {
  record.approval = request;
  const journaled = record.journal;
  if (journaled !== undefined) {
    // A decision an earlier attempt journaled: nobody is asked twice (J6).
    // (One given with always already stands again: the journal stage set it when it read the prior.)
    if (journaled.decision !== undefined) return decided(record, tool, run, journaled.decision.approved, journaled.decision.reason);
    // No decision journaled: no earlier attempt ran the call (a decision is journaled before it runs), so it is not "unknown" (J5).
    journaled.unknown = false;
  }
  // A decision that stands for this tool answers without asking (H11); journaled like one from approve (J6).
  const standing = run.standing.get(record.call.name);
  if (standing !== undefined) {
    const { approved: yes, reason } = standing;
    if (journaled !== undefined) return journalDecision(run as JournalInput, record, yes, reason, () => decided(record, tool, run, yes, reason));
    return decided(record, tool, run, yes, reason);
  }
  const approve = run.approve;
  if (approve === undefined) return DEFERRED;
  let answer: unknown;
  try {
    answer = approve(request, {
      get signal() {
        return run.signal;
      },
    });
  } catch (error) {
    return fromThrow(approveFailed(run, record, thrownText(error)), error);
  }
  if (!isPromiseLike(answer)) return approved(run, record, tool, answer);
  return abortable(run.signal, Promise.resolve(answer)).then(
    (a) => approved(run, record, tool, a),
    (error: unknown) => fromThrow(approveFailed(run, record, thrownText(error)), error),
  );
}

function approved(run: PrepareInput, record: CallRecord, tool: Tool, answer: unknown): Prepared | Promise<Prepared> {
  if (run.stopped) return notRun(record.call);
  const read = readApprovalAnswer(answer);
  if (!read.ok) return approveFailed(run, record, read.problem);
  if (read.value === undefined) return DEFERRED;
  const { approved: yes, reason } = read.value;
  // From now on this decision answers every request for the tool (H11): prepare is serial, so "from now on" is "the calls after this one".
  if (read.value.always) run.standing.set(record.call.name, standingDecision(yes, reason));
  // Journaled before the call goes on (J6): a crash after this point asks nobody again.
  if (record.journal !== undefined) return journalDecision(run as JournalInput, record, yes, reason, () => decided(record, tool, run, yes, reason), read.value.always);
  return decided(record, tool, run, yes, reason);
}

/** A decision on the call's request (from `approve`, or journaled): denied, it is rejected; approved, it goes on. */
function decided(record: CallRecord, tool: Tool, run: PrepareInput, yes: boolean, reason: string | undefined): Prepared | Promise<Prepared> {
  if (!yes) {
    // Denied: it never ran, whatever an earlier attempt did (J5).
    if (record.journal !== undefined) record.journal.unknown = false;
    return outcomeText('rejected', deniedText(record.call.name, reason));
  }
  const source = record.approval!.source;
  record.approval = undefined;
  return source === 'tool' ? ask(run, record, tool) : undefined;
}

function approveFailed(run: PrepareInput, record: CallRecord, problem: string): Outcome {
  if (run.stopped) return notRun(record.call);
  return outcomeText('rejected', `Tool call "${record.call.name}" was not run: asking for its approval failed: ${problem}`);
}

/** Runs `beforeToolCall`, if any; its wait ends at once when the run stops (case C24). */
function ask(run: PrepareInput, record: CallRecord, tool: Tool): Prepared | Promise<Prepared> {
  const hook = run.beforeToolCall;
  if (hook === undefined) return undefined;
  let answer: unknown;
  try {
    answer = hook({
      toolCall: record.call,
      index: record.index,
      tool,
      args: record.args,
      get signal() {
        return run.signal;
      },
    });
  } catch (error) {
    return hookFailed(run, record, error);
  }
  if (!isPromiseLike(answer)) return decide(run, record, tool, answer);
  return abortable(run.signal, Promise.resolve(answer)).then(
    (a) => decide(run, record, tool, a),
    (error: unknown) => hookFailed(run, record, error),
  );
}

function decide(run: PrepareInput, record: CallRecord, tool: Tool, answer: unknown): Prepared | Promise<Prepared> {
  const call = record.call;
  // The hook may have aborted the run itself (case C7 B): the call must not start.
  if (run.stopped) return notRun(call);
  const read = readBeforeAnswer(answer);
  if (!read.ok) return hookFailed(run, record, read.problem, false);
  if (read.value.block) {
    const text = read.value.reason ?? `Tool call "${call.name}" was blocked by the application and did not run.`;
    const outcome = outcomeText('rejected', text);
    // P6: the only rejected outcome that carries terminate; the run reads it when the call ends (Run.#emitEnd, InOrderRelease.countTerminate).
    if (read.value.terminate) outcome.result.terminate = true;
    return outcome;
  }
  if (read.value.needsApproval) return requestApproval(run, record, tool, approvalRequest(call, record.index, record.args, 'hook', read.value.reason));
  return undefined;
}

/** `beforeToolCall` threw `error` (the call's trace records it), or answered what it cannot (`problem`, a text: no throw). */
function hookFailed(run: PrepareInput, record: CallRecord, error: unknown, threw = true): Outcome {
  const call = record.call;
  if (run.stopped) return notRun(call);
  const outcome = outcomeText('rejected', `Tool call "${call.name}" was not run: beforeToolCall failed: ${thrownText(error)}`);
  return threw ? fromThrow(outcome, error) : outcome;
}

/** What the journaled stages read of the run, beyond prepare's input. */
export interface JournalInput extends PrepareInput {
  readonly interruptedCalls: InterruptedCallPolicy;
  /** Notes that the journal failed on `operation` for `record` (the run fails with a `JournalError`); gives the outcome the call ends with meanwhile (never committed nor emitted). */
  journalFailed(record: CallRecord, operation: JournalOperation, error: unknown): Outcome;
}

/**
 * Journals a person's decision (H2) before the call goes on (J6); `next` continues the
 * call's prepare once `decide` settled. A throw or rejection is a journal failure.
 */
function journalDecision(
  run: JournalInput,
  record: CallRecord,
  approved: boolean,
  reason: string | undefined,
  next: () => Prepared | Promise<Prepared>,
  always = false,
): Prepared | Promise<Prepared> {
  const decision: JournaledDecision = { approved, ...(reason === undefined ? {} : { reason }), ...(always ? { always } : {}) };
  let settled: unknown;
  try {
    settled = record.journal!.entry.decide(decision);
  } catch (error) {
    return run.journalFailed(record, 'decide', error);
  }
  if (!isPromiseLike(settled)) return next();
  return abortable(run.signal, Promise.resolve(settled)).then(next, (error: unknown) =>
    run.stopped ? notRun(record.call) : run.journalFailed(record, 'decide', error),
  );
}

/** How many characters of an unknown tool name the error text repeats. */
const NAME_SHOWN = 100;

/**
 * An unknown tool name as the error text quotes it: in JSON's double quotes and escapes, so
 * no control character the model sent is written raw into the text (a terminal, a log line),
 * and cut to {@link NAME_SHOWN} characters with "…": the model chose the name, and a
 * megabyte-long one must not come back to it (and to the next request) in full.
 */
function quotedName(name: string): string {
  return JSON.stringify(name.length > NAME_SHOWN ? `${name.slice(0, NAME_SHOWN)}…` : name);
}
