/**
 * Issue 22 item 4 (contract H12): an adapted tool's own approval answers some calls of a
 * batch and leaves another pending, as `runTools`' `approve` can — with the peers' real
 * packages: ai 7's `toolApproval` statuses per call, and the OpenAI Agents SDK's
 * `RunContext.approveTool` / `rejectTool` records (per call, and `alwaysApprove`).
 *
 * How these fail: if the adapter ignored the peer's per-call answer, the approved call would
 * pause too (three requests, not one) or the rejected call would run (its count is 1); if
 * the pending call were not deferred it would run unasked.
 */
import * as ai7 from 'ai';
// `@openai/agents` re-exports these from `@openai/agents-core` (the same functions: spec/adapters/openai-agents.slow.spec.ts);
// the core alone loads in half the CPU (0.5 s against 1.0 s per worker of `npm test`).
import { Agent, RunContext, RunToolApprovalItem, tool as agentsTool } from '@openai/agents-core';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { collect, text } from '../helpers.ts';
import { fromAISDKTools, fromOpenAIAgentsTools, runTools, type Tool, type ToolCall } from '../../lib/index.ts';

const calls: ToolCall[] = [
  { id: 'w1', name: 'wire_money', arguments: { to: 'ann', amount: 10 } },
  { id: 'w2', name: 'wire_money', arguments: { to: 'bob', amount: 20 } },
  { id: 'w3', name: 'wire_money', arguments: { to: 'cy', amount: 30 } },
];

/** Runs the batch, then resumes it approving whatever is pending; returns what ran and the results. */
async function pauseThenApprove(tools: Tool[], wired: string[]) {
  const first = (await collect(runTools(calls, { tools }))).batch;
  const pending = first.paused?.requests.map((r) => r.toolCallId) ?? [];
  const ranBeforeResume = [...wired];
  const approvals = (first.paused?.requests ?? []).map((r) => ({ approvalId: r.approvalId, approved: true }));
  const final = first.paused === undefined ? first : (await collect(runTools(calls, { tools, resume: { state: first.paused.state, approvals } }))).batch;
  return { pending, ranBeforeResume, final };
}

/** An Agents SDK tool that needs approval and records whom it wired, its agent, and a fresh run context. */
function agentsWire() {
  const wired: string[] = [];
  const wire = agentsTool({
    name: 'wire_money',
    description: 'Wires money',
    parameters: z.object({ to: z.string(), amount: z.number() }),
    needsApproval: true,
    execute: async ({ to }) => {
      wired.push(to);
      return `wired ${to}`;
    },
  });
  return { wired, wire, agent: new Agent({ name: 'bank', tools: [wire] }), runContext: new RunContext({}) };
}

describe('H12: an adapted tool answers some calls itself and leaves one pending', () => {
  it("H12: ai 7's toolApproval — 'approved' runs w1, 'denied' refuses w2, 'user-approval' leaves w3 pending; the batch pauses on w3 alone", async () => {
    const wired: string[] = [];
    const { tools } = fromAISDKTools(
      {
        wire_money: ai7.tool({
          inputSchema: z.object({ to: z.string(), amount: z.number() }),
          execute: async ({ to }) => {
            wired.push(to);
            return `wired ${to}`;
          },
        }),
      },
      {
        toolApproval: ({ toolCall }) =>
          toolCall.toolCallId === 'w1' ? 'approved' : toolCall.toolCallId === 'w2' ? { type: 'denied', reason: 'over the limit' } : 'user-approval',
      },
    );
    const { pending, ranBeforeResume, final } = await pauseThenApprove(tools, wired);
    expect(pending).toEqual(['w3']);
    expect(ranBeforeResume).toEqual(['ann']);
    expect(wired).toEqual(['ann', 'cy']);
    expect(final.messages.map((m) => m.isError)).toEqual([false, true, false]);
    expect(text(final.messages[1]!)).toContain('over the limit');
  });

  it("H12: OpenAI Agents' RunContext — approveTool(w1), rejectTool(w2, message) answer those calls; w3, recorded nowhere, pauses", async () => {
    const { wired, wire, agent, runContext } = agentsWire();
    const item = (call: ToolCall) =>
      new RunToolApprovalItem({ type: 'function_call', callId: call.id, name: call.name, arguments: JSON.stringify(call.arguments) }, agent);
    runContext.approveTool(item(calls[0]!));
    runContext.rejectTool(item(calls[1]!), { message: 'over the limit' });
    const { tools } = fromOpenAIAgentsTools([wire], { runContext });
    const { pending, ranBeforeResume, final } = await pauseThenApprove(tools, wired);
    expect(pending).toEqual(['w3']);
    expect(ranBeforeResume).toEqual(['ann']);
    expect(wired).toEqual(['ann', 'cy']);
    expect(final.messages.map((m) => m.isError)).toEqual([false, true, false]);
    expect(text(final.messages[1]!)).toContain('"over the limit"');
  });

  it("H12: OpenAI Agents' alwaysApprove in the RunContext answers every call of the tool: nothing pauses", async () => {
    const { wired, wire, agent, runContext } = agentsWire();
    runContext.approveTool(new RunToolApprovalItem({ type: 'function_call', callId: 'earlier', name: 'wire_money', arguments: '{}' }, agent), { alwaysApprove: true });
    const { tools } = fromOpenAIAgentsTools([wire], { runContext });
    const { batch } = await collect(runTools(calls, { tools }));
    expect(batch.paused).toBeUndefined();
    expect(wired).toEqual(['ann', 'bob', 'cy']);
  });
});
