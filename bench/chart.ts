/**
 * One SVG line chart per scenario: the row's `chart` figure against N, both axes log scale,
 * one colour per implementation and one dash pattern per series.
 *
 * Rendered with Vega 6 (a bench-only dependency, see `bench/package.json`): a Vega spec goes
 * through `new View(parse(spec), { renderer: 'none' }).toSVG()`, which needs no DOM, no
 * canvas and no browser.
 *
 * @module
 */
import type { Peers } from './peers.ts';
import type { ScenarioResult } from './rows.ts';

const WIDTH = 640;
const HEIGHT = 360;

/** The Vega spec of `result`'s chart (exported for the spec, which checks its data). */
export function chartSpec(result: ScenarioResult): { spec: Record<string, unknown>; points: number } {
  // A dense curve (cold-start: every k) replaces the rows' points: lines without a symbol per
  // point, y in µs with plain numbers on the axis, reference lines dashed.
  const dense = result.curve !== undefined && result.curve.length > 0;
  const values = dense
    ? result
        .curve!.filter((p) => Number.isFinite(p.y) && p.y > 0)
        .map((p) => ({ n: p.x, y: p.y, impl: p.impl, series: '', ours: p.impl.startsWith('toolrun'), reference: p.reference === true }))
    : result.rows
        .filter((r) => r.chart !== null && Number.isFinite(r.chart) && r.chart > 0)
        .map((r) => ({ n: r.n, y: r.chart, impl: r.impl, series: r.series, ours: r.impl.startsWith('toolrun'), reference: false }));
  const manySeries = new Set(values.map((v) => v.series)).size > 1;
  const spec = {
    $schema: 'https://vega.github.io/schema/vega/v6.json',
    description: `${result.title}: ${result.chartLabel} against ${result.xLabel ?? 'N'}`,
    width: WIDTH,
    height: HEIGHT,
    padding: 8,
    background: 'white',
    title: { text: result.title, anchor: 'start', fontSize: 14 },
    data: [{ name: 'rows', values }],
    scales: [
      { name: 'x', type: 'log', base: 10, domain: { data: 'rows', field: 'n' }, range: 'width', nice: true, zero: false },
      { name: 'y', type: 'log', base: 10, domain: { data: 'rows', field: 'y' }, range: 'height', nice: true, zero: false },
      { name: 'color', type: 'ordinal', domain: { data: 'rows', field: 'impl', sort: true }, range: 'category' },
      {
        name: 'dash',
        type: 'ordinal',
        domain: { data: 'rows', field: 'series', sort: true },
        range: [[1, 0], [6, 3], [2, 2], [8, 2, 2, 2]],
      },
    ],
    axes: [
      { orient: 'bottom', scale: 'x', title: result.xLabel ?? 'N', grid: true, format: '~s' },
      { orient: 'left', scale: 'y', title: result.chartLabel, grid: true, format: dense ? ',~r' : '~s' },
    ],
    legends: [
      { stroke: 'color', title: 'implementation', orient: 'right', symbolType: 'stroke', labelLimit: 320 },
      ...(manySeries ? [{ strokeDash: 'dash', title: 'series', orient: 'right', symbolType: 'stroke', labelLimit: 320 }] : []),
    ],
    marks: [
      {
        type: 'group',
        from: { facet: { name: 'line', data: 'rows', groupby: ['impl', 'series'] } },
        marks: [
          {
            type: 'line',
            from: { data: 'line' },
            sort: { field: 'datum.n' },
            encode: {
              enter: {
                x: { scale: 'x', field: 'n' },
                y: { scale: 'y', field: 'y' },
                stroke: { scale: 'color', field: 'impl' },
                ...(dense ? { strokeDash: { signal: 'datum.reference ? [6, 4] : [1, 0]' } } : { strokeDash: { scale: 'dash', field: 'series' } }),
                strokeWidth: { signal: 'datum.ours ? 3 : datum.reference ? 1.25 : 1.5' },
              },
            },
          },
          {
            type: 'symbol',
            from: { data: 'line' },
            ...(dense ? { interactive: false } : {}),
            encode: {
              enter: {
                x: { scale: 'x', field: 'n' },
                y: { scale: 'y', field: 'y' },
                fill: { scale: 'color', field: 'impl' },
                size: { value: dense ? 0 : 24 },
                tooltip: { signal: "datum.impl + ' · ' + datum.series + ': N=' + datum.n + ', ' + format(datum.y, '.3~s')" },
              },
            },
          },
        ],
      },
    ],
  };
  return { spec, points: values.length };
}

/** The chart as an SVG document, or `undefined` when there is nothing to plot. */
export async function renderChart(peers: Peers, result: ScenarioResult): Promise<string | undefined> {
  const { spec, points } = chartSpec(result);
  if (points === 0) return undefined;
  const view = new peers.vega.View(peers.vega.parse(spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
