/**
 * The import rules of lib/ (`npm run lint:deps`): no circle, the layers of lib/ and the rooms
 * of lib/core (docs/architecture.md). Type-only imports count like any other, for the layers
 * and rooms (a room that names another's types depends on it) and for circles.
 * scripts/lint-deps.mjs runs this and then checks that a planted violation fails each rule.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'No import circle, type-only ones included: every module can be read after the ones it imports (docs/architecture.md).',
      from: { path: '^lib/' },
      to: { circular: true },
    },
    {
      name: 'core-is-the-bottom',
      severity: 'error',
      comment: 'lib/core imports nothing of lib/ outside lib/core.',
      from: { path: '^lib/core/' },
      to: { path: '^lib/', pathNot: '^lib/core/' },
    },
    {
      name: 'core-tool-room',
      severity: 'error',
      comment: 'lib/core/tool/ (the vocabulary: types only, importing no other room) imports no other room.',
      from: { path: '^lib/core/tool/' },
      to: { path: '^lib/core/', pathNot: '^lib/core/(tool)/' },
    },
    {
      name: 'core-values-room',
      severity: 'error',
      comment: 'lib/core/values/ (guards and describeValue, readers of foreign values, content helpers, platform, defaults) imports core/tool.',
      from: { path: '^lib/core/values/' },
      to: { path: '^lib/core/', pathNot: '^lib/core/(tool|values)/' },
    },
    {
      name: 'core-schema-room',
      severity: 'error',
      comment: 'lib/core/schema/ (schemas, JSON Schema, the validator, input checks, defineTool and the tool checks) imports core/tool, core/values.',
      from: { path: '^lib/core/schema/' },
      to: { path: '^lib/core/', pathNot: '^lib/core/(tool|values|schema)/' },
    },
    {
      name: 'core-streams-room',
      severity: 'error',
      comment: 'lib/core/streams/ (channel, merge, reorder buffer, cancel scope) imports core/tool, core/values, core/schema.',
      from: { path: '^lib/core/streams/' },
      to: { path: '^lib/core/', pathNot: '^lib/core/(tool|values|schema|streams)/' },
    },
    {
      name: 'core-seams-room',
      severity: 'error',
      comment: 'lib/core/seams/ (the journal and tracing interfaces an outside engine implements) imports core/tool, core/values, core/schema, core/streams.',
      from: { path: '^lib/core/seams/' },
      to: { path: '^lib/core/', pathNot: '^lib/core/(tool|values|schema|streams|seams)/' },
    },
    {
      name: 'core-approval-room',
      severity: 'error',
      comment: 'lib/core/approval/ (approval, claims, pause, resume, the state format) imports core/tool, core/values, core/schema, core/streams, core/seams.',
      from: { path: '^lib/core/approval/' },
      to: { path: '^lib/core/', pathNot: '^lib/core/(tool|values|schema|streams|seams|approval)/' },
    },
    {
      name: 'core-run-room',
      severity: 'error',
      comment: 'lib/core/run/ (runTools, Run, calls, release, outbox, options, events, stages) imports core/tool, core/values, core/schema, core/streams, core/seams, core/approval.',
      from: { path: '^lib/core/run/' },
      to: { path: '^lib/core/', pathNot: '^lib/core/(tool|values|schema|streams|seams|approval|run)/' },
    },
    {
      name: 'core-in-rooms',
      severity: 'error',
      comment: 'Every file of lib/core is in one of its rooms (docs/architecture.md): none at its top level, none in a room the rules above do not know.',
      from: { path: '^lib/' },
      to: { path: '^lib/core/', pathNot: '^lib/core/(tool|values|schema|streams|seams|approval|run)/' },
    },
    {
      name: 'schemas-on-core',
      severity: 'error',
      comment: 'lib/schemas imports lib/core only.',
      from: { path: '^lib/schemas/' },
      to: { path: '^lib/', pathNot: '^lib/(core|schemas)/' },
    },
    {
      name: 'formats-below-the-loop',
      severity: 'error',
      comment: 'lib/formats imports lib/core and lib/schemas only: never the agent loop or any other extra.',
      from: { path: '^lib/formats/' },
      to: { path: '^lib/', pathNot: '^lib/(core|schemas|formats)/' },
    },
    {
      name: 'tools-on-core',
      severity: 'error',
      comment: 'lib/tools (the ready-made tools) imports lib/core only.',
      from: { path: '^lib/tools/' },
      to: { path: '^lib/', pathNot: '^lib/(core|tools)/' },
    },
    {
      name: 'otel-on-core',
      severity: 'error',
      comment: 'lib/otel imports lib/core only: not the MCP client, not the agent loop.',
      from: { path: '^lib/otel/' },
      to: { path: '^lib/', pathNot: '^lib/(core|otel)/' },
    },
    {
      name: 'adapters-below-extras',
      severity: 'error',
      comment: 'lib/adapters imports lib/core, lib/schemas and lib/formats.',
      from: { path: '^lib/adapters/' },
      to: { path: '^lib/', pathNot: '^lib/(core|schemas|formats|adapters)/' },
    },
    {
      name: 'extras-below-mcp',
      severity: 'error',
      comment: 'lib/extras imports lib/core, lib/schemas and lib/formats (not lib/mcp, the tools, otel or the CLI).',
      from: { path: '^lib/extras/' },
      to: { path: '^lib/', pathNot: '^lib/(core|schemas|formats|extras)/' },
    },
    {
      name: 'mcp-not-above',
      severity: 'error',
      comment: 'lib/mcp (both sides of MCP) imports lib/core, lib/schemas, lib/formats and lib/extras; not the tools, otel or the CLI.',
      from: { path: '^lib/mcp/' },
      to: { path: '^lib/', pathNot: '^lib/(core|schemas|formats|extras|mcp)/' },
    },
    {
      name: 'inspect-on-core',
      severity: 'error',
      comment: 'lib/inspect (the timeline inspector, `toolrun/inspect`) imports lib/core only.',
      from: { path: '^lib/inspect/' },
      to: { path: '^lib/', pathNot: '^lib/(core|inspect)/' },
    },
    {
      name: 'mcp-client-not-server',
      severity: 'error',
      comment: 'lib/mcp/client (toolrun as an MCP client) imports nothing of lib/mcp/server: a program that only calls MCP servers never loads the server side.',
      from: { path: '^lib/mcp/client/' },
      to: { path: '^lib/mcp/server/' },
    },
    {
      name: 'mcp-tool-source-portable',
      severity: 'error',
      comment:
        'lib/mcp/client/tools.ts (`mcpTools`, exported by the portable entry) imports lib/core, lib/schemas and lib/formats only: ' +
        'not the MCP transports (client/http.ts, client/stdio.ts), not the server side.',
      from: { path: '^lib/mcp/client/tools\\.ts$' },
      to: { path: '^lib/', pathNot: '^lib/(core|schemas|formats)/' },
    },
    {
      name: 'mcp-tool-source-no-node',
      severity: 'error',
      comment: 'lib/mcp/client/tools.ts imports no Node built-in module (node:*): it runs in browsers too.',
      from: { path: '^lib/mcp/client/tools\\.ts$' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'only-the-cli-imports-the-cli',
      severity: 'error',
      comment: 'lib/cli is the program: nothing outside it imports it.',
      from: { pathNot: '^lib/cli/' },
      to: { path: '^lib/cli/' },
    },
    {
      name: 'core-entry-stays-portable',
      severity: 'error',
      comment:
        "`import 'toolrun'` reaches no node: module, no ready-made tool, no otel and no MCP server (spec/package/core-entry.spec.ts checks the bundle too). " +
        'Of lib/mcp it imports exactly the portable tool source lib/mcp/client/tools.ts (`mcpTools`, `mcpContent`), which mcp-tool-source-portable keeps portable.',
      from: { path: '^lib/index\\.ts$' },
      to: { path: '^lib/(cli|tools|otel|mcp|inspect)/', pathNot: '^lib/mcp/client/tools\\.ts$' },
    },
    {
      name: 'not-to-spec',
      severity: 'error',
      comment: 'lib/ never imports the specs or their fixtures.',
      from: { path: '^lib/' },
      to: { path: '^(spec|bench|scripts)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)node_modules/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'] },
  },
};
