/**
 * Scenario 6, `abort`: time from `abort()` to the last result with N running calls, for
 * tools that honour their signal and for tools that ignore it (contract A2, A3).
 *
 * @module
 */
import { setMaxListeners } from 'node:events';
import { formatInt, formatNum, median, nowMs, tick, type Budget } from '../harness.ts';
import { loadPeers, type PiEvent } from '../peers.ts';
import { findRow, IMPL, type Row, type ScenarioOptions, type ScenarioResult, type Target } from '../rows.ts';
import { drain, makeCalls, makePiBatch, runPi, runToolrun, toolrunTool, type Body } from '../workload.ts';

export const ABORT_SIZES = [100, 1_000, 10_000] as const;
/** toolrun's `abortGraceMs` in this scenario (its default). */
const GRACE_MS = 100;
/** When tools ignore the signal, the bench lets them finish this long after `abort()`. */
const HOLD_MS = 500;

type Kind = 'cooperative' | 'ignores signal';

interface Gate {
  entered: number;
  release: Promise<void>;
}

/** A body that waits until its signal aborts, then throws the reason. */
function cooperativeBody(state: Gate): Body {
  return async function* (_args, { signal }) {
    state.entered++;
    await new Promise<void>((_resolve, reject) => {
      if (signal.aborted) reject(signal.reason);
      else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
    });
    return 'unreachable';
  };
}

/** A body that ignores its signal and waits for the bench's release. */
function ignoringBody(state: Gate): Body {
  return async function* () {
    state.entered++;
    await state.release;
    return 'late';
  };
}

/**
 * One run: start `n` calls, wait until all are in their bodies, abort, and return the ms
 * from `abort()` to the last result. `start` gets the body, the signal and a callback to
 * call at each result; it resolves when the run is over.
 */
async function oneRun(
  n: number,
  kind: Kind,
  holdMs: number,
  start: (body: Body, signal: AbortSignal, onResult: () => void) => Promise<void>,
): Promise<{ abortMs: number; rampMs: number }> {
  let release!: () => void;
  const state: Gate = { entered: 0, release: new Promise<void>((resolve) => (release = resolve)) };
  const controller = new AbortController();
  setMaxListeners(0, controller.signal); // pi-agent-core and the floor hand one signal to every tool
  let last = 0;
  const body = kind === 'cooperative' ? cooperativeBody(state) : ignoringBody(state);
  const started = nowMs();
  const done = start(body, controller.signal, () => (last = nowMs()));
  while (state.entered < n) await tick();
  const t0 = nowMs();
  controller.abort();
  let timer: ReturnType<typeof setTimeout> | undefined;
  if (kind === 'ignores signal') timer = setTimeout(release, holdMs);
  await done;
  clearTimeout(timer);
  release();
  return { abortMs: last - t0, rampMs: t0 - started };
}

/** Runs `abort` at `sizes` running calls (default 100, 1,000, 10,000). */
export async function abort(budget: Budget, options: ScenarioOptions & { holdMs?: number } = {}): Promise<ScenarioResult> {
  const sizes = options.sizes ?? ABORT_SIZES;
  const holdMs = options.holdMs ?? HOLD_MS;
  const peers = await loadPeers();
  const rows: Row[] = [];
  for (const kind of ['cooperative', 'ignores signal'] as const) {
    for (const n of sizes) {
      options.log?.(`abort ${kind} N=${formatInt(n)}`);
      const calls = makeCalls(n);
      const impls: { name: string; start: (body: Body, signal: AbortSignal, onResult: () => void) => Promise<void>; note?: string }[] = [
        {
          name: IMPL.toolrun,
          start: (body, signal, onResult) =>
            runToolrun(calls, { tools: [toolrunTool(body)], maxConcurrency: Infinity, signal, abortGraceMs: GRACE_MS }, (e) => {
              if (e.type === 'tool_result') onResult();
            }),
        },
      ];
      if (kind === 'cooperative') {
        impls.push({
          name: IMPL.floor,
          start: async (body, signal, onResult) => {
            const ctx = { signal };
            await Promise.allSettled(calls.map((c) => drain(body(c.arguments as { i: number }, ctx))));
            onResult();
          },
        });
      }
      if (peers !== undefined) {
        impls.push({
          name: IMPL.pi,
          start: async (body, signal, onResult) => {
            const batch = makePiBatch(peers, n, body);
            await runPi(peers, batch, {
              mode: 'parallel',
              signal,
              onEvent: (e: PiEvent) => {
                if (e.type === 'message_end' && e.message?.role === 'toolResult') onResult();
              },
            });
          },
          ...(kind === 'ignores signal' ? { note: `no grace period: waits for every tool (the bench releases them ${formatInt(holdMs)} ms after abort)` } : {}),
        });
      }
      const times = new Map<string, number[]>(impls.map((x) => [x.name, []]));
      const ramps = new Map<string, number[]>(impls.map((x) => [x.name, []]));
      for (let r = 0; r < budget.repeats; r++) {
        for (let k = 0; k < impls.length; k++) {
          const impl = impls[(k + r) % impls.length]!;
          const one = await oneRun(n, kind, holdMs, impl.start);
          times.get(impl.name)!.push(one.abortMs);
          ramps.get(impl.name)!.push(one.rampMs);
        }
      }
      for (const impl of impls) {
        const t = times.get(impl.name)!;
        const value = median(t);
        rows.push({
          scenario: 'abort',
          series: kind,
          impl: impl.name,
          n,
          unit: 'ms to last result',
          value,
          lo: Math.min(...t),
          hi: Math.max(...t),
          samples: t.length,
          chart: (value * 1e6) / n,
          cols: { 'µs/call': formatNum((value * 1e3) / n), 'start → all running, ms': formatNum(median(ramps.get(impl.name)!)) },
          ...(impl.note !== undefined ? { note: impl.note } : {}),
        });
      }
    }
  }
  return {
    name: 'abort',
    title: 'abort: from abort() to the last result',
    description:
      'N calls all running (every body entered), then the run\'s AbortSignal is aborted; value: median ms from `abort()` ' +
      'to the last result (toolrun: last `tool_result`; pi-agent-core: last toolResult `message_end`; floor: the bodies under `Promise.allSettled`, settled). ' +
      '`cooperative` bodies reject with the signal\'s reason; `ignores signal` bodies wait for the bench, which lets them go ' +
      `${formatInt(holdMs)} ms after the abort. toolrun runs with \`abortGraceMs: ${GRACE_MS}\` (its default): it answers ` +
      'a tool that ignores the signal after the grace period. `start → all running` is how long the batch took to get every ' +
      'call into its body: cooperative bodies add an abort listener, and on Node 20 `addEventListener` walks the signal\'s ' +
      'listener list, so N tools listening on one shared signal (pi-agent-core, the floor) cost O(N²) to start ' +
      '(10,000: 0.4 s; 40,000: 5.7 s measured alone), while toolrun gives each call its own signal. The chart shows ns per call (total / N).',
    chartLabel: 'ns per call (abort to last result / N)',
    rows,
    targets: abortTargets(rows, sizes, holdMs),
  };
}

function abortTargets(rows: Row[], sizes: readonly number[], holdMs: number): Target[] {
  const n = sizes.includes(10_000) ? 10_000 : sizes[sizes.length - 1]!;
  const coop = findRow(rows, 'cooperative', IMPL.toolrun, n);
  const ign = findRow(rows, 'ignores signal', IMPL.toolrun, n);
  return [
    {
      target: `abort, ${formatInt(n)} running calls that ignore their signal: last result bounded by the grace period (${GRACE_MS} ms) plus processing`,
      measured:
        ign?.value != null
          ? `${formatNum(ign.value)} ms (cooperative: ${coop?.value != null ? formatNum(coop.value) : '–'} ms)`
          : 'not measured in this run',
      met: ign?.value != null ? ign.value < holdMs : null,
    },
  ];
}
