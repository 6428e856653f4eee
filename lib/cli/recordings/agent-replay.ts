/**
 * Replaying a Claude Code transcript through the agent loop: the model replays the
 * recorded assistant messages, each tool returns the result Claude Code logged for that
 * call, and a call that ran a subagent (`Task` / `Agent`) is an {@link agentTool} whose
 * model replays the subagent's own recorded messages — so the parent's event stream shows
 * the nested calls as they run, as Claude Code's UI did.
 *
 * Where the recording is silent, the replay says so rather than inventing:
 * - a subagent's final answer is not logged as a message; it is the first text block of the
 *   result of the call that ran it, and the replayed subagent answers with that text
 *   (Claude Code appends a second block, `agentId: … <usage>…`, of its own);
 * - a call with no logged result fails with a text that says so.
 *
 * @module
 */
import { delay } from 'abort-controller-x';
import { agentTool } from '../../extras/agent-tool.ts';
import { scriptedModel } from '../../testing.ts';
import { runAgent, type AgentEvent, type AgentMessage, type AgentResult, type AssistantMessage } from '../../extras/agent.ts';
import { fromAnthropicMessage } from '../../extras/agent/agent-messages.ts';
import { providerBlock } from '../../core/values/content.ts';
import type { ContentBlock } from '../../core/tool/content.ts';
import type { Tool, ToolContext } from '../../core/tool/tool.ts';
import type { ClaudeCodeConversation, TranscriptResult, TranscriptTurn } from './claude-code.ts';
import { ANY_OBJECT_SCHEMA } from './types.ts';
import { isObjectRecord } from '../../core/values/guards.ts';
import { defineTool } from '../../core/schema/define-tool.ts';

/** Options of the transcript replay. */
export interface AgentReplayOptions {
  /**
   * Longest fake latency of one replayed tool call, in ms (a random 0..`delayMs`).
   * @default 0 (no timers)
   */
  delayMs?: number;
  /** Aborts the replay: the model and the tools see it as a user's Esc. */
  signal?: AbortSignal;
  /**
   * Names of the tools that run subagents.
   * @default ['Task', 'Agent'] (Claude Code's names, before and after 2.1)
   */
  subagentToolNames?: readonly string[];
}

/** A recorded assistant message as the agent loop's neutral message. */
function transcriptMessage(turn: TranscriptTurn): AssistantMessage {
  const calls = turn.content.some((block) => block.type === 'tool_use');
  return fromAnthropicMessage({ content: turn.content, stop_reason: calls ? 'tool_use' : 'end_turn' });
}

/** A model that replays recorded turns in order, then (if given) answers with `finalText`. */
export function replayModel(turns: readonly TranscriptTurn[], finalText?: string) {
  const script: AssistantMessage[] = turns.map(transcriptMessage);
  if (finalText !== undefined) script.push({ role: 'assistant', content: [{ type: 'text', text: finalText }], stopReason: 'stop' });
  return scriptedModel(script);
}

/** The content of a logged tool result as result content blocks (text and images; other blocks as their JSON). */
export function recordedContent(content: unknown): ContentBlock[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return content === undefined ? [] : [{ type: 'text', text: JSON.stringify(content) }];
  return (content as unknown[]).map((block): ContentBlock => {
    if (isObjectRecord(block) && block.type === 'text' && typeof block.text === 'string') return { type: 'text', text: block.text };
    if (isObjectRecord(block) && block.type === 'image' && isObjectRecord(block.source) && typeof block.source.data === 'string') {
      return { type: 'image', data: block.source.data, mimeType: typeof block.source.media_type === 'string' ? block.source.media_type : 'application/octet-stream' };
    }
    return { type: 'text', text: JSON.stringify(block) };
  });
}

/** The text of a logged result (text blocks joined with `"\n"`). */
export function recordedText(result: TranscriptResult): string {
  return recordedContent(result.content)
    .map(providerBlock)
    .map((block) => (block.type === 'text' ? block.text : `[image ${block.mimeType}]`))
    .join('\n');
}

/**
 * One replay tool per tool name used anywhere in the transcript (the main conversation and
 * every subagent). Each call yields one progress value, waits its fake latency, and returns
 * the logged result of its id — or throws its text when Claude Code logged it as an error,
 * so the runtime's error result carries the same text. A subagent tool's call that has a
 * recorded subagent runs it as an {@link agentTool}.
 */
export function replayTools(conversation: ClaudeCodeConversation, options: AgentReplayOptions = {}): Tool[] {
  const subagentNames = new Set(options.subagentToolNames ?? ['Task', 'Agent']);
  const names = new Set<string>();
  const collect = (turns: readonly TranscriptTurn[]): void => {
    for (const turn of turns) for (const block of turn.content) if (block.type === 'tool_use' && typeof block.name === 'string') names.add(block.name);
  };
  for (const run of conversation.runs) collect(run.turns);
  for (const sub of conversation.subagents.values()) collect(sub.turns);
  const tools: Tool[] = [];
  for (const name of names) {
    const recorded = defineTool({
      name,
      description: `Replays the result Claude Code logged for each ${name} call.`,
      input: ANY_OBJECT_SCHEMA,
      async *execute(_input, context) {
        yield { replaying: name };
        if (options.delayMs !== undefined && options.delayMs > 0) await delay(context.signal, Math.random() * options.delayMs);
        const result = conversation.results.get(context.toolCallId);
        if (result === undefined) throw new Error(`No result was logged for this ${name} call (${context.toolCallId}).`);
        if (result.isError) throw new Error(recordedText(result));
        return { content: recordedContent(result.content) };
      },
    });
    if (!subagentNames.has(name)) {
      tools.push(recorded);
      continue;
    }
    tools.push({
      ...recorded,
      execute(input: Record<string, unknown>, context: ToolContext) {
        const sub = conversation.subagents.get(context.toolCallId);
        if (sub === undefined) return recorded.execute(input, context);
        const logged = conversation.results.get(context.toolCallId);
        const first = logged === undefined ? undefined : recordedContent(logged.content)[0];
        const finalText = first?.type === 'text' ? first.text : undefined;
        const subagent = agentTool({
          name,
          model: replayModel(sub.turns, finalText),
          tools,
          maxTurns: sub.turns.length + (finalText === undefined ? 0 : 1),
          messages: () => [{ role: 'user', content: sub.prompt }],
        });
        return subagent.execute(input as { prompt: string }, context);
      },
    } as Tool);
  }
  return tools;
}

/**
 * Replays every run of the main conversation with `runAgent`, one after another, each
 * starting from the history the previous one returned plus the user text logged before it.
 * A run gets `maxTurns` = its recorded turns: a run the user cut short (they spoke while
 * calls were pending) ends with `max_turns` after its last batch, every call answered.
 *
 * Yields each run's events with the run's index; returns every run's result.
 */
export async function* replayConversation(
  conversation: ClaudeCodeConversation,
  options: AgentReplayOptions = {},
): AsyncGenerator<{ run: number; event: AgentEvent }, AgentResult[], undefined> {
  const tools = replayTools(conversation, options);
  const results: AgentResult[] = [];
  let history: AgentMessage[] = [];
  for (const [index, run] of conversation.runs.entries()) {
    const messages: AgentMessage[] = run.prompt === '' ? history : [...history, { role: 'user', content: run.prompt }];
    const agent = runAgent({
      model: replayModel(run.turns),
      tools,
      messages,
      maxTurns: run.turns.length,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    for (;;) {
      const step = await agent.next();
      if (step.done === true) {
        results.push(step.value);
        history = step.value.messages;
        break;
      }
      yield { run: index, event: step.value };
    }
    if (options.signal?.aborted === true) break;
  }
  return results;
}
