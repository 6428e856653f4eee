/**
 * Scenario 5, `memory`: heap per in-flight call with N calls pending in one batch, and heap
 * growth over 10,000 runs on one long-lived AbortSignal (contract A6).
 *
 * Measured by hand, not with mitata (whose heap figure is allocation per iteration, not
 * what stays reachable): `gc()` twice, then `heapUsed`. The process runs with
 * `--expose-gc` (`bench/run.ts` re-executes itself with it).
 *
 * @module
 */
import { getEventListeners } from 'node:events';
import { getHeapStatistics } from 'node:v8';
import { formatInt, formatNum, formatRatio, median, settledHeap, tick, type Budget } from '../harness.ts';
import { loadPeers } from '../peers.ts';
import { findRow, IMPL, type Row, type ScenarioOptions, type ScenarioResult, type Target } from '../rows.ts';
import { makeCalls, makePiBatch, noopBody, runFloorParallel, runPi, runToolrun, toolrunTool, type Body } from '../workload.ts';

export const MEMORY_SIZES = [100_000] as const;
/** Runs on one signal for the growth check. */
const SIGNAL_RUNS = 10_000;
/**
 * Growth rate below which the heap "does not grow", in bytes per run: gc noise moves the
 * heap by tens of KB either way, which over 10,000 runs is a few bytes per run; the
 * smallest real leak (one listener or closure kept per run) is 100 bytes or more.
 */
const GROWTH_TOLERANCE = 8;

interface Pending {
  retained: number;
  peak: number;
  residual: number;
}

/** A body parked on `gate` until the bench opens it; counts entries and samples the heap. */
function parkedBody(state: { entered: number; peak: number; gate: Promise<void> }): Body {
  return async function* () {
    if ((++state.entered & 1023) === 0) state.peak = Math.max(state.peak, getHeapStatistics().used_heap_size);
    await state.gate;
    return 'ok';
  };
}

/**
 * One batch of `n` calls parked in their bodies: heap per call while all are pending
 * (retained, after gc), at the highest sample on the way (peak), and left after the run.
 */
async function pendingBatch(n: number, prepare: (body: Body) => () => Promise<void>): Promise<Pending> {
  let open!: () => void;
  const state = { entered: 0, peak: 0, gate: new Promise<void>((resolve) => (open = resolve)) };
  const start = prepare(parkedBody(state));
  const base = settledHeap();
  state.peak = base;
  const done = start();
  while (state.entered < n) await tick();
  for (let i = 0; i < 3; i++) await tick();
  state.peak = Math.max(state.peak, getHeapStatistics().used_heap_size);
  const pending = settledHeap();
  open();
  await done;
  const after = settledHeap();
  return { retained: (pending - base) / n, peak: (Math.max(state.peak, pending) - base) / n, residual: after - base };
}

/**
 * Heap growth over `runs` runs sharing one AbortSignal. The heap (after full gcs) is read
 * before and at four checkpoints; `slope` is the least-squares fit in bytes per run, which
 * a leak makes steadily positive and gc noise (tens of KB either way) does not.
 */
async function signalRuns(
  runOnce: (signal: AbortSignal) => Promise<unknown>,
  runs: number,
): Promise<{ growth: number; slope: number; listeners: number }> {
  const controller = new AbortController();
  const signal = controller.signal;
  // Warm-up: the first few thousand runs of any of these grow the heap by 100–150 KB once
  // (compiled code, feedback; measured with no signal at all), so the baseline comes after.
  for (let i = 0; i < Math.min(5_000, runs); i++) await runOnce(signal);
  const xs: number[] = [0];
  const ys: number[] = [settledHeap()];
  const step = Math.ceil(runs / 4);
  for (let done = 0; done < runs; ) {
    const upTo = Math.min(runs, done + step);
    for (; done < upTo; done++) await runOnce(signal);
    xs.push(done);
    ys.push(settledHeap());
  }
  return { growth: ys[ys.length - 1]! - ys[0]!, slope: slope(xs, ys), listeners: getEventListeners(signal, 'abort').length };
}

function slope(xs: readonly number[], ys: readonly number[]): number {
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
  const my = ys.reduce((a, b) => a + b, 0) / ys.length;
  let num = 0;
  let den = 0;
  for (let i = 0; i < xs.length; i++) {
    num += (xs[i]! - mx) * (ys[i]! - my);
    den += (xs[i]! - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

/** Runs `memory`: pending batches of `sizes` calls (default 10,000 and 100,000), then the signal check. */
export async function memory(budget: Budget, options: ScenarioOptions & { signalRuns?: number } = {}): Promise<ScenarioResult> {
  const sizes = options.sizes ?? MEMORY_SIZES;
  const runs = options.signalRuns ?? SIGNAL_RUNS;
  const peers = await loadPeers();
  const rows: Row[] = [];
  for (const n of sizes) {
    options.log?.(`memory pending N=${formatInt(n)}`);
    const calls = makeCalls(n);
    // Each `prepare` builds the input before the baseline (the caller holds it anyway) and
    // returns the function that starts the batch.
    const impls: { name: string; prepare: (body: Body) => () => Promise<void> }[] = [
      { name: IMPL.floor, prepare: (body) => () => runFloorParallel(calls, body) },
      {
        name: IMPL.toolrun,
        prepare: (body) => {
          const tools = [toolrunTool(body)];
          return () => runToolrun(calls, { tools, maxConcurrency: Infinity });
        },
      },
    ];
    if (peers !== undefined) {
      impls.push({
        name: IMPL.pi,
        prepare: (body) => {
          const batch = makePiBatch(peers, n, body);
          return async () => void (await runPi(peers, batch, { mode: 'parallel' }));
        },
      });
    }
    const results = new Map<string, Pending[]>(impls.map((x) => [x.name, []]));
    // Retained heap varies by well under 1 % between repeats: two are enough.
    for (let r = 0; r < Math.min(budget.repeats, 2); r++) {
      for (let k = 0; k < impls.length; k++) {
        const impl = impls[(k + r) % impls.length]!;
        results.get(impl.name)!.push(await pendingBatch(n, impl.prepare));
      }
    }
    const floor = median(results.get(IMPL.floor)!.map((p) => p.retained));
    for (const impl of impls) {
      const ps = results.get(impl.name)!;
      const retained = ps.map((p) => p.retained);
      const value = median(retained);
      rows.push({
        scenario: 'memory',
        series: 'pending batch',
        impl: impl.name,
        n,
        unit: 'B/call retained',
        value,
        lo: Math.min(...retained),
        hi: Math.max(...retained),
        samples: ps.length,
        chart: Math.max(value, 1),
        cols: {
          'peak B/call': formatInt(median(ps.map((p) => p.peak))),
          '× floor': formatRatio(value / floor),
          'left after run': `${formatNum(median(ps.map((p) => p.residual)) / 1024)} KB`,
        },
      });
    }
  }

  options.log?.(`memory: ${formatInt(runs)} runs on one AbortSignal`);
  const tool = toolrunTool(noopBody);
  const three = makeCalls(3);
  const signalImpls: { name: string; once: (signal: AbortSignal) => Promise<unknown> }[] = [
    { name: IMPL.floor, once: (signal) => runFloorParallel(three, noopBody, signal) },
    { name: IMPL.toolrun, once: (signal) => runToolrun(three, { tools: [tool], signal }) },
  ];
  if (peers !== undefined) {
    const batch = makePiBatch(peers, 3, noopBody);
    signalImpls.push({ name: IMPL.pi, once: (signal) => runPi(peers, batch, { mode: 'parallel', signal }) });
  }
  const growth = new Map<string, { growth: number; slope: number; listeners: number }[]>(signalImpls.map((x) => [x.name, []]));
  for (let r = 0; r < budget.repeats; r++) {
    for (let k = 0; k < signalImpls.length; k++) {
      const impl = signalImpls[(k + r) % signalImpls.length]!;
      growth.get(impl.name)!.push(await signalRuns(impl.once, runs));
    }
  }
  for (const impl of signalImpls) {
    const gs = growth.get(impl.name)!;
    const slopes = gs.map((x) => x.slope);
    rows.push({
      scenario: 'memory',
      series: `${formatInt(runs)} runs on one AbortSignal`,
      impl: impl.name,
      n: runs,
      unit: 'B/run heap growth (slope)',
      value: median(slopes),
      lo: Math.min(...slopes),
      hi: Math.max(...slopes),
      samples: gs.length,
      chart: null,
      cols: {
        'heap end − start': `${formatNum(median(gs.map((x) => x.growth)) / 1024)} KB`,
        'abort listeners left': String(Math.max(...gs.map((x) => x.listeners))),
      },
    });
  }
  return {
    name: 'memory',
    title: 'memory: heap per pending call, and over many runs on one signal',
    description:
      'Pending batch: N calls (all started at once) whose body waits on a gate the bench opens only after measuring. ' +
      'Retained = (heap with every call pending − heap before) / N, both after two full gcs; peak = highest heap sampled ' +
      'while the calls start, same baseline; “left after run” = heap after the run minus before. ' +
      `Long-lived signal: ${formatInt(runs)} runs of a 3-call batch passing the same AbortSignal (after 5,000 warm-up runs); ` +
      'the heap (after full gcs) is read before and at 4 checkpoints, and the value is the least-squares slope in bytes per run ' +
      `(gc noise is a few bytes per run either way; the target counts under ${GROWTH_TOLERANCE} B/run as no growth), with the ` +
      'abort listeners left on the signal. The chart shows retained bytes per call.',
    chartLabel: 'bytes retained per pending call',
    rows,
    targets: memoryTargets(rows, sizes, runs),
  };
}

function memoryTargets(rows: Row[], sizes: readonly number[], runs: number): Target[] {
  const out: Target[] = [];
  const n = sizes.includes(100_000) ? 100_000 : sizes[sizes.length - 1]!;
  const r = findRow(rows, 'pending batch', IMPL.toolrun, n);
  out.push({
    target: 'memory: under 2 KB retained per pending call (100,000 calls pending in one batch)',
    measured: r?.value != null ? `${formatInt(r.value)} B/call at N=${formatInt(n)} (peak ${r.cols['peak B/call']} B/call)` : 'not measured in this run',
    met: r?.value != null && n === 100_000 ? r.value < 2048 : null,
  });
  const s = findRow(rows, `${formatInt(runs)} runs on one AbortSignal`, IMPL.toolrun, runs);
  out.push({
    target: 'memory: no heap growth over 10,000 runs on one long-lived AbortSignal',
    measured:
      s?.value != null
        ? `${formatNum(s.value)} B/run (repeats ${formatNum(s.lo!)} … ${formatNum(s.hi!)}; heap end − start ${s.cols['heap end − start']}), ${s.cols['abort listeners left']} listeners left`
        : 'not measured in this run',
    met: s?.value != null && runs === SIGNAL_RUNS ? s.value < GROWTH_TOLERANCE && s.cols['abort listeners left'] === '0' : null,
  });
  return out;
}

