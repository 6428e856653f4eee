/**
 * `npm run bench` — runs the named benchmark scenarios, prints their tables, and writes
 * `docs/benchmarks.md`, `docs/bench/results.json` and `docs/bench/<scenario>.svg`.
 *
 * ```
 * npm run bench                          every scenario, default sizes (about 3 minutes on 2 cores; `journal` starts a PostgreSQL)
 * npm run bench -- overhead scaling      only these scenarios (the report keeps the others' last tables)
 * npm run bench -- --full                the large sizes (tens of minutes)
 * npm run bench -- --no-write            print only; leave docs/ alone
 * ```
 *
 * Before running, it makes sure of two things, in this order:
 * 1. the peers are installed: when `bench/node_modules` lacks one, it runs
 *    `npm ci --prefix bench` (from the committed `bench/package-lock.json`);
 * 2. `gc()` is exposed (the memory figures need it): if not, it re-executes itself as
 *    `node --expose-gc --import tsx bench/run.ts …` with the same arguments.
 *
 * @module
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { renderChart } from './chart.ts';
import { DEFAULT_BUDGET, formatMs, FULL_BUDGET, hasExposedGc, nowMs } from './harness.ts';
import { BENCH_DIR, loadPeers, peersInstalled } from './peers.ts';
import { readStore, runMeta, targetLines, textTable, writeReport } from './report.ts';
import { SCENARIO_NAMES, type ScenarioName } from './rows.ts';
import { SCENARIOS } from './scenarios/index.ts';

const REEXEC_ENV = 'TOOLRUN_BENCH_REEXEC';
const ROOT = dirname(BENCH_DIR);
const DOCS = join(ROOT, 'docs');

interface Args {
  names: ScenarioName[];
  full: boolean;
  write: boolean;
}

function usage(): string {
  return [
    'usage: npm run bench [-- [scenario…] [--full] [--no-write]]',
    `scenarios: ${SCENARIO_NAMES.join(', ')} (default: all)`,
    '  --full       the large sizes and a larger time budget',
    '  --no-write   print the tables only; do not touch docs/',
  ].join('\n');
}

function parseArgs(argv: readonly string[]): Args {
  const names: ScenarioName[] = [];
  let full = false;
  let write = true;
  for (const a of argv) {
    if (a === '--full') full = true;
    else if (a === '--no-write') write = false;
    else if (a === '--help' || a === '-h') {
      console.log(usage());
      process.exit(0);
    } else if ((SCENARIO_NAMES as readonly string[]).includes(a)) {
      if (!names.includes(a as ScenarioName)) names.push(a as ScenarioName);
    } else {
      console.error(`bench: unknown argument ${JSON.stringify(a)}\n${usage()}`);
      process.exit(2);
    }
  }
  return { names: names.length > 0 ? SCENARIO_NAMES.filter((n) => names.includes(n)) : [...SCENARIO_NAMES], full, write };
}

/** Installs the peers from the lock file when any is missing. */
function ensurePeers(): void {
  if (peersInstalled()) return;
  console.error('bench: installing the peers into bench/node_modules: npm ci --prefix bench');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const r = spawnSync(npm, ['ci', '--prefix', BENCH_DIR, '--no-audit', '--no-fund'], { stdio: 'inherit' });
  if (r.status !== 0 || !peersInstalled()) {
    console.error(`bench: "npm ci --prefix bench" failed (exit ${String(r.status)}); cannot compare with the peers.`);
    process.exit(1);
  }
}

/** Re-executes this script under `node --expose-gc --import tsx` unless gc is already exposed. */
function ensureGc(argv: readonly string[]): void {
  if (hasExposedGc()) return;
  if (process.env[REEXEC_ENV] === '1') {
    console.error('bench: warning: gc() is still not exposed after re-executing; memory figures use a run-time flag instead');
    return;
  }
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  const r = spawnSync(process.execPath, ['--expose-gc', '--import', tsx, fileURLToPath(import.meta.url), ...argv], {
    stdio: 'inherit',
    env: { ...process.env, [REEXEC_ENV]: '1' },
  });
  process.exit(r.status ?? 1);
}

function commandLine(argv: readonly string[]): string {
  const script = process.env.npm_lifecycle_event;
  const base = script !== undefined ? `npm run ${script}` : 'tsx bench/run.ts';
  return argv.length > 0 ? `${base} -- ${argv.join(' ')}` : base;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const args = parseArgs(argv);
  ensurePeers();
  ensureGc(argv);
  const peers = await loadPeers();
  const budget = args.full ? FULL_BUDGET : DEFAULT_BUDGET;
  const meta = runMeta(commandLine(argv), hasExposedGc());
  console.log(`toolrun benchmarks: ${args.names.join(', ')}${args.full ? ' (full sizes)' : ''}`);
  console.log(`${meta.cpu}, ${meta.cores} cores, Node ${meta.node}, ${meta.date}`);
  const store = readStore(DOCS);
  const started = nowMs();
  // memory runs last: its 100,000-call batches leave a large heap behind, which would slow
  // whatever is timed after it. The report keeps the numbered order.
  const order = [...args.names.filter((n) => n !== 'memory'), ...args.names.filter((n) => n === 'memory')];
  for (const name of order) {
    const entry = SCENARIOS[name];
    const t0 = nowMs();
    console.log(`\n=== ${name} ===`);
    const result = await entry.run(budget, {
      sizes: args.full ? entry.fullSizes : entry.sizes,
      log: (line) => process.stderr.write(`  … ${line}\n`),
    });
    console.log(`${result.title}  (${formatMs(nowMs() - t0)})\n`);
    console.log(textTable(result));
    const targets = targetLines(result);
    if (targets.length > 0) console.log(`\n${targets.join('\n')}`);
    if (args.write) {
      const charts = new Map<ScenarioName, string>();
      const svg = peers !== undefined ? await renderChart(peers, result) : undefined;
      if (svg !== undefined) charts.set(name, svg);
      const previous = store.scenarios[name]?.chart;
      const chart = svg !== undefined ? `bench/${name}.svg` : previous;
      store.scenarios[name] = { meta: { ...meta, date: new Date().toISOString().replace(/\.\d+Z$/, 'Z') }, result, ...(chart !== undefined ? { chart } : {}) };
      writeReport(DOCS, store, charts);
    }
  }
  console.log(`\ndone in ${formatMs(nowMs() - started)}${args.write ? '; wrote docs/benchmarks.md and docs/bench/' : ''}`);
}

await main();
