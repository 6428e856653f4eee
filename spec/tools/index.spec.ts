import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { codingTools, grepTool, listFilesTool, readFileTool, shellTool } from '../../lib/tools/index.ts';
import type { ShellDetails, ShellProgress } from '../../lib/tools/index.ts';
import type { ToolResult } from '../../lib/core/tool/tool.ts';
import { asGenerator, contextFor, drain, tempDir, textOf } from './support.ts';

describe('codingTools', () => {
  it('returns shell, read_file, list_files and grep, in that order', () => {
    expect(codingTools().map((tool) => tool.name)).toEqual(['shell', 'read_file', 'list_files', 'grep']);
    expect([shellTool, readFileTool, listFilesTool, grepTool].every((factory) => typeof factory === 'function')).toBe(true);
  });

  it('roots every tool at options.root: the shell runs there and the file tools resolve against it', async () => {
    const root = await tempDir();
    await writeFile(path.join(root, 'hello.txt'), 'hello world\n');
    const [shell, readFile, listFiles, grep] = codingTools({ root });

    const pwd = await drain(asGenerator<ShellProgress, ToolResult<ShellDetails>>(shell.execute({ command: 'pwd' }, contextFor('shell'))));
    expect(textOf(pwd.result)).toBe(`${root}\n[exit code 0]`);
    expect(textOf((await readFile.execute({ path: 'hello.txt' }, contextFor('read_file'))) as ToolResult)).toBe('hello world\n');
    expect(textOf((await listFiles.execute({ pattern: '*' }, contextFor('list_files'))) as ToolResult)).toBe('hello.txt');
    const found = await drain(asGenerator<unknown, ToolResult>(grep.execute({ pattern: 'wor' }, contextFor('grep'))));
    expect(textOf(found.result)).toBe('hello.txt:1:hello world');
    await expect(readFile.execute({ path: '../x' }, contextFor('read_file'))).rejects.toThrow(`outside the workspace root ${root}`);
  });
});
