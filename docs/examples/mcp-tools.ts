/**
 * docs/tools.md, section 3: the tools of an MCP server (here the reference filesystem
 * server, installed from npm) as toolrun tools. `spec/docs/examples.spec.ts` runs this file
 * on a temp folder; run it yourself with `npx tsx docs/examples/mcp-tools.ts <folder>`.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
// #region mcp
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { mcpTools, runTools, toAnthropicTools, type ToolEvent } from 'toolrun';

/** Reads two files of `folder` through the filesystem MCP server, in parallel. */
export async function readThroughMcp(folder: string, files: [string, string]): Promise<ToolEvent[]> {
  // Usually `{ command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', folder] }`.
  const transport = new StdioClientTransport({ command: process.execPath, args: [filesystemServerBin(), folder], stderr: 'ignore' });
  const client = new Client({ name: 'toolrun-example', version: '1.0.0' });
  await client.connect(transport); // starts the server process
  try {
    // One toolrun tool per server tool: input = the server's inputSchema (validated as JSON Schema),
    // progress notifications → yields, the call's signal → notifications/cancelled.
    const tools = await mcpTools(client, { prefix: 'fs_' });
    console.log(`${tools.length} tools, e.g. ${toAnthropicTools(tools)[0]?.name}`); // ready for the model too

    const events: ToolEvent[] = [];
    const calls = files.map((file, i) => ({ id: `call_${i}`, name: 'fs_read_text_file', arguments: { path: join(folder, file) } }));
    for await (const event of runTools(calls, { tools })) events.push(event);
    return events; // a server error (isError: true) arrives as an error result
  } finally {
    await client.close(); // ends the server process
  }
}
// #endregion mcp

/** `node_modules/@modelcontextprotocol/server-filesystem/dist/index.js`, found from its package.json. */
export function filesystemServerBin(): string {
  const manifest = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-filesystem/package.json');
  return join(dirname(manifest), 'dist/index.js');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const folder = process.argv[2] ?? process.cwd();
  for (const event of await readThroughMcp(folder, ['package.json', 'README.md'])) {
    if (event.type === 'tool_result') console.log(event.message.toolCallId, event.message.isError, JSON.stringify(event.message.content).slice(0, 120));
  }
}
