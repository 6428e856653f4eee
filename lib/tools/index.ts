/**
 * Ready-made tools for a coding agent: `shell`, `read_file`, `list_files`, `grep`.
 *
 * @module
 */
import { grepTool } from './grep.ts';
import type { GrepTool } from './grep.ts';
import { listFilesTool } from './list-files.ts';
import type { ListFilesTool } from './list-files.ts';
import { readFileTool } from './read-file.ts';
import type { ReadFileTool } from './read-file.ts';
import { shellTool } from './shell.ts';
import type { ShellTool } from './shell.ts';

export { BoundedOutput } from './bounded-output.ts';
export type { RenderedOutput } from './bounded-output.ts';
export { grepInput, grepTool } from './grep.ts';
export type { GrepDetails, GrepInput, GrepProgress, GrepTool, GrepToolOptions } from './grep.ts';
export { listFilesInput, listFilesTool } from './list-files.ts';
export type { ListFilesDetails, ListFilesInput, ListFilesTool, ListFilesToolOptions } from './list-files.ts';
export { readFileInput, readFileTool } from './read-file.ts';
export type { ReadFileDetails, ReadFileInput, ReadFileTool, ReadFileToolOptions } from './read-file.ts';
export { RegExpTimeoutError, matchLines, safeRegExpTest } from './safe-regexp.ts';
export type { LineMatch, SafeRegExpOptions } from './safe-regexp.ts';
export { SANDBOX_HIDDEN_PATHS, SANDBOX_SYSTEM_PATHS, shellSandboxStatus } from './sandbox.ts';
export type { SandboxLimit, ShellSandboxOptions, ShellSandboxStatus } from './sandbox.ts';
export { DEFAULT_SHELL_ENV, SHELL_CALL_ENV, shellInput, shellTool } from './shell.ts';
export type { ShellDetails, ShellInput, ShellKillReason, ShellProgress, ShellTool, ShellToolOptions } from './shell.ts';

/** Options of {@link codingTools}. */
export interface CodingToolsOptions {
  /**
   * The workspace: the shell's working directory and the root the file tools stay inside.
   * Resolved when the tools are created.
   * @default process.cwd()
   */
  root?: string;
}

/** The four tools {@link codingTools} returns, in that order. */
export type CodingTools = [ShellTool, ReadFileTool, ListFilesTool, GrepTool];

/**
 * The tools a coding agent needs, all rooted at one workspace, each with its defaults:
 * `[shellTool({ cwd: root }), readFileTool({ root }), listFilesTool({ root }), grepTool({ root })]`.
 * Build the tools one by one for other limits.
 *
 * @example
 * ```ts
 * for await (const event of runTools(calls, { tools: codingTools({ root: '/repo' }), timeoutMs: 120_000 })) {
 *   // ...
 * }
 * ```
 */
export function codingTools(options: CodingToolsOptions = {}): CodingTools {
  const root = options.root;
  return root === undefined
    ? [shellTool(), readFileTool(), listFilesTool(), grepTool()]
    : [shellTool({ cwd: root }), readFileTool({ root }), listFilesTool({ root }), grepTool({ root })];
}
