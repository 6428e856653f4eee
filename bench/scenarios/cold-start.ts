/**
 * Scenario `cold-start`: the first batches of a fresh process, the shape of a real agent
 * (one small batch per turn). Each implementation runs in processes of its own (nothing
 * warmed up by another), one per round, in turn: toolrun, pi-agent-core, floor (each round
 * begins with the import probe below). Each process
 * (bench/cold-start-child.ts) runs B batches of N = 10 `{ content, details }` calls, one
 * after the other, and reports each batch's CPU and wall time.
 *
 * Rows: for the first k batches (k = 1, 2, 3, 5, 10, 20, 30, 50, 100…), the CPU per call over
 * those k batches together (median over processes; range: lowest and highest process). The
 * chart is that curve. The first batch's wall time is reported alongside.
 *
 * toolrun runs as users get it: the scenario first builds the library's JavaScript with the
 * package build's own tsdown configuration (declarations left out) into
 * `node_modules/.cache/toolrun-bench/`, and each toolrun process imports that file
 * (docs/adr/0031-benchmarks.md). The time of
 * `import 'toolrun'` is measured apart, in a plain `node` process per round (no tsx): the
 * CPU and wall time of the dynamic import of the built entry, its dependencies included.
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { formatInt, formatNum, formatRatio, median, type Budget } from '../harness.ts';
import { peersInstalled } from '../peers.ts';
import { IMPL, type Row, type ScenarioOptions, type ScenarioResult, type Target } from '../rows.ts';

/** Batches per process in a default run. */
export const COLD_START_SIZES = [100] as const;
const N = 10;
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CHILD = join(ROOT, 'bench', 'cold-start-child.ts');
/** Where the scenario builds the library (inside the repository, so that its dependencies resolve from node_modules). */
const BUILD_DIR = join(ROOT, 'node_modules', '.cache', 'toolrun-bench', 'cold-start');
const SERIES = 'first batches of N = 10';
const TARGET = 'cold start: a fresh process\'s first 100 batches of N = 10 { content, details } calls, at least 2× less CPU than pi-agent-core 0.73.1';

interface Trace {
  cpu: number[];
  wall: number[];
}

/**
 * Builds the library's JavaScript as `npm run build` does — the first configuration of
 * tsdown.config.ts, the package's `.` entry alone, no declarations, no maps — and returns
 * the path of its entry. About a second; the real `dist/` is left alone.
 */
export async function buildLibrary(): Promise<string> {
  const [{ build }, { default: configs }] = await Promise.all([import('tsdown'), import('../../tsdown.config.ts')]);
  const library = (Array.isArray(configs) ? configs : [configs])[0] as Record<string, unknown>;
  await build({ ...library, config: false, cwd: ROOT, entry: { index: 'lib/index.ts' }, dts: false, sourcemap: false, outDir: BUILD_DIR, clean: true, logLevel: 'silent' });
  return join(BUILD_DIR, 'index.js');
}

/** CPU and wall ns of `await import(entry)` in a fresh plain `node` process (no tsx): `import 'toolrun'` as a user's program pays it. */
function importTime(entry: string): Promise<{ cpu: number; wall: number }> {
  const script =
    'const c = process.cpuUsage(); const t = process.hrtime.bigint(); await import(process.argv[1]); const u = process.cpuUsage(c); ' +
    'console.log(JSON.stringify({ cpu: (u.user + u.system) * 1e3, wall: Number(process.hrtime.bigint() - t) }));';
  return collect(spawn(process.execPath, ['--input-type=module', '-e', script, pathToFileURL(entry).href], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] }), 'import');
}

/** Runs one fresh process of `impl` for `batches` batches; toolrun runs the built entry when one is given. */
function child(impl: string, batches: number, toolrunEntry: string | undefined): Promise<Trace> {
  const args = ['--import', 'tsx', CHILD, impl, String(batches), ...(impl === 'toolrun' && toolrunEntry !== undefined ? [toolrunEntry] : [])];
  return collect(spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] }), impl);
}

/** The last line of a child's output, parsed; rejects when it exits with an error. */
function collect<T>(proc: ReturnType<typeof spawn>, impl: string): Promise<T> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    proc.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
    proc.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
    proc.on('error', reject);
    proc.on('close', (code) => {
      if (code !== 0) reject(new Error(`cold-start child ${impl} exited ${String(code)}: ${err.trim().split('\n').slice(-3).join(' ')}`));
      else resolve(JSON.parse(out.trim().split('\n').at(-1)!) as T);
    });
  });
}

/** The points of the curve: k = 1, 2, 3, 5, 10, 20, 30, 50, 100, 200, 300, 500, 1,000… up to `batches`. */
function points(batches: number): number[] {
  const out: number[] = [];
  for (let decade = 1; decade <= batches; decade *= 10) for (const m of [1, 2, 3, 5]) if (m * decade <= batches) out.push(m * decade);
  if (out.at(-1) !== batches) out.push(batches);
  return out;
}

function sum(values: readonly number[], k: number): number {
  let total = 0;
  for (let i = 0; i < k; i++) total += values[i]!;
  return total;
}

/**
 * Runs `cold-start`: `sizes[0]` batches per process (default 100), `runs` processes per
 * implementation (default 7: the spread between fresh processes is wide, 42…72 µs/call for
 * the same code in one run of 5, so the median needs more of them; about 40 s in all on a
 * quiet machine, estimated from 25 s for 15 processes).
 */
export async function coldStart(budget: Budget, options: ScenarioOptions & { runs?: number } = {}): Promise<ScenarioResult> {
  const batches = options.sizes?.[0] ?? COLD_START_SIZES[0];
  const runs = options.runs ?? Math.max(3, 2 * budget.repeats + 1);
  const impls = [
    { key: 'toolrun', name: IMPL.toolrun },
    ...(peersInstalled() ? [{ key: 'pi', name: IMPL.pi }] : []),
    { key: 'floor', name: IMPL.floor },
  ];
  const traces = new Map<string, Trace[]>(impls.map((i) => [i.name, []]));
  const failed = new Map<string, string>();
  const message = (error: unknown): string => (error instanceof Error ? error.message : String(error));
  let entry: string | undefined;
  try {
    options.log?.('cold-start: building the library (tsdown, no declarations)');
    entry = await buildLibrary();
  } catch (error) {
    failed.set(IMPL.toolrun, `the library build failed: ${message(error)}`);
  }
  const imports: { cpu: number; wall: number }[] = [];
  for (let r = 0; r < runs; r++) {
    if (entry !== undefined) {
      try {
        imports.push(await importTime(entry));
      } catch (error) {
        failed.set(IMPL.toolrun, message(error));
      }
    }
    for (const impl of impls) {
      if (failed.has(impl.name)) continue;
      options.log?.(`cold-start ${impl.key} process ${r + 1}/${runs}`);
      try {
        traces.get(impl.name)!.push(await child(impl.key, batches, entry));
      } catch (error) {
        failed.set(impl.name, message(error));
      }
    }
  }
  const ks = points(batches);
  /** CPU ns per call over the first k batches, per process. */
  const cumulative = (name: string, k: number): number[] => traces.get(name)!.map((t) => sum(t.cpu, k) / (k * N));
  const rows: Row[] = [];
  const pi = failed.has(IMPL.pi) ? undefined : impls.find((i) => i.key === 'pi')?.name;
  for (const impl of impls) {
    const error = failed.get(impl.name);
    if (error !== undefined) {
      rows.push({ scenario: 'cold-start', series: SERIES, impl: impl.name, n: batches, unit: 'µs/call (CPU)', value: null, chart: null, cols: {}, note: `failed: ${error}` });
      continue;
    }
    for (const k of ks) {
      const per = cumulative(impl.name, k);
      const value = median(per);
      const cols: Record<string, string> = {
        'batch k, µs/call': formatNum(median(traces.get(impl.name)!.map((t) => t.cpu[k - 1]! / N)) / 1e3),
      };
      if (pi !== undefined) cols['× pi-agent-core'] = formatRatio(value / median(cumulative(pi, k)));
      if (k === 1) cols['first batch, wall'] = `${formatNum(median(traces.get(impl.name)!.map((t) => t.wall[0]!)) / 1e6)} ms`;
      if (k === 1 && impl.key === 'toolrun' && imports.length > 0) {
        cols['import, CPU (wall)'] = `${formatNum(median(imports.map((i) => i.cpu)) / 1e6)} ms (${formatNum(median(imports.map((i) => i.wall)) / 1e6)} ms)`;
      }
      rows.push({
        scenario: 'cold-start',
        series: SERIES,
        impl: impl.name,
        n: k,
        unit: 'µs/call (CPU)',
        value: value / 1e3,
        lo: Math.min(...per) / 1e3,
        hi: Math.max(...per) / 1e3,
        samples: per.length,
        chart: value,
        cols,
      });
    }
  }
  return {
    name: 'cold-start',
    title: 'cold start: the first batches of a fresh process, N = 10',
    description:
      `Each implementation in fresh processes of its own (${formatInt(runs)} each, interleaved): the process imports its modules, then runs ${formatInt(batches)} batches ` +
      'of 10 calls whose tool returns `{ content, details }`, one after the other, as an agent runs one batch per turn. ' +
      'Value: CPU µs per call over the first k batches together (k on the x axis), median over the processes, range the lowest and highest process; ' +
      '`batch k` is the k-th batch alone. The module import is not timed; pi-agent-core is timed from its first `tool_execution_start` to `turn_end`. ' +
      '`first batch, wall` is the first batch\'s latency (wall time). toolrun runs as the package build makes it (the library built with its tsdown configuration, without declarations); ' +
      '`import, CPU (wall)` is `import \'toolrun\'` of that build in a plain `node` process, its dependencies included (median over one process per round). ' +
      'The chart is the curve at every k from 1 to the last batch: CPU µs per call over the first k batches, against k, with pi-agent-core\'s curve halved (dashed) as the line toolrun\'s must stay under for the 2× target.',
    chartLabel: 'CPU µs per call over the first k batches',
    xLabel: 'k (batches)',
    rows,
    targets: coldTargets(rows, batches, pi),
    curve: curve(impls.filter((i) => !failed.has(i.name)).map((i) => i.name), batches, cumulative, pi),
  };
}

/**
 * The chart's curve: for every k from 1 to `batches`, each implementation's CPU µs per call
 * over the first k batches (median over its processes), and pi-agent-core's halved as the
 * line toolrun must stay under (the 2× target).
 */
function curve(names: readonly string[], batches: number, cumulative: (name: string, k: number) => number[], pi: string | undefined): NonNullable<ScenarioResult['curve']> {
  const out: NonNullable<ScenarioResult['curve']> = [];
  for (const name of names) for (let k = 1; k <= batches; k++) out.push({ impl: name, x: k, y: median(cumulative(name, k)) / 1e3 });
  if (pi !== undefined && names.includes(pi)) {
    for (let k = 1; k <= batches; k++) out.push({ impl: 'pi-agent-core ÷ 2 (the 2× target)', x: k, y: median(cumulative(pi, k)) / 2e3, reference: true });
  }
  return out;
}

function coldTargets(rows: readonly Row[], batches: number, pi: string | undefined): Target[] {
  const at = (impl: string, k: number) => rows.find((r) => r.impl === impl && r.n === k);
  const tr = at(IMPL.toolrun, 100);
  const p = pi !== undefined ? at(pi, 100) : undefined;
  const first = at(IMPL.toolrun, 1);
  const imported = first?.cols['import, CPU (wall)'];
  const firstText =
    first?.value != null ? `; toolrun's first batch: ${first.cols['first batch, wall']} wall, ${formatNum(first.value)} µs/call CPU${imported !== undefined ? `; import 'toolrun': ${imported}` : ''}` : '';
  if (batches < 100 || tr?.value == null || p?.value == null) return [{ target: TARGET, measured: `not measured in this run${firstText}`, met: null }];
  const x = p.value / tr.value;
  return [{ target: TARGET, measured: `toolrun ${formatNum(tr.value)} µs/call, pi-agent-core ${formatNum(p.value)} µs/call: ${formatRatio(x)} less${firstText}`, met: x >= 2 }];
}
