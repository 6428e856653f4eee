/**
 * `toolrun/dbos`'s journal against a real PostgreSQL (contract J,
 * docs/adr/0050-journal-table-group-commit.md): each call's row is keyed by its index,
 * whatever order the calls finish in, and a batch recovered after a crash gives every call its
 * own result. The core's side of the seam is played by `driveBatch` (spec/dbos/harness.ts).
 */
import { DBOS } from '@dbos-inc/dbos-sdk';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { JournaledResult } from '../../lib/core/seams/journal.ts';
import { dbosAgentJournal, dbosJournal } from '../../lib/dbos/index.ts';
import { driveBatch, gate, journalRows, launchDbosForFile, operations, resultOf, type DrivenCall, type Gate } from './harness.ts';

launchDbosForFile('toolrun_journal');

/** Per workflow id: what the spec does while the workflow runs (gates live in memory, the workflow's input is JSON). */
const scripts = new Map<string, { execute: (index: number, key: string, entry: { progress?(v: unknown): void; decide(d: { approved: boolean }): unknown }) => Promise<JournaledResult>; committed?: (index: number) => void }>();

const batchWorkflow = DBOS.registerWorkflow(
  async (n: number): Promise<DrivenCall[]> => {
    const script = scripts.get(DBOS.workflowID!)!;
    const journal = dbosJournal();
    const watched = {
      open: (call: Parameters<typeof journal.open>[0]) => {
        const entry = journal.open(call);
        return { ...entry, prior: entry.prior, commit: async (r: JournaledResult) => (await entry.commit(r), script.committed?.(call.index)) };
      },
    };
    return await driveBatch(watched, n, script.execute);
  },
  { name: 'journal-spec-batch' },
);

/** Per workflow id: the agent spec's model and the point it crashes at. */
const agentScripts = new Map<string, { ask: (turn: number) => Promise<string>; afterReply?: (turn: number) => Promise<void> }>();

/** Plays runAgent's side of the agent journal: per turn, the reply (asked only when not journaled), then the turn's batch of one call. */
const agentWorkflow = DBOS.registerWorkflow(
  async (turns: number): Promise<{ replies: string[]; batches: DrivenCall[][] }> => {
    const script = agentScripts.get(DBOS.workflowID!)!;
    const journal = dbosAgentJournal<string>();
    const replies: string[] = [];
    const batches: DrivenCall[][] = [];
    for (let turn = 0; turn < turns; turn++) {
      const entry = journal.modelReply(turn);
      let reply = await entry.prior;
      if (reply === undefined) {
        reply = await script.ask(turn);
        await entry.commit(reply);
      }
      replies.push(reply);
      await script.afterReply?.(turn);
      batches.push(await driveBatch(journal.batch(turn), 1, async (i) => resultOf(i, ` for ${reply}`)));
    }
    return { replies, batches };
  },
  { name: 'journal-spec-agent' },
);

describe('toolrun/dbos journal (J)', () => {
  it('J-dbos-agent: a journaled model reply is not asked again after a crash; each turn has its own batch scope', async () => {
    // Fails if a reply is not journaled (the model is asked again after the crash and answers
    // differently), or if the turns' batches share one scope (their steps would collide:
    // DBOS's step-name check or equal idempotency keys).
    const workflowID = 'agent-1';
    let asked = 0;
    const crashed = gate();
    const never: Gate = gate();
    let attempt = 0;
    agentScripts.set(workflowID, {
      ask: async (turn) => `reply ${turn} #${++asked}`,
      afterReply: async (turn) => {
        if (attempt === 0 && turn === 1) {
          crashed.open();
          await never.promise;
        }
      },
    });
    await DBOS.startWorkflow(agentWorkflow, { workflowID })(3);
    await crashed.promise; // turn 1's reply journaled, its batch not begun
    attempt = 1;
    await DBOS.shutdown();
    await DBOS.launch();
    const { replies, batches } = await DBOS.retrieveWorkflow<{ replies: string[]; batches: DrivenCall[][] }>(workflowID).getResult();
    expect(replies).toEqual(['reply 0 #1', 'reply 1 #2', 'reply 2 #3']);
    expect(asked).toBe(3);
    expect(batches.map((b) => b[0]!.prior)).toEqual(['ended', 'new', 'new']);
    expect(batches.map((b) => b[0]!.key)).toEqual([`${workflowID}:turn-0:0`, `${workflowID}:turn-1:0`, `${workflowID}:turn-2:0`]);
    expect(batches[1]![0]!.result).toEqual(resultOf(0, ' for reply 1 #2'));
  }, 120_000);

  it('J-dbos-order: each call\'s row holds its own result under random completion orders, decisions and progress; the journal takes no DBOS operation number', async () => {
    // Fails if a result is keyed by completion order instead of the call's index (a row would
    // hold another call's result), if a decision is lost, or if the journal issues DBOS
    // operations (their numbers would follow the completion order and a replay would fail).
    const n = 5;
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.shuffledSubarray([0, 1, 2, 3, 4], { minLength: 5, maxLength: 5 }), fc.subarray([0, 1, 2, 3, 4]), fc.array(fc.nat(3), { minLength: n, maxLength: n }), async (order, decided, progressCounts) => {
        const workflowID = `order-${run++}-${order.join('')}`;
        const started = Array.from({ length: n }, () => gate());
        const release = Array.from({ length: n }, () => gate());
        scripts.set(workflowID, {
          async execute(index, _key, entry) {
            if (decided.includes(index)) await entry.decide({ approved: true });
            started[index]!.open();
            await release[index]!.promise;
            for (let p = 0; p < progressCounts[index]!; p++) entry.progress?.({ index, p });
            return resultOf(index);
          },
        });
        const handle = await DBOS.startWorkflow(batchWorkflow, { workflowID })(n);
        await Promise.all(started.map((g) => g.promise));
        // Let the calls finish one by one in the drawn order.
        for (const index of order) {
          release[index]!.open();
          await new Promise((r) => setImmediate(r));
        }
        const results = await handle.getResult();
        expect(results.map((r) => r.result)).toEqual(Array.from({ length: n }, (_, i) => resultOf(i)));
        expect(await operations(workflowID)).toEqual([]);
        const rows = await journalRows(workflowID);
        expect(rows.map((r) => r.idx)).toEqual([0, 1, 2, 3, 4]);
        for (const row of rows) {
          const record = JSON.parse(row.result!) as { result: JournaledResult; progress?: unknown[] };
          expect(record.result).toEqual(resultOf(row.idx));
          expect(record.progress ?? []).toEqual(Array.from({ length: progressCounts[row.idx]! }, (_, p) => ({ index: row.idx, p })));
          expect(row.decision === null ? undefined : JSON.parse(row.decision)).toEqual(decided.includes(row.idx) ? { approved: true } : undefined);
        }
        scripts.delete(workflowID);
      }),
      { numRuns: 6 },
    );
  }, 120_000);

  it('J-dbos-keys: every call has its own idempotency key, <workflow id>:<scope>:<index>', async () => {
    // Fails if the key leaves out the workflow id or the index (two calls or two runs share one).
    scripts.set('keys-1', { execute: async (i) => resultOf(i) });
    const results = await DBOS.startWorkflow(batchWorkflow, { workflowID: 'keys-1' })(3).then((h) => h.getResult());
    expect(results.map((r) => r.key)).toEqual(['keys-1:batch:0', 'keys-1:batch:1', 'keys-1:batch:2']);
  }, 60_000);

  it('J-dbos-recover: after a crash mid-batch, journaled calls are not run again and every call gets its own result; interrupted calls keep their key', async () => {
    // The crash: DBOS shut down while call 2 runs and call 3 has finished but waits behind it
    // (results are committed in call order); a relaunch recovers the workflow. Fails if a
    // journaled call runs again (starts), if calls get each other's results (results), or if
    // an interrupted call's prior is not 'started' (priors).
    const workflowID = 'recover-1';
    const starts = [0, 0, 0, 0];
    const keys: string[][] = [[], [], [], []];
    const twoCommitted = gate();
    const never: Gate = gate();
    let attempt = 0;
    scripts.set(workflowID, {
      async execute(index, key) {
        starts[index]!++;
        keys[index]!.push(key);
        if (attempt === 0 && index === 2) await never.promise;
        return resultOf(index, attempt === 0 ? '' : ' (run again)');
      },
      committed(index) {
        if (attempt === 0 && index === 1) twoCommitted.open();
      },
    });
    await DBOS.startWorkflow(batchWorkflow, { workflowID })(4);
    await twoCommitted.promise;
    attempt = 1;
    await DBOS.shutdown();
    await DBOS.launch(); // recovers the pending workflow in this process
    const results = await DBOS.retrieveWorkflow<DrivenCall[]>(workflowID).getResult();
    expect(starts).toEqual([1, 1, 2, 2]);
    expect(results.map((r) => r.prior)).toEqual(['ended', 'ended', 'started', 'started']);
    expect(results.map((r) => r.result)).toEqual([resultOf(0), resultOf(1), resultOf(2, ' (run again)'), resultOf(3, ' (run again)')]);
    expect(keys[2]).toEqual([`${workflowID}:batch:2`, `${workflowID}:batch:2`]);
  }, 120_000);
});
