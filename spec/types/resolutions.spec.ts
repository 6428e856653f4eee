/**
 * The type tests of spec/types under the other module resolution users have:
 * vitest's typecheck project checks them with spec/types/tsconfig.json (nodenext, strict,
 * exactOptionalPropertyTypes); this compiles the same files with `bundler` resolution
 * (spec/types/tsconfig.bundler.json), and shows the check can fail: a copy of a type test
 * with one deliberately wrong expectation and one `@ts-expect-error` over a line that
 * compiles is rejected, with those two errors.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const tsc = join(root, 'node_modules/typescript/bin/tsc');

function compile(project: string): { status: number | null; output: string } {
  const result = spawnSync(process.execPath, [tsc, '-p', project, '--pretty', 'false'], { cwd: root, encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe('type tests under bundler resolution', () => {
  // One whole-program compile each: about 20 s of CPU; the limits are hang guards.
  it('spec/types/*.test-d.ts compile with moduleResolution bundler', { timeout: 300_000 }, () => {
    const { status, output } = compile('spec/types/tsconfig.bundler.json');
    expect(output).toBe('');
    expect(status).toBe(0);
  });

  it('a wrong expectation and a stale @ts-expect-error fail the check', { timeout: 300_000 }, () => {
    const dir = join(root, '.tmp/type-canary');
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const source = readFileSync(join(root, 'spec/types/ai-sdk.test-d.ts'), 'utf8').replaceAll("'../../lib/index.ts'", `'${join(root, 'lib/index.ts')}'`);
    const wrong = source
      .replace("expectTypeOf<keyof typeof set>().toEqualTypeOf<'weather' | 'clock'>();", "expectTypeOf<keyof typeof set>().toEqualTypeOf<'weather' | 'clock' | 'extra'>();")
      .replace('    // @ts-expect-error no tool is named \'nope\'\n    set.nope;', "    // @ts-expect-error stale: this line compiles\n    set.weather;");
    expect(wrong).not.toBe(source);
    writeFileSync(join(dir, 'canary.test-d.ts'), wrong);
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({ extends: join(root, 'spec/types/tsconfig.bundler.json'), include: ['./canary.test-d.ts'] }),
    );
    const { status, output } = compile(join(dir, 'tsconfig.json'));
    expect(status).not.toBe(0);
    expect(output).toMatch(/canary\.test-d\.ts\(\d+,\d+\): error TS2344/); // the wrong expectation
    expect(output).toMatch(/canary\.test-d\.ts\(\d+,\d+\): error TS2578: Unused '@ts-expect-error' directive/);
  });
});
