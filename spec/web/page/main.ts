/**
 * The page of spec/web/browser.slow.spec.ts, bundled for the browser by esbuild: reads a
 * toolrun event stream with `fetch` + `fromEventStream`, then runs ai's chat class (what
 * `useChat` wraps) against a toUIMessageStream route, and records what it saw, in order.
 */
import { AbstractChat, DefaultChatTransport, isToolUIPart, type ChatState, type UIMessage } from 'ai';
import { fromEventStream, type ToolEvent } from '../../../lib/index.ts';

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
  const seen: string[] = [];
  const record = (message: UIMessage) => {
    for (const part of message.parts.filter(isToolUIPart)) {
      const line = `${part.toolCallId} ${part.state}${part.state === 'output-available' ? ` ${part.preliminary === true ? 'preliminary ' : ''}${JSON.stringify(part.output)}` : ''}`;
      if (!seen.includes(line)) seen.push(line);
    }
  };
  const state: ChatState<UIMessage> = {
    status: 'ready',
    error: undefined,
    messages: [],
    pushMessage: (m) => {
      state.messages = [...state.messages, m];
      record(m);
    },
    popMessage: () => void (state.messages = state.messages.slice(0, -1)),
    replaceMessage: (i, m) => {
      state.messages = state.messages.map((old, j) => (j === i ? m : old));
      record(m);
    },
    snapshot: (thing) => structuredClone(thing),
  };
  class Chat extends AbstractChat<UIMessage> {}
  let finished = (): void => {};
  const done = new Promise<void>((resolve) => (finished = resolve));
  const chat = new Chat({ id: 'page', state, transport: new DefaultChatTransport({ api: '/api/chat' }), onFinish: () => finished(), onError: (e) => (seen.push(`error ${e.message}`), finished()) });
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
