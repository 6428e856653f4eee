/**
 * `toolrun serve-mcp --tools shell,read_file,grep,list_files --workspace DIR`: the ready-made
 * tools of `toolrun/tools`, built by name and rooted at one workspace, so they can be served
 * without writing a module. Each gets the defaults `codingTools` gives it (the shell's output
 * bounded, the file tools kept inside the workspace; the shell sandboxed when the shell tool
 * is) and MCP annotations that tell a client which ones only read.
 *
 * @module
 */
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Tool } from '../core/tool/tool.ts';
import type { McpToolOptions } from '../mcp/server/mcp-server.ts';
import { grepTool, listFilesTool, readFileTool, shellTool } from '../tools/index.ts';
import { CliInputError } from './errors.ts';

/** The names `--tools` accepts. */
export const READY_MADE_TOOL_NAMES = ['shell', 'read_file', 'grep', 'list_files'] as const;

type ReadyMadeName = (typeof READY_MADE_TOOL_NAMES)[number];

/** How each ready-made tool is built for a workspace, and what a client is told about it (MCP `annotations`). */
const READY_MADE: Record<ReadyMadeName, { make: (root: string) => Tool; annotations: NonNullable<McpToolOptions['annotations']> }> = {
  shell: { make: (root) => shellTool({ cwd: root }) as Tool, annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true } },
  read_file: { make: (root) => readFileTool({ root }) as Tool, annotations: { readOnlyHint: true, openWorldHint: false } },
  list_files: { make: (root) => listFilesTool({ root }) as Tool, annotations: { readOnlyHint: true, openWorldHint: false } },
  grep: { make: (root) => grepTool({ root }) as Tool, annotations: { readOnlyHint: true, openWorldHint: false } },
};

/** The tools `--tools` named, the workspace they work in, and their MCP annotations by name. */
export interface ReadyMadeTools {
  tools: Tool[];
  /** The absolute path of the workspace. */
  workspace: string;
  perTool: Record<string, McpToolOptions>;
}

/**
 * Builds the ready-made tools named in `list` (comma-separated, in the order given, repeats
 * ignored), rooted at `workspace` (resolved against `cwd`).
 *
 * @throws CliInputError for an empty list, a name that is not a ready-made tool (the message
 *   lists the names there are), or a workspace that is not an existing folder.
 * @example
 * ```ts
 * const { tools } = await readyMadeTools('read_file,grep', { workspace: '/repo' });
 * ```
 */
export async function readyMadeTools(list: string, options: { workspace?: string | undefined; cwd?: string } = {}): Promise<ReadyMadeTools> {
  const names = [...new Set(list.split(',').map((name) => name.trim()).filter((name) => name !== ''))];
  const known = READY_MADE_TOOL_NAMES.join(', ');
  if (names.length === 0) throw new CliInputError(`serve-mcp: --tools needs at least one tool name (the ready-made tools: ${known})`);
  const unknown = names.filter((name) => !(READY_MADE_TOOL_NAMES as readonly string[]).includes(name));
  if (unknown.length > 0) {
    throw new CliInputError(`serve-mcp: --tools: no ready-made tool named ${unknown.map((name) => `'${name}'`).join(', ')} (the ready-made tools: ${known})`);
  }
  const workspace = resolve(options.cwd ?? process.cwd(), options.workspace ?? '.');
  let isFolder: boolean;
  try {
    isFolder = (await stat(workspace)).isDirectory();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CliInputError(`serve-mcp: --workspace ${options.workspace ?? '.'}: ${code === 'ENOENT' ? 'no such folder' : (error as Error).message}`);
  }
  if (!isFolder) throw new CliInputError(`serve-mcp: --workspace ${options.workspace ?? '.'}: not a folder`);
  const chosen = names as ReadyMadeName[];
  return {
    tools: chosen.map((name) => READY_MADE[name].make(workspace)),
    workspace,
    perTool: Object.fromEntries(chosen.map((name) => [name, { annotations: READY_MADE[name].annotations }])),
  };
}
