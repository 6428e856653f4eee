/**
 * Getting started with the OpenAI Responses API and the `openai` SDK: one full agent round.
 * The model's `output` holds three `function_call` items at once, `runTools` runs them in
 * parallel (progress live), the results go back as `function_call_output` input items, and
 * the model answers.
 *
 *   node --import tsx examples/getting-started/openai-responses.ts
 *
 * Offline by default: the SDK talks to a fake OpenAI server on 127.0.0.1 (shared.ts).
 * With a real key: `OPENAI_BASE_URL=https://api.openai.com/v1 OPENAI_API_KEY=sk-…`
 * (and `OPENAI_MODEL` for another model than the default below).
 */
import OpenAI from 'openai';
import { fromOpenAIResponses, runTools, toOpenAIResponses, toOpenAIResponsesTools, type ToolResultMessage } from '../../lib/index.ts';
import { fakeProvider, finalAnswer, show, tools, type FakeModel } from './shared.ts';

/** The fake model: Responses API response bodies. */
const model: FakeModel = ({ body, turn }) => {
  const response = (output: unknown[]) => ({
    body: {
      id: `resp_0${turn + 1}`,
      object: 'response',
      created_at: 1768469400,
      status: 'completed',
      model: 'fake-gpt',
      output,
      parallel_tool_calls: true,
      usage: { input_tokens: 190, output_tokens: 70, total_tokens: 260 },
    },
  });
  const call = (n: number, name: string, args: object) => ({ type: 'function_call', id: `fc_0${n}`, call_id: `call_0${n}`, name, arguments: JSON.stringify(args), status: 'completed' });
  if (turn === 0) return response([call(1, 'get_weather', { city: 'Paris' }), call(2, 'get_weather', { city: 'Tokyo' }), call(3, 'local_time', { timeZone: 'Asia/Tokyo' })]);
  // The second request's input must hold one function_call_output per function_call.
  const outputs = (body as { input: Array<{ type?: string; call_id?: string; output?: string }> }).input.filter((item) => item.type === 'function_call_output');
  const ids = outputs.map((item) => item.call_id);
  if (ids.join() !== 'call_01,call_02,call_03') return { problem: `expected function_call_output items for call_01, call_02, call_03; got [${ids.join(', ')}]` };
  const text = finalAnswer(outputs.map((item) => String(item.output)));
  return response([{ type: 'message', id: 'msg_04', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] }]);
};

const fake = await fakeProvider(model);
const openai = new OpenAI({ baseURL: process.env.OPENAI_BASE_URL ?? fake.url, apiKey: process.env.OPENAI_API_KEY ?? 'offline' });
const request = { model: process.env.OPENAI_MODEL ?? 'gpt-5.4-mini', tools: toOpenAIResponsesTools(tools) };

const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: 'What is the weather in Paris and Tokyo, and what time is it in Tokyo?' }];
const first = await openai.responses.create({ ...request, input });
input.push(...(first.output as OpenAI.Responses.ResponseInputItem[])); // the function_call items go back too

const results: ToolResultMessage[] = [];
for await (const event of runTools(fromOpenAIResponses(first), { tools })) {
  show(event); // live: starts, progress, ends in completion order
  if (event.type === 'tool_result') results.push(event.message); // call order
}
input.push(...toOpenAIResponses(results)); // one function_call_output per call

const second = await openai.responses.create({ ...request, input });
console.log(`answer: ${second.output_text}`);
await fake.close();
