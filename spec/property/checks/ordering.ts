/**
 * Ordering checkers (contract O1–O6): per-call event order, results in call order released
 * as soon as possible, one result per call, the batch.
 */
import { check, cycled, type Mark } from '../model.ts';
import type { ToolEvent } from '../../../lib/core/run/events.ts';
import type { Observed, Seen } from './observed.ts';

export function checkOrdering(o: Observed): Seen {
  const { sc, n, calls, logs, received, batch, consumerStopped, runAbort, deliveries, delivered } = o;
// --- per-call phases and global order (O1–O4), on whatever the consumer received.
const events = received.map((r) => r.event);
const phase: ('started' | 'ended' | 'released' | undefined)[] = new Array(n).fill(undefined);
let released = 0;
let firstUnended = 0;
const updates: number[][] = sc.calls.map(() => []);
const updateMarks: Mark[][] = sc.calls.map(() => []);
const ends: (Extract<ToolEvent, { type: 'tool_execution_end' }> & { mark: Mark })[] = [];
const endByIndex = new Map<number, (typeof ends)[number]>();
const results: Extract<ToolEvent, { type: 'tool_result' }>[] = [];
const resultMarks: Mark[] = [];
for (const r of received) {
  const e = r.event;
  check(Number.isInteger(e.index) && e.index >= 0 && e.index < n, () => `event for index ${e.index} out of range: ${JSON.stringify(e)}`);
  const i = e.index;
  const now = phase[i];
  if (e.type !== 'tool_result') {
    // O2: result i is out as soon as calls 0..i have ended — before anything else happens.
    check(released === firstUnended, () => `O2: ${firstUnended} calls ended in a row but only ${released} results released before a ${e.type} for call ${i}`);
  }
  switch (e.type) {
    case 'tool_execution_start':
      check(now === undefined, () => `O4: second start for call ${i}`);
      check(e.toolCallId === calls[i]!.id && e.toolName === calls[i]!.name, () => `start event of call ${i} names ${e.toolCallId}/${e.toolName}`);
      check(e.args === calls[i]!.arguments, () => `start event of call ${i} does not carry the raw arguments`);
      phase[i] = 'started';
      break;
    case 'tool_execution_update':
      check(now === 'started', () => `O4: update for call ${i} while ${String(now)}`);
      check(e.toolCallId === calls[i]!.id, 'update carries another id');
      updates[i]!.push(e.progress as number);
      updateMarks[i]!.push(r);
      break;
    case 'tool_execution_end':
      check(now === 'started', () => `O4: end for call ${i} while ${String(now)}`);
      check(e.toolCallId === calls[i]!.id && e.toolName === calls[i]!.name, 'end event carries another id');
      phase[i] = 'ended';
      ends.push({ ...e, mark: r });
      endByIndex.set(i, { ...e, mark: r });
      while (firstUnended < n && phase[firstUnended] === 'ended') firstUnended++;
      break;
    case 'tool_result':
      check(now === 'ended', () => `O4: result for call ${i} while ${String(now)}`);
      check(i === released, () => `O2: result for call ${i} released while ${released} was next`);
      check(e.message.toolCallId === calls[i]!.id && e.message.toolName === calls[i]!.name, () => `O1: result ${i} carries id ${e.message.toolCallId}, call has ${calls[i]!.id}`);
      check(e.message.role === 'tool', 'result message role');
      phase[i] = 'released';
      released++;
      results.push(e);
      resultMarks.push(r);
      break;
  }
}

if (!consumerStopped) {
  // O1: one result per call. A stream (S4) is read until the run stops: every call that
  // arrived before the abort is answered; a read still pending then may be left behind
  // (a stuck stream must not hold the abort), so the calls after it get no result.
  if (sc.input === 'async' && runAbort !== undefined) {
    const before = deliveries.filter((d) => d.at < runAbort!.at).length;
    check(released >= before && released <= delivered, () => `O1: ${released} results; ${before} calls had arrived before the abort, ${delivered} in all`);
  } else {
    check(released === n, () => `O1: ${released} results for ${n} calls`);
  }
  check(released === firstUnended, 'O2: results held back at the end');
  check(batch === undefined || batch.messages.length === released, 'O6: batch size');
  if (batch !== undefined) {
    for (let i = 0; i < released; i++) check(batch.messages[i] === results[i]!.message, () => `O6: batch message ${i} differs from the emitted result`);
    const allTerminate = released > 0 && ends.every((e) => !e.isError && e.result.terminate === true);
    check(batch.terminate === allTerminate, () => `O6: terminate is ${batch!.terminate}, expected ${allTerminate}`);
    if (runAbort === undefined) check(batch.aborted === false, 'batch.aborted without an abort');
    // batch.aborted: true exactly when the abort changed an outcome — a call not run,
    // interrupted or abandoned, a pending afterToolCall whose answer was dropped, or a
    // stream of calls cut short.
    const changed = ends.some((e) => e.outcome === 'not_run' || e.outcome === 'interrupted' || e.outcome === 'abandoned');
    if (changed && runAbort !== undefined) check(batch.aborted === true, 'batch.aborted is false though the abort changed an outcome');
    if (batch.aborted && !changed) {
      const dropped = logs.some((l, i) => l.afterCalls.length > 0 && ['passLater', 'throwLater'].includes(cycled(sc.after, i)?.kind ?? ''));
      // ...or a stream of calls (S4) the abort cut before it ended.
      const streamCut = sc.input === 'async' && runAbort !== undefined;
      check(dropped || streamCut, 'batch.aborted is true though the batch is what it would have been without the abort');
    }
  }
  // Every call ended by itself, by abort, or by its timeout; a call that never ended
  // could only be answered by the consumer leaving.
}
  return { ends, endByIndex, results, resultMarks, updates, updateMarks, released };
}
