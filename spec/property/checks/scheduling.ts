/**
 * Scheduling checkers (contract P1, S2, S3): prepare in call order, execution not waiting
 * for later calls, sequential mode, exclusive tools.
 */
import { check } from '../model.ts';
import type { Observed, Seen } from './observed.ts';

export function checkScheduling(o: Observed, seen: Seen): void {
  const { sc, n, logs, uniqueIds, progressLog } = o;
  const { resultMarks } = seen;
// --- P1, S2, S3: orderings of prepare and execution.
const hookOrder = logs.flatMap((l, i) => l.beforeCalls.map((b) => ({ i, seq: b.seq })));
for (let k = 1; k < hookOrder.length; k++) {
  const prev = hookOrder[k - 1]!;
  const cur = hookOrder[k]!;
  check(cur.i > prev.i, () => `P1: beforeToolCall for call ${cur.i} after call ${prev.i}`);
  const settled = logs[prev.i]!.beforeSettled;
  check(settled !== undefined && settled.seq < cur.seq, () => `P1: beforeToolCall for call ${cur.i} before call ${prev.i}'s hook settled`);
}
for (const [i, log] of logs.entries()) {
  const c = sc.calls[i]!;
  const start = log.bodyStart;
  if (start === undefined) continue;
  // P1: execution does not wait for later calls' preparation.
  if (!c.exclusive) {
    for (let j = i + 1; j < n; j++) {
      const b = logs[j]!.beforeCalls[0];
      if (b !== undefined) check(b.seq > start.seq, () => `P1: call ${i}'s body started after call ${j}'s beforeToolCall`);
    }
  }
  // S2: in sequential mode a call is prepared only after the previous result was taken.
  if (sc.mode === 'sequential' && i > 0) {
    const prevResult = resultMarks[i - 1];
    const firstTouch = logs[i]!.beforeCalls[0]?.seq ?? start.seq;
    check(prevResult !== undefined && prevResult.seq < firstTouch, () => `S2: call ${i} was prepared before the consumer took result ${i - 1}`);
  }
  // S3: an exclusive call starts after every earlier call ended, and nothing later starts before it ended.
  if (c.exclusive && uniqueIds && sc.progressListener) {
    for (let j = 0; j < i; j++) {
      const lj = logs[j]!;
      if (lj.afterCalls.length > 0) check(lj.afterSettled !== undefined && lj.afterSettled.seq < start.seq, () => `S3: exclusive call ${i} started while call ${j}'s afterToolCall was pending`);
    }
    const leftAt = progressLog.find((p) => p.seq > start.seq && !p.ids.includes(c.id));
    const endOfI = Math.max(leftAt?.seq ?? Infinity, log.afterSettled?.seq ?? 0);
    for (let j = i + 1; j < n; j++) {
      const lj = logs[j]!;
      const touch = Math.min(lj.beforeCalls[0]?.seq ?? Infinity, lj.bodyStart?.seq ?? Infinity);
      check(touch === Infinity || touch > endOfI, () => `S3: call ${j} was prepared or started before exclusive call ${i} ended`);
    }
  }
}

}
