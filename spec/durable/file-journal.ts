/**
 * A journal over one append-only file of JSON lines: the trials' reference engine. It keeps a
 * run across `kill -9` (each record is one `appendFileSync`, in the kernel when it returns;
 * see side-effects.ts for why that is enough for killed processes), so the harness can be
 * checked against a journal whose every line it can read, and it shows that the seam of
 * lib/core/seams/journal.ts needs nothing of DBOS: a second engine is an adapter.
 *
 * Not a product: one writer per file, no compaction, records read once at open.
 *
 * @module
 */
import { appendFileSync, readFileSync } from 'node:fs';
import type { AgentJournal, JournalCall, JournaledDecision, JournaledResult, JournalEntry, JournalPrior, JournalValueEntry, ToolJournal } from '../../lib/core/seams/journal.ts';

type JournalRecord =
  | { kind: 'start'; batch: number; index: number; toolCallId: string }
  | { kind: 'decision'; batch: number; index: number; decision: JournaledDecision }
  | { kind: 'progress'; batch: number; index: number; value: unknown }
  | { kind: 'result'; batch: number; index: number; result: JournaledResult }
  | { kind: 'reply'; turn: number; value: unknown };

/** What a file journal knows of its earlier attempts, and where it appends. */
class FileJournalStore {
  private readonly starts = new Set<string>();
  private readonly decisions = new Map<string, JournaledDecision>();
  private readonly progress = new Map<string, unknown[]>();
  private readonly results = new Map<string, JournaledResult>();
  private readonly replies = new Map<number, unknown>();

  constructor(
    readonly file: string,
    readonly runId: string,
  ) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      // No file yet: a first attempt.
    }
    for (const line of text.split('\n')) {
      if (line === '') continue;
      let record: JournalRecord;
      try {
        record = JSON.parse(line) as JournalRecord;
      } catch {
        continue; // a torn last line
      }
      if (record.kind === 'reply') {
        this.replies.set(record.turn, record.value);
        continue;
      }
      const key = `${record.batch}:${record.index}`;
      if (record.kind === 'start') this.starts.add(key);
      else if (record.kind === 'decision') this.decisions.set(key, record.decision);
      else if (record.kind === 'progress') this.progress.set(key, [...(this.progress.get(key) ?? []), record.value]);
      else this.results.set(key, record.result);
    }
  }

  append(record: JournalRecord): void {
    appendFileSync(this.file, `${JSON.stringify(record)}\n`);
  }

  batch(batch: number): ToolJournal {
    return {
      open: (call: JournalCall): JournalEntry => {
        const key = `${batch}:${call.index}`;
        const result = this.results.get(key);
        const decision = this.decisions.get(key);
        const progress = this.progress.get(key);
        let prior: JournalPrior;
        if (result !== undefined) prior = { state: 'ended', result, ...(decision === undefined ? {} : { decision }), ...(progress === undefined ? {} : { progress }) };
        else if (this.starts.has(key)) prior = { state: 'started', ...(decision === undefined ? {} : { decision }) };
        else prior = { state: 'new' };
        if (prior.state === 'new') this.append({ kind: 'start', batch, index: call.index, toolCallId: call.toolCallId });
        return {
          prior,
          idempotencyKey: `${this.runId}:${batch}:${call.index}`,
          progress: (value) => this.append({ kind: 'progress', batch, index: call.index, value }),
          decide: (d) => this.append({ kind: 'decision', batch, index: call.index, decision: d }),
          commit: (r) => this.append({ kind: 'result', batch, index: call.index, result: r }),
        };
      },
    };
  }

  reply<V>(turn: number): JournalValueEntry<V> {
    return { prior: this.replies.get(turn) as V | undefined, commit: (value) => this.append({ kind: 'reply', turn, value }) };
  }
}

/** A batch's journal in `file` (turn 0 of the file). */
export function fileJournal(file: string, runId: string): ToolJournal {
  return new FileJournalStore(file, runId).batch(0);
}

/** An agent run's journal in `file`. */
export function fileAgentJournal<Reply>(file: string, runId: string): AgentJournal<Reply> {
  const store = new FileJournalStore(file, runId);
  return { modelReply: (turn) => store.reply<Reply>(turn), batch: (turn) => store.batch(turn) };
}
