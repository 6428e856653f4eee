#!/usr/bin/env node
/**
 * What typing a JSON Schema `input` costs the compiler (docs/adr/0010-types-flow-to-events.md). Each variant is one file next to this script that types the
 * same 30-property schema (`schema.ts`) and uses it. Each is type-checked alone, RUNS times,
 * each time in a fresh process through the TypeScript API (strict,
 * exactOptionalPropertyTypes, noUncheckedIndexedAccess, nodenext, skipLibCheck,
 * `@types/node`), and the median CPU time of the check (user + system, of
 * `getPreEmitDiagnostics`: parsing and binding excluded) is printed with the counts of types
 * and instantiations, which do not depend on the machine's load. CPU time, not wall time:
 * on a shared, loaded machine wall time measures the neighbours.
 *
 *   node bench/json-schema-types/run.mjs            # every variant, 5 runs each
 *   RUNS=9 node bench/json-schema-types/run.mjs from-schema plain
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const all = ['plain', 'from-schema', 'as-typed', 'define-tool-untyped', 'define-tool-typed'];

if (process.argv[2] === '--one') {
  // The child: one variant, one check.
  const ts = (await import('typescript')).default;
  const file = `${here}${process.argv[3]}.ts`;
  const program = ts.createProgram([file], {
    target: ts.ScriptTarget.ES2022, lib: ['lib.es2023.d.ts'], module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: ['node'], strict: true, exactOptionalPropertyTypes: true, noUncheckedIndexedAccess: true, allowImportingTsExtensions: true, noEmit: true, skipLibCheck: true,
  });
  program.getTypeChecker(); // binds every file: not part of the measure
  const before = process.cpuUsage();
  const diagnostics = ts.getPreEmitDiagnostics(program);
  const used = process.cpuUsage(before);
  if (diagnostics.length > 0) {
    console.error(ts.formatDiagnostics(diagnostics, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => here, getNewLine: () => '\n' }));
    process.exit(1);
  }
  console.log(JSON.stringify({ cpuMs: (used.user + used.system) / 1000, types: program.getTypeCount(), instantiations: program.getInstantiationCount() }));
} else {
  const variants = process.argv.length > 2 ? process.argv.slice(2) : all;
  const runs = Number(process.env.RUNS ?? 5);
  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  console.log(`| variant | check CPU time (median of ${runs}) | types | instantiations |\n| --- | --- | --- | --- |`);
  for (const variant of variants) {
    const samples = [];
    for (let i = 0; i < runs; i++) {
      const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--one', variant], { encoding: 'utf8' });
      if (child.status !== 0) throw new Error(`${variant}: the check failed:\n${child.stdout}${child.stderr}`);
      samples.push(JSON.parse(child.stdout));
    }
    const { types, instantiations } = samples[0];
    console.log(`| ${variant} | ${median(samples.map((s) => s.cpuMs)).toFixed(0)} ms | ${types} | ${instantiations} |`);
  }
}
