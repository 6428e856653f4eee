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
 * The stream is untrusted input, and events may come out of order, twice, or after the
 * message's end. The rule (docs/adr/0006-stream-adapters.md):
 * - **never run other arguments than the model sent**: a call whose arguments the adapter
 *   could not assemble exactly — its start was taken over by a duplicate start at the same
 *   index before it was complete, its block or item was never closed by a model that said
 *   it had finished, it started after the message's stop event — is yielded with
 *   `incomplete` set (answered "cut off … send it again", never run). Arguments are never
 *   filled in with `{}` for a call whose fragments may still be missing.
 * - **never lose a call**: every call the adapter saw a start for is yielded exactly once,
 *   so `runTools` answers each with exactly one result (contract O1) — including one that
 *   starts after the stop event.
 * - **a yielded call is sealed**: fragments that arrive for it afterwards are ignored. A
 *   call is yielded only once the provider closed it (Anthropic `content_block_stop`,
 *   Responses `output_item.done`) or its text is one complete JSON value and a later call
 *   has started (Chat); anything but whitespace after a complete JSON value would have made
 *   the text invalid, so no run is changed by such a fragment except that it would have
 *   been refused.
 *
 * Assembly is linear in the size of the arguments: fragments are kept in a list and
 * scanned once each (string and nesting state carried across fragments); the text is
 * joined and parsed once, when the scan says its top-level value has closed, or at the
 * message's end.
 *
 * @module
 */
import { describeValue } from '../core/values/guards.ts';
import type { ToolCall } from '../core/tool/tool.ts';
import { emitWarning } from '../core/values/platform.ts';
import { providerEvents, type ProviderStream } from './sse.ts';
import { thrownText } from '../core/values/guards.ts';

/**
 * How a streamed assistant message ended, as a stream adapter saw it:
 * - `complete`: the provider's stop event arrived with a reason that means the model
 *   finished (Anthropic `tool_use`, `end_turn`, `pause_turn`; Chat `tool_calls`, `stop`,
 *   `function_call`;
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
  /**
   * Tool calls in the message, all yielded (or being yielded) by the adapter. In the
   * generator's return value this also counts calls that started after the stop event
   * (each yielded `incomplete`); `onMessageEnd`, called at the stop event, cannot.
   */
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
   * the adapter first (e.g. the run was aborted). A throw here is reported as a
   * `ToolrunWarning` (`process.emitWarning` under Node, `console.warn` elsewhere), not raised.
   */
  onMessageEnd?: (end: ToolCallStreamEnd) => void;
}

/**
 * The stream broke without an error of its own: the provider sent an error event, or the
 * stream ended before the message's stop event. Thrown by the stream adapters after every
 * call has been yielded (see docs/adr/0006-stream-adapters.md).
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

/**
 * Where an incremental scan of an argument text stands (see {@link appendArguments}):
 * - `lead`: whitespace only so far;
 * - `value`: inside a top-level object, array or string;
 * - `done`: that value has closed, and only whitespace followed;
 * - `trailing`: something other than whitespace followed it — never valid JSON, whatever comes next;
 * - `scalar`: the text starts with something else (a number, `true`, …): decided only at the end.
 */
type ScanState = 'lead' | 'value' | 'done' | 'trailing' | 'scalar';

/**
 * One call being assembled from the stream.
 *
 * Invariants: `parts.join('')` is every argument fragment received for this call, in
 * arrival order (or the provider's final text, which replaced them); `scan` describes that
 * text and was computed over each fragment once, so assembly is linear in the text's size;
 * once `sealed`, the text never changes again.
 */
export interface PendingCall {
  id: string;
  name: string;
  /** The argument fragments received so far; joined once, when the call is yielded or checked. */
  parts: string[];
  /** Characters in `parts`. */
  length: number;
  /** Incremental JSON shape scan over `parts` (strings skipped, depth counted). */
  scan: { state: ScanState; depth: number; inString: boolean; escape: boolean };
  /** Arguments a start event carried, used when no fragment ever arrived (Anthropic's `content_block_start.input`). */
  initial: unknown;
  /** The provider marked the end of this call's arguments (Anthropic `content_block_stop`, Responses `output_item.done`). */
  closed: boolean;
  /** A later content block or call has started: the model moved on from this one. */
  later: boolean;
  /** The provider said this call was cut (Responses item `status: "incomplete"`). */
  cut: boolean;
  /** No more fragments are taken: the call was closed by the provider, yielded, or orphaned by an out-of-order event. */
  sealed: boolean;
  /**
   * Why this call's arguments cannot be assembled exactly (an out-of-order, duplicate or
   * late event); such a call is yielded with `incomplete` set to this text and never runs.
   */
  broken?: string | undefined;
  /** The provider's own item for this call, when the stream gave it whole (Responses `output_item.done`): the call's `providerItem`. */
  providerItem?: unknown;
  /** Memo of {@link completeJson}: `value` is the parse of the text while `scan.state` stays `done`. */
  parsed?: { value: unknown } | undefined;
  /** The text length `parsed` was computed for (`-1`: not computed). */
  parsedLength: number;
}

/** A new pending call: `text` is the arguments text so far, `initial` what a start event carried (see {@link PendingCall}). */
export function pendingCall(id: string, name: string, text = '', initial: unknown = undefined): PendingCall {
  const call: PendingCall = {
    id,
    name,
    parts: [],
    length: 0,
    scan: { state: 'lead', depth: 0, inString: false, escape: false },
    initial,
    closed: false,
    later: false,
    cut: false,
    sealed: false,
    parsedLength: -1,
  };
  if (text !== '') appendArguments(call, text);
  return call;
}

/**
 * Adds one argument fragment: O(fragment length). The scan follows strings (with escapes)
 * and nesting depth only — it tells "the top-level value has closed" from "still open",
 * and leaves validation to the one `JSON.parse` of {@link completeJson}.
 */
export function appendArguments(call: PendingCall, fragment: string): void {
  if (call.sealed || fragment === '') return;
  call.parts.push(fragment);
  call.length += fragment.length;
  const scan = call.scan;
  if (scan.state === 'trailing' || scan.state === 'scalar') return;
  // Next quote and backslash positions in the fragment, found with indexOf (native, fast)
  // and each searched again only once passed, so a fragment is still read once.
  let nextQuote = -2;
  let nextBackslash = -2;
  for (let i = 0; i < fragment.length; i++) {
    if (scan.state === 'value' && scan.inString && !scan.escape) {
      // Skip the string's ordinary characters in one step.
      if (nextQuote !== -1 && nextQuote < i) nextQuote = fragment.indexOf('"', i);
      if (nextBackslash !== -1 && nextBackslash < i) nextBackslash = fragment.indexOf('\\', i);
      const stop = Math.min(nextQuote === -1 ? fragment.length : nextQuote, nextBackslash === -1 ? fragment.length : nextBackslash);
      if (stop >= fragment.length) return;
      i = stop;
    }
    const c = fragment.charCodeAt(i);
    if (scan.state === 'value') {
      if (scan.inString) {
        if (scan.escape) scan.escape = false;
        else if (c === BACKSLASH) scan.escape = true;
        else if (c === QUOTE) {
          scan.inString = false;
          if (scan.depth === 0) scan.state = 'done';
        }
      } else if (c === QUOTE) scan.inString = true;
      else if (c === OPEN_BRACE || c === OPEN_BRACKET) scan.depth++;
      else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        scan.depth--;
        if (scan.depth <= 0) scan.state = 'done';
      }
    } else if (!isJsonWhitespace(c)) {
      if (scan.state === 'done') {
        scan.state = 'trailing';
        return;
      }
      // state 'lead': the first character decides the shape.
      if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        scan.state = 'value';
        scan.depth = 1;
      } else if (c === QUOTE) {
        scan.state = 'value';
        scan.inString = true;
      } else {
        scan.state = 'scalar';
        return;
      }
    }
  }
}

/** Replaces the text with the provider's final arguments text (Responses `…arguments.done`, `output_item.done`). */
export function replaceArguments(call: PendingCall, text: string): void {
  if (call.sealed) return;
  call.parts = [];
  call.length = 0;
  call.scan = { state: 'lead', depth: 0, inString: false, escape: false };
  call.parsed = undefined;
  call.parsedLength = -1;
  appendArguments(call, text);
}

/** The arguments text received so far (joined once; later calls reuse the joined string). */
function argumentText(call: PendingCall): string {
  if (call.parts.length > 1) call.parts = [call.parts.join('')];
  return call.parts[0] ?? '';
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

function isJsonWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/**
 * `{ value }` when the call's text is one complete JSON document that can be a whole
 * argument text (an object, array, string, `true`/`false`/`null`), else `undefined`. A
 * number is never "complete": `12` may be the start of `123`. A prefix of a JSON object
 * that parses is the whole object — nothing may follow its closing brace — so this tells a
 * finished argument text from a cut one without repairing anything.
 *
 * Cost: while the text is open (its top-level value not yet closed) this is O(1) and parses
 * nothing; once the value has closed the text is parsed once, and the answer is kept while
 * only whitespace follows. A text that is not an object, array or string (`true`, a number,
 * garbage) is parsed only when `final` is set — at the message's end — so a stream of any
 * number of fragments costs O(total size).
 */
export function completeJson(call: PendingCall, final = false): { value: unknown } | undefined {
  const state = call.scan.state;
  if (state === 'lead' || state === 'value' || state === 'trailing') return undefined;
  if (state === 'scalar' && !final) return undefined;
  // 'done' stays 'done' under whitespace: one parse answers for every later length.
  if (call.parsedLength !== -1 && (state === 'done' || call.parsedLength === call.length)) return call.parsed;
  call.parsedLength = call.length;
  call.parsed = undefined;
  try {
    const value: unknown = JSON.parse(argumentText(call));
    if (typeof value !== 'number') call.parsed = { value };
  } catch {
    // not complete JSON
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
  /** Calls in call order (the order their first event arrived). Every entry is yielded exactly once. */
  protected readonly calls: PendingCall[] = [];
  /** Index of the first call not yet yielded; every call before it was yielded once. */
  #next = 0;
  #incomplete = 0;
  /**
   * Set by the driver once the message's end has been handled: a call that starts after
   * it is recorded with this text as its `broken` reason, and yielded `incomplete` at once.
   */
  #late: string | undefined;
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
  /** While the message streams: may this (unbroken) call run now? (Earlier calls are already yielded.) */
  protected abstract isReady(call: PendingCall): boolean;
  /** When the message ended early: are this call's arguments complete anyway? */
  protected abstract completeOnCut(call: PendingCall): boolean;
  /**
   * When the model finished its message: `undefined` if this call's arguments are what the
   * model sent (yielded as they are), else the reason they are not known to be complete
   * (the call is yielded `incomplete`, e.g. a block that was never closed).
   */
  protected abstract unfinishedOnEnd(call: PendingCall): string | undefined;

  /** Every call in the message so far. */
  get count(): number {
    return this.calls.length;
  }

  /** Calls flagged `incomplete` so far. */
  get incompleteCount(): number {
    return this.#incomplete;
  }

  /** Records a call the stream started; after the message's end it is broken from the start (never lost, never run). */
  protected add(call: PendingCall): PendingCall {
    if (this.#late !== undefined) this.#break(call, this.#late);
    this.calls.push(call);
    return call;
  }

  /**
   * An out-of-order event took this call's place (a second start at its index): it takes
   * no more fragments. Its text so far is kept as complete when it is one complete JSON
   * value (the model had finished it; e.g. providers that send every call at index 0), else
   * the call is broken with `reason`. Returns whether it was kept.
   */
  protected orphan(call: PendingCall, reason: string): boolean {
    if (call.sealed) return true;
    const kept = call.closed || completeJson(call, true) !== undefined;
    if (kept) call.closed = true;
    else this.#break(call, reason);
    call.sealed = true;
    return kept;
  }

  /** Marks a call whose arguments cannot be assembled exactly: it is yielded `incomplete: reason`, never run. */
  protected breakCall(call: PendingCall, reason: string): void {
    this.#break(call, reason);
  }

  #break(call: PendingCall, reason: string): void {
    if (call.broken === undefined) call.broken = reason;
    call.sealed = true;
  }

  /** Called by the driver after the message's end: calls that start later are answered `incomplete: reason`. */
  markLate(reason: string): void {
    this.#late = reason;
  }

  /** Takes the calls that may run now (or must be answered now), in call order. */
  takeReady(): ToolCall[] {
    const out: ToolCall[] = [];
    for (;;) {
      const call = this.calls[this.#next];
      if (call === undefined) break;
      if (call.broken !== undefined) out.push(this.#flag(call, call.broken));
      else if (this.isReady(call)) out.push(this.#complete(call));
      else break;
      this.#next++;
    }
    return out;
  }

  /**
   * The message ended: takes every call not yet yielded. `cut` undefined (the model
   * finished): each as it is, unless the adapter says its arguments are not known to be
   * complete. Else each whose arguments are complete anyway as it is, the others flagged
   * `incomplete: cut`. A broken call is flagged with its own reason either way.
   */
  finish(cut: string | undefined): ToolCall[] {
    const out: ToolCall[] = [];
    while (this.#next < this.calls.length) {
      const call = this.calls[this.#next++]!;
      const reason = call.broken ?? (cut === undefined ? this.unfinishedOnEnd(call) : this.completeOnCut(call) ? undefined : cut);
      out.push(reason === undefined ? this.#complete(call) : this.#flag(call, reason));
    }
    return out;
  }

  #flag(call: PendingCall, reason: string): ToolCall {
    this.#incomplete++;
    call.sealed = true;
    const flagged: ToolCall = { id: call.id, name: call.name, incomplete: reason };
    // The partial text is kept for display (`tool_execution_start.args`); it is never parsed.
    const text = argumentText(call);
    if (text !== '') flagged.arguments = text;
    return flagged;
  }

  #complete(call: PendingCall): ToolCall {
    call.sealed = true;
    const complete: ToolCall = { id: call.id, name: call.name, arguments: this.#arguments(call) };
    if (call.providerItem !== undefined) complete.providerItem = call.providerItem;
    return complete;
  }

  #arguments(call: PendingCall): unknown {
    if (call.scan.state === 'lead') {
      const initial = call.initial;
      return typeof initial === 'object' && initial !== null && !Array.isArray(initial) && Object.keys(initial).length > 0 ? initial : {};
    }
    if (this.objectArguments) {
      const value = completeJson(call, true)?.value;
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value;
    }
    return argumentText(call);
  }
}

/** The `incomplete` reason of a call that starts after the message's stop event. */
const LATE_CALL = 'the stream sending it after the message had ended';

/**
 * Drives an assembler over a provider stream and yields the calls: each as soon as it is
 * ready, the rest at the message's end. See the adapters for the contract; in short:
 * - the stop event: `onMessageEnd`, then the pending calls; the stream is then read to its
 *   end (so an SDK can finish its own bookkeeping) — a tool call that starts there is
 *   yielded `incomplete` at once (never run, never lost: O1) — and the generator returns
 *   the report, its counts including such late calls;
 * - a break (the source throws, an error event, no stop event): `onMessageEnd` (status
 *   `broken`), then the pending calls — the unfinished ones flagged `incomplete` — then the
 *   error is thrown.
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
      if (end !== undefined) {
        // After the stop event: only a late call can matter. An error event here concerns a
        // message that has already ended, so it is not raised.
        try {
          assembler.push(event);
        } catch {
          // ignored (see above)
        }
        for (const call of assembler.takeReady()) yield call;
        continue;
      }
      assembler.push(event);
      for (const call of assembler.takeReady()) yield call;
      const ending = assembler.ending;
      if (ending === undefined) continue;
      const finals = assembler.finish(ending.cut);
      assembler.markLate(LATE_CALL);
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
  // Late calls (after the stop event) are counted in the returned report.
  return { ...end, calls: assembler.count, incompleteCalls: assembler.incompleteCount };
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
function summarize(error: unknown): string {
  const line = thrownText(error).replace(/\s+/g, ' ').trim();
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
