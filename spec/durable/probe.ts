/**
 * The harness's wrapper around a real journal (DBOS's or the reference file journal). It
 *
 * - prints a marker line on stdout for every journal operation (`@@ {"m":"committed",…}`),
 *   written synchronously so the driver reads it even when the process dies right after;
 * - freezes the process (a synchronous wait that never ends) right after the marker the
 *   driver asked for (`freezeAt`), so a placed `kill -9` lands exactly there: after a start
 *   is journaled, after a tool finished but before its result is journaled, after a model
 *   reply, after an approval;
 * - can break the journal on purpose, to prove the trials fail on a broken adapter:
 *   `'completion-order'` sends the k-th result commit to the k-th entry in the order the
 *   calls *finished* (what an adapter that issues its operations when calls finish does to an
 *   engine that matches its journal by operation number: the swapped results), and
 *   `'raw-return'` journals the tool's raw return value or throw instead of the finalized
 *   result (no `afterToolCall` meta, a timeout journaled as the abort's own message).
 *
 * @module
 */
import { writeSync } from 'node:fs';
import type { AgentJournal, JournalCall, JournaledResult, JournalEntry, JournalPrior, JournalValueEntry, ToolJournal } from '../../lib/core/seams/journal.ts';
import { turnOf } from './workload.ts';

/** A marker the child prints: `m` is what happened, `t` the turn (from the call id), `i` the call index. */
export interface Marker {
  m: 'open' | 'prior' | 'decided' | 'progress' | 'commit' | 'committed' | 'tool-start' | 'tool-done' | 'reply-prior' | 'reply' | 'result' | 'ready' | 'frozen' | 'done' | 'info';
  t?: number;
  i?: number;
  state?: string;
  [key: string]: unknown;
}

/** How the harness breaks a journal on purpose (`undefined`: it does not). */
export type Broken = 'completion-order' | 'raw-return' | undefined;

/** Where to freeze: the `nth` marker (0-based, counted over every marker) or the first marker matching `m` (and `t`, `i` when given). */
export type FreezeAt = { nth: number } | { m: Marker['m']; t?: number; i?: number };

/**
 * Prints `marker` and freezes when it is the one asked for — and, when `claim` is given, only
 * if `claim()` returns true (the queue trials' workers share one placed kill: the first to
 * reach the marker claims it, so the other one goes on).
 */
export class Markers {
  private count = 0;
  constructor(
    private readonly freezeAt: FreezeAt | undefined,
    private readonly claim?: () => boolean,
  ) {}

  emit(marker: Marker): void {
    writeSync(1, `@@ ${JSON.stringify(marker)}\n`);
    const at = this.freezeAt;
    const n = this.count++;
    if (at === undefined) return;
    const hit = 'nth' in at ? at.nth === n : at.m === marker.m && (at.t === undefined || at.t === marker.t) && (at.i === undefined || at.i === marker.i);
    if (!hit || (this.claim !== undefined && !this.claim())) return;
    writeSync(1, `@@ ${JSON.stringify({ m: 'frozen', at: marker })}\n`);
    // Why a synchronous wait: nothing of the run may go on after the marker (no timer, no
    // promise reaction, no write of the engine), so the kill lands exactly after it.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
  }
}

/** Raw ends of executed calls and the order calls finished in, reported by the workload's tools. */
export class RawEnds {
  readonly raw = new Map<string, { returned: unknown } | { threw: string }>();
  /** Call ids in the order their tools finished (this attempt). */
  readonly finished: string[] = [];
}

/** Wraps `journal` (a batch's journal) with markers, freezing and the `broken` mode. */
export function probeJournal(journal: ToolJournal, markers: Markers, ends: RawEnds, broken: Broken): ToolJournal {
  /**
   * For 'completion-order': the entries of this attempt whose prior was not `ended` (they
   * will be committed), by call index — never by the order their priors resolved in, which an
   * engine with a connection pool does not keep.
   */
  const open: Array<JournalEntry | undefined> = [];
  /** Calls whose commit the run has made, counted for calls that ran no tool. */
  const committedWithoutRun: string[] = [];
  /** Entries (positions in `slots`) already committed. */
  const used = new Set<number>();
  return {
    open(call: JournalCall): JournalEntry {
      const t = turnOf(call.toolCallId);
      const i = call.index;
      markers.emit({ m: 'open', t, i });
      const entry = journal.open(call);
      const priorSeen = Promise.resolve(entry.prior).then((prior: JournalPrior) => {
        if (prior.state !== 'ended') open[i] = entry;
        markers.emit({ m: 'prior', t, i, state: prior.state, ...(prior.state !== 'new' && prior.decision !== undefined ? { decision: prior.decision.approved } : {}) });
        return prior;
      });
      const wrapped: JournalEntry = {
        prior: priorSeen,
        idempotencyKey: entry.idempotencyKey,
        decide: async (decision) => {
          await entry.decide(decision);
          markers.emit({ m: 'decided', t, i, approved: decision.approved });
        },
        commit: async (result: JournaledResult) => {
          markers.emit({ m: 'commit', t, i });
          let target = entry;
          let value = result;
          if (broken === 'raw-return') {
            const raw = ends.raw.get(call.toolCallId);
            if (raw !== undefined) {
              const threw = 'threw' in raw;
              const text = threw ? raw.threw : JSON.stringify(raw.returned);
              const { meta: _meta, details: _details, ...message } = result.message;
              value = { message: { ...message, content: [{ type: 'text', text }], isError: threw }, outcome: threw ? 'error' : 'ok' };
            }
          } else if (broken === 'completion-order') {
            // The k-th call to finish (its tool's end, or its commit when it ran no tool)
            // lands in the k-th entry of this attempt, whichever call that entry belongs to;
            // each entry is committed once (a taken one passes to the next free one).
            let rank = ends.finished.indexOf(call.toolCallId);
            if (rank < 0) {
              committedWithoutRun.push(call.toolCallId);
              rank = ends.finished.length + committedWithoutRun.length - 1;
            }
            const slots = open.filter((e): e is JournalEntry => e !== undefined);
            let slot = Math.min(rank, slots.length - 1);
            while (used.has(slot) && slot < slots.length - 1) slot++;
            while (used.has(slot) && slot > 0) slot--;
            used.add(slot);
            target = slots[slot] ?? entry;
          }
          await target.commit(value);
          markers.emit({ m: 'committed', t, i });
        },
      };
      if (entry.progress !== undefined) {
        const keep = entry.progress.bind(entry);
        wrapped.progress = (value) => {
          keep(value);
          markers.emit({ m: 'progress', t, i });
        };
      }
      return wrapped;
    },
  };
}

/** Wraps an agent's journal: markers for each model reply, and each turn's batch probed. */
export function probeAgentJournal<Reply>(journal: AgentJournal<Reply>, markers: Markers, ends: RawEnds, broken: Broken): AgentJournal<Reply> {
  return {
    modelReply(turn: number): JournalValueEntry<Reply> {
      const entry = journal.modelReply(turn);
      return {
        prior: Promise.resolve(entry.prior).then((prior) => {
          markers.emit({ m: 'reply-prior', t: turn, state: prior === undefined ? 'new' : 'ended' });
          return prior;
        }),
        commit: async (value) => {
          await entry.commit(value);
          markers.emit({ m: 'reply', t: turn });
        },
      };
    },
    batch: (turn) => probeJournal(journal.batch(turn), markers, ends, broken),
  };
}
