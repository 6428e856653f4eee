/**
 * What the three stream adapters share: the calls being assembled, when each may be
 * handed to `runTools`, how the message's end (or a break) finishes the rest, and what is
 * reported about that end.
 *
 * A call is yielded **as soon as its arguments are known to be complete**, and never
 * before: the assistant message may still be streaming, and `runTools` starts the call at
 * once (contract S4). "Known complete" is per provider (see each adapter), but one rule
 * holds everywhere: text that does not parse as JSON is never run as if it were complete,
 * and partial JSON is never repaired (case C16). When the message ends early — output
 * limit, content filter, broken stream — a call whose arguments are not complete JSON is
 * yielded with `incomplete` set, so `runTools` answers it with the cut-off error and never
 * runs it.
 *
 * @module
 */
import { describeValue, type ToolCall } from '../core/tool.ts';
import { emitWarning } from '../core/platform.ts';
import { providerEvents, type ProviderStream } from './sse.ts';

/**
 * How a streamed assistant message ended, as a stream adapter saw it:
 * - `complete`: the provider's stop event arrived with a reason that means the model
 *   finished (Anthropic `tool_use`, `end_turn`, `pause_turn`; Chat `tool_calls`, `stop`;
 *   Responses `completed`).
 * - `truncated`: the provider ended the message early — output limit (Anthropic
 *   `max_tokens`, `model_context_window_exceeded`; Chat `length`; Responses `incomplete`),
 *   content filter, refusal, stop sequence, or a reason toolrun does not know.
 * - `broken`: the stream threw, sent an error event (Anthropic `error`, Responses `error`
 *   or `response.failed`, a Chat chunk with `error`), or ended without its stop event.
 */
export type ToolCallStreamStatus = 'complete' | 'truncated' | 'broken';

/** What a stream adapter reports at the end of the message (`onMessageEnd`, and the generator's return value). */
export interface ToolCallStreamEnd {
  status: ToolCallStreamStatus;
  /**
   * The provider's own word for the end, as sent: Anthropic `stop_reason`
   * (`"tool_use"`, `"max_tokens"`, …), Chat `finish_reason` (`"tool_calls"`, `"length"`, …),
   * Responses `"completed"`, the `incomplete_details.reason` of an incomplete response
   * (`"max_output_tokens"`, `"content_filter"`) or `"failed"`. `null` when none arrived.
   */
  stopReason: string | null;
  /** Tool calls in the message, all yielded (or being yielded) by the adapter. */
  calls: number;
  /** Those of them yielded with `incomplete` set (never run by `runTools`). */
  incompleteCalls: number;
  /** The error that broke the stream (status `broken`): the source's own error, or a {@link StreamBrokenError}. */
  error?: unknown;
}

/** Options of the stream adapters (`fromAnthropicStream`, `fromOpenAIChatStream`, `fromOpenAIResponsesStream`). */
export interface ToolCallStreamOptions {
  /**
   * Called once, as soon as the message's end is known — the stop event, or the break —
   * before the calls still pending are yielded. Not called when the consumer stops reading
   * the adapter first (e.g. the run was aborted). A throw here is reported as a process
   * warning, not raised.
   */
  onMessageEnd?: (end: ToolCallStreamEnd) => void;
}

/**
 * The stream broke without an error of its own: the provider sent an error event, or the
 * stream ended before the message's stop event. Thrown by the stream adapters after every
 * call has been yielded (see `docs/decisions.md`, "Streaming").
 */
export class StreamBrokenError extends Error {
  override readonly name = 'StreamBrokenError';
  /** The provider's error event, when there was one (as received). */
  readonly event: unknown;
  constructor(message: string, event?: unknown) {
    super(message);
    this.event = event;
  }
}

/** One call being assembled from the stream. */
export interface PendingCall {
  id: string;
  name: string;
  /** The argument fragments joined so far (or the provider's final arguments text). */
  text: string;
  /** Arguments a start event carried, used when no fragment ever arrived (Anthropic's `content_block_start.input`). */
  initial: unknown;
  /** The provider marked the end of this call's arguments (Anthropic `content_block_stop`, Responses `output_item.done`). */
  closed: boolean;
  /** A later content block or call has started: the model moved on from this one. */
  later: boolean;
  /** The provider said this call was cut (Responses item `status: "incomplete"`). */
  cut: boolean;
  /** Memo of {@link completeJson} for `text` of length `parsedLength`. */
  parsed?: { value: unknown } | undefined;
  parsedLength?: number;
}

/** A new pending call: `text` is the arguments text so far, `initial` what a start event carried (see {@link PendingCall}). */
export function pendingCall(id: string, name: string, text = '', initial: unknown = undefined): PendingCall {
  return { id, name, text, initial, closed: false, later: false, cut: false };
}

/**
 * `{ value }` when `call.text` is one complete JSON document that can be a whole argument text
 * (an object, array, string, `true`/`false`/`null`), else `undefined`. A number is never
 * "complete": `12` may be the start of `123`. A prefix of a JSON object that parses is
 * the whole object — nothing may follow its closing brace — so this tells a finished
 * argument text from a cut one without repairing anything.
 */
export function completeJson(call: PendingCall): { value: unknown } | undefined {
  if (call.parsedLength === call.text.length) return call.parsed;
  call.parsedLength = call.text.length;
  call.parsed = undefined;
  const trimmed = call.text.trimEnd();
  const last = trimmed.at(-1);
  // Cheap pre-check: an object, array or string ends with its closing character.
  if (last === '}' || last === ']' || last === '"' || last === 'e' || last === 'l') {
    try {
      const value: unknown = JSON.parse(trimmed);
      if (typeof value !== 'number') call.parsed = { value };
    } catch {
      // not (yet) complete JSON
    }
  }
  return call.parsed;
}

/** The end of the message as an adapter read it from the provider's stop event. */
export interface MessageEnding {
  stopReason: string | null;
  /** `undefined` when the model finished; else the reason text for the calls cut off, e.g. `the output limit (finish_reason "length")`. */
  cut: string | undefined;
}

/** Reads one provider's events into calls. Each adapter subclasses it. */
export abstract class StreamAssembler {
  /** Calls in call order (the order their first event arrived). */
  protected readonly calls: PendingCall[] = [];
  #next = 0;
  #incomplete = 0;
  /** Set by `push` when the message's stop event arrived. */
  ending: MessageEnding | undefined;
  /** The provider's stop reason seen so far (kept for a broken stream's report). */
  stopReason: string | null = null;

  /** E.g. `"Anthropic"`, for error messages. */
  abstract readonly provider: string;
  /** The stop event, described for the "ended early" error. */
  abstract readonly stopEvent: string;
  /**
   * Arguments that parse to an object are yielded as that object (Anthropic, where the
   * non-streamed `tool_use.input` is an object), else as the raw text (OpenAI, where
   * `arguments` is a string in the non-streamed form too).
   */
  protected abstract readonly objectArguments: boolean;

  /** Reads one event. Throws {@link StreamBrokenError} for a provider error event. */
  abstract push(event: unknown): void;
  /** While the message streams: may this call run now? (Earlier calls are already yielded.) */
  protected abstract isReady(call: PendingCall): boolean;
  /** When the message ended early: are this call's arguments complete anyway? */
  protected abstract completeOnCut(call: PendingCall): boolean;

  /** Every call in the message so far. */
  get count(): number {
    return this.calls.length;
  }

  /** Calls flagged `incomplete` so far. */
  get incompleteCount(): number {
    return this.#incomplete;
  }

  /** Takes the calls that may run now, in call order. */
  takeReady(): ToolCall[] {
    const out: ToolCall[] = [];
    while (this.#next < this.calls.length && this.isReady(this.calls[this.#next]!)) out.push(this.#complete(this.calls[this.#next++]!));
    return out;
  }

  /**
   * The message ended: takes every call not yet yielded. `cut` undefined (the model
   * finished): each as it is. Else each whose arguments are complete anyway as it is, the
   * others flagged `incomplete: cut`.
   */
  finish(cut: string | undefined): ToolCall[] {
    const out: ToolCall[] = [];
    while (this.#next < this.calls.length) {
      const call = this.calls[this.#next++]!;
      if (cut === undefined || this.completeOnCut(call)) out.push(this.#complete(call));
      else {
        this.#incomplete++;
        const flagged: ToolCall = { id: call.id, name: call.name, incomplete: cut };
        // The partial text is kept for display (`tool_execution_start.args`); it is never parsed.
        if (call.text !== '') flagged.arguments = call.text;
        out.push(flagged);
      }
    }
    return out;
  }

  #complete(call: PendingCall): ToolCall {
    return { id: call.id, name: call.name, arguments: this.#arguments(call) };
  }

  #arguments(call: PendingCall): unknown {
    if (call.text.trim() === '') {
      const initial = call.initial;
      return typeof initial === 'object' && initial !== null && !Array.isArray(initial) && Object.keys(initial).length > 0 ? initial : {};
    }
    if (this.objectArguments) {
      const parsed = completeJson(call);
      const value = parsed?.value;
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value;
    }
    return call.text;
  }
}

/**
 * Drives an assembler over a provider stream and yields the calls: each as soon as it is
 * ready, the rest at the message's end. See the adapters for the contract; in short:
 * - the stop event: `onMessageEnd`, then the pending calls; the stream is then read to its
 *   end (so an SDK can finish its own bookkeeping), and the generator returns the report;
 * - a break (the source throws, an error event, no stop event): the pending calls — the
 *   unfinished ones flagged `incomplete` — then `onMessageEnd`, then the error is thrown.
 */
export async function* driveToolCallStream(
  source: ProviderStream,
  assembler: StreamAssembler,
  options: ToolCallStreamOptions,
): AsyncGenerator<ToolCall, ToolCallStreamEnd, undefined> {
  let end: ToolCallStreamEnd | undefined;
  let failure: { error: unknown } | undefined;
  try {
    for await (const event of providerEvents(source)) {
      if (end !== undefined) continue; // after the stop event: read to the end, nothing more to do
      assembler.push(event);
      for (const call of assembler.takeReady()) yield call;
      const ending = assembler.ending;
      if (ending === undefined) continue;
      const finals = assembler.finish(ending.cut);
      end = {
        status: ending.cut === undefined ? 'complete' : 'truncated',
        stopReason: ending.stopReason,
        calls: assembler.count,
        incompleteCalls: assembler.incompleteCount,
      };
      report(options, end);
      for (const call of finals) yield call;
    }
  } catch (error) {
    failure = { error };
  }
  if (end === undefined) {
    const error =
      failure?.error ??
      new StreamBrokenError(`the ${assembler.provider} stream ended before the message's stop event (${assembler.stopEvent})`);
    const cut =
      failure === undefined
        ? 'the stream ending early, before the message was complete'
        : `the stream breaking (${error instanceof StreamBrokenError ? error.message : summarize(error)})`;
    const finals = assembler.finish(cut);
    end = { status: 'broken', stopReason: assembler.stopReason, calls: assembler.count, incompleteCalls: assembler.incompleteCount, error };
    report(options, end);
    for (const call of finals) yield call;
    throw error;
  }
  if (failure !== undefined) throw failure.error;
  return end;
}

function report(options: ToolCallStreamOptions, end: ToolCallStreamEnd): void {
  const listener = options.onMessageEnd;
  if (listener === undefined) return;
  try {
    listener(end);
  } catch (error) {
    emitWarning(`toolrun: onMessageEnd threw and was ignored: ${String(error)}`);
  }
}

/** One line, at most 200 characters: `Name: message`, or the message alone for a plain `Error`. */
export function summarize(error: unknown): string {
  const text =
    error instanceof Error ? (error.name === 'Error' || error.name === '' ? error.message : `${error.name}: ${error.message}`) : String(error);
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}

/** Checks an adapter's arguments at once (before the stream is read); throws a `TypeError` naming the field. */
export function checkStreamArguments(where: string, stream: unknown, options: unknown): asserts options is ToolCallStreamOptions {
  const iterable =
    typeof stream === 'string' || (typeof stream === 'object' && stream !== null && (Symbol.asyncIterator in stream || Symbol.iterator in stream));
  if (!iterable) {
    throw new TypeError(`${where}: expected an async iterable of stream events or SSE chunks, received ${describeValue(stream)}`);
  }
  if (typeof options !== 'object' || options === null) throw new TypeError(`${where}: options must be an object, received ${describeValue(options)}`);
  const listener = (options as { onMessageEnd?: unknown }).onMessageEnd;
  if (listener !== undefined && typeof listener !== 'function') {
    throw new TypeError(`${where}: options.onMessageEnd must be a function, received ${describeValue(listener)}`);
  }
}
