/**
 * Cancellation checkers (contract A5, A6): the consumer's exit — before the first next(),
 * its bounded wait for cleanup, every running tool told to stop.
 */
import { check } from '../model.ts';
import type { Observed, Seen } from './observed.ts';

/** A5, A6: how the consumer's exit went. */
export function checkExit(o: Observed): void {
  const { sc, logs, received, stopped, stopDoneMark, grace, maxCallerListeners } = o;
// A6: a run left before its first next() shows nothing and runs nothing.
if (sc.consumer.stopAt === -1) {
  check(received.length === 0, () => `consumer left before the first next() but got ${received.length} events`);
  check(logs.every((l) => l.bodyStart === undefined && l.beforeCalls.length === 0), 'a tool or hook ran though the consumer left before the first next()');
  check(maxCallerListeners === 0, 'A6: a listener was put on the caller’s signal by a run never iterated');
}
// A5: the consumer's exit completes once the tools' cleanups have finished or the grace
// period has passed, whichever comes first.
if (stopped !== undefined && stopDoneMark !== undefined) {
  const exit = stopDoneMark;
  const exitStart = stopped;
  check(exit.at - exitStart.at <= grace, () => `A5: the consumer's exit took ${exit.at - exitStart.at} ms, grace ${grace}`);
  for (const [i, log] of logs.entries()) {
    const returned = log.returnCalled;
    const cleaned = log.finallyRan;
    if (grace === 0 || returned === undefined || returned.seq < exitStart.seq || cleaned === undefined) continue;
    if (cleaned.at < exitStart.at + grace) {
      check(cleaned.seq < exit.seq, () => `A5: call ${i}'s finally ran at ${cleaned.at}, after the consumer's exit completed at ${exit.at} (exit began at ${exitStart.at}, grace ${grace})`);
    }
  }
}

}

/** A5: every tool still running when the consumer left was told to stop. */
export function checkConsumerExit(o: Observed, seen: Seen): void {
  const { sc, logs, stopped, consumerStopped } = o;
  const { endByIndex } = seen;
// --- the consumer left early (A5): every running tool told to stop, nothing starts after.
const stopSeq = stopped?.seq ?? Infinity;
if (consumerStopped) {
  for (const [i, log] of logs.entries()) {
    const c = sc.calls[i]!;
    if (log.bodyStart === undefined || log.bodySettled !== undefined && log.bodySettled.seq < stopSeq) continue;
    if (endByIndex.has(i)) continue;
    // Still running when the consumer left: its signal is aborted...
    if (log.signal !== undefined) check(log.signal.aborted, () => `A5: call ${i} still running after the consumer left, its signal not aborted`);
    // ...and a generator got return().
    if (c.shape === 'generator' && log.bodySettled === undefined) check(log.returnCalled !== undefined, () => `A5: generator of call ${i} did not get return() when the consumer left`);
  }
}

}
