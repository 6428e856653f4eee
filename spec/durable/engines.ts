/**
 * The engines a trial runs on, behind one small interface: the child hands its engine the
 * body of the durable run (a function of the run's journal), and the engine runs it so that
 * a later attempt of the same run id continues it. `'dbos'` is `toolrun/dbos` on the
 * trials' PostgreSQL: the body is a DBOS workflow whose id is the run id, recovered by
 * `DBOS.launch()` in the next attempt (each trial has its own DBOS executor id and application version, so a
 * launch recovers that trial's workflow only). `'file'` is the harness's reference journal
 * (file-journal.ts), which shows the trials need nothing of DBOS.
 *
 * @module
 */
import { join } from 'node:path';
import type { AgentJournal, ToolJournal } from '../../lib/core/seams/journal.ts';
import { fileAgentJournal, fileJournal } from './file-journal.ts';

export type EngineName = 'file' | 'dbos';

/** The journal the body gets: a batch's or an agent's, as the run's kind says. */
export type TrialJournals = { batch: ToolJournal; agent?: undefined } | { agent: AgentJournal; batch?: undefined };

/** A trial's engine, for one attempt of one durable run. */
export interface TrialEngine {
  /** Runs `body` durably as run `runId` (or continues it, when an earlier attempt started it). Its result must be JSON. */
  run<T>(kind: 'batch' | 'agent', body: (journals: TrialJournals) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Opens engine `name` for the durable run `config.runId`. */
export async function openEngine(name: EngineName, config: { dir: string; runId: string; databaseUrl?: string }): Promise<TrialEngine> {
  switch (name) {
    case 'file': {
      const file = join(config.dir, 'journal.jsonl');
      return {
        run: (kind, body) => body(kind === 'batch' ? { batch: fileJournal(file, config.runId) } : { agent: fileAgentJournal(file, config.runId) }),
        close: async () => {},
      };
    }
    case 'dbos': {
      if (config.databaseUrl === undefined) throw new Error('the dbos engine needs databaseUrl');
      // The executor id is read when DBOS is configured: one per trial, so that a launch recovers this trial's workflow only.
      process.env.DBOS__VMID = config.runId;
      const { DBOS } = await import('@dbos-inc/dbos-sdk');
      const { dbosAgentJournal, dbosJournal } = await import('../../lib/dbos/index.ts');
      // Why the application version is the run id: DBOS recovers a pending workflow by putting it
      // on its internal queue, which every launched process of the same application version
      // dequeues from; with trials running side by side on one system database, another
      // trial's process would otherwise run this trial's workflow.
      DBOS.setConfig({ name: 'toolrun-trials', systemDatabaseUrl: config.databaseUrl, logLevel: 'error', applicationVersion: config.runId });
      return {
        async run(kind, body) {
          const workflow = DBOS.registerWorkflow(async () => await body(kind === 'batch' ? { batch: dbosJournal() } : { agent: dbosAgentJournal() }), { name: `trial-${kind}` });
          await DBOS.launch();
          const handle = await DBOS.startWorkflow(workflow, { workflowID: config.runId })();
          return (await handle.getResult()) as Awaited<ReturnType<typeof body>>;
        },
        close: () => DBOS.shutdown(),
      };
    }
  }
}
