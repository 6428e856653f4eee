/**
 * ai's chat class (what `useChat` wraps) with its state in plain fields, recording each state
 * every tool part goes through (`c1 output-available preliminary {"done":1}`), once each, in
 * order. Shared by spec/web/ui-message-stream.spec.ts and the browser page (page/main.ts).
 */
import { AbstractChat, DefaultChatTransport, isToolUIPart, lastAssistantMessageIsCompleteWithApprovalResponses, type ChatState, type UIMessage } from 'ai';

export function recordingChat(api: string) {
  const seen: string[] = [];
  let finished = (): void => {};
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
    pushMessage: (message) => {
      state.messages = [...state.messages, message];
      record(message);
    },
    popMessage: () => void (state.messages = state.messages.slice(0, -1)),
    replaceMessage: (index, message) => {
      state.messages = state.messages.map((m, i) => (i === index ? message : m));
      record(message);
    },
    snapshot: (thing) => structuredClone(thing),
  };
  class Chat extends AbstractChat<UIMessage> {}
  const chat = new Chat({
    id: 'chat-1',
    state,
    transport: new DefaultChatTransport({ api }),
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    onFinish: () => finished(),
    onError: (error) => {
      seen.push(`chat error: ${error.message}`);
      finished();
    },
  });
  /** A promise of the end of the next response (call before the action that sends). */
  const turn = () => new Promise<void>((resolve) => (finished = resolve));
  const parts = () => chat.messages.at(-1)!.parts.filter(isToolUIPart);
  return { chat, seen, turn, parts };
}
