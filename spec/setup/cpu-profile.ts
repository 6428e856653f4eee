/**
 * Opt-in: with `TOOLRUN_SPEC_CPU=/path/file.jsonl`, each fast-project file appends one JSON line
 * per test and per file with the worker process's CPU time (user + system, ms, from
 * `process.cpuUsage()`): `import` is the file's collection (its imports and top level),
 * `total` the whole file. Without the variable it does nothing. docs/reliability.md ("The
 * suite's CPU budget") says how to read it.
 */
import { appendFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';

const out = process.env['TOOLRUN_SPEC_CPU'];
if (out !== undefined && out !== '') {
  const cpuMs = (): number => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  };
  const write = (row: Record<string, unknown>): void => {
    appendFileSync(out, `${JSON.stringify({ pid: process.pid, ...row })}\n`);
  };
  const fileStart = cpuMs();
  const g = globalThis as { __cpuExitHook?: boolean };
  if (g.__cpuExitHook !== true) {
    g.__cpuExitHook = true;
    write({ kind: 'worker-start', ms: fileStart, uptime: process.uptime() });
    process.on('exit', () => write({ kind: 'worker-exit', ms: cpuMs() }));
  }
  let collected = 0;
  let testStart = 0;
  let file = '';
  beforeAll(({}, suite) => {
    file = suite.file.filepath;
    collected = cpuMs();
    write({ file, kind: 'import', ms: collected - fileStart });
  });
  beforeEach(() => {
    testStart = cpuMs();
  });
  afterEach((context) => {
    write({ file, kind: 'test', name: context.task.name, ms: cpuMs() - testStart });
  });
  afterAll(() => {
    write({ file, kind: 'total', ms: cpuMs() - fileStart });
  });
}
