/**
 * Stage 1, prepare (contract P1, P2, P5): tool lookup, argument parsing,
 * `prepareArguments`, validation, `beforeToolCall`. Runs serially in call order (the
 * scheduler guarantees it), so a permission prompt in `beforeToolCall` asks about one call
 * at a time (seed 002).
 *
 * @module
 */
import { abortable } from 'abort-controller-x';
import type { RunState } from '../run-state.ts';
import { parseArguments, validateArguments } from '../schema.ts';
import type { ToolCall } from '../tool.ts';
import { isPromiseLike } from './execute.ts';
import { isObjectRecord, readBeforeAnswer } from './foreign.ts';
import { errorText, finalizedText, type Finalized, type Prepared } from './outcome.ts';

/** Text of a call the run never started (contract A2; differs from the interrupted text). */
export function notRunText(call: ToolCall): string {
  return `Not run: the run was aborted before tool "${call.name}" started, so it had no effect. Call it again if it is still needed.`;
}

/** Text of a call whose arguments were cut off before they were complete (case C16). */
export function incompleteText(call: ToolCall): string {
  return (
    `Your call to tool "${call.name}" was cut off by ${call.incomplete} before its arguments were complete, so it was not run. ` +
    `Send the call again, shorter (for long content, split it across several calls).`
  );
}

/**
 * Prepares call `index`. Returns a {@link Prepared} call, or the call's final outcome when
 * it cannot run: `rejected` (unknown tool, bad arguments, a throwing `prepareArguments` or
 * `beforeToolCall`, a block) or `not_run` (the run stopped first). Never throws (P4).
 *
 * Synchronous when nothing on the way is asynchronous (no hook, a synchronous schema), so
 * a batch of plain calls pays for no promise here.
 */
export function prepareToolCall(run: RunState, index: number, call: ToolCall): Prepared | Finalized | Promise<Prepared | Finalized> {
  if (run.stopped) return finalizedText(index, call, 'not_run', notRunText(call));
  const name = call.name;
  const tool = run.tools.get(name);
  if (tool === undefined) {
    const text =
      name === ''
        ? `The tool call has no tool name. Available tools: ${run.toolNames}. Call one of these by name.`
        : `No tool named "${name}". Available tools: ${run.toolNames}. Call one of these instead.`;
    return finalizedText(index, call, 'rejected', text);
  }
  if (call.incomplete !== undefined) return finalizedText(index, call, 'rejected', incompleteText(call));
  const parsed = parseArguments(call.arguments, name);
  if (!parsed.ok) return finalizedText(index, call, 'rejected', parsed.message);

  let args: unknown = parsed.value;
  if (tool.prepareArguments !== undefined) {
    try {
      args = tool.prepareArguments(args);
    } catch (error) {
      return finalizedText(index, call, 'rejected', `Tool "${name}" could not read its arguments: ${errorText(error)}`);
    }
    if (isPromiseLike(args)) {
      return Promise.resolve(args).then(
        (value: unknown) => validateAndAsk(run, index, call, value),
        (error: unknown) => finalizedText(index, call, 'rejected', `Tool "${name}" could not read its arguments: ${errorText(error)}`),
      );
    }
  }
  return validateAndAsk(run, index, call, args);
}

function validateAndAsk(run: RunState, index: number, call: ToolCall, args: unknown): Prepared | Finalized | Promise<Prepared | Finalized> {
  const tool = run.tools.get(call.name)!;
  if (!isObjectRecord(args)) {
    return finalizedText(index, call, 'rejected', `Tool "${call.name}" could not read its arguments: prepareArguments returned a non-object.`);
  }
  const checked = validateArguments(tool.input, args as Record<string, unknown>, call.name);
  if (isPromiseLike(checked)) {
    return Promise.resolve(checked).then(
      (c) => (c.ok ? ask(run, { kind: 'prepared', index, call, tool, args: c.value }) : finalizedText(index, call, 'rejected', c.message)),
      (error: unknown) => finalizedText(index, call, 'rejected', `Tool "${call.name}" could not validate its arguments: ${errorText(error)}`),
    );
  }
  if (!checked.ok) return finalizedText(index, call, 'rejected', checked.message);
  return ask(run, { kind: 'prepared', index, call, tool, args: checked.value });
}

/** Runs `beforeToolCall`, if any; its wait ends at once when the run stops (case C24). */
function ask(run: RunState, prepared: Prepared): Prepared | Finalized | Promise<Prepared | Finalized> {
  const hook = run.options.beforeToolCall;
  if (hook === undefined) return prepared;
  const { index, call } = prepared;
  let answer: ReturnType<typeof hook>;
  try {
    answer = hook({ toolCall: call, index, tool: prepared.tool, args: prepared.args, signal: run.abort.signal });
  } catch (error) {
    return hookFailed(run, prepared, error);
  }
  if (!isPromiseLike(answer)) return decide(run, prepared, answer);
  return abortable(run.abort.signal, Promise.resolve(answer)).then(
    (a) => decide(run, prepared, a),
    (error: unknown) => hookFailed(run, prepared, error),
  );
}

function decide(run: RunState, prepared: Prepared, answer: unknown): Prepared | Finalized {
  const { index, call } = prepared;
  // The hook may have aborted the run itself (case C7 B): the call must not start.
  if (run.stopped) return finalizedText(index, call, 'not_run', notRunText(call));
  const read = readBeforeAnswer(answer);
  if (!read.ok) return hookFailed(run, prepared, read.problem);
  if (read.value.block) {
    const text = read.value.reason ?? `Tool call "${call.name}" was blocked by the application and did not run.`;
    return finalizedText(index, call, 'rejected', text);
  }
  return prepared;
}

function hookFailed(run: RunState, prepared: Prepared, error: unknown): Finalized {
  const { index, call } = prepared;
  if (run.stopped) return finalizedText(index, call, 'not_run', notRunText(call));
  return finalizedText(index, call, 'rejected', `Tool call "${call.name}" was not run: beforeToolCall failed: ${errorText(error)}`);
}
