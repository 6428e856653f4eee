#!/usr/bin/env node
/**
 * What typing a JSON Schema `input` costs the compiler (issue 22 item 2; docs/decisions.md,
 * "JSON Schema inputs typed"). Each variant is one file next to this script that types the
 * same 30-property schema (`schema.ts`) and uses it; each is compiled alone by `tsc
 * --extendedDiagnostics` (strict, exactOptionalPropertyTypes, nodenext, skipLibCheck,
 * `@types/node`), RUNS times, and the median "Check time" is printed with the (load-free)
 * counts of types and instantiations.
 *
 *   node bench/json-schema-types/run.mjs            # every variant, 3 runs each
 *   RUNS=5 node bench/json-schema-types/run.mjs define-tool-typed define-tool-untyped
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const tsc = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));
const all = ['plain', 'from-schema', 'as-typed', 'define-tool-untyped', 'define-tool-typed'];
const variants = process.argv.length > 2 ? process.argv.slice(2) : all;
const runs = Number(process.env.RUNS ?? 3);
const work = mkdtempSync(join(tmpdir(), 'toolrun-schema-types-'));

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

console.log(`| variant | check time (median of ${runs}) | types | instantiations |\n| --- | --- | --- | --- |`);
try {
  for (const variant of variants) {
    const project = join(work, `${variant}.json`);
    writeFileSync(
      project,
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022', lib: ['ES2023'], module: 'NodeNext', moduleResolution: 'NodeNext', types: ['node'], typeRoots: [fileURLToPath(new URL('../../node_modules/@types', import.meta.url))], strict: true,
          exactOptionalPropertyTypes: true, noUncheckedIndexedAccess: true, allowImportingTsExtensions: true, noEmit: true, skipLibCheck: true,
        },
        files: [join(here, `${variant}.ts`)],
      }),
    );
    const times = [];
    let counts = '';
    for (let i = 0; i < runs; i++) {
      const result = spawnSync(process.execPath, [tsc, '-p', project, '--extendedDiagnostics'], { encoding: 'utf8' });
      const output = `${result.stdout}${result.stderr}`;
      if (result.status !== 0) throw new Error(`${variant}: tsc exited with ${result.status}:\n${output}`);
      const field = (name) => output.match(new RegExp(`^${name}:\\s+([\\d.]+)`, 'm'))?.[1];
      times.push(Number(field('Check time')));
      counts = `${field('Types')} | ${field('Instantiations')}`;
    }
    console.log(`| ${variant} | ${median(times).toFixed(2)} s | ${counts} |`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
