/**
 * One attempt of a crash trial, as its own Node process: runs the workload (workload.ts) as a
 * durable batch or a durable three-turn agent run on an engine, printing a marker per
 * journal operation (probe.ts) and, when it finishes, one `done` marker with every result.
 * The driver (driver.ts) kills it with SIGKILL at some point and starts it again with the
 * next attempt number: the engine's journal must carry the run over.
 *
 * Configured by the `TOOLRUN_TRIAL` environment variable (JSON, {@link ChildConfig}).
 * Started as `node --import tsx spec/durable/child.ts`.
 *
 * @module
 */
import { writeSync } from 'node:fs';
import { join } from 'node:path';
import { runTools, type RunToolsOptions, type ToolCall, type ToolEvent, type ToolResultMessage } from '../../lib/index.ts';
import { runAgent, type AgentEvent } from '../../lib/extras/agent.ts';
import type { InterruptedCallPolicy } from '../../lib/core/seams/journal.ts';
import { openEngine, type EngineName, type TrialJournals } from './engines.ts';
import { Markers, probeAgentJournal, probeJournal, RawEnds, type Broken, type FreezeAt } from './probe.ts';
import { streamed, turnOf, workloadCalls, workloadModel, workloadOptions, workloadTools, type WorkloadContext } from './workload.ts';

/** What the driver tells one attempt. */
export interface ChildConfig {
  /** `'none'`: no journal at all (the clean run that gives the expected results). */
  engine: EngineName | 'none';
  mode: 'batch' | 'agent';
  /** The trial's folder: the side-effect log and any file the engine keeps. */
  dir: string;
  /** The durable run's id: the same in every attempt of a trial. */
  runId: string;
  attempt: number;
  /** Calls arrive from an async iterable instead of an array (batch mode). */
  stream: boolean;
  interruptedCalls: 'unknown' | 'run-again';
  broken?: Broken;
  freezeAt?: FreezeAt;
  /** The PostgreSQL server of the DBOS engine. */
  databaseUrl?: string;
}

/** What the `done` marker carries. */
export interface ChildOutcome {
  /** Batch: the batch's messages; agent: every tool result of every turn, in order. */
  results: ToolResultMessage[];
  /** Agent: the whole history `agent_end` carried; batch: absent. */
  history?: unknown[];
  /** `tool_result` events as `turn:index`, in the order they came. */
  order: string[];
  /** Calls whose `tool_execution_end` said `replayed: true`, as `turn:index`. */
  replayed: string[];
  /** `tool_execution_update` events of replayed calls. */
  replayedUpdates: number;
  /** Agent: why the run ended. */
  reason?: string;
}

const config = JSON.parse(process.env.TOOLRUN_TRIAL ?? '{}') as ChildConfig;
const markers = new Markers(config.freezeAt);
const ends = new RawEnds();
const w: WorkloadContext = {
  log: join(config.dir, 'effects.log'),
  attempt: config.attempt,
  // Kept per call id (unique across an agent's turns), for the broken journals of probe.ts.
  onRawEnd: (turn, index, raw) => {
    const id = workloadCalls(turn)[index]!.id;
    ends.raw.set(id, raw);
    ends.finished.push(id);
  },
  onToolDone: (turn, index) => markers.emit({ m: 'tool-done', t: turn, i: index }),
};

const outcome: ChildOutcome = { results: [], order: [], replayed: [], replayedUpdates: 0 };
const replayedIds = new Set<string>();

/** Folds one event of the run into {@link outcome}. */
function observe(event: ToolEvent | AgentEvent): void {
  if (event.type === 'tool_execution_end' && (event as { replayed?: boolean }).replayed === true) {
    outcome.replayed.push(`${turnOf(event.toolCallId)}:${event.index}`);
    replayedIds.add(event.toolCallId);
  } else if (event.type === 'tool_execution_update' && replayedIds.has(event.toolCallId)) {
    outcome.replayedUpdates++;
  } else if (event.type === 'tool_result') {
    outcome.order.push(`${turnOf(event.message.toolCallId)}:${event.index}`);
  }
}

const tools = workloadTools(w);
const options = workloadOptions(w);
const policy: InterruptedCallPolicy = config.interruptedCalls;
/** The durable run's body: the workload on `journals` (none for the clean run); returns what it saw. */
async function body(journals: TrialJournals | undefined): Promise<ChildOutcome> {
  if (config.mode === 'batch') {
    const calls = workloadCalls(0);
    const source: ToolCall[] | AsyncIterable<ToolCall> = config.stream ? streamed(calls) : calls;
    const journal = journals?.batch === undefined ? undefined : probeJournal(journals.batch, markers, ends, config.broken);
    const runOptions = { ...options, tools, ...(journal === undefined ? {} : { journal, interruptedCalls: policy }) } as RunToolsOptions;
    const run = runTools(source, runOptions);
    let step = await run.next();
    while (step.done !== true) {
      observe(step.value);
      step = await run.next();
    }
    outcome.results = step.value.messages;
    return outcome;
  }
  const journal = journals?.agent === undefined ? undefined : probeAgentJournal(journals.agent, markers, ends, config.broken);
  const run = runAgent({
    ...options,
    model: workloadModel(w),
    tools,
    messages: [{ role: 'user', content: 'Run the three batches.' }],
    ...(journal === undefined ? {} : { journal, interruptedCalls: policy }),
  } as unknown as Parameters<typeof runAgent>[0]);
  for await (const event of run) {
    observe(event);
    if (event.type === 'turn_end') outcome.results.push(...event.toolResults);
    if (event.type === 'agent_end') {
      outcome.history = event.messages;
      outcome.reason = event.reason;
    }
  }
  return outcome;
}

const engine = config.engine === 'none' ? undefined : await openEngine(config.engine, config);
let result: ChildOutcome;
try {
  result = engine === undefined ? await body(undefined) : await engine.run(config.mode, body);
} finally {
  await engine?.close();
}
writeSync(1, `@@ ${JSON.stringify({ m: 'done', outcome: result })}\n`);
