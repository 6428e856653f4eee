import { execFileSync } from 'node:child_process';
import { mkdir, symlink, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { toJsonSchema } from '@valibot/to-json-schema';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readFileTool } from '../../lib/tools/read-file.ts';
import type { ReadFileDetails, ReadFileInput } from '../../lib/tools/read-file.ts';
import type { ToolResult } from '../../lib/core/tool/tool.ts';
import { contextFor, tempDir, textOf } from './support.ts';

async function read(
  tool: ReturnType<typeof readFileTool>,
  input: ReadFileInput,
  signal?: AbortSignal,
): Promise<ToolResult<ReadFileDetails>> {
  return (await tool.execute(input, contextFor('read_file', signal))) as ToolResult<ReadFileDetails>;
}

/** Lines "line 1\n" .. "line n\n". */
function numbered(n: number): string {
  return Array.from({ length: n }, (_, i) => `line ${i + 1}\n`).join('');
}

describe('readFileTool', () => {
  it('reads a whole UTF-8 file relative to the root', async () => {
    const root = await tempDir();
    await mkdir(path.join(root, 'src'));
    await writeFile(path.join(root, 'src', 'a.ts'), 'export const ä = "€";\n');
    const result = await read(readFileTool({ root }), { path: 'src/a.ts' });
    expect(textOf(result)).toBe('export const ä = "€";\n');
    expect(result.details).toEqual({
      path: 'src/a.ts',
      fileBytes: Buffer.byteLength('export const ä = "€";\n'),
      startLine: 1,
      endLine: 1,
      truncated: false,
      nextOffset: null,
      bytesRead: Buffer.byteLength('export const ä = "€";\n'),
    });
  });

  it('accepts an absolute path inside the root', async () => {
    const root = await tempDir();
    await writeFile(path.join(root, 'a.txt'), 'x');
    expect(textOf(await read(readFileTool({ root }), { path: path.join(root, 'a.txt') }))).toBe('x');
  });

  it('returns lines offset..offset+limit-1 and says where the file continues', async () => {
    const root = await tempDir();
    await writeFile(path.join(root, 'f.txt'), numbered(10));
    const tool = readFileTool({ root });
    const middle = await read(tool, { path: 'f.txt', offset: 3, limit: 2 });
    expect(textOf(middle)).toBe(
      'line 3\nline 4\n[showing lines 3-4; the file continues (43 more bytes): call read_file with offset=5 to read on]',
    );
    expect(middle.details).toMatchObject({ startLine: 3, endLine: 4, truncated: false, nextOffset: 5 });

    const tail = await read(tool, { path: 'f.txt', offset: 9 });
    expect(textOf(tail)).toBe('line 9\nline 10\n');
    expect(tail.details).toMatchObject({ endLine: 10, nextOffset: null });

    const exact = await read(tool, { path: 'f.txt', offset: 9, limit: 2 });
    expect(textOf(exact)).toBe('line 9\nline 10\n');
  });

  it('counts a last line without a newline, and handles an empty file', async () => {
    const root = await tempDir();
    await writeFile(path.join(root, 'f.txt'), 'a\nb');
    await writeFile(path.join(root, 'empty.txt'), '');
    const tool = readFileTool({ root });
    expect(textOf(await read(tool, { path: 'f.txt', offset: 2 }))).toBe('b');
    await expect(read(tool, { path: 'f.txt', offset: 3 })).rejects.toThrow(
      'offset 3 is past the end of "f.txt", which has 2 lines; use an offset between 1 and 2',
    );
    const empty = await read(tool, { path: 'empty.txt' });
    expect(textOf(empty)).toBe('');
    expect(empty.details).toMatchObject({ fileBytes: 0, endLine: 0, nextOffset: null });
  });

  it('rejects a path outside the root, telling the model what to do', async () => {
    const root = await tempDir();
    const tool = readFileTool({ root });
    await expect(read(tool, { path: '../x' })).rejects.toThrow(
      `path "../x" is outside the workspace root ${root}; use a path inside it`,
    );
    await expect(read(tool, { path: '/etc/passwd' })).rejects.toThrow('is outside the workspace root');
    await expect(read(tool, { path: 'a/../../x' })).rejects.toThrow('is outside the workspace root');
  });

  it('rejects a symbolic link that leads outside the root', async () => {
    const outside = await tempDir();
    const root = await tempDir();
    await writeFile(path.join(outside, 'secret.txt'), 'secret');
    await symlink(path.join(outside, 'secret.txt'), path.join(root, 'link.txt'));
    await expect(read(readFileTool({ root }), { path: 'link.txt' })).rejects.toThrow(
      /path "link.txt" leads through a symbolic link to a place outside the workspace root/,
    );
  });

  it('says a missing file was not found, names it, and suggests list_files', async () => {
    const root = await tempDir();
    const error = await read(readFileTool({ root }), { path: 'src/nope.ts' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe(
      `file not found: "src/nope.ts" (looked for ${path.join(root, 'src', 'nope.ts')}). ` +
        'Call list_files with a pattern such as "**/*" to see which files exist.',
    );
  });

  it('refuses a directory and a binary file with a message that says what to use instead', async () => {
    const root = await tempDir();
    await mkdir(path.join(root, 'dir'));
    await writeFile(path.join(root, 'bin.dat'), Buffer.from([1, 2, 0, 3]));
    const tool = readFileTool({ root });
    await expect(read(tool, { path: 'dir' })).rejects.toThrow('"dir" is a directory, not a file; call list_files with path "dir"');
    await expect(read(tool, { path: 'bin.dat' })).rejects.toThrow('"bin.dat" looks like a binary file');
  });

  it('refuses a FIFO instead of blocking on it', async () => {
    const root = await tempDir();
    execFileSync('mkfifo', [path.join(root, 'pipe')]);
    await expect(read(readFileTool({ root }), { path: 'pipe' })).rejects.toThrow('"pipe" is not a regular file');
  });

  it('bounds the output to maxBytes, ending on a whole line, with a marker saying where to continue (case C20)', async () => {
    const root = await tempDir();
    const content = numbered(1000); // "line 1\n" ... 7-12 bytes per line
    await writeFile(path.join(root, 'big.txt'), content);
    const result = await read(readFileTool({ root, maxBytes: 100 }), { path: 'big.txt' });
    const text = textOf(result);
    // 9 lines of "line N\n" (7 bytes) = 63 bytes, then "line 10\n".."line 13\n" (8 bytes each) = 95 bytes.
    const shown = numbered(13);
    expect(text.startsWith(shown)).toBe(true);
    expect(text.slice(shown.length)).toBe(
      `[output limit of 100 bytes reached: showing lines 1-13 of big.txt (${content.length} bytes); ` +
        `${content.length - shown.length} bytes of the file after line 13 are not shown. Call read_file with offset=14 to continue.]`,
    );
    expect(result.details).toMatchObject({ truncated: true, endLine: 13, nextOffset: 14 });
  });

  it('following nextOffset reproduces the file exactly, for any content and budget', async () => {
    const root = await tempDir();
    const file = path.join(root, 'f.txt');
    await fc.assert(
      fc.asyncProperty(
        // Lines of up to 30 chars of 1-3 bytes: at most 91 bytes with the newline, so every line fits the budget.
        fc.array(fc.string({ unit: fc.constantFrom('a', 'b', ' ', '\r', 'é', '€'), maxLength: 30 }), { maxLength: 40 }),
        fc.boolean(),
        fc.integer({ min: 91, max: 300 }),
        fc.option(fc.integer({ min: 1, max: 7 }), { nil: undefined }),
        async (lines, trailingNewline, maxBytes, limit) => {
          const content = lines.join('\n') + (trailingNewline && lines.length > 0 ? '\n' : '');
          await writeFile(file, content);
          const tool = readFileTool({ root, maxBytes });
          let offset: number | null = 1;
          let rebuilt = '';
          let calls = 0;
          while (offset !== null) {
            const result: ToolResult<ReadFileDetails> = await read(tool, limit === undefined ? { path: 'f.txt', offset } : { path: 'f.txt', offset, limit });
            const text = textOf(result);
            const note = text.lastIndexOf('\n[');
            rebuilt += result.details!.nextOffset === null ? text : text.slice(0, note + 1);
            offset = result.details!.nextOffset;
            expect(++calls).toBeLessThan(200);
          }
          expect(rebuilt).toBe(content);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('shows the head of a single line longer than the budget, without a broken character', async () => {
    const root = await tempDir();
    await writeFile(path.join(root, 'min.js'), `${'€'.repeat(1000)}\nsecond\n`);
    const result = await read(readFileTool({ root, maxBytes: 100 }), { path: 'min.js' });
    const text = textOf(result);
    expect(text.startsWith('€'.repeat(33))).toBe(true);
    expect(text).not.toContain('\uFFFD');
    expect(text).toContain(
      '[line 1 alone is longer than the 100-byte limit; only its first 99 bytes are shown. Use the shell tool (e.g. "cut -c 1-2000") to see the rest of it. 7 bytes of the file follow; continue with offset=2.]',
    );
    expect(result.details).toMatchObject({ truncated: true, endLine: 1, nextOffset: 2 });
  });

  it('reads a range deep inside a file larger than the budget (lines before offset are only counted)', async () => {
    const root = await tempDir();
    await writeFile(path.join(root, 'log.txt'), numbered(200_000));
    const result = await read(readFileTool({ root, maxBytes: 1000 }), { path: 'log.txt', offset: 150_000, limit: 2 });
    expect(textOf(result)).toMatch(/^line 150000\nline 150001\n\[showing lines 150000-150001; the file continues/);
  });

  it('rejects when ctx.signal is aborted', async () => {
    const root = await tempDir();
    await writeFile(path.join(root, 'a.txt'), 'x');
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(read(readFileTool({ root }), { path: 'a.txt' }, controller.signal)).rejects.toThrow('stop');
  });

  it('read_file on a 10 GB file whose first line exceeds the byte budget reads a bounded amount', async () => {
    const root = await tempDir();
    const file = path.join(root, 'huge.log');
    // 16 KiB of text (past the 8 KiB head check), then a sparse hole of NUL bytes up to 10 GB: no 10 GB is written.
    await writeFile(file, 'x'.repeat(16 * 1024));
    await truncate(file, 10 * 1024 ** 3);
    const result = await read(readFileTool({ root, maxBytes: 4096 }), { path: 'huge.log' });
    expect(result.details).toMatchObject({ fileBytes: 10 * 1024 ** 3, endLine: 1, truncated: true, nextOffset: null });
    expect(result.details?.bytesRead).toBeLessThanOrEqual(64 * 1024 * 1024);
    expect(textOf(result)).toBe(
      `${'x'.repeat(4096)}\n[line 1 alone is longer than the 4096-byte limit; only its first 4096 bytes are shown. Use the ` +
        'shell tool (e.g. "cut -c 1-2000") to see the rest of it. Its end was not found within the first 67108864 bytes ' +
        'of the file (the scan limit).]',
    );
    // An offset beyond the scan limit is refused instead of counting lines through 10 GB.
    await expect(read(readFileTool({ root, maxBytes: 4096, maxScanBytes: 1 << 20 }), { path: 'huge.log', offset: 2 })).rejects.toThrow(
      'offset 2 of "huge.log" was not reached within the first 1048576 bytes',
    );
  });

  it('detects binary content in what would be returned, not only in the first 8 KiB', async () => {
    const root = await tempDir();
    await writeFile(path.join(root, 'late.bin'), Buffer.concat([Buffer.from(numbered(2000)), Buffer.from([0, 1, 2, 10])]));
    const tool = readFileTool({ root });
    await expect(read(tool, { path: 'late.bin', offset: 1990 })).rejects.toThrow('"late.bin" looks like a binary file');
    // The text before the NUL byte is still readable.
    expect(textOf(await read(tool, { path: 'late.bin', offset: 1999, limit: 2 }))).toMatch(/^line 1999\nline 2000\n\[showing lines 1999-2000;/);
  });

  it('rejects maxScanBytes below maxBytes at creation', () => {
    expect(() => readFileTool({ maxBytes: 100, maxScanBytes: 99 })).toThrow('options.maxScanBytes must be an integer >= maxBytes (100)');
  });

  it('describes its input for the model', () => {
    const schema = toJsonSchema(readFileTool().input as never) as Record<string, unknown>;
    expect(schema).toMatchObject({
      type: 'object',
      required: ['path'],
      additionalProperties: false,
      properties: {
        path: { type: 'string', description: expect.any(String) },
        offset: { type: 'integer', minimum: 1, description: expect.any(String) },
        limit: { type: 'integer', minimum: 1, description: expect.any(String) },
      },
    });
  });
});
