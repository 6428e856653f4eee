/**
 * Contract J2 (the prior first) and J7 (progress handed to the journal), with a journal
 * written here whose `prior` is a gate the spec opens, so every ordering is decided by the
 * spec, not by timing.
 */
import * as v from 'valibot';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { defineTool, runTools, type JournalEntry, type JournalPrior, type RunToolsOptions, type ToolCall, type ToolEvent, type ToolJournal } from '../../lib/index.ts';
import { collect, gate, ofType, settle, type Gate } from '../helpers.ts';

/** What happened, in order: `open c0`, `before c0` (beforeToolCall, part of the prepare stage, ran), `start c0` (the tool ran), `progress c0 …`, `commit c0`. */
type Log = string[];

/** A journal whose every call's prior is a gate; it records its operations into `log`. */
function gatedJournal(log: Log, extra: (id: string) => Partial<JournalEntry> = () => ({})): { journal: ToolJournal; priors: Map<string, Gate<JournalPrior>> } {
  const priors = new Map<string, Gate<JournalPrior>>();
  const journal: ToolJournal = {
    open(call) {
      const id = call.toolCallId;
      log.push(`open ${id}`);
      const prior = gate<JournalPrior>();
      priors.set(id, prior);
      return {
        prior: prior.promise,
        idempotencyKey: `key-${id}`,
        decide: () => undefined,
        commit: () => {
          log.push(`commit ${id}`);
        },
        ...extra(id),
      };
    },
  };
  return { journal, priors };
}

function loggingTool(log: Log) {
  return defineTool({
    name: 'work',
    input: v.object({ x: v.string() }),
    async *execute({ x }, { toolCallId }) {
      log.push(`start ${toolCallId}`);
      yield `${x} 1`;
      yield `${x} 2`;
      yield `${x} 3`;
      return `did ${x}`;
    },
  });
}

/** The batch's options: `beforeToolCall` logs, so the spec sees when a call's prepare stage ran. */
function options(log: Log, journal: ToolJournal): RunToolsOptions {
  return {
    tools: [loggingTool(log)],
    journal,
    beforeToolCall: ({ toolCall }) => {
      log.push(`before ${toolCall.id}`);
    },
  };
}

const calls: ToolCall[] = [
  { id: 'c0', name: 'work', arguments: { x: 'a' } },
  { id: 'c1', name: 'work', arguments: { x: 'b' } },
];

describe('J2 a journaled call waits for its prior before anything of it runs; the next call is handed out after it', () => {
  it('J2 nothing of call 0 (beforeToolCall, tool) runs and call 1 is not opened until call 0’s prior is known (fails if prepare ran before the prior)', async () => {
    const log: Log = [];
    const { journal, priors } = gatedJournal(log);
    const run = collect(runTools(calls, options(log, journal)));
    await settle();
    // Call 0 is open and waiting; nothing of it ran, and call 1 was not handed out (P1).
    expect(log).toEqual(['open c0']);
    priors.get('c0')!.open({ state: 'new' });
    await settle();
    // Call 0 was prepared, then call 1 handed out (opened); call 1 waits for its own prior.
    expect(log.slice(0, 2)).toEqual(['open c0', 'before c0']);
    expect(log.indexOf('open c1')).toBeGreaterThan(log.indexOf('before c0'));
    expect(log).not.toContain('before c1');
    expect(log).not.toContain('start c1');
    priors.get('c1')!.open({ state: 'new' });
    const { batch } = await run;
    expect(batch.messages.map((m) => m.toolCallId)).toEqual(['c0', 'c1']);
    expect(log.filter((line) => line.startsWith('commit'))).toEqual(['commit c0', 'commit c1']);
  });

  it('J2 a run stopped while call 0 waits for its prior ends it not_run, and its tool never starts (fails if the wait outlived the stop)', async () => {
    const log: Log = [];
    const { journal } = gatedJournal(log);
    const controller = new AbortController();
    const run = collect(runTools(calls, { ...options(log, journal), signal: controller.signal }));
    await settle();
    controller.abort();
    const { events } = await run;
    const ends = ofType(events, 'tool_execution_end');
    expect(ends.map((e) => [e.toolCallId, e.outcome])).toContainEqual(['c0', 'not_run']);
    expect(log.some((line) => line.startsWith('start') || line.startsWith('before'))).toBe(false);
  });

  it('J2 a prior that is not a journal prior is a journal failure (J9): the generator throws a JournalError', async () => {
    const log: Log = [];
    const { journal, priors } = gatedJournal(log);
    const run = collect(runTools(calls, options(log, journal)));
    await settle();
    priors.get('c0')!.open({ state: 'maybe' } as unknown as JournalPrior);
    await expect(run).rejects.toMatchObject({ name: 'JournalError' });
    expect(log).not.toContain('start c0');
  });
});

describe('J7 progress values reach entry.progress in the order yielded, before the commit; a throwing progress is reported once', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('J7 each yielded value is handed to entry.progress in order, before the call’s commit (fails if progress were skipped or came after the commit)', async () => {
    const log: Log = [];
    const { journal, priors } = gatedJournal(log, (id) => ({ progress: (value: unknown) => log.push(`progress ${id} ${String(value)}`) }));
    const run = collect(runTools(calls, options(log, journal)));
    await settle();
    priors.get('c0')!.open({ state: 'new' });
    await settle();
    priors.get('c1')!.open({ state: 'new' });
    const { events } = await run;
    for (const [id, x] of [['c0', 'a'], ['c1', 'b']] as const) {
      const mine = log.filter((line) => line.endsWith(` ${id}`) || line.startsWith(`progress ${id} `) || line === `commit ${id}`);
      expect(mine.filter((line) => line.startsWith('progress') || line.startsWith('commit'))).toEqual([
        `progress ${id} ${x} 1`,
        `progress ${id} ${x} 2`,
        `progress ${id} ${x} 3`,
        `commit ${id}`,
      ]);
    }
    // The consumer still sees every update (journaling progress takes nothing away).
    expect(ofType(events, 'tool_execution_update').map((e: Extract<ToolEvent, { type: 'tool_execution_update' }>) => e.progress)).toEqual(
      expect.arrayContaining(['a 1', 'a 2', 'a 3', 'b 1', 'b 2', 'b 3']),
    );
  });

  it('J7 a progress that throws is reported once with a ToolrunWarning; that call’s later values are not passed; the run goes on (fails if it threw twice or broke the run)', async () => {
    const log: Log = [];
    const warnings: string[] = [];
    vi.spyOn(process, 'emitWarning').mockImplementation(((message: string | Error, type?: unknown) => {
      warnings.push(`${String(type)}: ${String(message)}`);
    }) as typeof process.emitWarning);
    const { journal, priors } = gatedJournal(log, (id) => ({
      progress: (value: unknown) => {
        log.push(`progress ${id} ${String(value)}`);
        if (id === 'c0') throw new Error('the engine is full');
      },
    }));
    const run = collect(runTools(calls, options(log, journal)));
    await settle();
    priors.get('c0')!.open({ state: 'new' });
    await settle();
    priors.get('c1')!.open({ state: 'new' });
    const { batch } = await run;
    expect(log.filter((line) => line.startsWith('progress c0'))).toEqual(['progress c0 a 1']);
    expect(log.filter((line) => line.startsWith('progress c1'))).toEqual(['progress c1 b 1', 'progress c1 b 2', 'progress c1 b 3']);
    expect(warnings.filter((w) => w.startsWith('ToolrunWarning'))).toHaveLength(1);
    expect(batch.messages.map((m) => m.isError)).toEqual([false, false]);
  });
});
