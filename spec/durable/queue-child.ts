/**
 * One process of a queue-mode crash trial (`toolrun/dbos` queue mode, `registerDurableBatch`
 * with `queueName`): the orchestrator (`role: 'orchestrator'`) runs the durable batch, whose
 * calls are executed by worker processes (`role: 'worker'`) through a DBOS queue, and prints
 * a `done` marker with the batch's result messages; a worker executes queued calls until it is
 * killed. The driver (queue-trial.ts) kills the orchestrator or a worker with SIGKILL and
 * starts it again with the same executor id: DBOS recovers that process's pending workflows.
 * `role: 'clean'` runs the same calls with `runTools` in this process, without a journal or
 * DBOS: the expected results.
 *
 * Markers (probe.ts) on stdout: `ready` (a worker is launched), `tool-start` and `tool-done`
 * (a worker's tool started — its start was journaled before — or ended, its result not yet
 * journaled), `result` (a result reached the orchestrator's run, in call order), `frozen`.
 *
 * Configured by the `TOOLRUN_TRIAL` environment variable (JSON, {@link QueueChildConfig}).
 *
 * @module
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { DBOS } from '@dbos-inc/dbos-sdk';
import { runTools, type RunToolsOptions } from '../../lib/index.ts';
import { registerDurableBatch } from '../../lib/dbos/index.ts';
import { Markers, type FreezeAt } from './probe.ts';
import { queueWorkloadCalls, workloadOptions, workloadTools, type WorkloadContext } from './workload.ts';

/** What the driver tells one process of a queue trial. */
export interface QueueChildConfig {
  role: 'orchestrator' | 'worker' | 'clean';
  /** The trial's id: the batch's workflow id and the application version of its processes. */
  runId: string;
  /** This process's DBOS executor id: the same when it is started again after a kill. */
  executorId: string;
  /** The trial's folder (the side-effect log, and the `frozen` claim of a placed kill). */
  dir: string;
  /** This process's attempt: 0, or 1 for the process started again after the kill. */
  attempt: number;
  databaseUrl: string;
  interruptedCalls: 'unknown' | 'run-again';
  /** The marker this process freezes at (the driver kills it there), if it is the first to reach it. */
  freezeAt?: FreezeAt;
}

const config = JSON.parse(process.env.TOOLRUN_TRIAL ?? '{}') as QueueChildConfig;
/** The first process of the trial to reach a placed kill's marker creates this file; the others go on. */
const claim = (): boolean => {
  try {
    closeSync(openSync(join(config.dir, 'frozen'), 'wx'));
    return true;
  } catch {
    return false;
  }
};
const markers = new Markers(config.freezeAt, claim);
const w: WorkloadContext = {
  log: join(config.dir, 'effects.log'),
  attempt: config.attempt,
  onToolStart: (t, i) => markers.emit({ m: 'tool-start', t, i }),
  onToolDone: (t, i) => markers.emit({ m: 'tool-done', t, i }),
};
// Queue mode runs no call that needs approval: `approve` is left out with the `pay` calls.
const { approve: _approve, ...options } = workloadOptions(w);
const tools = workloadTools(w);
/** Every queue trial uses one queue; a trial's processes share an application version, so they dequeue only their own trial's calls. */
const QUEUE = 'toolrun-trial-calls';
// Registered in every process before DBOS.launch(): the orchestrator runs (or recovers) the
// batch's workflow, the workers its `trial-queue.call` workflows.
const batch = registerDurableBatch({ name: 'trial-queue', tools, options, queueName: QUEUE, interruptedCalls: config.interruptedCalls });

if (config.role === 'clean') {
  const run = runTools(queueWorkloadCalls(), { ...options, tools } as RunToolsOptions);
  let step = await run.next();
  while (step.done !== true) step = await run.next();
  writeSync(1, `@@ ${JSON.stringify({ m: 'done', outcome: { results: step.value.messages } })}\n`);
} else {
  DBOS.setConfig({
    name: 'toolrun-queue-trials',
    systemDatabaseUrl: config.databaseUrl,
    logLevel: 'error',
    // Why the application version is the trial's id: a process dequeues (and recovers) only
    // workflows of its own version, so trials running side by side on one database never
    // execute each other's calls, and the queue can be shared.
    applicationVersion: config.runId,
    executorID: config.executorId,
    // The orchestrator dequeues nothing from the queue: every call runs in a worker.
    listenQueues: config.role === 'orchestrator' ? [] : [QUEUE],
  });
  await DBOS.launch();
  // The same settings from every process (a queue is a row of the system database, kept by
  // the last registration). One call at a time per worker, two workers: at most two calls run
  // at once, the `maxConcurrency: 2` of the other modes (which a queued call's own one-call
  // run cannot limit); per worker and not global, so trials side by side do not share it.
  await DBOS.registerQueue(QUEUE, { workerConcurrency: 1, minPollingIntervalMs: 100, onConflict: 'always_update' });
  if (config.role === 'worker') {
    markers.emit({ m: 'ready' });
  } else {
    const handle = await batch.start(queueWorkloadCalls(), {
      workflowId: config.runId,
      onEvent: (event) => {
        if (event.type === 'tool_result') markers.emit({ m: 'result', t: 0, i: event.index });
      },
    });
    const result = await handle.getResult();
    writeSync(1, `@@ ${JSON.stringify({ m: 'done', outcome: { results: result.messages } })}\n`);
    await DBOS.shutdown();
  }
}
