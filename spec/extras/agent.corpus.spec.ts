/**
 * Real Claude Code transcripts with subagents, replayed through the agent loop: the model
 * replays the recorded assistant messages, the tools the logged results, and the call that
 * ran a subagent is an `agentTool` replaying the subagent's own messages.
 *
 * - `claude-code/spotter__subagent.jsonl`: a session whose `Task` call ran a subagent; the
 *   subagent's messages are embedded in `type: "progress"` lines (`agent_progress`).
 * - `claude-code/spotter__agent-a2898e3.subagent.jsonl`: a subagent's own transcript,
 *   replayed as the body of an `agentTool` called by a one-call parent.
 */
import { describe, expect, it } from 'vitest';
import { scriptedModel } from '../../lib/testing.ts';
import { agentTool, runAgent, type AgentEvent, type AgentMessage, type AgentToolProgress, type AssistantMessage, type ToolResultMessage } from '../../lib/index.ts';
import { loadClaudeCodeConversation, type ClaudeCodeConversation, type TranscriptTurn } from '../../lib/cli/recordings/claude-code.ts';
import { recordedContent, recordedText, replayConversation, replayModel, replayTools } from '../../lib/cli/recordings/agent-replay.ts';
import { readRecordingFile } from '../../lib/cli/recordings/read.ts';
import { corpusDir, corpusSkipNote, hasCorpus } from '../formats/corpus.ts';
import { text } from '../helpers.ts';

async function conversation(file: string): Promise<ClaudeCodeConversation> {
  const parsed = await readRecordingFile(`${corpusDir}claude-code/${file}`, file);
  if (parsed.kind !== 'jsonl') throw new Error(`${file} is not JSON Lines`);
  return loadClaudeCodeConversation(parsed.records);
}

/** Tool call ids of recorded turns, in order. */
function callIds(turns: readonly TranscriptTurn[]): string[] {
  return turns.flatMap((turn) => turn.content.filter((b) => b.type === 'tool_use').map((b) => String(b.id)));
}

/** Every tool_result at any depth: top-level events, and those inside agent tools' progress. */
function allResults(events: readonly AgentEvent[]): ToolResultMessage[] {
  const out: ToolResultMessage[] = [];
  for (const event of events) {
    if (event.type === 'tool_result') out.push(event.message);
    if (event.type === 'tool_execution_update') {
      const p = event.progress as Partial<AgentToolProgress>;
      if (p.type === 'agent_progress' && p.event?.type === 'tool_result') out.push(p.event.message);
    }
  }
  return out;
}

/** Each assistant message's calls answered right after it, in order, ids matching. */
function expectValidHistory(messages: readonly AgentMessage[]): void {
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    expect(message.role, `message ${i}`).not.toBe('tool');
    if (message.role !== 'assistant') continue;
    const ids = message.content.flatMap((b) => (b.type === 'toolCall' ? [b.id] : []));
    expect(messages.slice(i + 1, i + 1 + ids.length).map((m) => (m.role === 'tool' ? m.toolCallId : m.role))).toEqual(ids);
    i += ids.length;
  }
}

describe.skipIf(!hasCorpus)(`Claude Code transcripts with subagents, replayed through runAgent${corpusSkipNote}`, () => {
  it('spotter__subagent.jsonl: the Task call runs the embedded subagent live, and every recorded call gets its logged result', async () => {
    const transcript = await conversation('spotter__subagent.jsonl');
    // What the loader found: two runs (the user spoke again after ExitPlanMode), one subagent.
    expect(transcript.runs.map((r) => r.turns.length)).toEqual([8, 4]);
    const [taskId, sub] = [...transcript.subagents.entries()][0]!;
    expect(taskId).toBe('toolu_01Cz2Pnv7qNcnK1ZiocxWhQX');
    expect(sub.agentId).toBe('afb92ff');
    const subCalls = callIds(sub.turns);
    expect(subCalls).toHaveLength(9);

    const events: Array<{ run: number; event: AgentEvent }> = [];
    const replay = replayConversation(transcript);
    let results;
    for (;;) {
      const step = await replay.next();
      if (step.done) {
        results = step.value;
        break;
      }
      events.push(step.value);
    }
    expect(results.map((r) => r.reason)).toEqual(['max_turns', 'completed']);
    for (const r of results) expectValidHistory(r.messages);

    // Every recorded call, in the main conversation and in the subagent, got exactly its logged result.
    const mainCalls = transcript.runs.flatMap((run) => callIds(run.turns));
    const answered = allResults(events.map((e) => e.event));
    expect(answered.map((m) => m.toolCallId).sort()).toEqual([...mainCalls, ...subCalls].sort());
    for (const message of answered) {
      const logged = transcript.results.get(message.toolCallId)!;
      expect(message.isError, message.toolCallId).toBe(logged.isError);
      if (message.toolCallId === taskId) continue; // compared below
      expect(message.content, message.toolCallId).toEqual(recordedContent(logged.content));
    }
    // The Task result is the subagent's answer: the first block Claude Code logged (its
    // second block, "agentId: … <usage>", is Claude Code's own annotation).
    const task = answered.find((m) => m.toolCallId === taskId)!;
    expect(task.content).toEqual([recordedContent(transcript.results.get(taskId)!.content)[0]]);
    expect(recordedText(transcript.results.get(taskId)!)).toContain('agentId: afb92ff');

    // Live: the nested calls show in the parent's stream as the Task call's progress,
    // depth 1, path [Task id], each start before the Task call's own end.
    const flat = events.map((e) => e.event);
    const taskEnd = flat.findIndex((e) => e.type === 'tool_execution_end' && e.toolCallId === taskId);
    const nestedStarts = flat
      .map((e, i) => ({ e, i }))
      .filter(({ e }) => e.type === 'tool_execution_update' && e.toolCallId === taskId)
      .map(({ e, i }) => ({ p: (e as { progress: AgentToolProgress }).progress, i }))
      .filter(({ p }) => p.event.type === 'tool_execution_start');
    expect(nestedStarts.map(({ p }) => (p.event as { toolCallId: string }).toolCallId)).toEqual(subCalls);
    for (const { p, i } of nestedStarts) {
      expect(p).toMatchObject({ type: 'agent_progress', agent: 'Task', depth: 1, path: [taskId], parentToolCallId: taskId });
      expect(i).toBeLessThan(taskEnd);
    }
    // The subagent's messages reach the parent too, one `message` event per recorded turn plus its answer.
    const nestedMessages = flat.flatMap((e) => (e.type === 'tool_execution_update' && e.toolCallId === taskId && (e.progress as AgentToolProgress).event.type === 'message' ? [e] : []));
    expect(nestedMessages).toHaveLength(sub.turns.length + 1);
  });

  it('spotter__agent-a2898e3.subagent.jsonl: a subagent transcript as the body of an agentTool — 33 calls, nested live, final answer returned', async () => {
    const transcript = await conversation('spotter__agent-a2898e3.subagent.jsonl');
    expect(transcript.runs).toHaveLength(1);
    const run = transcript.runs[0]!;
    expect(run.prompt).toMatch(/^Very thorough exploration/);
    const calls = callIds(run.turns);
    expect(calls).toHaveLength(33);
    const last = run.turns.at(-1)!;
    expect(last.content.some((b) => b.type === 'tool_use')).toBe(false);

    const explore = agentTool({
      name: 'Task',
      model: replayModel(run.turns),
      tools: replayTools(transcript),
      maxTurns: run.turns.length,
      messages: () => [{ role: 'user', content: run.prompt }],
    });
    const parent = scriptedModel([
      { role: 'assistant', content: [{ type: 'toolCall', id: 'toolu_parent', name: 'Task', arguments: { prompt: run.prompt } }], stopReason: 'toolUse' },
      { role: 'assistant', content: [{ type: 'text', text: 'Thanks, that is what I needed.' }], stopReason: 'stop' },
    ]);
    const events: AgentEvent[] = [];
    const agent = runAgent({ model: parent, tools: [explore], messages: [{ role: 'user', content: 'Plan the transcript refactor.' }] });
    let result;
    for (;;) {
      const step = await agent.next();
      if (step.done) {
        result = step.value;
        break;
      }
      events.push(step.value);
    }
    expect(result.reason).toBe('completed');
    expectValidHistory(result.messages);

    const answered = allResults(events).filter((m) => m.toolCallId !== 'toolu_parent');
    expect(answered.map((m) => m.toolCallId)).toEqual(calls);
    for (const message of answered) expect(message.content, message.toolCallId).toEqual(recordedContent(transcript.results.get(message.toolCallId)!.content));

    const taskResult = result.messages[2] as ToolResultMessage;
    const finalText = (fromTurn(last).content[0] as { text: string }).text;
    expect(text(taskResult)).toBe(finalText);
    expect(taskResult.details).toMatchObject({ reason: 'completed', turns: run.turns.length });
  });
});

function fromTurn(turn: TranscriptTurn): AssistantMessage {
  return replayModel([turn])([], { signal: new AbortController().signal, turn: 1, tools: [] }) as AssistantMessage;
}
