/**
 * Scenario `stream-start`: how soon a streamed call starts, and what starting calls while
 * the model is still streaming saves (contract S4; the stream adapters of
 * `lib/formats/*-stream.ts`).
 *
 * A synthetic assistant message of N tool calls is streamed live: one event every
 * `gapMs` ms (default 5 ms) on a wall-clock schedule — events arrive whether or not the
 * reader is ready, as over a socket — each call's arguments in `fragments` pieces (default
 * 8), as a model streams them. Measured:
 * - **start latency**: for each call, from the moment the source emitted the event that
 *   completes its arguments (Anthropic `content_block_stop`; OpenAI Chat: the next call's
 *   first delta, or `finish_reason`) to its `tool_execution_start` reaching the consumer —
 *   the adapter's and `runTools`' own cost; and from the call's *last argument fragment*,
 *   which adds the provider's wait for that completing event (one event gap).
 * - **time to the last result** (and the first): from the stream's start to the last
 *   `tool_result`, streaming (`runTools(fromAnthropicStream(stream))`) versus waiting for the
 *   full message first (the adapter drained into an array, then `runTools(array)`), with
 *   tools that sleep `toolMs` ms (default 50 ms) — run in parallel, or exclusive
 *   (`executionMode: 'sequential'`, e.g. file edits that must not overlap).
 *
 * @module
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { defineTool, fromAnthropicStream, fromOpenAIChatStream, runTools, type Tool, type ToolCall, type ToolCallStreamEnd } from '../../lib/index.ts';
import { formatInt, formatNum, median, nowMs, type Budget } from '../harness.ts';
import { findRow, IMPL, type Row, type ScenarioOptions, type ScenarioResult, type Target } from '../rows.ts';

/** Calls per streamed message in a default run (`--full` adds 64). */
export const STREAM_START_SIZES = [1, 4, 16] as const;

/** Options of {@link streamStart}: the sizes, plus the stream's pace and the tools' duration. */
export interface StreamStartOptions extends ScenarioOptions {
  /** Time between two stream events, in ms. @default 5 */
  gapMs?: number;
  /** Argument fragments per call. @default 8 */
  fragments?: number;
  /** How long each tool runs, in ms. @default 50 */
  toolMs?: number;
}

/** The implementation waiting for the whole message before running anything. */
const WAIT = 'toolrun after the full message';

type Adapter = (stream: AsyncIterable<unknown>) => AsyncGenerator<ToolCall, ToolCallStreamEnd, undefined>;

/** A scripted message: its events, and per call the index of its last fragment and of the event that completes it. */
interface Script {
  events: object[];
  lastFragment: number[];
  completing: number[];
}

function argumentsText(i: number): string {
  return JSON.stringify({ i, path: `src/module-${i}/index.ts`, note: 'x'.repeat(48) });
}

function split(text: string, parts: number): string[] {
  const size = Math.ceil(text.length / parts);
  return Array.from({ length: parts }, (_, k) => text.slice(k * size, (k + 1) * size));
}

function anthropicScript(n: number, fragments: number): Script {
  const events: object[] = [{ type: 'message_start', message: { id: 'msg_bench', type: 'message', role: 'assistant', content: [] } }];
  const lastFragment: number[] = [];
  const completing: number[] = [];
  for (let i = 0; i < n; i++) {
    events.push({ type: 'content_block_start', index: i, content_block: { type: 'tool_use', id: `toolu_${i}`, name: 'work', input: {} } });
    for (const part of split(argumentsText(i), fragments)) events.push({ type: 'content_block_delta', index: i, delta: { type: 'input_json_delta', partial_json: part } });
    lastFragment.push(events.length - 1);
    events.push({ type: 'content_block_stop', index: i });
    completing.push(events.length - 1);
  }
  events.push({ type: 'message_delta', delta: { stop_reason: 'tool_use' } }, { type: 'message_stop' });
  return { events, lastFragment, completing };
}

function chatScript(n: number, fragments: number): Script {
  const chunk = (delta: object, finish: string | null = null) => ({ object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] });
  const events: object[] = [chunk({ role: 'assistant', content: null })];
  const lastFragment: number[] = [];
  const completing: number[] = [];
  for (let i = 0; i < n; i++) {
    events.push(chunk({ tool_calls: [{ index: i, id: `call_${i}`, type: 'function', function: { name: 'work', arguments: '' } }] }));
    if (i > 0) completing.push(events.length - 1); // call i-1 is complete when call i begins
    for (const part of split(argumentsText(i), fragments)) events.push(chunk({ tool_calls: [{ index: i, function: { arguments: part } }] }));
    lastFragment.push(events.length - 1);
  }
  events.push(chunk({}, 'tool_calls'));
  completing.push(events.length - 1);
  return { events, lastFragment, completing };
}

/**
 * The script's events on a wall-clock schedule, event k due `(k + 1) · gapMs` ms after the
 * start, as a socket delivers them whether or not anyone reads: an event the consumer asks
 * for late was buffered, and arrived when it was due. `arrivedAt[k]` is that time (or, when
 * the timer fired late, when it fired).
 */
async function* scheduled(events: readonly object[], gapMs: number, arrivedAt: number[]): AsyncGenerator<object, void, undefined> {
  const t0 = nowMs();
  for (let k = 0; k < events.length; k++) {
    const due = t0 + (k + 1) * gapMs;
    const wait = due - nowMs();
    if (wait > 0) {
      await sleep(wait);
      arrivedAt[k] = nowMs();
    } else {
      arrivedAt[k] = due;
    }
    yield events[k]!;
  }
}

function workTool(toolMs: number, exclusive: boolean): Tool {
  return defineTool({
    name: 'work',
    input: { type: 'object', properties: { i: { type: 'integer' }, path: { type: 'string' } }, required: ['i', 'path'] },
    executionMode: exclusive ? 'sequential' : 'parallel',
    execute: async () => {
      await sleep(toolMs);
      return 'ok';
    },
  });
}

interface Timing {
  /** ms from the stream's start to the first and to the last tool_result. */
  first: number;
  last: number;
  /** performance time of each call's tool_execution_start. */
  startAt: number[];
  /** performance time each stream event arrived. */
  emittedAt: number[];
}

/** One message through the adapter and runTools: streaming, or the full message first. */
async function once(script: Script, adapter: Adapter, options: { gapMs: number; tool: Tool; streaming: boolean }): Promise<Timing> {
  const emittedAt: number[] = [];
  const startAt: number[] = [];
  const t0 = nowMs();
  const source = adapter(scheduled(script.events, options.gapMs, emittedAt));
  let calls: AsyncIterable<ToolCall> | ToolCall[] = source;
  if (!options.streaming) {
    const all: ToolCall[] = [];
    for await (const call of source) all.push(call);
    calls = all;
  }
  let first = Number.NaN;
  let last = Number.NaN;
  for await (const event of runTools(calls, { tools: [options.tool], maxConcurrency: Infinity })) {
    if (event.type === 'tool_execution_start') startAt[event.index] = nowMs();
    else if (event.type === 'tool_result') {
      last = nowMs() - t0;
      if (Number.isNaN(first)) first = last;
    }
  }
  return { first, last, startAt, emittedAt };
}

/** Runs `stream-start` at `sizes` calls per message (default 1, 4, 16). */
export async function streamStart(budget: Budget, options: StreamStartOptions = {}): Promise<ScenarioResult> {
  const sizes = options.sizes ?? STREAM_START_SIZES;
  const gapMs = options.gapMs ?? 5;
  const fragments = options.fragments ?? 8;
  const toolMs = options.toolMs ?? 50;
  const rows: Row[] = [];
  // One tool object per kind for the whole scenario: its schema is compiled once, as in an application.
  const parallelTool = workTool(toolMs, false);
  const exclusiveTool = workTool(toolMs, true);

  // Start latency, per provider: from the completing event, and from the last fragment.
  const providers: Array<{ label: string; script: (n: number) => Script; adapter: Adapter }> = [
    { label: 'Anthropic', script: (n) => anthropicScript(n, fragments), adapter: (s) => fromAnthropicStream(s) },
    { label: 'OpenAI Chat', script: (n) => chatScript(n, fragments), adapter: (s) => fromOpenAIChatStream(s) },
  ];
  for (const provider of providers) {
    for (const n of sizes) {
      options.log?.(`stream-start ${provider.label} latency N=${formatInt(n)}`);
      const script = provider.script(n);
      const fromCompleting: number[] = [];
      const fromFragment: number[] = [];
      await once(script, provider.adapter, { gapMs, tool: parallelTool, streaming: true }); // warm-up, not counted
      for (let r = 0; r < budget.repeats; r++) {
        const t = await once(script, provider.adapter, { gapMs, tool: parallelTool, streaming: true });
        for (let i = 0; i < n; i++) {
          fromCompleting.push(t.startAt[i]! - t.emittedAt[script.completing[i]!]!);
          fromFragment.push(t.startAt[i]! - t.emittedAt[script.lastFragment[i]!]!);
        }
      }
      for (const [series, values] of [
        [`${provider.label}: start after the completing event`, fromCompleting],
        [`${provider.label}: start after the last argument fragment`, fromFragment],
      ] as const) {
        const med = median(values);
        rows.push({
          scenario: 'stream-start',
          series,
          impl: IMPL.toolrun,
          n,
          unit: 'ms (median)',
          value: med,
          lo: Math.min(...values),
          hi: Math.max(...values),
          samples: values.length,
          chart: Math.max(med, 1e-6) * 1e6,
          cols: { 'max ms': formatNum(Math.max(...values)), 'event gap ms': formatNum(gapMs) },
        });
      }
    }
  }

  // Time to the last result: streaming versus the full message first (Anthropic stream).
  for (const exclusive of [false, true]) {
    const series = exclusive ? 'last result, exclusive tools' : 'last result, parallel tools';
    for (const n of sizes) {
      options.log?.(`stream-start ${series} N=${formatInt(n)}`);
      const script = anthropicScript(n, fragments);
      const adapter: Adapter = (s) => fromAnthropicStream(s);
      const runs = new Map<string, Timing[]>([
        [IMPL.toolrun, []],
        [WAIT, []],
      ]);
      const tool = exclusive ? exclusiveTool : parallelTool;
      for (let r = 0; r < budget.repeats; r++) {
        // Interleaved, alternating which goes first.
        const order = r % 2 === 0 ? [IMPL.toolrun, WAIT] : [WAIT, IMPL.toolrun];
        for (const impl of order) runs.get(impl)!.push(await once(script, adapter, { gapMs, tool, streaming: impl === IMPL.toolrun }));
      }
      const waitLast = median(runs.get(WAIT)!.map((t) => t.last));
      for (const [impl, timings] of runs) {
        const lasts = timings.map((t) => t.last);
        const med = median(lasts);
        rows.push({
          scenario: 'stream-start',
          series,
          impl,
          n,
          unit: 'ms (median)',
          value: med,
          lo: Math.min(...lasts),
          hi: Math.max(...lasts),
          samples: lasts.length,
          chart: med * 1e6,
          cols: {
            'first result ms': formatNum(median(timings.map((t) => t.first))),
            'saved ms': impl === WAIT ? '' : formatNum(waitLast - med),
            'stream ms': formatNum(script.events.length * gapMs),
            'tool ms': formatNum(toolMs),
          },
        });
      }
    }
  }

  return {
    name: 'stream-start',
    title: 'stream-start: calls start while the model is still streaming',
    description:
      `A synthetic assistant message of N tool calls streams one event every ${formatNum(gapMs)} ms (on a wall-clock schedule, as a socket delivers them), each call's arguments in ${formatInt(fragments)} fragments. ` +
      '**Start latency**: per call, from the moment the source emitted the event that completes its arguments (Anthropic `content_block_stop`; ' +
      'OpenAI Chat: the next call\'s first delta or `finish_reason`) to its `tool_execution_start` reaching the consumer — the adapter\'s and `runTools`\' own cost; ' +
      'and from its last argument fragment, which adds the wait for that completing event. Median over every call of every repeat; `lo`/`hi` are the extremes. ' +
      `**Last result**: from the stream's start to the last \`tool_result\`, with tools that sleep ${formatNum(toolMs)} ms, streaming ` +
      '(`runTools(fromAnthropicStream(stream))`) versus waiting for the full message (the adapter drained into an array, then `runTools(array)`); ' +
      'tools in parallel, or exclusive (`executionMode: \'sequential\'`), where running them while the model writes the rest saves the most.',
    chartLabel: 'median, ns',
    rows,
    targets: streamTargets(rows, sizes),
  };
}

function streamTargets(rows: Row[], sizes: readonly number[]): Target[] {
  const latency: string[] = [];
  let latencyMet = true;
  for (const provider of ['Anthropic', 'OpenAI Chat']) {
    for (const n of sizes) {
      const r = findRow(rows, `${provider}: start after the completing event`, IMPL.toolrun, n);
      if (r?.value == null) continue;
      latency.push(`${provider} N=${formatInt(n)}: ${formatNum(r.value)} ms`);
      if (r.value >= 1) latencyMet = false;
    }
  }
  const saved: string[] = [];
  let savedMet: boolean | null = null;
  for (const n of sizes.filter((s) => s >= 4)) {
    const streaming = findRow(rows, 'last result, exclusive tools', IMPL.toolrun, n);
    const waiting = findRow(rows, 'last result, exclusive tools', WAIT, n);
    if (streaming?.value == null || waiting?.value == null) continue;
    saved.push(`N=${formatInt(n)}: ${formatNum(streaming.value)} vs ${formatNum(waiting.value)} ms`);
    savedMet = (savedMet ?? true) && streaming.value < waiting.value;
  }
  return [
    {
      target: 'stream-start: a call starts within 1 ms (median) of the event that completes its arguments',
      measured: latency.length > 0 ? latency.join('; ') : 'not measured in this run',
      met: latency.length > 0 ? latencyMet : null,
    },
    {
      target: 'stream-start: with exclusive tools, streaming reaches the last result sooner than waiting for the full message (N ≥ 4)',
      measured: saved.length > 0 ? saved.join('; ') : 'not measured in this run (needs N ≥ 4)',
      met: savedMet,
    },
  ];
}
