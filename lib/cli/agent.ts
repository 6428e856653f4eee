/**
 * `toolrun agent`: a scripted two-level agent run against the demo's small project (written
 * into a temp folder, as the demo does; see demo.ts). A parent
 * agent sends two explorer sub-agents (an `agentTool`) off in parallel; each explorer
 * greps, lists and reads files with the ready-made tools; their calls show as a tree under
 * the parent's call while they run; the parent answers from what they reported.
 *
 * The models are scripts (no network, no API key): each turn waits `thinkMs` (standing in
 * for a model's latency, so the tree can be watched) and then plays its next reply. The
 * explorers' and the parent's final answers are written from the tool results they got,
 * so what they say is what the tools found in that folder.
 *
 * @module
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { delay } from 'abort-controller-x';
import { agentTool } from '../extras/agent-tool.ts';
import { assistantText, runAgent, toolCallsOf, type AgentMessage, type AgentModel, type AgentResult, type AssistantMessage, type ModelContext } from '../extras/agent.ts';
import { grepTool, listFilesTool, readFileTool } from '../tools/index.ts';
import { providerBlock } from '../core/values/content.ts';
import type { ToolResultMessage } from '../core/tool/tool.ts';
import { writeDemoFiles } from './demo.ts';
import { count } from './text.ts';
import type { RunView } from './view/index.ts';
import type { Inspector } from '../inspect/index.ts';

/** Options of {@link runAgentDemo}. */
export interface AgentDemoOptions {
  /**
   * The folder the tools work in; the demo project's files (`demoFiles` of demo.ts) are
   * written into it first.
   * @default a new temp folder, removed when the run ends
   */
  root?: string;
  /** Aborts the run (Ctrl+C): the model turn or the tools in flight stop, every call still gets its result. */
  signal?: AbortSignal;
  /**
   * How long each scripted model turn takes, in ms (a stand-in for a model's latency).
   * @default 600
   */
  thinkMs?: number;
  /** `--inspect`: each of the parent's tool batches is drawn on this live timeline. */
  inspector?: Pick<Inspector, 'begin'>;
}

/** What the parent asks of each explorer (the scripts below are keyed by it). */
const TASKS = {
  todo: 'Find the TODOs in this project: which files, which lines, what they ask for.',
  usage: 'Find how the program is run and what it prints.',
} as const;

type Reply = AssistantMessage | ((messages: readonly AgentMessage[]) => AssistantMessage);

const text = (t: string): AssistantMessage['content'][number] => ({ type: 'text', text: t });
const callBlock = (id: string, name: string, args: Record<string, unknown>): AssistantMessage['content'][number] => ({ type: 'toolCall', id, name, arguments: args });

/** The explorers' scripts: turn by turn, by task. */
const EXPLORER_SCRIPTS: Record<keyof typeof TASKS, Reply[]> = {
  todo: [
    {
      role: 'assistant',
      content: [
        text('Searching the sources for TODO comments.'),
        callBlock('todo_1', 'grep', { pattern: 'TODO', glob: 'src/**/*.ts' }),
        callBlock('todo_2', 'list_files', { pattern: '*.ts', path: 'src' }),
      ],
      stopReason: 'toolUse',
    },
    {
      role: 'assistant',
      content: [text('Reading the unit conversion the second TODO is about.'), callBlock('todo_3', 'read_file', { path: 'src/units.ts', limit: 3 })],
      stopReason: 'toolUse',
    },
    (messages) => answer(messages, 'TODOs'),
  ],
  usage: [
    {
      role: 'assistant',
      content: [
        text('Looking for the entry point and its output.'),
        callBlock('usage_1', 'grep', { pattern: 'console\\.log', glob: 'src/**/*.ts' }),
        callBlock('usage_2', 'list_files', { pattern: '*' }),
      ],
      stopReason: 'toolUse',
    },
    {
      role: 'assistant',
      content: [text('Reading the entry point.'), callBlock('usage_3', 'read_file', { path: 'src/cli.ts' })],
      stopReason: 'toolUse',
    },
    (messages) => answer(messages, 'Usage'),
  ],
};

/** The parent's script. */
const PARENT_SCRIPT: Reply[] = [
  {
    role: 'assistant',
    content: [
      text('I will send two explorers off in parallel, and read the README myself meanwhile.'),
      callBlock('toolu_explore_todo', 'explore', { prompt: TASKS.todo }),
      callBlock('toolu_explore_usage', 'explore', { prompt: TASKS.usage }),
      callBlock('toolu_readme', 'read_file', { path: 'README.md', limit: 3 }),
    ],
    stopReason: 'toolUse',
  },
  (messages) => {
    const reports = lastResults(messages)
      .filter((r) => r.toolName === 'explore')
      .map((r) => `- ${r.isError ? 'failed: ' : ''}${resultText(r)}`);
    return { role: 'assistant', content: [text(`Here is what the explorers found:\n${reports.join('\n')}`)], stopReason: 'stop' };
  },
];

/**
 * Runs the demo: the parent agent's turns on `view` (one `begin`/`end` per tool batch, the
 * explorers' calls drawn as a tree under each explorer call), its messages as lines.
 *
 * @returns the parent run's result (reason, turns, history).
 */
export async function runAgentDemo(view: RunView, options: AgentDemoOptions = {}): Promise<AgentResult> {
  const temp = options.root === undefined ? await mkdtemp(join(tmpdir(), 'toolrun-agent-')) : undefined;
  const root = options.root ?? temp!;
  try {
    await writeDemoFiles(root);
    return await runAgents(view, root, options, temp !== undefined);
  } finally {
    if (temp !== undefined) await rm(temp, { recursive: true, force: true });
  }
}

async function runAgents(view: RunView, root: string, options: AgentDemoOptions, inTemp: boolean): Promise<AgentResult> {
  const thinkMs = options.thinkMs ?? 600;
  const tools = [readFileTool({ root }), grepTool({ root }), listFilesTool({ root })] as const;
  const explore = agentTool({
    name: 'explore',
    description: 'Explores the project read-only (grep, list_files, read_file) and reports what it found.',
    model: scripted((messages) => {
      const first = messages[0];
      const prompt = first?.role === 'user' && typeof first.content === 'string' ? first.content : '';
      const task = (Object.keys(TASKS) as Array<keyof typeof TASKS>).find((key) => TASKS[key] === prompt);
      if (task === undefined) throw new Error(`the explorer's script has no task "${prompt}"`);
      return EXPLORER_SCRIPTS[task];
    }, thinkMs),
    tools,
    maxTurns: 5,
  });
  const run = runAgent({
    model: scripted(() => PARENT_SCRIPT, thinkMs),
    tools: [explore, tools[0]],
    messages: [{ role: 'user', content: 'What is left to do in this project, and how do I run it?' }],
    maxTurns: 4,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  view.line(`agent demo: a parent agent with two explorer sub-agents, in ${inTemp ? `a temp folder (${root})` : root}`);
  let batchOpen = false;
  let inspected: ReturnType<Inspector['begin']> | undefined;
  try {
    for (;;) {
      const step = await run.next();
      if (step.done === true) return step.value;
      const event = step.value;
      switch (event.type) {
        case 'message': {
          const said = assistantText(event.message).trim();
          if (said !== '') view.line(`assistant (turn ${event.turn}): ${said}`);
          const calls = toolCallsOf(event.message);
          if (calls.length > 0) {
            view.begin(`parent agent, turn ${event.turn}`, calls);
            inspected = options.inspector?.begin(`parent agent, turn ${event.turn}`);
            batchOpen = true;
          }
          break;
        }
        case 'turn_end':
          inspected?.end();
          inspected = undefined;
          if (batchOpen) {
            view.end(`${count(event.toolResults.length, 'result')}, ${count(event.toolResults.filter((r) => r.isError).length, 'error')}`);
            batchOpen = false;
          }
          break;
        case 'agent_end':
          view.line(`${event.reason === 'aborted' ? 'interrupted: ' : ''}agent: ${event.reason} after ${count(event.turns, 'turn')}${event.reason === 'aborted' ? ' (Ctrl+C; every call still got its result)' : ''}`);
          break;
        case 'turn_start':
        case 'message_update':
          break;
        default:
          inspected?.event(event);
          view.event(event);
      }
    }
  } finally {
    inspected?.end({ aborted: true });
    if (batchOpen) view.end('the run stopped early');
  }
}

/** A model that waits `thinkMs`, then plays the script's reply for this turn. */
function scripted(script: (messages: readonly AgentMessage[]) => readonly Reply[], thinkMs: number): AgentModel {
  return async (messages: readonly AgentMessage[], context: ModelContext): Promise<AssistantMessage> => {
    if (thinkMs > 0) await delay(context.signal, thinkMs);
    const reply = script(messages)[context.turn - 1];
    if (reply === undefined) throw new Error(`the script has no reply for turn ${context.turn}`);
    return typeof reply === 'function' ? reply(messages) : structuredClone(reply);
  };
}

/** An explorer's final answer, written from the first line of each of its tool results. */
function answer(messages: readonly AgentMessage[], subject: string): AssistantMessage {
  const findings = messages
    .filter((m): m is ToolResultMessage => m.role === 'tool')
    .map((r) => {
      const lines = resultText(r).split('\n').filter((l) => l.trim() !== '');
      const first = (lines[0] ?? '').trim();
      return `${r.toolName} → ${first.length > 90 ? `${first.slice(0, 89)}…` : first}${lines.length > 1 ? ` (+${count(lines.length - 1, 'line')})` : ''}`;
    });
  return { role: 'assistant', content: [text(`${subject}: ${findings.join('; ')}`)], stopReason: 'stop' };
}

/** The tool results after the last assistant message. */
function lastResults(messages: readonly AgentMessage[]): ToolResultMessage[] {
  const out: ToolResultMessage[] = [];
  for (let i = messages.length - 1; i >= 0 && messages[i]!.role === 'tool'; i--) out.unshift(messages[i] as ToolResultMessage);
  return out;
}

function resultText(result: ToolResultMessage): string {
  return result.content.map(providerBlock).map((b) => (b.type === 'text' ? b.text : `[image ${b.mimeType}]`)).join('\n');
}
