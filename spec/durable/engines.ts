/**
 * The engines a trial can run on, behind one small interface: the child asks its engine for
 * a batch's journal or an agent's journal for the trial's durable run, and closes it at the
 * end. `'file'` is the harness's reference journal (file-journal.ts); `'dbos'` is
 * `toolrun/dbos` on PostgreSQL.
 *
 * @module
 */
import { join } from 'node:path';
import type { AgentJournal, ToolJournal } from '../../lib/core/journal.ts';
import { fileAgentJournal, fileJournal } from './file-journal.ts';

export type EngineName = 'file';

/** A trial's engine, opened for one attempt of one durable run. */
export interface TrialEngine {
  batchJournal(): ToolJournal;
  agentJournal(): AgentJournal;
  close(): Promise<void>;
}

/** Opens engine `name` for the durable run `config.runId`, keeping its files in `config.dir`. */
export async function openEngine(name: EngineName, config: { dir: string; runId: string }): Promise<TrialEngine> {
  switch (name) {
    case 'file': {
      const file = join(config.dir, 'journal.jsonl');
      return { batchJournal: () => fileJournal(file, config.runId), agentJournal: () => fileAgentJournal(file, config.runId), close: async () => {} };
    }
  }
}
