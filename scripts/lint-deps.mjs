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

// 2. A planted lib/: one import against each rule; every planted import must be reported under
// its rule, and the one allowed exception (the portable entry importing the MCP tool source)
// must not be.
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
  'lib/inspect/i.ts': "import { up } from '../formats/up.ts';\nexport const i = up;\n",
  'lib/formats/up.ts': "import { loop } from '../extras/agent/loop.ts';\nexport const up = loop;\n",
  'lib/extras/agent/loop.ts': "import { cli } from '../../cli/main.ts';\nexport const loop = cli;\n",
  'lib/cli/main.ts': 'export const cli = 1;\n',
  'lib/schemas/s.ts': "import { up } from '../formats/up.ts';\nexport const s = up;\n",
  'lib/tools/t.ts': "import { loop } from '../extras/agent/loop.ts';\nexport const t = loop;\n",
  'lib/otel/o.ts': "import { e } from '../extras/e.ts';\nexport const o = e;\n",
  'lib/extras/e.ts': "import { serve } from '../mcp/server/serve.ts';\nexport const e = serve;\n",
  'lib/mcp/server/serve.ts': "import { t } from '../../tools/t.ts';\nexport const serve = t;\n",
  'lib/mcp/client/http.ts': "import { serve } from '../server/serve.ts';\nexport const http = serve;\n",
  'lib/mcp/client/stdio.ts': 'export const stdio = 1;\n',
  'lib/mcp/client/tools.ts': "import { stdio } from './stdio.ts';\nimport { readFileSync } from 'node:fs';\nexport const tools = [stdio, readFileSync];\n",
  'lib/adapters/a.ts': "import { loop } from '../extras/agent/loop.ts';\nexport const a = loop;\n",
  'lib/index.ts':
    "export { o } from './otel/o.ts';\nexport { http } from './mcp/client/http.ts';\nexport { serve } from './mcp/server/serve.ts';\nexport { tools } from './mcp/client/tools.ts';\nexport { i } from './inspect/i.ts';\n",
  'lib/core/run/ring-a.ts': "import { b } from './ring-b.ts';\nexport const a = () => b;\n",
  'lib/core/run/ring-b.ts': "import { a } from './ring-a.ts';\nexport const b = () => a;\n",
  'lib/core/run/fixture.ts': "import { x } from '../../../spec/x.ts';\nexport const f = x;\n",
  'spec/x.ts': 'export const x = 1;\n',
};
/** `rule: from → to` of each planted violation; `to` is a path in lib/ or a Node built-in (named without `node:`). */
const expected = [
  'core-tool-room: lib/core/tool/t.ts → lib/core/values/v.ts',
  'core-values-room: lib/core/values/v.ts → lib/core/schema/s.ts',
  'core-schema-room: lib/core/schema/s.ts → lib/core/streams/st.ts',
  'core-streams-room: lib/core/streams/st.ts → lib/core/seams/se.ts',
  'core-seams-room: lib/core/seams/se.ts → lib/core/approval/a.ts',
  'core-approval-room: lib/core/approval/a.ts → lib/core/run/r.ts',
  'core-in-rooms: lib/core/run/r.ts → lib/core/loose.ts',
  'core-is-the-bottom: lib/core/tool/low.ts → lib/formats/up.ts',
  'inspect-on-core: lib/inspect/i.ts → lib/formats/up.ts',
  'core-entry-stays-portable: lib/index.ts → lib/inspect/i.ts',
  'schemas-on-core: lib/schemas/s.ts → lib/formats/up.ts',
  'formats-below-the-loop: lib/formats/up.ts → lib/extras/agent/loop.ts',
  'tools-on-core: lib/tools/t.ts → lib/extras/agent/loop.ts',
  'otel-on-core: lib/otel/o.ts → lib/extras/e.ts',
  'adapters-below-extras: lib/adapters/a.ts → lib/extras/agent/loop.ts',
  'extras-below-mcp: lib/extras/e.ts → lib/mcp/server/serve.ts',
  'mcp-not-above: lib/mcp/server/serve.ts → lib/tools/t.ts',
  'mcp-client-not-server: lib/mcp/client/http.ts → lib/mcp/server/serve.ts',
  'mcp-tool-source-portable: lib/mcp/client/tools.ts → lib/mcp/client/stdio.ts',
  'mcp-tool-source-no-node: lib/mcp/client/tools.ts → fs',
  'only-the-cli-imports-the-cli: lib/extras/agent/loop.ts → lib/cli/main.ts',
  'core-entry-stays-portable: lib/index.ts → lib/otel/o.ts',
  'core-entry-stays-portable: lib/index.ts → lib/mcp/client/http.ts',
  'core-entry-stays-portable: lib/index.ts → lib/mcp/server/serve.ts',
  'no-circular: lib/core/run/ring-a.ts → lib/core/run/ring-b.ts',
  'no-circular: lib/core/run/type-a.ts → lib/core/run/type-b.ts',
  'not-to-spec: lib/core/run/fixture.ts → spec/x.ts',
];
/** An import the rules allow on purpose: reporting it would be a rule too wide. */
const allowed = ['lib/index.ts → lib/mcp/client/tools.ts'];
const dir = mkdtempSync(join(tmpdir(), 'toolrun-lint-deps-'));
try {
  for (const [path, text] of Object.entries(planted)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'nodenext', allowImportingTsExtensions: true, noEmit: true } }));
  const fired = new Set(cruise(dir).violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`));
  const silent = expected.filter((line) => !fired.has(line));
  if (silent.length > 0) {
    console.error(`lint:deps: these planted violations were not reported:\n  ${silent.join('\n  ')}`);
    process.exit(1);
  }
  const wide = [...fired].filter((line) => allowed.some((a) => line.endsWith(`: ${a}`)));
  if (wide.length > 0) {
    console.error(`lint:deps: an allowed import was reported:\n  ${wide.join('\n  ')}`);
    process.exit(1);
  }
  const rules = new Set(expected.map((line) => line.slice(0, line.indexOf(':'))));
  console.log(`lint:deps: a planted violation of each of the ${rules.size} rules fails them (${expected.length} planted imports), the allowed one passes`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
