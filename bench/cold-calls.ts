/**
 * How much of toolrun's code one plain tool call runs, counted rather than timed: the
 * function calls per tool call, by source file, in batches 2–11 of N = 10
 * `{ content, details }` calls (the workload of the `cold-start` scenario), read from V8's
 * precise coverage with call counts (the inspector's `Profiler.startPreciseCoverage`).
 *
 *   node --import tsx bench/cold-calls.ts [built index.js] [--all]
 *
 * Without a path it builds the library as the `cold-start` scenario does (tsdown, no
 * declarations) and counts that build; `--all` lists every function with its count per call.
 *
 * Why counted: a fresh process runs batches 2–100 in V8's interpreter and baseline tier,
 * where the cost grows with the code a call runs, and on this shared 2-core machine CPU time cannot resolve a change of a few per
 * cent, where a count is exact and the same at any load. It counts, it does not weigh: a
 * getter and `#handOut` are one call each. Confirm a cut in CPU with the `cold-start` scenario.
 *
 * @module
 */
import { Session } from 'node:inspector/promises';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import * as v from 'valibot';
import { buildLibrary } from './scenarios/cold-start.ts';
import { detailsBody, makeCalls } from './workload.ts';

const args = process.argv.slice(2);
const all = args.includes('--all');
const entry = args.find((a) => a !== '--all') ?? (await buildLibrary());
const N = 10;
/** Batches counted, after one uncounted batch (the first runs each function's first call). */
const BATCHES = 10;

const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
const lib = (await import(pathToFileURL(entry).href)) as typeof import('../lib/index.ts');
const tool = lib.defineTool({ name: 'work', input: v.object({ i: v.number() }), execute: (input, ctx) => detailsBody(input, ctx) });
const calls = makeCalls(N);
async function batch(): Promise<void> {
  const run = lib.runTools(calls, { tools: [tool] });
  for (;;) if ((await run.next()).done === true) return;
}
await batch();
// Taking the coverage resets the counts: what follows counts the batches below alone.
await session.post('Profiler.takePreciseCoverage');
for (let b = 0; b < BATCHES; b++) await batch();
const { result } = await session.post('Profiler.takePreciseCoverage');
session.disconnect();

// The bundle marks each source file's part with a `//#region <path>` line.
const source = readFileSync(entry, 'utf8');
const regionAt: { offset: number; file: string }[] = [];
for (const match of source.matchAll(/^\/\/#region (.*)$/gm)) regionAt.push({ offset: match.index, file: match[1]! });
function fileOf(offset: number): string {
  let file = '?';
  for (const region of regionAt) {
    if (region.offset > offset) break;
    file = region.file;
  }
  return file;
}

const perCall = BATCHES * N;
const entryUrl = pathToFileURL(entry).href;
const byFile = new Map<string, number>();
const rows: { count: number; name: string; file: string }[] = [];
let total = 0;
for (const script of result) {
  if (script.url !== entryUrl) continue;
  for (const fn of script.functions) {
    const range = fn.ranges[0]!;
    // The module's top level (offset 0) ran at import, not in these batches.
    if (range.count === 0 || range.startOffset === 0) continue;
    const file = fileOf(range.startOffset);
    total += range.count;
    byFile.set(file, (byFile.get(file) ?? 0) + range.count);
    rows.push({ count: range.count, name: fn.functionName || '(anonymous)', file });
  }
}
console.log(`${entry}: ${(total / perCall).toFixed(1)} function calls of toolrun per tool call (batches 2–${BATCHES + 1} of N = ${N}), ${rows.length} distinct functions`);
for (const [file, count] of [...byFile].sort((a, b) => b[1] - a[1])) console.log(`${(count / perCall).toFixed(1).padStart(7)}  ${file}`);
if (all) for (const row of rows.sort((a, b) => b.count - a.count)) console.log(`${(row.count / perCall).toFixed(2).padStart(7)}  ${row.name}  ${row.file}`);
