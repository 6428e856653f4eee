/**
 * The tool both MCP servers of the `mcp-stdio` / `mcp-http` bench scenarios serve: `echo`,
 * which returns its text. This module is what `toolrun serve-mcp` serves; `plain-server.ts`
 * registers the same tool on a plain SDK `McpServer`.
 */
import * as v from 'valibot';
import { defineTool } from '../../lib/index.ts';

export const echo = defineTool({
  name: 'echo',
  description: 'Returns its text.',
  input: v.object({ text: v.string() }),
  execute: ({ text }) => text,
});
