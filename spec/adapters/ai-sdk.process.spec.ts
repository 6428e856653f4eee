import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

// A child process (node with tsx): in `npm run test:slow` (vitest.config.ts,
// `spec/**/*.process.spec.ts`); the adapters themselves are spec/adapters/ai-sdk.spec.ts.
describe('adapters load no peer package', () => {
  // The limit is a hang guard: a fresh process with tsx can take over 20 s to start under load.
  it("importing toolrun's entry in a fresh process resolves none of ai, @openai/agents, @langchain/core, zod", { timeout: 180_000 }, async () => {
    // A resolve hook in a child process records every bare specifier toolrun's entry resolves.
    const dir = mkdtempSync(join(tmpdir(), 'toolrun-load-'));
    const hooks = join(dir, 'hooks.mjs');
    writeFileSync(hooks, 'export async function resolve(specifier, context, next) { if (!/^[./]|^node:|^file:|^data:/.test(specifier)) process.stderr.write(`RESOLVE ${specifier}\\n`); return next(specifier, context); }\n');
    const register = join(dir, 'register.mjs');
    writeFileSync(register, `import { register } from 'node:module'; register(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
    const entry = fileURLToPath(new URL('../../lib/index.ts', import.meta.url));
    const { stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--import', register, '-e', `await import(${JSON.stringify(pathToFileURL(entry).href)})`], {
      cwd: fileURLToPath(new URL('../../', import.meta.url)),
    });
    rmSync(dir, { recursive: true, force: true });
    const resolved = stderr.split('\n').filter((line) => line.startsWith('RESOLVE ')).map((line) => line.slice(8));
    // The hook does see toolrun's own dependencies being loaded.
    const dependencies = Object.keys(JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).dependencies as object);
    expect(resolved.filter((s) => dependencies.some((d) => s === d || s.startsWith(`${d}/`))).length).toBeGreaterThan(0);
    expect(resolved.filter((s) => /^(ai|ai-v6|zod|@openai\/agents[^/]*|@langchain\/[^/]+)(\/|$)/.test(s))).toEqual([]);
  });
});
