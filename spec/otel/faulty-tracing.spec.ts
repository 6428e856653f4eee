/**
 * Contract T1: tracing never changes what a run yields or returns. A tracing
 * implementation that throws anywhere, never calls the step it is handed, calls it twice,
 * or swallows its throw, leaves the events and the batch exactly as an untraced run's, and
 * is reported once per batch with a ToolrunWarning.
 */
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { defineTool, runTools, type ToolCall, type ToolEvent } from '../../lib/index.ts';
import type { CallTrace, RunTracing } from '../../lib/core/seams/tracing.ts';
import { collect, settle } from '../helpers.ts';

const steps = defineTool({
  name: 'steps',
  input: v.object({ n: v.number() }),
  async *execute({ n }) {
    for (let i = 0; i < n; i++) {
      await Promise.resolve();
      yield i;
    }
    return `did ${n}`;
  },
});
const boom = defineTool({
  name: 'boom',
  input: v.object({}),
  async *execute() {
    yield 'about to fail';
    throw new Error('tool failure');
  },
});
const calls: ToolCall[] = [
  { id: 'a', name: 'steps', arguments: { n: 3 } },
  { id: 'b', name: 'boom', arguments: {} },
  { id: 'c', name: 'steps', arguments: { n: 'bad' } },
  { id: 'd', name: 'steps', arguments: { n: 1 } },
];

type Fault = 'startBatch' | 'startCall' | 'run-before' | 'run-after' | 'run-skips' | 'run-twice' | 'run-swallows' | 'progress' | 'end' | 'batch-end' | 'headers';

function faulty(fault: Fault): RunTracing {
  const fail = (): never => {
    throw new Error(`tracing fault: ${fault}`);
  };
  const call: CallTrace = {
    run(fn, arg) {
      if (fault === 'run-before') fail();
      if (fault === 'run-skips') return undefined as never;
      if (fault === 'run-swallows') {
        try {
          return fn(arg);
        } catch {
          return undefined as never;
        }
      }
      const value = fn(arg);
      if (fault === 'run-twice') fn(arg);
      if (fault === 'run-after') fail();
      return value;
    },
    progress: () => (fault === 'progress' ? fail() : undefined),
    end: () => (fault === 'end' ? fail() : undefined),
    headers: () => (fault === 'headers' ? fail() : { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }),
  };
  return {
    startBatch: () => {
      if (fault === 'startBatch') fail();
      return { startCall: () => (fault === 'startCall' ? fail() : call), end: () => (fault === 'batch-end' ? fail() : undefined) };
    },
  };
}

/** Events without their identity-bearing parts: what a consumer compares. */
function shape(events: ToolEvent[]): unknown {
  // The end events' clock times (O7) differ between two runs: everything else must not.
  return JSON.parse(JSON.stringify(events, (key, value: unknown) => (key === 'startedAt' || key === 'endedAt' ? undefined : value)));
}

async function warningsDuring<T>(body: () => Promise<T>): Promise<{ value: T; warnings: Error[] }> {
  const warnings: Error[] = [];
  const onWarning = (w: Error): void => {
    warnings.push(w);
  };
  process.on('warning', onWarning);
  try {
    const value = await body();
    await settle();
    return { value, warnings };
  } finally {
    process.off('warning', onWarning);
  }
}

describe('T1 a faulty tracing implementation never changes a run', () => {
  const faults: Fault[] = ['startBatch', 'startCall', 'run-before', 'run-after', 'run-skips', 'run-twice', 'run-swallows', 'progress', 'end', 'batch-end', 'headers'];
  it.each(faults)('fault %s: the same events and batch as an untraced run, one ToolrunWarning at most', async (fault) => {
    const plain = await collect(runTools(calls, { tools: [steps, boom] }));
    const { value: traced, warnings } = await warningsDuring(() => collect(runTools(calls, { tools: [steps, boom], tracing: faulty(fault) })));
    expect(shape(traced.events)).toEqual(shape(plain.events));
    expect(traced.batch).toEqual(plain.batch);
    const ours = warnings.filter((w) => w.name === 'ToolrunWarning');
    // A fault in headers() shows only if a tool reads traceContext; none does here.
    const silent = fault === 'headers' || fault === 'run-twice' || fault === 'run-swallows';
    expect(ours).toHaveLength(silent ? 0 : 1);
    if (!silent) expect(ours[0]!.message).toContain(fault === 'run-skips' ? 'without calling the step' : `tracing fault: ${fault}`);
  });

  it('a headers() that throws gives the tool no traceContext, with one warning', async () => {
    let seen: unknown = 'unread';
    const peek = defineTool({
      name: 'peek',
      input: v.object({}),
      execute: (_args, context) => {
        seen = context.traceContext;
        return 'ok';
      },
    });
    const { value, warnings } = await warningsDuring(() => collect(runTools([{ id: 'p', name: 'peek', arguments: {} }], { tools: [peek], tracing: faulty('headers') })));
    expect(value.batch.messages[0]!.isError).toBe(false);
    expect(seen).toBeUndefined();
    expect(warnings.filter((w) => w.name === 'ToolrunWarning')).toHaveLength(1);
  });

  it('a paused batch whose BatchTrace.headers throws or answers garbage: the same requests, a state with no trace context (T4)', async () => {
    const asks = defineTool({ name: 'asks', input: v.object({}), needsApproval: true, execute: () => 'done' });
    const pauseWith = (headers: () => unknown) => {
      const call: CallTrace = { run: (fn, arg) => fn(arg), progress: () => {}, end: () => {}, headers: () => undefined };
      const tracing: RunTracing = { startBatch: () => ({ startCall: () => call, end: () => {}, headers: headers as () => undefined }) };
      return warningsDuring(() => collect(runTools([{ id: 'q', name: 'asks', arguments: {} }], { tools: [asks], tracing })));
    };
    const plain = await collect(runTools([{ id: 'q', name: 'asks', arguments: {} }], { tools: [asks] }));
    const cases: [() => unknown, number][] = [
      [
        () => {
          throw new Error('tracing fault: batch headers');
        },
        1,
      ],
      [() => ({ traceparent: 'not one', tracestate: 7 }), 0],
      [() => 'a string', 0],
    ];
    for (const [headers, warned] of cases) {
      const { value, warnings } = await pauseWith(headers);
      expect(value.events.map((e) => e.type)).toEqual(plain.events.map((e) => e.type));
      expect(value.batch.paused!.requests.map((r) => r.toolCallId)).toEqual(['q']);
      // Fails if a bad context reached the state (a resume would then refuse it as malformed).
      expect(JSON.parse(value.batch.paused!.state.payload)).not.toHaveProperty('traceContext');
      expect(warnings.filter((w) => w.name === 'ToolrunWarning')).toHaveLength(warned);
    }
  });

  it('a tool called once per step even when run() calls its function twice', async () => {
    let executions = 0;
    const counted = defineTool({
      name: 'counted',
      input: v.object({}),
      execute: () => ++executions,
    });
    const { batch } = await collect(runTools([{ id: 'x', name: 'counted', arguments: {} }], { tools: [counted], tracing: faulty('run-twice') }));
    expect(executions).toBe(1);
    expect(batch.messages[0]!.content).toEqual([{ type: 'text', text: '1' }]);
  });
});
