/**
 * Loader for Claude Code session transcripts (`~/.claude/projects/*.jsonl`).
 *
 * Format facts this relies on (see `../shared/corpus/SOURCES.md`, "Format observations" 7):
 * - one line per content block: an assistant message with 3 tool calls is 3+ `assistant`
 *   lines sharing `message.id`;
 * - each tool result is its own `user` line, logged in completion order, not call order;
 * - a subagent's own messages are embedded in top-level `type: "progress"` lines
 *   (`data.type: "agent_progress"`, `data.message` = a whole user/assistant line). Each is
 *   read once (deduplicated by `uuid`) and kept apart from the main conversation, so
 *   nothing is counted twice.
 *
 * The recorded follow-up of a message is the user message Claude Code would send: its
 * `tool_result` blocks, here in the order they were logged. No tool definitions are
 * recorded, so any object arguments are accepted.
 *
 * @module
 */
import { fromAnthropic } from '../../formats/anthropic.ts';
import { asString } from '../../formats/shared.ts';
import type { ToolCall } from '../../core/tool/tool.ts';
import type { JsonlRecord } from './read.ts';
import { callNotes } from './cassette.ts';
import type { LoadedRecording, RecordedMessage } from './types.ts';
import { isObjectRecord } from '../../core/values/guards.ts';

/** Claude Code's text for a tool use the user rejected (it starts with this). */
const REJECTED = "The user doesn't want to proceed with this tool use";
/** Claude Code's text for a sibling it cancelled after a parallel call failed. */
const SIBLING_ERRORED = 'Sibling tool call errored';
/** Claude Code's user line after an interruption. */
const INTERRUPTED = '[Request interrupted by user';

/**
 * True when the records look like a Claude Code transcript: every line an object with a
 * string `type`, and at least one `user` or `assistant` line carrying a `sessionId` and a
 * `message` (other line types — `progress`, `system`, `file-history-snapshot`, … — vary
 * between Claude Code versions and are not required).
 */
export function looksLikeClaudeCode(records: readonly JsonlRecord[]): boolean {
  let conversationLines = 0;
  for (const { value } of records) {
    if (!isObjectRecord(value) || typeof value.type !== 'string') return false;
    if ((value.type === 'user' || value.type === 'assistant') && typeof value.sessionId === 'string' && isObjectRecord(value.message)) conversationLines++;
  }
  return conversationLines > 0;
}

/** One user or assistant entry of a conversation (main or subagent), in log order. */
interface Entry {
  line: number;
  role: 'user' | 'assistant';
  message: Record<string, unknown>;
}

/** Loads a transcript: one recorded message per assistant message (grouped by `message.id`) with at least one `tool_use`. */
export function loadClaudeCode(records: readonly JsonlRecord[]): LoadedRecording {
  const subagents = new Map<string, Entry[]>();
  const main = readEntries(records, (entry, progress, data) => {
    const agent = asString(data.agentId) || asString(progress.parentToolUseID) || 'subagent';
    const list = subagents.get(agent) ?? [];
    list.push(entry);
    subagents.set(agent, list);
  });
  const found = conversationMessages(main, '');
  for (const [agent, entries] of subagents) found.push(...conversationMessages(entries, `subagent ${agent} `));
  found.sort((a, b) => a.line - b.line);
  return { format: 'Claude Code transcript', messages: found.map(({ message }) => message), companions: [] };
}

/**
 * The main conversation's entries, in log order; each subagent entry (an `agent_progress`
 * line's message, once per `uuid`: a message is logged again with every later progress line)
 * goes to `subagent` with its progress line and that line's `data`.
 */
function readEntries(
  records: readonly JsonlRecord[],
  subagent: (entry: Entry, progress: Record<string, unknown>, data: Record<string, unknown>) => void,
): Entry[] {
  const main: Entry[] = [];
  const seen = new Set<string>();
  for (const { line, value } of records) {
    if (!isObjectRecord(value)) continue;
    if (value.type === 'user' || value.type === 'assistant') {
      const entry = toEntry(value, line);
      if (entry !== undefined) main.push(entry);
    } else if (value.type === 'progress' && isObjectRecord(value.data) && value.data.type === 'agent_progress' && isObjectRecord(value.data.message)) {
      const message = value.data.message;
      const uuid = asString(message.uuid);
      if (uuid !== '') {
        if (seen.has(uuid)) continue;
        seen.add(uuid);
      }
      const entry = toEntry(message, line);
      if (entry !== undefined) subagent(entry, value, value.data);
    }
  }
  return main;
}

function toEntry(value: Record<string, unknown>, line: number): Entry | undefined {
  const message = value.message;
  if (!isObjectRecord(message)) return undefined;
  const role = value.type === 'assistant' || message.role === 'assistant' ? 'assistant' : 'user';
  return { line, role, message };
}

interface LoggedResult {
  /** Index of its entry in the conversation. */
  position: number;
  line: number;
  /** Position in the conversation's log of results. */
  order: number;
  block: Record<string, unknown>;
}

/** The messages with tool calls of one conversation (main or one subagent), each with the line of its first tool_use. */
function conversationMessages(entries: readonly Entry[], prefix: string): Array<{ line: number; message: RecordedMessage }> {
  // Group tool_use blocks by message id, in line order.
  const groups = new Map<string, { firstLine: number; firstEntry: number; calls: ToolCall[] }>();
  const results = new Map<string, LoggedResult[]>();
  const interruptions: number[] = [];
  let order = 0;
  entries.forEach((entry, position) => {
    const content = entry.message.content;
    if (entry.role === 'assistant') {
      if (!Array.isArray(content)) return;
      const calls = fromAnthropic({ content });
      if (calls.length === 0) return;
      const id = asString(entry.message.id) || `line-${entry.line}`;
      const group = groups.get(id) ?? { firstLine: entry.line, firstEntry: position, calls: [] };
      group.calls.push(...calls);
      groups.set(id, group);
      return;
    }
    if (typeof content === 'string') {
      if (content.startsWith(INTERRUPTED)) interruptions.push(position);
      return;
    }
    if (!Array.isArray(content)) return;
    for (const block of content) {
      if (!isObjectRecord(block)) continue;
      if (block.type === 'tool_result') {
        const list = results.get(asString(block.tool_use_id)) ?? [];
        list.push({ position, line: entry.line, order: order++, block });
        results.set(asString(block.tool_use_id), list);
      } else if (block.type === 'text' && typeof block.text === 'string' && block.text.startsWith(INTERRUPTED)) {
        interruptions.push(position);
      }
    }
  });

  const messages: Array<{ line: number; message: RecordedMessage }> = [];
  const used = new Map<string, number>();
  const groupList = [...groups.entries()];
  groupList.forEach(([id, group], g) => {
    const { calls } = group;
    // The k-th call with an id takes the k-th logged result with that id (ids can repeat).
    const paired: Array<LoggedResult | undefined> = calls.map((call) => {
      const k = used.get(call.id) ?? 0;
      used.set(call.id, k + 1);
      return results.get(call.id)?.[k];
    });
    const logged = paired.filter((r): r is LoggedResult => r !== undefined).sort((a, b) => a.order - b.order);
    const notes = [...callNotes(calls), ...transcriptNotes(calls, paired, logged)];
    // An interruption logged after this message's last result and before the next message with calls.
    const next = groupList[g + 1]?.[1].firstEntry ?? Number.POSITIVE_INFINITY;
    const lastResult = Math.max(group.firstEntry, ...logged.map((r) => r.position));
    if (interruptions.some((p) => p > lastResult && p < next)) notes.push('the user interrupted the turn ("[Request interrupted by user…]")');
    const followUp: RecordedMessage['followUp'] = logged.length === 0
      ? { none: 'no tool result logged for this message' }
      : {
        format: 'anthropic',
        wire: { role: 'user', content: logged.map((r) => r.block) },
        historyCallIds: calls.map((call) => call.id),
        source: `user lines ${logged.map((r) => r.line).join(', ')}`,
      };
    const label = `${prefix}message ${id} (line ${group.firstLine})`;
    messages.push({ line: group.firstLine, message: { label, calls, tools: undefined, followUp, notes } });
  });
  return messages;
}

function transcriptNotes(calls: readonly ToolCall[], paired: ReadonlyArray<LoggedResult | undefined>, logged: readonly LoggedResult[]): string[] {
  const notes: string[] = [];
  const missing = paired.map((r, i) => (r === undefined ? i : -1)).filter((i) => i >= 0);
  if (missing.length > 0) {
    notes.push(`no result logged for ${missing.map((i) => `call #${i + 1} '${calls[i]?.name ?? ''}'`).join(', ')}`);
  }
  const loggedCallOrder = logged.map((r) => paired.indexOf(r) + 1);
  if (loggedCallOrder.some((n, i) => i > 0 && n < (loggedCallOrder[i - 1] ?? 0))) {
    notes.push(`Claude Code logged the results in completion order, not call order (logged: calls ${loggedCallOrder.join(', ')})`);
  }
  const texts = paired.map((r) => (r === undefined ? '' : resultText(r.block)));
  const rejected = texts.filter((t) => t.startsWith(REJECTED)).length;
  if (rejected > 0) notes.push(`the user rejected ${rejected} of ${calls.length} calls (Claude Code answered with its rejection text)`);
  const siblings = texts.filter((t) => t.includes(SIBLING_ERRORED)).length;
  if (siblings > 0) {
    const failed = paired.findIndex((r, i) => r !== undefined && r.block.is_error === true && !(texts[i] ?? '').includes(SIBLING_ERRORED));
    notes.push(
      `Claude Code cancelled ${siblings} sibling call${siblings === 1 ? '' : 's'} after ${failed >= 0 ? `call #${failed + 1}` : 'a call'} failed ` +
        `("Sibling tool call errored"); toolrun never cancels siblings (contract A1), the replay returns the recorded text`,
    );
  }
  return notes;
}

function resultText(block: Record<string, unknown>): string {
  const content = block.content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (isObjectRecord(part) && typeof part.text === 'string' ? part.text : '')).join('\n');
}

// ---------------------------------------------------------------------------------------
// Whole conversations, for replaying a transcript through the agent loop (`runAgent`)

/** One assistant message of a transcript: its content blocks gathered from every line that shares its `message.id`. */
export interface TranscriptTurn {
  /** `message.id` (or `line-<n>` when absent). */
  id: string;
  /** The line of its first block. */
  line: number;
  /** The Anthropic content blocks in log order: text, thinking, tool_use… */
  content: Record<string, unknown>[];
}

/** A stretch of a conversation that one `runAgent` run replays: a user prompt, then the model's turns up to its answer. */
interface TranscriptRun {
  /** The user text logged before the run's first turn (prompts, interruptions), joined; `''` when none. */
  prompt: string;
  turns: TranscriptTurn[];
}

/** A tool result as Claude Code logged it. */
export interface TranscriptResult {
  /** The `tool_result` block's `content`: a string or an array of content blocks. */
  content: unknown;
  isError: boolean;
  line: number;
}

/** A subagent's conversation, embedded in the parent transcript's `agent_progress` lines. */
interface TranscriptSubagent {
  agentId: string;
  /** Its first user message. */
  prompt: string;
  turns: TranscriptTurn[];
}

/** A transcript read for the agent loop. */
export interface ClaudeCodeConversation {
  /** The main conversation, split into runs: a run ends at an answer without tool calls, or where the user spoke next. */
  runs: TranscriptRun[];
  /** Every logged tool result, the main conversation's and the subagents', by `tool_use_id` (the first one logged). */
  results: Map<string, TranscriptResult>;
  /** Subagents by the id of the tool call that ran them (the progress line's `parentToolUseID`). */
  subagents: Map<string, TranscriptSubagent>;
}

/**
 * Reads a Claude Code transcript as conversations the agent loop can replay: the main
 * conversation's assistant messages (grouped by `message.id`, blocks in log order) split
 * into runs, the logged tool results, and each subagent's own turns from the
 * `agent_progress` lines (deduplicated by `uuid`, as {@link loadClaudeCode} does).
 *
 * Not recorded, so not returned: a subagent's final answer (it is the text of the result
 * of the call that ran it), and tool definitions.
 */
export function loadClaudeCodeConversation(records: readonly JsonlRecord[]): ClaudeCodeConversation {
  const embedded = new Map<string, { agentId: string; entries: Entry[] }>();
  const main = readEntries(records, (entry, progress, data) => {
    const parent = asString(progress.parentToolUseID) || asString(data.agentId) || 'subagent';
    const agent = embedded.get(parent) ?? { agentId: asString(data.agentId), entries: [] };
    agent.entries.push(entry);
    embedded.set(parent, agent);
  });
  const results = new Map<string, TranscriptResult>();
  const collectResults = (entries: readonly Entry[]): void => {
    for (const entry of entries) {
      if (entry.role !== 'user' || !Array.isArray(entry.message.content)) continue;
      for (const block of entry.message.content as unknown[]) {
        if (!isObjectRecord(block) || block.type !== 'tool_result') continue;
        const id = asString(block.tool_use_id);
        if (!results.has(id)) results.set(id, { content: block.content, isError: block.is_error === true, line: entry.line });
      }
    }
  };
  collectResults(main);
  const subagents = new Map<string, TranscriptSubagent>();
  for (const [parent, { agentId, entries }] of embedded) {
    collectResults(entries);
    const runs = transcriptRuns(entries);
    subagents.set(parent, { agentId, prompt: runs[0]?.prompt ?? '', turns: runs.flatMap((run) => run.turns) });
  }
  return { runs: transcriptRuns(main), results, subagents };
}

/** Groups assistant lines into turns and splits them into runs (see {@link ClaudeCodeConversation.runs}). */
function transcriptRuns(entries: readonly Entry[]): TranscriptRun[] {
  const turns = new Map<string, TranscriptTurn & { userBefore: string[] }>();
  let userText: string[] = [];
  for (const entry of entries) {
    const content = entry.message.content;
    if (entry.role === 'user') {
      if (typeof content === 'string') userText.push(content);
      else if (Array.isArray(content)) {
        for (const block of content as unknown[]) if (isObjectRecord(block) && block.type === 'text' && typeof block.text === 'string') userText.push(block.text);
      }
      continue;
    }
    const id = asString(entry.message.id) || `line-${entry.line}`;
    let turn = turns.get(id);
    if (turn === undefined) {
      turn = { id, line: entry.line, content: [], userBefore: userText };
      turns.set(id, turn);
      userText = [];
    }
    if (Array.isArray(content)) for (const block of content as unknown[]) if (isObjectRecord(block)) turn.content.push(block);
  }
  const runs: TranscriptRun[] = [];
  let current: TranscriptRun | undefined;
  let previousAnswered = true;
  for (const { userBefore, ...turn } of turns.values()) {
    if (current === undefined || previousAnswered || userBefore.length > 0) {
      current = { prompt: userBefore.join('\n\n'), turns: [] };
      runs.push(current);
    }
    current.turns.push(turn);
    previousAnswered = !turn.content.some((block) => block.type === 'tool_use');
  }
  return runs;
}
