/**
 * The demo (`toolrun` with no arguments): one assistant message, written the way
 * Anthropic's Messages API returns it, whose six parallel tool calls use the ready-made
 * coding tools. Nothing here needs a network, an API key or this repository: the demo
 * writes a small project into a temp folder, runs the calls there, and removes the folder.
 *
 * The calls take very different times — two shell calls of about 2.5 s and 1.2 s come
 * first in the message, three file tools of a few ms after them — so the live view shows
 * them finishing in another order than they were called (5-ish ms, then 1.2 s, then 2.5 s)
 * while the results still come out in call order.
 *
 * The sixth call writes a file, and the demo's `beforeToolCall` asks a person about shell
 * commands that write files (contract H1): the `approve` option answers it in the run (a
 * key press on a terminal), or the batch pauses and its state goes to a file that
 * {@link resumeDemo} continues from, in a later process.
 *
 * @module
 */
import { access, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import type { PausedBatchBody, PausedBatchState, PausedCall, ToolApprovalHandler, ToolApprovalRequest, ToolApprovalResponse } from '../core/approval/approval.ts';
import type { ToolBatch, ToolEvent } from '../core/run/events.ts';
import type { BeforeToolCallResult } from '../core/run/options.ts';
import { runTools } from '../core/run/run-tools.ts';
import type { ToolResultMessage } from '../core/tool/tool.ts';
import { fromAnthropic } from '../formats/anthropic.ts';
import { grepTool, listFilesTool, readFileTool, shellSandboxStatus, shellTool } from '../tools/index.ts';
import type { Tool } from '../core/tool/tool.ts';
import { CliInputError } from './errors.ts';
import { count } from './text.ts';
import type { RunView } from './view/index.ts';

/** Options of {@link runDemo}. */
export interface DemoOptions {
  /**
   * The folder the tools work in; the demo's files are written into it first.
   * @default a new temp folder, removed when the run ends
   */
  root?: string;
  /** Aborts the run (Ctrl+C): running calls are interrupted, every call still gets its result. */
  signal?: AbortSignal;
  /**
   * Answers the approval request of the call that writes a file, in the run (a prompt, or
   * `--approve` / `--deny`); `undefined` from it, or no `approve` at all, pauses the batch
   * and saves its state to {@link DemoOutcome.stateFile}.
   * @default none: the batch pauses
   */
  approve?: ToolApprovalHandler;
  /**
   * Where to look for bubblewrap, for the shell's sandbox (the specs point it at a missing
   * file to see the demo without a sandbox).
   * @default the shell tool's own: the first `bwrap` on `PATH`
   */
  bwrapPath?: string;
  /** Wraps the batch's run (`--inspect`: the live timeline watches it); returns it unchanged otherwise. */
  watch?: (run: AsyncGenerator<ToolEvent, ToolBatch, undefined>) => AsyncGenerator<ToolEvent, ToolBatch, undefined>;
}

/** How a demo run (or a resumed one) ended. */
export interface DemoOutcome {
  /** What `runTools` returned; `batch.paused` is set when a call still waits for approval. */
  batch: ToolBatch;
  /** Set when the batch paused: the file its state was saved to, for `toolrun --resume <file>`. */
  stateFile?: string;
}

/**
 * What the demo saves when its batch pauses: the batch's state, its pending requests (so
 * the resuming program can ask about them before it runs anything), and the folder the
 * tools work in (kept until the demo is resumed).
 */
export interface SavedDemo {
  kind: 'toolrun/paused-demo';
  version: 1;
  /** The project folder the calls run in. */
  root: string;
  /** True when the demo made `root` (a temp folder): it is removed once the resumed run ends. */
  temporary: boolean;
  /**
   * How the first run ran the shell: `'sandboxed'` (bubblewrap) or `'unsandboxed'` (the
   * sandbox could not start, so the demo ran its own fixed commands without it). The resumed
   * run follows it: a sandboxed demo never continues unsandboxed. A file without it reads as
   * `'sandboxed'`.
   */
  shell?: DemoShell;
  requests: ToolApprovalRequest[];
  state: PausedBatchState;
}

/** How the demo runs its shell commands: in the OS sandbox, or (where it cannot start) without it. */
type DemoShell = 'sandboxed' | 'unsandboxed';

/** The small project the demo's calls look at: path → text. */
const demoFiles: Readonly<Record<string, string>> = {
  'README.md': '# weather-cli\n\nPrints tomorrow\'s forecast for a city.\n\nRelease checklist: tests pass, changelog updated, version bumped.\n',
  'src/forecast.ts':
    "import { toCelsius } from './units.ts';\n\n// TODO: cache forecasts for ten minutes\nexport function describe(city: string, fahrenheit: number): string {\n  return `${city}: ${toCelsius(fahrenheit).toFixed(1)} °C`;\n}\n",
  'src/units.ts': '// TODO: support kelvin\nexport function toCelsius(fahrenheit: number): number {\n  return ((fahrenheit - 32) * 5) / 9;\n}\n',
  'src/cli.ts': "import { describe } from './forecast.ts';\n\nconsole.log(describe(process.argv[2] ?? 'Paris', 68));\n",
};

/**
 * The assistant message the demo runs: a text block, then six `tool_use` blocks. The first
 * shell call prints `step N of 5` every 0.5 s and then `finished`; the second waits 1.2 s
 * and counts the source lines; the file tools answer in milliseconds; the last shell call
 * writes `TODO.md`, so it waits for a person's approval first ({@link demoApprovalRule}).
 */
const demoMessage = {
  id: 'msg_demo',
  type: 'message',
  role: 'assistant',
  model: 'demo',
  stop_reason: 'tool_use',
  content: [
    { type: 'text', text: "Let me build the project, count its source lines, read its README, find the TODOs and list its files — all at once." },
    {
      type: 'tool_use',
      id: 'toolu_demo_01',
      name: 'shell',
      input: { command: 'for i in 1 2 3 4 5; do echo "step $i of 5"; sleep 0.5; done; echo finished' },
    },
    { type: 'tool_use', id: 'toolu_demo_02', name: 'shell', input: { command: 'sleep 1.2; cat src/*.ts | wc -l | xargs printf "%s lines of TypeScript\\n"' } },
    { type: 'tool_use', id: 'toolu_demo_03', name: 'read_file', input: { path: 'README.md' } },
    { type: 'tool_use', id: 'toolu_demo_04', name: 'grep', input: { pattern: 'TODO', glob: 'src/**/*.ts' } },
    { type: 'tool_use', id: 'toolu_demo_05', name: 'list_files', input: { pattern: '**/*' } },
    { type: 'tool_use', id: 'toolu_demo_06', name: 'shell', input: { command: 'grep -rn TODO src > TODO.md; wc -l < TODO.md | xargs printf "%s TODOs written to TODO.md\\n"' } },
  ],
} as const;

/**
 * The demo's approval rule, as an application would write it in `beforeToolCall`: a shell
 * command that redirects output into a file (`>`) writes to the project, so a person is
 * asked first; the reason is what they are shown (not the model). A demo rule over the
 * demo's own commands, not a sandbox: a command can write files in other ways.
 */
function demoApprovalRule({ toolCall, args }: { toolCall: { name: string }; args: unknown }): BeforeToolCallResult | undefined {
  const command = (args as { command?: unknown } | null)?.command;
  if (toolCall.name !== 'shell' || typeof command !== 'string' || !command.includes('>')) return undefined;
  return { needsApproval: true, reason: 'this shell command writes a file in the project' };
}

/**
 * How long a call may take to stop after Ctrl+C before its result is synthesized
 * (`abortGraceMs`, contract A3), in ms. The shell tool stops its process group on abort
 * (SIGTERM, then SIGKILL), which takes longer than the 100 ms default on a busy machine;
 * waiting for it gives its real result — `interrupted`, with the output it had — instead
 * of an `abandoned` stand-in.
 */
const DEMO_ABORT_GRACE_MS = 5_000;

/** Writes {@link demoFiles} under `root`. */
export async function writeDemoFiles(root: string): Promise<void> {
  for (const [path, text] of Object.entries(demoFiles)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
}

/**
 * The demo's tools, working in `root`, and the line that says how the shell runs, shown with
 * the run's title. The demo's shell commands are its own fixed ones, not a model's, so where
 * the shell's sandbox cannot start (no bubblewrap, not Linux) a new demo runs them without it
 * and says so, instead of showing every shell call refused. A resumed demo follows its first
 * run (`follow`): one that ran sandboxed keeps the sandbox, so where it cannot start now the
 * approved command is refused, and says why. An application's shell tool never drops the
 * sandbox on its own (docs/guide/built-in-tools.md, the shell's sandbox).
 */
async function demoTools(root: string, bwrapPath: string | undefined, follow?: DemoShell): Promise<{ tools: Tool[]; shell: DemoShell; note: string }> {
  const status = await shellSandboxStatus(bwrapPath === undefined ? {} : { bwrapPath });
  let shell: DemoShell;
  let note: string;
  if (follow === 'unsandboxed') {
    shell = 'unsandboxed';
    note = `the shell runs without its sandbox, as in the first run of this demo (${status.available ? 'the sandbox could not start then' : status.reason})`;
  } else if (status.available) {
    shell = 'sandboxed';
    note = `the shell runs each command in its sandbox (bubblewrap, ${status.bwrapPath}; no network, files outside the project read-only)`;
  } else if (follow === 'sandboxed') {
    shell = 'sandboxed';
    note = `the shell's sandbox cannot start here (${status.reason}); the first run used it, so shell commands are refused, not run without it`;
  } else {
    shell = 'unsandboxed';
    note = `the shell's sandbox cannot start here (${status.reason}); the demo runs its own fixed commands without it`;
  }
  const sandbox = shell === 'unsandboxed' ? false : bwrapPath === undefined ? undefined : { bwrapPath };
  const tools = [shellTool({ cwd: root, ...(sandbox === undefined ? {} : { sandbox }) }), readFileTool({ root }), listFilesTool({ root }), grepTool({ root })];
  return { tools, shell, note };
}

/**
 * Runs {@link demoMessage}'s calls with `runTools` and the coding tools rooted at a
 * workspace holding {@link demoFiles}, drawing every event on `view` (one `begin`/`end`
 * pair; the summary line starts with `interrupted:` when the run was aborted, `paused:`
 * when a call waits for approval).
 *
 * When the batch pauses, its state is saved to `<workspace>.paused.json` and the workspace
 * is kept for the resumed run; otherwise a temp workspace is removed when the run ends.
 *
 * @returns the batch `runTools` returned, and the state file when it paused.
 * @throws only what `runTools` itself throws, or a file-system error creating the workspace
 *   or writing the state file (tool failures are results, not throws).
 */
export async function runDemo(view: RunView, options: DemoOptions = {}): Promise<DemoOutcome> {
  const temp = options.root === undefined ? await mkdtemp(join(tmpdir(), 'toolrun-demo-')) : undefined;
  const root = options.root ?? temp!;
  let keep = false;
  try {
    await writeDemoFiles(root);
    const calls = fromAnthropic(demoMessage);
    const { tools, shell, note } = await demoTools(root, options.bwrapPath);
    view.begin(`demo: ${count(calls.length, 'parallel tool call')} from one assistant message, in ${temp === undefined ? root : `a temp folder (${root})`}`, calls);
    view.line(note);
    const run = runTools(calls, {
      tools,
      abortGraceMs: DEMO_ABORT_GRACE_MS,
      beforeToolCall: demoApprovalRule,
      ...(options.approve === undefined ? {} : { approve: options.approve }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    const batch = await drawBatch(view, options.watch === undefined ? run : options.watch(run), calls.length);
    if (batch.paused === undefined) return { batch };
    const stateFile = `${root}.paused.json`;
    const saved: SavedDemo = { kind: 'toolrun/paused-demo', version: 1, root, temporary: temp !== undefined, shell, requests: batch.paused.requests, state: batch.paused.state };
    // `wx`: a new file, never one that was already there (or a link planted in its place).
    await writeFile(stateFile, `${JSON.stringify(saved, null, 2)}\n`, { flag: 'wx' });
    keep = true;
    return { batch, stateFile };
  } finally {
    if (temp !== undefined && !keep) await rm(temp, { recursive: true, force: true });
  }
}

/**
 * Reads a state file {@link runDemo} saved.
 * @throws CliInputError when the file is missing, not JSON, not a saved demo, or its
 *   project folder is gone.
 */
export async function readSavedDemo(file: string): Promise<SavedDemo> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CliInputError(code === 'ENOENT' ? `--resume: no such state file: ${file} (a state file is removed once its demo is resumed)` : `--resume: cannot read ${file}: ${(error as Error).message}`);
  }
  let saved: unknown;
  try {
    saved = JSON.parse(text);
  } catch (error) {
    throw new CliInputError(`--resume: ${file} is not JSON: ${(error as Error).message}`);
  }
  const s = saved as Partial<SavedDemo> | null;
  if (typeof s !== 'object' || s === null || s.kind !== 'toolrun/paused-demo' || s.version !== 1 || typeof s.root !== 'string' || !Array.isArray(s.requests) || typeof s.state !== 'object' || (s.shell !== undefined && s.shell !== 'sandboxed' && s.shell !== 'unsandboxed')) {
    throw new CliInputError(`--resume: ${file} is not a paused demo's state file (written by toolrun when the demo pauses)`);
  }
  try {
    await access(s.root);
  } catch {
    throw new CliInputError(`--resume: the demo's project folder ${s.root} is gone; run the demo again (toolrun)`);
  }
  return s as SavedDemo;
}

/** The decisions on a paused demo's requests, or `undefined` to leave it paused (nothing runs, the state file stays). */
export type DemoDecider = (requests: readonly ToolApprovalRequest[]) => Promise<ToolApprovalResponse[] | undefined>;

/**
 * Continues a paused demo from its state file. Its calls are drawn first — those that ended
 * before the pause with their saved results (not run again), the pending ones as waiting
 * for approval — then `decide` answers the pending requests: each approved call runs, each
 * denied one gets an error result that says a person denied it. The state file and (when
 * the demo made it) the project folder are removed once the batch ends; a batch that pauses
 * again is saved to the same file.
 *
 * @returns the outcome, or `undefined` when `decide` left the demo paused.
 * @throws ResumeError (from `runTools`) when the state cannot be resumed (edited, tools
 *   changed, resumed before in this process).
 */
export async function resumeDemo(view: RunView, file: string, saved: SavedDemo, options: { decide: DemoDecider; signal?: AbortSignal; bwrapPath?: string }): Promise<DemoOutcome | undefined> {
  const calls = fromAnthropic(demoMessage);
  const { tools, note } = await demoTools(saved.root, options.bwrapPath, saved.shell === 'unsandboxed' ? 'unsandboxed' : 'sandboxed');
  view.begin(`demo, resumed: ${count(calls.length, 'tool call')} in ${saved.root}`, calls, earlierResults(saved.state));
  view.line(note);
  for (const request of saved.requests) view.approval?.(request.index, request.reason, true);
  let approvals: ToolApprovalResponse[] | undefined;
  try {
    approvals = await options.decide(saved.requests);
  } finally {
    if (approvals === undefined) view.end(`still paused: ${count(saved.requests.length, 'call')} waiting for approval; the state file is kept`);
  }
  if (approvals === undefined) return undefined;
  // Answered (by the flag or at the prompt): the rows stop saying they wait.
  for (const request of saved.requests) view.approval?.(request.index, undefined, false);
  const run = runTools(calls, {
    tools,
    abortGraceMs: DEMO_ABORT_GRACE_MS,
    beforeToolCall: demoApprovalRule,
    resume: { state: saved.state, approvals },
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  const batch = await drawBatch(view, run, calls.length);
  if (batch.paused !== undefined) {
    await writeFile(file, `${JSON.stringify({ ...saved, requests: batch.paused.requests, state: batch.paused.state } satisfies SavedDemo, null, 2)}\n`);
    return { batch, stateFile: file };
  }
  await rm(file, { force: true });
  if (saved.temporary && isDemoTempFolder(saved.root)) await rm(saved.root, { recursive: true, force: true });
  return { batch };
}

/**
 * True for a folder the demo made with `mkdtemp` (`<tmpdir>/toolrun-demo-XXXXXX`). Why the
 * check: the folder's path comes from a file, and a file can be edited; only such a folder is
 * ever removed recursively.
 */
function isDemoTempFolder(path: string): boolean {
  return dirname(path) === tmpdir() && /^toolrun-demo-[A-Za-z0-9]{6}$/.test(basename(path));
}

/**
 * The calls in a paused batch's state, for display only. A payload that does not read gives
 * none: the resume that follows reads the state itself and refuses it with the reason.
 */
function stateCalls(state: PausedBatchState): readonly PausedCall[] {
  let calls: unknown;
  try {
    calls = (JSON.parse(state.payload) as Partial<PausedBatchBody>).calls;
  } catch {
    return [];
  }
  return Array.isArray(calls) ? (calls as PausedCall[]) : [];
}

/** The results saved in a paused batch's state, by index: the calls that ended before the pause. */
function earlierResults(state: PausedBatchState): Map<number, ToolResultMessage> {
  const results = new Map<number, ToolResultMessage>();
  stateCalls(state).forEach((entry, index) => {
    if (entry.result !== undefined) results.set(index, entry.result);
  });
  return results;
}

/** Draws a batch's events on `view` and ends it with the summary line; returns the batch. */
async function drawBatch(view: RunView, run: AsyncGenerator<ToolEvent, ToolBatch, undefined>, calls: number): Promise<ToolBatch> {
  let ended = false;
  try {
    for (;;) {
      const step = await run.next();
      if (step.done === true) {
        const batch = step.value;
        ended = true;
        view.end(summary(batch, calls));
        return batch;
      }
      view.event(step.value);
    }
  } finally {
    if (!ended) view.end('the run stopped early');
  }
}

function summary(batch: ToolBatch, calls: number): string {
  const errors = count(batch.messages.filter((m) => m.isError).length, 'error');
  if (batch.paused !== undefined) {
    const answered = stateCalls(batch.paused.state).filter((entry) => entry.result !== undefined).length;
    return `paused: ${count(answered, 'call')} of ${calls} answered (${errors}), ${count(batch.paused.requests.length, 'call')} waiting for approval`;
  }
  const totals = `${count(batch.messages.length, 'result')}, ${errors}`;
  return batch.aborted ? `interrupted: ${totals} (Ctrl+C aborted the run; every call still got its result)` : totals;
}
