/**
 * examples/durable/workers.ts run as a user runs it (`node --import tsx
 * examples/durable/workers.ts`): it starts its own PostgreSQL and three worker processes,
 * runs a batch of 24 calls in queue mode, kills one worker with SIGKILL at its third call and
 * hands its calls to the others with `recoverWorker`. The checks read its output, never a
 * duration. Which calls the dead worker held depends on the machine; what must hold does not.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { runExample, type ExampleRun } from './run-example.ts';

let run: ExampleRun;

beforeAll(async () => {
  // The example must end by itself (its PostgreSQL and workers stopped): a leak would time this hook out.
  run = await runExample('examples/durable/workers.ts');
}, 170_000);

describe('examples/durable/workers.ts', () => {
  // Fails if the example's own checks fail: a call lost or out of order, a journaled call run again, the dead worker answering.
  it('exits 0: every call answered once, in call order, none by the dead worker after its death, no journaled call run again', () => {
    expect(run.code, `stdout:\n${run.stdout}\nstderr:\n${run.stderr}`).toBe(0);
    expect(run.stdout).toMatch(/^every call answered once, in call order: yes; answered by worker-2 after its death: no; run again: .*; a journaled call ran again: no$/m);
  });

  // Fails if the kill is not placed after worker-2 started calls, or recoverWorker hands back nothing it held.
  it('kills worker-2 after it started three calls, and recoverWorker hands back what it held', () => {
    expect(run.stdout).toMatch(/^killed worker-2 \(SIGKILL\) after it started pages \d+, \d+, \d+(, \d+)*; it is not coming back$/m);
    expect(run.stdout).toMatch(/^recoverWorker\('worker-2'\) handed back [1-9]\d* call\(s\): \d+/m);
  });

  // Fails if results were matched by completion order, or the handed-back calls were answered by the dead worker.
  it('answers the 24 calls in call order, each its own page, the handed-back ones by the live workers', () => {
    const lines = run.stdout.split('\n').filter((line) => line.startsWith('  call_'));
    expect(lines.map((l) => l.split(':')[0]!.trim())).toEqual(Array.from({ length: 24 }, (_, i) => `call_${i}`));
    for (const [i, line] of lines.entries()) expect(line).toMatch(new RegExp(`^  call_${i}: https://example\\.com/page/${i} fetched by worker-[123]$`));
    const handedBack = /handed back \d+ call\(s\): ([\d, ]+)$/m.exec(run.stdout)![1]!.split(', ').map(Number);
    for (const i of handedBack) expect(lines[i]).toMatch(/fetched by worker-[13]$/);
  });
});
