/**
 * examples/durable/batch.ts run as a user runs it (`node --import tsx
 * examples/durable/batch.ts`): it starts its own PostgreSQL, runs a DBOS durable batch in a
 * worker process, kills the worker with SIGKILL once calls 0–2 are answered, starts it again
 * with the same workflow id, and prints what was replayed. The checks read its output, never
 * a duration. Which calls were in flight at the kill (call 4 may or may not have sent its
 * email before it) depends on the machine; what must hold does not.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { runExample, type ExampleRun } from './run-example.ts';

let run: ExampleRun;

beforeAll(async () => {
  // The example must end by itself (its PostgreSQL and workers stopped): a leak would time this hook out.
  run = await runExample('examples/durable/batch.ts');
}, 170_000);

describe('examples/durable/batch.ts', () => {
  // Fails if the example's own checks fail (a call answered twice or out of order, an email sent twice).
  it('exits 0 and says every call was answered once, in call order, each email sent once, no journaled call ran again', () => {
    expect(run.code, `stdout:\n${run.stdout}\nstderr:\n${run.stderr}`).toBe(0);
    expect(run.stdout).toMatch(/^replayed: 0, 1, 2(, 4)?; every call answered once, in call order: yes; each email sent once: yes; a journaled call ran again: no$/m);
  });

  // Fails if the kill is not placed after calls 0–2 were answered, or the worker is not killed at all.
  it('kills the first worker with SIGKILL once calls 0–2 are answered, while call 3 runs', () => {
    expect(run.stdout).toMatch(/^attempt 1: killed the worker \(SIGKILL\) with calls 0, 1, 2 answered \(journaled\); call 3 was running$/m);
    expect(run.stdout).toMatch(/^attempt 2 \(exit code 0\): calls 3(, 4)? had started with no journaled result, so they ran again with the same idempotency key$/m);
  });

  // Fails if the journal is not read on the restart (calls 0–2 would say "ran"), or a result goes to the wrong call.
  it('the second worker replays calls 0–2 from the journal and runs 3 (4 is replayed or run again); results in call order', () => {
    const lines = run.stdout.split('\n').filter((line) => line.startsWith('  call_'));
    expect(lines).toEqual([
      '  call_0 replayed from the journal: sent to ann@example.com',
      '  call_1 replayed from the journal: sent to bob@example.com',
      '  call_2 replayed from the journal: sent to cy@example.com',
      '  call_3 ran: report of 4 rows',
      // Journaled when it ended, while the report ran: replayed, unless the kill came before its write landed.
      expect.stringMatching(/^ {2}call_4 (ran|replayed from the journal): sent to dee@example\.com$/),
    ]);
  });

  // Fails if the service got an email twice under one key that it did not ignore, or a journaled call's email again.
  it('the mail service delivered each email once; only call 4 (in flight at the kill) may have come again, under its key', () => {
    expect(run.stdout).toMatch(/^the mail service delivered: ann@example\.com, bob@example\.com, cy@example\.com, dee@example\.com; ignored as repeats of a key it had seen: (none|dee@example\.com)$/m);
  });
});
