/**
 * The page of spec/web/browser.slow.spec.ts, bundled for the browser by esbuild: reads a
 * toolrun event stream with `fetch` + `fromEventStream`, then runs ai's chat class (what
 * `useChat` wraps) against a toUIMessageStream route, and records what it saw, in order.
 */
import { fromEventStream, type ToolEvent } from '../../../lib/index.ts';
import { recordingChat } from '../recording-chat.ts';

/** What the page leaves for the spec to read. */
const page = globalThis as { webResult?: { events: string[]; batch: unknown; chat: string[]; error?: string } };

async function events(): Promise<{ events: string[]; batch: unknown }> {
  const response = await fetch('/events', { method: 'POST' });
  const seen: string[] = [];
  const run = fromEventStream<ToolEvent>(response.body!);
  let step = await run.next();
  for (; !step.done; step = await run.next()) {
    const e = step.value;
    seen.push(e.type === 'tool_execution_update' ? `update ${JSON.stringify(e.progress)}` : e.type === 'tool_result' ? `result ${e.toolCallId} ${e.message.content.map((b) => (b.type === 'text' ? b.text : '')).join('')}` : e.type);
  }
  return { events: seen, batch: step.value };
}

async function chat(): Promise<string[]> {
  const { chat, seen, turn } = recordingChat('/api/chat');
  const done = turn();
  await chat.sendMessage({ text: 'count' });
  await done;
  return seen;
}

(async () => {
  try {
    const a = await events();
    page.webResult = { ...a, chat: await chat() };
  } catch (error) {
    page.webResult = { events: [], batch: undefined, chat: [], error: String(error) };
  }
})();
