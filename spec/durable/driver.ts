/**
 * The crash-trial driver: runs the workload once without a journal (the expected results),
 * then trials — start the child (child.ts), `kill -9` it at a random or placed point, start
 * it again (recovery), let it finish — and checks each trial:
 *
 * 1. no call whose result was journaled starts again (the side-effect log counts `start`s
 *    per attempt; a `committed` marker the driver read is proof the result was journaled);
 * 2. a call the journal answered (`prior: ended`) is not executed in that attempt and its
 *    `tool_execution_end` says `replayed: true`;
 * 3. every call is answered exactly once, and `tool_result`s come in call order;
 * 4. each result deep-equals the clean run's — counting starts alone misses a result
 *    handed to the wrong call — except, with `interruptedCalls: 'unknown'`, a call the
 *    last attempt found `started`, which must be answered as an error without running;
 * 5. a call run again after a crash carries the same idempotency key in every attempt;
 * 6. nobody is asked twice about a call whose decision was journaled, and the model is not
 *    asked again for a turn whose reply was journaled.
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { ToolResultMessage } from '../../lib/index.ts';
import type { ChildConfig, ChildOutcome } from './child.ts';
import type { FreezeAt, Marker } from './probe.ts';
import { readEffects } from './side-effects.ts';
import { REJECTED_BY_RUN } from './workload.ts';

/** How one attempt is ended early (or not). */
export type KillPlan = { kind: 'none' } | { kind: 'time'; ms: number } | { kind: 'freeze'; at: FreezeAt };

/** What one attempt printed and how it ended. */
export interface Attempt {
  markers: Marker[];
  outcome?: ChildOutcome;
  /** True when the driver killed it (before it printed `done`). */
  killed: boolean;
  exitCode: number | null;
  stderr: string;
}

/** How the child is started: the command and its first arguments (the script included). */
export interface ChildCommand {
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
}

/** Runs one attempt of the child with `config`, ending it as `plan` says. Never rejects; a hang guard kills it after `guardMs`. */
export function runAttempt(child: ChildCommand, config: ChildConfig, plan: KillPlan, guardMs = 120_000): Promise<Attempt> {
  return new Promise((resolve) => {
    const proc = spawn(child.command, child.args, { env: { ...process.env, ...child.env, TOOLRUN_TRIAL: JSON.stringify(config) }, stdio: ['ignore', 'pipe', 'pipe'] });
    const attempt: Attempt = { markers: [], killed: false, exitCode: null, stderr: '' };
    let buffer = '';
    const kill = (): void => {
      if (attempt.outcome !== undefined || attempt.killed) return;
      attempt.killed = true;
      proc.kill('SIGKILL');
    };
    const guard = setTimeout(() => {
      attempt.stderr += `\n[driver] hang guard: killed after ${guardMs} ms`;
      proc.kill('SIGKILL');
    }, guardMs);
    let timer: NodeJS.Timeout | undefined;
    if (plan.kind === 'time') timer = setTimeout(kill, plan.ms);
    proc.stdout.setEncoding('utf8');
    proc.stdout.on('data', (chunk: string) => {
      buffer += chunk;
      let newline: number;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        if (!line.startsWith('@@ ')) continue;
        const marker = JSON.parse(line.slice(3)) as Marker & { outcome?: ChildOutcome };
        if (marker.m === 'done') { if (marker.outcome !== undefined) attempt.outcome = marker.outcome; }
        else attempt.markers.push(marker);
        if (marker.m === 'frozen') kill();
      }
    });
    proc.stderr.setEncoding('utf8');
    proc.stderr.on('data', (chunk: string) => {
      if (attempt.stderr.length < 20_000) attempt.stderr += chunk;
    });
    proc.on('close', (code) => {
      clearTimeout(guard);
      clearTimeout(timer);
      attempt.exitCode = code;
      resolve(attempt);
    });
  });
}

/** One trial's plan: how many attempts are killed and how. */
export interface TrialPlan {
  name: string;
  config: Omit<ChildConfig, 'attempt' | 'dir' | 'runId'>;
  /** Plans for the attempts that are killed, in order; then one attempt runs to its end. */
  kills: KillPlan[];
}

/** What a trial found. */
export interface TrialResult {
  name: string;
  attempts: number;
  /** Attempts actually killed (a plan can come too late: the attempt had finished). */
  kills: number;
  /** True when a killed run was finished by a later attempt. */
  recovered: boolean;
  /** Starts, in later attempts, of calls an earlier attempt had started (allowed only for calls interrupted at the crash). */
  rerunStarts: number;
  /** Calls replayed from the journal in the last attempt. */
  replayed: number;
  /** Results that differ from the clean run's. */
  mismatches: number;
  /** Every broken rule, in words (empty: the trial passed). */
  failures: string[];
}

/** The text blocks of a result message, joined. */
function contentText(message: ToolResultMessage): string {
  return message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
}

const key = (t: number | undefined, i: number | undefined): string => `${t ?? 0}:${i ?? -1}`;

/** Runs one trial in `dir` (a new folder) and checks it against `clean`. */
export async function runTrial(child: ChildCommand, plan: TrialPlan, dir: string, clean: ChildOutcome): Promise<TrialResult> {
  mkdirSync(dir, { recursive: true });
  const runId = `trial-${dir.split('/').pop()}`;
  const attempts: Attempt[] = [];
  for (let n = 0; n <= plan.kills.length; n++) {
    const kill = plan.kills[n] ?? { kind: 'none' };
    const config: ChildConfig = { ...plan.config, dir, runId, attempt: n, ...(kill.kind === 'freeze' ? { freezeAt: kill.at } : {}) };
    attempts.push(await runAttempt(child, config, kill));
    if (attempts.at(-1)!.outcome !== undefined) break;
  }
  const result: TrialResult = { name: plan.name, attempts: attempts.length, kills: attempts.filter((a) => a.killed).length, recovered: false, rerunStarts: 0, replayed: 0, mismatches: 0, failures: [] };
  const fail = (text: string): void => void result.failures.push(text);
  const last = attempts.at(-1)!;
  const outcome = last.outcome;
  if (outcome === undefined) {
    fail(`the last attempt (${attempts.length - 1}) did not finish: exit ${last.exitCode}, stderr: ${last.stderr.trim().slice(0, 600)}`);
    return result;
  }
  result.recovered = result.kills > 0;
  for (const [n, attempt] of attempts.entries()) {
    if (!attempt.killed && attempt.outcome === undefined) fail(`attempt ${n} died on its own: exit ${attempt.exitCode}, stderr: ${attempt.stderr.trim().slice(0, 600)}`);
  }

  // What each attempt's journal said, and what was journaled before each kill.
  const effects = readEffects(join(dir, 'effects.log'));
  const committedBefore = new Map<string, number>(); // call → first attempt that saw its commit done
  const decidedBefore = new Map<string, number>();
  const repliedBefore = new Map<number, number>();
  for (const [n, attempt] of attempts.entries()) {
    for (const marker of attempt.markers) {
      const k = key(marker.t, marker.i);
      if (marker.m === 'committed' && !committedBefore.has(k)) committedBefore.set(k, n);
      if (marker.m === 'decided' && !decidedBefore.has(k)) decidedBefore.set(k, n);
      if (marker.m === 'reply' && !repliedBefore.has(marker.t ?? -1)) repliedBefore.set(marker.t ?? -1, n);
    }
  }
  const startsOf = (k: string, attempt: number): number => effects.filter((e) => e.kind === 'start' && e.attempt === attempt && key(e.turn, e.index) === k).length;

  // 1. No call whose result was journaled starts again.
  for (const [k, n] of committedBefore) {
    for (let later = n + 1; later < attempts.length; later++) {
      if (startsOf(k, later) > 0) fail(`call ${k} was journaled in attempt ${n} and started again in attempt ${later}`);
    }
  }
  // 2. A call answered from the journal is not executed, and is marked replayed.
  const lastPrior = new Map<string, Marker>();
  for (const marker of last.markers) if (marker.m === 'prior') lastPrior.set(key(marker.t, marker.i), marker);
  /** Calls some attempt found `started` (interrupted by an earlier kill). */
  const interrupted = new Set<string>();
  for (const attempt of attempts) for (const marker of attempt.markers) if (marker.m === 'prior' && marker.state === 'started') interrupted.add(key(marker.t, marker.i));
  for (const [n, attempt] of attempts.entries()) {
    for (const marker of attempt.markers) {
      if (marker.m !== 'prior' || marker.state !== 'ended') continue;
      const k = key(marker.t, marker.i);
      if (startsOf(k, n) > 0) fail(`call ${k} was answered from the journal in attempt ${n} and executed anyway`);
    }
  }
  for (const [k, marker] of lastPrior) {
    if (marker.state === 'ended' && !outcome.replayed.includes(k)) fail(`call ${k} came from the journal but its tool_execution_end is not marked replayed`);
    if (marker.state !== 'ended' && outcome.replayed.includes(k)) fail(`call ${k} was marked replayed but the journal had no result for it`);
  }
  result.replayed = outcome.replayed.length;
  // 3. Every call answered once, in call order.
  if (!isDeepStrictEqual(outcome.order, clean.order)) fail(`tool_result order ${outcome.order.join(',')} is not the clean run's ${clean.order.join(',')}`);
  // 4. Each result equal to the clean run's.
  if (outcome.results.length !== clean.results.length) fail(`${outcome.results.length} results, the clean run has ${clean.results.length}`);
  for (const [j, expected] of clean.results.entries()) {
    const actual = outcome.results[j];
    const k = outcome.order[j] ?? `#${j}`;
    // A call the run itself rejects before any code of the workload runs (its bad argument,
    // its unknown tool) gets its true result even when interrupted (J5): it is checked below
    // like any call, so an "outcome unknown" answer for it fails the trial.
    if (plan.config.interruptedCalls === 'unknown' && interrupted.has(k) && !REJECTED_BY_RUN.includes(Number(k.split(':')[1]))) {
      // Answered without running, as an error saying its outcome is unknown (J5) — in the
      // attempt that found it started, or replayed from the journal in a later one — unless
      // the run proved no earlier attempt ran it (it waited for an approval nobody had
      // given): then it is prepared as new and its result is the clean run's.
      const unknown = actual !== undefined && actual.isError && actual.toolCallId === expected.toolCallId && contentText(actual).includes('its outcome is unknown') && startsOf(k, attempts.length - 1) === 0;
      if (!unknown && !isDeepStrictEqual(actual, expected)) {
        result.mismatches++;
        fail(`call ${k} was interrupted and the policy is 'unknown', but its result is ${JSON.stringify(actual)}`);
      }
      continue;
    }
    if (!isDeepStrictEqual(actual, expected)) {
      result.mismatches++;
      fail(`call ${k}: result ${JSON.stringify(actual)} differs from the clean run's ${JSON.stringify(expected)}`);
    }
  }
  // The agent's history: its tool results are checked above (one by one, with J5's answer
  // allowed); every other message — the model's replies, the user's — must be the clean run's.
  const notTool = (history: readonly unknown[] | undefined): unknown[] => (history ?? []).filter((m) => (m as { role?: string }).role !== 'tool');
  if (clean.history !== undefined && !isDeepStrictEqual(notTool(outcome.history), notTool(clean.history))) {
    result.mismatches++;
    const mine = notTool(outcome.history);
    const theirs = notTool(clean.history);
    const at = theirs.findIndex((message, j) => !isDeepStrictEqual(message, mine[j]));
    fail(`the agent's history differs from the clean run's at its non-tool message ${at}: ${JSON.stringify(mine[at]).slice(0, 400)} instead of ${JSON.stringify(theirs[at]).slice(0, 400)}`);
  }
  if (clean.reason !== outcome.reason) fail(`the run ended '${outcome.reason}', the clean run '${clean.reason}'`);
  // 5. Re-run calls keep their idempotency key.
  const keysByCall = new Map<string, Set<string | undefined>>();
  const attemptsByCall = new Map<string, Set<number>>();
  for (const e of effects) {
    if (e.kind !== 'start') continue;
    const k = key(e.turn, e.index);
    (keysByCall.get(k) ?? keysByCall.set(k, new Set()).get(k)!).add(e.key);
    (attemptsByCall.get(k) ?? attemptsByCall.set(k, new Set()).get(k)!).add(e.attempt);
  }
  for (const [k, keys] of keysByCall) {
    if (keys.size > 1) fail(`call ${k} ran with different idempotency keys: ${[...keys].join(', ')}`);
    if (keys.has(undefined)) fail(`call ${k} ran without an idempotency key`);
    result.rerunStarts += (attemptsByCall.get(k)?.size ?? 1) - 1;
  }
  // 6. Nobody asked twice; the model not asked again for a journaled reply.
  for (const [k, n] of decidedBefore) {
    const again = effects.filter((e) => e.kind === 'asked' && e.attempt > n && key(e.turn, e.index) === k);
    if (again.length > 0) fail(`call ${k}: the decision was journaled in attempt ${n} and the person was asked again in attempt ${again[0]!.attempt}`);
  }
  for (const [t, n] of repliedBefore) {
    // The journal's turn numbering may differ from the model's by one; both are checked through the model's own log.
    const again = effects.filter((e) => e.kind === 'model' && e.attempt > n && e.turn === t);
    if (again.length > 0) fail(`turn ${t}: the model reply was journaled in attempt ${n} and the model was asked again in attempt ${again[0]!.attempt}`);
  }
  return result;
}

/** Runs the clean reference: the workload with no journal, no kill. */
export async function cleanRun(child: ChildCommand, config: TrialPlan['config'], dir: string): Promise<ChildOutcome> {
  mkdirSync(dir, { recursive: true });
  const attempt = await runAttempt(child, { ...config, engine: 'none', dir, runId: 'clean', attempt: 0 }, { kind: 'none' });
  if (attempt.outcome === undefined) throw new Error(`the clean run did not finish: exit ${attempt.exitCode}: ${attempt.stderr.slice(0, 2000)}`);
  return attempt.outcome;
}
