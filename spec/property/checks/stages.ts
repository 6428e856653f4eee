/**
 * Stage checkers (contract P1–P5, with A1–A4 and O3/O5 per call): what happened to each
 * call — prepare's verdict, the hooks, the executed outcome and its text, who aborted its
 * signal, its progress values.
 */
import { check, cycled, fits, boundedEquals, expectedReturnText, thrownMarker, isPoisonReturn, timeoutOf, verdictOf, type AfterHook, type CallLog, type CallSpec } from '../model.ts';
import type { Observed, Seen } from './observed.ts';

export function checkStages(o: Observed, seen: Seen): void {
  const { sc, logs, stopped, consumerStopped, runAbort, grace, coverage, signalReason, uniqueIds } = o;
  const { endByIndex, released, results, updates, updateMarks } = seen;
  const stopSeq = stopped?.seq ?? Infinity;
// --- what happened to each call, against what the model saw.
const stopMark = Math.min(runAbort?.seq ?? Infinity, stopSeq);
for (const [i, c] of sc.calls.entries()) {
  const log = logs[i]!;
  const verdict = verdictOf(i, c);
  const before = sc.before === undefined ? undefined : cycled(sc.before, i);
  const afterSpec = sc.after === undefined ? undefined : cycled(sc.after, i);
  // P1/A2: no hook or body starts after the run stopped.
  if (log.bodyStart !== undefined) {
    check(log.bodyStart.seq < stopMark, () => `A2: the body of call ${i} started after the run was aborted or the consumer left`);
    check(!log.bodyStart.abortedAtStart, () => `A2: call ${i} started with its signal already aborted`);
    check(verdict.ok, () => `P5: call ${i} ran although its arguments/tool were invalid`);
    if (uniqueIds && sc.progressListener) check(log.bodyStart.inProgress === true, () => `onInProgressChange: call ${i} not in progress when its body started`);
  }
  for (const b of log.beforeCalls) {
    check(b.seq < stopMark, () => `beforeToolCall for call ${i} after the run stopped`);
    check(b.sameCall && b.index === i, () => `C24: beforeToolCall for call ${i} got another call or index`);
    check(verdict.ok && JSON.stringify(b.args) === JSON.stringify(verdict.args), () => `beforeToolCall for call ${i} got args ${JSON.stringify(b.args)}`);
  }
  check(log.beforeCalls.length <= 1, () => `beforeToolCall called ${log.beforeCalls.length} times for call ${i}`);
  check(log.afterCalls.length <= 1, () => `afterToolCall called ${log.afterCalls.length} times for call ${i}`);
  for (const a of log.afterCalls) {
    check(log.bodyStart !== undefined, () => `afterToolCall for call ${i} whose body never ran`);
    // Allowed after the stop only for a tool that had already settled: toolrun notes when
    // the tool ended, not when its record is processed.
    // (A call its own timeout had given up on — timed out, grace over — before the stop
    // counts as ended too; at the same virtual time either order is possible.)
    const limit = timeoutOf(sc, c);
    const stopAt = Math.min(runAbort?.at ?? Infinity, stopped?.at ?? Infinity);
    const gaveUp = limit !== undefined && log.bodyStart !== undefined && log.bodyStart.at + limit + grace <= stopAt;
    check(a.seq < stopMark || gaveUp || (log.bodySettled !== undefined && log.bodySettled.seq < stopMark), () => `afterToolCall for call ${i} after the run stopped (stop mark ${stopMark}, hook at ${a.seq}, outcome ${endByIndex.get(i)?.outcome}, log ${JSON.stringify({ ...log, signal: undefined })}, call ${JSON.stringify(c)})`);
  }
  if (!verdict.ok) check(log.beforeCalls.length === 0, () => `C13: beforeToolCall ran for call ${i} with invalid input`);

  // A1: who aborted the call's signal.
  if (log.signalAborted !== undefined && log.bodyStart !== undefined) {
    const s = log.signalAborted;
    const limit = timeoutOf(sc, c);
    const byRun = runAbort !== undefined && s.reason === signalReason && s.seq > runAbort.seq && s.at === runAbort.at;
    const byTimeout = limit !== undefined && s.reason instanceof DOMException && s.reason.name === 'TimeoutError' && s.at === log.bodyStart.at + limit;
    const byConsumer = stopped !== undefined && s.seq > stopped.seq && s.reason instanceof DOMException && s.reason.name === 'AbortError';
    check(byRun || byTimeout || byConsumer, () => `A1: call ${i}'s signal aborted at ${s.at} with ${String(s.reason)} — not by the run, its timeout or the consumer`);
  }

  const end = endByIndex.get(i);
  if (!consumerStopped && i >= released) {
    // A stream cut by the abort: this call never reached the run.
    check(end === undefined && log.bodyStart === undefined && log.beforeCalls.length === 0, () => `call ${i} got no result but has an end, a hook call or a body`);
    continue;
  }
  if (end === undefined) {
    check(consumerStopped, () => `O1: no end for call ${i}`);
    continue;
  }
  coverage?.add(`outcome:${end.outcome}`);
  const msg = results.find((r) => r.index === i)?.message;
  const text = end.result.content.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join('');
  if (msg !== undefined) {
    check(msg.content === end.result.content && msg.isError === end.isError, () => `result message of call ${i} differs from its end event`);
  }
  check(end.isError === (end.outcome !== 'ok'), () => `call ${i}: isError ${end.isError} with outcome ${end.outcome}`);
  check(end.mark.seq > (log.bodySettled?.seq ?? 0) || end.outcome !== 'ok', () => `call ${i} ended ok before its tool returned`);
  const stoppedBeforeEnd = runAbort !== undefined && runAbort.seq < end.mark.seq;
  const why = (): string => `call ${i} (${JSON.stringify(c)}) ended ${end.outcome}: ${JSON.stringify(text).slice(0, 300)}; log ${JSON.stringify({ ...log, signal: undefined })}`;

  if (end.outcome === 'not_run') {
    check(log.bodyStart === undefined, () => `A2: call ${i} is not_run but its body ran — ${why()}`);
    check(stoppedBeforeEnd, () => `call ${i} not_run without an abort — ${why()}`);
    check(fits(text, sc.maxResultChars, (t) => t.startsWith('Not run:')), () => `A2: not-run text: ${why()}`);
    continue;
  }
  if (!verdict.ok) {
    check(end.outcome === 'rejected' && fits(text, sc.maxResultChars, (t) => verdict.pattern.test(t)), () => `P5: ${why()} — expected ${String(verdict.pattern)}`);
    continue;
  }
  // The before hook decided.
  if (before !== undefined && (before.kind === 'block' || before.kind === 'throwSync' || before.kind === 'throwLater' || before.kind === 'abortRun' || before.kind === 'poisonAnswer')) {
    check(log.bodyStart === undefined, () => `beforeToolCall ${before.kind} but the body ran — ${why()}`);
    check(before.kind !== 'abortRun', () => `abortRun hook: call must be not_run — ${why()}`);
    check(end.outcome === 'rejected', () => `beforeToolCall ${before.kind}: ${why()}`);
    if (before.kind === 'block') check(fits(text, sc.maxResultChars, (t) => (before.reason ? t === `blocked-${i}` : /blocked/.test(t))), why);
    else if (before.kind === 'poisonAnswer') check(fits(text, sc.maxResultChars, (t) => t.startsWith(`Tool call "t${i}" was not run: beforeToolCall failed: reading its answer threw (block-getter-${i})`)), why);
    else check(fits(text, sc.maxResultChars, (t) => t.startsWith(`Tool call "t${i}" was not run: beforeToolCall failed: `) && t.includes(before.kind === 'throwSync' && before.value === 'string' ? `bstr-${i}` : `bboom-${i}`)), why);
    continue;
  }
  check(log.bodyStart !== undefined, () => `call ${i} passed prepare but ended ${end.outcome} without running — ${why()}`);
  checkExecuted(i, c, log, end.outcome, text, afterSpec, why, stoppedBeforeEnd);

  // O5: every progress value, in order, nothing dropped (all of them when the tool returned).
  const yielded = log.yields.map((y) => y.value);
  check(JSON.stringify(updates[i]) === JSON.stringify(yielded.slice(0, updates[i]!.length)), () => `O5: updates ${JSON.stringify(updates[i])} are not a prefix of the yields ${JSON.stringify(yielded)}`);
  if (log.bodySettled?.kind === 'return' && end.outcome !== 'abandoned' && end.outcome !== 'timed_out') {
    check(updates[i]!.length === yielded.length, () => `O5: ${updates[i]!.length} of ${yielded.length} progress values delivered for call ${i}`);
  }
  // Live delivery (O3, O5): with a consumer that never waits on a timer, an update
  // arrives at the virtual time it was yielded, and an end at the time the tool settled.
  const fast = sc.consumer.delays.every((d) => d <= 0);
  if (fast) {
    updateMarks[i]!.forEach((m, k) => check(m.at === log.yields[k]!.at, () => `O5: update ${k} of call ${i} yielded at ${log.yields[k]!.at} arrived at ${m.at}`));
    const syncAfter = afterSpec === undefined || (afterSpec.kind !== 'passLater' && afterSpec.kind !== 'throwLater');
    const limit = timeoutOf(sc, c);
    const inTime = log.bodySettled !== undefined && (limit === undefined || log.bodySettled.at < log.bodyStart!.at + limit);
    if (inTime && (end.outcome === 'ok' || end.outcome === 'error') && syncAfter && runAbort === undefined) {
      check(end.mark.at === log.bodySettled!.at, () => `O3: call ${i} settled at ${log.bodySettled!.at}, its end arrived at ${end.mark.at}`);
    }
  }
}


  function checkExecuted(
    i: number,
    c: CallSpec,
    log: CallLog,
    outcome: string,
    text: string,
    afterSpec: AfterHook | undefined,
    why: () => string,
    stoppedBeforeEnd: boolean,
  ): void {
    const start = log.bodyStart!;
    const limit = timeoutOf(sc, c);
    // When (and why) the call's signal aborted while its body ran: its timeout, or the run.
    const timeoutAt = limit === undefined ? Infinity : start.at + limit;
    const runAt = runAbort === undefined || runAbort.seq < start.seq ? Infinity : runAbort.at;
    const settled = log.bodySettled;
    const abortAt = Math.min(timeoutAt, runAt);
    // Did the tool settle before / after its signal aborted? At the same virtual time both
    // orders are possible: toolrun sees a tool end when its promise or next() settles, a
    // few microtasks after the body's own last statement, and an abort from the consumer
    // or a hook can land in between. The order is known only when the tool watched its
    // signal and saw the abort first.
    const order = (cause: 'timeout' | 'run'): 'before' | 'after' | 'either' => {
      const t = cause === 'run' ? runAt : timeoutAt;
      if (settled === undefined) return 'after';
      if (settled.at !== t) return settled.at < t ? 'before' : 'after';
      const abortSeq = log.signalAborted?.seq;
      return abortSeq !== undefined && abortSeq < settled.seq ? 'after' : 'either';
    };
    const firstCauses = (['timeout', 'run'] as const).filter((cause) => (cause === 'run' ? runAt : timeoutAt) === abortAt && abortAt !== Infinity);
    // Causes that may have aborted the signal while the tool was still running.
    const causes = firstCauses.filter((cause) => order(cause) !== 'before');
    const undisturbed = firstCauses.every((cause) => order(cause) !== 'after');
    const withinGrace = settled !== undefined && settled.at - abortAt <= grace;
    const pastGrace = settled === undefined || settled.at - abortAt >= grace;
    // The base outcomes execute may produce, with a test for the text.
    const bases: { outcome: string; text: (t: string) => boolean }[] = [];
    const ownResult = (t: string): boolean => {
      if (c.ending.kind === 'hangHonourReturn') return boundedEquals(t, `returned-after-abort-${i}`, sc.maxResultChars ?? 100_000);
      if (c.ending.kind !== 'return') return false;
      if (isPoisonReturn(c.ending)) return t.startsWith(expectedReturnText(i, c.ending.value));
      return boundedEquals(t, expectedReturnText(i, c.ending.value), sc.maxResultChars ?? 100_000);
    };
    const ownError = (t: string): boolean => c.ending.kind === 'throw' && t.includes(thrownMarker(i, c.ending.value));
    if (undisturbed) {
      check(settled !== undefined, () => `call ${i} ended ${outcome} though its tool never settled and nothing aborted it — ${why()}`);
      if (settled.kind === 'return') bases.push({ outcome: isPoisonReturn(c.ending) ? 'error' : 'ok', text: ownResult });
      else bases.push({ outcome: 'error', text: ownError });
    }
    if (causes.length > 0) {
      // Documented decision: a tool that returns normally after its signal aborted (within
      // the grace period) is still interrupted / timed out, its own result after a notice.
      if (settled?.kind === 'return' && withinGrace && causes.includes('timeout')) {
        bases.push({ outcome: 'timed_out', text: (t) => t.startsWith(`Tool "t${i}" timed out after ${limit} ms; what it returned when stopped follows.`) && ownResult(t.slice(t.indexOf('follows.') + 8)) });
      }
      if (settled?.kind === 'return' && withinGrace && causes.includes('run')) {
        bases.push({ outcome: 'interrupted', text: (t) => t.startsWith('Interrupted:') && t.includes('what it returned when stopped follows.') && ownResult(t.slice(t.indexOf('follows.') + 8)) });
      }
      if (causes.includes('timeout')) {
        const names = (t: string): boolean => t.includes(`"t${i}"`) && t.includes(`timed out after ${limit} ms`);
        if (settled?.kind === 'throw' && withinGrace) bases.push({ outcome: 'timed_out', text: (t) => names(t) && t.includes('was stopped') });
        if (pastGrace) bases.push({ outcome: 'timed_out', text: (t) => names(t) && t.includes('did not stop when asked') });
      }
      if (causes.includes('run')) {
        if (settled?.kind === 'throw' && withinGrace) bases.push({ outcome: 'interrupted', text: (t) => t.startsWith('Interrupted:') && !t.includes('did not confirm') });
        if (pastGrace) bases.push({ outcome: 'abandoned', text: (t) => t.includes('did not confirm cancellation') && t.includes('outcome is unknown') });
      }
    }
    // afterToolCall: not called once the run stopped; its answer is dropped if the run stopped while it waited.
    const afterCalled = log.afterCalls.length > 0;
    if (afterSpec !== undefined && !stoppedBeforeEnd && !consumerStopped) check(afterCalled, () => `P3: afterToolCall not called for executed call ${i} — ${why()}`);
    const candidates: { outcome: string; text: (t: string) => boolean }[] = [];
    for (const base of bases) {
      const applied = afterCalled && afterSpec !== undefined ? applyAfter(i, base, afterSpec) : base;
      candidates.push(applied);
      if (afterCalled && stoppedBeforeEnd) candidates.push(base);
    }
    check(
      candidates.some((cand) => cand.outcome === outcome && fits(text, sc.maxResultChars, cand.text)),
      () => `outcome: ${why()} — allowed ${JSON.stringify(candidates.map((x) => x.outcome))} (abort at ${abortAt}, causes ${causes.join('+')}, grace ${grace})`,
    );
    if (outcome === 'abandoned' && c.shape === 'generator' && settled === undefined) {
      check(log.returnCalled !== undefined || log.finallyRan !== undefined, () => `A3: abandoned generator of call ${i} got no return()`);
    }
  }
}

function applyAfter(i: number, base: { outcome: string; text: (t: string) => boolean }, spec: AfterHook): { outcome: string; text: (t: string) => boolean } {
  switch (spec.kind) {
    case 'pass':
    case 'passLater':
      return base;
    case 'override':
      return { outcome: base.outcome, text: (t) => t === `after-${i}` };
    case 'markError':
      return { outcome: base.outcome === 'ok' ? 'error' : base.outcome, text: base.text };
    case 'throwSync':
    case 'throwLater':
      return { outcome: 'error', text: (t) => t === `Tool "t${i}" ran, but afterToolCall failed: aboom-${i}` };
    case 'poisonAnswer':
      return { outcome: 'error', text: (t) => t === `Tool "t${i}" ran, but afterToolCall failed: reading its answer threw (content-getter-${i})` };
  }
}
