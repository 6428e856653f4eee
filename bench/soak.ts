/**
 * Soak: the property of `spec/property/run-tools.property.spec.ts` (the same model, the same
 * generators, the same checks — `spec/property/model.ts`) over many random batches.
 *
 * ```
 * npm run soak                                  # 100,000 cases, a fresh seed (printed first)
 * npm run soak -- --runs 5000                   # fewer cases
 * npm run soak -- --seed=1889583168             # the same 100,000 cases again
 * npm run soak -- --seed=-1212764095 --path "56:222:1:1"  # replay one (shrunk) failure
 *                                               # (write --seed=S: seeds can be negative)
 * npm run soak -- --focus reads-all             # only batches read to the end (or leaves-early)
 * ```
 *
 * A failure prints fast-check's report (counterexample, seed, path) and the command that
 * replays it; the exit code is 1. The same seed and path also replay under vitest:
 * `TOOLRUN_PROPERTY_SEED=S TOOLRUN_PROPERTY_PATH=P npx vitest run spec/property -t <focus>`.
 */
import { parseArgs } from 'node:util';
import fc from 'fast-check';
import { Coverage, propertyParameters, runScenario, scenarioArbitrary, type Focus } from '../spec/property/model.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string' },
    seed: { type: 'string' },
    path: { type: 'string' },
    focus: { type: 'string' },
  },
  strict: true,
});

function integer(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isInteger(value)) {
    console.error(`soak: --${name} must be an integer, got ${JSON.stringify(text)}`);
    process.exit(2);
  }
  return value;
}

const runs = integer('runs', values.runs, 100_000);
// fast-check takes a 32-bit integer seed (negative ones too: pass them as --seed=-123).
const seed = integer('seed', values.seed, (Date.now() ^ Math.floor(Math.random() * 0x1_0000_0000)) | 0);
const path = values.path;
const focuses: readonly Focus[] = ['any', 'reads-all', 'leaves-early'];
const focus = (values.focus ?? 'any') as Focus;
if (!focuses.includes(focus)) {
  console.error(`soak: --focus must be one of ${focuses.join(', ')}, got ${JSON.stringify(values.focus)}`);
  process.exit(2);
}

console.log(`soak: ${runs} cases (${focus}), seed ${seed}${path === undefined ? '' : `, path ${path}`}`);
const coverage = new Coverage();
const started = performance.now();
let cases = 0;
const property = fc.asyncProperty(scenarioArbitrary(focus), async (scenario) => {
  await runScenario(scenario, coverage);
  cases++;
  if (cases % 5_000 === 0) {
    const seconds = (performance.now() - started) / 1000;
    console.log(`  ${cases} cases passed in ${seconds.toFixed(1)} s`);
  }
});
try {
  await fc.assert(property, propertyParameters({ numRuns: runs, seed, path }));
  const seconds = (performance.now() - started) / 1000;
  console.log(`soak: ${cases} cases passed in ${seconds.toFixed(1)} s (seed ${seed})`);
  console.log(`coverage: ${coverage.toString()}`);
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  // fast-check keeps the failing check's own error as the cause.
  const cause = error instanceof Error ? error.cause : undefined;
  if (cause !== undefined) console.error(`\ncause: ${cause instanceof Error ? (cause.stack ?? cause.message) : String(cause)}`);
  const match = /seed: (-?\d+), path: "([^"]*)"/.exec(error instanceof Error ? error.message : '');
  if (match !== null) console.error(`\nreplay: npm run soak -- --focus ${focus} --seed=${match[1]} --path "${match[2]}"`);
  process.exitCode = 1;
}
