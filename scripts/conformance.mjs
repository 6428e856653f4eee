#!/usr/bin/env node
// `npm run test:conformance`: the server scenarios of the official MCP conformance suite
// (@modelcontextprotocol/conformance, pinned in devDependencies) against
// `toolrun serve-mcp --http 0 --no-auth spec/mcp/conformance/tools.ts`, and, with --compare, against a
// plain SDK McpServer serving the same tool functions (spec/mcp/conformance/sdk-server.ts).
// Every server listens on 127.0.0.1 only, on a free port. toolrun's runs with --no-auth: the
// suite's server client (an SDK StreamableHTTPClientTransport without requestInit, and raw
// undici requests) has no option to send an Authorization header, so with the CLI's default
// bearer token every scenario would stop at 401. Authorization is held by spec/mcp/auth.spec.ts.
//
// The suite needs Node >= 22 (fs.globSync). Under an older Node this script installs the
// pinned Node 22 binary package of the npm registry (node-<platform>-<arch>, the package the
// `node` package's install script would fetch; no install script runs) into
// node_modules/.cache/toolrun-conformance/ once, and runs the suite with it. The servers run
// under the Node that runs this script (the project's floor, 20, in CI).
//
// Prints one line per scenario for each server, then the summary. Exits 1 when a scenario
// in scope (IN_SCOPE below: every scenario about a tool server) fails for toolrun, or when
// the suite lists a server scenario this script does not know (a new suite version). With
// --write, writes the summary to docs/mcp-conformance.md.
//
// usage: node scripts/conformance.mjs [--compare] [--write]
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const NODE22 = '22.23.3';
const compare = process.argv.includes('--compare');
const write = process.argv.includes('--write');

/** The 20 server scenarios of conformance 0.1.16 that concern a tool server. */
const IN_SCOPE = [
  'server-initialize',
  'logging-set-level',
  'ping',
  'tools-list',
  'tools-call-simple-text',
  'tools-call-image',
  'tools-call-audio',
  'tools-call-embedded-resource',
  'tools-call-mixed-content',
  'tools-call-with-logging',
  'tools-call-error',
  'tools-call-with-progress',
  'tools-call-sampling',
  'tools-call-elicitation',
  'json-schema-2020-12',
  'elicitation-sep1034-defaults',
  'server-sse-polling',
  'server-sse-multiple-streams',
  'elicitation-sep1330-enums',
  'dns-rebinding-protection',
];
/** Resources, prompts and completion: not a tool runtime's job (docs/guide/serve-over-mcp.md). */
const OUT_OF_SCOPE = [
  'completion-complete',
  'resources-list',
  'resources-read-text',
  'resources-read-binary',
  'resources-templates-read',
  'resources-subscribe',
  'resources-unsubscribe',
  'prompts-list',
  'prompts-get-simple',
  'prompts-get-with-args',
  'prompts-get-embedded-resource',
  'prompts-get-with-image',
];

function node22() {
  if (Number(process.versions.node.split('.')[0]) >= 22) return process.execPath;
  const platform = process.platform === 'win32' ? 'win' : process.platform;
  const pkg = `node-${platform}-${process.arch}`;
  const dir = join(root, 'node_modules', '.cache', 'toolrun-conformance', `node-${NODE22}`);
  const bin = join(dir, 'node_modules', pkg, 'bin', process.platform === 'win32' ? 'node.exe' : 'node');
  if (!existsSync(bin)) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'package.json'), '{ "private": true }\n');
    const started = Date.now();
    execFileSync('npm', ['install', '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--ignore-scripts', `${pkg}@${NODE22}`], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
    console.log(`conformance: installed ${pkg}@${NODE22} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  return bin;
}

/** Starts a server process; resolves with its URL (read from its first line that has one) and a stop function. */
function startServer(label, args) {
  const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolveStart, reject) => {
    let out = '';
    const guard = setTimeout(() => reject(new Error(`${label}: no URL printed within 60 s: ${out}`)), 60_000);
    child.once('exit', (code) => reject(new Error(`${label}: exited with ${code} before printing its URL: ${out}`)));
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const match = /http:\/\/127\.0\.0\.1:\d+\/mcp/.exec(out);
      if (match === null) return;
      clearTimeout(guard);
      child.stdout.removeAllListeners('data');
      child.stdout.resume();
      resolveStart({
        url: match[0],
        stop: () =>
          new Promise((done) => {
            child.removeAllListeners('exit');
            if (child.exitCode !== null) return done();
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
      });
    });
  });
}

/** Runs every server scenario (`--suite all`: active and pending) against `url`; resolves with scenario name → { passed, failed } checks. */
function runSuite(node, url) {
  const bin = join(dirname(require.resolve('@modelcontextprotocol/conformance/package.json')), 'dist', 'index.js');
  return new Promise((resolveRun, reject) => {
    const child = spawn(node, [bin, 'server', '--url', url, '--suite', 'all'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (out += chunk));
    child.once('error', reject);
    child.once('exit', () => {
      const summary = out.slice(out.lastIndexOf('=== SUMMARY ==='));
      const results = new Map();
      for (const m of summary.matchAll(/^[✓✗] (\S+): (\d+) passed, (\d+) failed$/gmu)) results.set(m[1], { passed: Number(m[2]), failed: Number(m[3]) });
      if (results.size === 0) return reject(new Error(`the conformance suite printed no summary:\n${out.slice(-3000)}`));
      resolveRun({ results, log: out });
    });
  });
}

const started = Date.now();
const node = node22();
const targets = [['toolrun', ['--import', 'tsx', 'lib/cli/main.ts', 'serve-mcp', '--http', '0', '--no-auth', 'spec/mcp/conformance/tools.ts']]];
if (compare) targets.push(['plain SDK McpServer', ['--import', 'tsx', 'spec/mcp/conformance/sdk-server.ts']]);
const runs = [];
for (const [label, args] of targets) {
  const server = await startServer(label, args);
  try {
    const { results, log } = await runSuite(node, server.url);
    runs.push({ label, results, log });
  } finally {
    await server.stop();
  }
}

const lines = [];
const scenarios = [...runs[0].results.keys()];
const unknown = scenarios.filter((name) => !IN_SCOPE.includes(name) && !OUT_OF_SCOPE.includes(name));
const pad = Math.max(...scenarios.map((name) => name.length));
lines.push(`| scenario | in scope | ${runs.map((r) => r.label).join(' | ')} |`, `| --- | --- | ${runs.map(() => '---').join(' | ')} |`);
for (const name of scenarios) {
  const cells = runs.map((r) => {
    const result = r.results.get(name);
    return result === undefined ? 'not run' : result.failed === 0 ? `pass (${result.passed} checks)` : `**fail** (${result.failed} of ${result.passed + result.failed} checks)`;
  });
  lines.push(`| ${name.padEnd(pad)} | ${IN_SCOPE.includes(name) ? 'yes' : 'no'} | ${cells.join(' | ')} |`);
}
const count = (r, names) => names.filter((name) => r.results.get(name)?.failed === 0).length;
const totals = runs.map((r) => `${r.label}: ${count(r, scenarios)} of ${scenarios.length} scenarios pass, ${count(r, IN_SCOPE)} of ${IN_SCOPE.length} in scope`);
console.log(lines.join('\n'));
console.log(`\n${totals.join('\n')}`);
console.log(`conformance: ${((Date.now() - started) / 1000).toFixed(0)} s`);

if (write) {
  const suite = require('@modelcontextprotocol/conformance/package.json').version;
  const text = [
    '# MCP conformance: server scenarios',
    '',
    `The server scenarios of \`@modelcontextprotocol/conformance\` ${suite} (\`--suite all\`: the active suite and the two pending ones, json-schema-2020-12 and server-sse-polling), run by`,
    '`node scripts/conformance.mjs --compare --write` against `toolrun serve-mcp --http 0 --no-auth spec/mcp/conformance/tools.ts`',
    'and against a plain SDK `McpServer` serving the same tool functions (`spec/mcp/conformance/sdk-server.ts`: no',
    'toolrun runtime, tools without a client, resumability off). A scenario passes when none of its checks fails',
    '(warnings do not fail it: the suite\'s own rule). "In scope": the scenarios about a tool server; resources,',
    'prompts and completion are not a tool runtime\'s job (docs/guide/serve-over-mcp.md). CI (`.ci/run`) runs `npm run test:conformance`,',
    'which fails when an in-scope scenario fails for toolrun.',
    '',
    'Authorization is off for these runs (`--no-auth`, on 127.0.0.1): the suite\'s server scenarios connect with an SDK',
    '`StreamableHTTPClientTransport` given no headers and with raw requests, and it has no option to send an `Authorization`',
    'header, so against the default `serve-mcp --http` (a bearer token required) every scenario would end at 401. The bearer',
    'token, the Protected Resource Metadata, 403 `insufficient_scope`, sessions bound to their principal and the `Origin` rule',
    'are held by spec/mcp/auth.spec.ts and spec/cli/serve-mcp-auth.process.spec.ts (contract Z1-Z7).',
    '',
    ...lines,
    '',
    ...totals.map((t) => `- ${t}`),
    '',
    'Without the client features for tools (the same tools module and script): toolrun 11 of 32, 11 of 20 in scope',
    '(logging-set-level, tools-call-audio, -embedded-resource, -mixed-content, -with-logging, -sampling, -elicitation and',
    'both elicitation scenarios failed); without a `test_reconnection` tool the count is 10.',
    '',
    '`server-sse-polling` passes with two warnings (no priming event, no `retry`) for both servers: the scenario',
    'sends its `tools/call` with `mcp-protocol-version: 2025-03-26`, and the SDK\'s transport primes only clients of',
    '2025-11-25 or later (older ones cannot parse the empty event). For a 2025-11-25 client toolrun sends the priming',
    'event with `retry: 1000` and resumes a broken stream from `Last-Event-ID`: spec/mcp/client-features.spec.ts,',
    '"resumable SSE streams".',
    '',
  ].join('\n');
  writeFileSync(join(root, 'docs', 'mcp-conformance.md'), text);
  console.log('conformance: wrote docs/mcp-conformance.md');
}

const toolrun = runs[0];
const failing = IN_SCOPE.filter((name) => toolrun.results.get(name)?.failed !== 0);
if (unknown.length > 0) console.error(`conformance: scenarios this script does not know (add them to IN_SCOPE or OUT_OF_SCOPE): ${unknown.join(', ')}`);
if (failing.length > 0) {
  console.error(`conformance: in-scope scenarios failing for toolrun: ${failing.join(', ')}`);
  for (const name of failing) {
    const at = toolrun.log.indexOf(`=== Running scenario: ${name} ===`);
    if (at >= 0) console.error(toolrun.log.slice(at, toolrun.log.indexOf('=== Running scenario:', at + 10) >>> 0).slice(0, 4000));
  }
}
process.exit(failing.length > 0 || unknown.length > 0 ? 1 : 0);
