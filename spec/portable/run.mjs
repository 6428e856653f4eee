#!/usr/bin/env node
// The portable test: the same scenario (spec/portable/scenario.js, which imports 'toolrun')
// run in every JavaScript runtime this machine can have — Node (this one), Node 22, Deno,
// Bun, and headless Chromium on a page with a strict Content-Security-Policy. One
// PASS/FAIL/SKIP line per runtime, then a summary; exit code 1 on any FAIL (and, with
// --strict, on any SKIP).
//
//   node spec/portable/run.mjs [--entry <module>] [--only node,node22,deno,bun,browser] [--strict]
//
// --entry: the package entry under test (default lib/index.ts; e.g. dist/index.js once the
// build exists). It is bundled with esbuild into one ESM file (platform browser, `node:`
// built-ins left as imports) and installed as the local package `toolrun` in
// .tmp/portable/node_modules, which every runtime imports by name. The runtimes other than
// this Node come from spec/portable/runtimes (npm ci there, on first use); Chromium is
// Debian's /usr/bin/chromium (`.ci/run` installs it).
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync, copyFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CHROMIUM, launchChromium } from './chromium.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const argv = process.argv.slice(2);
const option = (name) => {
  const i = argv.indexOf(name);
  return i === -1 ? undefined : argv[i + 1];
};
const entry = resolve(root, option('--entry') ?? process.env.TOOLRUN_PORTABLE_ENTRY ?? 'lib/index.ts');
const only = option('--only')?.split(',');
const strict = argv.includes('--strict');
/** Bound on one runtime's run; the scenario itself waits on gates, never on the clock. */
const RUNTIME_LIMIT_MS = Number(process.env.PORTABLE_LIMIT_MS ?? 120_000);

const started = performance.now();
const work = join(root, '.tmp', 'portable');
const lines = [];
let failed = 0;
let skipped = 0;

function report(status, runtime, text) {
  if (status === 'FAIL') failed++;
  if (status === 'SKIP') skipped++;
  const line = `${status} ${runtime} — ${text}`;
  lines.push(line);
  console.log(line);
}

function reportChecks(runtime, result, seconds) {
  const bad = result.checks.filter((c) => !c.ok);
  const names = result.checks.map((c) => c.name).join('; ');
  if (bad.length === 0 && result.checks.length > 0) report('PASS', runtime, `${result.checks.length} checks in ${seconds} s: ${names}`);
  else report('FAIL', runtime, `${bad.length} of ${result.checks.length} checks failed: ${bad.map((c) => `${c.name} [${short(c.detail)}]`).join('; ')}`);
}

// ---------------------------------------------------------------------------------------------
// The package under test

async function buildPackage() {
  rmSync(work, { recursive: true, force: true });
  const pkg = join(work, 'node_modules', 'toolrun');
  mkdirSync(pkg, { recursive: true });
  const { build } = await import('esbuild');
  const out = await build({
    entryPoints: [entry],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    // A built-in the core still imports stays an import: Node, Deno and Bun have it; the
    // browser page maps it to a stub through its import map (see the report line).
    external: ['node:*'],
    outfile: join(pkg, 'index.js'),
    metafile: true,
    logLevel: 'silent',
  });
  writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: 'toolrun', version: '0.0.0-portable', type: 'module', exports: { '.': './index.js' } }, null, 2));
  const builtins = [...new Set(Object.values(out.metafile.outputs).flatMap((o) => o.imports.filter((i) => i.external).map((i) => i.path)))];
  // The scenario's folder is a small ESM project that depends on the local package.
  writeFileSync(join(work, 'package.json'), JSON.stringify({ private: true, type: 'module', dependencies: { toolrun: '0.0.0-portable' } }, null, 2));
  // Deno reads the same package through an `npm:` specifier resolved in this node_modules.
  writeFileSync(join(work, 'deno.json'), JSON.stringify({ nodeModulesDir: 'manual', imports: { toolrun: 'npm:toolrun' } }, null, 2));
  for (const file of ['scenario.js', 'host-cli.js', 'host-browser.js', 'node-events-stub.js']) copyFileSync(join(here, file), join(work, file));
  const code = readFileSync(join(pkg, 'index.js'), 'utf8');
  // Information only (a static look, the browser run is the test): code generation in the bundle.
  const evals = (code.match(/\bnew Function\b|\beval\(/g) ?? []).length;
  console.log(
    `package under test: ${relative(root, entry)} bundled by esbuild (${Math.round(code.length / 1024)} KiB, platform browser); ` +
      `built-in imports left in it: ${builtins.join(', ') || 'none'}; "new Function"/"eval(" in it: ${evals}`,
  );
  return { builtins };
}

// ---------------------------------------------------------------------------------------------
// Command-line runtimes

function runProcess(command, args, options = {}) {
  return new Promise((resolveRun) => {
    const child = spawn(command, args, { cwd: work, stdio: ['ignore', 'pipe', 'pipe'], ...options });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.limitMs ?? RUNTIME_LIMIT_MS);
    child.on('error', (error) => {
      clearTimeout(timer);
      resolveRun({ code: -1, stdout, stderr: `${stderr}${error.message}` });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolveRun({ code: code ?? -1, signal, stdout, stderr });
    });
  });
}

const runtimesDir = join(here, 'runtimes');
let runtimesInstall;
/** npm ci in spec/portable/runtimes, once, when its node_modules is missing or older than its lockfile. */
function installRuntimes() {
  runtimesInstall ??= (async () => {
    const marker = join(runtimesDir, 'node_modules', '.package-lock.json');
    if (existsSync(marker) && statSync(marker).mtimeMs >= statSync(join(runtimesDir, 'package-lock.json')).mtimeMs) return { ok: true, note: 'cached' };
    const t = performance.now();
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const r = await runProcess(npm, ['ci', '--no-audit', '--no-fund', '--prefix', runtimesDir], { cwd: runtimesDir, limitMs: 600_000 });
    const seconds = ((performance.now() - t) / 1000).toFixed(1);
    if (r.code !== 0) return { ok: false, note: `npm ci in spec/portable/runtimes failed (exit ${r.code}): ${lastLine(r.stderr)}` };
    console.log(`runtimes installed from the npm registry (spec/portable/runtimes, npm ci): ${seconds} s`);
    return { ok: true };
  })();
  return runtimesInstall;
}

/** One line of at most 300 characters. */
const short = (text) => {
  const line = String(text).replace(/\s*\n\s*/g, ' ');
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
};
const lastLine = (text) => text.trim().split('\n').slice(-3).join(' / ').slice(0, 400);

async function cliRuntime(name, binary, args, env = {}) {
  if (only && !only.includes(name)) return;
  if (binary !== process.execPath) {
    const install = await installRuntimes();
    if (!install.ok) return report('SKIP', name, install.note);
    if (!existsSync(binary)) return report('SKIP', name, `${relative(root, binary)} is missing after npm ci`);
  }
  const version = await runProcess(binary, ['--version'], { env: { ...process.env, ...env }, limitMs: 30_000 });
  if (version.code !== 0) return report('SKIP', name, `${relative(root, binary)} --version failed: ${lastLine(version.stderr || version.stdout)}`);
  const label = `${name} ${version.stdout.trim().split('\n')[0]}`;
  const t = performance.now();
  const r = await runProcess(binary, [...args, 'host-cli.js'], { env: { ...process.env, ...env } });
  const seconds = ((performance.now() - t) / 1000).toFixed(1);
  const resultLine = r.stdout.split('\n').find((l) => l.startsWith('SCENARIO-RESULT '));
  if (resultLine === undefined) return report('FAIL', label, `no result (exit ${r.code}${r.signal ? `, ${r.signal}` : ''}): ${lastLine(r.stderr || r.stdout)}`);
  reportChecks(label, JSON.parse(resultLine.slice('SCENARIO-RESULT '.length)), seconds);
}

// ---------------------------------------------------------------------------------------------
// The browser

const MIME = { '.js': 'text/javascript; charset=utf-8', '.html': 'text/html; charset=utf-8' };

function pageHtml(importMap) {
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>toolrun portable</title>
<script type="importmap">${importMap}</script>
<script type="module" src="/host-browser.js"></script>
</head><body>toolrun portable scenario</body></html>`;
}

async function browserRuntime(builtins) {
  const name = 'browser';
  if (only && !only.includes(name)) return;
  if (!existsSync(CHROMIUM)) return report('SKIP', name, `${CHROMIUM} not found (Debian: apt-get install -y chromium; .ci/run does it)`);
  try {
    await import('playwright-core');
  } catch (error) {
    return report('SKIP', name, `playwright-core cannot be loaded: ${error.message}`);
  }
  // The import map is the page's only inline script; the policy allows it by its hash.
  const imports = { toolrun: '/node_modules/toolrun/index.js' };
  for (const builtin of builtins) {
    if (builtin !== 'node:events') return report('FAIL', name, `the bundle imports ${builtin}, which a browser does not have`);
    imports[builtin] = '/node-events-stub.js';
  }
  const importMap = JSON.stringify({ imports });
  const hash = createHash('sha256').update(importMap).digest('base64');
  const policy = `default-src 'none'; script-src 'self' 'sha256-${hash}'; connect-src 'self'; base-uri 'none'; form-action 'none'`;
  const files = new Map([
    ['/', { type: MIME['.html'], body: pageHtml(importMap) }],
    ...['/scenario.js', '/host-browser.js', '/node-events-stub.js', '/node_modules/toolrun/index.js'].map((path) => [path, { type: MIME['.js'], body: readFileSync(join(work, path)) }]),
  ]);
  const server = createServer((request, response) => {
    const file = files.get(new URL(request.url ?? '/', 'http://127.0.0.1').pathname);
    response.setHeader('Content-Security-Policy', policy);
    if (file === undefined) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'Content-Type': file.type, 'Cache-Control': 'no-store' }).end(file.body);
  });
  await new Promise((ready) => server.listen(0, '127.0.0.1', ready));
  const { port } = server.address();
  let browser;
  const t = performance.now();
  try {
    browser = await launchChromium();
    const { context, page } = browser;
    const errors = [];
    // A page error before the result (a module that fails to load, say) ends the wait.
    let pageFailed;
    const failedPage = new Promise((_, reject) => (pageFailed = reject));
    failedPage.catch(() => {});
    page.on('pageerror', (error) => {
      errors.push(`pageerror: ${error.message}`);
      pageFailed(new Error(`page error before any result: ${error.message}`));
    });
    const consoleLines = [];
    page.on('console', (message) => {
      consoleLines.push(`${message.type()}: ${message.text()}`.slice(0, 300));
      if (message.type() === 'error') errors.push(`console: ${message.text()}`);
    });
    page.on('requestfailed', (request) => errors.push(`request failed: ${request.url()} ${request.failure()?.errorText}`));
    const response = await page.goto(`http://127.0.0.1:${port}/`, { timeout: 30_000 });
    const header = response?.headers()['content-security-policy'];
    if (header !== policy) throw new Error(`the page came without the expected policy header: ${header}`);
    const result = await Promise.race([
      page.waitForFunction(() => window.scenarioResult !== undefined, undefined, { timeout: RUNTIME_LIMIT_MS }).then(() => page.evaluate(() => window.scenarioResult)),
      failedPage,
      new Promise((_, reject) =>
        setTimeout(() => reject(new Error(`the page gave no result within ${RUNTIME_LIMIT_MS / 1000} s; console: ${consoleLines.slice(-5).join(' / ') || 'nothing'}`)), RUNTIME_LIMIT_MS).unref(),
      ),
    ]);
    const version = context.browser()?.version() ?? (await runProcess(CHROMIUM, ['--version'])).stdout.trim();
    const seconds = ((performance.now() - t) / 1000).toFixed(1);
    if (errors.length > 0) result.checks.push({ name: 'no page errors', ok: false, detail: errors.join(' / ') });
    reportChecks(`browser Chromium ${version} (CSP: ${policy.split(';')[1].trim()})`, result, seconds);
  } catch (error) {
    report('FAIL', name, String(error && error.message ? error.message : error).split('\n')[0]);
  } finally {
    await browser?.close();
    server.close();
  }
}

// ---------------------------------------------------------------------------------------------

const { builtins } = await buildPackage();
const bin = (name) => join(runtimesDir, 'node_modules', '.bin', name);
const quiet = { DENO_NO_UPDATE_CHECK: '1', DENO_DIR: join(work, '.deno'), BUN_INSTALL_CACHE_DIR: join(work, '.bun') };
await cliRuntime('node', process.execPath, []);
await cliRuntime('node22', bin('node'), []);
await cliRuntime('deno', bin('deno'), ['run', '--no-prompt', '--quiet'], quiet);
await cliRuntime('bun', bin('bun'), ['run', '--no-install'], quiet);
await browserRuntime(builtins);
const seconds = ((performance.now() - started) / 1000).toFixed(1);
const passed = lines.filter((l) => l.startsWith('PASS')).length;
console.log(`portable runtimes: ${passed} PASS, ${failed} FAIL, ${skipped} SKIP in ${seconds} s`);
process.exit(failed > 0 || (strict && skipped > 0) ? 1 : 0);
