/**
 * Getting started with Anthropic Messages and `@anthropic-ai/sdk`: one full agent round.
 * The model asks for three tool calls at once, `runTools` runs them in parallel (progress
 * live), the results go back in one user message, and the model answers.
 *
 *   node --import tsx examples/getting-started/anthropic.ts
 *
 * Offline by default: the SDK talks to a fake Anthropic server on 127.0.0.1 (shared.ts).
 * With a real key: `ANTHROPIC_BASE_URL=https://api.anthropic.com ANTHROPIC_API_KEY=sk-ant-…`
 * (and `ANTHROPIC_MODEL` for another model than the default below).
 */
import Anthropic from '@anthropic-ai/sdk';
import { fromAnthropic, runTools, toAnthropic, toAnthropicTools, type ToolResultMessage } from '../../lib/index.ts';
import { fakeProvider, finalAnswer, show, tools, type FakeModel } from './shared.ts';

/** The fake model: Anthropic Messages response bodies. */
const model: FakeModel = ({ body, turn }) => {
  const message = (content: unknown[], stop_reason: string) => ({
    body: { id: `msg_0${turn + 1}`, type: 'message', role: 'assistant', model: 'fake-claude', content, stop_reason, stop_sequence: null, usage: { input_tokens: 412, output_tokens: 96 } },
  });
  if (turn === 0) {
    return message(
      [
        { type: 'text', text: 'I will check both cities and the time in Tokyo at once.' },
        { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { city: 'Paris' } },
        { type: 'tool_use', id: 'toolu_02', name: 'get_weather', input: { city: 'Tokyo' } },
        { type: 'tool_use', id: 'toolu_03', name: 'local_time', input: { timeZone: 'Asia/Tokyo' } },
      ],
      'tool_use',
    );
  }
  // The second request must end with one tool_result block per tool_use, in order.
  const last = (body as { messages: Array<{ role: string; content: unknown }> }).messages.at(-1);
  const blocks = Array.isArray(last?.content) ? (last.content as Array<{ type: string; tool_use_id: string; content: Array<{ text: string }> }>) : [];
  const ids = blocks.filter((block) => block.type === 'tool_result').map((block) => block.tool_use_id);
  if (ids.join() !== 'toolu_01,toolu_02,toolu_03') return { problem: `expected tool_result blocks for toolu_01, toolu_02, toolu_03; got [${ids.join(', ')}]` };
  return message([{ type: 'text', text: finalAnswer(blocks.map((block) => block.content.map((part) => part.text).join(''))) }], 'end_turn');
};

const fake = await fakeProvider(model);
const anthropic = new Anthropic({ baseURL: process.env.ANTHROPIC_BASE_URL ?? fake.url, apiKey: process.env.ANTHROPIC_API_KEY ?? 'offline' });
const request = { model: process.env.ANTHROPIC_MODEL ?? 'claude-sonnet-5', max_tokens: 1024, tools: toAnthropicTools(tools) };

const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'What is the weather in Paris and Tokyo, and what time is it in Tokyo?' }];
const first = await anthropic.messages.create({ ...request, messages });
messages.push({ role: 'assistant', content: first.content });

const results: ToolResultMessage[] = [];
for await (const event of runTools(fromAnthropic(first), { tools })) {
  show(event); // live: starts, progress, ends in completion order
  if (event.type === 'tool_result') results.push(event.message); // call order
}
messages.push(toAnthropic(results)); // the user message: one tool_result block per call

const second = await anthropic.messages.create({ ...request, messages });
console.log(`answer: ${second.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('')}`);
await fake.close();
