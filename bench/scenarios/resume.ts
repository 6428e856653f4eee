/**
 * Scenario `resume`: what pausing a batch for approval and resuming it cost, next to a plain
 * run of the same calls (the target: resume ≤ 3× a plain run).
 *
 * One batch of N `{ content, details }` calls to one tool. `plain`: the tool needs no
 * approval. `pause`: the tool's `needsApproval` is `true` and there is no `approve` option,
 * so every call is deferred and the batch ends paused with its state (CPU of the whole run,
 * the state built). `resume`: a run given that state and an approval for every call, which
 * runs them all (CPU of the resumed run only; the pause that made its state is not timed);
 * from the state object as `ToolBatch.paused.state` gives it, and from its JSON text. The
 * signed rows do the same with a `signingSecret` (HMAC-SHA256) and `inMemoryClaim()`.
 *
 * @module
 */
import { defineTool, inMemoryClaim, runTools, type RunToolsOptions, type Tool, type ToolApprovalResponse, type ToolBatch } from '../../lib/index.ts';
import { compare, cpuNs, formatInt, formatNum, formatRatio, nowNs, type Budget, type Case, type Window } from '../harness.ts';
import { findRow, IMPL, type Row, type ScenarioOptions, type ScenarioResult, type Target } from '../rows.ts';
import { detailsBody, makeCalls, runToolrun, toolrunTool } from '../workload.ts';

export const RESUME_SIZES = [1_000] as const;
const SECRET = 'bench-secret-bench-secret-bench-secret';
/** The cases the targets read. */
const TARGET_CASES = ['toolrun: plain run', 'toolrun: resume (state object)', 'toolrun: resume, signed (state object)'];

async function drain(run: AsyncGenerator<unknown, ToolBatch, undefined>): Promise<ToolBatch> {
  for (;;) {
    const step = await run.next();
    if (step.done === true) return step.value;
  }
}

/** Runs `resume` at `sizes` (default 1,000 calls). */
export async function resume(budget: Budget, options: ScenarioOptions = {}): Promise<ScenarioResult> {
  const sizes = options.sizes ?? RESUME_SIZES;
  const plainTool = toolrunTool(detailsBody);
  const base = plainTool as Tool;
  const gated: Tool = defineTool({ name: base.name, input: base.input as never, needsApproval: true, execute: base.execute as never });
  const rows: Row[] = [];
  for (const n of sizes) {
    options.log?.(`resume N=${formatInt(n)}`);
    const calls = makeCalls(n);
    const pauseOptions = (signed: boolean): RunToolsOptions => ({ tools: [gated], maxConcurrency: Infinity, ...(signed ? { signingSecret: SECRET } : {}) });
    const pause = async (signed: boolean) => {
      const batch = await drain(runTools(calls, pauseOptions(signed)));
      if (batch.paused === undefined) throw new Error('the batch did not pause');
      return batch.paused;
    };
    const resumeCase = (signed: boolean, asText: boolean) => async (): Promise<Window> => {
      const paused = await pause(signed);
      const approvals: ToolApprovalResponse[] = paused.requests.map((r) => ({ approvalId: r.approvalId, approved: true }));
      const state = asText ? JSON.stringify(paused.state) : paused.state;
      const c0 = cpuNs();
      const t0 = nowNs();
      const batch = await drain(
        runTools(calls, { ...pauseOptions(signed), resume: { state: state as never, approvals, ...(signed ? { claim: inMemoryClaim() } : {}) } }),
      );
      const window = { cpu: cpuNs() - c0, wall: nowNs() - t0 };
      if (batch.paused !== undefined || batch.messages.length !== n) throw new Error('the resumed batch did not complete');
      return window;
    };
    const cases: Case[] = [
      { name: 'toolrun: plain run', run: () => runToolrun(calls, { tools: [plainTool], maxConcurrency: Infinity }) },
      { name: 'toolrun: pause', run: async () => void (await pause(false)) },
      { name: 'toolrun: resume (state object)', run: resumeCase(false, false) },
      { name: 'toolrun: resume (state text)', run: resumeCase(false, true) },
      { name: 'toolrun: pause, signed', run: async () => void (await pause(true)) },
      { name: 'toolrun: resume, signed (state object)', run: resumeCase(true, false) },
    ];
    // A repeat run (bench/runs.ts) measures what the targets read: the plain run and the two resumes from the object.
    const timings = await compare(options.targetsOnly === true ? cases.filter((c) => TARGET_CASES.includes(c.name)) : cases, budget);
    const plain = timings.get('toolrun: plain run');
    for (const c of cases) {
      const t = timings.get(c.name);
      if (t === undefined) continue;
      if ('error' in t) {
        rows.push({ scenario: 'resume', series: 'N calls, all approved', impl: c.name, n, unit: 'µs/call (CPU)', value: null, chart: null, cols: {}, note: `failed: ${t.error}` });
        continue;
      }
      rows.push({
        scenario: 'resume',
        series: 'N calls, all approved',
        impl: c.name,
        n,
        unit: 'µs/call (CPU)',
        value: t.median / n / 1e3,
        lo: t.lo / n / 1e3,
        hi: t.hi / n / 1e3,
        samples: t.samples,
        chart: t.median / n,
        cols: { '× plain run': plain !== undefined && !('error' in plain) ? formatRatio(t.median / plain.median) : '–' },
      });
    }
  }
  return {
    name: 'resume',
    title: 'resume: pausing a batch for approval and resuming it',
    description:
      'One batch of N calls whose tool returns `{ content, details }`. `plain run`: no approval. `pause`: the tool needs approval and nobody answers, so the batch ends paused (its state built). ' +
      '`resume`: the resumed run with every call approved (only the resumed run is timed), from the state object and from its JSON text; `signed`: with a `signingSecret` (HMAC-SHA256) and `inMemoryClaim()`. ' +
      `Value: median CPU µs per call; \`× plain run\` compares with the plain run of the same calls. (${IMPL.toolrun} only: no peer pauses a batch.)`,
    chartLabel: 'ns per call',
    rows,
    targets: resumeTargets(rows),
  };
}

function resumeTargets(rows: readonly Row[]): Target[] {
  const n = rows[0]?.n ?? 0;
  const plain = findRow(rows, 'N calls, all approved', 'toolrun: plain run', n);
  const out: Target[] = [];
  for (const name of ['toolrun: resume (state object)', 'toolrun: resume, signed (state object)']) {
    const target = `${name.slice(9)}, N = ${formatInt(n)}: at most 3× the CPU of a plain run`;
    const r = findRow(rows, 'N calls, all approved', name, n);
    if (plain?.value == null || r?.value == null) out.push({ target, measured: 'not measured in this run', met: null });
    else {
      const x = r.value / plain.value;
      out.push({ target, measured: `${formatNum(r.value)} vs ${formatNum(plain.value)} µs/call: ${formatRatio(x)}`, met: x <= 3, x, bound: { op: '<=', limit: 3 } });
    }
  }
  return out;
}
