import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { codingTools, grepTool, listFilesTool, readFileTool, shellTool } from '../../lib/tools/index.ts';
import { sandboxAvailable, sandboxSkipNote } from '../sandbox.ts';
import type { ShellDetails, ShellProgress } from '../../lib/tools/index.ts';
import type { ToolResult } from '../../lib/core/tool/tool.ts';
import { asGenerator, contextFor, drain, tempDir, textOf } from './support.ts';

// The shell runs each command in bubblewrap (its default): where the sandbox cannot start, the
// shell's half of the root check is skipped (spec/sandbox.ts says why, once).
describe('codingTools', () => {
  it('returns shell, read_file, list_files and grep, in that order', () => {
    expect(codingTools().map((tool) => tool.name)).toEqual(['shell', 'read_file', 'list_files', 'grep']);
    expect([shellTool, readFileTool, listFilesTool, grepTool].every((factory) => typeof factory === 'function')).toBe(true);
  });

  it.skipIf(!sandboxAvailable)(`roots the shell at options.root: it runs there${sandboxSkipNote}`, async () => {
    const root = await tempDir();
    const [shell] = codingTools({ root });
    const pwd = await drain(asGenerator<ShellProgress, ToolResult<ShellDetails>>(shell.execute({ command: 'pwd' }, contextFor('shell'))));
    expect(textOf(pwd.result)).toBe(`${root}\n[exit code 0]`);
  });

  it('roots the file tools at options.root: they resolve against it and refuse paths outside it', async () => {
    const root = await tempDir();
    await writeFile(path.join(root, 'hello.txt'), 'hello world\n');
    const [, readFile, listFiles, grep] = codingTools({ root });
    expect(textOf((await readFile.execute({ path: 'hello.txt' }, contextFor('read_file'))) as ToolResult)).toBe('hello world\n');
    expect(textOf((await listFiles.execute({ pattern: '*' }, contextFor('list_files'))) as ToolResult)).toBe('hello.txt');
    const found = await drain(asGenerator<unknown, ToolResult>(grep.execute({ pattern: 'wor' }, contextFor('grep'))));
    expect(textOf(found.result)).toBe('hello.txt:1:hello world');
    await expect(readFile.execute({ path: '../x' }, contextFor('read_file'))).rejects.toThrow(`outside the workspace root ${root}`);
  });
});
