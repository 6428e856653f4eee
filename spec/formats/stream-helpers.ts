/**
 * Helpers for the stream adapter specs: sources that count what was read, a manual
 * source the test feeds, SSE serialization of recorded events, and a runner that records
 * how far the stream had been read when each tool started.
 */
import { defineTool, runTools, type JsonSchema, type Tool, type ToolBatch, type ToolCall, type ToolEvent } from '../../lib/index.ts';
import type { ToolCallStreamEnd } from '../../lib/formats/stream-calls.ts';
import { gate, type Gate } from '../helpers.ts';

/** An async source over `items` that counts how many were read, and whether it was closed early. */
export function countingSource<T>(items: readonly T[], options: { failAt?: number; error?: unknown } = {}) {
  const probe = { pulled: 0, closed: false, finished: false };
  async function* source(): AsyncGenerator<T> {
    try {
      for (let i = 0; i < items.length; i++) {
        if (options.failAt === i) throw options.error ?? new Error('connection reset');
        probe.pulled = i + 1;
        yield items[i]!;
      }
      if (options.failAt === items.length) throw options.error ?? new Error('connection reset');
      probe.finished = true;
    } finally {
      if (!probe.finished) probe.closed = true;
    }
  }
  return { iterable: source(), probe };
}

/** A source the test feeds by hand (`push`, `fail`, `end`). */
export function manualSource<T = unknown>() {
  const queued: Array<{ item: T } | { error: unknown } | { done: true }> = [];
  let waiting: Gate | undefined;
  const probe = { returned: false };
  const deliver = (entry: (typeof queued)[number]) => {
    queued.push(entry);
    waiting?.open();
  };
  const iterator: AsyncIterator<T> = {
    async next() {
      while (queued.length === 0) {
        waiting = gate();
        await waiting.promise;
        waiting = undefined;
      }
      const entry = queued.shift()!;
      if ('error' in entry) throw entry.error;
      if ('done' in entry) return { done: true, value: undefined };
      return { done: false, value: entry.item };
    },
    async return() {
      probe.returned = true;
      return { done: true, value: undefined };
    },
  };
  return {
    iterable: { [Symbol.asyncIterator]: () => iterator } as AsyncIterable<T>,
    push: (...items: T[]) => items.forEach((item) => deliver({ item })),
    fail: (error: unknown) => deliver({ error }),
    end: () => deliver({ done: true }),
    probe,
  };
}

/**
 * Reads an adapter to its end: the calls (without their `providerItem`, listed apart in
 * `items`, one per call), the returned report, or the error it threw.
 */
export async function drain(adapter: AsyncGenerator<ToolCall, ToolCallStreamEnd, undefined>) {
  const calls: ToolCall[] = [];
  const items: unknown[] = [];
  try {
    for (;;) {
      const step = await adapter.next();
      if (step.done === true) return { calls, items, end: step.value, error: undefined as unknown };
      const { providerItem, ...call } = step.value;
      items.push(providerItem);
      calls.push(call);
    }
  } catch (error) {
    return { calls, items, end: undefined, error };
  }
}

/** Recorded `{ event?, data }` events as SSE text, the way a server sends them. */
export function toSSE(events: ReadonlyArray<{ event?: string; data: unknown }>): string {
  return events
    .map(({ event, data }) => `${event === undefined ? '' : `event: ${event}\n`}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`)
    .join('');
}

/** `text` as UTF-8 byte chunks of `size` bytes (boundaries fall anywhere, even inside a character). */
export function byteChunks(text: string, size: number): Uint8Array[] {
  const bytes = new TextEncoder().encode(text);
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.slice(i, i + size));
  return out;
}

/** The arguments of a call as a value (a JSON string parsed), for comparing streamed and non-streamed forms. */
export function argumentValue(call: ToolCall): unknown {
  return typeof call.arguments === 'string' ? (call.arguments.trim() === '' ? {} : JSON.parse(call.arguments)) : call.arguments;
}

/**
 * Runs streamed calls through `runTools` with one tool per definition (a JSON Schema each);
 * each body notes `mark()` at its start (e.g. how many stream events had been read) and
 * returns `ran <name> #<index>`.
 */
export async function runStreamed(
  calls: AsyncIterable<ToolCall>,
  definitions: ReadonlyArray<{ name: string; schema: JsonSchema }>,
  mark: () => number,
) {
  const startedAt: number[] = [];
  const ran: number[] = [];
  const tools: Tool[] = definitions.map((definition) =>
    defineTool({
      name: definition.name,
      input: definition.schema,
      execute: (_input, { index, toolName }) => {
        startedAt[index] = mark();
        ran.push(index);
        return `ran ${toolName} #${index}`;
      },
    }),
  );
  const events: ToolEvent[] = [];
  const run = runTools(calls, { tools });
  let batch: ToolBatch | undefined;
  let error: unknown;
  try {
    for (;;) {
      const step = await run.next();
      if (step.done === true) {
        batch = step.value;
        break;
      }
      events.push(step.value);
    }
  } catch (e) {
    error = e;
  }
  return { events, batch, error, startedAt, ran };
}
