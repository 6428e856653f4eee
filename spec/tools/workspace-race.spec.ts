/**
 * The file tools against a workspace that changes under them: a second
 * process swaps a directory for a symbolic link leading outside the root, and a regular
 * file for a FIFO, 12,000 times with a ~50 µs pause after each swap, while read_file, grep
 * and list_files run 8 at a time (about 1,200 calls; 3 s on 2 shared cores). Before the fix
 * the FIFO swap blocked the libuv threads and the spec timed out; the issue measured 659 of
 * 38,380 reads through the swapped directory returning the outside file.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { grepTool } from '../../lib/tools/grep.ts';
import { listFilesTool } from '../../lib/tools/list-files.ts';
import { readFileTool } from '../../lib/tools/read-file.ts';
import type { ToolResult } from '../../lib/core/tool/tool.ts';
import { asGenerator, contextFor, drain, tempDir, textOf } from './support.ts';

/**
 * Swaps `d` (a directory) with `.d-link` (a link to the outside) and `p` (a file) with
 * `.p-fifo` (a FIFO) by renames, `count` times in all, then prints the count and exits.
 */
const SWAPPER = `
const fs = require('node:fs');
const [ws, count] = process.argv.slice(1);
const at = (name) => ws + '/' + name;
let swaps = 0;
// A pause of ~50 µs after each swap lets the readers' calls land between swaps.
const pause = () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 0.05);
process.stdout.write('ready\\n');
while (swaps < Number(count)) {
  fs.renameSync(at('d'), at('.d-dir')); fs.renameSync(at('.d-link'), at('d')); swaps++; pause();
  fs.renameSync(at('p'), at('.p-file')); fs.renameSync(at('.p-fifo'), at('p')); swaps++; pause();
  fs.renameSync(at('d'), at('.d-link')); fs.renameSync(at('.d-dir'), at('d')); swaps++; pause();
  fs.renameSync(at('p'), at('.p-fifo')); fs.renameSync(at('.p-file'), at('p')); swaps++; pause();
}
process.stdout.write('swaps ' + swaps + '\\n');
`;

/** Errors a read may legitimately end with while the workspace changes under it. */
const EXPECTED_ERRORS = [
  /^file not found/, // between two renames the name is briefly absent
  /changed while it was opened/, // a component became a link after it was resolved
  /leads through a symbolic link to a place outside the workspace root/, // resolved while it was the link
  /is not a regular file/, // the FIFO
];

describe('the file tools while the workspace is swapped under them', () => {
  it('read_file, grep and list_files read nothing outside the root and never hang, over >= 10,000 directory/link and file/FIFO swaps', async () => {
    const parent = await tempDir();
    const ws = path.join(parent, 'ws');
    const outside = path.join(parent, 'outside');
    await mkdir(path.join(ws, 'd'), { recursive: true });
    await mkdir(outside);
    await writeFile(path.join(ws, 'd', 'f'), 'inside\n');
    await writeFile(path.join(outside, 'f'), 'SECRET\n');
    await writeFile(path.join(outside, 'secret.txt'), 'SECRET\n');
    await symlink(outside, path.join(ws, '.d-link'));
    await writeFile(path.join(ws, 'p'), 'inside\n');
    execFileSync('mkfifo', [path.join(ws, '.p-fifo')]);
    const SWAPS = 12_000;

    const swapper = spawn(process.execPath, ['-e', SWAPPER, ws, String(SWAPS)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    swapper.stdout.setEncoding('utf8');
    const ready = new Promise<void>((resolve) => swapper.stdout.on('data', (text: string) => (out += text).includes('ready') && resolve()));
    let running = true;
    const exited = new Promise<number | null>((resolve) =>
      swapper.on('exit', (code) => {
        running = false;
        resolve(code);
      }),
    );
    await ready;

    const readFile = readFileTool({ root: ws });
    const grep = grepTool({ root: ws });
    const listFiles = listFilesTool({ root: ws });
    const seen = { reads: 0, inside: 0, refused: 0 };
    const leaks: string[] = [];
    const unexpected: string[] = [];
    const check = (text: string, what: string): void => {
      if (text.includes('SECRET') || text.includes('secret.txt')) leaks.push(`${what}: ${text}`);
      else if (text.includes('inside') || /^d\/f$/m.test(text)) seen.inside++;
    };
    const calls: Array<() => Promise<void>> = [
      async () => check(textOf((await readFile.execute({ path: 'd/f' }, contextFor('read_file'))) as ToolResult), 'read_file d/f'),
      async () => check(textOf((await readFile.execute({ path: 'p' }, contextFor('read_file'))) as ToolResult), 'read_file p'),
      async () => {
        const { result } = await drain(asGenerator<unknown, ToolResult>(grep.execute({ pattern: '.', glob: 'd/*' }, contextFor('grep'))));
        check(textOf(result), 'grep d/*');
      },
      async () => {
        const { result } = await drain(asGenerator<unknown, ToolResult>(grep.execute({ pattern: '.' }, contextFor('grep'))));
        check(textOf(result), 'grep **/*');
      },
      async () => check(textOf((await listFiles.execute({ pattern: 'd/*' }, contextFor('list_files'))) as ToolResult), 'list_files d/*'),
    ];

    // Keep 8 calls in flight for as long as the swapper runs.
    let next = 0;
    const worker = async (): Promise<void> => {
      while (running) {
        const call = calls[next++ % calls.length]!;
        seen.reads++;
        try {
          await call();
        } catch (error) {
          const message = (error as Error).message;
          seen.refused++;
          if (!EXPECTED_ERRORS.some((pattern) => pattern.test(message))) unexpected.push(message);
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    expect(await exited).toBe(0);
    const swaps = Number(/swaps (\d+)/.exec(out)?.[1]);

    expect(leaks).toEqual([]);
    expect(unexpected).toEqual([]);
    expect(swaps).toBe(SWAPS);
    // The race was really run: calls saw the inside content, and some were refused.
    expect(seen.inside).toBeGreaterThan(50);
    expect(seen.refused).toBeGreaterThan(0);
  });
});
