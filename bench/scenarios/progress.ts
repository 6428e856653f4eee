/**
 * Scenario 2, `progress`: N calls each yielding K progress values. Throughput of progress
 * events through `runTools`, and of items through `mergeGenerators` against the merge
 * peers (ix `merge`, it-merge, `Repeater.merge`, the `Promise.race` baseline).
 *
 * @module
 */
import { mergeGenerators } from '../../lib/index.ts';
import { Cap, compare, formatInt, formatNum, formatRatio, type Budget, type Case } from '../harness.ts';
import { loadPeers } from '../peers.ts';
import { findRow, IMPL, type Row, type ScenarioOptions, type ScenarioResult, type Target } from '../rows.ts';
import { count, countMerged, ixMergeAll, makeCalls, makePiBatch, progressBody, raceMerge, runFloorParallel, runPi, runToolrun, sources, toolrunTool } from '../workload.ts';

export const PROGRESS_SIZES = [10, 100, 1_000] as const;
const PROGRESS_K = [10, 100] as const;

/** Implementations whose cost per item may grow with N: capped by predicted run time. */
const CAPPED = new Set<string>([IMPL.ix, IMPL.itMerge, IMPL.repeater, IMPL.race, IMPL.pi]);

/** Runs `progress` at N = `sizes` (default 10, 100, 1,000) for K = 10 and 100. */
export async function progress(budget: Budget, options: ScenarioOptions & { ks?: readonly number[] } = {}): Promise<ScenarioResult> {
  const sizes = options.sizes ?? PROGRESS_SIZES;
  const ks = options.ks ?? PROGRESS_K;
  const peers = await loadPeers();
  const rows: Row[] = [];
  for (const k of ks) {
    const body = progressBody(k);
    const tool = toolrunTool(body);
    const capRun = new Cap(budget.capMs);
    const capMerge = new Cap(budget.capMs);
    for (const n of sizes) {
      options.log?.(`progress N=${formatInt(n)} K=${k}`);
      const events = n * k;
      // Through the runtimes: progress events per second.
      const calls = makeCalls(n);
      const runCases: Case[] = [
        { name: IMPL.floor, run: () => runFloorParallel(calls, body) },
        { name: IMPL.toolrun, run: () => runToolrun(calls, { tools: [tool], maxConcurrency: Infinity }) },
      ];
      if (peers !== undefined) {
        const batch = makePiBatch(peers, n, body);
        runCases.push({ name: IMPL.pi, run: () => runPi(peers, batch, { mode: 'parallel' }) });
      }
      rows.push(...(await measureThroughput(`runTools K=${k}`, runCases, n, events, budget, capRun)));
      // Through the merges: items per second.
      const mergeCases: Case[] = [
        { name: IMPL.merge, run: async () => void (await countMerged(mergeGenerators(sources(n, k)))) },
        { name: IMPL.ix, run: async () => void (await count(ixMergeAll(sources(n, k)))) },
        { name: IMPL.race, run: async () => void (await count(raceMerge(sources(n, k)))) },
      ];
      if (peers !== undefined) {
        mergeCases.push({ name: IMPL.itMerge, run: async () => void (await count(peers.itMerge(...sources(n, k)))) });
        mergeCases.push({ name: IMPL.repeater, run: async () => void (await count(peers.repeaterMerge(sources(n, k)))) });
      }
      rows.push(...(await measureThroughput(`merge K=${k}`, mergeCases, n, events, budget, capMerge)));
    }
  }
  return {
    name: 'progress',
    title: 'progress: N calls × K progress events',
    description:
      'N calls whose body yields K values and returns. `runTools K=…`: the bodies as toolrun tools (each value becomes a ' +
      '`tool_execution_update` event), as pi-agent-core tools (an adapter passes each value to `onUpdate`), and under the ' +
      'floor (no validation): a bare `Promise.all` that drains them with no events. `merge K=…`: the N generators merged by `mergeGenerators` ' +
      'and by each merge peer, drained by the consumer. Value: progress events (or merged items) per CPU second, N·K divided ' +
      'by the median CPU time of a batch (wall alongside); the chart shows CPU ns per event. Peers whose cost per item grows with N are not run where ' +
      'their predicted run time exceeds the cap; the row says so.',
    chartLabel: 'ns per event',
    rows,
    targets: progressTargets(rows, ks, sizes),
  };
}

async function measureThroughput(series: string, cases: Case[], n: number, events: number, budget: Budget, cap: Cap): Promise<Row[]> {
  const rows: Row[] = [];
  const run: Case[] = [];
  for (const c of cases) {
    // Repeater.merge throws at once past 1,024 sources (its pending-push limit): run it, not cap it.
    const skip = CAPPED.has(c.name) && !(c.name === IMPL.repeater && n > 1_024) ? cap.skip(c.name, n) : undefined;
    if (skip !== undefined) rows.push({ scenario: 'progress', series, impl: c.name, n, unit: 'events/s (CPU)', value: null, chart: null, cols: {}, note: skip });
    else run.push(c);
  }
  const timings = await compare(run, budget);
  let best = 0;
  for (const [name, t] of timings) {
    if ('error' in t || name === IMPL.toolrun || name === IMPL.merge || name === IMPL.floor) continue;
    best = Math.max(best, events / (t.median / 1e9));
  }
  for (const c of run) {
    const t = timings.get(c.name)!;
    if ('error' in t) {
      rows.push({ scenario: 'progress', series, impl: c.name, n, unit: 'events/s (CPU)', value: null, chart: null, cols: {}, note: `failed: ${t.error}` });
      continue;
    }
    cap.record(c.name, n, t.median / 1e6);
    const perSec = events / (t.median / 1e9);
    rows.push({
      scenario: 'progress',
      series,
      impl: c.name,
      n,
      unit: 'events/s (CPU)',
      value: perSec,
      lo: events / (t.hi / 1e9),
      hi: events / (t.lo / 1e9),
      samples: t.samples,
      chart: t.median / events,
      cols: {
        'per batch': `${formatNum(t.median / 1e6)} ms`,
        'ns/event': formatNum(t.median / events),
        'wall events/s': formatInt(events / (t.wall / 1e9)),
        'vs fastest peer': best > 0 ? formatRatio(perSec / best) : '–',
      },
    });
  }
  return rows;
}

function progressTargets(rows: Row[], ks: readonly number[], sizes: readonly number[]): Target[] {
  const out: Target[] = [];
  for (const k of ks) {
    const series = `merge K=${k}`;
    const parts: string[] = [];
    let met: boolean | null = true;
    for (const n of sizes) {
      const ours = findRow(rows, series, IMPL.merge, n);
      if (ours?.value == null) {
        met = null;
        continue;
      }
      const ran = rows.filter((r) => r.series === series && r.n === n && r.impl !== IMPL.merge && r.value !== null);
      if (ran.length === 0) {
        parts.push(`N=${formatInt(n)}: ${formatNum(ours.value)}/s, every peer capped`);
        continue;
      }
      const best = ran.reduce((a, b) => (a.value! >= b.value! ? a : b));
      parts.push(`N=${formatInt(n)}: ${formatNum(ours.value)}/s vs ${best.impl} ${formatNum(best.value!)}/s (${formatRatio(ours.value / best.value!)})`);
      if (met !== null && ours.value < best.value!) met = false;
    }
    out.push({
      target: `progress, K = ${k}: mergeGenerators at least the throughput of the fastest merge peer at every size`,
      measured: parts.length > 0 ? parts.join('; ') : 'not measured in this run',
      met: parts.length > 0 ? met : null,
    });
  }
  return out;
}
