import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { toJsonSchema } from '@valibot/to-json-schema';
import { describe, expect, it } from 'vitest';
import { listFilesTool } from '../../lib/tools/list-files.ts';
import type { ListFilesDetails, ListFilesInput } from '../../lib/tools/list-files.ts';
import type { ToolResult } from '../../lib/core/tool/tool.ts';
import { contextFor, tempDir, textOf } from './support.ts';

async function list(
  tool: ReturnType<typeof listFilesTool>,
  input: ListFilesInput,
  signal?: AbortSignal,
): Promise<ToolResult<ListFilesDetails>> {
  return (await tool.execute(input, contextFor('list_files', signal))) as ToolResult<ListFilesDetails>;
}

/** Creates `files` (paths relative to `root`) with small contents. */
async function populate(root: string, files: string[]): Promise<void> {
  for (const file of files) {
    await mkdir(path.dirname(path.join(root, file)), { recursive: true });
    await writeFile(path.join(root, file), file);
  }
}

describe('listFilesTool', () => {
  it('lists matching files sorted, relative to the root, skipping node_modules and .git but not dotfiles', async () => {
    const root = await tempDir();
    await populate(root, [
      'lib/z.ts',
      'lib/a.ts',
      'lib/sub/b.ts',
      'lib/readme.md',
      'lib/.hidden.ts',
      'node_modules/pkg/index.ts',
      'lib/node_modules/x.ts',
      '.git/config.ts',
      'B.ts',
    ]);
    const result = await list(listFilesTool({ root }), { pattern: '**/*.ts' });
    expect(textOf(result)).toBe(['B.ts', 'lib/.hidden.ts', 'lib/a.ts', 'lib/sub/b.ts', 'lib/z.ts'].join('\n'));
    expect(result.details).toEqual({ total: 5, shown: 5, truncated: false });
  });

  it('searches under path, still printing paths relative to the root', async () => {
    const root = await tempDir();
    await populate(root, ['lib/a.ts', 'lib/sub/b.ts', 'spec/a.spec.ts']);
    const result = await list(listFilesTool({ root }), { pattern: '**/*.ts', path: 'lib' });
    expect(textOf(result)).toBe('lib/a.ts\nlib/sub/b.ts');
    const top = await list(listFilesTool({ root }), { pattern: '*', path: 'lib' });
    expect(textOf(top)).toBe('lib/a.ts');
  });

  it('bounds the list to maxEntries with a marker stating how many were left out (case C20)', async () => {
    const root = await tempDir();
    await populate(root, Array.from({ length: 30 }, (_, i) => `f${String(i).padStart(2, '0')}.txt`));
    const result = await list(listFilesTool({ root, maxEntries: 10 }), { pattern: '*.txt' });
    const lines = textOf(result).split('\n');
    expect(lines.slice(0, 10)).toEqual(Array.from({ length: 10 }, (_, i) => `f0${i}.txt`));
    expect(lines.slice(10)).toEqual([
      '[... 20 more files not shown: 30 matched, the limit is 10. Narrow the pattern or the path to see them.]',
    ]);
    expect(result.details).toEqual({ total: 30, shown: 10, truncated: true });
  });

  it('says so when nothing matches (not an error)', async () => {
    const root = await tempDir();
    await populate(root, ['a.ts']);
    const result = await list(listFilesTool({ root }), { pattern: '**/*.py' });
    expect(textOf(result)).toBe('No files match "**/*.py" in the workspace root.');
    expect(result.details).toEqual({ total: 0, shown: 0, truncated: false });
  });

  it('refuses a path or a pattern that reaches outside the root', async () => {
    const root = await tempDir();
    const tool = listFilesTool({ root });
    await expect(list(tool, { pattern: '*', path: '..' })).rejects.toThrow(
      `path ".." is outside the workspace root ${root}; use a path inside it`,
    );
    await expect(list(tool, { pattern: '../*' })).rejects.toThrow(
      'pattern "../*" reaches outside the workspace; write it relative to the workspace root without ".." segments',
    );
    await expect(list(tool, { pattern: '/etc/*' })).rejects.toThrow('reaches outside the workspace');
  });

  it('lists nothing outside the root even through braces or a symbolic link', async () => {
    const parent = await tempDir();
    const root = path.join(parent, 'root');
    await populate(parent, ['outside/secret.txt', 'root/a/f.txt']);
    await symlink(path.join(parent, 'outside'), path.join(root, 'link'));
    const tool = listFilesTool({ root });
    expect(textOf(await list(tool, { pattern: '{../outside/*,a/*}' }))).toBe('a/f.txt');
    expect(textOf(await list(tool, { pattern: '**/*' }))).toBe('a/f.txt');
  });

  it('list_files does not escape the workspace through a symlinked directory', async () => {
    const parent = await tempDir();
    const root = path.join(parent, 'root');
    await populate(parent, ['home/.ssh/id_rsa', 'root/a/f.txt']);
    await symlink(path.join(parent, 'home'), path.join(root, 'homelink'));
    await symlink(path.join(root, 'a'), path.join(root, 'alink'));
    const tool = listFilesTool({ root });
    await expect(list(tool, { pattern: '*', path: 'homelink/.ssh' })).rejects.toThrow(
      /path "homelink\/\.ssh" leads through a symbolic link to a place outside the workspace root/,
    );
    await expect(list(tool, { pattern: 'homelink/.ssh/*' })).rejects.toThrow('pattern "homelink/.ssh/*" leads through a symbolic link');
    expect(textOf(await list(tool, { pattern: '{homelink,alink}/**' }))).toMatch(/^No files match/);
    // A link to a directory inside the root may be the start: its files are shown at their real place.
    expect(textOf(await list(tool, { pattern: '*', path: 'alink' }))).toBe('a/f.txt');
  });

  it('says a missing directory does not exist, and a file is not a directory', async () => {
    const root = await tempDir();
    await populate(root, ['a.ts']);
    const tool = listFilesTool({ root });
    await expect(list(tool, { pattern: '*', path: 'nope' })).rejects.toThrow(
      `directory "nope" does not exist in the workspace root ${root}; call list_files without path to see what is there`,
    );
    await expect(list(tool, { pattern: '*', path: 'a.ts' })).rejects.toThrow('"a.ts" is a file, not a directory');
  });

  it('honours a custom ignore list', async () => {
    const root = await tempDir();
    await populate(root, ['node_modules/x.ts', 'dist/y.ts', 'z.ts']);
    const result = await list(listFilesTool({ root, ignore: ['dist/**'] }), { pattern: '**/*.ts' });
    expect(textOf(result)).toBe('node_modules/x.ts\nz.ts');
  });

  it('rejects when ctx.signal is aborted, instead of returning a partial list', async () => {
    const root = await tempDir();
    await populate(root, ['a.ts']);
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(list(listFilesTool({ root }), { pattern: '**/*' }, controller.signal)).rejects.toThrow('stop');
  });

  it('rejects a bad maxEntries at creation', () => {
    expect(() => listFilesTool({ maxEntries: 0 })).toThrow('options.maxEntries must be a positive integer, received number 0');
  });

  it('describes its input for the model', () => {
    const schema = toJsonSchema(listFilesTool().input as never) as Record<string, unknown>;
    expect(schema).toMatchObject({
      type: 'object',
      required: ['pattern'],
      additionalProperties: false,
      properties: {
        pattern: { type: 'string', description: expect.stringContaining('lib/**/*.ts') },
        path: { type: 'string', description: expect.any(String) },
      },
    });
  });
});
