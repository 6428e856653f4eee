/**
 * Server-sent events: the wire format of every provider's streaming API (Anthropic
 * Messages, OpenAI Chat Completions, OpenAI Responses).
 *
 * - {@link parseSSE}: raw SSE text (string or byte chunks, e.g. a `fetch` body) → events.
 * - {@link providerEvents} (internal to the stream adapters): whatever the caller has —
 *   SDK event objects, raw SSE chunks, or recorded `{ event, data }` pairs — → the parsed
 *   JSON event objects the adapters read.
 *
 * The line format itself is parsed by `eventsource-parser` (WHATWG rules: `data:` lines
 * joined with `\n`, `event:`/`id:` fields, comments and `retry:` ignored, CR/LF/CRLF line
 * ends, chunks split anywhere, even inside a multi-byte UTF-8 character).
 *
 * @module
 */
import { createParser, type EventSourceParser } from 'eventsource-parser';
import { clipText, isObjectRecord } from '../core/values/guards.ts';

/** One server-sent event. */
export interface ServerSentEvent {
  /** The `event:` field (Anthropic and Responses name every event; OpenAI Chat names none). */
  event: string | undefined;
  /** The `data:` lines joined with `"\n"`: usually one JSON document, or `[DONE]`. */
  data: string;
  /** The `id:` field, if the server sent one. */
  id: string | undefined;
}

/** A source of SSE text: strings, or bytes in UTF-8 (a Node `fetch` body, a socket). */
export type SSEChunks = AsyncIterable<string | Uint8Array> | Iterable<string | Uint8Array>;

/**
 * Parses raw server-sent events text as it arrives.
 *
 * Yields each event as soon as its terminating blank line has arrived. An event cut off
 * by the end of the input (no blank line after it) is dropped, as the SSE standard says.
 * Errors of `chunks` propagate unchanged.
 *
 * @example
 * ```ts
 * const response = await fetch(url, { method: 'POST', body, headers });
 * for await (const { event, data } of parseSSE(response.body!)) console.log(event, data);
 * ```
 */
export async function* parseSSE(chunks: SSEChunks): AsyncGenerator<ServerSentEvent, void, undefined> {
  const decoder = new SSEDecoder();
  for await (const chunk of chunks) yield* decoder.push(chunk);
  yield* decoder.end();
}

/**
 * Incremental SSE decoding: bytes or text in, whole events out. With `maxEventChars`, a line
 * or an event longer than that (the parser's buffer, or one whole event's data) throws a
 * `RangeError` instead of growing without bound: for a stream from an untrusted peer.
 * @internal
 */
export class SSEDecoder {
  readonly #text = new TextDecoder('utf-8');
  #events: ServerSentEvent[] = [];
  readonly #parser: EventSourceParser;
  #failure: Error | undefined;

  constructor(maxEventChars?: number) {
    const tooLong = (): RangeError => new RangeError(`a server-sent event or line is longer than ${maxEventChars} characters (the stream's limit)`);
    this.#parser = createParser({
      onEvent: (message) => {
        if (maxEventChars !== undefined && message.data.length > maxEventChars) this.#failure ??= tooLong();
        else this.#events.push({ event: message.event, data: message.data, id: message.id });
      },
      onError: (error) => {
        if (error.type === 'max-buffer-size-exceeded') this.#failure ??= tooLong();
      },
      maxBufferSize: maxEventChars,
    });
  }

  /** Feeds one chunk; returns the events it completed. */
  push(chunk: string | Uint8Array): ServerSentEvent[] {
    if (this.#failure !== undefined) throw this.#failure;
    this.#parser.feed(typeof chunk === 'string' ? chunk : this.#text.decode(chunk, { stream: true }));
    return this.#take();
  }

  /** The input ended: flushes a trailing partial UTF-8 sequence. */
  end(): ServerSentEvent[] {
    const rest = this.#text.decode();
    if (rest !== '') this.#parser.feed(rest);
    return this.#take();
  }

  #take(): ServerSentEvent[] {
    if (this.#failure !== undefined) throw this.#failure;
    const events = this.#events;
    this.#events = [];
    return events;
  }
}

/**
 * What a stream adapter accepts: an (async) iterable of
 * - parsed event objects, as the official SDKs yield them (`@anthropic-ai/sdk`
 *   `messages.stream()` / `messages.create({ stream: true })`, `openai`
 *   `chat.completions.create({ stream: true })`, `responses.create({ stream: true })`);
 * - raw SSE text chunks, `string` or `Uint8Array` (a Node `fetch` response body);
 * - recorded SSE events `{ event?, data }` whose `data` is the parsed JSON or its text
 *   (the shape of the converted cassettes in `../shared/corpus`).
 * The kinds may even be mixed; each item is recognized on its own.
 */
export type ProviderStream = AsyncIterable<unknown> | Iterable<unknown>;

/**
 * The provider's event objects, whatever form `source` delivers them in (see
 * {@link ProviderStream}). The `[DONE]` sentinel of OpenAI Chat is dropped; SSE events
 * without data (keep-alives) are skipped. Errors of `source` propagate unchanged.
 *
 * @throws SyntaxError (with the event's first 200 characters) when an SSE event's data is
 *   not JSON: the stream is not one the adapters can read.
 */
export async function* providerEvents(source: ProviderStream): AsyncGenerator<unknown, void, undefined> {
  let decoder: SSEDecoder | undefined;
  const items: Iterable<unknown> | AsyncIterable<unknown> = typeof source === 'string' ? [source] : source;
  for await (const item of items) {
    if (typeof item === 'string' || item instanceof Uint8Array) {
      decoder ??= new SSEDecoder();
      for (const event of decoder.push(item)) {
        const data = parseData(event.data);
        if (data !== undefined) yield data;
      }
    } else if (isRecordedEvent(item)) {
      const data = typeof item.data === 'string' ? parseData(item.data) : item.data;
      if (data !== undefined) yield data;
    } else {
      yield item;
    }
  }
  if (decoder !== undefined) {
    for (const event of decoder.end()) {
      const data = parseData(event.data);
      if (data !== undefined) yield data;
    }
  }
}

/** `{ event?, id?, data }` and nothing else: a recorded SSE event, not a provider event object. */
function isRecordedEvent(item: unknown): item is { data: unknown } {
  return isObjectRecord(item) && 'data' in item && Object.keys(item).every((key) => key === 'data' || key === 'event' || key === 'id');
}

function parseData(data: string): unknown {
  const trimmed = data.trim();
  if (trimmed === '' || trimmed === '[DONE]') return undefined;
  try {
    return JSON.parse(trimmed) as unknown;
  } catch (error) {
    throw new SyntaxError(`a server-sent event's data is not JSON (${(error as Error).message}): ${clipText(trimmed, 200)}`);
  }
}
