// `npm run lint:deps`: the import rules of .dependency-cruiser.cjs (docs/architecture.md) over
// lib/, then the same rules over a planted lib/ in a temporary folder, where each rule must
// fire: a rule that stopped matching (a typo in a path, a changed option) fails here instead
// of passing everything. Nothing is written in the repository.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const config = join(root, '.dependency-cruiser.cjs');
const depcruise = join(root, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');

/** The rules each cruise breaks, by name (depcruise's JSON output). */
function cruise(cwd) {
  let out;
  try {
    out = execFileSync(process.execPath, [depcruise, 'lib', '--config', config, '--output-type', 'json'], { cwd, encoding: 'utf8', maxBuffer: 64 << 20 });
  } catch (error) {
    // depcruise exits with the number of errors; its JSON is still on stdout.
    if (typeof error.stdout !== 'string' || error.stdout === '') throw error;
    out = error.stdout;
  }
  const { summary } = JSON.parse(out);
  return { violations: summary.violations, cruised: summary.totalCruised };
}

// 1. The repository.
const real = cruise(root);
for (const v of real.violations) {
  const path = v.cycle ? [v.from, ...v.cycle.map((c) => (typeof c === 'string' ? c : c.name))].join(' → ') : `${v.from} → ${v.to}`;
  console.error(`  ${v.rule.name}: ${path}`);
}
if (real.violations.length > 0) {
  console.error(`lint:deps: ${real.violations.length} import(s) break the rules of .dependency-cruiser.cjs (docs/architecture.md)`);
  process.exit(1);
}
console.log(`lint:deps: no circle, no import against the layers (${real.cruised} modules)`);

// 2. A planted lib/: one import against each rule; every rule must report it.
const planted = {
  'lib/core/low.ts': "import { up } from '../formats/up.ts';\nexport const low = up;\n",
  'lib/formats/up.ts': "import { loop } from '../extras/agent/loop.ts';\nexport const up = loop;\n",
  'lib/extras/agent/loop.ts': "import { cli } from '../../cli/main.ts';\nexport const loop = cli;\n",
  'lib/cli/main.ts': 'export const cli = 1;\n',
  'lib/schemas/s.ts': "import { up } from '../formats/up.ts';\nexport const s = up;\n",
  'lib/tools/t.ts': "import { loop } from '../extras/agent/loop.ts';\nexport const t = loop;\n",
  'lib/otel/o.ts': "import { client } from '../extras/mcp.ts';\nexport const o = client;\n",
  'lib/extras/mcp.ts': "import { serve } from '../mcp/serve.ts';\nexport const client = serve;\n",
  'lib/mcp/serve.ts': "import { t } from '../tools/t.ts';\nexport const serve = t;\n",
  'lib/adapters/a.ts': "import { loop } from '../extras/agent/loop.ts';\nexport const a = loop;\n",
  'lib/index.ts': "export { o } from './otel/o.ts';\n",
  'lib/core/ring-a.ts': "import { b } from './ring-b.ts';\nexport const a = () => b;\n",
  'lib/core/ring-b.ts': "import { a } from './ring-a.ts';\nexport const b = () => a;\n",
  'lib/core/fixture.ts': "import { x } from '../../spec/x.ts';\nexport const f = x;\n",
  'spec/x.ts': 'export const x = 1;\n',
};
const expected = [
  'core-is-the-bottom',
  'schemas-on-core',
  'formats-below-the-loop',
  'tools-on-core',
  'otel-on-core',
  'adapters-below-extras',
  'extras-below-mcp-server',
  'mcp-server-not-above',
  'only-the-cli-imports-the-cli',
  'core-entry-stays-portable',
  'no-circular',
  'not-to-spec',
];
const dir = mkdtempSync(join(tmpdir(), 'toolrun-lint-deps-'));
try {
  for (const [path, text] of Object.entries(planted)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'nodenext', allowImportingTsExtensions: true, noEmit: true } }));
  const fired = new Set(cruise(dir).violations.map((v) => v.rule.name));
  const silent = expected.filter((rule) => !fired.has(rule));
  if (silent.length > 0) {
    console.error(`lint:deps: the planted violations did not fail these rules: ${silent.join(', ')}`);
    process.exit(1);
  }
  console.log(`lint:deps: a planted violation of each of the ${expected.length} rules fails them`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
