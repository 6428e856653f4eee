/**
 * The side-effect log of the crash trials: an append-only file of JSON lines, one per thing a
 * tool (or the approval handler, or the model) did, written with one `appendFileSync` each.
 * A `write(2)` that returned is in the kernel's page cache, so a `kill -9` of the writer
 * loses nothing it wrote (only a machine crash would, and the trials kill processes, not
 * machines). A torn last line cannot happen for writes this small on a local file opened
 * with `O_APPEND`, but the reader skips one anyway.
 *
 * The driver counts these lines per call and per attempt: a call whose result was journaled
 * must have no `start` in a later attempt; a call re-run after a crash must carry the same
 * idempotency key in every attempt; an approval journaled must not be asked again.
 *
 * @module
 */
import { appendFileSync, readFileSync } from 'node:fs';

/** One line of the log. `attempt` is the child process's attempt number in its trial (0 = first). */
export type SideEffect =
  | { kind: 'start'; attempt: number; turn: number; index: number; toolCallId: string; key: string | undefined; pid: number }
  | { kind: 'end'; attempt: number; turn: number; index: number; toolCallId: string; key: string | undefined; pid: number }
  | { kind: 'asked'; attempt: number; turn: number; index: number; toolCallId: string; pid: number }
  | { kind: 'model'; attempt: number; turn: number; pid: number }
  /** Written by the queue driver (queue-trial.ts) once it killed process `pid` (of attempt `attempt`): a call that process was running may never end (under `'unknown'`). */
  | { kind: 'killed'; attempt: number; pid: number };

/** Appends `effect` to the log at `file` (synchronously: it is in the kernel when this returns). */
export function recordEffect(file: string, effect: SideEffect): void {
  appendFileSync(file, `${JSON.stringify(effect)}\n`);
}

/** Every complete line of the log at `file` (none when it does not exist). */
export function readEffects(file: string): SideEffect[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const effects: SideEffect[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    try {
      effects.push(JSON.parse(line) as SideEffect);
    } catch {
      // A torn last line (see the module comment): ignored.
    }
  }
  return effects;
}
