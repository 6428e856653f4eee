/**
 * `import 'toolrun'` is not tied to Node: the import graph of
 * lib/index.ts has no `node:` module and no file of lib/cli or lib/tools, and the bundled
 * entry runs in a `node:vm` context that has no `process`, `require` or `Buffer`. Nor does it
 * reach `@opentelemetry/api` (an optional peer dependency only `toolrun/otel` imports).
 */
import { runInContext, createContext } from 'node:vm';
import { build, type Metafile } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** lib/index.ts and its dependencies as one script for no platform; `node:` imports left as imports. */
async function bundleCoreEntry(): Promise<{ code: string; metafile: Metafile }> {
  const result = await build({
    absWorkingDir: root,
    entryPoints: ['lib/index.ts'],
    bundle: true,
    platform: 'neutral',
    mainFields: ['module', 'main'],
    format: 'iife',
    globalName: 'toolrun',
    external: ['node:*'],
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  return { code: result.outputFiles[0]!.text, metafile: result.metafile };
}

describe("import 'toolrun' needs no Node", () => {
  let bundled: { code: string; metafile: Metafile };
  beforeAll(async () => {
    bundled = await bundleCoreEntry();
  });

  it('imports no node: module and no file of lib/cli or lib/tools', () => {
    const inputs = Object.entries(bundled.metafile.inputs);
    const external = inputs.flatMap(([file, input]) => input.imports.filter((i) => i.external).map((i) => `${file} -> ${i.path}`));
    expect(external).toEqual([]);
    const files = inputs.map(([file]) => file);
    expect(files.filter((f) => f.startsWith('lib/cli/') || f.startsWith('lib/tools/'))).toEqual([]);
    // json-schema-to-ts types JSON Schema inputs and is never loaded: its
    // import is `import type`. Fails if a value import of it is added.
    expect(files.filter((f) => f.includes('node_modules/json-schema-to-ts/') || f.includes('node_modules/ts-algebra/'))).toEqual([]);
    // Guard against a vacuous pass: the graph really is the core and its packages.
    expect(files).toContain('lib/core/run/run-tools.ts');
    expect(files).toContain('lib/core/values/platform.ts');
    expect(files.some((f) => f.includes('node_modules/@cfworker/json-schema/'))).toBe(true);
    expect(files.some((f) => f.includes('node_modules/re2js/'))).toBe(true);
  });

  it('T1 imports nothing of @opentelemetry and no file of lib/otel: tracing is only the RunTracing seam', () => {
    const files = Object.keys(bundled.metafile.inputs);
    expect(files.filter((f) => f.includes('@opentelemetry/') || f.startsWith('lib/otel/'))).toEqual([]);
    // Not vacuous: the seam itself is in the graph.
    expect(files).toContain('lib/core/seams/tracing.ts');
  });

  it('runs tool calls (O1 results in call order, invalid arguments answered) in a context without process, require or Buffer', async () => {
    const context = createContext({ console, setTimeout, clearTimeout, queueMicrotask, structuredClone, AbortController, AbortSignal, DOMException, Event, EventTarget, TextEncoder, TextDecoder, URL });
    expect(runInContext('[typeof process, typeof require, typeof Buffer, typeof globalThis.process]', context)).toEqual(['undefined', 'undefined', 'undefined', 'undefined']);
    runInContext(bundled.code, context);
    const program = `(async () => {
      const { defineTool, runTools, toAnthropic } = toolrun;
      const wait = (ms) => new Promise((r) => setTimeout(r, ms));
      const order = [];
      const slow = defineTool({
        name: 'slow',
        input: { type: 'object', properties: { ms: { type: 'number' } }, required: ['ms'] },
        async *execute({ ms }) { yield 'waiting'; await wait(ms); order.push(ms); return 'waited ' + ms; },
      });
      const calls = [
        { id: 'a', name: 'slow', arguments: { ms: 20 } },
        { id: 'b', name: 'slow', arguments: { ms: 1 } },
        { id: 'c', name: 'slow', arguments: { ms: 'x' } },
      ];
      const ids = [];
      const run = runTools(calls, { tools: [slow], maxConcurrency: 3, onInProgressChange: () => { throw new Error('listener failed'); } });
      let step;
      while (!(step = await run.next()).done) if (step.value.type === 'tool_result') ids.push(step.value.message.toolCallId);
      return { ids, order, errors: step.value.messages.map((m) => m.isError), user: toAnthropic(step.value.messages).role };
    })()`;
    const warnings: unknown[] = [];
    const originalWarn = console.warn;
    console.warn = (...args: unknown[]) => void warnings.push(args.join(' '));
    try {
      const outcome = await (runInContext(program, context) as Promise<unknown>);
      expect(JSON.parse(JSON.stringify(outcome))).toEqual({ ids: ['a', 'b', 'c'], order: [1, 20], errors: [false, false, true], user: 'user' });
    } finally {
      console.warn = originalWarn;
    }
    // Without process.emitWarning, a throwing listener is reported on console.warn.
    expect(warnings.length).toBeGreaterThan(0);
    expect(String(warnings[0])).toMatch(/^ToolrunWarning: toolrun: onInProgressChange threw and was ignored: (Error: )?listener failed/);
  });
});
