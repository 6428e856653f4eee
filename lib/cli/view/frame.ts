/**
 * The layout of the live frame drawn on a TTY: a title, one line per call (columns aligned
 * across calls, every line within the terminal width), a sub-agent's nested calls as a tree
 * under its call, and a footer with the counts while the run goes on.
 *
 * ```
 * demo: 6 parallel tool calls …
 * ⠋ shell      for i in 1 2 3…    1.2s  step 2 of 5
 * ✓ read_file  README.md           3ms  Ship it when the checks pass.
 * · grep       TODO src          waiting
 * ? shell      grep -rn TODO…        waits for approval: writes a file
 * ↺ square     n=2              replayed  4
 * 1 running · 2/5 done · 1 replayed · 1 waiting for approval · 1 waiting
 * ```
 *
 * Plain text is budgeted first and colored after, so a cut never splits an escape sequence.
 *
 * @module
 */
import cliSpinners from 'cli-spinners';
import type picocolors from 'picocolors';
import type { AgentState, TreeNode } from '../agent-tree.ts';
import { argsSummary, count, displayWidth, oneLine, padWidth, truncateWidth } from '../text.ts';
import type { CallRecord } from './calls.ts';
import { moreLines } from './lines.ts';

/** The spinner drawn next to running calls (`dots` from cli-spinners, 80 ms a frame). */
export const SPINNER = cliSpinners.dots;

/** Most nested calls drawn per sub-agent (the latest ones). */
const TREE_CHILDREN = 6;

/** What one frame is drawn from. */
export interface FrameInput {
  title: string;
  calls: readonly CallRecord[];
  /** Terminal columns. */
  width: number;
  /** `now()` when drawn, for the running calls' elapsed time. */
  t: number;
  /** Index into {@link SPINNER}'s frames. */
  spinnerFrame: number;
  colors: ReturnType<typeof picocolors.createColors>;
}

/** The frame: title, one line per call (with its sub-agent tree), and the footer when `withFooter`. */
export function renderFrame(input: FrameInput, withFooter: boolean): string {
  const { colors: c, width, calls } = input;
  const lines = [c.bold(truncateWidth(input.title, width))];
  const nameWidth = Math.min(16, Math.max(0, ...calls.map((r) => displayWidth(r.name))));
  const argsWidth = Math.min(Math.floor(width * 0.3), Math.max(0, ...calls.map((r) => displayWidth(argsSummary(r.args)))));
  for (const record of calls) {
    lines.push(callLine(input, record, nameWidth, argsWidth));
    if (record.agent !== undefined) lines.push(...treeLines(input, record.agent, '  '));
  }
  if (withFooter) {
    const approval = calls.filter((r) => r.state !== 'ended' && r.approval !== undefined).length;
    const running = calls.filter((r) => r.state === 'running' && r.approval === undefined).length;
    const done = calls.filter((r) => r.state === 'ended').length;
    const waiting = calls.length - running - approval - done;
    const replayed = calls.filter((r) => r.replayed === true).length;
    const parts = [`${running} running`, `${done}/${calls.length} done`];
    if (replayed > 0) parts.push(`${replayed} replayed`);
    if (approval > 0) parts.push(`${approval} waiting for approval`);
    if (waiting > 0) parts.push(`${waiting} waiting`);
    lines.push(c.dim(truncateWidth(parts.join(' · '), width)));
  }
  return lines.join('\n');
}

/** A finished call's duration: `840ms`, `2.47s`. */
function duration(ms: number): string {
  return ms < 1000 ? `${ms}ms` : `${(ms / 1000).toFixed(2)}s`;
}

function spinner(input: FrameInput): string {
  return input.colors.cyan(SPINNER.frames[input.spinnerFrame % SPINNER.frames.length] ?? '*');
}

/**
 * One call: `mark name args time detail`, columns aligned across calls, within the width.
 * A running call shows its latest progress; a finished one its last line (see
 * `finishedLine`), after its outcome when that is not ok/error (`interrupted · …`).
 */
function callLine(input: FrameInput, record: CallRecord, nameWidth: number, argsWidth: number): string {
  const { colors: c, width, t } = input;
  const name = padWidth(truncateWidth(record.name, nameWidth), nameWidth);
  const args = padWidth(truncateWidth(argsSummary(record.args), argsWidth), argsWidth);
  const ms =
    record.earlier === true
      ? 'earlier'
      : record.replayed === true
        ? 'replayed'
        : record.state === 'running' && record.approval === undefined
        ? `${((t - (record.startedAt ?? t)) / 1000).toFixed(1)}s`
        : record.state === 'ended'
          ? duration(record.durationMs ?? 0)
          : '';
  const time = ms.padStart(8);
  // mark, name, args and time, each followed by one space.
  const rest = width - (2 + nameWidth + 1 + argsWidth + 1 + time.length + 1);
  const head = `${name} ${c.dim(args)} ${c.dim(time)} `;
  if (record.state !== 'ended' && record.approval !== undefined) return `${c.yellow('?')} ${head}${c.yellow(truncateWidth(record.approval, rest))}`;
  if (record.state === 'waiting') return `${c.dim('·')} ${head}${c.dim(truncateWidth('waiting', rest))}`;
  if (record.state === 'running') return `${spinner(input)} ${head}${truncateWidth(record.latest ?? '', rest)}`;
  const ok = record.isError !== true;
  // A replayed call (J4) did not run now: ↺ instead of ✓ / ✗, and "replayed" in its time column.
  const mark = record.replayed === true ? (ok ? c.cyan('↺') : c.red('↺')) : ok ? c.green('✓') : c.red('✗');
  // Why the outcome shows apart from the text: `rejected`, `not_run`, `timed_out` tell why
  // a call failed at a glance; skipped when the text already starts with it.
  const label = record.outcome === 'ok' || record.outcome === 'error' || record.outcome === undefined ? '' : record.outcome.replace('_', ' ');
  const outcome = label === '' || (record.resultLine ?? '').toLowerCase().startsWith(label) ? '' : `${label} · `;
  const more = moreLines(record.resultMore);
  const textWidth = rest - outcome.length - more.length;
  const text = truncateWidth(record.resultLine ?? '', textWidth);
  return `${mark} ${head}${outcome === '' ? '' : c.yellow(truncateWidth(outcome, rest))}${textWidth > 0 ? (ok ? text : c.red(text)) + c.dim(more) : ''}`;
}

/**
 * A sub-agent's calls under its call line, `├ ✓ name args time text`, nested sub-agents
 * indented further. Only the last {@link TREE_CHILDREN} calls of each sub-agent are drawn
 * (with a line counting the others), so a long sub-agent keeps the frame short.
 */
function treeLines(input: FrameInput, agent: AgentState, indent: string): string[] {
  const { colors: c, width } = input;
  const lines: string[] = [];
  const shown = agent.children.slice(-TREE_CHILDREN);
  const hidden = agent.children.length - shown.length;
  if (hidden > 0) lines.push(c.dim(truncateWidth(`${indent}│ … ${count(hidden, 'earlier call')}`, width)));
  shown.forEach((node, i) => {
    const last = i === shown.length - 1;
    lines.push(nodeLine(input, node, `${indent}${last ? '└' : '├'} `));
    if (node.agent !== undefined) lines.push(...treeLines(input, node.agent, `${indent}${last ? '  ' : '│ '}`));
  });
  return lines;
}

function nodeLine(input: FrameInput, node: TreeNode, branch: string): string {
  const { colors: c, width, t } = input;
  const ms = node.state === 'running' ? `${((t - node.startedAt) / 1000).toFixed(1)}s` : duration(node.durationMs ?? 0);
  const head = `${oneLine(node.name)} ${argsSummary(node.args)}`;
  const headText = truncateWidth(head, Math.max(8, Math.floor(width * 0.45) - displayWidth(branch)));
  const rest = width - displayWidth(branch) - 2 - displayWidth(headText) - 1 - ms.length - 1;
  const detail =
    node.state === 'running'
      ? node.agent !== undefined
        ? `turn ${node.agent.turn}${node.agent.said === undefined ? '' : ` · ${node.agent.said}`}`
        : (node.latest ?? '')
      : (node.resultLine ?? '');
  const text = truncateWidth(oneLine(detail), rest);
  const mark = node.state === 'running' ? spinner(input) : node.isError === true ? c.red('✗') : c.green('✓');
  return `${c.dim(branch)}${mark} ${headText} ${c.dim(ms)} ${node.isError === true ? c.red(text) : text}`;
}
