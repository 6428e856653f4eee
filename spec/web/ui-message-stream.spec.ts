/**
 * toUIMessageStream (contract W5) with the real `ai` package over a real loopback HTTP
 * server: `createUIMessageStreamResponse` on the server, `AbstractChat` (what `useChat`
 * wraps) with `DefaultChatTransport` in the "browser"; progress is seen before the result.
 */
import * as ai from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import * as v from 'valibot';
import { defineTool, fromAISDKApprovalResponses, runAgent, runTools, toUIMessageStream, type PausedBatch, type ToolCall } from '../../lib/index.ts';
import { scriptedModel } from '../../lib/testing.ts';
import { recordingChat } from './recording-chat.ts';
import { serveWeb, type WebServer } from './web-server.ts';

const count = defineTool({
  name: 'count',
  input: v.object({ to: v.number() }),
  async *execute({ to }) {
    for (let i = 1; i <= to; i++) yield { done: i, of: to };
    return `counted to ${to}`;
  },
});
const fail = defineTool({ name: 'fail', input: v.object({}), execute: () => { throw new Error('disk full'); } });
const remove = defineTool({ name: 'remove', input: v.object({ path: v.string() }), needsApproval: true, execute: ({ path }) => `removed ${path}` });
const tools = [count, fail, remove];

let server: WebServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const chatFor = recordingChat;

describe('W5: toUIMessageStream, read by ai\'s own chat over HTTP', () => {
  it('a batch: each progress a preliminary output before the result; an error; the final parts match the batch', async () => {
    const calls: ToolCall[] = [
      { id: 'c1', name: 'count', arguments: { to: 3 } },
      { id: 'c2', name: 'fail', arguments: {} },
    ];
    server = await serveWeb(() => ai.createUIMessageStreamResponse({ stream: toUIMessageStream(runTools(calls, { tools, mode: 'sequential' })) }));
    const { chat, seen, turn, parts } = chatFor(`${server.url}/api/chat`);
    const done = turn();
    await chat.sendMessage({ text: 'count' });
    await done;
    const c1 = seen.filter((line) => line.startsWith('c1 '));
    expect(c1).toEqual([
      'c1 input-available',
      'c1 output-available preliminary {"done":1,"of":3}',
      'c1 output-available preliminary {"done":2,"of":3}',
      'c1 output-available preliminary {"done":3,"of":3}',
      'c1 output-available "counted to 3"',
    ]);
    expect(parts().map((p) => [p.toolCallId, p.type, p.state, p.state === 'output-error' ? p.errorText : p.output, p.state === 'output-available' ? p.preliminary : undefined])).toEqual([
      ['c1', 'tool-count', 'output-available', 'counted to 3', undefined],
      ['c2', 'tool-fail', 'output-error', 'disk full', undefined],
    ]);
    expect(chat.status).toBe('ready');
  });

  it('approvals: a request part, answered in the chat, comes back; denied → output-denied, approved → output', async () => {
    const calls: ToolCall[] = [
      { id: 'a', name: 'remove', arguments: { path: 'a.txt' } },
      { id: 'b', name: 'remove', arguments: { path: 'b.txt' } },
    ];
    const pauses = new Map<string, PausedBatch>();
    server = await serveWeb(async (request) => {
      const body = (await request.json()) as { id: string; messages: unknown };
      const messages = await ai.validateUIMessages({ messages: body.messages });
      const paused = pauses.get(body.id);
      pauses.delete(body.id);
      const approvals = paused ? fromAISDKApprovalResponses(await ai.convertToModelMessages(messages), paused) : [];
      const run = runTools(calls, { tools, ...(paused ? { resume: { state: paused.state, approvals } } : {}) });
      async function* keep() {
        const batch = yield* run;
        if (batch.paused) pauses.set(body.id, batch.paused);
      }
      return ai.createUIMessageStreamResponse({ stream: toUIMessageStream(keep(), paused ? { resume: { paused, approvals } } : {}) });
    });
    const { chat, seen, turn, parts } = chatFor(`${server.url}/api/chat`);
    let done = turn();
    await chat.sendMessage({ text: 'remove both' });
    await done;
    expect(seen.filter((line) => line.startsWith('chat error'))).toEqual([]);
    expect(parts().map((p) => `${p.toolCallId} ${p.state}`)).toEqual(['a approval-requested', 'b approval-requested']);
    done = turn();
    const [a, b] = parts();
    await chat.addToolApprovalResponse({ id: a!.approval!.id, approved: false, reason: 'keep a' });
    await chat.addToolApprovalResponse({ id: b!.approval!.id, approved: true });
    await done;
    expect(seen.filter((line) => line.startsWith('chat error'))).toEqual([]);
    expect(parts().map((p) => `${p.toolCallId} ${p.state}${p.state === 'output-available' ? ` ${String(p.output)}` : ''}`)).toEqual(['a output-denied', 'b output-available removed b.txt']);
  });

  it('a runAgent run: text and tool parts per step, progress before the result', async () => {
    const model = scriptedModel([
      { role: 'assistant', stopReason: 'toolUse', content: [{ type: 'text', text: 'Counting.' }, { type: 'toolCall', id: 't1', name: 'count', arguments: { to: 2 } }] },
      { role: 'assistant', stopReason: 'stop', content: [{ type: 'text', text: 'Done counting.' }] },
    ]);
    server = await serveWeb(() => ai.createUIMessageStreamResponse({ stream: toUIMessageStream(runAgent({ model, tools, messages: [{ role: 'user', content: 'go' }] })) }));
    const { chat, seen, turn } = chatFor(`${server.url}/api/chat`);
    const done = turn();
    await chat.sendMessage({ text: 'go' });
    await done;
    expect(seen).toEqual(['t1 input-available', 't1 output-available preliminary {"done":1,"of":2}', 't1 output-available preliminary {"done":2,"of":2}', 't1 output-available "counted to 2"']);
    const message = chat.messages.at(-1)!;
    expect(message.parts.map((p) => (p.type === 'text' ? `text ${p.text}` : p.type))).toEqual(['step-start', 'text Counting.', 'tool-count', 'step-start', 'text Done counting.']);
  });

  it('refuses what is not a run', () => {
    expect(() => toUIMessageStream(5 as never)).toThrow(/toUIMessageStream: expected a run .* received number 5/);
  });
});
