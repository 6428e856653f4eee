// The portable scenario: plain ESM that imports the package entry by its name and runs the
// core through `runTools` the way an application would. The same file runs in Node 20 and
// 22, Deno, Bun and a browser page under a strict Content-Security-Policy
// (spec/portable/run.mjs). No timing assumptions: every "while running" is a gate the
// scenario opens itself, and the one timer is the tool's own timeout (A4).
import { defineTool, fromEventStream, runTools, toEventStream } from 'toolrun';

/** A promise and the function that resolves it. */
function gate() {
  let open;
  const opened = new Promise((resolve) => (open = resolve));
  return { opened, open };
}

/** Consumes a run, calling `onEvent` for each event; resolves to { events, batch }. */
async function consume(run, onEvent = () => {}) {
  const events = [];
  for (;;) {
    const step = await run.next();
    if (step.done) return { events, batch: step.value };
    events.push(step.value);
    onEvent(step.value);
  }
}

const textOf = (message) => message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');

/**
 * Runs every check and resolves to `{ checks: [{ name, ok, detail }] }`; never throws (a
 * throw becomes a failed check named `scenario`).
 */
export async function runScenario() {
  const checks = [];
  const check = (name, ok, detail = '') => checks.push({ name, ok: Boolean(ok), detail: ok ? '' : detail });
  try {
    await batchWithProgress(check);
    await abortMidBatch(check);
    await perCallTimeout(check);
    await spinningGenerator(check);
    await eventStreamRoundTrip(check);
  } catch (error) {
    check('scenario', false, `threw: ${error && error.stack ? error.stack : String(error)}`);
  }
  return { checks };
}

/** Four tools, five calls: live progress (O5), completion vs call order (O3, O2), JSON Schema (P5). */
async function batchWithProgress(check) {
  const sawFirstUpdate = gate();
  const fastEnded = gate();
  const progressTool = defineTool({
    name: 'count',
    input: { type: 'object', properties: { to: { type: 'integer', minimum: 1 } }, required: ['to'] },
    async *execute({ to }) {
      yield { step: 1, of: to };
      // The tool cannot go on until the consumer has seen step 1: progress is live.
      await sawFirstUpdate.opened;
      yield { step: 2, of: to };
      return `counted to ${to}`;
    },
  });
  const slow = defineTool({
    name: 'slow',
    input: { type: 'object' },
    async execute() {
      await fastEnded.opened; // ends only after `fast` has ended: completion order ≠ call order
      return 'slow done';
    },
  });
  const fast = defineTool({ name: 'fast', input: { type: 'object' }, execute: () => 'fast done' });
  const add = defineTool({
    name: 'add',
    input: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' }, label: { type: 'string', pattern: '^[a-z]+$' } },
      required: ['a', 'b'],
      additionalProperties: false,
    },
    execute: ({ a, b, label }) => `${label ?? 'sum'}=${a + b}`,
  });
  const calls = [
    { id: 'c0', name: 'count', arguments: '{"to": 2}' },
    { id: 'c1', name: 'slow', arguments: {} },
    { id: 'c2', name: 'fast', arguments: {} },
    { id: 'c3', name: 'add', arguments: { a: 2, b: 3, label: 'total' } },
    { id: 'c4', name: 'add', arguments: { a: 'two', label: 'Total!', extra: true } },
  ];
  let updatesBeforeCountEnded = 0;
  let countEnded = false;
  const { events, batch } = await consume(runTools(calls, { tools: [progressTool, slow, fast, add] }), (event) => {
    if (event.type === 'tool_execution_update' && event.toolCallId === 'c0') {
      if (!countEnded) updatesBeforeCountEnded++;
      sawFirstUpdate.open();
    }
    if (event.type === 'tool_execution_end' && event.toolCallId === 'c0') countEnded = true;
    if (event.type === 'tool_execution_end' && event.toolCallId === 'c2') fastEnded.open();
  });
  const updates = events.filter((e) => e.type === 'tool_execution_update').map((e) => e.progress.step);
  check('O5 live progress', updatesBeforeCountEnded === 2 && updates.join() === '1,2', `updates ${updates.join()} (${updatesBeforeCountEnded} before the end)`);
  const ends = events.filter((e) => e.type === 'tool_execution_end').map((e) => e.toolCallId);
  check('O3 ends in completion order', ends.indexOf('c2') < ends.indexOf('c1'), `ends ${ends.join()}`);
  const results = events.filter((e) => e.type === 'tool_result').map((e) => e.message.toolCallId);
  check('O2 results in call order', results.join() === 'c0,c1,c2,c3,c4' && batch.messages.map((m) => m.toolCallId).join() === 'c0,c1,c2,c3,c4', `results ${results.join()}`);
  const [counted, slowDone, fastDone, good, bad] = batch.messages;
  check('tool outputs', textOf(counted) === 'counted to 2' && textOf(slowDone) === 'slow done' && textOf(fastDone) === 'fast done', batch.messages.map(textOf).join(' | '));
  check('P5 JSON Schema accepts good arguments', good.isError === false && textOf(good) === 'total=5', textOf(good));
  const badText = textOf(bad);
  const expectedLines = ['- a: expected number, got string', '- b: required', '- label: must match', '- extra: not allowed'];
  check(
    'P5 JSON Schema rejects bad ones, a line per issue',
    bad.isError === true && badText.startsWith('Invalid arguments for tool "add":') && expectedLines.every((line) => badText.includes(line)),
    badText,
  );
}

/** Abort while one call runs and one waits: interrupted vs not run, two different texts (A2). */
async function abortMidBatch(check) {
  const controller = new AbortController();
  const running = gate();
  let laterStarted = false;
  const blocker = defineTool({
    name: 'blocker',
    input: { type: 'object' },
    async execute(_input, { signal }) {
      running.open();
      await new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
    },
  });
  const later = defineTool({
    name: 'later',
    input: { type: 'object' },
    execute: () => {
      laterStarted = true;
      return 'should not run';
    },
  });
  const run = runTools(
    [
      { id: 'a0', name: 'blocker', arguments: {} },
      { id: 'a1', name: 'later', arguments: {} },
    ],
    { tools: [blocker, later], maxConcurrency: 1, signal: controller.signal },
  );
  const consumed = consume(run);
  // Abort once the blocker runs (if the run ends first, the blocker never ran: the checks say so).
  await Promise.race([running.opened, consumed]);
  controller.abort();
  const { events, batch } = await consumed;
  const outcomes = events.filter((e) => e.type === 'tool_execution_end').map((e) => `${e.toolCallId}:${e.outcome}`);
  const [interrupted, notRun] = batch.messages.map(textOf);
  check('A2 abort: interrupted + not run', outcomes.sort().join() === 'a0:interrupted,a1:not_run' && !laterStarted && batch.aborted === true, `${outcomes.join()} later started: ${laterStarted}`);
  check(
    'A2 two different texts',
    /^Interrupted: /.test(interrupted) && /^Not run: /.test(notRun) && batch.messages.every((m) => m.isError),
    `${interrupted} | ${notRun}`,
  );
}

/** One call times out (TimeoutError reason, text names tool and limit); its sibling is untouched (A4). */
async function perCallTimeout(check) {
  let reason;
  const hang = defineTool({
    name: 'hang',
    input: { type: 'object' },
    timeoutMs: 30,
    async execute(_input, { signal }) {
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      reason = signal.reason;
      throw reason;
    },
  });
  const sibling = defineTool({ name: 'sibling', input: { type: 'object' }, execute: () => 'sibling done' });
  const { events, batch } = await consume(
    runTools(
      [
        { id: 't0', name: 'hang', arguments: {} },
        { id: 't1', name: 'sibling', arguments: {} },
      ],
      { tools: [hang, sibling] },
    ),
  );
  const outcome = events.find((e) => e.type === 'tool_execution_end' && e.toolCallId === 't0')?.outcome;
  check('A4 TimeoutError reason', reason !== undefined && reason.name === 'TimeoutError', `reason ${reason && reason.name}`);
  check(
    'A4 text names tool and limit, sibling untouched',
    outcome === 'timed_out' && textOf(batch.messages[0]).includes('Tool "hang" timed out after 30 ms') && textOf(batch.messages[1]) === 'sibling done',
    `${outcome}: ${batch.messages.map(textOf).join(' | ')}`,
  );
}

/**
 * A generator yielding in a tight loop still meets its timeout, and a timer of the page or
 * process fires meanwhile (A7): the core's turn clock reaches the host's macrotask
 * (`setImmediate`, else `MessageChannel`, else `setTimeout`). The tool gives up by itself after
 * 20 s of wall time, so a regression fails instead of hanging the runtime.
 */
async function spinningGenerator(check) {
  let yields = 0;
  let yieldsWhenTimerFired = -1;
  const spin = defineTool({
    name: 'spin',
    input: { type: 'object' },
    timeoutMs: 100,
    async *execute() {
      const started = Date.now();
      for (;;) {
        yield ++yields;
        if (yields % 1024 === 0 && Date.now() - started > 20_000) return 'gave up';
      }
    },
  });
  setTimeout(() => (yieldsWhenTimerFired = yields), 20);
  const { batch } = await consume(runTools([{ id: 's0', name: 'spin', arguments: {} }], { tools: [spin], abortGraceMs: 20 }));
  const text = textOf(batch.messages[0]);
  check('A7 a spinning generator ends at its timeout', text.includes('Tool "spin" timed out after 100 ms'), text);
  check('A7 a host timer fires while it spins', yieldsWhenTimerFired > 0 && yields > yieldsWhenTimerFired, `timer saw ${yieldsWhenTimerFired} of ${yields} yields`);
}

/**
 * A batch's events as server-sent events through the runtime's own `Response`, read back by
 * `fromEventStream` (W1, W2): the same events in the same order, and the batch as the value
 * the reader returns — what a route handler in this runtime and its client see.
 */
async function eventStreamRoundTrip(check) {
  const echo = defineTool({
    name: 'echo',
    input: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    async *execute({ text }) {
      yield `echoing ${text}`;
      return text.toUpperCase();
    },
  });
  const calls = [
    { id: 'e0', name: 'echo', arguments: { text: 'a' } },
    { id: 'e1', name: 'echo', arguments: { text: 'b' } },
  ];
  const sent = [];
  const response = new Response(toEventStream((signal) => runTools(calls, { tools: [echo], signal }), { onEvent: (event) => sent.push(event.type) }));
  const reader = fromEventStream(response.body);
  const { events, batch } = await consume(reader);
  const received = events.map((event) => event.type);
  check('W1 the events come back through a Response in order', received.length > 0 && received.join() === sent.join(), `sent ${sent.join()} received ${received.join()}`);
  const texts = batch && Array.isArray(batch.messages) ? batch.messages.map(textOf) : [];
  check('W2 the reader returns the batch', texts.join() === 'A,B', `messages ${JSON.stringify(texts)}`);
}
