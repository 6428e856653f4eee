/**
 * `toolrun/dbos` when PostgreSQL is down: an application that registered a durable batch and
 * launches DBOS against a server that has stopped fails at once with DBOS's own
 * `DBOSInitializationError`, which names the database and hides its password — never a hang,
 * and no workflow runs. (A file of its own: DBOS is a process-wide singleton, and here it is
 * never launched. A workflow started after such a launch is not refused: DBOS retries its
 * database until the server is back, which is what lets a batch outlive a PostgreSQL restart.)
 */
import { DBOS, Error as DBOSErrors } from '@dbos-inc/dbos-sdk';
import * as v from 'valibot';
import { afterAll, describe, expect, it } from 'vitest';
import { defineTool } from '../../lib/index.ts';
import { registerDurableBatch } from '../../lib/dbos/index.ts';
import { startPostgres } from '../../lib/dbos/postgres.ts';

let ran = 0;
const work = defineTool({ name: 'work', input: v.object({}), execute: () => (ran++, 'done') });
registerDurableBatch({ name: 'down-batch', tools: [work] });

afterAll(async () => {
  await DBOS.shutdown().catch(() => undefined);
}, 60_000);

describe('toolrun/dbos with PostgreSQL down', () => {
  it('J-dbos-down: DBOS.launch fails with DBOSInitializationError naming the database (its password hidden), and no tool runs', async () => {
    // Fails if registering a batch connects early or swallows the failure, if the launch hangs
    // (the spec's time limit is the hang guard), or if the error shows the password.
    const pg = await startPostgres();
    const url = pg.databaseUrl('toolrun_down_dbos');
    const password = decodeURIComponent(new URL(url).password);
    await pg.stop();
    DBOS.setConfig({ name: 'toolrun_down', systemDatabaseUrl: url, logLevel: 'error' });
    const launched = await DBOS.launch().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(launched).toBeInstanceOf(DBOSErrors.DBOSInitializationError);
    const message = (launched as Error).message;
    expect(message).toContain(`127.0.0.1:${pg.port}/toolrun_down_dbos`);
    expect(message).toMatch(/ECONNREFUSED/);
    expect(message).not.toContain(password);
    expect(ran).toBe(0);
  }, 60_000);
});
