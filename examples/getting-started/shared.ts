/**
 * What the five getting-started examples share: the two tools the model calls, and the fake
 * provider they talk to when no real endpoint is given.
 *
 * The fake provider is a real HTTP server on 127.0.0.1, started inside the example's own
 * process. The official SDK sends it the same requests it would send the provider, and it
 * answers with the provider's response shapes: the first request gets an assistant message
 * that asks for three tool calls at once; the second must carry one tool result per call,
 * and gets a final answer written from those results. A request without them is answered
 * with HTTP 400, so an example that forgot to send its results fails instead of printing
 * a canned answer.
 *
 * @module
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { defineTool, type ToolEvent } from '../../lib/index.ts';

/** Fixed weather, so that every run prints the same answer. */
const WEATHER: Record<string, { celsius: number; sky: string }> = {
  Paris: { celsius: 18, sky: 'light rain' },
  Tokyo: { celsius: 24, sky: 'sunny' },
};

/** An async generator tool: yields progress while it works, returns text and details. */
const getWeather = defineTool({
  name: 'get_weather',
  description: 'The current weather in a city',
  input: { type: 'object', properties: { city: { type: 'string', description: 'A city name, e.g. Paris' } }, required: ['city'], additionalProperties: false },
  async *execute({ city }, { signal }) {
    yield `looking up ${city}`;
    await sleep(20, undefined, { signal }); // stands for a weather service's round trip
    const weather = WEATHER[city];
    if (weather === undefined) throw new Error(`no weather station in "${city}"; known cities: ${Object.keys(WEATHER).join(', ')}`);
    return { content: [{ type: 'text', text: `${city}: ${weather.celsius} °C, ${weather.sky}` }], details: weather };
  },
});

/** A plain function tool. */
const localTime = defineTool({
  name: 'local_time',
  description: 'The local time in an IANA time zone',
  input: { type: 'object', properties: { timeZone: { type: 'string', description: 'e.g. Asia/Tokyo' } }, required: ['timeZone'], additionalProperties: false },
  execute: ({ timeZone }) => {
    // A fixed instant, so that the output is the same on every run.
    const time = new Date(Date.UTC(2026, 0, 15, 9, 30)).toLocaleTimeString('en-GB', { timeZone, hour: '2-digit', minute: '2-digit' });
    return `${timeZone}: ${time}`;
  },
});

/** The tools every example hands to `runTools` and describes to the model. */
export const tools = [getWeather, localTime];

/** What the fake model is asked for: the request's JSON body, and which request it is (0, 1, …). */
export interface FakeRequest {
  /** The request's path and query, e.g. `/v1/messages`. */
  url: string;
  body: unknown;
  /** 0 for the first request of the conversation, 1 for the second, … */
  turn: number;
}

/**
 * The fake model of one provider: returns the response body, or a `problem` when the request
 * is not what the conversation expects (answered with HTTP 400 and that message).
 */
export type FakeModel = (request: FakeRequest) => { body: unknown } | { problem: string };

/** A running fake provider. */
export interface FakeProvider {
  /** `http://127.0.0.1:<port>`: give it to the SDK as its base URL. */
  url: string;
  /** How many requests it answered. */
  readonly requests: number;
  close(): Promise<void>;
}

/** Starts a fake provider on 127.0.0.1 (a free port) that answers each POST with `model`. */
export async function fakeProvider(model: FakeModel): Promise<FakeProvider> {
  let turn = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const send = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        send(400, { error: { message: 'the request body is not JSON' } });
        return;
      }
      const reply = model({ url: req.url ?? '/', body, turn: turn++ });
      if ('problem' in reply) send(400, { error: { type: 'invalid_request_error', message: reply.problem } });
      else send(200, reply.body);
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get requests() {
      return turn;
    },
    close: () => new Promise<void>((done, fail) => server.close((error) => (error === undefined ? done() : fail(error)))),
  };
}

/**
 * The final answer the fake model writes from the tool results it was sent (their texts, in
 * the order it received them).
 */
export function finalAnswer(resultTexts: readonly string[]): string {
  return `Here is what I found: ${resultTexts.join('; ')}.`;
}

/** Prints what a user interface would draw of one event: starts, progress, ends (completion order). */
export function show(event: ToolEvent): void {
  if (event.type === 'tool_execution_start') console.log(`start ${event.toolCallId} ${event.toolName}`);
  if (event.type === 'tool_execution_update') console.log(`  ${event.toolName}: ${String(event.progress)}`);
  if (event.type === 'tool_execution_end') console.log(`end   ${event.toolCallId} ${event.outcome}`);
}
