/**
 * Output: the terminal tables, `docs/benchmarks.md`, `docs/bench/results.json` (every
 * scenario's last rows, so a run of some scenarios keeps the others' tables) and the SVG
 * charts in `docs/bench/`.
 *
 * @module
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { formatInt, formatNum, formatRatio } from './harness.ts';
import { IMPL, SCENARIO_NAMES, type Row, type ScenarioName, type ScenarioResult } from './rows.ts';

/** Where and how a scenario was run. */
export interface RunMeta {
  cpu: string;
  cores: number;
  memoryGiB: number;
  node: string;
  date: string;
  command: string;
  gcExposed: boolean;
}

/** What `docs/bench/results.json` holds: the last result of each scenario. */
export interface Store {
  version: 1;
  scenarios: Partial<Record<ScenarioName, { meta: RunMeta; result: ScenarioResult; chart?: string }>>;
}

/** This machine and process, for the report. */
export function runMeta(command: string, gcExposed: boolean): RunMeta {
  const list = cpus();
  return {
    cpu: list[0]?.model.trim() ?? 'unknown',
    cores: list.length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    command,
    gcExposed,
  };
}

function formatValue(row: Row): string {
  if (row.value === null) return '–';
  if (row.unit.startsWith('events/s')) return formatInt(row.value);
  return formatNum(row.value);
}

/** The row's range; in a result of several runs, a row measured in one run only keeps its round medians, and says so. */
function formatRange(row: Row): string {
  if (row.lo === undefined || row.hi === undefined || row.value === null) return '';
  const f = row.unit.startsWith('events/s') ? formatInt : formatNum;
  const oneRun = row.runs !== undefined && row.runs.filter((v) => v !== null).length < 2;
  return `${f(row.lo)} … ${f(row.hi)}${oneRun ? ' (rounds, 1 run)' : ''}`;
}

/** The table of one scenario as a header and string cells. */
function tableCells(result: ScenarioResult): { header: string[]; cells: string[][] } {
  const extra: string[] = [];
  for (const r of result.rows) for (const k of Object.keys(r.cols)) if (!extra.includes(k)) extra.push(k);
  const units = [...new Set(result.rows.map((r) => r.unit))];
  const rangeHeader = result.runs !== undefined && result.runs > 1 ? `range (${result.runs} runs)` : 'range (round medians)';
  const header = ['series', result.xLabel ?? 'N', 'implementation', units.length === 1 ? units[0]! : 'value', rangeHeader, 'samples', ...extra, 'note'];
  const cells = result.rows.map((r) => [
    r.series,
    formatInt(r.n),
    r.impl,
    units.length === 1 ? formatValue(r) : `${formatValue(r)} ${r.unit}`,
    formatRange(r),
    r.samples !== undefined ? String(r.samples) : '',
    ...extra.map((k) => r.cols[k] ?? ''),
    r.note ?? '',
  ]);
  return { header, cells };
}

/** The table as aligned plain text for the terminal. */
export function textTable(result: ScenarioResult): string {
  const { header, cells } = tableCells(result);
  const width = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) =>
    c
      .map((x, i) => (i === 1 || i === 3 ? x.padStart(width[i]!) : x.padEnd(width[i]!)))
      .join('  ')
      .trimEnd();
  const out = [line(header), width.map((w) => '─'.repeat(w)).join('  ')];
  let series = cells[0]?.[0];
  for (const c of cells) {
    if (c[0] !== series) {
      out.push('');
      series = c[0];
    }
    out.push(line(c));
  }
  return out.join('\n');
}

/** The table as GitHub Markdown. */
export function markdownTable(result: ScenarioResult): string {
  const { header, cells } = tableCells(result);
  const esc = (s: string) => s.replace(/\|/g, '\\|');
  return [
    `| ${header.map(esc).join(' | ')} |`,
    `| ${header.map((_, i) => (i === 1 || i === 3 ? '---:' : '---')).join(' | ')} |`,
    ...cells.map((c) => `| ${c.map(esc).join(' | ')} |`),
  ].join('\n');
}

/** The targets of one scenario as text lines. */
export function targetLines(result: ScenarioResult): string[] {
  return result.targets.map((t) => `${t.met === null ? 'n/a ' : t.met ? 'MET ' : 'MISS'}  ${t.target}: ${t.measured}`);
}

/** Reads `docs/bench/results.json`, or an empty store. */
export function readStore(docsDir: string): Store {
  const file = join(docsDir, 'bench', 'results.json');
  if (!existsSync(file)) return { version: 1, scenarios: {} };
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Store;
    return parsed.version === 1 ? parsed : { version: 1, scenarios: {} };
  } catch {
    return { version: 1, scenarios: {} };
  }
}

/** Writes the store, the charts already rendered into it, and `docs/benchmarks.md`. */
export function writeReport(docsDir: string, store: Store, charts: Map<ScenarioName, string>): void {
  const benchDir = join(docsDir, 'bench');
  mkdirSync(benchDir, { recursive: true });
  for (const [name, svg] of charts) writeFileSync(join(benchDir, `${name}.svg`), svg);
  writeFileSync(join(benchDir, 'results.json'), `${JSON.stringify(store, null, 1)}\n`);
  writeFileSync(join(docsDir, 'benchmarks.md'), renderMarkdown(store));
}

function metaLine(m: RunMeta): string {
  return (
    `Measured ${m.date} on ${m.cpu} (${m.cores} cores, ${m.memoryGiB} GiB), Node ${m.node}` +
    `${m.gcExposed ? ', `--expose-gc`' : ''}; command: \`${m.command}\`.`
  );
}

/** The page's methods: how each figure is measured, and what the baselines are. */
const METHODS = [
  '- **Timing** uses [mitata](https://github.com/evanwashere/mitata) 1.0.34 (`measure`: warm-up, sampling to a time budget, outlier trimming). Every sample is one whole batch (or a block of batches), timed by the bench (mitata\'s manual mode) so that pi-agent-core can be timed over its own window. Each comparison is **interleaved in one process**: several rounds, each measuring every implementation once in an order rotated per round; a run\'s value is the **median of the round medians**.',
  '- **Several runs, each a fresh process.** The scenarios whose targets are CPU ratios measured in one process (`overhead`, `resume`) run in K fresh processes, one after the other (`--runs K`, default 3): a value is the **median of the runs\' values**, a ratio the median of the per-run ratios (each between implementations of the same process), the range column the lowest and highest run, and a target is judged on the median over the runs, its range over the runs given beside it; `bench/results.json` keeps every run\'s value. Later runs measure only the series the targets read, so a row marked `(rounds, 1 run)` comes from one run, its range from that run\'s round medians. In the other scenarios the range column gives the lowest and highest round median, or process, as the section says (`cold-start`, `tracing` and the MCP scenarios already run fresh processes of their own). No figure comes from a single measurement.',
  '- **CPU time, wall time alongside.** The figure that the ratios and targets use is the process\'s CPU time (`process.cpuUsage()`, all threads, µs resolution) over the batch: on this shared 2-core machine other jobs often keep the load above 4, and wall time then mostly measures waiting for a core (the same batch swung 2–3× in wall time and under 1.5× in CPU time). The wall-time median is in its own column; on an idle machine the two agree within the gc helper threads\' share.',
  '- **No forced gc before a measurement.** On Node 20, allocation-heavy code runs several times slower right after a forced full gc (a 1,000-call toolrun batch went 5.7 → 35 ms, pi-agent-core 16 → 41 ms), so the timings are taken in a warmed, steady state; the gc cost of each implementation\'s own garbage is inside its figure.',
  '- **Memory, latency and abort** are measured by hand (full gcs and `heapUsed`; timestamps at each event), repeated and interleaved the same way; the value is a median.',
  '- **Ratios** compare medians measured in the same interleaved rounds.',
  '- The machine is shared and noisy (2 cores): read ratios more than absolute values, and expect ±30 % between runs.',
  '- **Peers** (pinned in `bench/package.json`, installed into `bench/node_modules` by `npm run bench`, never dependencies of toolrun): `@mariozechner/pi-agent-core` 0.73.1 driven through `runAgentLoop` with a fake stream function and `shouldStopAfterTurn: () => true`, timed from its first `tool_execution_start` to `turn_end`; ix `merge` 7.0.0 (a dependency of toolrun); `it-merge` 3.0.15; `Repeater.merge` from `@repeaterjs/repeater` 3.1.0; a `Promise.race`-over-pending-`next()` merge written in the bench as the textbook baseline.',
  '- **Floors** (written in the bench, `bench/workload.ts`): the **floor (no validation)** is the same tool bodies (async generators) under a bare `Promise.all` (a `for` loop in sequence), with no validation, no events and no result messages; "the floor" alone always means this one, and every `× floor` column is against it (in `scaling`, the same generators drained side by side with no merge). The **floor + validation** (in `overhead`) is the same with each call\'s arguments first checked against the valibot schema toolrun validates with (`v.safeParse`), still with no events: what validation alone adds. In `overhead` the **minimal runner** (`bench/minimal-runner.ts`, a bench reference, not a product): the same bodies and valibot schema and the same three events per call in the same order, with nothing else, to show what the event protocol itself costs.',
  '- **Charts** (`docs/bench/*.svg`, log–log) are rendered with [Vega](https://vega.github.io/vega/) 6.4.0 in Node, headless, with no browser.',
];

/** The anchor GitHub gives the heading of scenario section `i` (0-based) titled `title`. */
/**
 * What limits a target that is missed, by scenario and a pattern of the target's text: the
 * findings of CPU profiles and instruction counts of the same workloads, kept here so that
 * the targets table is the one place that says where each target stands.
 */
const WHAT_LIMITS: { scenario: ScenarioName; target: RegExp; text: string }[] = [
  {
    scenario: 'overhead',
    target: /N = 1,000 .*pi-agent-core/,
    text: 'toolrun costs 1.6–1.9× the minimal runner, which is itself ≈ 5× below pi-agent-core: the target asks toolrun for the event protocol\'s cost alone. The difference: the two clock reads of contract O7 (≈ 10 %), a fourth awaited `next()` per call, the result messages kept until the batch returns (gc 10–21 %), and a flat spread of under 6 % per function.',
  },
  {
    scenario: 'overhead',
    target: /floor/,
    text: 'The event protocol alone — the minimal runner: three events per call, each one `next()` of an async generator, in-order release — costs 2.7× the floor. Only a public iterator handing out several events per `next()` could get under 2×.',
  },
  {
    scenario: 'overhead',
    target: /N = 10 .*pi-agent-core/,
    text: 'The per-call costs of the N = 1,000 row, with less to share per batch: toolrun is 1.6–1.9× the minimal runner at this size too.',
  },
  {
    scenario: 'scaling',
    target: /./,
    text: 'Not the merge: the floor (the same generators drained side by side, no merge) grows more, and the merge\'s cost over the floor stays flat up to 10,000 sources. At 100,000 live generators each item touches a different one (cache misses; gc 27 % of CPU), and M3 fixes the order: a source is pulled again only after its item was taken.',
  },
  {
    scenario: 'cold-start',
    target: /./,
    text: 'Batches 2–100 run in V8\'s interpreter and baseline tier, where the cost follows the functions a call runs: ≈ 100 toolrun function calls per tool call (`bench/cold-calls.ts`). 2× needs about 45 % less interpreted work per call.',
  },
];

/** The {@link WHAT_LIMITS} text for a missed target, if there is one. */
export function whatLimits(scenario: ScenarioName, target: string): string | undefined {
  return WHAT_LIMITS.find((w) => w.scenario === scenario && w.target.test(target))?.text;
}

function sectionAnchor(i: number, title: string): string {
  return `#${`${i + 1}. ${title}`.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-')}`;
}

/** The µs of CPU per call of `impl` in overhead's headline series at N = 1,000, if stored. */
function overheadValue(store: Store, impl: string): number | undefined {
  const row = store.scenarios.overhead?.result.rows.find((r) => r.series === 'parallel' && r.impl === impl && r.n === 1_000);
  return row?.value ?? undefined;
}

/**
 * The five lines that open the page: what toolrun costs per call, and against what; then the
 * measured text of the targets that say what a user pays elsewhere (a fresh process, latency,
 * memory, serving and tracing). A line whose scenarios were not run says so.
 */
function summaryLines(store: Store): string[] {
  const tr = overheadValue(store, IMPL.toolrun);
  const pi = overheadValue(store, IMPL.pi);
  const floor = overheadValue(store, IMPL.floor);
  const validated = overheadValue(store, IMPL.floorValidated);
  const minimal = overheadValue(store, IMPL.minimal);
  const us = (x: number) => `${formatNum(x)} µs`;
  const perCall =
    tr === undefined
      ? 'not measured yet (`npm run bench -- overhead`)'
      : [
          `toolrun ${us(tr)} of CPU per call (N = 1,000 parallel calls of tools returning \`{ content, details }\`)`,
          pi !== undefined ? `pi-agent-core 0.73.1 ${us(pi)} (${formatRatio(pi / tr)} toolrun's)` : undefined,
          floor !== undefined ? `the floor (no validation) ${us(floor)}` : undefined,
          validated !== undefined ? `the floor + validation ${us(validated)}` : 'the floor + validation: not in the stored run yet',
          minimal !== undefined ? `the minimal runner (validation and the three events) ${us(minimal)}` : undefined,
        ]
          .filter((part) => part !== undefined)
          .join('; ');
  const measured = (name: ScenarioName, index = 0): string | undefined => {
    const t = store.scenarios[name]?.result.targets[index];
    return t === undefined ? undefined : `${name}: ${t.measured}`;
  };
  const line = (label: string, parts: Array<string | undefined>) => {
    const present = parts.filter((part) => part !== undefined);
    return `- **${label}**: ${present.length > 0 ? present.join('; ') : 'not measured yet'}.`;
  };
  return [
    `- **Per call**: ${perCall}.`,
    line('A fresh process', [measured('cold-start')]),
    line('Latency', [measured('release-latency'), measured('stream-start'), measured('abort')]),
    line('Memory', [measured('memory', 0), measured('memory', 1)]),
    line('Serving and tracing', [measured('mcp-stdio', 1), measured('mcp-http', 1), measured('tracing')]),
  ];
}

/** `docs/benchmarks.md` from the store: summary and charts first, then the targets, the methods and each scenario's table. */
export function renderMarkdown(store: Store): string {
  const out: string[] = [];
  const present = SCENARIO_NAMES.filter((n) => store.scenarios[n] !== undefined);
  out.push('# Benchmarks');
  out.push('');
  out.push(
    'What toolrun costs, against the runtimes and merge combinators a user would pick instead, all in one process. ' +
      'How it is measured is under [Methods](#methods); every table is in its numbered section below.',
  );
  out.push('');
  out.push('## Summary');
  out.push('');
  out.push(...summaryLines(store));
  out.push('');
  const charted = present.map((name, i) => ({ name, i, entry: store.scenarios[name]! })).filter(({ entry }) => entry.chart !== undefined);
  if (charted.length > 0) {
    out.push('## Charts');
    out.push('');
    out.push('Log–log; each chart\'s numbers are in the table of its section.');
    out.push('');
    for (const { i, entry } of charted) {
      const { result, chart } = entry;
      out.push(`### [${i + 1}. ${result.title}](${sectionAnchor(i, result.title)})`);
      out.push('');
      out.push(`![${result.name}: ${result.chartLabel} against ${result.xLabel ?? 'N'}, log scales](${chart})`);
      out.push('');
    }
  }
  if (present.length > 0) {
    out.push('## Targets');
    out.push('');
    out.push('Checked against the tables below by the bench itself, on the median over the runs where a scenario ran several times. This table is the one place that says where each target stands; for a missed one, the last column says what limits it (from CPU profiles and instruction counts of the same workload) and what would have to change.');
    out.push('');
    out.push('| scenario | target | measured | met | what limits it |');
    out.push('| --- | --- | --- | --- | --- |');
    for (const name of present) {
      for (const t of store.scenarios[name]!.result.targets) {
        const limit = t.met === false ? (whatLimits(name, t.target) ?? '') : '';
        out.push(`| ${name} | ${t.target} | ${t.measured.replace(/\|/g, '\\|')} | ${t.met === null ? 'not measured' : t.met ? 'yes' : '**no**'} | ${limit} |`);
      }
    }
    out.push('');
  }
  out.push('## Methods');
  out.push('');
  out.push(
    'This file is written by `npm run bench` (every scenario at sizes that finish in about five minutes on a quiet 2-core machine, once the peers are installed), ' +
      '`npm run bench -- overhead scaling` (only the named scenarios; the others keep their last tables) and ' +
      '`npm run bench -- --full` (the large sizes). The tables, charts and `bench/results.json` are regenerated together; ' +
      'each section says when, where and with which command it was measured.',
  );
  out.push('');
  out.push(METHODS.join('\n'));
  out.push('');
  present.forEach((name, i) => {
    const { meta, result } = store.scenarios[name]!;
    out.push(`## ${i + 1}. ${result.title}`);
    out.push('');
    out.push(`_${metaLine(meta)}_`);
    out.push('');
    out.push(result.description);
    out.push('');
    out.push(markdownTable(result));
    out.push('');
    if (result.targets.length > 0) {
      for (const t of result.targets) out.push(`- ${t.met === null ? 'Not measured' : t.met ? 'Met' : '**Missed**'}: ${t.target}. ${t.measured}.`);
      out.push('');
    }
  });
  const missing = SCENARIO_NAMES.filter((n) => store.scenarios[n] === undefined);
  if (missing.length > 0) {
    out.push(`_Not run yet: ${missing.join(', ')}._`);
    out.push('');
  }
  return out.join('\n');
}
