/**
 * `toolrun serve-mcp` from the command line: the ready-made tools with
 * `--tools` / `--workspace`, modules given as package specifiers, toolrun/tools refused with
 * the way to serve it, and bad input — a busy port included — as one line and exit 2.
 * In process through `main(argv, io)`, except one end-to-end spec where `toolrun mcp` starts
 * `toolrun serve-mcp --tools …` as its server (two real programs over stdio).
 */
import { once } from 'node:events';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTools } from '../../lib/core/run/run-tools.ts';
import { main } from '../../lib/cli/main.ts';
import { READY_MADE_TOOL_NAMES, readyMadeTools } from '../../lib/cli/ready-made-tools.ts';
import { loadTools } from '../../lib/cli/serve-mcp.ts';
import { memoryIo, repoRoot } from './support.ts';
import { itSandboxed } from '../sandbox.ts';

/** Runs `main(['serve-mcp', ...args])` and asserts the bad-input shape: exit 2, one `toolrun: serve-mcp…` line matching `pattern`, nothing on stdout. */
async function expectOneLine(args: readonly string[], pattern: RegExp): Promise<void> {
  const io = memoryIo();
  expect(await main(['serve-mcp', ...args], io), io.err()).toBe(2);
  const lines = io.err().split('\n').filter((line) => line !== '');
  expect(lines, io.err()).toHaveLength(1);
  expect(lines[0]).toMatch(/^toolrun: serve-mcp/);
  expect(lines[0]).toMatch(pattern);
  expect(io.out()).toBe('');
}

let dir = '';
beforeAll(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'toolrun-serve-cli-')));
  await mkdir(join(dir, 'ws', 'src'), { recursive: true });
  await writeFile(join(dir, 'ws', 'notes.txt'), 'first line\nsecond line\n');
  await writeFile(join(dir, 'ws', 'src', 'a.js'), '// TODO: ship\n');
  await writeFile(join(dir, 'secret.txt'), 'outside the workspace\n');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('serve-mcp: bad input is one line and exit 2', () => {
  it('a busy --http port (it was "unexpected error … EADDRINUSE", exit 1)', async () => {
    const taken: Server = createServer();
    taken.listen(0, '127.0.0.1');
    await once(taken, 'listening');
    const port = (taken.address() as { port: number }).port;
    try {
      await expectOneLine(['--http', String(port), '--tools', 'read_file'], new RegExp(`^toolrun: serve-mcp: cannot listen on 127\\.0\\.0\\.1:${port}: the port is in use .*--http 0`));
    } finally {
      taken.close();
    }
  });

  it('--tools: a name that is not a ready-made tool, an empty list; --workspace that is not a folder or without --tools; neither module nor --tools', async () => {
    await expectOneLine(['--tools', 'shell,rm_rf,grep'], /--tools: no ready-made tool named 'rm_rf' \(the ready-made tools: shell, read_file, grep, list_files\)$/);
    await expectOneLine(['--tools', ' , '], /--tools needs at least one tool name/);
    await expectOneLine(['--tools', 'grep', '--workspace', join(dir, 'nope')], /--workspace .*nope: no such folder$/);
    await expectOneLine(['--tools', 'grep', '--workspace', join(dir, 'secret.txt')], /--workspace .*secret\.txt: not a folder$/);
    await expectOneLine(['--workspace', dir, 'spec/fixtures/mcp/served-tools.ts'], /--workspace applies with --tools only$/);
    await expectOneLine([], /needs one module or --tools <names>/);
  });

  it('toolrun/tools (its source, or a package specifier that resolves to it) is refused with the command that serves its tools', async () => {
    // Before: "exports no tool" (the dist file) or "cannot import toolrun/tools" (the specifier).
    await expectOneLine(['lib/tools/index.ts'], /is toolrun\/tools, which exports functions that make tools .*; serve the ready-made tools with: toolrun serve-mcp --tools shell,read_file,grep,list_files --workspace <dir>$/);
  });

  it('a module of functions that are no tools says so; a name that is neither a file nor an installed package says both', async () => {
    const factories = join(dir, 'factories.mjs');
    await writeFile(factories, 'export const makeTool = () => ({}); export const other = 1;\n');
    await expectOneLine([factories], /exports no tool .*; it exports functions \(makeTool\): if they make tools, export the tools they return$/);
    await expectOneLine(['toolrun-no-such-package-xyz'], /toolrun-no-such-package-xyz: no such file, and no package of that name is installed in /);
  });
});

describe('serve-mcp: modules by package specifier', () => {
  it("a package specifier is resolved from the folder serve-mcp runs in (its package's exports)", async () => {
    const pkg = join(dir, 'node_modules', 'my-tools');
    await mkdir(pkg, { recursive: true });
    await writeFile(join(pkg, 'package.json'), JSON.stringify({ name: 'my-tools', type: 'module', exports: { './server': './server.js' } }));
    await writeFile(
      join(pkg, 'server.js'),
      "export const echo = { name: 'echo', description: 'Echoes', input: { type: 'object', properties: { text: { type: 'string' } } }, execute: (args) => String(args.text) };\n",
    );
    const tools = await loadTools('my-tools/server', dir);
    expect(tools.map((tool) => tool.name)).toEqual(['echo']);
    // A subpath the package does not export: neither a file nor an installed package.
    await expect(loadTools('my-tools/nothing-here', dir)).rejects.toThrow(/no such file, and no package of that name is installed/);
  });
});

describe('serve-mcp --tools: the ready-made tools, rooted at the workspace', () => {
  itSandboxed('builds the named tools in the order given, rooted at the workspace, with annotations saying which only read', async () => {
    const { tools, workspace, perTool } = await readyMadeTools('grep,read_file,grep,shell', { workspace: 'ws', cwd: dir });
    expect(tools.map((tool) => tool.name)).toEqual(['grep', 'read_file', 'shell']);
    expect(workspace).toBe(join(dir, 'ws'));
    expect(perTool).toEqual({
      grep: { annotations: { readOnlyHint: true, openWorldHint: false } },
      read_file: { annotations: { readOnlyHint: true, openWorldHint: false } },
      shell: { annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true } },
    });
    expect([...READY_MADE_TOOL_NAMES].sort()).toEqual(['grep', 'list_files', 'read_file', 'shell']);
    // The file tools stay inside the workspace; the shell runs in it.
    const run = runTools(
      [
        { id: 'in', name: 'read_file', arguments: { path: 'notes.txt' } },
        { id: 'out', name: 'read_file', arguments: { path: '../secret.txt' } },
        { id: 'pwd', name: 'shell', arguments: { command: 'pwd' } },
      ],
      { tools },
    );
    let step = await run.next();
    while (step.done !== true) step = await run.next();
    const [inside, outside, pwd] = step.value.messages;
    expect(JSON.stringify(inside!.content)).toContain('second line');
    expect(outside!.isError).toBe(true);
    expect(JSON.stringify(outside!.content)).toMatch(/outside the workspace root/);
    expect(JSON.stringify(pwd!.content)).toContain(join(dir, 'ws'));
  });

  itSandboxed('end to end: toolrun mcp runs calls against toolrun serve-mcp --tools shell,read_file,grep,list_files --workspace ws (two programs, stdio)', { timeout: 240_000 }, async () => {
    const calls = join(dir, 'calls.json');
    await writeFile(
      calls,
      JSON.stringify([
        // Holds until the spec sees its output drawn (the gate file appears): an MCP client may
        // drop a progress notification that arrives together with the response (the SDK). The
        // 2 min bound is a hang guard: without the gate the spec fails on its assertions.
        { name: 'shell', arguments: { command: "printf 'step 1\\nstep 2\\n'; i=0; while [ ! -e gate ] && [ $i -lt 2400 ]; do sleep 0.05; i=$((i+1)); done; echo done" } },
        { name: 'read_file', arguments: { path: 'notes.txt' } },
        { name: 'grep', arguments: { pattern: 'TODO' } },
        { name: 'list_files', arguments: { pattern: '**/*' } },
      ]),
    );
    const io = memoryIo();
    void io.whenOutput('  call_1 | step 2\n').then(() => writeFile(join(dir, 'ws', 'gate'), ''));
    const server = [process.execPath, '--import', 'tsx', join(repoRoot, 'lib/cli/main.ts'), 'serve-mcp', '--tools', 'shell,read_file,grep,list_files', '--workspace', join(dir, 'ws')];
    // --timeout: a hang guard only (the server starts under tsx; on a loaded machine that alone took over 15 s).
    const code = await main(['mcp', '--calls', calls, '--timeout', '180000', '--', ...server], io);
    const out = io.out();
    expect(code, io.err()).toBe(0);
    expect(out).toMatch(/^MCP server toolrun \S+: 4 tools\n {2}shell — .*\n {2}read_file \(read-only\) — .*\n {2}grep \(read-only\) — .*\n {2}list_files \(read-only\) — /);
    // The served shell's output arrives as MCP progress and is drawn as its lines (it was JSON).
    expect(out).toContain('  call_1 | step 1\n  call_1 | step 2\n');
    expect(out).not.toContain('{"progress"');
    const results = out.slice(out.indexOf('results (call order):')).split('\n').slice(1, 5);
    expect(results).toEqual([
      '  call_1 ok done [exit code 0] (+3 lines)',
      '  call_2 ok second line (+1 line)',
      '  call_3 ok src/a.js:1:// TODO: ship',
      expect.stringMatching(/^ {2}call_4 ok \S+ \(\+\d+ lines?\)$/),
    ]);
    expect(out).toMatch(/\n4 results, 0 errors\n$/);
  });
});

describe('serve-mcp: --tools with a module', () => {
  it('a module tool named like a --tools tool is bad input naming both sources; --host that is not this machine: one line', async () => {
    const clash = join(dir, 'clash.mjs');
    await writeFile(clash, "export const grep = { name: 'grep', input: { type: 'object' }, execute: () => 'mine' };\n");
    await expectOneLine(['--tools', 'grep,read_file', clash], /two tools are named 'grep', one from --tools and one from .*clash\.mjs; serve one of them$/);
    // 192.0.2.1 (TEST-NET-1, RFC 5737) is no address of this machine.
    await expectOneLine(['--http', '0', '--host', '192.0.2.1', '--tools', 'grep'], /cannot listen on 192\.0\.2\.1:0: 192\.0\.2\.1 is not an address of this machine \(--host\)$/);
  });
});
