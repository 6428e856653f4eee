/**
 * The application of the workers bench (bench/durable-workers.ts), the same in every process:
 * one durable batch in queue mode whose only tool waits `TOOL_MS` ms (an I/O-bound call: a
 * remote API, a database query), and how each process configures DBOS. The orchestrator (the
 * bench's own process) starts batches and dequeues nothing; each worker process
 * (`TOOLRUN_BENCH_ROLE=worker`, this file bundled) launches DBOS with its own executor id
 * and runs queued calls until it is killed.
 *
 * @module
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { DBOS } from '@dbos-inc/dbos-sdk';
import * as v from 'valibot';
import { defineTool, type ToolCall } from '../lib/index.ts';
import { registerDurableBatch } from '../lib/dbos/index.ts';

/** The queue every call of the bench's batches goes on. */
export const QUEUE = 'toolrun-bench-calls';

const toolMs = Number(process.env.TOOLRUN_BENCH_TOOL_MS ?? '20');

const io = defineTool({
  name: 'io',
  description: 'Waits, like a call to a remote service.',
  input: v.object({ i: v.number() }),
  async execute({ i }) {
    await sleep(toolMs);
    return `done ${i}`;
  },
});

/** Registered before `DBOS.launch()` in every process: the orchestrator runs the batch's workflow, the workers its `bench-workers.call` workflows. */
export const batch = registerDurableBatch({ name: 'bench-workers', tools: [io], queueName: QUEUE, interruptedCalls: 'run-again' });

/** `n` calls of the `io` tool, `c0` … `c<n-1>`. */
export const callsOf = (n: number): ToolCall[] => Array.from({ length: n }, (_, i) => ({ id: `c${i}`, name: 'io', arguments: { i } }));

/** What every process of the bench gives DBOS: one system database, one application name and version; its own executor id. */
export function configure(databaseUrl: string, executorID: string, listen: boolean): void {
  DBOS.setConfig({
    name: 'toolrun-bench-workers',
    systemDatabaseUrl: databaseUrl,
    logLevel: 'error',
    applicationVersion: 'bench-workers',
    executorID,
    listenQueues: listen ? [QUEUE] : [],
  });
}

if (process.env.TOOLRUN_BENCH_ROLE === 'worker') {
  configure(process.env.TOOLRUN_BENCH_DB!, process.env.TOOLRUN_BENCH_EXECUTOR!, true);
  await DBOS.launch();
  process.stdout.write('ready\n');
}
