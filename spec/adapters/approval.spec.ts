/**
 * Issue 19, item 1: a peer tool's approval rule cannot be skipped through the adapters
 * (contract H1). `fromAISDKTools` (ai 7 and ai 6) and `fromOpenAIAgentsTools` put the peer's
 * `needsApproval` on the toolrun `Tool` itself, so `runTools(calls, { tools })` alone pauses
 * (no `approve`) or asks (`approve`), and toolrun's own wrappers (`withTimeout`, `withRetry`,
 * `mapProgress`) keep the rule, as they keep a native tool's.
 *
 * Every peer tool counts its executions: a spec fails if a tool that needs approval ran
 * (the count is not 0), if the batch did not pause, or if the rule saw something other
 * than the validated input. On the code before this issue (the rule lived only in the
 * returned `beforeToolCall`, which these specs do not pass) every "pauses" spec failed:
 * `send_email` and `wire_money` ran unasked (counts 1 and 1, `batch.paused` undefined).
 */
import * as ai7 from 'ai';
import * as ai7test from 'ai/test';
import * as ai6 from 'ai-v6';
// `@openai/agents` re-exports these from `@openai/agents-core` (the same functions: spec/adapters/openai-agents.slow.spec.ts);
// the core alone loads in half the CPU (0.5 s against 1.0 s per worker of `npm test`).
import { tool as agentsTool } from '@openai/agents-core';
import { tool as langChainTool } from '@langchain/core/tools';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { collect, text } from '../helpers.ts';
import {
  fromAISDKTools,
  fromLangChainTools,
  fromOpenAIAgentsTools,
  mapProgress,
  runTools,
  withRetry,
  withTimeout,
  type Tool,
  type ToolApprovalHandler,
  type ToolCall,
  type ToolEvent,
} from '../../lib/index.ts';

/** What each adapter case builds: `send_email` always needs approval; `wire_money` when `amount` > 100. */
interface Peers {
  tools: Tool[];
  /** Executions of each peer tool, by name. */
  ran: Record<string, number>;
  /** The inputs `wire_money`'s own rule received, in order. */
  ruleSaw: unknown[];
  /** What the rule must have seen for `{ to: 'bob', amount: 500 }`: the validated input. */
  validated: unknown;
}

function aiSdkPeers(ai: typeof ai6): Peers {
  const ran = { send_email: 0, wire_money: 0 };
  const ruleSaw: unknown[] = [];
  const { tools } = fromAISDKTools({
    send_email: ai.tool({
      inputSchema: z.object({ to: z.string() }),
      needsApproval: true,
      execute: async ({ to }) => {
        ran.send_email++;
        return `sent to ${to}`;
      },
    }),
    wire_money: ai.tool({
      // The default is filled in by validation: the rule must see it.
      inputSchema: z.object({ to: z.string(), amount: z.number(), currency: z.string().default('EUR') }),
      needsApproval: async (input) => {
        ruleSaw.push(input);
        return input.amount > 100;
      },
      execute: async ({ to, amount }) => {
        ran.wire_money++;
        return `wired ${amount} to ${to}`;
      },
    }),
  });
  return { tools, ran, ruleSaw, validated: { to: 'bob', amount: 500, currency: 'EUR' } };
}

function agentsPeers(): Peers {
  const ran = { send_email: 0, wire_money: 0 };
  const ruleSaw: unknown[] = [];
  const { tools } = fromOpenAIAgentsTools([
    agentsTool({
      name: 'send_email',
      description: 'Sends an email',
      parameters: z.object({ to: z.string() }),
      needsApproval: true,
      execute: async ({ to }) => {
        ran.send_email++;
        return `sent to ${to}`;
      },
    }),
    agentsTool({
      name: 'wire_money',
      description: 'Wires money',
      parameters: z.object({ to: z.string(), amount: z.number() }),
      needsApproval: async (_runContext, input) => {
        ruleSaw.push(input);
        return input.amount > 100;
      },
      execute: async ({ to, amount }) => {
        ran.wire_money++;
        return `wired ${amount} to ${to}`;
      },
    }),
  ]);
  return { tools, ran, ruleSaw, validated: { to: 'bob', amount: 500 } };
}

const adapters = [
  { label: 'fromAISDKTools (ai 7)', make: () => aiSdkPeers(ai7 as unknown as typeof ai6) },
  { label: 'fromAISDKTools (ai 6)', make: () => aiSdkPeers(ai6) },
  { label: 'fromOpenAIAgentsTools', make: agentsPeers },
];

/** toolrun's wrappers: each must keep the adapted tool's rule (`...tool`). */
const wrappers: { label: string; wrap: (tool: Tool) => Tool }[] = [
  { label: 'as adapted', wrap: (t) => t },
  { label: 'withTimeout', wrap: (t) => withTimeout(t, 60_000) },
  { label: 'withRetry', wrap: (t) => withRetry(t, { retries: 2, backoff: { baseMs: 0 } }) },
  { label: 'mapProgress', wrap: (t) => mapProgress(t, (p) => p) },
];

const cases = adapters.flatMap((adapter) => wrappers.map((wrapper) => ({ ...adapter, wrapper: wrapper.label, wrap: wrapper.wrap })));

const calls: ToolCall[] = [
  { id: 'e1', name: 'send_email', arguments: '{"to":"eve@example.com"}' },
  { id: 'w1', name: 'wire_money', arguments: { to: 'bob', amount: 500 } },
  { id: 'w2', name: 'wire_money', arguments: { to: 'bob', amount: 5 } },
];

/** Each ended call as `id:outcome`, sorted by id (ends come in completion order, O3, which these specs do not test). */
function endsOf(events: ToolEvent[]): string[] {
  return events.flatMap((e) => (e.type === 'tool_execution_end' ? [`${e.toolCallId}:${e.outcome}`] : [])).sort();
}

describe.each(cases)('H1: $label, $wrapper: the peer rule is on the Tool', ({ make, wrap }) => {
  it('H1: tools only (no hook, no approve): the calls that need approval pause and never run; the rule gets the validated input', async () => {
    const peers = make();
    const tools = peers.tools.map(wrap);
    const { batch } = await collect(runTools(calls, { tools }));
    expect(peers.ran).toEqual({ send_email: 0, wire_money: 1 });
    expect(batch.paused?.requests.map((r) => [r.toolCallId, r.source])).toEqual([
      ['e1', 'tool'],
      ['w1', 'tool'],
    ]);
    expect(peers.ruleSaw[0]).toEqual(peers.validated);
    // The small wire ran; its result waits in the state behind the paused calls (O2).
    expect(batch.messages).toEqual([]);
    expect(tools.every((t) => t.needsApproval !== undefined)).toBe(true);
  });

  it('H1, H2: with approve denying, the calls are rejected and never run; approving runs each once', async () => {
    const peers = make();
    const tools = peers.tools.map(wrap);
    const asked: string[] = [];
    const deny: ToolApprovalHandler = (request) => {
      asked.push(request.toolCallId);
      return { approvalId: request.approvalId, approved: false, reason: 'not today' };
    };
    const denied = await collect(runTools(calls, { tools, approve: deny }));
    expect(asked).toEqual(['e1', 'w1']);
    expect(endsOf(denied.events)).toEqual(['e1:rejected', 'w1:rejected', 'w2:ok']);
    expect(text(denied.batch.messages[0]!)).toMatch(/denied .*not today/);
    expect(peers.ran).toEqual({ send_email: 0, wire_money: 1 });
    const approved = await collect(runTools(calls, { tools, approve: (r) => ({ approvalId: r.approvalId, approved: true }) }));
    expect(endsOf(approved.events)).toEqual(['e1:ok', 'w1:ok', 'w2:ok']);
    expect(peers.ran).toEqual({ send_email: 1, wire_money: 3 });
  });
});

describe('H1: LangChain tools carry no approval rule', () => {
  it('a LangChain tool has no needsApproval to map; one added to the adapted Tool pauses the call (fails if the spread loses it)', async () => {
    let ran = 0;
    const send = langChainTool(
      async () => {
        ran++;
        return 'sent';
      },
      { name: 'send_email', description: 'Sends an email', schema: z.object({ to: z.string() }) },
    );
    const [adapted] = fromLangChainTools([send]);
    expect(adapted!.needsApproval).toBeUndefined();
    const guarded: Tool = { ...adapted!, needsApproval: true };
    const { batch } = await collect(runTools([calls[0]!], { tools: [withTimeout(guarded, 60_000)] }));
    expect(batch.paused?.requests.map((r) => r.toolCallId)).toEqual(['e1']);
    expect(ran).toBe(0);
  });
});

/**
 * ai 7 moved approval to `generateText({ toolApproval })`; `fromAISDKTools(set, { toolApproval })`
 * takes the same value and applies it the way `generateText` resolves it (the function form
 * for every call; else the tool's own entry; else the tool's `needsApproval`). Fails if a
 * status is read wrongly (a denied or paused call runs: the counts), or if the option's type
 * stops accepting ai 7's `ToolApprovalConfiguration` (tsc).
 */
describe("H1: ai 7's toolApproval, through fromAISDKTools", () => {
  function peers() {
    const ran = { send_email: 0, wire_money: 0, lookup: 0 };
    const set = {
      send_email: ai7.tool({
        inputSchema: z.object({ to: z.string() }),
        needsApproval: true,
        execute: async () => {
          ran.send_email++;
          return 'sent';
        },
      }),
      wire_money: ai7.tool({
        inputSchema: z.object({ to: z.string(), amount: z.number() }),
        execute: async () => {
          ran.wire_money++;
          return 'wired';
        },
      }),
      lookup: ai7.tool({
        inputSchema: z.object({ q: z.string() }),
        execute: async () => {
          ran.lookup++;
          return 'found';
        },
      }),
    };
    return { ran, set };
  }
  const batchCalls: ToolCall[] = [
    { id: 'e1', name: 'send_email', arguments: { to: 'eve' } },
    { id: 'w1', name: 'wire_money', arguments: { to: 'bob', amount: 500 } },
    { id: 'w2', name: 'wire_money', arguments: { to: 'bob', amount: 5 } },
    { id: 'l1', name: 'lookup', arguments: { q: 'x' } },
  ];

  it("H1: per-tool statuses: 'approved' runs unasked over needsApproval, 'denied' never runs (its reason told), 'user-approval' pauses", async () => {
    const { ran, set } = peers();
    const seen: unknown[] = [];
    const toolApproval: ai7.ToolApprovalConfiguration<typeof set, { tenant: string }> = {
      send_email: 'approved',
      wire_money: (input, { toolCallId, runtimeContext }) => {
        seen.push([input, toolCallId, runtimeContext]);
        return input.amount > 100 ? { type: 'denied', reason: 'over the limit' } : undefined;
      },
      lookup: 'user-approval',
    };
    const { tools } = fromAISDKTools(set, { toolApproval, runtimeContext: { tenant: 't1' } });
    // toolrun's wrappers, and a hand-written one that copies the input: a denial must not depend on the input object's identity.
    const copying = (t: Tool): Tool => ({ ...t, execute: (input, context) => t.execute({ ...(input as object) }, context) });
    for (const wrap of [...wrappers.map((w) => w.wrap), copying]) {
      const { events, batch } = await collect(runTools(batchCalls, { tools: tools.map(wrap) }));
      expect(batch.paused?.requests.map((r) => r.toolCallId)).toEqual(['l1']);
      expect(endsOf(events)).toEqual(['e1:ok', 'w1:rejected', 'w2:ok']);
      const denied = events.find((e) => e.type === 'tool_execution_end' && e.toolCallId === 'w1');
      expect(denied?.type === 'tool_execution_end' && text(denied.result)).toBe(
        'The application denied this call to tool "wire_money": over the limit. It was not run; do not call it again unless the user asks for it.',
      );
    }
    expect(ran).toEqual({ send_email: 5, wire_money: 5, lookup: 0 });
    expect(seen[0]).toEqual([{ to: 'bob', amount: 500 }, 'w1', { tenant: 't1' }]);
  });

  it('H1: the function form decides every call, over needsApproval; a status that is none of the four rejects the call', async () => {
    const { ran, set } = peers();
    const toolApproval: ai7.ToolApprovalConfiguration<typeof set, object> = ({ toolCall }) =>
      toolCall.toolName === 'lookup' ? ('maybe' as never) : toolCall.toolName === 'wire_money' ? 'user-approval' : 'not-applicable';
    const { tools } = fromAISDKTools(set, { toolApproval });
    const { events, batch } = await collect(runTools(batchCalls, { tools }));
    expect(batch.paused?.requests.map((r) => r.toolCallId)).toEqual(['w1', 'w2']);
    expect(endsOf(events)).toEqual(['e1:ok', 'l1:rejected']);
    const bad = events.find((e) => e.type === 'tool_execution_end' && e.toolCallId === 'l1');
    expect(bad?.type === 'tool_execution_end' && text(bad.result)).toMatch(/status string "maybe", not one of/);
    expect(ran).toEqual({ send_email: 1, wire_money: 0, lookup: 0 });
    expect(() => fromAISDKTools(set, { toolApproval: 'user-approval' as never })).toThrow(/options\.toolApproval must be a function or an object/);
    expect(() => fromAISDKTools(set, { toolApproval: { lookup: 'ask' as never } })).toThrow(
      new TypeError(`fromAISDKTools: options.toolApproval gave tool "lookup" the status string "ask", not one of 'not-applicable', 'approved', 'denied', 'user-approval' (or an object with that type)`),
    );
  });
});

/**
 * The same tools, calls and approval settings through ai 7's own `generateText` (a mock
 * model that makes the calls) and through `fromAISDKTools` + `runTools`: each call must end
 * the same way in both — it ran, it waits for a person, or it was refused without running.
 * Fails if the adapter resolves a setting differently from the SDK (which it claims to mirror).
 */
describe("H1: fromAISDKTools decides each call as ai 7's generateText does", () => {
  type Fate = 'ran' | 'asked' | 'refused';
  const modelCalls = [
    { toolCallId: 'e1', toolName: 'send_email', input: '{"to":"eve"}' },
    { toolCallId: 'w1', toolName: 'wire_money', input: '{"amount":500}' },
    { toolCallId: 'w2', toolName: 'wire_money', input: '{"amount":5}' },
    { toolCallId: 'l1', toolName: 'lookup', input: '{"q":"x"}' },
  ];
  function toolSet(ran: string[]) {
    return {
      send_email: ai7.tool({ inputSchema: z.object({ to: z.string() }), needsApproval: true, execute: async (_i, o) => void ran.push(o.toolCallId) }),
      wire_money: ai7.tool({
        inputSchema: z.object({ amount: z.number() }),
        needsApproval: async ({ amount }) => amount > 100,
        execute: async (_i, o) => void ran.push(o.toolCallId),
      }),
      lookup: ai7.tool({ inputSchema: z.object({ q: z.string() }), execute: async (_i, o) => void ran.push(o.toolCallId) }),
    };
  }
  type Set = ReturnType<typeof toolSet>;
  const settings: { label: string; toolApproval: ai7.ToolApprovalConfiguration<Set, object> | undefined }[] = [
    { label: "the tools' own needsApproval", toolApproval: undefined },
    {
      label: 'per-tool statuses and functions',
      toolApproval: { send_email: 'not-applicable', wire_money: (input) => (input.amount > 100 ? 'denied' : 'approved'), lookup: { type: 'user-approval', reason: 'r' } },
    },
    { label: 'per-tool entries left undefined fall back to needsApproval', toolApproval: { send_email: undefined, lookup: 'denied' } },
    {
      label: 'the function form',
      toolApproval: ({ toolCall }) => (toolCall.toolName === 'lookup' ? 'user-approval' : toolCall.toolCallId === 'w2' ? { type: 'denied', reason: 'no' } : undefined),
    },
  ];

  it.each(settings)('H1: $label', async ({ toolApproval }) => {
    const sdkRan: string[] = [];
    const model = new ai7test.MockLanguageModelV3({
      doGenerate: async () => ({
        content: modelCalls.map((c) => ({ type: 'tool-call' as const, ...c })),
        finishReason: { unified: 'tool-calls' as const, raw: 'tool_calls' },
        usage: {
          inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
          outputTokens: { total: 1, text: 1, reasoning: undefined },
        },
        warnings: [],
      }),
    });
    const result = await ai7.generateText({ model, tools: toolSet(sdkRan), prompt: 'go', ...(toolApproval === undefined ? {} : { toolApproval }) });
    const sdkAsked = result.content.flatMap((p) => (p.type === 'tool-approval-request' && p.isAutomatic !== true ? [p.toolCall.toolCallId] : []));
    const sdk = modelCalls.map((c): Fate => (sdkRan.includes(c.toolCallId) ? 'ran' : sdkAsked.includes(c.toolCallId) ? 'asked' : 'refused'));

    const ourRan: string[] = [];
    const { tools } = fromAISDKTools(toolSet(ourRan), toolApproval === undefined ? {} : { toolApproval });
    const { batch } = await collect(runTools(modelCalls.map((c) => ({ id: c.toolCallId, name: c.toolName, arguments: c.input })), { tools }));
    const ourAsked = batch.paused?.requests.map((r) => r.toolCallId) ?? [];
    const ours = modelCalls.map((c): Fate => (ourRan.includes(c.toolCallId) ? 'ran' : ourAsked.includes(c.toolCallId) ? 'asked' : 'refused'));

    expect(ours).toEqual(sdk);
    // Each setting exercises more than one fate, so agreement is not trivial.
    expect(new Set(sdk).size).toBeGreaterThan(1);
  });
});
