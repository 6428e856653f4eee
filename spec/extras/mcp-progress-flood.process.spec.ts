/**
 * A7 from the client's side: an MCP server (a child process over stdio) that floods progress
 * notifications for a call, and never answers it, does not stop the run's clock in the
 * client's process. toolrun's `mcpTools` over the SDK's `Client` and `StdioClientTransport`;
 * the server is spec/fixtures/mcp/progress-flood-server.mjs. The call still ends at its
 * timeout with the timeout result, and a timer of the consumer fires while the flood goes on.
 * The consumer's loop gives up after `GIVE_UP_UPDATES` progress events (a count: the flood and
 * the clock slow down together on a loaded machine), so a regression fails instead of hanging. This holds without the turn clock as well: the flood
 * reaches the client through the pipe, a read per macrotask, so timers get their turns between
 * reads, and the client's progress queue is bounded (`progressHighWaterMark`); the spec keeps
 * it so.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { mcpTools, runTools, type ToolEvent } from '../../lib/index.ts';

/** Progress events after which the loop stops: the call ends at its 0.5 s timeout long before. */
const GIVE_UP_UPDATES = 5_000_000;
const server = fileURLToPath(new URL('../fixtures/mcp/progress-flood-server.mjs', import.meta.url));

let client: Client | undefined;
afterEach(async () => {
  await client?.close();
  client = undefined;
});

describe('A7 mcpTools: a server flooding progress does not stop the client run clock', () => {
  it('A7: the flooded call ends at its timeout with the timeout result, and a consumer timer fires during the flood', async () => {
    client = new Client({ name: 'spec', version: '0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [server], stderr: 'pipe' }));
    const tools = await mcpTools(client);
    let updates = 0;
    let updatesWhenTimerFired = -1;
    setTimeout(() => (updatesWhenTimerFired = updates), 100);
    const events: ToolEvent[] = [];
    let gaveUp = false;
    const run = runTools([{ id: 'f1', name: 'flood', arguments: {} }], { tools, timeoutMs: 500, abortGraceMs: 100 });
    for await (const event of run) {
      if (event.type === 'tool_execution_update') updates++;
      else events.push(event);
      if (updates > GIVE_UP_UPDATES) {
        gaveUp = true;
        break;
      }
    }
    expect(gaveUp).toBe(false);
    expect(updatesWhenTimerFired).toBeGreaterThanOrEqual(0);
    expect(updates).toBeGreaterThan(0);
    const end = events.find((e) => e.type === 'tool_execution_end');
    expect(end?.type === 'tool_execution_end' && end.outcome).toMatch(/^(timed_out|abandoned)$/);
    const result = events.find((e) => e.type === 'tool_result');
    const text = result?.type === 'tool_result' ? result.message.content.map((b) => ('text' in b ? b.text : '')).join('') : '';
    expect(text).toContain('timed out after 500 ms');
  });
});
