/**
 * One turn of the agent loop: the model's reply, then its tool batch. A streamed reply and
 * its batch run side by side (contract S4): `runTools` reads the calls from a
 * {@link Channel} as the stream delivers them.
 *
 * @module
 */
import { abortable } from 'abort-controller-x';
import type { PausedBatch, PausedBatchState, ResumeOptions } from '../../core/approval/approval.ts';
import type { ToolBatch } from '../../core/run/events.ts';
import { JournalError, type AgentJournal, type JournalValueEntry, type ToolJournal } from '../../core/seams/journal.ts';
import type { RunToolsOptions } from '../../core/run/options.ts';
import { runTools } from '../../core/run/run-tools.ts';
import { Channel } from '../../core/streams/channel.ts';
import { closeWithoutWaiting, mergeGenerators } from '../../core/streams/merge.ts';
import { describeValue } from '../../core/values/guards.ts';
import type { Tool, ToolCall, ToolResultMessage } from '../../core/tool/tool.ts';
import { toolCallsOf, type AgentEvent, type AgentMessage, type AgentModel, type AssistantMessage, type ModelReply, type ModelStream } from './messages.ts';
import { isAssistantMessage, MessageBuilder, readModelStream, type StreamEnd } from './model-stream.ts';
import { isPromiseLike } from '../../core/values/guards.ts';

/** How one turn went. */
export interface TurnOutcome {
  message: AssistantMessage | undefined;
  results: ToolResultMessage[];
  terminate: boolean;
  /** The model failed (reason `error`). */
  error?: { error: unknown };
  /** The batch ended paused: `results` are only those released before the pause. */
  paused?: PausedBatch;
}

/** What a turn needs from the loop. */
export interface TurnSetup {
  turn: number;
  tools: readonly Tool[];
  signal: AbortSignal;
  batchOptions: Omit<RunToolsOptions, 'tools' | 'signal' | 'journal'>;
  /** The run's journal (J8); `undefined`: none. */
  journal?: AgentJournal | undefined;
}

/** One turn: the model's reply, then its tool batch. Yields the turn's events; returns what happened. */
export async function* runTurn(model: AgentModel, history: readonly AgentMessage[], setup: TurnSetup): AsyncGenerator<AgentEvent, TurnOutcome, undefined> {
  const { turn, tools, signal, journal } = setup;
  let entry: JournalValueEntry<unknown> | undefined;
  if (journal !== undefined) {
    // J8: the turn's reply is opened before the model is asked; a journaled one is used instead.
    entry = openReply(journal, turn);
    let prior: unknown;
    try {
      prior = await abortable(signal, Promise.resolve(entry.prior));
    } catch (error) {
      if (signal.aborted) return { message: undefined, results: [], terminate: false };
      throw new JournalError('model-reply', turn, `the model reply of turn ${turn}`, error);
    }
    if (prior !== undefined) {
      let message: AssistantMessage;
      try {
        message = checkAssistantMessage(prior);
      } catch (error) {
        throw new JournalError('model-reply', turn, `the model reply of turn ${turn}`, error);
      }
      yield { type: 'message', turn, message, replayed: true };
      return yield* turnBatch(message, setup);
    }
  }
  let reply: ModelReply;
  try {
    reply = model([...history], { signal, turn, tools });
  } catch (error) {
    return { message: undefined, results: [], terminate: false, error: { error } };
  }
  if (isAsyncIterable(reply) && !isPromiseLike(reply)) return yield* entry === undefined ? streamedTurn(reply as ModelStream, setup) : journaledStream(reply as ModelStream, setup, entry);

  let resolved: AssistantMessage | ModelStream;
  try {
    resolved = await abortable(signal, Promise.resolve(reply as AssistantMessage | PromiseLike<AssistantMessage | ModelStream>));
  } catch (error) {
    if (signal.aborted) return { message: undefined, results: [], terminate: false };
    return { message: undefined, results: [], terminate: false, error: { error } };
  }
  // An async model function that resolves to a stream.
  if (isAsyncIterable(resolved)) return yield* entry === undefined ? streamedTurn(resolved as ModelStream, setup) : journaledStream(resolved as ModelStream, setup, entry);
  let message: AssistantMessage;
  try {
    message = checkAssistantMessage(resolved);
  } catch (error) {
    return { message: undefined, results: [], terminate: false, error: { error } };
  }
  if (entry !== undefined) await commitReply(entry, turn, message);
  yield { type: 'message', turn, message };
  return yield* turnBatch(message, setup);
}

/** The batch of a turn's calls (with the turn's journal, J8). */
async function* turnBatch(message: AssistantMessage, setup: TurnSetup): AsyncGenerator<AgentEvent, TurnOutcome, undefined> {
  const calls = toolCallsOf(message);
  if (calls.length === 0) return { message, results: [], terminate: false };
  const options: RunToolsOptions = { ...setup.batchOptions, tools: setup.tools, signal: setup.signal };
  if (setup.journal !== undefined) options.journal = batchJournal(setup.journal, setup.turn);
  const batch: ToolBatch = yield* runTools(calls, options);
  return withPause({ message, results: batch.messages, terminate: batch.terminate }, batch);
}

function openReply(journal: AgentJournal, turn: number): JournalValueEntry<unknown> {
  try {
    return journal.modelReply(turn);
  } catch (error) {
    throw new JournalError('model-reply', turn, `the model reply of turn ${turn}`, error);
  }
}

function batchJournal(journal: AgentJournal, turn: number): ToolJournal {
  try {
    return journal.batch(turn);
  } catch (error) {
    throw new JournalError('open', turn, `the batch of turn ${turn}`, error);
  }
}

/** Commits turn `turn`'s reply (J8); a throw or rejection is a JournalError. */
async function commitReply(entry: JournalValueEntry<unknown>, turn: number, message: AssistantMessage): Promise<void> {
  try {
    await entry.commit(message);
  } catch (error) {
    throw new JournalError('model-reply', turn, `the model reply of turn ${turn}`, error);
  }
}

/**
 * A streamed reply in a journaled run (J8): read to its end — its text deltas as they come —
 * then committed, and only then are its calls handed out: a reply never committed may be
 * another on the next attempt, and the turn's batch entries must belong to the committed one.
 */
async function* journaledStream(stream: ModelStream, setup: TurnSetup, entry: JournalValueEntry<unknown>): AsyncGenerator<AgentEvent, TurnOutcome, undefined> {
  const { turn, signal } = setup;
  const channel = new Channel<ToolCall>({ highWaterMark: Infinity });
  const builder = new MessageBuilder();
  const reading = readModelStream(stream, turn, signal, channel, builder);
  let step = await reading.next();
  for (; step.done !== true; step = await reading.next()) yield step.value;
  const end = step.value;
  if (end.kind !== 'ended') {
    // Aborted or broken: nothing is committed and no call runs; the calls that arrived are answered not run.
    const partial = builder.message(end.kind === 'aborted' ? 'aborted' : 'error');
    const stopped = signal.aborted ? signal : AbortSignal.abort(new DOMException('The model failed before its reply was complete', 'AbortError'));
    const results: ToolResultMessage[] = [];
    if (builder.calls.length > 0) {
      const batch: ToolBatch = yield* runTools(builder.calls.map(asCall), { ...setup.batchOptions, tools: setup.tools, signal: stopped });
      results.push(...batch.messages);
    }
    const message = partial.content.length > 0 ? partial : undefined;
    if (message !== undefined) yield { type: 'message', turn, message };
    const outcome: TurnOutcome = { message, results, terminate: false };
    if (end.kind === 'error') outcome.error = { error: end.error };
    return outcome;
  }
  const message = builder.message(end.stopReason, end.final);
  await commitReply(entry, turn, message);
  yield { type: 'message', turn, message };
  return yield* turnBatch(message, setup);
}

/** The paused turn a resumed run continues: its message and its batch's state. */
export interface PausedTurn {
  message: AssistantMessage;
  batch: PausedBatchState;
}

/**
 * The paused turn of a resumed run: its batch, continued with `resume` (approved calls run,
 * denied ones get their error results, unanswered ones stay pending). Why the batch's first
 * step is taken before anything is yielded: a state the batch cannot resume makes runTools'
 * first `next()` throw a `ResumeError`, and `runAgent` promises that error from its own first
 * `next()`, before any event. Then the turn is told from its start — `turn_start` and the
 * paused assistant message — so a consumer in a new process sees it whole.
 */
export async function* resumedTurn(paused: PausedTurn, resume: Omit<ResumeOptions, 'state'>, setup: TurnSetup): AsyncGenerator<AgentEvent, TurnOutcome, undefined> {
  const { turn, tools, signal } = setup;
  const options: RunToolsOptions = { ...setup.batchOptions, tools, signal, resume: { ...resume, state: paused.batch } };
  // A resumed turn's batch keeps its journal (J6): calls ended before the pause are carried by the state, resumed calls journaled.
  if (setup.journal !== undefined) options.journal = batchJournal(setup.journal, turn);
  const run = runTools(toolCallsOf(paused.message), options);
  let finished = false;
  try {
    let step = await run.next();
    yield { type: 'turn_start', turn };
    yield { type: 'message', turn, message: paused.message };
    for (; step.done !== true; step = await run.next()) yield step.value;
    finished = true;
    const batch = step.value;
    return withPause({ message: paused.message, results: batch.messages, terminate: batch.terminate }, batch);
  } finally {
    if (!finished) closeWithoutWaiting(run);
  }
}

/**
 * Answers the pending calls of a paused batch as not run, without asking anyone: for a turn
 * that cannot pause because its model failed (a broken stream). The batch is resumed on an
 * aborted signal, so its pending calls end `not_run`, as calls an abort stops before they
 * start; returns every result of the batch, in call order.
 */
export async function* answerPending(message: AssistantMessage, paused: PausedBatch, setup: TurnSetup, why: string): AsyncGenerator<AgentEvent, ToolResultMessage[], undefined> {
  const stopped = AbortSignal.abort(new DOMException(why, 'AbortError'));
  // Without `approve`: nobody is to be asked about a call that cannot run.
  const { approve: _approve, ...options } = setup.batchOptions;
  // The state was made by this run a moment ago and never left it: nothing to claim in a
  // store (the process's memory still consumes its id); a claim is required with a secret.
  const claim = (): boolean => true;
  const batch = yield* runTools(toolCallsOf(message), { ...options, tools: setup.tools, signal: stopped, resume: { state: paused.state, claim } });
  return batch.messages;
}

function withPause(outcome: TurnOutcome, batch: ToolBatch): TurnOutcome {
  if (batch.paused !== undefined) outcome.paused = batch.paused;
  return outcome;
}

/**
 * A streamed turn: the model's stream and the tool batch run side by side through one
 * merge — `runTools` reads the calls from a channel as the stream delivers them (S4).
 */
async function* streamedTurn(stream: ModelStream, setup: TurnSetup): AsyncGenerator<AgentEvent, TurnOutcome, undefined> {
  const { turn, tools, signal } = setup;
  // Never signals backpressure: the reader must go on reading text while the batch is busy.
  const channel = new Channel<ToolCall>({ highWaterMark: Infinity });
  const builder = new MessageBuilder();
  const reading = readModelStream(stream, turn, signal, channel, builder);
  const batchRun = runTools(channel, { ...setup.batchOptions, tools, signal });
  const merged = mergeGenerators<AgentEvent, StreamEnd | ToolBatch>([reading, batchRun]);
  let streamEnd: StreamEnd | undefined;
  let batch: ToolBatch | undefined;
  let message: AssistantMessage | undefined;
  let finished = false;
  try {
    for (;;) {
      const step = await merged.next();
      if (step.done === true) break;
      const item = step.value;
      if (!item.done) {
        yield item.value;
      } else if (item.index === 0) {
        streamEnd = item.value as StreamEnd;
        if (streamEnd.kind === 'ended') {
          message = builder.message(streamEnd.stopReason, streamEnd.final);
          yield { type: 'message', turn, message };
        }
      } else {
        batch = item.value as ToolBatch;
      }
    }
    finished = true;
  } finally {
    if (!finished) closeWithoutWaiting(merged);
  }
  const results = [...batch!.messages];
  // Calls the stream delivered after runTools stopped reading them (an abort: runTools
  // answers the calls it received and lets go of the channel, A2). runTools answers these
  // too, on the turn's aborted signal, so they get the same not-run events (O1); only
  // their indexes are shifted to follow the batch's.
  // A paused batch read every call (it pauses only once the stream is done): its calls after
  // the released prefix are pending or held, not leftovers.
  const leftovers = batch!.paused === undefined ? builder.calls.slice(results.length) : [];
  if (leftovers.length > 0) {
    const offset = results.length;
    // Only an abort leaves calls unread; the fallback signal makes sure none of them can run.
    const stopped = signal.aborted ? signal : AbortSignal.abort(new DOMException('The batch stopped reading calls', 'AbortError'));
    const notRun = runTools(leftovers.map(asCall), { ...setup.batchOptions, tools, signal: stopped });
    let answered = false;
    try {
      for (let step = await notRun.next(); ; step = await notRun.next()) {
        if (step.done === true) {
          answered = true;
          results.push(...step.value.messages);
          break;
        }
        yield { ...step.value, index: step.value.index + offset };
      }
    } finally {
      if (!answered) closeWithoutWaiting(notRun);
    }
  }
  if (streamEnd!.kind !== 'ended') {
    // Aborted or broken mid-stream: keep what arrived (its calls are all answered), unless nothing did.
    const partial = builder.message(streamEnd!.kind === 'aborted' ? 'aborted' : 'error');
    if (partial.content.length > 0) {
      message = partial;
      yield { type: 'message', turn, message };
    }
  }
  const outcome: TurnOutcome = withPause({ message, results, terminate: batch!.terminate && results.length === batch!.messages.length }, batch!);
  if (streamEnd!.kind === 'error') outcome.error = { error: streamEnd!.error };
  return outcome;
}

/** Checks the model's reply is an assistant message; throws a TypeError that shows what came instead. */
function checkAssistantMessage(value: unknown): AssistantMessage {
  if (!isAssistantMessage(value)) {
    throw new TypeError(
      `runAgent: the model must return an assistant message { role: 'assistant', content: [...] } (convert provider replies with fromAnthropicMessage / fromOpenAIChatMessage), received ${describeValue(value)}`,
    );
  }
  return value;
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

/** A streamed call as `runTools` takes it from an array: string `id` and `name` (the stream path coerces them the same way). */
function asCall(call: ToolCall): ToolCall {
  if (typeof call.id === 'string' && typeof call.name === 'string') return call;
  return { ...call, id: typeof call.id === 'string' ? call.id : '', name: typeof call.name === 'string' ? call.name : '' };
}
