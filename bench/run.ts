/**
 * `npm run bench` — runs the named benchmark scenarios, prints their tables, and writes
 * `docs/benchmarks.md`, `docs/bench/results.json` and `docs/bench/<scenario>.svg`.
 *
 * ```
 * npm run bench                          every scenario, default sizes (about 5 minutes on a quiet 2-core machine; `journal` starts a PostgreSQL)
 * npm run bench -- overhead scaling      only these scenarios (the report keeps the others' last tables)
 * npm run bench -- --full                the large sizes (tens of minutes)
 * npm run bench -- --no-write            print only; leave docs/ alone
 * npm run bench -- overhead --runs 5      the scenarios with targets measured in one process (overhead, resume) in 5 fresh processes each (default 3; 1: once, in this process)
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
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { renderChart } from './chart.ts';
import { DEFAULT_BUDGET, formatMs, FULL_BUDGET, hasExposedGc, nowMs, SMOKE_BUDGET } from './harness.ts';
import { BENCH_DIR, loadPeers, peersInstalled } from './peers.ts';
import { readStore, runMeta, targetLines, textTable, writeReport } from './report.ts';
import { SCENARIO_NAMES, type ScenarioName, type ScenarioResult } from './rows.ts';
import { combineRuns, RESULT_FILE_FLAG, runInChildren, TARGETS_ONLY_FLAG } from './runs.ts';
import { DEFAULT_RUNS, REPEATED, SCENARIOS } from './scenarios/index.ts';

const REEXEC_ENV = 'TOOLRUN_BENCH_REEXEC';
const ROOT = dirname(BENCH_DIR);
const DOCS = join(ROOT, 'docs');

interface Args {
  names: ScenarioName[];
  full: boolean;
  write: boolean;
  /** `--runs K`: fresh processes per repeated scenario; undefined: each scenario's default. */
  runs: number | undefined;
  /** A child run (bench/runs.ts): write the one scenario's result to this file and print no table. */
  resultFile: string | undefined;
  targetsOnly: boolean;
}

function usage(): string {
  return [
    'usage: npm run bench [-- [scenario…] [--full] [--no-write] [--runs K]]',
    `scenarios: ${SCENARIO_NAMES.join(', ')} (default: all)`,
    '  --full       the large sizes and a larger time budget',
    '  --no-write   print the tables only; do not touch docs/',
    `  --runs K     run ${REPEATED.join(' and ')} in K fresh processes each and report medians over them (default ${DEFAULT_RUNS}; 1: once, in this process)`,
  ].join('\n');
}

function parseArgs(argv: readonly string[]): Args {
  const names: ScenarioName[] = [];
  let full = false;
  let write = true;
  let runs: number | undefined;
  let resultFile: string | undefined;
  let targetsOnly = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--full') full = true;
    else if (a === '--no-write') write = false;
    else if (a === '--runs' || a === RESULT_FILE_FLAG) {
      const value = argv[++i];
      if (a === RESULT_FILE_FLAG && value !== undefined) resultFile = value;
      else if (a === '--runs' && value !== undefined && /^[1-9]\d?$/.test(value)) runs = Number(value);
      else {
        console.error(`bench: ${a} needs ${a === '--runs' ? 'a count from 1 to 99' : 'a path'}\n${usage()}`);
        process.exit(2);
      }
    } else if (a === TARGETS_ONLY_FLAG) targetsOnly = true;
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
  if (resultFile !== undefined && names.length !== 1) {
    console.error(`bench: ${RESULT_FILE_FLAG} runs exactly one scenario`);
    process.exit(2);
  }
  return { names: names.length > 0 ? SCENARIO_NAMES.filter((n) => names.includes(n)) : [...SCENARIO_NAMES], full, write: write && resultFile === undefined, runs, resultFile, targetsOnly };
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
  const budget = args.full ? FULL_BUDGET : DEFAULT_BUDGET;
  if (args.resultFile !== undefined) {
    // A child run of bench/runs.ts: one scenario, its result into the file, nothing else.
    // `TOOLRUN_BENCH_SMOKE=1`: the smoke spec's budget (spec/bench/runs.spec.ts).
    const name = args.names[0]!;
    const entry = SCENARIOS[name];
    const result = await entry.run(process.env.TOOLRUN_BENCH_SMOKE === '1' ? SMOKE_BUDGET : budget, {
      sizes: args.full ? entry.fullSizes : entry.sizes,
      log: (line) => process.stderr.write(`  … ${line}\n`),
      targetsOnly: args.targetsOnly,
    });
    writeFileSync(args.resultFile, JSON.stringify(result));
    const cpu = process.cpuUsage();
    process.stderr.write(`  … ${name}: this run took ${formatMs(nowMs())} wall, ${formatMs((cpu.user + cpu.system) / 1e3)} CPU (the process's, tsx start-up included)\n`);
    return;
  }
  const peers = await loadPeers();
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
    const log = (line: string) => process.stderr.write(`  … ${line}\n`);
    const runs = entry.repeated === true ? (args.runs ?? DEFAULT_RUNS) : 1;
    let result: ScenarioResult;
    if (runs > 1) {
      const env = { ...process.env, [REEXEC_ENV]: '1' };
      const all = await runInChildren(name, runs, { full: args.full, env, log });
      for (const [i, r] of all.entries()) for (const line of targetLines(r)) log(`run ${i + 1}: ${line}`);
      result = combineRuns(all);
    } else result = await entry.run(budget, { sizes: args.full ? entry.fullSizes : entry.sizes, log });
    console.log(`${result.title}  (${formatMs(nowMs() - t0)}${runs > 1 ? `, ${runs} runs` : ''})\n`);
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
