/**
 * The demo of `npm start` with no arguments: one assistant message, written the way
 * Anthropic's Messages API returns it, whose parallel tool calls use the ready-made coding
 * tools on this repository itself. Nothing here needs a network or an API key, and every
 * file it names is tracked in git, so it works on any fresh clone.
 *
 * @module
 */
import type { ToolBatch } from '../core/events.ts';
import { fromAnthropic } from '../formats/anthropic.ts';
import { runTools } from '../core/run-tools.ts';
import { codingTools } from '../tools/index.ts';
import type { RunView } from './view.ts';

/** Options of {@link runDemo}. */
export interface DemoOptions {
  /** The directory the tools work in: the repository root. */
  root: string;
  /** Aborts the run (Ctrl+C in `npm start`): running calls are interrupted, every call still gets its result. */
  signal?: AbortSignal;
}

/**
 * The assistant message the demo runs: five `tool_use` blocks after a text block, as a
 * model asking to look around a repository would write them. The shell call prints a line
 * every 0.6 s for about 3 s, so its progress and the early results of its siblings are
 * visible.
 */
export const demoMessage = {
  id: 'msg_demo',
  type: 'message',
  role: 'assistant',
  model: 'demo',
  stop_reason: 'tool_use',
  content: [
    { type: 'text', text: 'Let me look around this repository: its manifest, its compiler settings, where runTools is called, what lib/cli holds, and a slow shell step.' },
    { type: 'tool_use', id: 'toolu_demo_01', name: 'read_file', input: { path: 'package.json' } },
    { type: 'tool_use', id: 'toolu_demo_02', name: 'read_file', input: { path: 'tsconfig.json' } },
    { type: 'tool_use', id: 'toolu_demo_03', name: 'grep', input: { pattern: 'runTools\\(', glob: 'lib/**/*.ts' } },
    { type: 'tool_use', id: 'toolu_demo_04', name: 'list_files', input: { pattern: '**/*.ts', path: 'lib/cli' } },
    {
      type: 'tool_use',
      id: 'toolu_demo_05',
      name: 'shell',
      input: { command: 'for i in 1 2 3 4 5; do echo "step $i of 5"; sleep 0.6; done; echo finished' },
    },
  ],
} as const;

/**
 * Runs {@link demoMessage}'s calls with `runTools` and the coding tools rooted at
 * `options.root`, drawing every event on `view` (one `begin`/`end` pair).
 *
 * @returns the batch `runTools` returned: the result messages in call order, and whether
 *   the run was aborted.
 * @throws only what `runTools` itself throws (tool failures are results, not throws).
 */
export async function runDemo(view: RunView, options: DemoOptions): Promise<ToolBatch> {
  const calls = fromAnthropic(demoMessage);
  view.begin(`demo: ${calls.length} parallel tool calls from one assistant message, in ${options.root}`, calls);
  const run = runTools(calls, {
    tools: codingTools({ root: options.root }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  let ended = false;
  try {
    for (;;) {
      const step = await run.next();
      if (step.done === true) {
        const batch = step.value;
        const errors = batch.messages.filter((m) => m.isError).length;
        const summary = batch.aborted
          ? `interrupted: ${batch.messages.length} results, ${errors} errors (Ctrl+C aborted the run; every call still got its result)`
          : `${batch.messages.length} results, ${errors} errors`;
        ended = true;
        view.end(summary);
        return batch;
      }
      view.event(step.value);
    }
  } finally {
    if (!ended) view.end('the run stopped early');
  }
}
