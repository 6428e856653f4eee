/**
 * Error texts the model reads carry no host details: no process ids, no
 * resolved symbolic-link targets, no absolute host paths outside the workspace. The model
 * builds the links itself (here the spec does, as a `shell` command could): `me -> /proc/self`
 * made `read_file me/environ` answer "leads through a symbolic link to /proc/4043/environ",
 * naming the server's pid; a link to a home directory named that directory.
 */
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runTools } from '../../lib/core/run/run-tools.ts';
import { resultText } from '../../lib/extras/compose/call-tool.ts';
import { grepTool } from '../../lib/tools/grep.ts';
import { listFilesTool } from '../../lib/tools/list-files.ts';
import { readFileTool } from '../../lib/tools/read-file.ts';
import { tempDir } from './support.ts';

/** Every absolute path in `text` (a `/` after a space, a quote, `(` or the start). */
function absolutePaths(text: string): string[] {
  return [...text.matchAll(/(?:^|[\s"'(`])(\/[^\s"'`),;]+)/g)].map((match) => match[1]!);
}

describe('error texts without host details', () => {
  it('symlink escapes, /proc/self and missing paths: the texts name no pid, no link target, no host path outside the workspace', async () => {
    const root = await tempDir();
    const home = await tempDir();
    await mkdir(path.join(home, '.ssh'));
    await writeFile(path.join(home, '.ssh', 'id_rsa'), 'KEY\n');
    await mkdir(path.join(root, 'src'));
    await writeFile(path.join(root, 'src', 'a.ts'), 'export const a = 1;\n');
    await symlink('/proc/self', path.join(root, 'me'));
    await symlink(path.join(home, '.ssh'), path.join(root, 'keys'));
    await symlink(path.join(home, '.ssh', 'id_rsa'), path.join(root, 'key.txt'));
    await symlink('/etc', path.join(root, 'etclink'));

    const tools = [readFileTool({ root }), listFilesTool({ root }), grepTool({ root })];
    const calls = [
      { name: 'read_file', input: { path: 'me/environ' } },
      { name: 'read_file', input: { path: 'me/status' } },
      { name: 'read_file', input: { path: 'key.txt' } },
      { name: 'read_file', input: { path: 'keys/id_rsa' } },
      { name: 'read_file', input: { path: `/proc/${process.pid}/environ` } },
      { name: 'read_file', input: { path: 'etclink/passwd' } },
      { name: 'read_file', input: { path: 'src/missing.ts' } },
      { name: 'list_files', input: { path: 'keys' } },
      { name: 'list_files', input: { path: 'me' } },
      { name: 'list_files', input: { pattern: 'keys/*' } },
      { name: 'list_files', input: { pattern: 'me/fd/*' } },
      { name: 'grep', input: { pattern: 'KEY', glob: 'keys/*' } },
      { name: 'grep', input: { pattern: 'root', glob: 'etclink/*' } },
      { name: 'grep', input: { pattern: 'x', path: 'me' } },
    ].map((call, i) => ({ id: `c${i}`, name: call.name, arguments: JSON.stringify(call.input) }));

    const texts = new Map<string, string>();
    for await (const event of runTools(calls, { tools })) {
      if (event.type === 'tool_result') texts.set(event.message.toolCallId, resultText(event.message));
    }
    expect(texts.size).toBe(calls.length);
    for (const [id, text] of texts) {
      const call = calls.find((c) => c.id === id)!;
      const where = `${call.name} ${call.arguments}: ${text}`;
      // Fails on "leads through a symbolic link to /proc/<pid>/environ" (the pid of this process).
      expect(text.replaceAll(`/proc/${process.pid}/environ`, ''), where).not.toContain(String(process.pid));
      // Fails on "... to /tmp/toolrun-tools-XXXX/.ssh/id_rsa" and "... to /etc".
      expect(text, where).not.toContain(home);
      for (const found of absolutePaths(text)) {
        // Allowed: paths inside the workspace, and the path the model itself asked for.
        const inside = found === root || found.startsWith(`${root}/`);
        expect(inside || call.arguments.includes(found), `${where}\nnames ${found}`).toBe(true);
      }
    }
    // The texts still say what to fix.
    expect(texts.get('c0')).toMatch(/leads through a symbolic link to a place outside the workspace root; use a path inside it/);
    expect(texts.get('c10')).toMatch(/symbolic link/);
  });
});
