/**
 * Smoke spec of the benchmark scenarios (`bench/`): each runs in-process at its smallest
 * size with a tiny budget and returns well-formed rows. No timing is asserted — the numbers
 * of a run this short mean nothing — only that every scenario works and reports toolrun.
 *
 * The peers (pi-agent-core, it-merge, Repeater, vega) live in `bench/node_modules`, which
 * `npm run bench` installs; without it the peer checks are skipped, the toolrun checks not.
 */
import { describe, expect, it } from 'vitest';
import { chartSpec, renderChart } from '../../bench/chart.ts';
import { SMOKE_BUDGET } from '../../bench/harness.ts';
import { loadPeers, peersInstalled } from '../../bench/peers.ts';
import { markdownTable, renderMarkdown, runMeta, textTable } from '../../bench/report.ts';
import { IMPL, SCENARIO_NAMES, type Row, type ScenarioName, type ScenarioResult } from '../../bench/rows.ts';
import { abort, coldStart, journal, mcpHttp, mcpStdio, memory, overhead, progress, releaseLatency, resume, scaling, streamStart, tracing } from '../../bench/scenarios/index.ts';

/** Each scenario at its smallest size (tinier still for the slow ones). */
const RUN: Record<ScenarioName, () => Promise<ScenarioResult>> = {
  overhead: () => overhead(SMOKE_BUDGET, { sizes: [10] }),
  progress: () => progress(SMOKE_BUDGET, { sizes: [10], ks: [10] }),
  scaling: () => scaling(SMOKE_BUDGET, { sizes: [10] }),
  'release-latency': () => releaseLatency(SMOKE_BUDGET, { sizes: [10] }),
  memory: () => memory(SMOKE_BUDGET, { sizes: [100], signalRuns: 200 }),
  abort: () => abort(SMOKE_BUDGET, { sizes: [100], holdMs: 150 }),
  'stream-start': () => streamStart(SMOKE_BUDGET, { sizes: [4], gapMs: 1, toolMs: 2 }),
  'mcp-stdio': () => mcpStdio(SMOKE_BUDGET, { sizes: [20] }),
  'mcp-http': () => mcpHttp(SMOKE_BUDGET, { sizes: [20] }),
  'cold-start': () => coldStart(SMOKE_BUDGET, { sizes: [3], runs: 1 }),
  resume: () => resume(SMOKE_BUDGET, { sizes: [10] }),
  // Starts a throwaway PostgreSQL and DBOS in this process for its DBOS rows (a few seconds).
  journal: () => journal(SMOKE_BUDGET, { sizes: [10], dbosCalls: 5, dbosRuns: 1 }),
  // Two child processes (one per variant), each warmed up by 2,000 calls only: both sizes, so that the target has a figure.
  tracing: () => tracing(SMOKE_BUDGET, { sizes: [10, 1_000], runs: 1, warmupCalls: 2_000 }),
};

/** The implementation that stands for toolrun in each scenario's series (`resume` has only toolrun rows, named `toolrun: <variant>`). */
function toolrunImpl(row: Row): boolean {
  return row.impl === IMPL.toolrun || row.impl === IMPL.merge || row.impl.startsWith('toolrun: ');
}

function expectWellFormed(row: Row, name: ScenarioName): void {
  expect(row.scenario).toBe(name);
  expect(row.series).toMatch(/\S/);
  expect(row.impl).toMatch(/\S/);
  expect(Number.isInteger(row.n) && row.n > 0, `n = ${row.n}`).toBe(true);
  expect(row.unit).toMatch(/\S/);
  if (row.value === null) {
    // A row without a figure must say why (capped, failed, not applicable).
    expect(row.note ?? '').toMatch(/\S/);
    expect(row.chart).toBeNull();
  } else {
    expect(Number.isFinite(row.value), `${row.impl} value ${row.value}`).toBe(true);
    if (row.lo !== undefined && row.hi !== undefined) expect(row.lo).toBeLessThanOrEqual(row.hi);
  }
  if (row.chart !== null) expect(Number.isFinite(row.chart) && row.chart > 0, `${row.impl} chart ${row.chart}`).toBe(true);
  for (const value of Object.values(row.cols)) expect(typeof value).toBe('string');
}

const results = new Map<ScenarioName, ScenarioResult>();

describe('bench scenarios run at their smallest size and return well-formed rows', () => {
  for (const name of SCENARIO_NAMES) {
    it(`${name}`, async () => {
      const result = await RUN[name]();
      results.set(name, result);
      expect(result.name).toBe(name);
      expect(result.rows.length).toBeGreaterThan(0);
      for (const row of result.rows) expectWellFormed(row, name);
      // toolrun has a measured row in every series (the peers may be capped or absent).
      const series = [...new Set(result.rows.map((r) => r.series))];
      for (const s of series) {
        const ours = result.rows.filter((r) => r.series === s && toolrunImpl(r));
        expect(ours.length, `toolrun rows in series "${s}"`).toBeGreaterThan(0);
        for (const r of ours) expect(r.value, `toolrun ${s} N=${r.n}`).not.toBeNull();
      }
      for (const t of result.targets) {
        expect(t.target).toMatch(/\S/);
        expect(t.measured).toMatch(/\S/);
      }
      // Every row appears in both tables.
      const text = textTable(result);
      const md = markdownTable(result);
      expect(text.split('\n').length).toBeGreaterThanOrEqual(result.rows.length + 2);
      expect(md.split('\n').length).toBe(result.rows.length + 2);
      expect(chartSpec(result).points).toBeGreaterThan(0);
    }, 120_000);
  }

  it('overhead has the minimal runner next to the floor in both parallel series, and toolrun\'s × minimal', () => {
    // Fails if the reference row or its ratio column is dropped from the overhead scenario.
    const result = results.get('overhead');
    expect(result).toBeDefined();
    for (const series of ['parallel', "parallel, returns 'ok'"]) {
      const minimal = result!.rows.find((r) => r.series === series && r.impl === IMPL.minimal);
      expect(minimal?.value, `${series}: minimal runner`).not.toBeNull();
      const ours = result!.rows.find((r) => r.series === series && r.impl === IMPL.toolrun);
      expect(ours?.cols['× minimal']).toMatch(/×$/);
    }
  });

  it('cold-start charts a dense curve: every k for each implementation', () => {
    // Fails if the chart goes back to the table's few points (k = 1, 2, 3, 5…), or loses an implementation.
    const result = results.get('cold-start');
    expect(result?.curve).toBeDefined();
    const impls = new Set(result!.rows.filter((r) => r.value !== null).map((r) => r.impl));
    for (const impl of impls) expect(result!.curve!.filter((p) => p.impl === impl).map((p) => p.x)).toEqual([1, 2, 3]);
    expect(chartSpec(result!).points).toBe(result!.curve!.length);
  });

  it('tracing: off and on with the API alone at N = 10 and 1,000, in processes of their own, and the +0.3 µs/call target judged on N = 1,000', () => {
    // Fails if a variant or a size goes missing, if a row's figure is not the per-process
    // one, or if the target is not judged (no figure, no bound, or `met` not what the bound says).
    const result = results.get('tracing')!;
    const rows = result.rows.map((r) => [r.impl, r.n]);
    expect(rows).toEqual([
      ['toolrun: tracing off', 10],
      ['toolrun: tracing on, API only', 10],
      ['toolrun: tracing off', 1_000],
      ['toolrun: tracing on, API only', 1_000],
    ]);
    for (const row of result.rows) {
      expect(row.unit).toBe('µs/call (CPU)');
      expect(row.runs).toEqual([row.value]);
    }
    expect(result.targets).toHaveLength(1);
    const [target] = result.targets;
    expect(target!.target).toContain('+0.3 µs per call over tracing off, N = 1,000');
    expect(target!.bound).toEqual({ op: '<=', limit: 0.3 });
    const on = result.rows[3]!.value!;
    const off = result.rows[2]!.value!;
    expect(target!.x).toBeCloseTo(on - off, 9);
    expect(target!.runs).toEqual([target!.x]);
    expect(target!.met).toBe(target!.x! <= 0.3);
  });

  it('renders docs/benchmarks.md from the results, with one section per scenario', () => {
    const meta = runMeta('npm run bench', false);
    const md = renderMarkdown({
      version: 1,
      scenarios: Object.fromEntries([...results].map(([name, result]) => [name, { meta, result, chart: `bench/${name}.svg` }])),
    });
    for (const [name, result] of results) {
      expect(md).toContain(result.title);
      expect(md).toContain(`](bench/${name}.svg)`);
    }
    expect(md).toContain(meta.cpu);
    expect(md).toContain(process.version);
  });
});

describe.skipIf(!peersInstalled())('bench peers (skipped: bench/node_modules is absent; `npm run bench` installs it)', () => {
  it('pi-agent-core runs in overhead, progress, release-latency, memory and abort', () => {
    for (const name of ['overhead', 'progress', 'release-latency', 'memory', 'abort'] as const) {
      const result = results.get(name);
      expect(result, `${name} ran`).toBeDefined();
      const pi = result!.rows.filter((r) => r.impl === IMPL.pi);
      expect(pi.length, `${name} pi-agent-core rows`).toBeGreaterThan(0);
      for (const r of pi) expect(r.value, `${name} ${r.series}`).not.toBeNull();
    }
  });

  it('the merge peers run in progress and scaling', () => {
    for (const name of ['progress', 'scaling'] as const) {
      const impls = new Set(results.get(name)?.rows.filter((r) => r.value !== null).map((r) => r.impl));
      for (const peer of [IMPL.ix, IMPL.itMerge, IMPL.repeater, IMPL.race]) expect(impls.has(peer), `${name}: ${peer}`).toBe(true);
    }
  });

  it('renders a chart to SVG with vega, without a browser', async () => {
    const peers = await loadPeers();
    const result = results.get('scaling');
    expect(result).toBeDefined();
    const svg = await renderChart(peers!, result!);
    expect(svg).toMatch(/^<svg[\s\S]*<\/svg>\s*$/);
  });
});
