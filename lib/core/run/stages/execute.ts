/**
 * Stage 2, execute (contract P4, A1–A4): starts a prepared call's tool with its own signal
 * (the call record is its cancellation scope), and turns every way it can end into an
 * {@link Outcome}.
 *
 * The tool's steps do not pass through a wrapper generator: an async-generator tool is
 * handed to the merge engine as it is, a promise-returning one as a one-step iterator, and
 * a synchronous one ends right here. The run (run.ts) maps the merge records back to calls.
 *
 * @module
 */
import type { AbortCause } from '../../streams/abort.ts';
import { CallContext, type CallRecord } from '../call.ts';
import { textContent } from '../../values/content.ts';
import type { ContentBlock } from '../../tool/content.ts';
import type { ToolResult } from '../../tool/tool.ts';
import { Problem, readTimeoutLimit, readToolOutput } from '../../values/foreign.ts';
import { isAsyncIterator, isPromiseLike, thrownText } from '../../values/guards.ts';
import { Outcome, outcomeText, thrownDetails } from './outcome.ts';

/**
 * The time limit of a tool whose `timeoutMs` is a function of its input (A4), read as stage 2
 * begins, once the input is validated: set on the record, or, when the function threw or
 * gave no usable limit, the outcome of a call that is not run.
 */
export function readCallTimeout(record: CallRecord, limitOf: (input: unknown) => unknown): Outcome | undefined {
  const limit = readTimeoutLimit(limitOf, record.args);
  if (limit instanceof Problem) return outcomeText('rejected', `Tool "${record.call.name}" was not run: its timeoutMs function ${limit.problem}. This is a problem in the tool definition, not in your call.`);
  record.timeoutMs = limit;
  return undefined;
}

/**
 * Calls the tool's `execute` with the validated input and a context whose `signal` is the
 * call's own. Returns the iterator to merge — the async generator itself, or a promise seen
 * as a one-step iterator — or, for a synchronous throw or value, the outcome at once (P4).
 */
export function executeToolCall(record: CallRecord): AsyncIterator<unknown, unknown, undefined> | Outcome {
  let output: unknown;
  try {
    output = record.tool!.execute(record.args, new CallContext(record));
  } catch (error) {
    return thrownOutcome(record, error);
  }
  if (isAsyncIterator(output)) return output;
  if (isPromiseLike(output)) return new OneStep(output);
  return returnedOutcome(record, output);
}

/** What the outcome texts need of a call. */
interface Stopped {
  readonly call: { readonly name: string };
  readonly timeoutMs: number | undefined;
  readonly cause: AbortCause | undefined;
}

/**
 * The outcome of a tool that returned `value` (its text is bounded later, with every
 * result's, when the call completes). A success — unless its signal had aborted before it
 * returned (`stoppedBy`: the run's abort or its timeout): then it is `interrupted` or
 * `timed_out` (A2, A4), and what the tool returned (a killed command's output, say)
 * follows a first text block that says so.
 */
export function returnedOutcome(record: Stopped, value: unknown, stoppedBy: AbortCause | undefined = record.cause): Outcome {
  const toolName = record.call.name;
  const read = readToolOutput(value);
  if (read instanceof Problem && stoppedBy === undefined) return outcomeText('error', unusableResultText(toolName, read.problem));
  const result = read instanceof Problem ? { content: textContent(unusableResultText(toolName, read.problem)) } : read;
  if (stoppedBy === undefined) return new Outcome(result, false, 'ok');
  const notice =
    stoppedBy === 'timeout'
      ? `Tool "${toolName}" timed out after ${record.timeoutMs} ms; what it returned when stopped follows.`
      : `Interrupted: the run was aborted while tool "${toolName}" was running; what it returned when stopped follows.`;
  const content: ContentBlock[] = [{ type: 'text', text: notice }];
  for (const block of result.content) content.push(block);
  const merged: ToolResult = { content };
  if (result.details !== undefined) merged.details = result.details;
  if (result.meta !== undefined) merged.meta = result.meta;
  if (result.terminate !== undefined) merged.terminate = result.terminate;
  return new Outcome(merged, true, stoppedBy === 'timeout' ? 'timed_out' : 'interrupted');
}

/**
 * The outcome of a tool that threw: its own failure, or — when its signal had aborted
 * before it threw (`stoppedBy`) — the consequence of the run's abort or its timeout. An
 * `AbortError` the tool raised on its own (its fetch timed out, say) is an ordinary
 * failure: the run was not cancelled (case C10, variant V). A failure's result keeps the
 * `details` of an `ErrorWithDetails` (an adapter's peer that failed with data). The thrown
 * value is kept on the outcome (`thrown`) for the trace and the end event's `error` (O7).
 */
export function thrownOutcome(record: Stopped, error: unknown, stoppedBy: AbortCause | undefined = record.cause): Outcome {
  const toolName = record.call.name;
  let outcome: Outcome;
  switch (stoppedBy) {
    case 'timeout':
      outcome = outcomeText('timed_out', `Tool "${toolName}" timed out after ${record.timeoutMs} ms and was stopped.`);
      break;
    case 'run':
    case 'consumer':
      outcome = outcomeText(
        'interrupted',
        `Interrupted: the run was aborted while tool "${toolName}" was running; it stopped before finishing and may have had partial effects.`,
      );
      break;
    default: {
      outcome = outcomeText('error', thrownText(error));
      const details = thrownDetails(error);
      if (details !== undefined) outcome.result.details = details;
    }
  }
  // The trace records what the tool threw (its class, an exception event), whatever the outcome.
  outcome.thrown = { value: error };
  return outcome;
}

/** The outcome of a tool that did not settle within the grace period after its signal aborted (A3, case C9). */
export function abandonedOutcome(record: Stopped): Outcome {
  const toolName = record.call.name;
  return record.cause === 'timeout'
    ? outcomeText(
        'timed_out',
        `Tool "${toolName}" timed out after ${record.timeoutMs} ms and did not stop when asked; its outcome is unknown and it may still be running.`,
      )
    : outcomeText(
        'abandoned',
        `Interrupted: the run was aborted while tool "${toolName}" was running, and the tool did not confirm cancellation; its outcome is unknown (it may have finished or had partial effects).`,
      );
}

function unusableResultText(toolName: string, problem: string): string {
  return `Tool "${toolName}" returned a result toolrun cannot use: ${problem}.`;
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

