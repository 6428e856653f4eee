/**
 * Scenario 1, `overhead`: one batch of N no-op calls, parallel and sequential. What a
 * runtime costs per call when the tools themselves cost nothing.
 *
 * @module
 */
import { compare, formatInt, formatNum, formatRatio, type Budget, type Case, type Timing } from '../harness.ts';
import { loadPeers } from '../peers.ts';
import { findRow, IMPL, type Row, type ScenarioOptions, type ScenarioResult, type Target } from '../rows.ts';
import { makeCalls, makePiBatch, noopBody, runFloorParallel, runFloorSequential, runPi, runToolrun, toolrunTool } from '../workload.ts';

export const OVERHEAD_SIZES = [10, 100, 1_000, 10_000] as const;

/** Runs `overhead` at `sizes` (default 10 … 10,000), both modes. */
export async function overhead(budget: Budget, options: ScenarioOptions = {}): Promise<ScenarioResult> {
  const sizes = options.sizes ?? OVERHEAD_SIZES;
  const peers = await loadPeers();
  const tool = toolrunTool(noopBody);
  const rows: Row[] = [];
  for (const mode of ['parallel', 'sequential'] as const) {
    for (const n of sizes) {
      options.log?.(`overhead ${mode} N=${formatInt(n)}`);
      const calls = makeCalls(n);
      const cases: Case[] = [];
      if (mode === 'parallel') {
        cases.push({ name: IMPL.floor, run: () => runFloorParallel(calls, noopBody) });
        cases.push({ name: IMPL.toolrun, run: () => runToolrun(calls, { tools: [tool], maxConcurrency: Infinity }) });
        cases.push({ name: IMPL.toolrunDefault, run: () => runToolrun(calls, { tools: [tool] }) });
      } else {
        cases.push({ name: IMPL.floorSeq, run: () => runFloorSequential(calls, noopBody) });
        cases.push({ name: IMPL.toolrun, run: () => runToolrun(calls, { tools: [tool], mode: 'sequential' }) });
      }
      if (peers !== undefined) {
        const batch = makePiBatch(peers, n, noopBody);
        cases.push({ name: IMPL.pi, run: () => runPi(peers, batch, { mode }) });
      }
      const timings = await compare(cases, budget);
      const floorName = mode === 'parallel' ? IMPL.floor : IMPL.floorSeq;
      const floor = timings.get(floorName);
      const pi = timings.get(IMPL.pi);
      for (const c of cases) {
        const t = timings.get(c.name);
        if (t === undefined) continue;
        if ('error' in t) {
          rows.push({ scenario: 'overhead', series: mode, impl: c.name, n, unit: 'µs/call (CPU)', value: null, chart: null, cols: {}, note: `failed: ${t.error}` });
          continue;
        }
        rows.push({
          scenario: 'overhead',
          series: mode,
          impl: c.name,
          n,
          unit: 'µs/call (CPU)',
          value: t.median / n / 1e3,
          lo: t.lo / n / 1e3,
          hi: t.hi / n / 1e3,
          samples: t.samples,
          chart: t.median / n,
          cols: {
            'wall µs/call': formatNum(t.wall / n / 1e3),
            'per batch': `${formatNum(t.median / 1e6)} ms`,
            '× floor': ratio(t, floor),
            '× pi-agent-core': ratio(t, pi),
          },
          ...(c.name === IMPL.pi ? { note: 'timed from first tool_execution_start to turn_end' } : {}),
        });
      }
    }
  }
  return {
    name: 'overhead',
    title: 'overhead: N no-op calls in one batch',
    description:
      'One batch of N calls whose tool body (an async generator) returns at once; the cost is all runtime. ' +
      'toolrun validates each call against a valibot schema, emits start/end/result events and builds result messages; ' +
      'pi-agent-core validates against a TypeBox schema (after `structuredClone`) and emits its own events. ' +
      '`toolrun` runs with `maxConcurrency: Infinity`, like pi-agent-core and the floor; `toolrun (maxConcurrency 10)` is its default. ' +
      'The floor is the same bodies under a bare `Promise.all` (or a `for` loop), without events or validation. ' +
      'Value: median CPU µs per call (wall time alongside); ratios are of CPU time, against the same mode\'s floor and pi-agent-core.',
    chartLabel: 'ns per call',
    rows,
    targets: overheadTargets(rows),
  };
}

function ratio(t: Timing, base: Timing | { error: string } | undefined): string {
  if (base === undefined || 'error' in base) return '–';
  return formatRatio(t.median / base.median);
}

function overheadTargets(rows: Row[]): Target[] {
  const tr = findRow(rows, 'parallel', IMPL.toolrun, 1_000);
  const pi = findRow(rows, 'parallel', IMPL.pi, 1_000);
  const floor = findRow(rows, 'parallel', IMPL.floor, 1_000);
  const out: Target[] = [];
  if (tr?.value != null && pi?.value != null) {
    const x = pi.value / tr.value;
    out.push({
      target: 'overhead, N = 1,000 parallel: at least 5× less time per call than pi-agent-core 0.73.1',
      measured: `toolrun ${formatNum(tr.value)} µs/call, pi-agent-core ${formatNum(pi.value)} µs/call: ${formatRatio(x)} less`,
      met: x >= 5,
    });
  } else {
    out.push({ target: 'overhead, N = 1,000 parallel: at least 5× less time per call than pi-agent-core 0.73.1', measured: 'not measured in this run', met: null });
  }
  if (tr?.value != null && floor?.value != null) {
    const x = tr.value / floor.value;
    out.push({
      target: 'overhead, N = 1,000 parallel: within 4× of the bare floor',
      measured: `toolrun ${formatNum(tr.value)} µs/call, floor ${formatNum(floor.value)} µs/call: ${formatRatio(x)}`,
      met: x <= 4,
    });
  } else {
    out.push({ target: 'overhead, N = 1,000 parallel: within 4× of the bare floor', measured: 'not measured in this run', met: null });
  }
  const tr10 = findRow(rows, 'parallel', IMPL.toolrun, 10);
  const pi10 = findRow(rows, 'parallel', IMPL.pi, 10);
  const target10 = 'overhead, N = 10 parallel: at least 3× less time per call than pi-agent-core 0.73.1';
  if (tr10?.value != null && pi10?.value != null) {
    const x = pi10.value / tr10.value;
    out.push({ target: target10, measured: `toolrun ${formatNum(tr10.value)} µs/call, pi-agent-core ${formatNum(pi10.value)} µs/call: ${formatRatio(x)} less`, met: x >= 3 });
  } else {
    out.push({ target: target10, measured: 'not measured in this run', met: null });
  }
  return out;
}
