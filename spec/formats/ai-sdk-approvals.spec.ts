/**
 * Issue 22 item 4 (contract H10): a paused batch / a paused runAgent ↔ ai 7's
 * `tool-approval-request` / `tool-approval-response` parts, against the real `ai` package:
 * its `modelMessageSchema`, its UI message stream reader, `validateUIMessages`,
 * `convertToModelMessages`, and `AbstractChat` (the class `useChat` wraps) talking to a real
 * loopback HTTP server through `DefaultChatTransport`.
 *
 * How these fail: with `toAISDKApprovalRequests` writing another shape (e.g. `toolName`
 * instead of `toolCallId`, or no `approvalId`) the schema parse and the UI stream reader
 * refuse it (the chat ends with an error, no part reaches `approval-requested`); with
 * `fromAISDKApprovalResponses` reading a message other than the last, or not checking the
 * pending requests, the refusal specs see an array instead of a ResumeError.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  AbstractChat,
  convertToModelMessages,
  createUIMessageStream,
  DefaultChatTransport,
  isToolUIPart,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  modelMessageSchema,
  pipeUIMessageStreamToResponse,
  readUIMessageStream,
  validateUIMessages,
  type ChatState,
  type ChatStatus,
  type ModelMessage,
  type UIMessage,
  type UIMessageChunk,
} from 'ai';
import * as v from 'valibot';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect } from '../helpers.ts';
import {
  defineTool,
  fromAISDKApprovalResponses,
  ResumeError,
  runAgent,
  runTools,
  toAISDKApprovalRequests,
  type PausedBatch,
  type ToolCall,
} from '../../lib/index.ts';
import { scriptedModel } from '../../lib/testing.ts';

function tools(deleted: string[]) {
  return [
    defineTool({ name: 'list_files', input: v.object({}), execute: () => 'a.txt b.txt' }),
    defineTool({
      name: 'delete_file',
      input: v.object({ path: v.string() }),
      needsApproval: true,
      execute: ({ path }) => {
        deleted.push(path);
        return `deleted ${path}`;
      },
    }),
  ];
}

const calls: ToolCall[] = [
  { id: 'call_list', name: 'list_files', arguments: {} },
  { id: 'call_a', name: 'delete_file', arguments: { path: 'a.txt' } },
  { id: 'call_b', name: 'delete_file', arguments: { path: 'b.txt' } },
];

async function pausedBatch(deleted: string[] = []): Promise<PausedBatch> {
  const { batch } = await collect(runTools(calls, { tools: tools(deleted) }));
  if (batch.paused === undefined) throw new Error('the batch did not pause');
  return batch.paused;
}

/** The assistant ModelMessage of the calls, with the approval-request parts appended, as ai 7 keeps it. */
function assistantWith(paused: PausedBatch): ModelMessage {
  return {
    role: 'assistant',
    content: [...calls.map((c) => ({ type: 'tool-call' as const, toolCallId: c.id, toolName: c.name, input: c.arguments })), ...toAISDKApprovalRequests(paused)],
  };
}

describe('H10: toAISDKApprovalRequests (ai 7 parts)', () => {
  it('H10: one tool-approval-request part per pending request, in call order; valid ModelMessage content for ai 7', async () => {
    const paused = await pausedBatch();
    const parts = toAISDKApprovalRequests(paused);
    expect(parts).toEqual(paused.requests.map((r) => ({ type: 'tool-approval-request', approvalId: r.approvalId, toolCallId: r.toolCallId })));
    expect(parts.map((p) => p.toolCallId)).toEqual(['call_a', 'call_b']);
    // The SDK's own schema for model messages accepts the assistant message and the answering tool message.
    expect(modelMessageSchema.safeParse(assistantWith(paused)).success).toBe(true);
    const answer: ModelMessage = { role: 'tool', content: parts.map((p) => ({ type: 'tool-approval-response', approvalId: p.approvalId, approved: true })) };
    expect(modelMessageSchema.safeParse(answer).success).toBe(true);
  });

  it("H10: a hook's reason becomes the part's reason, which useChat shows as approval.requestReason", async () => {
    const { batch } = await collect(
      runTools([calls[0]!], { tools: tools([]), beforeToolCall: () => ({ needsApproval: true, reason: 'Lists your home folder.' }) }),
    );
    const parts = toAISDKApprovalRequests(batch.paused!);
    expect(parts[0]?.reason).toBe('Lists your home folder.');
    const chunks: UIMessageChunk[] = [
      { type: 'start', messageId: 'm1' },
      { type: 'tool-input-available', toolCallId: 'call_list', toolName: 'list_files', input: {} },
      ...parts,
      { type: 'finish' },
    ];
    let last: UIMessage | undefined;
    for await (const message of readUIMessageStream({ stream: streamOf(chunks), terminateOnError: true })) last = message;
    const part = last?.parts.find(isToolUIPart);
    expect(part?.state).toBe('approval-requested');
    expect(part?.approval).toEqual({ id: batch.paused!.requests[0]!.approvalId, requestReason: 'Lists your home folder.' });
  });

  it('H10: a paused runAgent converts the same way, and its resume takes the converted answers', async () => {
    const deleted: string[] = [];
    const model = scriptedModel([
      { role: 'assistant', stopReason: 'toolUse', content: calls.map((c) => ({ type: 'toolCall' as const, id: c.id, name: c.name, arguments: c.arguments as Record<string, unknown> })) },
      { role: 'assistant', stopReason: 'stop', content: [{ type: 'text', text: 'done' }] },
    ]);
    const first = await finish(runAgent({ model, tools: tools(deleted), messages: [{ role: 'user', content: 'clean up' }] }));
    expect(first.reason).toBe('paused');
    const parts = toAISDKApprovalRequests(first.paused!);
    expect(parts.map((p) => p.toolCallId)).toEqual(['call_a', 'call_b']);
    const history: ModelMessage[] = [
      { role: 'assistant', content: [...calls.map((c) => ({ type: 'tool-call' as const, toolCallId: c.id, toolName: c.name, input: c.arguments })), ...parts] },
      { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: parts[1]!.approvalId, approved: true }, { type: 'tool-approval-response', approvalId: parts[0]!.approvalId, approved: false, reason: 'keep it' }] },
    ];
    const approvals = fromAISDKApprovalResponses(history, first.paused!);
    // Call order, whatever the order of the parts.
    expect(approvals).toEqual([
      { approvalId: parts[0]!.approvalId, approved: false, reason: 'keep it' },
      { approvalId: parts[1]!.approvalId, approved: true },
    ]);
    const second = await finish(runAgent({ model, tools: tools(deleted), resume: { state: first.paused!.state, approvals } }));
    expect(second.reason).toBe('completed');
    expect(deleted).toEqual(['b.txt']);
  });
});

describe('H10: fromAISDKApprovalResponses refuses what the pause did not ask (untrusted client)', () => {
  const refusal = (run: () => unknown): string => {
    try {
      run();
    } catch (error) {
      expect(error).toBeInstanceOf(ResumeError);
      expect((error as ResumeError).code).toBe('approval');
      return (error as Error).message;
    }
    throw new Error('not refused');
  };

  it('H10: an approvalId no pending request has is refused, naming it and the pending ones', async () => {
    const paused = await pausedBatch();
    const message = refusal(() =>
      fromAISDKApprovalResponses([assistantWith(paused), { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: 'forged', approved: true }] }], paused),
    );
    expect(message).toContain('"forged"');
    expect(message).toContain(paused.requests[0]!.approvalId);
  });

  it("H10: a request part re-pointed at another tool call (the client edited the history) is refused", async () => {
    const paused = await pausedBatch();
    const assistant = assistantWith(paused);
    // The approval of call_a's request, claimed for call_list.
    const edited = { ...assistant, content: (assistant.content as Array<{ type: string; approvalId?: string }>).map((p) => (p.approvalId === paused.requests[0]!.approvalId ? { ...p, toolCallId: 'call_list' } : p)) } as ModelMessage;
    const message = refusal(() =>
      fromAISDKApprovalResponses([edited, { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: paused.requests[0]!.approvalId, approved: true }] }], paused),
    );
    expect(message).toContain('"call_list"');
    expect(message).toContain('"call_a"');
  });

  it('H10: two answers to one request, a non-boolean approved, an over-long reason: refused', async () => {
    const paused = await pausedBatch();
    const id = paused.requests[0]!.approvalId;
    const withParts = (...content: unknown[]) => [assistantWith(paused), { role: 'tool', content }];
    expect(refusal(() => fromAISDKApprovalResponses(withParts({ type: 'tool-approval-response', approvalId: id, approved: true }, { type: 'tool-approval-response', approvalId: id, approved: false }), paused))).toContain('a second time');
    expect(refusal(() => fromAISDKApprovalResponses(withParts({ type: 'tool-approval-response', approvalId: id, approved: 'yes' }), paused))).toContain('approved: boolean');
    expect(refusal(() => fromAISDKApprovalResponses(withParts({ type: 'tool-approval-response', approvalId: id, approved: false, reason: 'x'.repeat(2_001) }), paused))).toContain('2001 characters');
  });

  it('H10: only the last message counts, and only when it is a tool message (as the SDK reads it)', async () => {
    const paused = await pausedBatch();
    const answered = { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: paused.requests[0]!.approvalId, approved: true }] };
    expect(fromAISDKApprovalResponses([assistantWith(paused), answered, { role: 'user', content: 'hm' }], paused)).toEqual([]);
    // An old round's answer earlier in the history is not read (it would be unknown here).
    const old = { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: 'from-an-earlier-pause', approved: true }] };
    expect(fromAISDKApprovalResponses([old, assistantWith(paused), answered], paused)).toEqual([{ approvalId: paused.requests[0]!.approvalId, approved: true }]);
  });

  it("H10: an answer whose call already has a result in that message is settled and skipped, except ai's own execution-denied result beside a denial", async () => {
    const paused = await pausedBatch();
    const [ra, rb] = paused.requests;
    // Call a was approved in an earlier round and has its result; call b is denied now (ai writes execution-denied beside it).
    const last = {
      role: 'tool',
      content: [
        { type: 'tool-approval-response', approvalId: 'approved-in-an-earlier-round', approved: true },
        { type: 'tool-result', toolCallId: 'call_x', toolName: 'delete_file', output: { type: 'text', value: 'x' } },
        { type: 'tool-approval-response', approvalId: ra!.approvalId, approved: true },
        { type: 'tool-result', toolCallId: 'call_a', toolName: 'delete_file', output: { type: 'text', value: 'deleted a.txt' } },
        { type: 'tool-approval-response', approvalId: rb!.approvalId, approved: false, reason: 'no' },
        { type: 'tool-result', toolCallId: 'call_b', toolName: 'delete_file', output: { type: 'execution-denied', reason: 'no' } },
      ],
    };
    // The earlier round's answer is unknown to this pause but settled (its call has a result): skipped.
    const earlier = { ...assistantWith(paused), content: [...(assistantWith(paused).content as unknown[]), { type: 'tool-approval-request', approvalId: 'approved-in-an-earlier-round', toolCallId: 'call_x' }] } as ModelMessage;
    expect(fromAISDKApprovalResponses([earlier, last], paused)).toEqual([{ approvalId: rb!.approvalId, approved: false, reason: 'no' }]);
    // Without its request part naming a call with a result, the same answer is an unknown one: refused.
    expect(refusal(() => fromAISDKApprovalResponses([assistantWith(paused), last], paused))).toContain('approved-in-an-earlier-round');
  });

  it('H10, H8: what it returns is what runTools resumes with; the resume itself still refuses a forged id', async () => {
    const deleted: string[] = [];
    const paused = await pausedBatch(deleted);
    await expect(collect(runTools(calls, { tools: tools(deleted), resume: { state: paused.state, approvals: [{ approvalId: 'forged', approved: true }] } }))).rejects.toMatchObject({ code: 'approval' });
  });
});

// ---------------------------------------------------------------------------------------
// A useChat app, without React: ai's AbstractChat (what useChat wraps) over HTTP to a server
// that runs the calls with toolrun.

/** ChatState kept in plain fields: what @ai-sdk/react keeps in React state. */
class PlainState implements ChatState<UIMessage> {
  status: ChatStatus = 'ready';
  error: Error | undefined = undefined;
  messages: UIMessage[] = [];
  pushMessage = (message: UIMessage) => {
    this.messages = [...this.messages, message];
  };
  popMessage = () => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (index: number, message: UIMessage) => {
    this.messages = this.messages.map((m, i) => (i === index ? message : m));
  };
  snapshot = <T,>(thing: T): T => structuredClone(thing);
}

class Chat extends AbstractChat<UIMessage> {
  constructor(init: ConstructorParameters<typeof AbstractChat<UIMessage>>[0]) {
    super(init);
  }
}

function streamOf(chunks: UIMessageChunk[]): ReadableStream<UIMessageChunk> {
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
}

async function finish<R>(run: AsyncGenerator<unknown, R>): Promise<R> {
  for (;;) {
    const step = await run.next();
    if (step.done) return step.value;
  }
}

describe('H10: a useChat app approves toolrun calls (AbstractChat + DefaultChatTransport, loopback server)', () => {
  const deleted: string[] = [];
  const serverTools = tools(deleted);
  /** Per chat id: the paused batch's calls and pause (the server keeps the state; only decisions travel). */
  const pauses = new Map<string, { calls: ToolCall[]; paused: PausedBatch }>();
  const refused: string[] = [];
  let url = '';
  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      refused.push(error instanceof ResumeError ? error.code : String(error));
      if (!response.headersSent) response.writeHead(error instanceof ResumeError ? 409 : 500).end();
    });
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    let text = '';
    for await (const chunk of request) text += String(chunk);
    const body = JSON.parse(text) as { id: string; messages: unknown };
    const messages = await validateUIMessages({ messages: body.messages });
    const pending = pauses.get(body.id);
    let run;
    let batchCalls: ToolCall[];
    let denied = new Set<string>();
    if (pending === undefined) {
      batchCalls = calls; // what the model asked for (a real app: generateText with tools that have no execute)
      run = runTools(batchCalls, { tools: serverTools });
    } else {
      // The decisions come from the client: checked against the pause, then by the resume itself.
      const approvals = fromAISDKApprovalResponses(await convertToModelMessages(messages), pending.paused);
      pauses.delete(body.id);
      batchCalls = pending.calls;
      const idOf = new Map(pending.paused.requests.map((r) => [r.approvalId, r.toolCallId]));
      denied = new Set(approvals.filter((a) => !a.approved).map((a) => idOf.get(a.approvalId)!));
      run = runTools(batchCalls, { tools: serverTools, resume: { state: pending.paused.state, approvals } });
    }
    const stream = createUIMessageStream({
      execute: async ({ writer }) => {
        if (pending === undefined) {
          writer.write({ type: 'start-step' });
          for (const call of batchCalls) writer.write({ type: 'tool-input-available', toolCallId: call.id, toolName: call.name, input: call.arguments });
        }
        let step = await run.next();
        for (; step.done !== true; step = await run.next()) {
          const event = step.value;
          if (event.type !== 'tool_result') continue;
          const { toolCallId, content, isError } = event.message;
          const said = content.map((b) => (b.type === 'text' ? b.text : '')).join('');
          if (denied.has(toolCallId)) writer.write({ type: 'tool-output-denied', toolCallId });
          else if (isError) writer.write({ type: 'tool-output-error', toolCallId, errorText: said });
          else writer.write({ type: 'tool-output-available', toolCallId, output: said });
        }
        const paused = step.value.paused;
        if (paused !== undefined) {
          pauses.set(body.id, { calls: batchCalls, paused });
          for (const part of toAISDKApprovalRequests(paused)) writer.write(part);
        }
        writer.write({ type: 'finish-step' });
      },
    });
    await pipeUIMessageStreamToResponse({ response, stream });
  }

  beforeAll(async () => {
    server.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/chat`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('H10: the calls show as approval-requested; approving one and denying the other resumes the batch: one file deleted, each part answered', async () => {
    let finished: () => void = () => {};
    const nextFinish = () => new Promise<void>((resolve) => (finished = resolve));
    const errors: Error[] = [];
    const chat = new Chat({
      id: 'chat-1',
      state: new PlainState(),
      transport: new DefaultChatTransport({ api: url }),
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
      onFinish: () => finished(),
      onError: (error) => errors.push(error),
    });
    let done = nextFinish();
    await chat.sendMessage({ text: 'Delete a.txt and b.txt' });
    await done;
    const parts = () => chat.messages.at(-1)!.parts.filter(isToolUIPart);
    expect(parts().map((p) => [p.toolCallId, p.state])).toEqual([
      ['call_list', 'output-available'],
      ['call_a', 'approval-requested'],
      ['call_b', 'approval-requested'],
    ]);
    expect(deleted).toEqual([]);
    const idOf = (toolCallId: string) => parts().find((p) => p.toolCallId === toolCallId)!.approval!.id;

    done = nextFinish();
    await chat.addToolApprovalResponse({ id: idOf('call_a'), approved: false, reason: 'keep a' });
    await chat.addToolApprovalResponse({ id: idOf('call_b'), approved: true });
    await done; // sendAutomaticallyWhen sent the answers once both were in
    expect(errors).toEqual([]);
    expect(refused).toEqual([]);
    expect(deleted).toEqual(['b.txt']);
    expect(parts().map((p) => [p.toolCallId, p.state])).toEqual([
      ['call_list', 'output-available'],
      ['call_a', 'output-denied'],
      ['call_b', 'output-available'],
    ]);
    expect(parts()[2]).toMatchObject({ output: 'deleted b.txt', approval: { approved: true } });
    // What the chat holds is valid UI messages for the SDK.
    await expect(validateUIMessages({ messages: chat.messages })).resolves.toHaveLength(2);
  });

  it('H10: answering one call at a time: the resume pauses again on the other (same approvalId); the next answer resumes it, the settled one is skipped', async () => {
    const before = deleted.length;
    const errors: Error[] = [];
    let finished: () => void = () => {};
    const next = () => new Promise<void>((resolve) => (finished = resolve));
    const chat = new Chat({ id: 'chat-3', state: new PlainState(), transport: new DefaultChatTransport({ api: url }), onFinish: () => finished(), onError: (e) => errors.push(e) });
    const parts = () => chat.messages.at(-1)!.parts.filter(isToolUIPart);
    let done = next();
    await chat.sendMessage({ text: 'Delete a.txt and b.txt' });
    await done;
    const idOf = (toolCallId: string) => parts().find((p) => p.toolCallId === toolCallId)!.approval!.id;
    const bId = idOf('call_b');
    await chat.addToolApprovalResponse({ id: idOf('call_a'), approved: true });
    done = next();
    await chat.sendMessage(); // no sendAutomaticallyWhen: the app sends the one answer itself
    await done;
    expect(parts().map((p) => [p.toolCallId, p.state])).toEqual([
      ['call_list', 'output-available'],
      ['call_a', 'output-available'],
      ['call_b', 'approval-requested'],
    ]);
    expect(idOf('call_b')).toBe(bId);
    await chat.addToolApprovalResponse({ id: bId, approved: true });
    done = next();
    await chat.sendMessage();
    await done;
    expect(errors).toEqual([]);
    expect(refused).toEqual([]);
    expect(deleted.slice(before)).toEqual(['a.txt', 'b.txt']);
    expect(parts().map((p) => p.state)).toEqual(['output-available', 'output-available', 'output-available']);
  });

  it('H10: a client that forges an answer is refused (409) and nothing runs', async () => {
    const before = deleted.length;
    const errors: Error[] = [];
    let finished: () => void = () => {};
    const chat = new Chat({
      id: 'chat-2',
      state: new PlainState(),
      transport: new DefaultChatTransport({ api: url }),
      onFinish: () => finished(),
      onError: (error) => errors.push(error),
    });
    let done = new Promise<void>((resolve) => (finished = resolve));
    await chat.sendMessage({ text: 'Delete them' });
    await done;
    // The client rewrites the pending part's approval id before answering.
    const last = chat.messages.at(-1)!;
    const forged: UIMessage = {
      ...last,
      parts: last.parts.map((p) => (isToolUIPart(p) && p.state === 'approval-requested' ? { ...p, state: 'approval-responded' as const, approval: { id: `${p.approval.id}-x`, approved: true } } : p)),
    };
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'chat-2', messages: [...chat.messages.slice(0, -1), forged] }) });
    expect(response.status).toBe(409);
    expect(refused).toEqual(['approval']);
    expect(deleted.length).toBe(before);
  });
});
