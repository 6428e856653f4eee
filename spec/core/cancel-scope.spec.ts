/**
 * `CancelScope` (lib/core/streams/abort.ts), the one cancellation scope of the core, and the call
 * record's forward-only states (lib/core/run/call.ts). The run and every call are scopes; the
 * runTools specs exercise them through the public API, these pin the rules down directly.
 */
import { getEventListeners } from 'node:events';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CancelScope, ScopeState, type AbortCause } from '../../lib/core/streams/abort.ts';
import { CallRecord, CallState } from '../../lib/core/run/call.ts';

class Recorded extends CancelScope {
  readonly log: string[];
  constructor(
    readonly name: string,
    log: string[],
    graceMs = Infinity,
  ) {
    super(graceMs);
    this.log = log;
  }
  protected override onAbort(cause: AbortCause): void {
    this.log.push(`${this.name} aborted (${cause})`);
  }
  protected override onAbandon(): void {
    this.log.push(`${this.name} abandoned`);
  }
}

describe('CancelScope: states only move forward (A1–A5)', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('the first abort wins: a second abort, or one after close, changes nothing', () => {
    const log: string[] = [];
    const scope = new Recorded('s', log, 50);
    scope.abort('timeout', 'first');
    scope.abort('run', 'second');
    expect(scope.cause).toBe('timeout');
    expect(scope.reason).toBe('first');
    expect(scope.scopeState).toBe(ScopeState.Aborted);
    scope.close();
    scope.abort('run', 'third');
    expect(scope.scopeState).toBe(ScopeState.Closed);
    expect(log).toEqual(['s aborted (timeout)']);
  });

  it('aborts its children in the order they entered, and only those still open (case C6)', () => {
    const log: string[] = [];
    const run = new Recorded('run', log);
    const children = ['a', 'b', 'c', 'd'].map((name) => new Recorded(name, log, 10));
    for (const child of children) child.enter(run);
    children[1]!.close(); // b ended before the abort
    run.abort('run', 'stop');
    // The children first, then the scope's own onAbort (the run wakes its loop once every call knows).
    expect(log).toEqual(['a aborted (run)', 'c aborted (run)', 'd aborted (run)', 'run aborted (run)']);
  });

  it('a child entering an aborted parent aborts at once, with the parent’s cause and reason', () => {
    const run = new CancelScope();
    run.abort('run', 'why');
    const child = new CancelScope(10);
    child.enter(run);
    expect(child.cause).toBe('run');
    expect(child.signal.reason).toBe('why');
  });

  it('a signal first read after the abort is already aborted, with the same reason; read twice, it is the same signal', () => {
    const scope = new CancelScope();
    scope.abort('run', 'early');
    const signal = scope.signal;
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe('early');
    expect(scope.signal).toBe(signal);
  });

  it('after an abort by run or timeout, abandons when the grace period ends (A3); close() first prevents it', async () => {
    const log: string[] = [];
    const slow = new Recorded('slow', log, 100);
    const quick = new Recorded('quick', log, 100);
    slow.abort('run', 'x');
    quick.abort('run', 'x');
    await vi.advanceTimersByTimeAsync(50);
    quick.close();
    await vi.advanceTimersByTimeAsync(50);
    expect(log).toEqual(['slow aborted (run)', 'quick aborted (run)', 'slow abandoned']);
    expect(slow.scopeState).toBe(ScopeState.Abandoned);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a consumer exit has no grace and cuts an ongoing grace period short (A5)', async () => {
    const log: string[] = [];
    const run = new Recorded('run', log);
    const call = new Recorded('call', log, 100);
    call.enter(run);
    run.abort('run', 'x');
    expect(vi.getTimerCount()).toBe(1); // the call's grace period
    run.abort('consumer', 'left');
    expect(call.scopeState).toBe(ScopeState.Closed);
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(200);
    expect(log).toEqual(['call aborted (run)', 'run aborted (run)']);
  });

  it('limit(): aborts with the given reason after the time limit, unless closed first (A4)', async () => {
    const timed = new CancelScope(10);
    timed.limit(30, () => new DOMException('too slow', 'TimeoutError'));
    const closed = new CancelScope(10);
    closed.limit(30, () => 'never');
    closed.close();
    await vi.advanceTimersByTimeAsync(30);
    expect(timed.cause).toBe('timeout');
    expect((timed.signal.reason as DOMException).name).toBe('TimeoutError');
    expect(closed.cause).toBeUndefined();
    timed.close();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('listen(): one listener on a foreign signal, removed by close() (A6)', () => {
    const controller = new AbortController();
    const scope = new CancelScope();
    scope.listen(controller.signal);
    scope.listen(controller.signal);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    scope.close();
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    const listening = new CancelScope();
    listening.listen(controller.signal);
    controller.abort('caller');
    expect(listening.cause).toBe('run');
    expect(listening.reason).toBe('caller');
  });
});

describe('CallRecord: one checked transition, forward only (O4)', () => {
  it('advance() moves forward and refuses to stay or go back', () => {
    const record = new CallRecord(0, { id: 'a', name: 't' }, 0, { options: {}, stopped: false, abandoned() {} });
    expect(record.state).toBe(CallState.Queued);
    expect(record.advance(CallState.Preparing)).toBe(true);
    expect(record.advance(CallState.Running)).toBe(true); // Waiting may be skipped
    expect(record.advance(CallState.Running)).toBe(false);
    expect(record.advance(CallState.Preparing)).toBe(false);
    expect(record.state).toBe(CallState.Running);
    expect(record.advance(CallState.Ended)).toBe(true);
    expect(record.advance(CallState.Finalizing)).toBe(false); // a late hook answer is dropped
    expect(record.advance(CallState.Released)).toBe(true);
    expect(record.state).toBe(CallState.Released);
  });

  it('state has no setter: advance() is its only writer', () => {
    const record = new CallRecord(0, { id: 'a', name: 't' }, 0, { options: {}, stopped: false, abandoned() {} });
    // Fails if `state` becomes a plain field again: tsc rejects the assignment (the
    // directive below is then unused) and at run time the write succeeds instead of throwing.
    // @ts-expect-error -- `state` is read only
    expect(() => (record.state = CallState.Running)).toThrow(TypeError);
    expect(record.state).toBe(CallState.Queued);
  });
});
