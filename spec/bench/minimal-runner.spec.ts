/**
 * The minimal runner (bench/minimal-runner.ts), the overhead scenario's reference row: it
 * must do the work it stands for — the same three events per call in toolrun's order, the
 * arguments validated, results released in call order — or its row would flatter toolrun's
 * `× minimal`. Checked next to `runTools` on the same calls; ordering by gates, no clock.
 */
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { minimalRun, type MinimalEvent } from '../../bench/minimal-runner.ts';
import { detailsBody, makeCalls, minimalTool, runMinimal, runToolrun, toolrunTool, type Body } from '../../bench/workload.ts';
import type { ToolEvent } from '../../lib/index.ts';

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** `type index` per event, e.g. `start 0`, `end 2`, `result 1`. */
function trace(events: readonly (MinimalEvent | ToolEvent)[]): string[] {
  return events.map((e) => `${e.type.replace('tool_execution_', '').replace('tool_', '')} ${'index' in e ? e.index : '?'}`);
}

describe('the minimal runner does what its row stands for', () => {
  it('emits the same events as runTools, in the same order, for the headline workload', async () => {
    // Fails if the minimal runner drops an event, or emits ends or results in another order than toolrun.
    const calls = makeCalls(5);
    const ours: MinimalEvent[] = [];
    const theirs: ToolEvent[] = [];
    await runMinimal(calls, minimalTool(detailsBody), (e) => ours.push(e));
    await runToolrun(calls, { tools: [toolrunTool(detailsBody)], maxConcurrency: Infinity }, (e) => theirs.push(e));
    expect(trace(ours)).toEqual(trace(theirs));
    const result = ours.find((e) => e.type === 'tool_result' && e.index === 3);
    expect(result).toMatchObject({ message: { role: 'tool', toolCallId: 'call_3', toolName: 'work', content: [{ type: 'text', text: 'ok' }], details: { i: 3 }, isError: false } });
    const end = ours.find((e) => e.type === 'tool_execution_end' && e.index === 3);
    expect(end).toMatchObject({ outcome: 'ok', result: { content: [{ type: 'text', text: 'ok' }], details: { i: 3 } } });
  });

  it('runs the calls in parallel, ends them in completion order and releases results in call order', async () => {
    // Fails if results are released as calls end (out of call order), or if a call waits for an earlier one to start.
    const gates = [gate(), gate(), gate()];
    const started: number[] = [];
    const body: Body = async function* (args) {
      started.push(args.i);
      await gates[args.i]!.promise;
      return `done ${args.i}`;
    };
    const events: MinimalEvent[] = [];
    const run = (async () => {
      for await (const e of minimalRun(makeCalls(3), minimalTool(body))) {
        events.push(e);
        // Every call has started before any gate opens: open them last to first.
        if (e.type === 'tool_execution_start' && e.index === 2) gates[2]!.open();
        if (e.type === 'tool_execution_end' && e.index === 2) gates[1]!.open();
        if (e.type === 'tool_execution_end' && e.index === 1) gates[0]!.open();
      }
    })();
    await run;
    expect(started).toEqual([0, 1, 2]);
    expect(trace(events)).toEqual(['start 0', 'start 1', 'start 2', 'end 2', 'end 1', 'end 0', 'result 0', 'result 1', 'result 2']);
  });

  it('validates the arguments with the schema: an invalid call ends rejected without running, and others are unaffected', async () => {
    // Fails if validation is skipped (the body would run with a string `i`).
    const ran: unknown[] = [];
    const body: Body = async function* (args) {
      ran.push(args.i);
      return 'ok';
    };
    const calls = [
      { id: 'a', name: 'work', arguments: { i: 1 } },
      { id: 'b', name: 'work', arguments: { i: 'two' } },
    ];
    const events: MinimalEvent[] = [];
    for await (const e of minimalRun(calls, { name: 'work', schema: v.object({ i: v.number() }), body })) events.push(e);
    expect(ran).toEqual([1]);
    const end = events.find((e) => e.type === 'tool_execution_end' && e.toolCallId === 'b');
    expect(end).toMatchObject({ isError: true, outcome: 'rejected' });
    expect(trace(events).filter((t) => t.startsWith('result'))).toEqual(['result 0', 'result 1']);
  });

  it('turns a yielded value into tool_execution_update and a throw into an error result', async () => {
    // Fails if progress is dropped (the runner would do less than toolrun for a yielding tool) or a throw escapes the run.
    const body: Body = async function* (args) {
      yield 'half';
      if (args.i === 1) throw new Error('broken');
      return 'ok';
    };
    const events: MinimalEvent[] = [];
    for await (const e of minimalRun(makeCalls(2), minimalTool(body))) events.push(e);
    expect(events.filter((e) => e.type === 'tool_execution_update').map((e) => (e as { progress: unknown }).progress)).toEqual(['half', 'half']);
    const end = events.find((e) => e.type === 'tool_execution_end' && e.index === 1);
    expect(end).toMatchObject({ isError: true, outcome: 'error', result: { content: [{ type: 'text', text: 'broken' }] } });
  });
});
