/**
 * `node --expose-gc --import tsx bench/state-limits.ts [scenario…]` — the figures behind the
 * paused-state bounds (docs/adr/0014-paused-state.md): how big a real state is,
 * how fast an over-limit one is refused, what the largest accepted one costs, the longest
 * event-loop stall while reading inputs within the bounds, and the memory per claimed id.
 *
 * Each scenario runs in its own Node process (so RSS is its own) and prints one table row.
 * Stalls are the event loop's longest delay during the resume (`monitorEventLoopDelay`,
 * 1 ms resolution), best of 3 runs; times are the first `next()` of the resumed run.
 *
 * @module
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import * as v from 'valibot';
import { defineTool, inMemoryClaim, runTools, type PausedBatchState, type ToolCall } from '../lib/index.ts';

const SCENARIOS = ['size-1000', 'refuse-132M-text', 'refuse-17M-object', 'largest-accepted', 'stall-escapes', 'stall-keys', 'stall-values', 'stall-depth', 'stall-strings', 'claim-memory'] as const;
type Scenario = (typeof SCENARIOS)[number];
const LIMIT = 16 * 1024 * 1024;

/** A source file's lines, as a read tool returns them: quotes and backslashes included. */
function fileText(chars: number, seed: number): string {
  let text = '';
  for (let i = 0; text.length < chars; i++) text += `${String(i).padStart(4, ' ')}  export const handler${seed}_${i} = (req) => new Response("ok \\"${i}\\"", { status: 200 });\n`;
  return text.slice(0, chars);
}

const read = (chars: number) =>
  defineTool({
    name: 'read_file',
    input: v.object({ path: v.string(), maxLines: v.optional(v.number()) }),
    execute: ({ path }, { toolCallId }) => ({
      content: [{ type: 'text' as const, text: fileText(chars, Number(toolCallId.slice(5))) }],
      details: { path, bytes: chars, lines: Math.ceil(chars / 80), truncated: false, mtime: '2026-12-01T15:00:00.000Z' },
    }),
  });
const send = defineTool({ name: 'send_email', input: v.object({ to: v.string(), subject: v.string(), body: v.string() }), needsApproval: true, execute: () => 'sent' });

/** A 1,000-call batch that pauses: 999 file reads of `chars` characters each, then an email that needs approval. */
async function pausedBatch(chars: number, signingSecret?: string, count = 1000) {
  const tools = [read(chars), send];
  const calls: ToolCall[] = Array.from({ length: count }, (_, i) =>
    i === count - 1
      ? { id: `call_${i}`, name: 'send_email', arguments: { to: 'ada@example.com', subject: 'Minutes', body: 'See attached.' } }
      : { id: `call_${i}`, name: 'read_file', arguments: { path: `src/module${i}/index.ts`, maxLines: 200 } },
  );
  const run = runTools(calls, { tools, ...(signingSecret === undefined ? {} : { signingSecret }) });
  let step = await run.next();
  while (step.done !== true) step = await run.next();
  return { tools, calls, paused: step.value.paused! };
}

/**
 * The first next() of a resume: its duration, the longest event-loop stall meanwhile (the
 * longest gap between ticks of a 1 ms interval, the gap to the end included), and how it ended.
 */
async function timeResume(resume: () => AsyncGenerator<unknown, unknown, undefined>): Promise<{ ms: number; stallMs: number; cpuMs: number; outcome: string }> {
  const cpu = process.cpuUsage();
  let last = performance.now();
  let stall = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    stall = Math.max(stall, now - last);
    last = now;
  }, 1);
  const started = performance.now();
  let outcome: string;
  const run = resume();
  try {
    await run.next();
    outcome = 'resumed';
  } catch (error) {
    outcome = `${(error as { code?: string }).code ?? 'threw'}: ${String((error as Error).message).slice(0, 60)}`;
  }
  const ended = performance.now();
  const used = process.cpuUsage(cpu);
  stall = Math.max(stall, ended - last);
  clearInterval(ticker);
  await run.return(undefined).catch(() => undefined);
  return { ms: ended - started, stallMs: stall, cpuMs: (used.user + used.system) / 1000, outcome };
}

/** Best of 3 by CPU time, each on a state of its own (a state resumes once). */
async function bestOf3(resume: (attempt: number) => AsyncGenerator<unknown, unknown, undefined>) {
  let best: Awaited<ReturnType<typeof timeResume>> | undefined;
  for (let attempt = 0; attempt < 3; attempt++) {
    const r = await timeResume(() => resume(attempt));
    if (best === undefined || r.cpuMs < best.cpuMs) best = r;
  }
  return best!;
}

/** Three copies of an unsigned state, each under a new id (the same content, resumable again), made before any timing. */
function renamed(state: PausedBatchState): PausedBatchState[] {
  const id = /"id":"([0-9a-f-]{36})"/.exec(state.payload)![1]!;
  return [0, 1, 2].map(() => ({ ...state, payload: state.payload.replace(`"id":"${id}"`, `"id":"${crypto.randomUUID()}"`) }));
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;

/** An unsigned state whose first result's details are `value` (JSON text), built by editing a real one. */
async function withDetails(value: string): Promise<{ state: PausedBatchState; tools: ReturnType<typeof read>[]; calls: ToolCall[] }> {
  const { tools, calls, paused } = await pausedBatch(100, undefined, 2);
  const payload = paused.state.payload.replace('"truncated":false,', `"truncated":false,"extra":${value},`);
  return { state: { ...paused.state, payload }, tools: tools as never, calls };
}

async function scenario(name: Scenario): Promise<string> {
  const gc = (globalThis as { gc?: () => void }).gc;
  switch (name) {
    case 'size-1000': {
      const { paused } = await pausedBatch(2048, 'secret');
      const text = JSON.stringify(paused.state);
      const keys = (paused.state.payload.match(/":/g) ?? []).length;
      return `1,000-call batch, 2 KB results: state ${text.length.toLocaleString('en')} chars (payload ${paused.state.payload.length.toLocaleString('en')}), ~${keys.toLocaleString('en')} keys; limit ${LIMIT.toLocaleString('en')} = ${(LIMIT / text.length).toFixed(1)}x`;
    }
    case 'refuse-132M-text': {
      const { tools, calls } = await pausedBatch(10);
      const huge = `{"version":2,"kind":"toolrun/paused-batch","payload":"${'x'.repeat(132_000_000)}"}`;
      const before = process.memoryUsage().rss;
      const r = await bestOf3(() => runTools(calls, { tools, resume: { state: huge } }));
      return `132 M-char text: refused in ${r.ms.toFixed(2)} ms (stall ${r.stallMs.toFixed(1)} ms), ${r.outcome}; RSS +${mib(process.memoryUsage().rss - before)}`;
    }
    case 'refuse-17M-object': {
      const { tools, calls } = await pausedBatch(10);
      const state = { version: 2, kind: 'toolrun/paused-batch', payload: 'x'.repeat(LIMIT + 1) } as const;
      const r = await bestOf3(() => runTools(calls, { tools, resume: { state } }));
      return `16 Mi + 1 payload as object: refused in ${r.ms.toFixed(2)} ms (stall ${r.stallMs.toFixed(1)} ms), ${r.outcome}`;
    }
    case 'largest-accepted': {
      // 999 results of 12,500 characters: about the largest such state under the limit, signed.
      const states = [await pausedBatch(12_500, 'secret'), await pausedBatch(12_500, 'secret'), await pausedBatch(12_500, 'secret')];
      const { tools, calls } = states[0]!;
      const text = JSON.stringify(states[0]!.paused.state);
      gc?.();
      const before = process.memoryUsage().rss;
      const r = await bestOf3((attempt) => {
        const { paused } = states[attempt]!;
        const approvals = [{ approvalId: paused.requests[0]!.approvalId, approved: false }];
        return runTools(calls, { tools, signingSecret: 'secret', resume: { state: JSON.stringify(paused.state), approvals, claim: () => true } });
      });
      const peak = process.resourceUsage().maxRSS * 1024;
      return `largest accepted (${text.length.toLocaleString('en')} chars, signed, as text): first next() CPU ${r.cpuMs.toFixed(0)} ms, wall ${r.ms.toFixed(0)} ms, longest stall ${r.stallMs.toFixed(0)} ms, ${r.outcome}; RSS before ${mib(before)}, peak ${mib(peak)}`;
    }
    case 'stall-escapes': {
      // A result text of quotes: every character escaped in the payload, twice in the text.
      const { tools, calls, paused } = await pausedBatch(10);
      const body = JSON.parse(paused.state.payload) as { calls: { result?: { content: { text: string }[] } }[] };
      body.calls[0]!.result!.content[0]!.text = '"'.repeat(Math.floor((LIMIT - 1_000_000) / 4));
      const state = { ...paused.state, payload: JSON.stringify(body) };
      const text = JSON.stringify(state);
      const copies = renamed(state).map((copy) => JSON.stringify(copy));
      const r = await bestOf3((attempt) => runTools(calls, { tools, resume: { state: copies[attempt]! } }));
      return `escape-heavy (${text.length.toLocaleString('en')} chars of text): CPU ${r.cpuMs.toFixed(0)} ms, wall ${r.ms.toFixed(0)} ms, longest stall ${r.stallMs.toFixed(0)} ms, ${r.outcome}`;
    }
    case 'stall-keys': {
      const { state, tools, calls } = await withDetails(`{${Array.from({ length: 99_900 }, (_, i) => `"key_${i}":${i}`).join(',')}}`);
      const copies = renamed(state);
      const r = await bestOf3((attempt) => runTools(calls, { tools, resume: { state: copies[attempt]! } }));
      return `99,900 distinct keys in one object: CPU ${r.cpuMs.toFixed(0)} ms, wall ${r.ms.toFixed(0)} ms, longest stall ${r.stallMs.toFixed(0)} ms, ${r.outcome}`;
    }
    case 'stall-values': {
      const { state, tools, calls } = await withDetails(`[${Array.from({ length: 999_900 }, (_, i) => String(i % 10)).join(',')}]`);
      const copies = renamed(state);
      const r = await bestOf3((attempt) => runTools(calls, { tools, resume: { state: copies[attempt]! } }));
      return `999,900 values: CPU ${r.cpuMs.toFixed(0)} ms, wall ${r.ms.toFixed(0)} ms, longest stall ${r.stallMs.toFixed(0)} ms, ${r.outcome}`;
    }
    case 'stall-depth': {
      // 250-deep chains until the value bound: the most nesting within the bounds.
      const chain = '['.repeat(250) + ']'.repeat(250);
      const { state, tools, calls } = await withDetails(`[${Array.from({ length: 795 }, () => chain).join(',')}]`);
      const copies = renamed(state);
      const r = await bestOf3((attempt) => runTools(calls, { tools, resume: { state: copies[attempt]! } }));
      return `795 chains 250 deep (198,750 arrays): CPU ${r.cpuMs.toFixed(0)} ms, wall ${r.ms.toFixed(0)} ms, longest stall ${r.stallMs.toFixed(0)} ms, ${r.outcome}`;
    }
    case 'stall-strings': {
      const { state, tools, calls } = await withDetails(`[${Array.from({ length: 999_900 }, (_, i) => `"s${i % 1000}"`).join(',')}]`);
      const copies = renamed(state);
      const r = await bestOf3((attempt) => runTools(calls, { tools, resume: { state: copies[attempt]! } }));
      return `999,900 short strings: CPU ${r.cpuMs.toFixed(0)} ms, wall ${r.ms.toFixed(0)} ms, longest stall ${r.stallMs.toFixed(0)} ms, ${r.outcome}`;
    }
    case 'claim-memory': {
      const claim = inMemoryClaim();
      const expiresAt = Date.now() + 86_400_000;
      gc?.();
      const before = process.memoryUsage().heapUsed;
      // Ids as the reader has them: strings JSON.parse made (randomUUID's own strings are larger).
      for (let i = 0; i < 1_000_000; i++) claim(JSON.parse(`"${crypto.randomUUID()}"`) as string, { expiresAt: expiresAt + i });
      gc?.();
      const after = process.memoryUsage().heapUsed;
      // Used after the measurement, so the store is alive during it.
      if (claim(crypto.randomUUID(), { expiresAt }) !== true) throw new Error('a fresh id was refused');
      return `inMemoryClaim, 1,000,000 UUIDs: ${((after - before) / 1_000_000).toFixed(0)} bytes per id (heap, after gc${gc === undefined ? ': not exposed' : ''})`;
    }
  }
}

const asked = process.argv.slice(2) as Scenario[];
if (asked.length === 1 && process.env.STATE_LIMITS_CHILD === '1') {
  console.log(await scenario(asked[0]!));
} else {
  for (const name of asked.length > 0 ? asked : SCENARIOS) {
    if (!SCENARIOS.includes(name)) throw new Error(`unknown scenario ${name}; known: ${SCENARIOS.join(', ')}`);
    const child = spawnSync(process.execPath, ['--expose-gc', '--max-old-space-size=4096', '--import', 'tsx', fileURLToPath(import.meta.url), name], {
      env: { ...process.env, STATE_LIMITS_CHILD: '1' },
      encoding: 'utf8',
    });
    console.log(`${name.padEnd(20)} ${child.status === 0 ? child.stdout.trim() : `failed: ${child.stderr.trim().split('\n').slice(-3).join(' | ')}`}`);
  }
}
