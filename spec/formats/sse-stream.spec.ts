/**
 * `parseSSE` and the input forms every stream adapter accepts (`lib/formats/sse.ts`):
 * raw SSE text or bytes split anywhere, recorded `{ event, data }` pairs, parsed objects.
 */
import { describe, expect, it } from 'vitest';
import { providerEvents } from '../../lib/formats/sse.ts';
import { parseSSE, type ServerSentEvent } from '../../lib/index.ts';
import { byteChunks } from './stream-helpers.ts';

async function all<T>(source: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of source) out.push(item);
  return out;
}

const sse = (event: string | undefined, data: string, id?: string): ServerSentEvent => ({ event, data, id });

describe('parseSSE', () => {
  it('yields each event once its blank line arrived, whatever the chunk boundaries (even inside a UTF-8 character)', async () => {
    const text = 'event: a\ndata: {"x":"é✓"}\n\n: a comment\ndata: line1\ndata: line2\nid: 7\n\nretry: 10\ndata: [DONE]\n\n';
    // `id` is reported on the event that sets it (the last-event-id is a client's business).
    const expected = [sse('a', '{"x":"é✓"}'), sse(undefined, 'line1\nline2', '7'), sse(undefined, '[DONE]')];
    for (const size of [1, 2, 3, 5, 1000]) expect(await all(parseSSE(byteChunks(text, size))), `chunks of ${size}`).toEqual(expected);
    expect(await all(parseSSE([text]))).toEqual(expected);
  });

  it('accepts CRLF and CR line ends', async () => {
    expect(await all(parseSSE(['event: x\r\ndata: 1\r\n\r\nevent: y\rdata: 2\r\rdata: 3\n\n']))).toEqual([sse('x', '1'), sse('y', '2'), sse(undefined, '3')]);
  });

  it('drops an event cut off by the end of the input (no blank line after it), as the SSE standard says', async () => {
    expect(await all(parseSSE(['data: whole\n\ndata: cut']))).toEqual([sse(undefined, 'whole')]);
  });

  it('lets errors of the source through unchanged', async () => {
    const boom = new Error('boom');
    async function* failing(): AsyncGenerator<string> {
      yield 'data: 1\n\n';
      throw boom;
    }
    const seen: ServerSentEvent[] = [];
    await expect((async () => {
      for await (const e of parseSSE(failing())) seen.push(e);
    })()).rejects.toBe(boom);
    expect(seen).toEqual([sse(undefined, '1')]);
  });
});

describe('providerEvents: what the stream adapters read', () => {
  it('parses SSE data as JSON and drops [DONE] and empty data', async () => {
    expect(await all(providerEvents(['data: {"a":1}\n\ndata: \n\ndata: [DONE]\n\n']))).toEqual([{ a: 1 }]);
  });

  it('unwraps recorded { event, data } pairs (data parsed or as text) and passes objects through', async () => {
    const items = [{ event: 'x', data: { type: 'x' } }, { data: '{"type":"y"}' }, { data: '[DONE]' }, { type: 'z', data: 'kept: has a type' }, { object: 'chat.completion.chunk', choices: [] }];
    expect(await all(providerEvents(items))).toEqual([{ type: 'x' }, { type: 'y' }, { type: 'z', data: 'kept: has a type' }, { object: 'chat.completion.chunk', choices: [] }]);
  });

  it('throws a SyntaxError naming the data when an SSE event is not JSON', async () => {
    await expect(all(providerEvents(['data: {oops\n\n']))).rejects.toThrow(/a server-sent event's data is not JSON \(.*\): \{oops$/);
    // Longer data is cut to its first 200 characters and says how long it was.
    await expect(all(providerEvents([`data: {${'o'.repeat(299)}\n\n`]))).rejects.toThrow(new RegExp(`: \\{${'o'.repeat(199)}… \\(300 chars\\)$`));
  });
});
