/**
 * Getting started with the Vercel AI SDK (`ai`, `@ai-sdk/openai`): one full agent round.
 * `generateText` gets the tools' definitions without an `execute`, so it stops at the
 * model's three tool calls; `runTools` runs them in parallel (progress live); the results
 * go back as an AI SDK `tool` message, and the next `generateText` answers.
 *
 *   node --import tsx examples/getting-started/ai-sdk.ts
 *
 * Offline by default: the provider talks to a fake OpenAI Responses server on 127.0.0.1
 * (shared.ts). With a real key: `OPENAI_BASE_URL=https://api.openai.com/v1
 * OPENAI_API_KEY=sk-…` (and `OPENAI_MODEL`); any other AI SDK provider works the same way.
 */
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, jsonSchema, tool, type ModelMessage, type ToolSet } from 'ai';
import { fromAISDKMessage, runTools, toAISDKMessages, toolJsonSchema, type ToolResultMessage } from '../../lib/index.ts';
import { fakeProvider, finalAnswer, show, tools, type FakeModel } from './shared.ts';

/** The fake model: Responses API bodies, as the provider of `@ai-sdk/openai` reads them. */
const model: FakeModel = ({ body, turn }) => {
  const response = (output: unknown[]) => ({ body: { id: `resp_ai_${turn}`, object: 'response', created_at: 1768469400, status: 'completed', model: 'fake-gpt', output, usage: { input_tokens: 200, output_tokens: 60 } } });
  const call = (id: string, name: string, args: object) => ({ type: 'function_call', id: `fc_${id}`, call_id: id, name, arguments: JSON.stringify(args), status: 'completed' });
  if (turn === 0) return response([call('call_w1', 'get_weather', { city: 'Paris' }), call('call_w2', 'get_weather', { city: 'Tokyo' }), call('call_t1', 'local_time', { timeZone: 'Asia/Tokyo' })]);
  // The second request must hold one function_call_output per call.
  const outputs = (body as { input: Array<{ type?: string; call_id?: string; output?: string }> }).input.filter((item) => item.type === 'function_call_output');
  const ids = outputs.map((item) => item.call_id);
  if (ids.join() !== 'call_w1,call_w2,call_t1') return { problem: `expected function_call_output items for call_w1, call_w2, call_t1; got [${ids.join(', ')}]` };
  return response([{ type: 'message', id: 'msg_ai', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: finalAnswer(outputs.map((item) => String(item.output))), annotations: [] }] }]);
};

const fake = await fakeProvider(model);
const openai = createOpenAI({ baseURL: process.env.OPENAI_BASE_URL ?? fake.url, apiKey: process.env.OPENAI_API_KEY ?? 'offline' });
const languageModel = openai(process.env.OPENAI_MODEL ?? 'gpt-5.4-mini');
// Definitions only (no `execute`): the AI SDK hands the calls back instead of running them.
const definitions: ToolSet = Object.fromEntries(tools.map((t) => [t.name, tool({ description: t.description ?? t.name, inputSchema: jsonSchema(toolJsonSchema(t)) })]));

const messages: ModelMessage[] = [{ role: 'user', content: 'What is the weather in Paris and Tokyo, and what time is it in Tokyo?' }];
const first = await generateText({ model: languageModel, messages, tools: definitions });
messages.push(...first.response.messages);

const results: ToolResultMessage[] = [];
for await (const event of runTools(fromAISDKMessage(first.response.messages[0]!), { tools })) {
  show(event); // live: starts, progress, ends in completion order
  if (event.type === 'tool_result') results.push(event.message); // call order
}
messages.push(...toAISDKMessages(results)); // one tool-result part per call

const second = await generateText({ model: languageModel, messages, tools: definitions });
console.log(`answer: ${second.text}`);
await fake.close();
