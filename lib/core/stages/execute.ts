/**
 * Stage 2, execute (contract P4, A1–A4): starts a prepared call's tool under its own
 * {@link CallScope}, and turns every way it can end into an {@link Executed} value.
 *
 * The tool's steps do not pass through a wrapper generator: an async-generator tool is
 * handed to the merge engine as it is, a promise-returning one as a one-step iterator, and
 * a synchronous one ends right here. The scheduler maps the merge records back to calls.
 *
 * @module
 */
import type { AbortCause, CallScope } from '../abort.ts';
import { textContent, type ContentBlock, type ToolContext } from '../tool.ts';
import { readToolOutput } from './foreign.ts';
import { errorText, type Executed, type Prepared } from './outcome.ts';

/** How a tool's `execute` answered: with steps still to come, or at once. */
export type Started =
  | { kind: 'steps'; iterator: AsyncIterator<unknown, unknown, undefined> }
  | { kind: 'ended'; executed: Executed };

/**
 * Calls the tool's `execute` with the validated input and a context whose `signal` is the
 * call's own. A synchronous throw or value ends the call at once (P4); a promise becomes a
 * one-step iterator; an async generator is returned as it is.
 */
export function startExecution(prepared: Prepared, scope: CallScope): Started {
  const { call, tool } = prepared;
  let output: unknown;
  try {
    output = tool.execute(prepared.args, new CallContext(call.id, call.name, prepared.index, scope));
  } catch (error) {
    return { kind: 'ended', executed: executedFromThrow(scope, call.name, error) };
  }
  if (isAsyncIterator(output)) return { kind: 'steps', iterator: output };
  if (isPromiseLike(output)) return { kind: 'steps', iterator: new OneStep(output) };
  return { kind: 'ended', executed: executedFromReturn(scope, call.name, output) };
}

/**
 * The outcome of a tool that returned `value` (its text is bounded later, with every
 * result's, when the call completes). A success — unless its
 * signal had aborted before it returned (`stoppedBy`: the run's abort or its timeout): then
 * it is `interrupted` or `timed_out` (A2, A4), and what the tool returned (a killed
 * command's output, say) follows a first text block that says so.
 */
export function executedFromReturn(
  scope: CallScope,
  toolName: string,
  value: unknown,
  stoppedBy: AbortCause | undefined = scope.cause,
): Executed {
  const read = readToolOutput(value);
  if (!read.ok && stoppedBy === undefined) return errorExecuted('error', unusableResultText(toolName, read.problem));
  const result = read.ok ? read.value : { content: textContent(unusableResultText(toolName, read.problem)) };
  if (stoppedBy === undefined) return { result, isError: false, outcome: 'ok' };
  const notice =
    stoppedBy === 'timeout'
      ? errorExecuted('timed_out', `Tool "${toolName}" timed out after ${scope.timeoutMs} ms; what it returned when stopped follows.`)
      : errorExecuted('interrupted', `Interrupted: the run was aborted while tool "${toolName}" was running; what it returned when stopped follows.`);
  return { ...notice, result: { ...result, content: [...notice.result.content, ...result.content] } };
}

/**
 * The outcome of a tool that threw: its own failure, or — when its signal had aborted
 * before it threw (`stoppedBy`) — the consequence of the run's abort or its timeout. An
 * `AbortError` the tool raised on its own (its fetch timed out, say) is an ordinary
 * failure: the run was not cancelled (case C10, variant V).
 */
export function executedFromThrow(scope: CallScope, toolName: string, error: unknown, stoppedBy: AbortCause | undefined = scope.cause): Executed {
  switch (stoppedBy) {
    case 'timeout':
      return errorExecuted('timed_out', `Tool "${toolName}" timed out after ${scope.timeoutMs} ms and was stopped.`);
    case 'run':
    case 'consumer':
      return errorExecuted(
        'interrupted',
        `Interrupted: the run was aborted while tool "${toolName}" was running; it stopped before finishing and may have had partial effects.`,
      );
    default:
      return errorExecuted('error', errorText(error));
  }
}

/** The outcome of a tool that did not settle within the grace period after its signal aborted (A3, case C9). */
export function executedAbandoned(scope: CallScope, toolName: string): Executed {
  return scope.cause === 'timeout'
    ? errorExecuted(
        'timed_out',
        `Tool "${toolName}" timed out after ${scope.timeoutMs} ms and did not stop when asked; its outcome is unknown and it may still be running.`,
      )
    : errorExecuted(
        'abandoned',
        `Interrupted: the run was aborted while tool "${toolName}" was running, and the tool did not confirm cancellation; its outcome is unknown (it may have finished or had partial effects).`,
      );
}

function unusableResultText(toolName: string, problem: string): string {
  return `Tool "${toolName}" returned a result toolrun cannot use: ${problem}.`;
}

function errorExecuted(outcome: Executed['outcome'], text: string): Executed {
  return { result: { content: textContent(text) }, isError: true, outcome };
}

/**
 * Bounds the text of a whole result — every text block together — to `maxChars`
 * characters (case C20): the first ¾ and the last ¼ of the text are kept, in their blocks,
 * around one marker that says how much was cut; text blocks wholly inside the cut are
 * dropped, other blocks (images) are kept. A result within the bound is returned as is
 * (no copy).
 */
export function boundResult<R extends { content: ContentBlock[] }>(result: R, maxChars: number): R {
  const content = result.content;
  let total = 0;
  for (let i = 0; i < content.length; i++) {
    const block = content[i]!;
    if (block.type === 'text') total += block.text.length;
  }
  if (total <= maxChars) return result;
  const tail = Math.floor(maxChars / 4);
  const cutFrom = maxChars - tail;
  const cutTo = total - tail;
  const marker = `\n[truncated: ${total} chars, ${total - maxChars} cut; showing ${maxChars}]\n`;
  const kept: ContentBlock[] = [];
  let start = 0;
  for (const block of content) {
    if (block.type !== 'text') {
      kept.push(block);
      continue;
    }
    const end = start + block.text.length;
    let text = start < cutFrom ? block.text.slice(0, Math.min(end, cutFrom) - start) : '';
    // The marker goes where the cut starts: in the block holding position `cutFrom`.
    const markerHere = start <= cutFrom && cutFrom < end;
    if (markerHere) text += marker;
    if (end > cutTo) text += block.text.slice(Math.max(start, cutTo) - start);
    if (text !== '') kept.push({ type: 'text', text });
    start = end;
  }
  return { ...result, content: kept };
}

/** The `ToolContext` a tool receives; `signal` is made when the tool first reads it. */
class CallContext implements ToolContext {
  constructor(
    readonly toolCallId: string,
    readonly toolName: string,
    readonly index: number,
    readonly scope: CallScope,
  ) {}

  get signal(): AbortSignal {
    return this.scope.signal;
  }
}

/** A promise seen as an iterator with one step: its value is the return value. */
class OneStep implements AsyncIterator<unknown, unknown, undefined> {
  readonly #promise: PromiseLike<unknown>;
  #taken = false;
  constructor(promise: PromiseLike<unknown>) {
    this.#promise = promise;
  }
  next(): Promise<IteratorResult<unknown, unknown>> {
    if (this.#taken) return Promise.resolve({ done: true, value: undefined });
    this.#taken = true;
    return Promise.resolve(this.#promise).then(asReturn);
  }
  /** Settles when the tool's promise settles: its own cleanup has run by then (A5). */
  return(): Promise<IteratorResult<unknown, unknown>> {
    return Promise.resolve(this.#promise).then(asDone, asDone);
  }
}

function asDone(): IteratorResult<unknown, unknown> {
  return { done: true, value: undefined };
}

function asReturn(value: unknown): IteratorResult<unknown, unknown> {
  return { done: true, value };
}

/** True for async iterators (async generators included). */
export function isAsyncIterator(value: unknown): value is AsyncIterator<unknown, unknown, undefined> {
  if (typeof value !== 'object' || value === null) return false;
  try {
    return typeof (value as AsyncIterator<unknown>).next === 'function' && Symbol.asyncIterator in value;
  } catch {
    return false; // a revoked Proxy: the result reader reports it
  }
}

/** True for promises and other thenables; false (never a throw) for a value whose `then` cannot be read. */
export function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return false;
  try {
    return typeof (value as PromiseLike<unknown>).then === 'function';
  } catch {
    return false; // a revoked Proxy or a throwing `then` getter: not a promise; its reader reports it
  }
}
