/**
 * The package build (`npm run build`, run by `prepack`): ESM JavaScript, declarations and
 * maps under `dist/`. Why tsdown and why two builds: docs/adr/0027-package.md.
 */
import { defineConfig } from 'tsdown';

/** Shared by both builds. */
const common = {
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  outDir: 'dist',
  fixedExtension: false,
  sourcemap: true,
  // Size tables are noise in the test logs; docs/package.md measures the package instead.
  report: false,
  // Declaration bundling dominates the build time on purpose; no need to be told each run.
  checks: { pluginTimings: false },
} as const;

/**
 * The entries that need an optional peer, and a module of it. Without the peer, TypeScript's
 * TS2307 points at the first line of the entry's declarations, so that line names the peer and
 * its install command; the JavaScript gets the same line as a comment (Node's
 * ERR_MODULE_NOT_FOUND names the package and the entry's file, not a line).
 */
const PEERS: Record<string, { peer: string; module: string }> = {
  mcp: { peer: '@modelcontextprotocol/sdk', module: '@modelcontextprotocol/sdk/types.js' },
  otel: { peer: '@opentelemetry/api', module: '@opentelemetry/api' },
  dbos: { peer: '@dbos-inc/dbos-sdk', module: '@dbos-inc/dbos-sdk' },
};

/** The first line of an output file: rolldown's `postBanner`, since tsdown's `banner` calls a function once per build, not once per file. */
function peerBanner({ fileName }: { fileName: string }): string {
  const [, entry, kind] = /^(\w+)\/index\.(js|d\.ts)$/.exec(fileName) ?? [];
  const needs = entry === undefined ? undefined : PEERS[entry];
  if (needs === undefined) return '';
  const why = `toolrun/${entry} needs its optional peer dependency ${needs.peer}: npm install ${needs.peer}`;
  return kind === 'js' ? `// ${why}` : `import type {} from '${needs.module}'; // ${why}`;
}

export default defineConfig([
  {
    // The library: one file per entry plus shared chunks. Every runtime dependency stays an
    // import (it is in `dependencies`); from node_modules only abort-controller-x is bundled
    // (a devDependency, 1 kB): as a package, Node loads its CommonJS build as a dozen files,
    // about half the CPU of `import 'toolrun'` (docs/adr/0027-package.md). `onlyBundle` fails the build if
    // anything else from node_modules would be bundled.
    ...common,
    entry: { index: 'lib/index.ts', 'tools/index': 'lib/tools/index.ts', testing: 'lib/testing.ts', 'mcp/index': 'lib/mcp/index.ts', 'otel/index': 'lib/otel/index.ts', 'inspect/index': 'lib/inspect/index.ts', 'dbos/index': 'lib/dbos/index.ts' },
    dts: { sourcemap: true },
    // The maps point at lib/, which the package ships (the declaration maps need it for
    // "go to definition"), so they need not carry a second copy of the sources.
    outputOptions: { sourcemapExcludeSources: true, postBanner: peerBanner },
    clean: true,
    deps: { alwaysBundle: ['abort-controller-x'], onlyBundle: ['abort-controller-x'] },
  },
  {
    // The `toolrun` program: the CLI-only packages (devDependencies) are bundled into it, so
    // a library user installs none of them.
    ...common,
    // Its own folder: its chunks (the lazily loaded commands) never mix with the library's,
    // and `lib/cli/main.ts`'s `new URL('../../', import.meta.url)` still means the package root.
    entry: { main: 'lib/cli/main.ts' },
    outDir: 'dist/cli',
    // No map: it would carry the bundled packages' sources, and Node reads maps only with
    // --enable-source-maps; the library keeps its maps.
    sourcemap: false,
    dts: false,
    clean: false,
    // Bundling node_modules here is the point; the list of what was bundled is not news.
    // The MCP SDK is a peer dependency of the library (`toolrun/mcp`), which tsdown would leave
    // external; the program bundles it anyway, so `npx toolrun mcp` and `serve-mcp` work after
    // `npm install toolrun` alone (docs/adr/0027-package.md).
    deps: { onlyAllowBundle: false, alwaysBundle: [/^@modelcontextprotocol\/sdk(\/|$)/] },
  },
]);
