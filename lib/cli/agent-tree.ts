/**
 * The tree of a sub-agent's work, built from the `agent_progress` values an agent tool
 * yields (see `lib/extras/agent-tool.ts`), for the live view: under the call that ran the
 * sub-agent, one node per nested call, nested again under a sub-agent's own sub-agents.
 *
 * ```
 * ⠋ explore  find the agent loop        1.2s  turn 2 · Reading the two files.
 *   ├ ✓ list_files **\/*.ts lib          3ms  14 files
 *   └ ⠋ read_file lib/extras/agent.ts          0.1s
 * ```
 *
 * Nodes are keyed by their position (turn and index), never by id alone: ids can repeat.
 *
 * @module
 */
import type { AgentEvent } from '../extras/agent.ts';
import type { AgentToolProgress } from '../extras/agent-tool.ts';
import type { CallOutcome } from '../core/tool/tool.ts';
import type { ContentBlock } from '../core/tool/content.ts';
import { count, oneLine } from './text.ts';
import { contentLines, finishedLine } from './view/lines.ts';

/** One call inside a sub-agent's run; states only move forward (running → ended). */
export interface TreeNode {
  id: string;
  name: string;
  args: unknown;
  state: 'running' | 'ended';
  /** `now()` when its start event arrived. */
  startedAt: number;
  durationMs?: number;
  isError?: boolean;
  outcome?: CallOutcome;
  /** The line its finished row shows (last line of its result; first for a failure). */
  resultLine?: string;
  /** Its latest progress, one line. */
  latest?: string;
  /** When the node is itself a sub-agent: its state and its own calls. */
  agent?: AgentState;
}

/** What a sub-agent is doing: its turn, what it last said, its calls, how it ended. */
export interface AgentState {
  turn: number;
  /** First line of its last assistant message's text. */
  said?: string;
  /** Its calls, in the order they started (all turns). */
  children: TreeNode[];
  /** Key `turn:index` → node, for the events of the current and earlier turns. */
  byPosition: Map<string, TreeNode>;
  ended?: string;
}

/** A fresh sub-agent state. */
export function newAgentState(): AgentState {
  return { turn: 0, children: [], byPosition: new Map() };
}

/** True when a progress value is an agent tool's ({@link AgentToolProgress}). */
export function isAgentProgress(value: unknown): value is AgentToolProgress {
  if (typeof value !== 'object' || value === null) return false;
  const p = value as Partial<AgentToolProgress>;
  return p.type === 'agent_progress' && Array.isArray(p.path) && typeof p.depth === 'number' && typeof p.event === 'object' && p.event !== null;
}

/**
 * Applies one progress value of a top-level agent-tool call to its tree (`root`): finds
 * the sub-agent the event belongs to by following `path[1..]` (the nested agent calls), and
 * updates it. Returns what changed, for a plain-lines view to print, or `undefined`.
 */
export function applyAgentProgress(root: AgentState, progress: AgentToolProgress, now: number): TreeChange | undefined {
  let state = root;
  for (let k = 1; k < progress.path.length; k++) {
    const id = progress.path[k];
    const node = findLast(state.children, (n) => n.id === id && n.agent !== undefined) ?? findLast(state.children, (n) => n.id === id);
    if (node === undefined) return undefined;
    node.agent ??= newAgentState();
    state = node.agent;
  }
  const event: AgentEvent = progress.event;
  switch (event.type) {
    case 'turn_start':
      state.turn = event.turn;
      return undefined;
    case 'message': {
      const text = firstLine(event.message.content.flatMap((b) => (b.type === 'text' ? [{ type: 'text' as const, text: b.text }] : []))).first;
      if (text === '') return undefined;
      state.said = text;
      return { kind: 'said', depth: progress.depth, text };
    }
    case 'tool_execution_start': {
      const node: TreeNode = { id: event.toolCallId, name: event.toolName, args: event.args, state: 'running', startedAt: now };
      state.byPosition.set(`${state.turn}:${event.index}`, node);
      state.children.push(node);
      return { kind: 'start', depth: progress.depth, node };
    }
    case 'tool_execution_update': {
      const node = state.byPosition.get(`${state.turn}:${event.index}`);
      if (node === undefined || node.state === 'ended') return undefined;
      const line = progressLine(event.progress);
      if (line !== '') node.latest = line;
      return undefined;
    }
    case 'tool_execution_end': {
      const node = state.byPosition.get(`${state.turn}:${event.index}`);
      if (node === undefined || node.state === 'ended') return undefined;
      node.state = 'ended';
      node.durationMs = Math.round(now - node.startedAt);
      node.isError = event.isError;
      node.outcome = event.outcome;
      node.resultLine = finishedLine(contentLines(event.result.content), event.outcome);
      return { kind: 'end', depth: progress.depth, node };
    }
    case 'agent_end':
      state.ended = `${event.reason}, ${count(event.turns, 'turn')}`;
      return { kind: 'agent_end', depth: progress.depth, text: state.ended };
    default:
      return undefined;
  }
}

/** What a progress value changed in the tree, for a view that prints lines. */
export type TreeChange =
  | { kind: 'start'; depth: number; node: TreeNode }
  | { kind: 'end'; depth: number; node: TreeNode }
  | { kind: 'said'; depth: number; text: string }
  | { kind: 'agent_end'; depth: number; text: string };

/** The first non-empty line of a content list (terminal-safe), and how many non-empty lines follow. */
function firstLine(content: readonly ContentBlock[]): { first: string; more: number } {
  const lines = contentLines(content);
  return { first: lines[0] ?? '', more: Math.max(0, lines.length - 1) };
}

/** A nested tool's progress as one short line: a string's last line, a streamed chunk's last line, else compact JSON. */
function progressLine(progress: unknown): string {
  let text: string;
  if (typeof progress === 'string') text = progress;
  else if (typeof progress === 'object' && progress !== null && typeof (progress as { text?: unknown }).text === 'string') text = (progress as { text: string }).text;
  else {
    try {
      text = JSON.stringify(progress) ?? '';
    } catch {
      text = String(progress);
    }
  }
  const lines = text.split(/\r\n|\r|\n/).filter((line) => line.trim() !== '');
  return oneLine(lines.at(-1) ?? '');
}

function findLast<T>(items: readonly T[], test: (item: T) => boolean): T | undefined {
  for (let i = items.length - 1; i >= 0; i--) if (test(items[i]!)) return items[i];
  return undefined;
}
