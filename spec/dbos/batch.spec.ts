/**
 * `registerDurableBatch` end to end with the core (runTools driving the DBOS journal), on a
 * real PostgreSQL: a crash mid-batch (DBOS shut down under the running workflow, relaunched:
 * the workflow is recovered in this process) re-runs no call whose result was journaled,
 * answers each interrupted call by the chosen policy, and keeps the runtime's own final
 * results (a timeout stays a timeout, not the abort the crash caused).
 */
import { DBOS } from '@dbos-inc/dbos-sdk';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import type { ToolEvent } from '../../lib/core/run/events.ts';
import { defineTool } from '../../lib/index.ts';
import { dbosAgentJournal, progressStreamKey, registerDurableBatch, type DurableBatchResult } from '../../lib/dbos/index.ts';
import { runAgent, type AgentEvent, type AgentResult } from '../../lib/extras/agent.ts';
import { scriptedModel } from '../../lib/extras/agent/scripted-model.ts';
import { gate, launchDbosForFile } from './harness.ts';

launchDbosForFile('toolrun_batch');
const starts: string[] = [];
const keys: Record<string, string[]> = {};
const never = gate();
const threeRan = gate();
let onHold: (() => void) | undefined;
let attempt = 0;

const quick = defineTool({
  name: 'quick',
  input: v.object({ n: v.number() }),
  async *execute({ n }, ctx) {
    starts.push(`quick ${n}`);
    (keys[`quick ${n}`] ??= []).push(ctx.idempotencyKey ?? '-');
    yield { n, half: true };
    if (n === 3 && attempt === 0) {
      threeRan.open();
      await never.promise;
    }
    return `quick ${n} done (attempt ${attempt})`;
  },
});
const slow = defineTool({
  name: 'slow',
  input: v.object({}),
  timeoutMs: 50,
  async execute(_input, { signal }) {
    starts.push('slow');
    // Never finishes on its own: its 50 ms timeout always ends it.
    await new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
  },
});
const hold = defineTool({
  name: 'hold',
  input: v.object({}),
  async execute() {
    starts.push('hold');
    onHold?.();
    if (attempt === 0) await never.promise;
    return 'hold done';
  },
});
const batch = registerDurableBatch({
  name: 'crash-batch',
  tools: [quick, slow, hold],
  interruptedCalls: (call) => (call.toolName === 'quick' ? 'run-again' : 'unknown'),
});

// runAgent in a DBOS workflow: turn 0 calls quick(10), turn 1 calls hold (held in the first
// attempt: the crash point, after turn 1's reply was journaled), turn 2 answers.
const model = scriptedModel([
  { role: 'assistant', content: [{ type: 'toolCall', id: 'a0', name: 'quick', arguments: { n: 10 } }] },
  { role: 'assistant', content: [{ type: 'toolCall', id: 'a1', name: 'hold', arguments: {} }] },
  { role: 'assistant', content: [{ type: 'text', text: 'All done.' }] },
]);
const agentEvents: AgentEvent[] = [];
const agentWorkflow = DBOS.registerWorkflow(
  async (): Promise<AgentResult> => {
    const run = runAgent({ model, tools: [quick, hold], messages: [{ role: 'user', content: 'go' }], journal: dbosAgentJournal(), interruptedCalls: 'run-again' });
    for (;;) {
      const next = await run.next();
      if (next.done === true) return next.value;
      agentEvents.push(next.value);
    }
  },
  { name: 'agent-spec' },
);


const text = (m: { content: unknown[] }) => (m.content[0] as { text: string }).text;

const counting = defineTool({
  name: 'counting',
  input: v.object({ to: v.number() }),
  async *execute({ to }) {
    for (let i = 1; i <= to; i++) yield { i };
    return `counted to ${to}`;
  },
});
const streamed = registerDurableBatch({ name: 'toolrun-batch-streamed', tools: [counting], streamProgress: true });

describe('registerDurableBatch with runTools (J)', () => {
  it('J-dbos-batch-crash: journaled results survive a crash exactly as the run finalized them; interrupted calls follow the policy, with the same idempotency key', async () => {
    // Fails if a journaled call runs again (starts), if the journaled timeout comes back as
    // another text (the raw return or the crash's abort journaled instead of the finalized
    // result), if an interrupted 'unknown' call runs again, or if a 'run-again' call gets a
    // new idempotency key.
    const workflowId = 'crash-1';
    const calls = [
      { id: 'toolu_0', name: 'quick', arguments: { n: 0 } },
      { id: 'toolu_1', name: 'slow', arguments: {} },
      { id: 'toolu_2', name: 'hold', arguments: {} },
      { id: 'toolu_3', name: 'quick', arguments: { n: 3 } },
    ];
    const firstResults: string[] = [];
    const twoReleased = gate();
    await batch.start(calls, {
      workflowId,
      onEvent(event: ToolEvent) {
        if (event.type !== 'tool_result') return;
        firstResults[event.index] = text(event.message);
        if (event.index === 1) twoReleased.open();
      },
    });
    await Promise.all([twoReleased.promise, threeRan.promise]); // calls 0 and 1 committed; 2 and 3 are running
    attempt = 1;
    await DBOS.shutdown();
    await DBOS.launch();
    const result = await DBOS.retrieveWorkflow<DurableBatchResult>(workflowId).getResult();

    expect(result.messages.map((m) => m.toolCallId)).toEqual(['toolu_0', 'toolu_1', 'toolu_2', 'toolu_3']);
    expect(text(result.messages[0]!)).toBe(firstResults[0]);
    expect(text(result.messages[0]!)).toBe('quick 0 done (attempt 0)');
    expect(text(result.messages[1]!)).toBe(firstResults[1]);
    expect(result.outcomes).toEqual(['ok', 'timed_out', 'interrupted', 'ok']);
    expect(text(result.messages[1]!)).toBe('Tool "slow" timed out after 50 ms and was stopped.');
    expect(text(result.messages[2]!)).toContain('its outcome is unknown');
    expect(result.messages[2]!.isError).toBe(true);
    expect(text(result.messages[3]!)).toBe('quick 3 done (attempt 1)');
    expect(starts.filter((s) => s === 'quick 0')).toHaveLength(1);
    expect(starts.filter((s) => s === 'slow')).toHaveLength(1);
    expect(starts.filter((s) => s === 'hold')).toHaveLength(1);
    expect(starts.filter((s) => s === 'quick 3')).toHaveLength(2);
    expect(keys['quick 3']).toEqual([`${workflowId}:batch:3`, `${workflowId}:batch:3`]);
  }, 120_000);

  it('J-dbos-agent-crash: runAgent with dbosAgentJournal asks the model once per turn across a crash; a journaled turn is not run again', async () => {
    // Fails if a journaled reply is asked again (the scripted model would hand turn 0 its
    // third reply and the history would differ), or if turn 0's journaled call runs again.
    attempt = 0;
    const turnOneHeld = gate();
    const before = starts.length;
    const workflowId = 'agent-crash-1';
    await DBOS.startWorkflow(agentWorkflow, { workflowID: workflowId })();
    // hold starts only after turn 1's reply was journaled (J8: committed before its calls start).
    onHold = () => turnOneHeld.open();
    await turnOneHeld.promise;
    onHold = undefined;
    attempt = 1;
    await DBOS.shutdown();
    await DBOS.launch();
    const result = await DBOS.retrieveWorkflow<AgentResult>(workflowId).getResult();
    expect(model.calls).toBe(3);
    expect(result.reason).not.toBe('error');
    expect(result.turns).toBe(3);
    const last = result.messages.at(-1) as { role: string; content: { text?: string }[] };
    expect(last.content[0]!.text).toBe('All done.');
    expect(starts.slice(before).filter((x) => x === 'quick 10')).toHaveLength(1);
    expect(starts.slice(before).filter((x) => x === 'hold')).toHaveLength(2);
  }, 120_000);
  it('J7 with streamProgress, each call\'s progress is written to its DBOS stream, in the order yielded, and the stream is closed with its result', async () => {
    const workflowId = `streamed-${Date.now()}`;
    const result = await streamed.run(
      [
        { id: 'c0', name: 'counting', arguments: { to: 3 } },
        { id: 'c1', name: 'counting', arguments: { to: 2 } },
      ],
      { workflowId },
    );
    expect(result.outcomes).toEqual(['ok', 'ok']);
    const read = async (index: number): Promise<unknown[]> => {
      const values: unknown[] = [];
      for await (const value of DBOS.readStream(workflowId, progressStreamKey('batch', index))) values.push(value);
      return values;
    };
    expect(await read(0)).toEqual([{ i: 1 }, { i: 2 }, { i: 3 }]);
    expect(await read(1)).toEqual([{ i: 1 }, { i: 2 }]);
  });
});
