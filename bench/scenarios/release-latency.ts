/**
 * Scenario 4, `release-latency`: how soon a result message goes out once it may (contract
 * O2: result i is released as soon as calls 0..i have all ended).
 *
 * Calls have staggered durations: call i sleeps (N−i)·1 ms (`slowest first`: every result
 * waits for call 0, then all go out at once) or (i+1)·1 ms (`fastest first`: each call
 * ends in order and its result can go out at once). Each tool body writes down when it
 * ended; for call i the latency is the time from the moment calls 0..i have all ended to
 * the moment its result message reaches the consumer (toolrun: its `tool_result` event;
 * pi-agent-core: the `message_end` of its toolResult message, emitted after the whole
 * batch).
 *
 * @module
 */
import { formatInt, formatNum, median, nowMs, type Budget } from '../harness.ts';
import { loadPeers, type PiEvent } from '../peers.ts';
import { findRow, IMPL, type Row, type ScenarioOptions, type ScenarioResult, type Target } from '../rows.ts';
import { makeCalls, makePiBatch, runPi, runToolrun, toolrunTool, type Body } from '../workload.ts';

export const RELEASE_SIZES = [10, 100, 1_000] as const;

type Order = 'slowest first' | 'fastest first';

/** A body that sleeps `durationMs(i)` then records its end time in `ended[i]`. */
function timedBody(durationMs: (i: number) => number, ended: number[]): Body {
  return async function* ({ i }) {
    await new Promise((resolve) => setTimeout(resolve, durationMs(i)));
    ended[i] = nowMs();
    return 'ok';
  };
}

/** Per-call latencies (ms) of one run, from the tool end times and the emission times. */
function latencies(ended: readonly number[], emitted: readonly number[]): number[] {
  const out: number[] = [];
  let allEnded = -Infinity;
  for (let i = 0; i < ended.length; i++) {
    allEnded = Math.max(allEnded, ended[i]!);
    out.push(emitted[i]! - allEnded);
  }
  return out;
}

/** Runs `release-latency` at `sizes` calls (default 10, 100, 1,000), both orders. */
export async function releaseLatency(budget: Budget, options: ScenarioOptions = {}): Promise<ScenarioResult> {
  const sizes = options.sizes ?? RELEASE_SIZES;
  const peers = await loadPeers();
  const rows: Row[] = [];
  for (const order of ['slowest first', 'fastest first'] as const) {
    for (const n of sizes) {
      options.log?.(`release-latency ${order} N=${formatInt(n)}`);
      const duration = order === 'slowest first' ? (i: number) => n - i : (i: number) => i + 1;
      const impls: { name: string; once: () => Promise<number[]> }[] = [
        {
          name: IMPL.toolrun,
          once: async () => {
            const ended: number[] = new Array<number>(n);
            const emitted: number[] = new Array<number>(n);
            const tool = toolrunTool(timedBody(duration, ended));
            await runToolrun(makeCalls(n), { tools: [tool], maxConcurrency: Infinity }, (e) => {
              if (e.type === 'tool_result') emitted[e.index] = nowMs();
            });
            return latencies(ended, emitted);
          },
        },
      ];
      if (peers !== undefined) {
        impls.push({
          name: IMPL.pi,
          once: async () => {
            const ended: number[] = new Array<number>(n);
            const emitted: number[] = new Array<number>(n);
            const batch = makePiBatch(peers, n, timedBody(duration, ended));
            await runPi(peers, batch, {
              mode: 'parallel',
              onEvent: (e: PiEvent) => {
                if (e.type === 'message_end' && e.message?.role === 'toolResult') emitted[batch.ids.get(e.message.toolCallId ?? '')!] = nowMs();
              },
            });
            return latencies(ended, emitted);
          },
        });
      }
      // Two uncounted runs of each first: the release path of a 1,000-call burst runs a few
      // hundred times per repeat, so the first repeats measure V8's interpreter (3 repeats
      // alone read 1.8–4.7 ms for toolrun at N = 1,000, 10 read 0.43–3.1 falling). The other
      // scenarios time warmed code too; a fresh process's cost is the cold-start scenario's.
      for (let w = 0; w < 2; w++) for (const impl of impls) await impl.once();
      // Interleaved repeats; every call of every repeat is one latency sample.
      const all = new Map<string, number[]>(impls.map((x) => [x.name, []]));
      const runMedians = new Map<string, number[]>(impls.map((x) => [x.name, []]));
      for (let r = 0; r < budget.repeats; r++) {
        for (let k = 0; k < impls.length; k++) {
          const impl = impls[(k + r) % impls.length]!;
          const l = await impl.once();
          all.get(impl.name)!.push(...l);
          runMedians.get(impl.name)!.push(median(l));
        }
      }
      for (const impl of impls) {
        const l = all.get(impl.name)!;
        const rm = runMedians.get(impl.name)!;
        const med = median(l);
        rows.push({
          scenario: 'release-latency',
          series: order,
          impl: impl.name,
          n,
          unit: 'ms (median)',
          value: med,
          lo: Math.min(...rm),
          hi: Math.max(...rm),
          samples: l.length,
          chart: Math.max(med, 1e-6) * 1e6,
          cols: { 'p90 ms': formatNum(quantile(l, 0.9)), 'max ms': formatNum(Math.max(...l)), 'batch ms': formatInt(n) },
        });
      }
    }
  }
  return {
    name: 'release-latency',
    title: 'release-latency: from "calls 0..i have ended" to result i',
    description:
      'N calls with staggered durations: call i sleeps (N−i) ms (`slowest first`) or (i+1) ms (`fastest first`), all running at once. ' +
      'For each call, the latency is the time from the moment calls 0..i have all ended (each body records its end) ' +
      'to the moment its result message reaches the consumer: toolrun\'s `tool_result`, pi-agent-core\'s toolResult `message_end` ' +
      '(emitted after the whole batch). Each implementation first runs twice uncounted (warm-up). Value: median over every call of every repeat; `lo`/`hi` are the lowest and highest ' +
      'per-repeat medians; p90 and max over every call. The chart shows the median in ns.',
    chartLabel: 'median latency, ns',
    rows,
    targets: releaseTargets(rows, sizes),
  };
}

function quantile(values: readonly number[], q: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}

function releaseTargets(rows: Row[], sizes: readonly number[]): Target[] {
  const parts: string[] = [];
  let met = true;
  for (const order of ['slowest first', 'fastest first'] as Order[]) {
    for (const n of sizes) {
      const r = findRow(rows, order, IMPL.toolrun, n);
      if (r?.value == null) continue;
      parts.push(`${order} N=${formatInt(n)}: ${formatNum(r.value)} ms`);
      if (r.value >= 1) met = false;
    }
  }
  return [
    {
      target: 'release-latency: median under 1 ms for toolrun',
      measured: parts.length > 0 ? parts.join('; ') : 'not measured in this run',
      met: parts.length > 0 ? met : null,
    },
  ];
}
