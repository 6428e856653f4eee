/**
 * `npm start -- agent` (lib/cli/agent.ts) and the live view's tree of sub-agent calls
 * (lib/cli/agent-tree.ts, drawn by lib/cli/view/index.ts).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import stripAnsi from 'strip-ansi';
import type { AgentEvent } from '../../lib/extras/agent.ts';
import type { AgentToolProgress } from '../../lib/extras/agent-tool.ts';
import { runAgentDemo } from '../../lib/cli/agent.ts';
import { createRunView } from '../../lib/cli/view/index.ts';
import { main } from '../../lib/cli/main.ts';
import { FakeStream, memoryIo } from './support.ts';
import type { ToolEvent } from '../../lib/core/run/events.ts';


afterEach(() => {
  vi.useRealTimers();
});

/** The progress of top-level call `toolu_x` (index 0) carrying a nested event at `path`. */
function nested(path: string[], event: AgentEvent): ToolEvent {
  const progress: AgentToolProgress = { type: 'agent_progress', agent: 'explore', path, depth: path.length, parentToolCallId: path.at(-1)!, event };
  return { type: 'tool_execution_update', toolCallId: 'toolu_x', toolName: 'explore', index: 0, progress };
}
const start = (id: string, name: string, index: number, args: unknown): AgentEvent => ({ type: 'tool_execution_start', toolCallId: id, toolName: name, index, args });
const end = (id: string, name: string, index: number, text: string, isError = false): AgentEvent => ({
  type: 'tool_execution_end',
  toolCallId: id,
  toolName: name,
  index,
  result: { content: [{ type: 'text', text }] },
  isError,
  outcome: isError ? 'error' : 'ok',
  startedAt: 0,
  endedAt: 0,
});

/** A top-level agent call whose sub-agent runs grep, then a nested sub-agent that reads a file. */
function playNested(view: ReturnType<typeof createRunView>, tick: (ms: number) => void): void {
  view.begin('parent turn 1', [{ id: 'toolu_x', name: 'explore', arguments: { prompt: 'look' } }]);
  view.event({ type: 'tool_execution_start', toolCallId: 'toolu_x', toolName: 'explore', index: 0, args: { prompt: 'look' } });
  view.event(nested(['toolu_x'], { type: 'turn_start', turn: 1 }));
  view.event(nested(['toolu_x'], { type: 'message', turn: 1, message: { role: 'assistant', content: [{ type: 'text', text: 'Grepping first.' }] } }));
  view.event(nested(['toolu_x'], start('g1', 'grep', 0, { pattern: 'runAgent' })));
  view.event(nested(['toolu_x'], start('d1', 'deep', 1, { prompt: 'read it' })));
  tick(5);
  view.event(nested(['toolu_x'], end('g1', 'grep', 0, 'lib/agent.ts:283:export function runAgent\nmore')));
  view.event(nested(['toolu_x', 'd1'], { type: 'turn_start', turn: 1 }));
  view.event(nested(['toolu_x', 'd1'], start('r1', 'read_file', 0, { path: 'lib/agent.ts' })));
  tick(100);
  view.event(nested(['toolu_x', 'd1'], end('r1', 'read_file', 0, 'no such file', true)));
  view.event(nested(['toolu_x', 'd1'], { type: 'agent_end', reason: 'completed', turns: 2, messages: [] }));
  view.event(nested(['toolu_x'], end('d1', 'deep', 1, 'deep answer')));
  view.event(nested(['toolu_x'], { type: 'agent_end', reason: 'completed', turns: 2, messages: [] }));
  tick(1);
  view.event({ type: 'tool_execution_end', toolCallId: 'toolu_x', toolName: 'explore', index: 0, result: { content: [{ type: 'text', text: 'explorer answer' }] }, isError: false, outcome: 'ok', startedAt: 0, endedAt: 0 });
  view.event({ type: 'tool_result', toolCallId: 'toolu_x', toolName: 'explore', index: 0, message: { role: 'tool', toolCallId: 'toolu_x', toolName: 'explore', content: [{ type: 'text', text: 'explorer answer' }], isError: false } });
}

describe('the live view draws sub-agent calls as a tree', () => {
  it('plain mode: one line per nested start, end, message and sub-agent end, indented by depth', () => {
    const stream = new FakeStream();
    let t = 0;
    const view = createRunView({ stream, tty: false, now: () => t });
    playNested(view, (ms) => (t += ms));
    view.end();
    expect(stream.output.split('\n').slice(0, 14)).toEqual([
      'run parent turn 1 (1 call)',
      'start toolu_x explore {"prompt":"look"}',
      '  toolu_x | says: Grepping first.',
      '  toolu_x | start g1 grep {"pattern":"runAgent"}',
      '  toolu_x | start d1 deep {"prompt":"read it"}',
      '  toolu_x | end g1 ok 5ms',
      '  toolu_x |   start r1 read_file {"path":"lib/agent.ts"}',
      '  toolu_x |   end r1 error 100ms',
      '  toolu_x |   sub-agent done: completed, 2 turns',
      '  toolu_x | end d1 ok 105ms',
      '  toolu_x | sub-agent done: completed, 2 turns',
      'end toolu_x ok 106ms: explorer answer',
      'results (call order):',
      '  toolu_x ok explorer answer',
    ]);
  });

  it('TTY mode: nested calls under their call, deeper ones indented, every line within the width', () => {
    vi.useFakeTimers();
    const stream = new FakeStream();
    stream.columns = 72;
    let t = 0;
    const view = createRunView({ stream, tty: true, now: () => t });
    let midRun = '';
    playNested(view, (ms) => {
      t += ms;
      vi.advanceTimersByTime(ms);
      if (ms === 100) midRun = stripAnsi(stream.output);
    });
    // While the nested sub-agent runs: its read_file under it, spinning.
    // A finished nested call shows its last line, as a top-level row does.
    expect(midRun).toMatch(/├ ✓ grep runAgent +5ms more/);
    expect(midRun).toMatch(/└ [⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] deep read it/);
    expect(midRun).toMatch(/ {4}└ [⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] read_file lib\/agent\.ts/);
    view.end();
    const final = stripAnsi(stream.output);
    expect(final).toMatch(/✓ explore +look +106ms explorer answer/);
    expect(final).toMatch(/ {4}└ ✗ read_file lib\/agent\.ts 100ms no such file/);
    for (const line of final.split(/\n|\x1b\[\d*G/)) expect(line.length, line).toBeLessThanOrEqual(72);
    view.close();
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('toolrun agent', () => {
  it('runs the two-level scripted agent in a temp folder holding the demo project: explorers’ calls nested live, a final answer from their results', async () => {
    const stream = new FakeStream();
    const view = createRunView({ stream, tty: false });
    const result = await runAgentDemo(view, { thinkMs: 0 });
    view.close();
    expect(result.reason).toBe('completed');
    expect(result.turns).toBe(2);
    const out = stream.output;
    expect(out).toMatch(/^agent demo: a parent agent with two explorer sub-agents, in a temp folder/m);
    expect(out).toMatch(/^start toolu_explore_todo explore \{"prompt":"Find the TODOs/m);
    expect(out).toMatch(/^ {2}toolu_explore_todo \| start todo_1 grep /m);
    expect(out).toMatch(/^ {2}toolu_explore_usage \| start usage_3 read_file \{"path":"src\/cli\.ts"\}/m);
    expect(out).toMatch(/^ {2}toolu_explore_usage \| sub-agent done: completed, 3 turns$/m);
    // Nested lines of a call come before that call's own end line.
    expect(out.indexOf('toolu_explore_todo | sub-agent done')).toBeLessThan(out.indexOf('end toolu_explore_todo ok'));
    // The explorers report what the tools found in the folder.
    expect(out).toMatch(/assistant \(turn 2\): Here is what the explorers found:\n- TODOs: grep → src\/forecast\.ts:3:\/\/ TODO: cache forecasts for ten minutes \(\+1 line\)/);
    expect(out).toMatch(/^3 results, 0 errors$/m);
    expect(out).toMatch(/^agent: completed after 2 turns$/m);
  });

  it('Ctrl+C mid-run (in process, pressed when an explorer’s first call starts) aborts the parent, the explorers and their tools: exit 130', async () => {
    const io = memoryIo();
    io.interruptWhen('| start usage_1 grep');
    expect(await main(['agent'], io)).toBe(130);
    const out = io.out();
    expect(out).toContain('Ctrl+C: aborting the run');
    expect(out).toMatch(/^end toolu_explore_todo error \d+ms \(interrupted\)/m);
    expect(out).toMatch(/sub-agent done: aborted/);
    expect(out).toMatch(/^interrupted: agent: aborted after 1 turn \(Ctrl\+C; every call still got its result\)$/m);
    expect(out).not.toContain('assistant (turn 2)');
  });
});
