import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { defineTool, runTools, type ToolCall } from '../../lib/index.ts';
import { collect, expectRunInvariants, gate, settle, type Gate } from '../helpers.ts';

/** Tools that log when they run and wait on a gate per call id; counts concurrency. */
function harness() {
  const gates = new Map<string, Gate>();
  const log: string[] = [];
  let active = 0;
  let peak = 0;
  const body = async (id: string) => {
    log.push(`start ${id}`);
    peak = Math.max(peak, ++active);
    try {
      if (!gates.has(id)) gates.set(id, gate());
      await gates.get(id)!.promise;
      return id;
    } finally {
      active--;
      log.push(`end ${id}`);
    }
  };
  const open = (id: string) => {
    if (!gates.has(id)) gates.set(id, gate());
    gates.get(id)!.open();
  };
  const parallel = defineTool({ name: 'p', input: v.object({}), execute: (_i, { toolCallId }) => body(toolCallId) });
  const exclusive = defineTool({ name: 'x', input: v.object({}), executionMode: 'sequential', execute: (_i, { toolCallId }) => body(toolCallId) });
  return {
    log,
    open,
    tools: [parallel, exclusive],
    get active() {
      return active;
    },
    get peak() {
      return peak;
    },
  };
}

const callsOf = (spec: string): ToolCall[] => [...spec].map((name, i) => ({ id: `${name}${i}`, name, arguments: {} }));

describe('S1 parallel mode runs calls concurrently, at most maxConcurrency at once', () => {
  it('starts the next waiting call when one finishes', async () => {
    const h = harness();
    const input = callsOf('ppppp');
    const running = collect(runTools(input, { tools: h.tools, maxConcurrency: 2 }));
    await settle();
    expect(h.log).toEqual(['start p0', 'start p1']);
    h.open('p1');
    await settle();
    expect(h.log).toEqual(['start p0', 'start p1', 'end p1', 'start p2']);
    for (const c of input) h.open(c.id);
    const { events, batch } = await running;
    expectRunInvariants(input, events, batch);
    expect(h.peak).toBe(2);
  });

  it('runs every call at once with maxConcurrency Infinity', async () => {
    const h = harness();
    const input = callsOf('p'.repeat(50));
    const running = collect(runTools(input, { tools: h.tools, maxConcurrency: Infinity }));
    await settle();
    expect(h.active).toBe(50);
    for (const c of input) h.open(c.id);
    await running;
  });

  it('defaults to 10 at once', async () => {
    const h = harness();
    const input = callsOf('p'.repeat(25));
    const running = collect(runTools(input, { tools: h.tools }));
    await settle();
    expect(h.active).toBe(10);
    for (const c of input) h.open(c.id);
    await running;
    expect(h.peak).toBe(10);
  });
});

describe('S2 sequential mode finishes each call, through its tool_result, before preparing the next', () => {
  it('prepares call i+1 only after the consumer received result i', async () => {
    const h = harness();
    const input = callsOf('ppp');
    const trace: string[] = [];
    const run = runTools(input, {
      tools: h.tools,
      mode: 'sequential',
      beforeToolCall: ({ index }) => {
        trace.push(`prepare ${index}`);
      },
    });
    const consuming = (async () => {
      for await (const e of run) if (e.type === 'tool_result') trace.push(`result ${e.index}`);
    })();
    for (const c of input) {
      await settle();
      h.open(c.id);
    }
    await consuming;
    expect(trace).toEqual(['prepare 0', 'result 0', 'prepare 1', 'result 1', 'prepare 2', 'result 2']);
    expect(h.peak).toBe(1);
  });
});

describe('S3 an exclusive tool waits for every earlier call and holds back every later one', () => {
  it('runs calls around it in parallel with each other, but never with it', async () => {
    const h = harness();
    const input = callsOf('ppxpp');
    const running = collect(runTools(input, { tools: h.tools }));
    await settle();
    expect(h.log).toEqual(['start p0', 'start p1']); // x2 waits for p0 and p1
    h.open('p1');
    await settle();
    expect(h.log).not.toContain('start x2');
    h.open('p0');
    await settle();
    expect(h.log.slice(-1)).toEqual(['start x2']); // alone: p3 and p4 wait for it
    h.open('x2');
    await settle();
    expect(h.log.slice(-3)).toEqual(['end x2', 'start p3', 'start p4']);
    h.open('p3');
    h.open('p4');
    const { events, batch } = await running;
    expectRunInvariants(input, events, batch);
  });

  it('is finer than serializing the whole batch: parallel calls before it overlap', async () => {
    const h = harness();
    const input = callsOf('pppx');
    const running = collect(runTools(input, { tools: h.tools }));
    await settle();
    expect(h.active).toBe(3);
    for (const c of input) h.open(c.id);
    await running;
    expect(h.peak).toBe(3);
  });
});
