/**
 * A durable batch run by three worker processes, one of which dies for good mid-batch
 * (docs/durable.md, "Workers on several machines"). Every process shares only a PostgreSQL:
 * here a throwaway one, on your machines your own server's URL.
 *
 *   node --import tsx examples/durable/workers.ts
 *
 * 1. starts a throwaway PostgreSQL and three workers (this file again, with `--worker <id>`),
 *    each with its own executor id, two calls at a time;
 * 2. this process is the orchestrator: it starts a batch of 24 page fetches in queue mode and
 *    runs none of them itself;
 * 3. kills `worker-2` with SIGKILL once it has started its third call — placed on what the
 *    worker prints, not on a clock — and does not start it again;
 * 4. hands what `worker-2` held back to the queue with `recoverWorker`, and the two others
 *    take it over;
 * 5. prints which worker answered each call, in call order, and what `worker-2` had started.
 *
 * Exits 1 unless every call is answered once, in call order, and no call whose result was
 * journaled ran again.
 *
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { DBOS } from '@dbos-inc/dbos-sdk';
import * as v from 'valibot';
import { recoverWorker, registerDurableBatch } from '../../lib/dbos/index.ts';
import { defineTool, type ToolCall } from '../../lib/index.ts';
// The project's throwaway-server helper (not a package export).
import { startPostgres } from '../../lib/dbos/postgres.ts';

const role = process.argv[2] === '--worker' ? 'worker' : 'orchestrator';
const executorID = role === 'worker' ? process.argv[3]! : 'orchestrator';

const fetchPage = defineTool({
  name: 'fetch_page',
  description: 'Fetches a page (here: waits 200 ms, as a remote service would).',
  input: v.object({ url: v.string() }),
  async execute({ url }) {
    console.log(`start ${url}`);
    await sleep(200);
    return `${url} fetched by ${executorID}`;
  },
});

// In every process: the same registration, before DBOS.launch().
const batch = registerDurableBatch({ name: 'fetch-pages', tools: [fetchPage], queueName: 'tool-calls', interruptedCalls: 'run-again' });

/** Every process's DBOS config: one system database, one application name and version, its own executor id. */
function configure(systemDatabaseUrl: string): void {
  DBOS.setConfig({
    name: 'workers-example',
    systemDatabaseUrl,
    logLevel: 'error',
    applicationVersion: 'workers-example-1',
    executorID,
    listenQueues: role === 'worker' ? ['tool-calls'] : [],
  });
}

async function worker(): Promise<void> {
  configure(process.env.DATABASE_URL!);
  await DBOS.launch();
  console.log('ready');
}

/** Starts worker `id`; `onStart` sees each call it starts. Resolves once it is ready. */
function startWorker(id: string, databaseUrl: string, onStart: (url: string) => void): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--no-deprecation', ...process.execArgv, fileURLToPath(import.meta.url), '--worker', id], { env: { ...process.env, DATABASE_URL: databaseUrl }, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line === 'ready') resolve(child);
      else if (line.startsWith('start ')) onStart(line.slice('start '.length));
      else console.log(`${id}: ${line}`);
    });
  });
}

async function main(): Promise<number> {
  const pg = await startPostgres();
  const databaseUrl = pg.databaseUrl('workers_example');
  const workers: ChildProcess[] = [];
  try {
    console.log(`PostgreSQL ${pg.version} on 127.0.0.1:${pg.port}`);
    // Once, before processes launch side by side on a fresh database.
    await DBOS.migrate(databaseUrl);
    configure(databaseUrl);
    await DBOS.launch();
    await DBOS.registerQueue('tool-calls', { workerConcurrency: 2, minPollingIntervalMs: 100, onConflict: 'always_update' });

    const starts: Array<{ url: string; by: string }> = [];
    let victim: ChildProcess | undefined;
    let killed!: () => void;
    const victimKilled = new Promise<void>((resolve) => (killed = resolve));
    for (const id of ['worker-1', 'worker-2', 'worker-3']) {
      const child = await startWorker(id, databaseUrl, (url) => {
        starts.push({ url, by: id });
        // worker-2's third call: it has answered calls of its own, and one is in flight.
        if (id === 'worker-2' && starts.filter((s) => s.by === id).length === 3) {
          child.kill('SIGKILL');
          child.once('exit', () => killed());
        }
      });
      workers.push(child);
      if (id === 'worker-2') victim = child;
    }

    const calls: ToolCall[] = Array.from({ length: 24 }, (_, i) => ({ id: `call_${i}`, name: 'fetch_page', arguments: { url: `https://example.com/page/${i}` } }));
    const handle = await batch.start(calls, { workflowId: 'fetch-pages-1' });
    await victimKilled;
    const ranByVictim = starts.filter((s) => s.by === 'worker-2').map((s) => s.url.split('/').pop());
    console.log(`killed worker-2 (SIGKILL) after it started pages ${ranByVictim.join(', ')}; it is not coming back`);
    const startsAtKill = starts.length;
    // worker-2's machine is gone: hand what it held back to the queue.
    const handedBack = await recoverWorker('worker-2');
    console.log(`recoverWorker('worker-2') handed back ${handedBack.length} call(s): ${handedBack.map((id) => id.split(':').pop()).join(', ') || 'none'}`);

    const { messages } = await handle.getResult();
    for (const m of messages) console.log(`  ${m.toolCallId}: ${m.content.map((b) => (b.type === 'text' ? b.text : '')).join('')}`);

    const inCallOrder = messages.map((m) => m.toolCallId).join(',') === calls.map((c) => c.id).join(',');
    const answeredBy = messages.map((m) => m.content.map((b) => (b.type === 'text' ? b.text : '')).join('').split(' fetched by ')[1]);
    // Run again: a call started more than once. Only one worker-2 was running at the kill may be.
    const startCount = (url: string): number => starts.filter((s) => s.url === url).length;
    const ranTwice = calls.filter((c) => startCount((c.arguments as { url: string }).url) > 1).map((c) => c.id);
    const heldAtKill = new Set(handedBack.map((id) => `call_${id.split(':').pop()}`));
    const journaledRanAgain = ranTwice.filter((id) => !heldAtKill.has(id));
    const lateByVictim = starts.slice(startsAtKill).some((s) => s.by === 'worker-2');
    console.log(
      `every call answered once, in call order: ${inCallOrder ? 'yes' : 'NO'}; answered by worker-2 after its death: ${answeredBy.some((by, i) => by === 'worker-2' && heldAtKill.has(`call_${i}`)) || lateByVictim ? 'YES' : 'no'}; ` +
        `run again: ${ranTwice.join(', ') || 'none'} (held by worker-2 at the kill); a journaled call ran again: ${journaledRanAgain.length === 0 ? 'no' : `YES (${journaledRanAgain.join(', ')})`}`,
    );
    return inCallOrder && journaledRanAgain.length === 0 && !lateByVictim && victim !== undefined ? 0 : 1;
  } finally {
    for (const w of workers) w.kill('SIGKILL');
    await DBOS.shutdown();
    await pg.stop();
  }
}

if (role === 'worker') await worker();
else process.exitCode = await main();
