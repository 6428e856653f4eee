/**
 * Getting started with the Gemini API and `@google/genai`: one full agent round. The
 * model's content holds three `functionCall` parts at once, `runTools` runs them in parallel
 * (progress live), the results go back as one content of `functionResponse` parts, and the
 * model answers.
 *
 *   node --import tsx examples/getting-started/gemini.ts
 *
 * Offline by default: the SDK talks to a fake Gemini server on 127.0.0.1 (shared.ts).
 * With a real key: `GEMINI_BASE_URL=https://generativelanguage.googleapis.com GEMINI_API_KEY=…`
 * (and `GEMINI_MODEL` for another model than the default below).
 */
import { GoogleGenAI, type Content } from '@google/genai';
import { fromGemini, runTools, toGemini, toGeminiTools, type ToolResultMessage } from '../../lib/index.ts';
import { fakeProvider, finalAnswer, show, tools, type FakeModel } from './shared.ts';

/** The fake model: `generateContent` response bodies. */
const model: FakeModel = ({ url, body, turn }) => {
  if (!url.includes(':generateContent')) return { problem: `expected a generateContent request, got ${url}` };
  const response = (parts: unknown[], finishReason: string) => ({
    body: { candidates: [{ content: { role: 'model', parts }, finishReason, index: 0 }], usageMetadata: { promptTokenCount: 150, candidatesTokenCount: 40, totalTokenCount: 190 }, modelVersion: 'fake-gemini' },
  });
  if (turn === 0) {
    // Gemini's function calls carry no id: toolrun numbers them and pairs results by position.
    return response(
      [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }, { functionCall: { name: 'get_weather', args: { city: 'Tokyo' } } }, { functionCall: { name: 'local_time', args: { timeZone: 'Asia/Tokyo' } } }],
      'STOP',
    );
  }
  // The second request must end with one functionResponse per functionCall, in order.
  const last = (body as { contents: Array<{ parts?: Array<{ functionResponse?: { name: string; response: { output?: string } } }> }> }).contents.at(-1);
  const responses = (last?.parts ?? []).flatMap((part) => (part.functionResponse === undefined ? [] : [part.functionResponse]));
  const names = responses.map((response) => response.name);
  if (names.join() !== 'get_weather,get_weather,local_time') return { problem: `expected functionResponse parts for get_weather, get_weather, local_time; got [${names.join(', ')}]` };
  return response([{ text: finalAnswer(responses.map((response) => String(response.response.output))) }], 'STOP');
};

const fake = await fakeProvider(model);
const gemini = new GoogleGenAI({ apiKey: process.env.GEMINI_API_KEY ?? 'offline', httpOptions: { baseUrl: process.env.GEMINI_BASE_URL ?? fake.url } });
const request = { model: process.env.GEMINI_MODEL ?? 'gemini-flash-latest', config: { tools: toGeminiTools(tools) } };

const contents: Content[] = [{ role: 'user', parts: [{ text: 'What is the weather in Paris and Tokyo, and what time is it in Tokyo?' }] }];
const first = await gemini.models.generateContent({ ...request, contents });
contents.push(first.candidates![0]!.content!); // sent back unchanged (it may hold thought signatures)

const results: ToolResultMessage[] = [];
for await (const event of runTools(fromGemini(first), { tools })) {
  show(event); // live: starts, progress, ends in completion order
  if (event.type === 'tool_result') results.push(event.message); // call order
}
contents.push(toGemini(results)); // one functionResponse part per call

const second = await gemini.models.generateContent({ ...request, contents });
console.log(`answer: ${second.text ?? ''}`);
await fake.close();
