/**
 * Stage 1, prepare (contract P1, P2, P5): tool lookup, argument parsing,
 * `prepareArguments`, validation, `beforeToolCall`. Runs serially in call order (the run
 * guarantees it), so a permission prompt in `beforeToolCall` asks about one call at a time
 * (seed 002).
 *
 * @module
 */
import { abortable } from 'abort-controller-x';
import type { CallRecord } from '../call.ts';
import type { RunToolsOptions } from '../options.ts';
import { parseArguments, validateArguments, type Checked } from '../schema.ts';
import type { Tool, ToolCall } from '../tool.ts';
import { isPromiseLike } from './execute.ts';
import { isObjectRecord, readBeforeAnswer } from './foreign.ts';
import { errorText, outcomeText, type Outcome } from './outcome.ts';

/** What prepare reads of the run: nothing more. */
export interface PrepareInput {
  /** True once the run was aborted or the consumer left: nothing new may start. */
  readonly stopped: boolean;
  /** The available tool names, for "unknown tool" errors. */
  readonly toolNames: string;
  readonly beforeToolCall: RunToolsOptions['beforeToolCall'];
  /** The run's signal, handed to `beforeToolCall` (read only if the hook reads it). */
  readonly signal: AbortSignal;
}

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
export function prepareToolCall(run: PrepareInput, record: CallRecord): Outcome | undefined | Promise<Outcome | undefined> {
  const call = record.call;
  if (run.stopped) return notRun(call);
  const name = call.name;
  const tool = record.tool;
  if (tool === undefined) {
    const available = run.toolNames;
    const text =
      available === ''
        ? `${name === '' ? 'The tool call has no tool name' : `No tool named "${name}"`}. No tools are available in this turn: answer without calling a tool.`
        : name === ''
          ? `The tool call has no tool name. Available tools: ${available}. Call one of these by name.`
          : `No tool named "${name}". Available tools: ${available}. Call one of these instead.`;
    return outcomeText('rejected', text);
  }
  if (call.incomplete !== undefined) return outcomeText('rejected', incompleteText(call));
  // Arguments that are already an object (Anthropic's, most callers') skip the parser.
  let args: unknown = call.arguments;
  if (!isObjectRecord(args)) {
    const parsed = parseArguments(args, name);
    if (!parsed.ok) return outcomeText('rejected', parsed.message);
    args = parsed.value;
  }
  if (tool.prepareArguments !== undefined) {
    try {
      args = tool.prepareArguments(args);
    } catch (error) {
      return outcomeText('rejected', `Tool "${name}" could not read its arguments: ${errorText(error)}`);
    }
    if (isPromiseLike(args)) {
      // Foreign code that may never settle: its wait ends when the run stops, as the hooks' do.
      return abortable(run.signal, Promise.resolve(args)).then(
        (value: unknown) => (run.stopped ? notRun(record.call) : validateAndAsk(run, record, tool, value)),
        (error: unknown) => (run.stopped ? notRun(record.call) : outcomeText('rejected', `Tool "${name}" could not read its arguments: ${errorText(error)}`)),
      );
    }
  }
  return validateAndAsk(run, record, tool, args);
}

function validateAndAsk(run: PrepareInput, record: CallRecord, tool: Tool, args: unknown): Outcome | undefined | Promise<Outcome | undefined> {
  const name = record.call.name;
  if (!isObjectRecord(args)) {
    return outcomeText('rejected', `Tool "${name}" could not read its arguments: prepareArguments returned a non-object.`);
  }
  const checked = validateArguments(tool.input, args, name);
  if (isPromiseLike(checked)) {
    // An async schema (a refinement that asks a server) may never settle: the wait ends
    // when the run stops, and the call is answered "not run" like every call not started.
    return abortable(run.signal, Promise.resolve(checked)).then(
      (c) => (run.stopped ? notRun(record.call) : validated(run, record, tool, c)),
      (error: unknown) => (run.stopped ? notRun(record.call) : outcomeText('rejected', `Tool "${name}" could not validate its arguments: ${errorText(error)}`)),
    );
  }
  return validated(run, record, tool, checked);
}

function validated(run: PrepareInput, record: CallRecord, tool: Tool, checked: Checked<unknown>): Outcome | undefined | Promise<Outcome | undefined> {
  if (!checked.ok) return outcomeText('rejected', checked.message);
  record.args = checked.value;
  return ask(run, record, tool);
}

/** Runs `beforeToolCall`, if any; its wait ends at once when the run stops (case C24). */
function ask(run: PrepareInput, record: CallRecord, tool: Tool): Outcome | undefined | Promise<Outcome | undefined> {
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
  if (!isPromiseLike(answer)) return decide(run, record, answer);
  return abortable(run.signal, Promise.resolve(answer)).then(
    (a) => decide(run, record, a),
    (error: unknown) => hookFailed(run, record, error),
  );
}

function decide(run: PrepareInput, record: CallRecord, answer: unknown): Outcome | undefined {
  const call = record.call;
  // The hook may have aborted the run itself (case C7 B): the call must not start.
  if (run.stopped) return notRun(call);
  const read = readBeforeAnswer(answer);
  if (!read.ok) return hookFailed(run, record, read.problem);
  if (read.value.block) {
    const text = read.value.reason ?? `Tool call "${call.name}" was blocked by the application and did not run.`;
    const outcome = outcomeText('rejected', text);
    // P6: the only rejected outcome that carries terminate; the run reads it in #complete.
    if (read.value.terminate) outcome.result.terminate = true;
    return outcome;
  }
  return undefined;
}

function hookFailed(run: PrepareInput, record: CallRecord, error: unknown): Outcome {
  const call = record.call;
  if (run.stopped) return notRun(call);
  return outcomeText('rejected', `Tool call "${call.name}" was not run: beforeToolCall failed: ${errorText(error)}`);
}
