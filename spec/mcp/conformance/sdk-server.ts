/**
 * The comparison server of `npm run test:conformance`: a plain `McpServer` of
 * `@modelcontextprotocol/sdk`, no toolrun runtime, serving the functions of `tools.ts` the
 * way a hand-written SDK server would: each tool registered with `registerTool` (a loose zod
 * object as its input schema, as `registerTool` takes no JSON Schema), its yields sent as
 * `notifications/progress`, its return value's content sent as is, a throw as an `isError`
 * result. The tools get no client of their own (`NO_CLIENT`): the SDK gives a tool callback
 * its request's `extra`, not a client object. Hosted with `serveHttp` (sessions, the loopback
 * Host/Origin check) with resumability off, as a plain server has no event store.
 *
 * Prints `sdk: serving N tools at <url>` and runs until SIGTERM or SIGINT.
 *
 * @module
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { NO_CLIENT, normalizeToolOutput, type Tool } from '../../../lib/index.ts';
import { serveHttp } from '../../../lib/mcp/index.ts';
import * as module from './tools.ts';

const tools = (Object.values(module) as unknown[]).filter((value): value is Tool => typeof value === 'object' && value !== null && 'execute' in value);

function newServer(): McpServer {
  const server = new McpServer({ name: 'plain-sdk', version: '1.0.0' }, { capabilities: { logging: {} } });
  for (const tool of tools) {
    server.registerTool(tool.name, { description: tool.description ?? tool.name, inputSchema: z.object({}).passthrough() }, async (args, extra) => {
      try {
        const context = { toolCallId: String(extra.requestId), toolName: tool.name, index: 0, signal: extra.signal, client: NO_CLIENT };
        const running = tool.execute(args, context);
        let value: unknown;
        if (typeof running === 'object' && running !== null && Symbol.asyncIterator in running) {
          const generator = running as AsyncGenerator<unknown, unknown, undefined>;
          let count = 0;
          for (let step = await generator.next(); ; step = await generator.next()) {
            if (step.done === true) {
              value = step.value;
              break;
            }
            const token = extra._meta?.progressToken;
            const p = step.value as { progress?: number; total?: number };
            if (token !== undefined) {
              await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: typeof p.progress === 'number' ? p.progress : ++count, ...(typeof p.total === 'number' ? { total: p.total } : {}) } });
            }
          }
        } else {
          value = await running;
        }
        return { content: normalizeToolOutput(value).content as never };
      } catch (error) {
        return { content: [{ type: 'text', text: error instanceof Error ? error.message : String(error) }], isError: true };
      }
    });
  }
  return server;
}

const served = await serveHttp(() => newServer().server, { port: 0, host: '127.0.0.1', resumability: false });
process.stdout.write(`sdk: serving ${tools.length} tools at ${served.url!.href}\n`);
const stop = (): void => void served.close().then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
