/**
 * JSON Schema validation cost per tool call: toolrun's no-eval interpreter
 * (`lib/core/schema/json-schema-validator.ts`, on `@cfworker/json-schema`) against Ajv 8 (code
 * generation with `new Function`, which a strict Content-Security-Policy refuses), on the
 * BFCL ground-truth calls of `../shared/corpus/bfcl/` (1,241 calls, their converted
 * schemas) — valid arguments, and a mutated copy of each call with its first parameter's
 * type changed (invalid arguments, all issues collected as toolrun does).
 *
 * Run: `npx tsx bench/validators.ts` (needs the corpus beside the repository).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { compileJsonSchema } from '../lib/core/schema/json-schema-validator.ts';
import { bfclGroundTruthArguments, convertBfclSchema, type JsonSchema } from '../lib/index.ts';

const corpus = fileURLToPath(new URL('../../shared/corpus/bfcl/', import.meta.url));
const lines = (file: string): any[] =>
  readFileSync(`${corpus}${file}`, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l));

interface Case {
  schema: JsonSchema;
  valid: Record<string, unknown>;
  invalid: Record<string, unknown>;
}

const cases: Case[] = [];
for (const category of ['parallel', 'parallel_multiple', 'live_parallel', 'live_parallel_multiple']) {
  const file = `BFCL_v4_${category}.json`;
  const answers = new Map(lines(`possible_answer_${file}`).map((a) => [a.id, a.ground_truth]));
  for (const entry of lines(file)) {
    const schemas = new Map<string, JsonSchema>(entry.function.map((fn: any) => [fn.name, convertBfclSchema(fn.parameters)]));
    for (const expected of answers.get(entry.id) ?? []) {
      for (const [name, params] of Object.entries(expected as Record<string, Record<string, unknown[]>>)) {
        const valid = bfclGroundTruthArguments(params);
        const first = Object.keys(valid)[0];
        const invalid = first === undefined ? { unexpected: 1 } : { ...valid, [first]: typeof valid[first] === 'string' ? 12345 : 'not this' };
        cases.push({ schema: schemas.get(name)!, valid, invalid });
      }
    }
  }
}

/** Median of `rounds` timings of one pass over every case, in µs per call. */
function perCall(validate: (c: Case, args: Record<string, unknown>) => unknown, pick: (c: Case) => Record<string, unknown>, rounds = 15): number {
  const samples: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const start = performance.now();
    for (const c of cases) validate(c, pick(c));
    samples.push(((performance.now() - start) * 1000) / cases.length);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)]!;
}

// Ajv as toolrun used it before: allErrors, verbose, no strict mode, no formats; one compile per schema object.
const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false, verbose: true });
const ajvCompiled = new WeakMap<object, ReturnType<Ajv['compile']>>();
const ajvValidate = (c: Case, args: Record<string, unknown>): unknown => {
  let fn = ajvCompiled.get(c.schema);
  if (fn === undefined) ajvCompiled.set(c.schema, (fn = ajv.compile(c.schema)));
  return fn(args) ? [] : fn.errors;
};
const interpreterValidate = (c: Case, args: Record<string, unknown>): unknown => compileJsonSchema(c.schema).issues(args);

const distinct = new Set(cases.map((c) => c.schema)).size;
/** µs to compile (Ajv) or check and copy (interpreter) each distinct schema once, on fresh copies. */
const compileOnce = (compile: (schema: JsonSchema) => unknown): number => {
  const fresh = [...new Set(cases.map((c) => c.schema))].map((schema) => JSON.parse(JSON.stringify(schema)) as JsonSchema);
  const start = performance.now();
  for (const schema of fresh) compile(schema);
  return ((performance.now() - start) * 1000) / fresh.length;
};
const ajvForCompile = new Ajv({ allErrors: true, strict: false, validateFormats: false, verbose: true });
const compileAjv = compileOnce((schema) => ajvForCompile.compile(schema));
const compileInterpreter = compileOnce((schema) => compileJsonSchema(schema));

// Warm both (first pass compiles and caches), then measure.
perCall(ajvValidate, (c) => c.valid, 3);
perCall(interpreterValidate, (c) => c.valid, 3);
const rows = [
  ['first use of a schema (compile / check and copy), µs per schema', compileAjv, compileInterpreter],
  ['valid arguments, µs per call', perCall(ajvValidate, (c) => c.valid), perCall(interpreterValidate, (c) => c.valid)],
  ['invalid arguments (all issues), µs per call', perCall(ajvValidate, (c) => c.invalid), perCall(interpreterValidate, (c) => c.invalid)],
] as const;
console.log(`${cases.length} BFCL calls over ${distinct} schemas; node ${process.version}`);
console.log(`| | Ajv 8 (new Function) | @cfworker/json-schema (interpreter) |`);
console.log(`| --- | ---: | ---: |`);
for (const [label, a, b] of rows) console.log(`| ${label} | ${a.toFixed(2)} | ${b.toFixed(2)} |`);
