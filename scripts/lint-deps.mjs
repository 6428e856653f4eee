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

// 2. A planted lib/: one import against each rule (each room of lib/core importing the room
// above it; a circle of type-only imports); every rule must report it.
const planted = {
  'lib/core/tool/low.ts': "import { up } from '../../formats/up.ts';\nexport const low = up;\n",
  // one upward import per room of lib/core, each to the room right above it
  'lib/core/tool/t.ts': "import type { V } from '../values/v.ts';\nexport type T = V;\n",
  'lib/core/values/v.ts': "import type { S } from '../schema/s.ts';\nexport type V = S;\n",
  'lib/core/schema/s.ts': "import type { St } from '../streams/st.ts';\nexport type S = St;\n",
  'lib/core/streams/st.ts': "import type { Se } from '../seams/se.ts';\nexport type St = Se;\n",
  'lib/core/seams/se.ts': "import type { A } from '../approval/a.ts';\nexport type Se = A;\n",
  'lib/core/approval/a.ts': "import type { R } from '../run/r.ts';\nexport type A = R;\n",
  'lib/core/run/r.ts': "import { loose } from '../loose.ts';\nexport type R = number;\nexport const r = loose;\n",
  'lib/core/loose.ts': 'export const loose = 1;\n',
  // a circle of type-only imports
  'lib/core/run/type-a.ts': "import type { B } from './type-b.ts';\nexport type A = { b?: B };\n",
  'lib/core/run/type-b.ts': "import type { A } from './type-a.ts';\nexport type B = { a?: A };\n",
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
  'lib/core/run/ring-a.ts': "import { b } from './ring-b.ts';\nexport const a = () => b;\n",
  'lib/core/run/ring-b.ts': "import { a } from './ring-a.ts';\nexport const b = () => a;\n",
  'lib/core/run/fixture.ts': "import { x } from '../../../spec/x.ts';\nexport const f = x;\n",
  'spec/x.ts': 'export const x = 1;\n',
};
const expected = [
  'core-tool-room',
  'core-values-room',
  'core-schema-room',
  'core-streams-room',
  'core-seams-room',
  'core-approval-room',
  'core-run-room',
  'core-in-rooms',
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
  const violations = cruise(dir).violations;
  const fired = new Set(violations.map((v) => v.rule.name));
  const silent = expected.filter((rule) => !fired.has(rule));
  // the circle of type-only imports must fail no-circular on its own, not only the runtime ring
  if (!violations.some((v) => v.rule.name === 'no-circular' && v.from.endsWith('type-a.ts'))) silent.push('no-circular (type-only circle)');
  if (silent.length > 0) {
    console.error(`lint:deps: the planted violations did not fail these rules: ${silent.join(', ')}`);
    process.exit(1);
  }
  console.log(`lint:deps: a planted violation of each of the ${expected.length} rules fails them`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
