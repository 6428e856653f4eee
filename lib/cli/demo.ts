/**
 * The demo (`toolrun` with no arguments): one assistant message, written the way
 * Anthropic's Messages API returns it, whose five parallel tool calls use the ready-made
 * coding tools. Nothing here needs a network, an API key or this repository: the demo
 * writes a small project into a temp folder, runs the calls there, and removes the folder.
 *
 * The calls take very different times — two shell calls of about 2.5 s and 1.2 s come
 * first in the message, three file tools of a few ms after them — so the live view shows
 * them finishing in another order than they were called (5-ish ms, then 1.2 s, then 2.5 s)
 * while the results still come out in call order.
 *
 * @module
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { ToolBatch } from '../core/events.ts';
import { runTools } from '../core/run-tools.ts';
import { fromAnthropic } from '../formats/anthropic.ts';
import { codingTools } from '../tools/index.ts';
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
}

/** The small project the demo's calls look at: path → text. */
const demoFiles: Readonly<Record<string, string>> = {
  'README.md': '# weather-cli\n\nPrints tomorrow\'s forecast for a city.\n\nRelease checklist: tests pass, changelog updated, version bumped.\n',
  'src/forecast.ts':
    "import { toCelsius } from './units.ts';\n\n// TODO: cache forecasts for ten minutes\nexport function describe(city: string, fahrenheit: number): string {\n  return `${city}: ${toCelsius(fahrenheit).toFixed(1)} °C`;\n}\n",
  'src/units.ts': '// TODO: support kelvin\nexport function toCelsius(fahrenheit: number): number {\n  return ((fahrenheit - 32) * 5) / 9;\n}\n',
  'src/cli.ts': "import { describe } from './forecast.ts';\n\nconsole.log(describe(process.argv[2] ?? 'Paris', 68));\n",
};

/**
 * The assistant message the demo runs: a text block, then five `tool_use` blocks. The first
 * shell call prints `step N of 5` every 0.5 s and then `finished`; the second waits 1.2 s
 * and counts the source lines; the file tools answer in milliseconds.
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
  ],
} as const;

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
 * Runs {@link demoMessage}'s calls with `runTools` and the coding tools rooted at a
 * workspace holding {@link demoFiles}, drawing every event on `view` (one `begin`/`end`
 * pair; the summary line starts with `interrupted:` when the run was aborted).
 *
 * @returns the batch `runTools` returned: the result messages in call order, and whether
 *   the run was aborted.
 * @throws only what `runTools` itself throws, or a file-system error creating the workspace
 *   (tool failures are results, not throws).
 */
export async function runDemo(view: RunView, options: DemoOptions = {}): Promise<ToolBatch> {
  const temp = options.root === undefined ? await mkdtemp(join(tmpdir(), 'toolrun-demo-')) : undefined;
  const root = options.root ?? temp!;
  try {
    await writeDemoFiles(root);
    const calls = fromAnthropic(demoMessage);
    view.begin(`demo: ${count(calls.length, 'parallel tool call')} from one assistant message, in ${temp === undefined ? root : `a temp folder (${root})`}`, calls);
    const run = runTools(calls, {
      tools: codingTools({ root }),
      abortGraceMs: DEMO_ABORT_GRACE_MS,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    let ended = false;
    try {
      for (;;) {
        const step = await run.next();
        if (step.done === true) {
          const batch = step.value;
          const totals = `${count(batch.messages.length, 'result')}, ${count(batch.messages.filter((m) => m.isError).length, 'error')}`;
          ended = true;
          view.end(batch.aborted ? `interrupted: ${totals} (Ctrl+C aborted the run; every call still got its result)` : totals);
          return batch;
        }
        view.event(step.value);
      }
    } finally {
      if (!ended) view.end('the run stopped early');
    }
  } finally {
    if (temp !== undefined) await rm(temp, { recursive: true, force: true });
  }
}
