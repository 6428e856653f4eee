/** Shared by spec/cli/replay.spec.ts and replay.corpus.slow.spec.ts. */
import type { ReplayFileRow, ReplayReport } from '../../lib/cli/replay.ts';
import type { RunView } from '../../lib/cli/view/index.ts';
import type { ToolEvent } from '../../lib/core/run/events.ts';
import type { ToolCall } from '../../lib/core/tool/tool.ts';

/** A view that draws nothing and remembers what it was told. */
export function recordingView() {
  const runs: Array<{ title: string; calls: readonly ToolCall[]; events: ToolEvent[]; summary: string | undefined }> = [];
  const lines: string[] = [];
  let closed = 0;
  const view: RunView = {
    begin: (title, calls) => void runs.push({ title, calls, events: [], summary: undefined }),
    event: (event) => void runs.at(-1)?.events.push(event),
    end: (summary) => {
      const run = runs.at(-1);
      if (run !== undefined) run.summary = summary;
    },
    line: (text) => void lines.push(text),
    close: () => void closed++,
  };
  return { view, runs, lines, closedCount: () => closed };
}

/** The row of `file` in a replay report; throws, listing the rows, when there is none. */
export function row(report: ReplayReport, file: string): ReplayFileRow {
  const found = report.rows.find((r) => r.file === file);
  if (found === undefined) throw new Error(`no row for ${file}; rows: ${report.rows.map((r) => r.file).join(', ')}`);
  return found;
}

