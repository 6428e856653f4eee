/**
 * toolrun's events over HTTP as server-sent events (contract W1–W4), with Web Streams and
 * `TextEncoder` only, so one code path serves Node, Deno, Bun, edge runtimes and browsers.
 *
 * - {@link toEventStream}: a run (`runTools`, `runAgent`, any async iterable of events) →
 *   a `ReadableStream<Uint8Array>` of SSE, for `new Response(stream)`.
 * - {@link fromEventStream}: such a response body → the same events, typed, and the run's
 *   final value as the generator's return value.
 *
 * The wire form (one SSE event per toolrun event):
 *
 * ```
 * id: 7
 * event: tool_execution_update
 * data: {"type":"tool_execution_update","toolCallId":"call_1",...}
 *
 * : keep-alive
 *
 * event: toolrun_end
 * data: {"value":{"messages":[...],"terminate":false,"aborted":false}}
 * ```
 *
 * Values go as JSON ({@link toWireValue}): an `Error` anywhere in an event (a
 * `tool_execution_end`'s `error`, an `agent_end`'s) is written as `{ name, message }` — its
 * stack and `cause` stay on the server —, a `bigint` as its decimal text, a cycle as
 * `"[Circular]"`, what cannot be read as `"[Unreadable]"`; `undefined` and functions are left
 * out as `JSON.stringify` leaves them. The `data:` line is JSON text, which has no raw line
 * break: no string of a tool or a model can end an event early or forge one.
 *
 * @module
 */
import { clipText, describeValue, isObjectRecord, thrownText } from '../core/values/guards.ts';
import type { ToolBatch, ToolEvent } from '../core/run/events.ts';
import { SSEDecoder } from './sse.ts';

/** The SSE `event:` name of the last event of a stream whose run finished. */
const END_EVENT = 'toolrun_end';
/** The SSE `event:` name of the last event of a stream whose run threw. */
const ERROR_EVENT = 'toolrun_error';
/** An event `type` used as the SSE `event:` name; anything else is sent as `message`. */
const EVENT_NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;
const MAX_DEPTH = 64;

/** How a run's stream ended, for {@link ToEventStreamOptions.onEnd} on the server. */
export type EventStreamEnd<R> =
  /** The run finished and the client read every event. */
  | { status: 'done'; value: R }
  /** The run threw; the client got a `toolrun_error` event with the error's name and message. */
  | { status: 'error'; error: unknown }
  /**
   * The client went away (the stream was cancelled: a closed tab, an aborted `fetch`). With
   * a run started by a function of a signal, the signal was aborted and the run read to its
   * end: `value` is its final value (every call answered, the stopped ones `interrupted` or
   * `not_run`), or `error` what it threw. With a run given as it is, the run was left
   * (`return()`, contract A5): no value.
   */
  | { status: 'cancelled'; value?: R; error?: unknown };

/** Options of {@link toEventStream}. */
export interface ToEventStreamOptions<E, R> {
  /**
   * Milliseconds of silence after which a `: keep-alive` comment is sent, so that proxies
   * and load balancers do not close an idle connection while a tool works. `0`: none.
   * @default 15000
   */
  keepAliveMs?: number;
  /**
   * Called with every event of the run, on the server, also those read after the client went
   * away (with a run started by a function of a signal): the place to store results. Must not
   * throw; if it does, the error is reported to `onEnd` as the run's and the stream ends.
   */
  onEvent?: (event: E) => void;
  /** Called once, when the run is over (see {@link EventStreamEnd}). Must not throw. */
  onEnd?: (end: EventStreamEnd<R>) => void;
}

/** A run to stream: an async iterable of events, or a function that starts one with the stream's signal. */
export type EventStreamSource<E, R> = AsyncIterable<E> | AsyncIterator<E, R> | ((signal: AbortSignal) => AsyncIterable<E> | AsyncIterator<E, R>);

/**
 * A run's events as a stream of server-sent events, for an HTTP response:
 * `new Response(toEventStream(run), { headers: { 'content-type': 'text/event-stream' } })`
 * (Node 20+, Deno, Bun, Cloudflare Workers, Vercel edge).
 *
 * The stream is pulled: the run is read one event at a time when the client reads, with a
 * queue of one encoded event, so a slow client slows the run's consumer instead of filling
 * the server's memory (toolrun's own backpressure, contract M3, then holds the tools). Each
 * event gets an `id:` (1, 2, 3, …) and its `type` as the `event:` name; the last event is
 * `toolrun_end` with the run's final value (`{ value }`), or `toolrun_error` (`{ name,
 * message }`) when the run threw.
 *
 * When the client goes away the stream is cancelled and the tools are stopped (contract W3).
 * Pass a function of an `AbortSignal` — `toEventStream((signal) => runTools(calls, { tools,
 * signal }))` — and that signal is aborted, the run is read to its end on the server and
 * `onEnd` gets its final value: every call still has its result there. A run passed as it is
 * is left with `return()` instead (A5: its tools' signals abort, their `finally` blocks run).
 *
 * @throws TypeError when `source` is not an async iterable, an async iterator or a function,
 *   or `keepAliveMs` is not a non-negative number.
 *
 * @example
 * ```ts
 * // A route handler (Next.js, Hono, Deno.serve, a Worker): POST → a live stream of events.
 * export const POST = (request: Request) =>
 *   new Response(toEventStream((signal) => runTools(calls, { tools, signal })), { headers: { 'content-type': 'text/event-stream' } });
 * ```
 */
export function toEventStream<E = ToolEvent, R = ToolBatch>(source: EventStreamSource<E, R>, options: ToEventStreamOptions<E, R> = {}): ReadableStream<Uint8Array> {
  const keepAliveMs = options.keepAliveMs ?? 15_000;
  if (typeof keepAliveMs !== 'number' || !(keepAliveMs >= 0)) throw new TypeError(`toEventStream: options.keepAliveMs must be a number of milliseconds >= 0, received ${describeValue(keepAliveMs)}`);
  const controller = new AbortController();
  const owned = typeof source === 'function';
  const run = iteratorOf<E, R>(owned ? source(controller.signal) : source);
  const encoder = new TextEncoder();
  let nextId = 1;
  let ended = false;
  const end = (outcome: EventStreamEnd<R>): void => {
    if (ended) return;
    ended = true;
    options.onEnd?.(outcome);
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(stream) {
        let keepAlive: ReturnType<typeof setInterval> | undefined;
        if (keepAliveMs > 0) keepAlive = setInterval(() => {
            if (!ended) stream.enqueue(encoder.encode(': keep-alive\n\n'));
          }, keepAliveMs);
        try {
          const step = await run.next();
          if (ended) return; // cancelled while waiting: the cancel drains the rest
          if (step.done === true) {
            stream.enqueue(encoder.encode(`event: ${END_EVENT}\ndata: ${JSON.stringify({ value: toWireValue(step.value) })}\n\n`));
            stream.close();
            end({ status: 'done', value: step.value });
            return;
          }
          options.onEvent?.(step.value);
          const type: unknown = isObjectRecord(step.value) ? step.value.type : undefined;
          const name = typeof type === 'string' && EVENT_NAME.test(type) ? type : 'message';
          stream.enqueue(encoder.encode(`id: ${nextId++}\nevent: ${name}\ndata: ${JSON.stringify(toWireValue(step.value))}\n\n`));
        } catch (error) {
          if (ended) return;
          stream.enqueue(encoder.encode(`event: ${ERROR_EVENT}\ndata: ${JSON.stringify(errorOnTheWire(error))}\n\n`));
          stream.close();
          end({ status: 'error', error });
        } finally {
          clearInterval(keepAlive);
        }
      },
      async cancel() {
        if (ended) return;
        ended = true; // a pull still waiting for run.next() enqueues nothing more
        if (!owned) {
          // Not awaited past the run's own clean-up bound (abortGraceMs): return() completes when the tools' finally blocks did.
          await run.return?.().catch(() => {});
          options.onEnd?.({ status: 'cancelled' });
          return;
        }
        controller.abort(new DOMException('the client closed the event stream', 'AbortError'));
        // Read the run to its end on the server: every call gets its result (interrupted, not_run).
        try {
          for (;;) {
            const step = await run.next();
            if (step.done === true) {
              options.onEnd?.({ status: 'cancelled', value: step.value });
              return;
            }
            options.onEvent?.(step.value);
          }
        } catch (error) {
          options.onEnd?.({ status: 'cancelled', error });
        }
      },
    },
    { highWaterMark: 1 },
  );
}

function iteratorOf<E, R>(source: AsyncIterable<E> | AsyncIterator<E, R>): AsyncIterator<E, R> {
  if (isObjectRecord(source) && typeof (source as AsyncIterator<E, R>).next === 'function') return source as AsyncIterator<E, R>;
  if (source !== null && typeof source === 'object' && typeof (source as AsyncIterable<E>)[Symbol.asyncIterator] === 'function') {
    return (source as AsyncIterable<E>)[Symbol.asyncIterator]() as AsyncIterator<E, R>;
  }
  throw new TypeError(`toEventStream: expected a run (an async iterable or iterator of events) or a function (signal) => run, received ${describeValue(source)}`);
}

/** A thrown value as the wire carries it: `{ name, message }`. */
function errorOnTheWire(error: unknown): { name: string; message: string } {
  const wire = toWireValue(error);
  if (isObjectRecord(wire) && typeof wire.name === 'string' && typeof wire.message === 'string') return { name: wire.name, message: wire.message };
  return { name: 'Error', message: typeof wire === 'string' ? wire : JSON.stringify(wire) ?? String(wire) };
}

/**
 * A value as it goes on the wire: JSON data that `JSON.stringify` writes without throwing.
 * An `Error` becomes `{ name, message }`; `toJSON` is called (a `Date` becomes its ISO text);
 * a `bigint` becomes its decimal text; a cycle `"[Circular]"`; a value whose reading throws
 * (a revoked Proxy, a throwing getter) `"[Unreadable]"`; nesting deeper than 64 `"[Too deep]"`.
 * @internal
 */
function toWireValue(value: unknown, depth = 0, ancestors: object[] = []): unknown {
  try {
    if (typeof value === 'bigint') return value.toString();
    if (typeof value !== 'object' || value === null) return value;
    if (ancestors.includes(value)) return '[Circular]';
    if (depth >= MAX_DEPTH) return '[Too deep]';
    if (value instanceof Error) {
      const name: unknown = value.name;
      const message: unknown = value.message;
      return { name: typeof name === 'string' ? name : 'Error', message: typeof message === 'string' ? message : String(message) };
    }
    const toJSON: unknown = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') return toWireValue(toJSON.call(value), depth + 1, ancestors);
    ancestors.push(value);
    try {
      if (Array.isArray(value)) return value.map((item) => (typeof item === 'function' || typeof item === 'symbol' ? null : toWireValue(item, depth + 1, ancestors)));
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(value)) {
        let field: unknown;
        try {
          field = (value as Record<string, unknown>)[key];
        } catch {
          field = '[Unreadable]';
        }
        if (field === undefined || typeof field === 'function' || typeof field === 'symbol') continue;
        out[key] = toWireValue(field, depth + 1, ancestors);
      }
      return out;
    } finally {
      ancestors.pop();
    }
  } catch {
    return '[Unreadable]';
  }
}

// ---------------------------------------------------------------------------------------
// The client side

/** Why {@link fromEventStream} stopped. */
export type EventStreamErrorCode =
  /** An event that is not toolrun's: data that is not JSON, not an object with a string `type`. */
  | 'malformed'
  /** An event or a line longer than `maxEventChars`. */
  | 'too_large'
  /** The stream ended (or its body failed) before the run's last event: a cut connection, a server that crashed. */
  | 'broken'
  /** The run threw on the server: `message` is its name and message. */
  | 'run_failed';

/** What {@link fromEventStream} throws when a stream cannot be read to its end. */
export class EventStreamError extends Error {
  override name = 'EventStreamError';
  /** Why (see {@link EventStreamErrorCode}). */
  readonly code: EventStreamErrorCode;
  constructor(code: EventStreamErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** Options of {@link fromEventStream}. */
export interface FromEventStreamOptions {
  /**
   * Longest SSE line or event accepted, in characters: a longer one ends the stream with
   * `too_large` (the peer is untrusted; a tool's whole output is one event).
   * @default 8388608 (8 Mi)
   */
  maxEventChars?: number;
}

/** A response body: a Web `ReadableStream` (`fetch`), or any async iterable of bytes or text. */
export type EventStreamBody = ReadableStream<Uint8Array> | AsyncIterable<Uint8Array | string>;

/**
 * Reads a stream written by {@link toEventStream} back into events (contract W2): yields each
 * event as it arrives and returns the run's final value (a `ToolBatch`, an `AgentResult`),
 * as JSON carries them (see the wire form in this module's doc: an `error` is `{ name,
 * message }`). Works in browsers and on servers.
 *
 * Type it with the server's events: `fromEventStream<ToolEvent<(typeof tools)[number]>>(body)`
 * for a `runTools` run, `fromEventStream<AgentEvent<Tools>, AgentResult>(body)` for a
 * `runAgent` run — the browser needs the tools' types only (`import type`).
 *
 * Leaving the loop early (`break`) cancels the body, which aborts the run on the server (W3).
 *
 * @throws EventStreamError `malformed`, `too_large`, `broken` or `run_failed` (see
 *   {@link EventStreamErrorCode}); never anything a hostile stream chose (its text is
 *   quoted, cut to 200 characters, never evaluated).
 *
 * @example
 * ```ts
 * const response = await fetch('/api/run', { method: 'POST', body });
 * for await (const event of fromEventStream<ToolEvent<Tools>>(response.body!)) {
 *   if (event.type === 'tool_execution_update') drawProgress(event.toolCallId, event.progress);
 * }
 * ```
 */
export async function* fromEventStream<E = ToolEvent, R = ToolBatch>(body: EventStreamBody, options: FromEventStreamOptions = {}): AsyncGenerator<E, R, undefined> {
  const maxEventChars = options.maxEventChars ?? 8 * 1024 * 1024;
  if (!Number.isInteger(maxEventChars) || maxEventChars < 1) throw new TypeError(`fromEventStream: options.maxEventChars must be a positive integer, received ${describeValue(maxEventChars)}`);
  const chunks = chunksOf(body);
  const decoder = new SSEDecoder(maxEventChars);
  let count = 0;
  try {
    for (;;) {
      let step: IteratorResult<Uint8Array | string>;
      try {
        step = await chunks.next();
      } catch (error) {
        throw new EventStreamError('broken', `fromEventStream: the stream failed after ${count} events: ${thrownText(error)}`, { cause: error });
      }
      let events;
      try {
        events = step.done === true ? decoder.end() : decoder.push(step.value);
      } catch (error) {
        throw new EventStreamError('too_large', `fromEventStream: ${thrownText(error)}`);
      }
      for (const event of events) {
        const data = parseData(event.data, count);
        if (event.event === END_EVENT) {
          if (!isObjectRecord(data)) throw new EventStreamError('malformed', `fromEventStream: the ${END_EVENT} event must carry { value }, received ${describeValue(data)}`);
          return data.value as R;
        }
        if (event.event === ERROR_EVENT) {
          const name = isObjectRecord(data) && typeof data.name === 'string' ? data.name.slice(0, 100) : 'Error';
          const message = isObjectRecord(data) && typeof data.message === 'string' ? data.message.slice(0, 2_000) : describeValue(data);
          throw new EventStreamError('run_failed', `fromEventStream: the run failed on the server: ${name}: ${message}`);
        }
        if (!isObjectRecord(data) || typeof data.type !== 'string') {
          throw new EventStreamError('malformed', `fromEventStream: event ${count + 1} is not a toolrun event (an object with a string type): ${quote(event.data)}`);
        }
        count++;
        yield data as E;
      }
      if (step.done === true) throw new EventStreamError('broken', `fromEventStream: the stream ended after ${count} events without the run's ${END_EVENT} event (the connection was cut, or this is not a toolrun event stream)`);
    }
  } finally {
    // Not awaited: a body that never settles its cancel must not hold the consumer's break.
    void chunks.return?.().catch(() => {});
  }
}

function chunksOf(body: EventStreamBody): AsyncIterator<Uint8Array | string> {
  if (body !== null && typeof body === 'object' && typeof (body as ReadableStream<Uint8Array>).getReader === 'function') {
    const reader = (body as ReadableStream<Uint8Array>).getReader();
    return {
      next: async () => {
        const { done, value } = await reader.read();
        return done ? { done: true, value: undefined } : { done: false, value };
      },
      return: async () => {
        await reader.cancel();
        return { done: true, value: undefined };
      },
    };
  }
  if (body !== null && typeof body === 'object' && typeof (body as AsyncIterable<Uint8Array>)[Symbol.asyncIterator] === 'function') {
    return (body as AsyncIterable<Uint8Array | string>)[Symbol.asyncIterator]();
  }
  throw new TypeError(`fromEventStream: expected a response body (a ReadableStream or an async iterable of bytes), received ${describeValue(body)}`);
}

function parseData(data: string, count: number): unknown {
  try {
    return JSON.parse(data) as unknown;
  } catch {
    throw new EventStreamError('malformed', `fromEventStream: event ${count + 1}'s data is not JSON: ${quote(data)}`);
  }
}

const quote = (text: string): string => clipText(text, 200, { quote: true });

