/**
 * `npm run test:durable`: the crash trials of durable runs (contract J). For each mode, a clean
 * run without a journal gives the expected results; then at least 50 trials kill the child
 * with SIGKILL at a random point (a random time, or a random journal marker), plus trials
 * whose kill is placed exactly (after a start is journaled, after a tool ended and before its
 * result is journaled, after a result is journaled, after a model reply, after an approval);
 * each is checked by driver.ts. Then the same trials on deliberately broken journals
 * (results journaled in completion order; the raw return journaled) must FAIL, which shows
 * the trials can fail.
 *
 * The queue modes (queue-trial.ts; `--engine dbos` only) run `registerDurableBatch` with a
 * queue: an orchestrator process and two worker processes; a trial kills the orchestrator
 * (`queue-orchestrator`) or a worker (`queue-worker`) at a random time or at a random or
 * placed marker, starts it again with its executor id, and checks the same rules (a worker's
 * kill may re-run only that worker's own calls). `queue-takeover` runs three workers and never
 * starts the killed one again: `recoverWorker` hands its calls to the two others (J17). The
 * broken journals are not run in queue mode (docs/durable.md says why).
 *
 * Prints one row per mode (trials, kills, recoveries, starts re-run, replayed, mismatches,
 * failed) and exits 1 when a trial of a sound journal fails or a broken journal passes.
 *
 * ```
 * npm run test:durable [-- --engine file|dbos] [--trials 50] [--modes batch,agent,queue-orchestrator,queue-worker,queue-takeover] [--parallel 3] [--seed 1] [--no-broken] [--no-placed] [--keep]
 * ```
 *
 * @module
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import type { ChildOutcome } from './child.ts';
import { cleanRun, runAttempt, runTrial, type ChildCommand, type KillPlan, type TrialPlan, type TrialResult } from './driver.ts';
import type { EngineName } from './engines.ts';
import type { Broken, FreezeAt } from './probe.ts';
import { QUEUE_CALLS, queueCleanRun, runQueueTrial, type QueueKill, type QueueMode, type QueueTrialPlan } from './queue-trial.ts';
import type { DBOSClient } from '@dbos-inc/dbos-sdk';
import { startPostgres, type PostgresServer } from '../../lib/dbos/postgres.ts';

const { values } = parseArgs({
  options: {
    engine: { type: 'string', default: 'file' },
    trials: { type: 'string', default: '50' },
    // Default: every mode of the engine (the queue modes are toolrun/dbos's).
    modes: { type: 'string' },
    parallel: { type: 'string', default: '3' },
    seed: { type: 'string', default: String(Date.now() % 1_000_000) },
    'no-broken': { type: 'boolean', default: false },
    'no-placed': { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
  },
});

/** A small seeded PRNG (mulberry32), so a failing run can be repeated with `--seed`. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const seed = Number(values.seed);
const random = prng(seed);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const engine = values.engine as EngineName;
const trialsPerMode = Number(values.trials);
const parallel = Math.max(1, Number(values.parallel));
const modes = (values.modes ?? (engine === 'dbos' ? 'batch,agent,queue-orchestrator,queue-worker,queue-takeover' : 'batch,agent')).split(',') as Array<'batch' | 'agent' | QueueMode>;
for (const mode of modes) if (!['batch', 'agent', 'queue-orchestrator', 'queue-worker', 'queue-takeover'].includes(mode)) throw new TypeError(`--modes: unknown mode '${mode}' (batch, agent, queue-orchestrator, queue-worker, queue-takeover)`);
const root = mkdtempSync(join(tmpdir(), 'toolrun-durable-'));
// Why the child is bundled once (esbuild, packages left external) instead of started with
// tsx: a child starts two or three times per trial, and on a loaded 2-core machine tsx's
// loader costs about 0.7 s of CPU per start, the bundle about 0.2 s.
const bundle = fileURLToPath(new URL('../../.tmp/durable/child.mjs', import.meta.url));
await build({ entryPoints: [fileURLToPath(new URL('./child.ts', import.meta.url))], bundle: true, platform: 'node', format: 'esm', packages: 'external', outfile: bundle, logLevel: 'warning' });
const child: ChildCommand = { command: process.execPath, args: [bundle] };
const queueBundle = fileURLToPath(new URL('../../.tmp/durable/queue-child.mjs', import.meta.url));
if (modes.some((m) => m.startsWith('queue'))) await build({ entryPoints: [fileURLToPath(new URL('./queue-child.ts', import.meta.url))], bundle: true, platform: 'node', format: 'esm', packages: 'external', outfile: queueBundle, logLevel: 'warning' });
const queueChild: ChildCommand = { command: process.execPath, args: [queueBundle] };

/** The placed kills of a queue mode: the worker (whichever reaches the marker first) or the orchestrator freezes there and is killed. */
function queuePlacedKills(mode: QueueMode): Array<{ name: string; at: FreezeAt; interruptedCalls?: QueueTrialPlan['interruptedCalls'] }> {
  if (mode === 'queue-orchestrator') return [0, 3, 6].map((i) => ({ name: `after call ${i}'s result reached the orchestrator's journal`, at: { m: 'result', i } }));
  return [
    ...[0, 1, 2, 4].map((i) => ({ name: `after the start of call ${i} is journaled, while its tool runs`, at: { m: 'tool-start', i } as FreezeAt })),
    ...[1, 3].map((i) => ({ name: `after call ${i}'s tool ended, before its result is journaled`, at: { m: 'tool-done', i } as FreezeAt })),
    // Call 0 waits in the other worker for call 1's end, which under 'unknown' never comes
    // (call 1 is answered without running again): the trial hung until the harness's `killed`
    // line (workload.ts, `endOf`); random trials met it about once in 56.
    { name: `after the start of call 1 is journaled, under 'unknown', while call 0 waits for it in the other worker`, at: { m: 'tool-start', i: 1 }, interruptedCalls: 'unknown' },
  ];
}

/**
 * A random kill of a queue mode: at a random time within a run like the calibration one, or
 * (half of them) at a random marker — a random call's tool start or end in a worker, or a
 * random call's result reaching the orchestrator.
 */
function randomQueueKill(mode: QueueMode, durationMs: number): QueueKill {
  if (random() < 0.5) return { kind: 'time', ms: Math.floor(random() * durationMs) };
  // Calls 5–7 are rejected before they run: no tool marker.
  if (mode !== 'queue-orchestrator') return { kind: 'freeze', at: { m: random() < 0.5 ? 'tool-start' : 'tool-done', i: Math.floor(random() * 5) } };
  return { kind: 'freeze', at: { m: 'result', i: Math.floor(random() * (QUEUE_CALLS - 1)) } };
}

/**
 * A queue mode (queue-trial.ts): a clean run (`runTools` without a journal), a calibration
 * trial (no kill) for the duration of a batch, then `trialsPerMode` random trials and the
 * placed ones, `parallel` at a time, every trial its own application version on the shared
 * system database.
 */
async function runQueueMode(mode: QueueMode, databaseUrl: string, client: DBOSClient): Promise<{ random: TrialResult[]; placed: TrialResult[] }> {
  const clean = await queueCleanRun(queueChild, join(root, `${mode}-clean`));
  const calibration = await runQueueTrial(queueChild, { name: `${mode} calibration`, mode, kill: { kind: 'none' }, interruptedCalls: 'run-again' }, join(root, `${mode}-calibration`), databaseUrl, client, clean);
  if (calibration.failures.length > 0) throw new Error(`the calibration run of ${mode} failed: ${calibration.failures.join('; ')}`);
  const plans: QueueTrialPlan[] = [];
  const policy = (n: number): QueueTrialPlan['interruptedCalls'] => (n % 3 === 2 ? 'unknown' : 'run-again');
  for (let n = 0; n < trialsPerMode; n++) plans.push({ name: `${mode} random #${n}`, mode, kill: randomQueueKill(mode, calibration.durationMs), interruptedCalls: policy(n) });
  const placed = values['no-placed'] ? [] : queuePlacedKills(mode);
  for (const [n, p] of placed.entries()) plans.push({ name: `${mode}: kill ${p.name}`, mode, kill: { kind: 'freeze', at: p.at }, interruptedCalls: p.interruptedCalls ?? policy(n) });
  const results: TrialResult[] = new Array(plans.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < plans.length) {
      const n = next++;
      results[n] = await runQueueTrial(queueChild, plans[n]!, join(root, `${mode}-${n}`), databaseUrl, client, clean);
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  for (const [n, r] of results.slice(trialsPerMode).entries()) if (r.kills === 0) console.log(`note: placed kill "${plans[trialsPerMode + n]!.name}" never happened (its marker did not occur)`);
  return { random: results.slice(0, trialsPerMode), placed: results.slice(trialsPerMode) };
}

/** Runs `plans` `parallel` at a time; each in its own folder under `root`. */
async function runAll(plans: TrialPlan[], clean: Map<string, ChildOutcome>, prefix: string): Promise<TrialResult[]> {
  const results: TrialResult[] = new Array(plans.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < plans.length) {
      const n = next++;
      const plan = plans[n]!;
      results[n] = await runTrial(child, plan, join(root, `${prefix}-${n}`), clean.get(cleanKey(plan))!);
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return results;
}

const cleanKey = (plan: TrialPlan): string => `${plan.config.mode}`;

/** The placed kills of a mode: each one freezes the first attempt right after the marker. */
function placedKills(mode: 'batch' | 'agent'): Array<{ name: string; at: FreezeAt }> {
  const t = mode === 'batch' ? 0 : undefined; // the agent's batches: any turn's first match
  const placed: Array<{ name: string; at: FreezeAt }> = [];
  for (const i of [0, 4, 8, 11]) placed.push({ name: `after the start of call ${i} is journaled`, at: { m: 'prior', ...(t === undefined ? {} : { t }), i } });
  for (const i of [1, 3, 11]) placed.push({ name: `after call ${i}'s tool ended, before its result is journaled`, at: { m: 'tool-done', ...(t === undefined ? {} : { t }), i } });
  for (const i of [0, 7]) placed.push({ name: `while call ${i}'s result is being journaled`, at: { m: 'commit', ...(t === undefined ? {} : { t }), i } });
  for (const i of [2, 9, 11]) placed.push({ name: `after call ${i}'s result is journaled`, at: { m: 'committed', ...(t === undefined ? {} : { t }), i } });
  for (const i of [8, 9]) placed.push({ name: `after the approval of call ${i} is journaled`, at: { m: 'decided', ...(t === undefined ? {} : { t }), i } });
  if (mode === 'agent') for (const turn of [1, 2, 3, 4]) placed.push({ name: `after model reply ${turn} is journaled`, at: { m: 'reply', t: turn } });
  return placed;
}

/** A random kill: at a random marker of a run like the calibration one, or at a random time within it. */
function randomKill(markers: number, durationMs: number): KillPlan {
  return random() < 0.5 ? { kind: 'freeze', at: { nth: Math.floor(random() * markers) } } : { kind: 'time', ms: Math.floor(random() * durationMs) };
}

interface Row {
  mode: string;
  trials: number;
  kills: number;
  recoveries: number;
  rerunStarts: number;
  replayed: number;
  mismatches: number;
  failed: number;
}

function row(mode: string, results: TrialResult[]): Row {
  const sum = (f: (r: TrialResult) => number): number => results.reduce((total, r) => total + f(r), 0);
  return {
    mode,
    trials: results.length,
    kills: sum((r) => r.kills),
    recoveries: sum((r) => (r.recovered ? 1 : 0)),
    rerunStarts: sum((r) => r.rerunStarts),
    replayed: sum((r) => r.replayed),
    mismatches: sum((r) => r.mismatches),
    failed: sum((r) => (r.failures.length > 0 ? 1 : 0)),
  };
}

function printRows(rows: Row[]): void {
  const head = ['mode', 'trials', 'kills', 'recoveries', 'starts re-run', 'replayed', 'mismatches', 'failed'];
  const lines = [head, ...rows.map((r) => [r.mode, r.trials, r.kills, r.recoveries, r.rerunStarts, r.replayed, r.mismatches, r.failed].map(String))];
  const widths = head.map((_, c) => Math.max(...lines.map((l) => l[c]!.length)));
  for (const l of lines) console.log(l.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  '));
}

const started = performance.now();
console.log(`durable trials: engine ${engine}, ${trialsPerMode} random trials per mode, modes ${modes.join(', ')}, seed ${seed}, ${parallel} at a time`);
const rows: Row[] = [];
const brokenRows: Row[] = [];
let unsound = false;
// One PostgreSQL for every trial (each trial is its own DBOS executor and workflow id in one system database).
let pg: PostgresServer | undefined;
/** Reads the queue trials' journals (`listWorkflowSteps`) when a kill lands. */
let client: DBOSClient | undefined;
try {
  if (engine === 'dbos') {
    pg = await startPostgres();
    console.log(`PostgreSQL ${pg.version} on 127.0.0.1:${pg.port} (initdb ${pg.timings.initdbMs.toFixed(0)} ms, start ${pg.timings.startMs.toFixed(0)} ms)`);
  }
  const databaseUrl = pg?.databaseUrl('toolrun_trials');
  if (databaseUrl !== undefined) {
    // Why the system database is made here, once: DBOS processes launched side by side on a
    // fresh one race in its migrations and fail to launch ("tuple concurrently updated",
    // "deadlock detected") — what the queue trials, which start three at once, ran into.
    const { DBOS } = await import('@dbos-inc/dbos-sdk');
    await DBOS.migrate(databaseUrl);
  }
  for (const mode of modes) {
    if (mode === 'queue-orchestrator' || mode === 'queue-worker' || mode === 'queue-takeover') {
      if (databaseUrl === undefined) throw new Error(`mode ${mode} needs --engine dbos (queue mode is toolrun/dbos's)`);
      if (client === undefined) {
        const { DBOSClient } = await import('@dbos-inc/dbos-sdk');
        client = await DBOSClient.create({ systemDatabaseUrl: databaseUrl });
      }
      const modeStarted = performance.now();
      const results = await runQueueMode(mode, databaseUrl, client);
      console.log(`${mode}: ${results.random.length + results.placed.length} trials in ${((performance.now() - modeStarted) / 1000).toFixed(0)} s`);
      rows.push(row(`${mode} (random)`, results.random), row(`${mode} (placed)`, results.placed));
      for (const r of [...results.random, ...results.placed].filter((r) => r.failures.length > 0)) {
        unsound = true;
        console.log(`FAILED ${r.name}:\n  ${r.failures.slice(0, 5).join('\n  ')}`);
      }
      continue;
    }
    const base: TrialPlan['config'] = { engine, mode, stream: false, interruptedCalls: 'run-again', ...(databaseUrl === undefined ? {} : { databaseUrl }) };
    const clean = new Map([[mode, await cleanRun(child, base, join(root, `${mode}-clean`))]]);
    // Calibration: one durable run without a kill gives the marker count and duration of an attempt.
    mkdirSync(join(root, `${mode}-calibration`));
    const t0 = performance.now();
    const calibration = await runAttempt(child, { ...base, dir: join(root, `${mode}-calibration`), runId: `${mode}-calibration`, attempt: 0 }, { kind: 'none' });
    const durationMs = performance.now() - t0;
    if (calibration.outcome === undefined) throw new Error(`the calibration run of ${mode} did not finish: exit ${calibration.exitCode}: ${calibration.stderr.slice(0, 2000)}`);
    const markerCount = calibration.markers.length;
    const variant = (n: number): TrialPlan['config'] => ({ ...base, stream: mode === 'batch' && n % 2 === 1, interruptedCalls: n % 3 === 2 ? 'unknown' : 'run-again' });
    const plans: TrialPlan[] = [];
    for (let n = 0; n < trialsPerMode; n++) {
      const kills = [randomKill(markerCount, durationMs)];
      if (random() < 0.2) kills.push(randomKill(markerCount, durationMs));
      plans.push({ name: `${mode} random #${n}`, config: variant(n), kills });
    }
    for (const [n, placed] of (values['no-placed'] ? [] : placedKills(mode)).entries()) plans.push({ name: `${mode}: kill ${placed.name}`, config: variant(n), kills: [{ kind: 'freeze', at: placed.at }] });
    const results = await runAll(plans, clean, mode);
    const random_ = results.slice(0, trialsPerMode);
    const placed = results.slice(trialsPerMode);
    rows.push(row(`${mode} (random)`, random_), row(`${mode} (placed)`, placed));
    for (const r of results.filter((r) => r.failures.length > 0)) {
      unsound = true;
      console.log(`FAILED ${r.name}:\n  ${r.failures.slice(0, 5).join('\n  ')}`);
    }
    // Placed kills that never froze (the marker did not occur) are a harness bug: say so.
    for (const [n, r] of placed.entries()) if (r.kills === 0) console.log(`note: placed kill "${plans[trialsPerMode + n]!.name}" never happened (its marker did not occur)`);
    if (!values['no-broken']) {
      for (const broken of ['completion-order', 'raw-return'] as Broken[]) {
        // The kills after results were journaled: the ones a broken journal shows up in.
        const brokenPlans: TrialPlan[] = plans
          .slice(trialsPerMode)
          .filter((p) => p.kills.some((k) => k.kind === 'freeze' && 'm' in k.at && k.at.m === 'committed'))
          .map((p) => ({ ...p, name: `${p.name} [broken: ${broken}]`, config: { ...p.config, broken } }));
        const brokenResults = await runAll(brokenPlans, clean, `${mode}-${broken}`);
        const r = row(`${mode} broken: ${broken}`, brokenResults);
        brokenRows.push(r);
        for (const b of brokenResults.filter((b) => b.failures.length > 0)) console.log(`caught (${broken}): ${b.name}: ${b.failures[0]!.slice(0, 300)}`);
        if (r.failed === 0) {
          unsound = true;
          console.log(`NOT CAUGHT: the journal broken with '${broken}' passed every ${mode} trial`);
        }
      }
    }
  }
} finally {
  await client?.destroy();
  await pg?.stop();
  if (!values.keep) rmSync(root, { recursive: true, force: true });
}
printRows(rows);
if (brokenRows.length > 0) {
  console.log('\nbroken journals (each must fail trials):');
  printRows(brokenRows);
}
console.log(`\n${unsound ? 'FAIL' : 'ok'}: ${((performance.now() - started) / 1000).toFixed(0)} s`);
process.exitCode = unsound ? 1 : 0;
