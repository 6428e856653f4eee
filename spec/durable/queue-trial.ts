/**
 * The queue modes' crash trials (`toolrun/dbos` queue mode): an orchestrator process runs the
 * durable batch, two worker processes (one call at a time each) execute its calls through a
 * DBOS queue (queue-child.ts). One process is killed with SIGKILL — the orchestrator
 * (`'queue-orchestrator'`) or a worker (`'queue-worker'`; in `'queue-takeover'`, one of three
 * workers, which is not started again: `recoverWorker` hands its calls to the two others) —
 * at a random time, or placed: the
 * process freezes right after a marker (a worker: a call's tool started, its start journaled;
 * a call's tool ended, its result not yet journaled — the orchestrator: call *i*'s result
 * reached its run) and is killed there. Once it is dead, and before it is started again with
 * the same executor id, the driver reads what was journaled (`DBOSClient.listWorkflowSteps`
 * and `getWorkflow`: each queued call's `started` step, and whether its workflow returned) and
 * how long the side-effect log was. Each
 * trial then checks:
 *
 * 1. the batch finished; every call is answered once, in call order, and each result
 *    deep-equals the clean run's (a result handed to the wrong call is a mismatch) — except,
 *    under `interruptedCalls: 'unknown'`, a call interrupted by the kill, which may instead be
 *    answered "outcome unknown" without running again;
 * 2. no call whose result was journaled at the kill starts again;
 * 3. no call starts twice, except a call the killed worker had started and whose result was
 *    not journaled (its own in-flight calls), run again once, under `'run-again'`; an
 *    orchestrator kill re-runs nothing;
 * 4. every start of a call carries the same idempotency key, `<batch id>:batch:<index>`;
 * 5. no tool runs in the orchestrator's process; a call rejected before running (a bad
 *    argument, an unknown tool, a throwing hook) never starts, every other call starts.
 *
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { DBOSClient } from '@dbos-inc/dbos-sdk';
import { recoverWorker } from '../../lib/dbos/index.ts';
import type { ToolResultMessage } from '../../lib/index.ts';
import type { ChildCommand, TrialResult } from './driver.ts';
import type { FreezeAt } from './probe.ts';
import type { QueueChildConfig } from './queue-child.ts';
import { readEffects, recordEffect } from './side-effects.ts';
import { queueWorkloadCalls } from './workload.ts';

/**
 * Which process a queue trial kills: the orchestrator, a worker that comes back with its
 * executor id, or (`'queue-takeover'`, three workers) a worker that never comes back, whose
 * calls `recoverWorker` hands to the other two (J17).
 */
export type QueueMode = 'queue-orchestrator' | 'queue-worker' | 'queue-takeover';

/** How a queue trial's kill comes: none, at `ms` after the orchestrator was started, or at a marker. */
export type QueueKill = { kind: 'none' } | { kind: 'time'; ms: number } | { kind: 'freeze'; at: FreezeAt };

/** Calls the workload rejects before running (a bad argument, an unknown tool, a throwing `beforeToolCall`). */
const REJECTED = new Set([5, 6, 7]);

/** One started process of a trial. */
interface Proc {
  proc: ChildProcess;
  ready: Promise<void>;
  /** The batch's messages (orchestrator), or `undefined` when it exited without them. */
  done: Promise<ToolResultMessage[] | undefined>;
  /** Resolves when it printed `frozen` (it froze itself at a placed kill's marker). */
  frozen: Promise<void>;
  exited: Promise<number | null>;
  stderr: () => string;
}

function start(child: ChildCommand, config: QueueChildConfig, guardMs: number): Proc {
  const proc = spawn(child.command, child.args, { env: { ...process.env, ...child.env, TOOLRUN_TRIAL: JSON.stringify(config) }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let buffer = '';
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => {
    if (stderr.length < 20_000) stderr += d;
  });
  let onReady!: () => void;
  let onDone!: (r: ToolResultMessage[] | undefined) => void;
  let onFrozen!: () => void;
  const ready = new Promise<void>((r) => (onReady = r));
  const done = new Promise<ToolResultMessage[] | undefined>((r) => (onDone = r));
  const frozen = new Promise<void>((r) => (onFrozen = r));
  const guard = setTimeout(() => {
    stderr += `\n[driver] hang guard: killed after ${guardMs} ms`;
    proc.kill('SIGKILL');
  }, guardMs);
  const exited = new Promise<number | null>((resolve) =>
    proc.on('close', (code) => {
      clearTimeout(guard);
      onReady();
      onDone(undefined);
      resolve(code);
    }),
  );
  proc.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (!line.startsWith('@@ ')) continue;
      const marker = JSON.parse(line.slice(3)) as { m: string; outcome?: { results: ToolResultMessage[] } };
      if (marker.m === 'ready') onReady();
      else if (marker.m === 'done') onDone(marker.outcome?.results);
      else if (marker.m === 'frozen') onFrozen();
    }
  });
  return { proc, ready, done, frozen, exited, stderr: () => stderr };
}

const alive = (p: Proc): boolean => p.proc.exitCode === null && p.proc.signalCode === null;

async function kill(p: Proc): Promise<void> {
  if (alive(p)) p.proc.kill('SIGKILL');
  await p.exited;
}

/** The expected results: the queue workload run by `runTools` in one process, without a journal. */
export async function queueCleanRun(child: ChildCommand, dir: string): Promise<ToolResultMessage[]> {
  mkdirSync(dir, { recursive: true });
  const p = start(child, { role: 'clean', runId: 'clean', executorId: 'clean', dir, attempt: 0, databaseUrl: '', interruptedCalls: 'run-again' }, 120_000);
  const results = await p.done;
  await p.exited;
  if (results === undefined) throw new Error(`the clean queue run did not finish: ${p.stderr().slice(0, 2000)}`);
  return results;
}

/** One queue trial's plan. */
export interface QueueTrialPlan {
  name: string;
  mode: QueueMode;
  kill: QueueKill;
  interruptedCalls: 'unknown' | 'run-again';
}

/** What a queue trial adds to {@link TrialResult}: how long the orchestrator took (the calibration's duration). */
export interface QueueTrialResult extends TrialResult {
  durationMs: number;
}

/**
 * What was journaled once the killed process died: the queued calls whose `started` and
 * `result` steps are recorded, the calls held by the killed process's executor, and how many
 * results the orchestrator's run had recorded.
 */
interface Journaled {
  started: Set<number>;
  ended: Set<number>;
  heldByKilled: Set<number>;
  orchestratorResults: number;
}

async function journaledNow(client: DBOSClient, runId: string, calls: number, killedExecutor: string): Promise<Journaled> {
  const snapshot: Journaled = { started: new Set(), ended: new Set(), heldByKilled: new Set(), orchestratorResults: 0 };
  for (let i = 0; i < calls; i++) {
    const id = `${runId}:call:${i}`;
    const status = await client.getWorkflow(id);
    if (status?.executorId === killedExecutor) snapshot.heldByKilled.add(i);
    const steps = (await client.listWorkflowSteps(id)) ?? [];
    if (steps.some((s) => s.name === `toolrun:batch:${i}:started`)) snapshot.started.add(i);
    // A queued call's result is its workflow's output (lib/dbos/journal.ts, queuedCallJournal).
    if (status?.status === 'SUCCESS' || steps.some((s) => s.name === `toolrun:batch:${i}:result`)) snapshot.ended.add(i);
  }
  const own = (await client.listWorkflowSteps(runId)) ?? [];
  // A result step returns its own call's result and those of the ended calls after it (read ahead).
  snapshot.orchestratorResults = own.filter((s) => /^toolrun:queue:\d+:result$/.test(s.name)).reduce((n, s) => n + (Array.isArray(s.output) ? s.output.length : 1), 0);
  return snapshot;
}

/** The text blocks of a result message, joined. */
const contentText = (message: ToolResultMessage | undefined): string => (message?.content ?? []).map((block) => (block.type === 'text' ? block.text : '')).join('');

/** Runs one queue trial in `dir` (a new folder) on the system database `databaseUrl`, and checks it against `clean`. */
export async function runQueueTrial(child: ChildCommand, plan: QueueTrialPlan, dir: string, databaseUrl: string, client: DBOSClient, clean: ToolResultMessage[]): Promise<QueueTrialResult> {
  mkdirSync(dir, { recursive: true });
  const runId = `q-${dir.split('/').pop()}`;
  const guardMs = 120_000;
  const freezeAt = plan.kill.kind === 'freeze' ? plan.kill.at : undefined;
  const cfg = (role: 'orchestrator' | 'worker', executorId: string, attempt: number): QueueChildConfig => ({
    role,
    runId,
    executorId: `${runId}-${executorId}`,
    dir,
    attempt,
    databaseUrl,
    interruptedCalls: plan.interruptedCalls,
    // Only first attempts freeze, and only the processes the mode kills.
    ...(attempt === 0 && freezeAt !== undefined && (role === 'orchestrator') === (plan.mode === 'queue-orchestrator') ? { freezeAt } : {}),
  });
  const result: QueueTrialResult = { name: plan.name, attempts: 1, kills: 0, recovered: false, rerunStarts: 0, replayed: 0, mismatches: 0, failures: [], durationMs: 0 };
  const fail = (text: string): void => void result.failures.push(text);
  const log = join(dir, 'effects.log');
  const procs: Proc[] = [];
  const orchestratorPids: number[] = [];
  try {
    const names = plan.mode === 'queue-takeover' ? ['a', 'b', 'c'] : ['a', 'b'];
    const workers = names.map((name) => start(child, cfg('worker', name, 0), guardMs));
    procs.push(...workers);
    await Promise.all(workers.map((p) => p.ready));
    for (const [n, p] of workers.entries()) if (!alive(p)) throw new Error(`worker ${n} exited before it was ready: ${p.stderr().trim().slice(-1500)}`);
    const t0 = performance.now();
    let orchestrator = start(child, cfg('orchestrator', 'o', 0), guardMs);
    procs.push(orchestrator);
    orchestratorPids.push(orchestrator.proc.pid!);

    // The kill: the process that froze at the marker, or at the time the plan says (none if the batch finished first).
    const timer = new Promise<'time'>((resolve) => {
      if (plan.kill.kind === 'time') setTimeout(() => resolve('time'), plan.kill.ms).unref();
    });
    const first = await Promise.race([
      orchestrator.done.then(() => 'done' as const),
      timer,
      ...procs.map((p, n) => p.frozen.then(() => n)),
    ]);
    let killed: { proc: Proc; role: 'orchestrator' | 'worker'; index: number } | undefined;
    if (typeof first === 'number') killed = { proc: procs[first]!, role: first === workers.length ? 'orchestrator' : 'worker', index: first };
    else if (first === 'time') killed = plan.mode === 'queue-orchestrator' ? { proc: orchestrator, role: 'orchestrator', index: workers.length } : { proc: workers[0]!, role: 'worker', index: 0 };
    let journaled: Journaled | undefined;
    let effectsAtKill = 0;
    let killedPid: number | undefined;
    if (killed !== undefined && alive(killed.proc)) {
      killedPid = killed.proc.proc.pid;
      await kill(killed.proc);
      // A call of another worker waiting for the end of a call the killed one was running
      // (workload.ts, `endOf`) stops waiting here: under 'unknown' that call never ends.
      if (killedPid !== undefined) recordEffect(log, { kind: 'killed', attempt: 0, pid: killedPid });
      result.kills = 1;
      result.attempts = 2;
      // The killed process is dead and not yet started again: what it journaled is final. The
      // others go on, so the journal is read first and the log's length after: a call found
      // journaled has its start in the log before that length, and a start after it is a re-run.
      const killedExecutor = cfg(killed.role, killed.role === 'orchestrator' ? 'o' : names[killed.index]!, 0).executorId;
      journaled = await journaledNow(client, runId, clean.length, killedExecutor);
      effectsAtKill = readEffects(log).length;
      if (killed.role === 'orchestrator') {
        orchestrator = start(child, cfg('orchestrator', 'o', 1), guardMs);
        procs.push(orchestrator);
        orchestratorPids.push(orchestrator.proc.pid!);
      } else if (plan.mode === 'queue-takeover') {
        // It never comes back: what it held goes back on the queue, for the two others.
        await recoverWorker(killedExecutor, { client, applicationVersion: runId });
      } else {
        const again = start(child, cfg('worker', names[killed.index]!, 1), guardMs);
        procs.push(again);
      }
    }
    const results = await orchestrator.done;
    result.durationMs = performance.now() - t0;
    if (results === undefined) {
      fail(`the orchestrator did not finish: exit ${await orchestrator.exited}, stderr: ${orchestrator.stderr().trim().slice(-800)}`);
      return result;
    }
    for (const p of procs) {
      if (p !== killed?.proc && !alive(p) && p.proc.signalCode === null && p.proc.exitCode !== 0) fail(`a process died on its own: exit ${p.proc.exitCode}, stderr: ${p.stderr().trim().slice(-600)}`);
    }
    result.recovered = result.kills > 0;
    // Results the killed process had journaled: answered from the journal after the kill, not run again.
    result.replayed = journaled === undefined ? 0 : killed?.role === 'orchestrator' ? journaled.orchestratorResults : [...journaled.ended].filter((i) => journaled!.heldByKilled.has(i)).length;

    const effects = readEffects(log);
    const starts = effects.flatMap((e, n) => (e.kind === 'start' ? [{ e, n }] : []));
    const startsOf = (i: number) => starts.filter(({ e }) => e.index === i);
    /** Calls the kill interrupted: held by the killed worker, their start journaled and their result not. */
    const interrupted = new Set<number>();
    if (killed?.role === 'worker' && journaled !== undefined) {
      for (const i of journaled.started) if (!journaled.ended.has(i) && journaled.heldByKilled.has(i)) interrupted.add(i);
    }

    // 1. Every call answered once, in call order, each equal to the clean run's.
    const ids = results.map((m) => m.toolCallId);
    const cleanIds = clean.map((m) => m.toolCallId);
    if (!isDeepStrictEqual(ids, cleanIds)) fail(`results came for ${ids.join(',')}, the clean run's calls in call order are ${cleanIds.join(',')}`);
    for (const [i, expected] of clean.entries()) {
      const actual = results[i];
      if (isDeepStrictEqual(actual, expected)) continue;
      // J5: under 'unknown', a call interrupted by the kill is answered "outcome unknown", without running again.
      const unknown = plan.interruptedCalls === 'unknown' && interrupted.has(i) && actual?.isError === true && actual.toolCallId === expected.toolCallId && contentText(actual).includes('its outcome is unknown');
      if (unknown && startsOf(i).every(({ n }) => n < effectsAtKill)) continue;
      result.mismatches++;
      fail(`call ${i}: result ${JSON.stringify(actual)} differs from the clean run's ${JSON.stringify(expected)}`);
    }
    for (const [i] of clean.entries()) {
      const all = startsOf(i);
      const after = all.filter(({ n }) => n >= effectsAtKill && journaled !== undefined);
      // 2. A call whose result was journaled at the kill never starts again.
      if (journaled?.ended.has(i) === true && after.length > 0) fail(`call ${i}'s result was journaled before the kill, and it started again (pid ${after[0]!.e.pid})`);
      // 3. Starts: one per call, plus one re-run of a call the killed worker was running.
      result.rerunStarts += Math.max(0, all.length - 1);
      if (all.length > 1) {
        const before = all.filter(({ n }) => n < effectsAtKill || journaled === undefined);
        const own = before.length === 1 && before[0]!.e.pid === killedPid && interrupted.has(i);
        if (!own || all.length > 2 || plan.interruptedCalls !== 'run-again') {
          fail(`call ${i} started ${all.length} times (pids ${all.map(({ e }) => e.pid).join(', ')}; killed: ${killed === undefined ? 'none' : `${killed.role} ${killedPid}`}, policy ${plan.interruptedCalls}): only a call the killed worker was running may start again, once, under 'run-again'`);
        }
      }
      // 4. One idempotency key per call, the batch's.
      const keys = new Set(all.map(({ e }) => e.key));
      const expectedKey = `${runId}:batch:${i}`;
      if (all.length > 0 && (keys.size !== 1 || !keys.has(expectedKey))) fail(`call ${i} ran with idempotency keys ${[...keys].join(', ')}, not ${expectedKey}`);
      // 5. Where calls ran.
      if (all.some(({ e }) => orchestratorPids.includes(e.pid))) fail(`call ${i}'s tool ran in the orchestrator's process: in queue mode every call runs in a worker`);
      if (REJECTED.has(i) && all.length > 0) fail(`call ${i} must be rejected before it runs, but its tool started`);
      const answeredUnknown = contentText(results[i]).includes('its outcome is unknown');
      if (!REJECTED.has(i) && all.length === 0 && !answeredUnknown) fail(`call ${i} was answered, but its tool never started`);
    }
  } finally {
    await Promise.all(procs.map(kill));
  }
  return result;
}

/** How many calls a queue batch has (for the random placed kills). */
export const QUEUE_CALLS = queueWorkloadCalls().length;
