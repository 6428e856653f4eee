/**
 * Property tests of human approval across pauses (contract H1–H7): random batches
 * of 1–8 calls over tools that need approval (always, or by a function of the input, sync or
 * async), a `beforeToolCall` that defers, blocks or allows, exclusive tools, failing tools,
 * unknown tools and broken arguments, in both modes; random decisions per request (approve
 * or deny) and random pause points (a request may stay unanswered for 0–2 resumes).
 *
 * Each case runs twice. The reference run answers every request in process with `approve`.
 * The paused run has no `approve`: each time the batch pauses, its state goes through
 * `JSON.stringify`/`JSON.parse` (sometimes signed, sometimes as text) — or, sometimes, is
 * given back as the very object the batch returned, whose body was kept in this process
 * (fails if that body differs from its payload's parse anywhere it is read) — and is resumed
 * with the decisions that are due. The two must give the same final `messages`, the `tool_result`
 * events of all the paused runs together must be those messages in call order, no call may
 * execute twice (counted per call across every run), the same calls must execute, and every
 * hook must run as often per call as in the reference (at most once). A second resume of a
 * state, and a resume with an unknown approvalId, must fail with the documented codes
 * without touching anything.
 *
 * `TOOLRUN_APPROVAL_RUNS` sets the number of cases (default 300); a failure prints
 * fast-check's seed and path (replay with `TOOLRUN_PROPERTY_SEED` / `TOOLRUN_PROPERTY_PATH`).
 */
import fc from 'fast-check';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import {
  defineTool,
  inMemoryClaim,
  ResumeError,
  runTools,
  type PausedBatchState,
  type RunToolsOptions,
  type Tool,
  type ToolApprovalRequest,
  type ToolApprovalResponse,
  type ToolBatch,
  type ToolCall,
  type ToolEvent,
  type ToolResultMessage,
} from '../../lib/index.ts';
import { bodyOf } from '../fixtures/approval/state.ts';

const numRuns = Number(process.env.TOOLRUN_APPROVAL_RUNS ?? 300);
const seed = process.env.TOOLRUN_PROPERTY_SEED !== undefined ? Number(process.env.TOOLRUN_PROPERTY_SEED) : process.env.CI === 'true' ? 20_261_201 : undefined;
const path = process.env.TOOLRUN_PROPERTY_PATH;

const KINDS = ['plain', 'always', 'byInput', 'byInputAsync', 'exclusive', 'exclusiveAlways', 'failing', 'unknown', 'broken'] as const;
type Kind = (typeof KINDS)[number];

interface CallSpec {
  kind: Kind;
  /** The call's argument; the hook defers calls whose n % 3 === 0 and blocks n === 7; byInput tools ask when n is even. */
  n: number;
  /** Microtasks the tool waits before it returns. */
  jitter: number;
}

interface Decision {
  approve: boolean;
  /** How many resumes the request stays unanswered before this decision is given. */
  rounds: number;
}

interface Scenario {
  mode: 'parallel' | 'sequential';
  maxConcurrency: number;
  hookDefers: boolean;
  calls: CallSpec[];
  /** Per call: the decision on the tool's request, and on the hook's. */
  decisions: { tool: Decision; hook: Decision }[];
  signed: boolean;
  asText: boolean;
  /** Not as text: the state object the batch returned itself, not its JSON copy. */
  sameObject: boolean;
  /** The hook and the reference's approve answer with a promise. */
  asyncHooks: boolean;
  /** The first run reads its calls from an async iterable (S4). */
  streamed: boolean;
}

const decision = fc.record({ approve: fc.boolean(), rounds: fc.nat({ max: 2 }) });
const scenario: fc.Arbitrary<Scenario> = fc.integer({ min: 1, max: 8 }).chain((count) =>
  fc.record({
    mode: fc.constantFrom('parallel' as const, 'sequential' as const),
    maxConcurrency: fc.constantFrom(1, 2, 4, Infinity),
    hookDefers: fc.boolean(),
    calls: fc.array(fc.record({ kind: fc.constantFrom(...KINDS), n: fc.nat({ max: 9 }), jitter: fc.nat({ max: 4 }) }), { minLength: count, maxLength: count }),
    decisions: fc.array(fc.record({ tool: decision, hook: decision }), { minLength: count, maxLength: count }),
    signed: fc.boolean(),
    asText: fc.boolean(),
    sameObject: fc.boolean(),
    asyncHooks: fc.boolean(),
    streamed: fc.boolean(),
  }),
);

/** Counters shared by one flow's runs (the reference, or the paused one): per call index. */
class Counts {
  readonly executed = new Map<number, number>();
  readonly hooks = new Map<number, number>();
  readonly rules = new Map<number, number>();
  bump(map: Map<number, number>, index: number): void {
    map.set(index, (map.get(index) ?? 0) + 1);
  }
}

async function jitter(turns: number): Promise<void> {
  for (let i = 0; i < turns; i++) await Promise.resolve();
}

/** The scenario's tools, counting into `counts`. */
function toolsFor(counts: Counts): Tool[] {
  const input = v.object({ n: v.number(), jitter: v.number() });
  const body = (label: string) => async (args: { n: number; jitter: number }, context: { index: number }) => {
    counts.bump(counts.executed, context.index);
    await jitter(args.jitter);
    return `${label} ${args.n}`;
  };
  const rule = (async: boolean) => (args: { n: number }, context: { index: number }) => {
    counts.bump(counts.rules, context.index);
    return async ? Promise.resolve(args.n % 2 === 0) : args.n % 2 === 0;
  };
  return [
    defineTool({ name: 'plain', input, execute: body('plain') }),
    defineTool({ name: 'always', input, needsApproval: true, execute: body('always') }),
    defineTool({ name: 'byInput', input, needsApproval: rule(false), execute: body('byInput') }),
    defineTool({ name: 'byInputAsync', input, needsApproval: rule(true), execute: body('byInputAsync') }),
    defineTool({ name: 'exclusive', input, executionMode: 'sequential', execute: body('exclusive') }),
    defineTool({ name: 'exclusiveAlways', input, executionMode: 'sequential', needsApproval: true, execute: body('exclusiveAlways') }),
    defineTool({
      name: 'failing',
      input,
      execute: async (args, context) => {
        counts.bump(counts.executed, context.index);
        await jitter(args.jitter);
        throw new Error(`failing ${args.n}`);
      },
    }),
  ];
}

function callsOf(sc: Scenario): ToolCall[] {
  return sc.calls.map((c, i) => ({
    id: `call_${i}`,
    name: c.kind === 'broken' ? 'plain' : c.kind,
    arguments: c.kind === 'broken' ? '{"n": 1,' : i % 2 === 0 ? { n: c.n, jitter: c.jitter } : JSON.stringify({ n: c.n, jitter: c.jitter }),
  }));
}

function optionsFor(sc: Scenario, counts: Counts): RunToolsOptions {
  return {
    tools: toolsFor(counts),
    mode: sc.mode,
    maxConcurrency: sc.maxConcurrency,
    beforeToolCall: ({ index, args }) => {
      counts.bump(counts.hooks, index);
      const n = (args as { n: number }).n;
      const answer = n === 7 ? { block: true, reason: 'Seven is blocked.' } : sc.hookDefers && n % 3 === 0 ? { needsApproval: true, reason: `Check ${n}.` } : undefined;
      return sc.asyncHooks ? Promise.resolve(answer) : answer;
    },
  };
}

function decisionFor(sc: Scenario, request: ToolApprovalRequest): Decision {
  return sc.decisions[request.index]![request.source];
}

function respond(sc: Scenario, request: ToolApprovalRequest): ToolApprovalResponse {
  const d = decisionFor(sc, request);
  return { approvalId: request.approvalId, approved: d.approve, reason: d.approve ? undefined : `No to ${request.index}.` } as ToolApprovalResponse;
}

async function* streamOf(calls: ToolCall[]): AsyncGenerator<ToolCall> {
  for (const c of calls) {
    await Promise.resolve();
    yield c;
  }
}

async function drain(run: AsyncGenerator<ToolEvent, ToolBatch, undefined>): Promise<{ events: ToolEvent[]; batch: ToolBatch }> {
  const events: ToolEvent[] = [];
  for (;;) {
    const step = await run.next();
    if (step.done === true) return { events, batch: step.value };
    events.push(step.value);
  }
}

async function resumeError(run: AsyncGenerator<ToolEvent, ToolBatch, undefined>): Promise<string> {
  try {
    await run.next();
  } catch (error) {
    if (error instanceof ResumeError) return error.code;
    throw error;
  }
  throw new Error('the resume did not fail');
}

const SECRET = 'property secret';

/** What the generated cases reached (the checks can only fail on cases that reach them). */
const reached = { paused: 0, pausedTwice: 0, carried: 0, denied: 0, parallelMany: 0 };

async function runScenario(sc: Scenario): Promise<void> {
  const calls = callsOf(sc);

  // The reference: one uninterrupted run whose approve gives every decision at once.
  const ref = new Counts();
  const reference = await drain(runTools(calls, { ...optionsFor(sc, ref), approve: (request) => (sc.asyncHooks ? Promise.resolve(respond(sc, request)) : respond(sc, request)) }));
  expect(reference.batch.paused).toBeUndefined();

  // The paused flow: no approve; each pause goes through JSON and resumes with the decisions due.
  const counts = new Counts();
  const waited = new Map<string, number>();
  const released: ToolResultMessage[] = [];
  let resume: RunToolsOptions['resume'];
  // One store for the scenario: a claim is required with signingSecret (H7).
  const claim = inMemoryClaim();
  let finalBatch: ToolBatch | undefined;
  for (let round = 0; round < 20; round++) {
    const options = { ...optionsFor(sc, counts), ...(sc.signed ? { signingSecret: SECRET } : {}), ...(resume ? { resume: { ...resume, claim } } : {}) };
    const input = sc.streamed && round === 0 ? streamOf(calls) : calls;
    const { events, batch } = await drain(runTools(input, options));
    for (const e of events) if (e.type === 'tool_result') released.push(e.message);
    // Every released result so far is the reference's, in call order.
    expect(released).toEqual(reference.batch.messages.slice(0, released.length));
    if (batch.paused === undefined) {
      finalBatch = batch;
      break;
    }
    const { requests, state } = batch.paused;
    reached.paused++;
    if (round > 0) reached.pausedTwice++;
    const body = bodyOf(state);
    if (body.calls.some((c, i) => c.result !== undefined && i > body.released)) reached.carried++;
    if (requests.length > 1) reached.parallelMany++;
    expect(batch.messages).toEqual(reference.batch.messages.slice(0, batch.messages.length));
    expect(requests.length).toBeGreaterThan(0);
    expect(requests.map((r) => r.index)).toEqual([...requests.map((r) => r.index)].sort((a, b) => a - b));
    if (sc.mode === 'sequential') expect(requests).toHaveLength(1);
    const text = JSON.stringify(state);
    const copy = JSON.parse(text) as PausedBatchState;
    const approvals: ToolApprovalResponse[] = [];
    for (const request of requests) {
      const key = `${request.index}:${request.source}`;
      const seen = waited.get(key) ?? 0;
      if (seen < decisionFor(sc, request).rounds) waited.set(key, seen + 1);
      else approvals.push(respond(sc, request));
    }
    if (approvals.some((a) => !a.approved)) reached.denied++;
    // A resume that fails its checks consumes nothing.
    const executedBefore = JSON.stringify([...counts.executed]);
    const unknown = resumeError(
      runTools(calls, { ...optionsFor(sc, counts), ...(sc.signed ? { signingSecret: SECRET } : {}), resume: { state: copy, approvals: [...approvals, { approvalId: 'not-a-request', approved: true }], claim } }),
    );
    expect(await unknown).toBe('approval');
    expect(JSON.stringify([...counts.executed])).toBe(executedBefore);
    resume = { state: sc.asText ? text : sc.sameObject ? state : copy, approvals };
    // The same state resumed twice: the second is refused (checked after the first below).
    const previous = resume;
    const next = await drain(runTools(calls, { ...optionsFor(sc, counts), ...(sc.signed ? { signingSecret: SECRET } : {}), resume: { ...previous, claim } }));
    for (const e of next.events) if (e.type === 'tool_result') released.push(e.message);
    expect(released).toEqual(reference.batch.messages.slice(0, released.length));
    expect(await resumeError(runTools(calls, { ...optionsFor(sc, counts), ...(sc.signed ? { signingSecret: SECRET } : {}), resume: { ...previous, claim } }))).toBe('already_resumed');
    if (next.batch.paused === undefined) {
      finalBatch = next.batch;
      break;
    }
    const nextState = next.batch.paused.state;
    resume = { state: sc.asText ? JSON.stringify(nextState) : sc.sameObject ? nextState : (JSON.parse(JSON.stringify(nextState)) as PausedBatchState), approvals: [] };
    // Those still pending are answered on the next round when due.
    for (const request of next.batch.paused.requests) {
      const key = `${request.index}:${request.source}`;
      const seen = waited.get(key) ?? 0;
      if (seen >= decisionFor(sc, request).rounds) (resume.approvals as ToolApprovalResponse[]).push(respond(sc, request));
      else waited.set(key, seen + 1);
    }
  }
  expect(finalBatch, 'the paused flow never completed').toBeDefined();
  expect(finalBatch!.messages).toEqual(reference.batch.messages);
  expect(finalBatch!.terminate).toBe(reference.batch.terminate);
  expect(released).toEqual(reference.batch.messages);
  // No call executed twice; the same calls executed; every hook ran as often as in the reference.
  for (const [index, n] of counts.executed) expect(n, `call ${index} executed ${n} times`).toBe(1);
  expect([...counts.executed.keys()].sort()).toEqual([...ref.executed.keys()].sort());
  expect(new Map([...counts.hooks].sort())).toEqual(new Map([...ref.hooks].sort()));
  expect(new Map([...counts.rules].sort())).toEqual(new Map([...ref.rules].sort()));
  for (const n of counts.hooks.values()) expect(n).toBe(1);
}

describe('approval property: pause + JSON + resume gives the uninterrupted run', () => {
  it(`H3, H4, H5, H7: ${numRuns} random batches, decisions and pause points: same messages as one run with approve, no call executed twice`, { timeout: 600_000 }, async () => {
    const parameters: fc.Parameters<[Scenario]> = { numRuns };
    if (seed !== undefined) parameters.seed = seed;
    if (path !== undefined) parameters.path = path;
    await fc.assert(fc.asyncProperty(scenario, runScenario), parameters);
    if (numRuns >= 100 && path === undefined) {
      for (const [key, count] of Object.entries(reached)) expect(count, `no generated case reached ${key}: ${JSON.stringify(reached)}`).toBeGreaterThan(0);
    }
  });
});
