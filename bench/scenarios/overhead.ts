/**
 * Scenario 1, `overhead`: one batch of N no-op calls, parallel and sequential. What a
 * runtime costs per call when the tools themselves cost nothing.
 *
 * @module
 */
import { compare, formatInt, formatNum, formatRatio, type Budget, type Case, type Timing } from '../harness.ts';
import { loadPeers } from '../peers.ts';
import { findRow, IMPL, type Row, type ScenarioOptions, type ScenarioResult, type Target } from '../rows.ts';
import { inBlocks, makeCalls, makePiBatch, minimalTool, runFloorParallel, runFloorSequential, runFloorValidatedParallel, runMinimal, runPi, runToolrun, toolrunTool, WORKLOADS } from '../workload.ts';

export const OVERHEAD_SIZES = [10, 100, 1_000, 10_000] as const;

/** The headline series: parallel, tools returning `{ content, details }`, what a real tool returns. */
const HEADLINE = 'parallel';
/** The same with tools returning the string `'ok'`. */
const PLAIN = "parallel, returns 'ok'";

/** The sizes the targets read (the headline series at these N). */
const TARGET_SIZES = [10, 1_000] as const;

/** How the two floors are defined (the page's methods define them in the same words). */
const FLOOR_DEFINITION =
  'The floor (no validation) is the same bodies under a bare `Promise.all` (or a `for` loop), without validation, events or result messages; ' +
  '`× floor` is against it. The floor + validation (parallel series) also checks each call\'s arguments with the same valibot schema first, still without events.';

/** Calls per measured block: a sample is `BLOCK_CALLS / N` batches back to back (at least one). */
const BLOCK_CALLS = 10_000;

/** Runs `overhead` at `sizes` (default 10 … 10,000): parallel with both workloads, sequential with the headline one. */
export async function overhead(budget: Budget, options: ScenarioOptions = {}): Promise<ScenarioResult> {
  const sizes = options.sizes ?? OVERHEAD_SIZES;
  const peers = await loadPeers();
  const rows: Row[] = [];
  const all = [
    { name: HEADLINE, mode: 'parallel', body: WORKLOADS[0].body },
    { name: PLAIN, mode: 'parallel', body: WORKLOADS[1].body },
    { name: 'sequential', mode: 'sequential', body: WORKLOADS[0].body },
  ] as const;
  // The targets read the headline series at N = 10 and 1,000 only.
  const series = options.targetsOnly === true ? all.filter((s) => s.name === HEADLINE) : all;
  const measured = options.targetsOnly === true ? sizes.filter((n) => (TARGET_SIZES as readonly number[]).includes(n)) : sizes;
  for (const { name: seriesName, mode, body } of series) {
    const tool = toolrunTool(body);
    const minimal = minimalTool(body);
    for (const n of measured) {
      options.log?.(`overhead ${seriesName} N=${formatInt(n)}`);
      const calls = makeCalls(n);
      const block = Math.max(1, Math.round(BLOCK_CALLS / n));
      const cases: Case[] = [];
      if (mode === 'parallel') {
        cases.push({ name: IMPL.floor, run: inBlocks(block, () => runFloorParallel(calls, body)) });
        cases.push({ name: IMPL.floorValidated, run: inBlocks(block, () => runFloorValidatedParallel(calls, body)) });
        cases.push({ name: IMPL.minimal, run: inBlocks(block, () => runMinimal(calls, minimal)) });
        cases.push({ name: IMPL.toolrun, run: inBlocks(block, () => runToolrun(calls, { tools: [tool], maxConcurrency: Infinity })) });
        if (seriesName === HEADLINE) cases.push({ name: IMPL.toolrunDefault, run: inBlocks(block, () => runToolrun(calls, { tools: [tool] })) });
      } else {
        cases.push({ name: IMPL.floorSeq, run: inBlocks(block, () => runFloorSequential(calls, body)) });
        cases.push({ name: IMPL.toolrun, run: inBlocks(block, () => runToolrun(calls, { tools: [tool], mode: 'sequential' })) });
      }
      if (peers !== undefined) {
        const batch = makePiBatch(peers, n, body);
        cases.push({ name: IMPL.pi, run: inBlocks(block, () => runPi(peers, batch, { mode })) });
      }
      const timings = await compare(cases, budget);
      const floorName = mode === 'parallel' ? IMPL.floor : IMPL.floorSeq;
      const floor = timings.get(floorName);
      const pi = timings.get(IMPL.pi);
      const min = timings.get(IMPL.minimal);
      for (const c of cases) {
        const t = timings.get(c.name);
        if (t === undefined) continue;
        if ('error' in t) {
          rows.push({ scenario: 'overhead', series: seriesName, impl: c.name, n, unit: 'µs/call (CPU)', value: null, chart: null, cols: {}, note: `failed: ${t.error}` });
          continue;
        }
        rows.push({
          scenario: 'overhead',
          series: seriesName,
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
            '× minimal': ratio(t, min),
            '× pi-agent-core': ratio(t, pi),
          },
          ...(c.name === IMPL.pi ? { note: 'timed from first tool_execution_start to turn_end' } : c.name === IMPL.minimal ? { note: 'bench reference, not a product (bench/minimal-runner.ts)' } : {}),
        });
      }
    }
  }
  return {
    name: 'overhead',
    title: 'overhead: N no-op calls in one batch',
    description:
      'One batch of N calls whose tool body (an async generator) returns at once; the cost is all runtime. ' +
      'The headline series (`parallel`, and `sequential`) has the tools return what a real tool returns, `{ content: [a text block], details }`; ' +
      "`parallel, returns 'ok'` has them return a string. " +
      'toolrun validates each call against a valibot schema, emits start/end/result events and builds result messages; ' +
      'pi-agent-core validates against a TypeBox schema (after `structuredClone`) and emits its own events. ' +
      '`toolrun` runs with `maxConcurrency: Infinity`, like pi-agent-core and the floor; `toolrun (maxConcurrency 10)` is its default. ' +
      FLOOR_DEFINITION +
      ' ' +
      'The `minimal runner` (parallel series; `bench/minimal-runner.ts`, a bench reference, not a product) runs the same bodies, validates the arguments with the same valibot schema, ' +
      'and hands out the same three events per call with toolrun\'s fields (`tool_execution_start`, `tool_execution_end` in completion order, `tool_result` with the result message in call order) as an async iterator, drained with the same `next()` loop as toolrun; ' +
      'no hooks, approval, timeouts, abort or output checks. `× minimal` is what toolrun costs over the event protocol itself. ' +
      `Each sample is a block of batches back to back (${formatInt(BLOCK_CALLS)} calls, at least one batch): CPU over the block, garbage collection included, divided by the batches. ` +
      'Value: median CPU µs per call (wall time alongside); ratios are of CPU time, against the same series\' floor, minimal runner and pi-agent-core.',
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
  const tr = findRow(rows, HEADLINE, IMPL.toolrun, 1_000);
  const pi = findRow(rows, HEADLINE, IMPL.pi, 1_000);
  const floor = findRow(rows, HEADLINE, IMPL.floor, 1_000);
  const out: Target[] = [];
  if (tr?.value != null && pi?.value != null) {
    const x = pi.value / tr.value;
    out.push({
      target: 'overhead, N = 1,000 parallel, { content, details }: at least 5× less CPU per call than pi-agent-core 0.73.1',
      measured: `toolrun ${formatNum(tr.value)} µs/call, pi-agent-core ${formatNum(pi.value)} µs/call: ${formatRatio(x)} less`,
      met: x >= 5,
      x,
      bound: { op: '>=', limit: 5 },
    });
  } else {
    out.push({ target: 'overhead, N = 1,000 parallel, { content, details }: at least 5× less CPU per call than pi-agent-core 0.73.1', measured: 'not measured in this run', met: null });
  }
  if (tr?.value != null && floor?.value != null) {
    const x = tr.value / floor.value;
    out.push({
      target: 'overhead, N = 1,000 parallel, { content, details }: within 2× of the floor (no validation; CPU over blocks of batches)',
      measured: `toolrun ${formatNum(tr.value)} µs/call, floor ${formatNum(floor.value)} µs/call: ${formatRatio(x)}`,
      met: x <= 2,
      x,
      bound: { op: '<=', limit: 2 },
    });
  } else {
    out.push({ target: 'overhead, N = 1,000 parallel, { content, details }: within 2× of the floor (no validation; CPU over blocks of batches)', measured: 'not measured in this run', met: null });
  }
  const tr10 = findRow(rows, HEADLINE, IMPL.toolrun, 10);
  const pi10 = findRow(rows, HEADLINE, IMPL.pi, 10);
  const target10 = 'overhead, N = 10 parallel, { content, details }: at least 3× less CPU per call than pi-agent-core 0.73.1';
  if (tr10?.value != null && pi10?.value != null) {
    const x = pi10.value / tr10.value;
    out.push({
      target: target10,
      measured: `toolrun ${formatNum(tr10.value)} µs/call, pi-agent-core ${formatNum(pi10.value)} µs/call: ${formatRatio(x)} less`,
      met: x >= 3,
      x,
      bound: { op: '>=', limit: 3 },
    });
  } else {
    out.push({ target: target10, measured: 'not measured in this run', met: null });
  }
  return out;
}
