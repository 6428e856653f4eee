/**
 * Scenario 3, `scaling`: one merge of N sources × 10 items, N from 10 to 100,000. The cost
 * per item must stay flat for `mergeGenerators` (contract M2); the table shows how each
 * peer's grows.
 *
 * @module
 */
import { mergeGenerators } from '../../lib/index.ts';
import { Cap, compare, formatInt, formatNum, formatRatio, type Budget, type Case } from '../harness.ts';
import { loadPeers } from '../peers.ts';
import { findRow, IMPL, type Row, type ScenarioOptions, type ScenarioResult, type Target } from '../rows.ts';
import { count, countMerged, ixMergeAll, raceMerge, sources } from '../workload.ts';

export const SCALING_SIZES = [10, 100, 1_000, 10_000, 100_000] as const;
const ITEMS = 10;

/** Runs `scaling` at `sizes` sources (default 10 … 100,000). */
export async function scaling(budget: Budget, options: ScenarioOptions = {}): Promise<ScenarioResult> {
  const sizes = options.sizes ?? SCALING_SIZES;
  const peers = await loadPeers();
  const cap = new Cap(budget.capMs);
  const rows: Row[] = [];
  // A peer that failed at one size is not tried at larger ones.
  const failedAt = new Map<string, string>();
  for (const n of sizes) {
    options.log?.(`scaling N=${formatInt(n)}`);
    const items = n * ITEMS;
    const counted = (name: string, merged: () => Promise<number>): Case => ({
      name,
      run: async () => {
        const got = await merged();
        if (got !== items) throw new Error(`merged ${formatInt(got)} items, expected ${formatInt(items)}`);
      },
    });
    const all: Case[] = [
      counted(IMPL.floor, async () => {
        // No merge: the same N generators drained side by side, nothing delivered anywhere.
        let got = 0;
        await Promise.all(sources(n, ITEMS).map(async (it) => {
          for (let s = await it.next(); s.done !== true; s = await it.next()) got++;
        }));
        return got;
      }),
      counted(IMPL.merge, () => countMerged(mergeGenerators(sources(n, ITEMS)))),
      counted(IMPL.ix, () => count(ixMergeAll(sources(n, ITEMS)))),
      counted(IMPL.race, () => count(raceMerge(sources(n, ITEMS)))),
    ];
    if (peers !== undefined) {
      all.push(counted(IMPL.itMerge, () => count(peers.itMerge(...sources(n, ITEMS)))));
      all.push(counted(IMPL.repeater, () => count(peers.repeaterMerge(sources(n, ITEMS)))));
    }
    const run: Case[] = [];
    for (const c of all) {
      // Repeater.merge allows at most 1,024 pending pushes: past that many sources it throws at
      // once, so it is run (and fails fast, with its own error in the row) rather than capped.
      const uncapped = c.name === IMPL.merge || c.name === IMPL.floor || (c.name === IMPL.repeater && n > 1_024);
      const note = failedAt.get(c.name) ?? (uncapped ? undefined : cap.skip(c.name, n));
      if (note !== undefined) rows.push({ scenario: 'scaling', series: 'merge', impl: c.name, n, unit: 'ns/item (CPU)', value: null, chart: null, cols: {}, note });
      else run.push(c);
    }
    const timings = await compare(run, budget);
    for (const c of run) {
      const t = timings.get(c.name)!;
      if ('error' in t) {
        failedAt.set(c.name, `not run: failed at N=${formatInt(n)}`);
        rows.push({ scenario: 'scaling', series: 'merge', impl: c.name, n, unit: 'ns/item (CPU)', value: null, chart: null, cols: {}, note: `failed: ${t.error}` });
        continue;
      }
      cap.record(c.name, n, t.median / 1e6);
      const first = findRow(rows, 'merge', c.name, sizes[0]!);
      const perItem = t.median / items;
      rows.push({
        scenario: 'scaling',
        series: 'merge',
        impl: c.name,
        n,
        unit: 'ns/item (CPU)',
        value: perItem,
        lo: t.lo / items,
        hi: t.hi / items,
        samples: t.samples,
        chart: perItem,
        cols: {
          'wall ns/item': formatNum(t.wall / items),
          'per run': `${formatNum(t.median / 1e6)} ms`,
          [`× own N=${formatInt(sizes[0]!)}`]: first?.value != null ? formatRatio(perItem / first.value) : n === sizes[0] ? '1.0×' : '–',
        },
      });
    }
  }
  // Fill the ratio against toolrun at the same size.
  for (const r of rows) {
    const ours = findRow(rows, 'merge', IMPL.merge, r.n);
    const floor = findRow(rows, 'merge', IMPL.floor, r.n);
    r.cols['× mergeGenerators'] = r.value !== null && ours?.value != null ? formatRatio(r.value / ours.value) : '–';
    r.cols['× floor'] = r.value !== null && floor?.value != null && r.impl !== IMPL.floor ? formatRatio(r.value / floor.value) : '–';
  }
  return {
    name: 'scaling',
    title: 'scaling: one merge of N sources × 10 items',
    description:
      'N async generators, each yielding 10 values at once, merged and drained; the consumer does nothing with the items. ' +
      'The floor drains the same N generators side by side with `Promise.all` and no merge: what N live generators cost ' +
      'on their own (allocation, gc); `× floor` compares with it at the same N. ' +
      'A merge that races every pending source per item costs O(N) per item (ix `merge`, the `Promise.race` baseline); ' +
      '`mergeGenerators` queues settled steps and must stay flat. Value: median CPU ns per item (wall alongside). Peers are not run at a size ' +
      'where their predicted single run exceeds the cap (extrapolated from their last two sizes); the row gives the prediction.',
    chartLabel: 'ns per item',
    rows,
    targets: scalingTargets(rows, sizes),
  };
}

function scalingTargets(rows: Row[], sizes: readonly number[]): Target[] {
  const target = 'scaling: ns per item at 100,000 sources within 1.5× of the value at 10 sources';
  const small = findRow(rows, 'merge', IMPL.merge, 10);
  const big = findRow(rows, 'merge', IMPL.merge, 100_000);
  if (small?.value == null || big?.value == null) {
    const lo = findRow(rows, 'merge', IMPL.merge, sizes[0]!);
    const hi = findRow(rows, 'merge', IMPL.merge, sizes[sizes.length - 1]!);
    const measured =
      lo?.value != null && hi?.value != null
        ? `sizes 10 and 100,000 not both run; ${formatInt(lo.n)} → ${formatInt(hi.n)}: ${formatNum(lo.value)} → ${formatNum(hi.value)} ns/item`
        : 'not measured in this run';
    return [{ target, measured, met: null }];
  }
  const x = big.value / small.value;
  const f10 = findRow(rows, 'merge', IMPL.floor, 10)?.value;
  const f100k = findRow(rows, 'merge', IMPL.floor, 100_000)?.value;
  const floor =
    f10 != null && f100k != null
      ? `; over the same range the floor (the same generators drained side by side, no merge) grows ${formatNum(f10)} → ${formatNum(f100k)} ns/item (${formatRatio(f100k / f10)})`
      : '';
  return [{ target, measured: `${formatNum(small.value)} ns/item at 10, ${formatNum(big.value)} ns/item at 100,000: ${formatRatio(x)}${floor}`, met: x <= 1.5 }];
}
