/**
 * Getting started with OpenAI Chat Completions and the `openai` SDK: one full agent round.
 * The model asks for three tool calls at once (`tool_calls`), `runTools` runs them in
 * parallel (progress live), the results go back as `role: 'tool'` messages, and the model
 * answers.
 *
 *   node --import tsx examples/getting-started/openai-chat.ts
 *
 * Offline by default: the SDK talks to a fake OpenAI server on 127.0.0.1 (shared.ts).
 * With a real key: `OPENAI_BASE_URL=https://api.openai.com/v1 OPENAI_API_KEY=sk-…`
 * (and `OPENAI_MODEL` for another model than the default below).
 */
import OpenAI from 'openai';
import { fromOpenAIChat, runTools, toOpenAIChat, toOpenAIChatTools, type ToolResultMessage } from '../../lib/index.ts';
import { fakeProvider, finalAnswer, show, tools, type FakeModel } from './shared.ts';

/** The fake model: Chat Completions response bodies. */
const model: FakeModel = ({ body, turn }) => {
  const completion = (message: object, finish_reason: string) => ({
    body: {
      id: `chatcmpl-0${turn + 1}`,
      object: 'chat.completion',
      created: 1768469400,
      model: 'fake-gpt',
      choices: [{ index: 0, message: { role: 'assistant', refusal: null, ...message }, logprobs: null, finish_reason }],
      usage: { prompt_tokens: 180, completion_tokens: 64, total_tokens: 244 },
    },
  });
  const call = (id: string, name: string, args: object) => ({ id, type: 'function', function: { name, arguments: JSON.stringify(args) } });
  if (turn === 0) {
    return completion(
      { content: null, tool_calls: [call('call_a1', 'get_weather', { city: 'Paris' }), call('call_b2', 'get_weather', { city: 'Tokyo' }), call('call_c3', 'local_time', { timeZone: 'Asia/Tokyo' })] },
      'tool_calls',
    );
  }
  // The second request must carry one `tool` message per call, right after the assistant's.
  const toolMessages = (body as { messages: Array<{ role: string; tool_call_id?: string; content?: string }> }).messages.filter((message) => message.role === 'tool');
  const ids = toolMessages.map((message) => message.tool_call_id);
  if (ids.join() !== 'call_a1,call_b2,call_c3') return { problem: `expected tool messages for call_a1, call_b2, call_c3; got [${ids.join(', ')}]` };
  return completion({ content: finalAnswer(toolMessages.map((message) => String(message.content))) }, 'stop');
};

const fake = await fakeProvider(model);
const openai = new OpenAI({ baseURL: process.env.OPENAI_BASE_URL ?? fake.url, apiKey: process.env.OPENAI_API_KEY ?? 'offline' });
const request = { model: process.env.OPENAI_MODEL ?? 'gpt-5.4-mini', tools: toOpenAIChatTools(tools) };

const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'What is the weather in Paris and Tokyo, and what time is it in Tokyo?' }];
const first = await openai.chat.completions.create({ ...request, messages });
const assistant = first.choices[0]!.message;
messages.push(assistant);

const results: ToolResultMessage[] = [];
for await (const event of runTools(fromOpenAIChat(assistant), { tools })) {
  show(event); // live: starts, progress, ends in completion order
  if (event.type === 'tool_result') results.push(event.message); // call order
}
messages.push(...toOpenAIChat(results)); // one `tool` message per call

const second = await openai.chat.completions.create({ ...request, messages });
console.log(`answer: ${second.choices[0]!.message.content ?? ''}`);
await fake.close();
