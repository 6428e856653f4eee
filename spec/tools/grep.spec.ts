import { execFileSync } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { toJsonSchema } from '@valibot/to-json-schema';
import { describe, expect, it } from 'vitest';
import { compilePattern, grepTool } from '../../lib/tools/grep.ts';
import type { GrepDetails, GrepInput, GrepProgress } from '../../lib/tools/grep.ts';
import type { ToolResult } from '../../lib/core/tool/tool.ts';
import { asGenerator, contextFor, drain, pollUntil, tempDir, textOf } from './support.ts';

type GrepGen = AsyncGenerator<GrepProgress, ToolResult<GrepDetails>, undefined>;

function grep(tool: ReturnType<typeof grepTool>, input: GrepInput, signal?: AbortSignal): GrepGen {
  return asGenerator(tool.execute(input, contextFor('grep', signal)));
}

async function populate(root: string, files: Record<string, string | Buffer>): Promise<void> {
  for (const [file, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, file)), { recursive: true });
    await writeFile(path.join(root, file), content);
  }
}

describe('grepTool', () => {
  it('lists matching lines as path:line:text, files in sorted order, skipping node_modules and .git', async () => {
    const root = await tempDir();
    await populate(root, {
      'lib/b.ts': 'const x = 1;\nexport function b() {}\n',
      'lib/a.ts': 'export function a() {}\n// nothing\nexport function a2() {}',
      'node_modules/p/index.ts': 'export function hidden() {}\n',
      '.git/HEAD': 'export function git() {}\n',
      '.env.ts': 'export function dot() {}\n',
    });
    const { result } = await drain(grep(grepTool({ root }), { pattern: 'export function \\w+' }));
    expect(textOf(result)).toBe(
      ['.env.ts:1:export function dot() {}', 'lib/a.ts:1:export function a() {}', 'lib/a.ts:3:export function a2() {}', 'lib/b.ts:2:export function b() {}'].join('\n'),
    );
    expect(result.details).toEqual({
      filesSearched: 3,
      filesMatched: 3,
      matches: 4,
      truncated: false,
      skippedBinary: 0,
      skippedLarge: 0,
      skippedUnreadable: 0,
    });
  });

  it('restricts the search to the glob, and honours ignoreCase', async () => {
    const root = await tempDir();
    await populate(root, { 'lib/a.ts': 'TODO: one\n', 'lib/a.md': 'todo: two\n', 'spec/a.ts': 'todo: three\n' });
    const tool = grepTool({ root });
    expect(textOf((await drain(grep(tool, { pattern: 'todo', glob: 'lib/**/*' }))).result)).toBe('lib/a.md:1:todo: two');
    expect(textOf((await drain(grep(tool, { pattern: 'todo', glob: '**/*.ts', ignoreCase: true }))).result)).toBe(
      'lib/a.ts:1:TODO: one\nspec/a.ts:1:todo: three',
    );
  });

  it('says so when nothing matches (not an error)', async () => {
    const root = await tempDir();
    await populate(root, { 'a.txt': 'hello\n', 'b.txt': 'world\n' });
    const { result } = await drain(grep(grepTool({ root }), { pattern: 'absent' }));
    expect(textOf(result)).toBe('No matches for /absent/u in 2 files matching "**/*".');
  });

  it('throws an error naming the invalid regex and the parser message', async () => {
    const root = await tempDir();
    const gen = grep(grepTool({ root }), { pattern: 'foo(bar' });
    await expect(gen.next()).rejects.toThrow(
      /^pattern "foo\(bar" is not a valid JavaScript regular expression: Invalid regular expression: \/foo\(bar\/: Unterminated group\. /,
    );
  });

  it('accepts patterns only valid without the u flag, and \\p{...} with it', () => {
    expect(compilePattern('a\\-b', false).test('a-b')).toBe(true);
    expect(compilePattern('a\\-b', false).flags).toBe('');
    expect(compilePattern('^\\p{Lu}', true).flags).toBe('iu');
    expect(compilePattern('^\\p{Lu}', false).test('Élan')).toBe(true);
  });

  it('skips binary files and files over maxFileBytes, and says which were too large', async () => {
    const root = await tempDir();
    await populate(root, {
      'bin.dat': Buffer.concat([Buffer.from('needle\n'), Buffer.from([0, 1, 2])]),
      'big.log': `needle\n${'x'.repeat(2000)}\n`,
      'ok.txt': 'needle\n',
    });
    const { result } = await drain(grep(grepTool({ root, maxFileBytes: 1000 }), { pattern: 'needle' }));
    expect(textOf(result)).toBe('ok.txt:1:needle\n[skipped 1 file larger than 1000 bytes: big.log]');
    expect(result.details).toMatchObject({ filesSearched: 3, matches: 1, skippedBinary: 1, skippedLarge: 1 });
  });

  it('does not block on a FIFO (only regular files are searched)', async () => {
    const root = await tempDir();
    await populate(root, { 'a.txt': 'needle\n' });
    execFileSync('mkfifo', [path.join(root, 'pipe')]);
    const { result } = await drain(grep(grepTool({ root }), { pattern: 'needle' }));
    expect(textOf(result)).toBe('a.txt:1:needle');
    expect(result.details).toMatchObject({ filesSearched: 1 });
  });

  it('stops after maxMatches with a marker saying more exist (case C20)', async () => {
    const root = await tempDir();
    await populate(root, { 'a.txt': 'hit\n'.repeat(30), 'b.txt': 'hit\n'.repeat(30) });
    const { result } = await drain(grep(grepTool({ root, maxMatches: 10 }), { pattern: 'hit' }));
    const lines = textOf(result).split('\n');
    expect(lines.slice(0, 10)).toEqual(Array.from({ length: 10 }, (_, i) => `a.txt:${i + 1}:hit`));
    expect(lines.slice(10)).toEqual([
      '[stopped after 10 matching lines (the limit); more matches exist. Narrow the pattern or the glob to see them.]',
    ]);
    expect(result.details).toMatchObject({ matches: 10, truncated: true, filesSearched: 1 });

    const exact = await drain(grep(grepTool({ root, maxMatches: 60 }), { pattern: 'hit' }));
    expect(exact.result.details).toMatchObject({ matches: 60, truncated: false });
    expect(textOf(exact.result)).not.toContain('[stopped');
  });

  it('cuts a very long matching line to maxLineChars', async () => {
    const root = await tempDir();
    await populate(root, { 'min.js': `${'a'.repeat(100)}needle${'b'.repeat(894)}\n` });
    const { result } = await drain(grep(grepTool({ root, maxLineChars: 50 }), { pattern: 'needle' }));
    expect(textOf(result)).toBe(`min.js:1:${'a'.repeat(50)}… [line cut: 950 more chars]`);
  });

  it('numbers lines correctly across chunk boundaries and strips \\r', async () => {
    const root = await tempDir();
    // A 300 KB first line spans several 64 KiB chunks; the match sits at its end.
    await populate(root, { 'f.txt': `${'x'.repeat(300_000)}END\r\nsecond\r\nthird END` });
    const { result } = await drain(grep(grepTool({ root, maxLineChars: 10 }), { pattern: 'END$' }));
    expect(textOf(result)).toBe(`f.txt:1:${'x'.repeat(10)}… [line cut: 299993 more chars]\nf.txt:3:third END`);
  });

  it('yields { filesSearched, matches } progress every 50 files', async () => {
    const root = await tempDir();
    const files: Record<string, string> = {};
    for (let i = 0; i < 120; i++) files[`f${String(i).padStart(3, '0')}.txt`] = i % 2 === 0 ? 'hit\n' : 'miss\n';
    await populate(root, files);
    const { progress, result } = await drain(grep(grepTool({ root }), { pattern: 'hit' }));
    expect(progress).toEqual([
      { filesSearched: 50, matches: 25 },
      { filesSearched: 100, matches: 50 },
    ]);
    expect(result.details).toMatchObject({ filesSearched: 120, matches: 60 });
  });

  it('stops with the abort reason when ctx.signal is aborted mid-search', async () => {
    const root = await tempDir();
    const files: Record<string, string> = {};
    for (let i = 0; i < 120; i++) files[`f${String(i).padStart(3, '0')}.txt`] = 'hit\n';
    await populate(root, files);
    const controller = new AbortController();
    const gen = grep(grepTool({ root }), { pattern: 'hit' }, controller.signal);
    expect(await gen.next()).toEqual({ done: false, value: { filesSearched: 50, matches: 50 } });
    controller.abort(new Error('user pressed stop'));
    await expect(gen.next()).rejects.toThrow('user pressed stop');
  });

  it('refuses a glob that reaches outside the root, and reads nothing through a link leading outside', async () => {
    const parent = await tempDir();
    const root = path.join(parent, 'root');
    await populate(parent, { 'outside/secret.txt': 'needle\n', 'root/in.txt': 'needle\n' });
    await symlink(path.join(parent, 'outside'), path.join(root, 'link'));
    await symlink(path.join(parent, 'outside', 'secret.txt'), path.join(root, 'secret-link.txt'));
    const tool = grepTool({ root });
    await expect(grep(tool, { pattern: 'needle', glob: '../**/*' }).next()).rejects.toThrow(
      'glob "../**/*" reaches outside the workspace',
    );
    const { result } = await drain(grep(tool, { pattern: 'needle' }));
    expect(textOf(result)).toBe('in.txt:1:needle');
  });

  it('grep does not escape the workspace through a symlinked directory', async () => {
    const parent = await tempDir();
    const root = path.join(parent, 'root');
    await populate(parent, { 'home/.ssh/id_rsa': 'FAKE PRIVATE KEY\n', 'root/in.txt': 'root:x:0:0\n' });
    await symlink('/', path.join(root, 'rootlink'));
    await symlink(path.join(parent, 'home'), path.join(root, 'homelink'));
    const tool = grepTool({ root });
    await expect(drain(grep(tool, { pattern: '^root:', glob: 'rootlink/etc/passwd' }))).rejects.toThrow(
      'glob "rootlink/etc/passwd" leads through a symbolic link to a place outside the workspace root',
    );
    await expect(drain(grep(tool, { pattern: 'KEY', glob: 'homelink/.ssh/*' }))).rejects.toThrow('leads through a symbolic link');
    // Globs whose head has magic are crawled without following links, and every file is opened inside the root.
    const { result } = await drain(grep(tool, { pattern: 'KEY|root:', glob: '{homelink,rootlink/etc}/**' }));
    expect(textOf(result)).toMatch(/^No matches/);
    expect(textOf((await drain(grep(tool, { pattern: 'KEY|root:' }))).result)).toBe('in.txt:1:root:x:0:0');
  });

  it('grep with a catastrophic regex does not freeze the process: the event loop runs and the abort ends the call', async () => {
    const root = await tempDir();
    await populate(root, { 'a.txt': `${'a'.repeat(29)}!\n` });
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 1);
    try {
      const controller = new AbortController();
      // regexTimeoutMs far away: the default 10 s on the real clock could end the match (a
      // "simplify the pattern" result) before a starved event loop ticks 20 times.
      const outcome = drain(grep(grepTool({ root, regexTimeoutMs: 600_000 }), { pattern: '^(a+)+$' }, controller.signal)).then(
        () => 'finished',
        (error: unknown) => error,
      );
      // Matching this takes tens of seconds. A blocked event loop never lets the ticker reach 20.
      await pollUntil(() => ticks >= 20, '20 timer ticks while the pattern is matched', { timeoutMs: 10_000, intervalMs: 1 });
      controller.abort(new Error('user pressed stop'));
      expect(await outcome).toEqual(new Error('user pressed stop'));
    } finally {
      clearInterval(ticker);
    }
  });

  it('grep stops a catastrophic regex at regexTimeoutMs and tells the model to simplify it', async () => {
    const root = await tempDir();
    await populate(root, { 'a.txt': `${'a'.repeat(29)}!\n` });
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 1);
    try {
      const started = ticks;
      await expect(drain(grep(grepTool({ root, regexTimeoutMs: 200 }), { pattern: '^(a+)+$' }))).rejects.toThrow(
        'did not finish within 200 ms and was stopped; it probably backtracks catastrophically',
      );
      expect(ticks).toBeGreaterThan(started);
      // The next search gets a fresh worker.
      await populate(root, { 'b.txt': 'aaa\n' });
      expect(textOf((await drain(grep(grepTool({ root }), { pattern: '^(a+)+$', glob: 'b.txt' }))).result)).toBe('b.txt:1:aaa');
    } finally {
      clearInterval(ticker);
    }
  });

  it('rejects bad options at creation', () => {
    expect(() => grepTool({ maxMatches: 0 })).toThrow('options.maxMatches must be a positive integer, received number 0');
    expect(() => grepTool({ maxFileBytes: 1.5 })).toThrow(RangeError);
  });

  it('describes its input for the model', () => {
    const schema = toJsonSchema(grepTool().input as never) as Record<string, unknown>;
    expect(schema).toMatchObject({
      type: 'object',
      required: ['pattern'],
      additionalProperties: false,
      properties: {
        pattern: { type: 'string', description: expect.stringContaining('JavaScript regular expression') },
        glob: { type: 'string', description: expect.any(String) },
        ignoreCase: { type: 'boolean', description: expect.any(String) },
      },
    });
  });
});
