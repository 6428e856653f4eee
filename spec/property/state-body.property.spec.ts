/**
 * The hand-written check of a paused batch's body (`quickBody`, lib/core/approval/state-schema.ts)
 * against the valibot schema it stands in for (`Body`), on valid and mutated bodies (issue
 * 23, item 1; contract H9). A resume takes `quickBody`'s output when it gives one and asks
 * valibot otherwise, so what a resume accepts, and what it reads, stays valibot's only if:
 *
 * - sound: whenever `quickBody` gives a body, it is the body it was given (no copy), and
 *   `v.safeParse(Body, …)` succeeds with the same output as a value (canonical JSON: valibot
 *   rebuilds each object in its schema's key order, `quickBody` keeps the text's). Fails if a
 *   check is dropped from `quickBody` (a strict object's key count, a type, a bound, the
 *   union of resources) or it hands on anything but what it checked.
 * - complete where it counts: whenever valibot accepts a body and outputs the same value (no
 *   key it skips), `quickBody` gives it too — otherwise the fast path would silently stop
 *   being taken. Fails if `quickBody` refuses a field `Body` allows.
 *
 * The bodies: a real paused state (a batch of a tool that needs approval, with calls that
 * ended before the pause), extended by hand so that every content block, every optional field
 * (`details`, `meta`, `reason`, `incomplete`, `standing`, `traceContext`) occurs; then 1–3
 * random mutations each: a value replaced (random JSON, or a value one of the schema's checks
 * sits on the edge of), a key deleted, a key added (field names of the schema among them, and
 * the three that valibot's records skip, added as own keys the way `JSON.parse` adds them).
 *
 * A second spec makes every single change of the rich bodies (each value replaced by each
 * edge value, each key deleted, each key added), so that a check reached by one field only
 * (a `tracestate`'s bound) is exercised without luck.
 *
 * `TOOLRUN_STATE_BODY_RUNS` sets the number of cases (default 5,000); a failure prints
 * fast-check's seed and path (replay with `TOOLRUN_PROPERTY_SEED` / `TOOLRUN_PROPERTY_PATH`).
 */
import fc from 'fast-check';
import * as v from 'valibot';
import { beforeAll, describe, expect, it } from 'vitest';
import { defineTool, runTools, type ToolCall } from '../../lib/index.ts';
import { Body, quickBody } from '../../lib/core/approval/state-schema.ts';
import { canonicalJson } from '../../lib/core/approval/state-json.ts';

const numRuns = Number(process.env.TOOLRUN_STATE_BODY_RUNS ?? 5_000);
const seed = process.env.TOOLRUN_PROPERTY_SEED !== undefined ? Number(process.env.TOOLRUN_PROPERTY_SEED) : process.env.CI === 'true' ? 20_261_202 : undefined;
const path = process.env.TOOLRUN_PROPERTY_PATH;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Content blocks of every kind `Content` allows, optional fields with and without. */
const BLOCKS: Json[] = [
  { type: 'text', text: 'done' },
  { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
  { type: 'audio', data: 'UklGRg==', mimeType: 'audio/wav' },
  { type: 'resource_link', uri: 'file:///a.txt', name: 'a.txt' },
  { type: 'resource_link', uri: 'file:///b.txt', name: 'b.txt', title: 'B', description: 'the b file', mimeType: 'text/plain', size: 12 },
  { type: 'resource', resource: { uri: 'file:///c.txt', text: 'c' } },
  { type: 'resource', resource: { uri: 'file:///d.bin', mimeType: 'application/octet-stream', blob: 'AAEC' } },
];

/** Values on either side of the schema's checks, and plain JSON of every type. */
const EDGES: Json[] = [
  null, true, false, 0, -1, 1, 1.5, -0.5, 2 ** 53, 2 ** 53 - 1, 1e300, '', 'x', 'x'.repeat(1_000), 'x'.repeat(1_001), 'x'.repeat(512), 'x'.repeat(513), '\u0007',
  'tool', 'hook', 'user', 'text', 'image', 'resource', [], {}, [1], { a: 1 },
  '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', '01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
  'a'.repeat(64), 'A'.repeat(64), 'a'.repeat(63), '5d0c6e7a-1b2c-4d3e-8f90-a1b2c3d4e5f6', '5D0C6E7A-1B2C-4D3E-8F90-A1B2C3D4E5F6', '5d0c6e7a1b2c4d3e8f90a1b2c3d4e5f6',
  ...BLOCKS,
  { uri: 'file:///e.txt', text: 'e', blob: 'AA==' },
  { approved: true }, { approved: false, reason: 'no' }, { approved: 'yes' },
];

/** Keys a mutation adds: the schema's own field names, others, and the three valibot's records skip. */
const KEYS = ['id', 'type', 'text', 'blob', 'uri', 'mimeType', 'reason', 'details', 'meta', 'input', 'arguments', 'incomplete', 'result', 'request', 'standing', 'tracestate', 'size', 'x', 'constructor', 'prototype', '__proto__'];

let bases: Json[] = [];

beforeAll(async () => {
  // A real paused state: two calls end before the pause (their results stored), two wait for approval.
  const work = defineTool({
    name: 'work',
    input: v.object({ i: v.number() }),
    needsApproval: (input) => input.i >= 2,
    execute: async function* ({ i }) {
      return { content: [{ type: 'text' as const, text: `ok ${i}` }], details: { i } };
    },
  });
  const calls: ToolCall[] = [0, 1, 2, 3].map((i) => ({ id: `call_${i}`, name: 'work', arguments: { i } }));
  const run = runTools(calls, { tools: [work] });
  let step = await run.next();
  while (step.done !== true) step = await run.next();
  const real = JSON.parse(step.value.paused!.state.payload) as { [key: string]: Json };
  // The same body with every optional field and every content block.
  const rich = structuredClone(real) as { calls: { [key: string]: { [key: string]: Json } }[]; [key: string]: Json };
  rich.calls[0]!.result!.content = BLOCKS;
  rich.calls[0]!.result!.meta = { source: 'hook', n: 1 };
  rich.calls[1]!.result!.details = null;
  rich.calls[2]!.request!.reason = 'asks first';
  rich.calls[2]!.request!.source = 'hook';
  rich.calls[3]!.call!.incomplete = 'cut off';
  rich.standing = { work: { approved: true }, other: { approved: false, reason: 'no' } };
  rich.traceContext = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', tracestate: 'vendor=1' };
  // And one in the order pause.ts writes a request with a reason (after source): valibot reorders it, quickBody keeps it.
  const reordered = structuredClone(rich) as typeof rich;
  const { reason, source, ...rest } = reordered.calls[2]!.request!;
  reordered.calls[2]!.request = { ...rest, source: source!, reason: reason! };
  bases = [real, rich as unknown as Json, reordered as unknown as Json];
});

/** Every place in `value` a mutation can reach: the path of each object and array, and of each leaf. */
function places(value: Json, at: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  out.push(at);
  if (Array.isArray(value)) value.forEach((item, i) => places(item, [...at, i], out));
  else if (value !== null && typeof value === 'object') for (const key of Object.keys(value)) places(value[key]!, [...at, key], out);
  return out;
}

type Mutation = { kind: 'replace'; where: number; value: Json } | { kind: 'delete'; where: number } | { kind: 'add'; where: number; key: string; value: Json };

const value: fc.Arbitrary<Json> = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...EDGES) }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json> });
// An index into the places, taken modulo their count (fc.double clusters near 0 and 1).
const where = fc.nat({ max: 2 ** 31 - 1 });
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('replace' as const), where, value }),
  fc.record({ kind: fc.constant('delete' as const), where }),
  fc.record({ kind: fc.constant('add' as const), where, key: fc.constantFrom(...KEYS), value }),
);

const isObject = (value: Json | undefined): value is { [key: string]: Json } => value !== null && typeof value === 'object' && !Array.isArray(value);
const valueAt = (body: Json, at: (string | number)[]): Json | undefined => at.reduce<Json | undefined>((value, step) => (value as Record<string | number, Json> | undefined)?.[step], body);

/** `body` with `change` applied at the place `change.where` picks. */
function mutate(body: Json, change: Mutation): Json {
  // A key is added to an object (any place would mostly hit a leaf, and add nothing).
  const all = change.kind === 'add' ? places(body).filter((at) => isObject(valueAt(body, at))) : places(body);
  const at = all[change.where % all.length];
  if (at === undefined) return body;
  if (at.length === 0) return change.kind === 'replace' ? change.value : body;
  let parent = body as { [key: string]: Json } | Json[];
  for (const step of at.slice(0, -1)) parent = (parent as Record<string | number, Json>)[step] as typeof parent;
  const last = at[at.length - 1]!;
  const target = (parent as Record<string | number, Json>)[last];
  if (change.kind === 'replace') (parent as Record<string | number, Json>)[last] = structuredClone(change.value);
  else if (change.kind === 'delete') {
    if (Array.isArray(parent)) parent.splice(last as number, 1);
    else delete parent[last as string];
  } else if (isObject(target)) {
    // An own data property, as JSON.parse makes one (for `__proto__` too).
    Object.defineProperty(target, change.key, { value: structuredClone(change.value), enumerable: true, configurable: true, writable: true });
  }
  return body;
}

/** What each check made of the bodies compared. */
interface Counts {
  quick: number;
  valibot: number;
  refused: number;
}

/** Both checks on `body`: the two properties of this file's header. */
function compare(body: Json, counts: Counts): void {
  const text = JSON.stringify(body);
  const quick = quickBody(body);
  const parsed = v.safeParse(Body, body);
  if (quick !== undefined) {
    counts.quick++;
    expect(parsed.success, `quickBody accepted what valibot refuses (${parsed.issues?.[0]?.message}): ${text}`).toBe(true);
    expect(quick).toBe(body);
    expect(canonicalJson(quick)).toBe(canonicalJson(parsed.output));
  } else if (parsed.success) {
    counts.valibot++;
    // valibot accepted it: only a body it changed (skipped keys, a record given as an array) may miss the fast path.
    expect(canonicalJson(parsed.output), `quickBody refused what valibot passes unchanged: ${text}`).not.toBe(canonicalJson(body));
  } else counts.refused++;
  // Neither check changed the body it was given.
  expect(JSON.stringify(body)).toBe(text);
}

describe('the hand-written state body check (H9): quickBody is valibot\'s Body, faster', () => {
  it(`H9: on ${numRuns} valid and mutated bodies, quickBody gives a body (the one it was given) only when valibot's Body accepts it with the same output, and every body valibot passes through unchanged`, { timeout: 300_000 }, () => {
    for (const base of bases) {
      // The unmutated bodies take the fast path (fails if quickBody refuses a real state).
      expect(quickBody(structuredClone(base)), JSON.stringify(base).slice(0, 200)).toBeDefined();
    }
    const counts: Counts = { quick: 0, valibot: 0, refused: 0 };
    const parameters: fc.Parameters<[number, Mutation[]]> = { numRuns };
    if (seed !== undefined) parameters.seed = seed;
    if (path !== undefined) parameters.path = path;
    fc.assert(
      fc.property(fc.nat({ max: 2 }), fc.array(mutation, { minLength: 1, maxLength: 3 }), (which, changes) => {
        let body = structuredClone(bases[which] as Json);
        for (const change of changes) body = mutate(body, change);
        compare(body, counts);
      }),
      parameters,
    );
    // The generator reaches both sides (a sanity check of the mutations themselves).
    if (numRuns >= 1_000) {
      expect(counts.quick, JSON.stringify(counts)).toBeGreaterThan(numRuns / 20);
      expect(counts.refused, JSON.stringify(counts)).toBeGreaterThan(numRuns / 5);
    }
  });

  it('H9: every single change of the rich body — each value replaced by each edge value, each key deleted, each key added to each object — gives the same answer from quickBody and valibot', () => {
    const counts: Counts = { quick: 0, valibot: 0, refused: 0 };
    for (const base of bases.slice(1)) {
      const all = places(base);
      for (let where = 0; where < all.length; where++) {
        for (const value of EDGES) compare(mutate(structuredClone(base), { kind: 'replace', where, value }), counts);
        compare(mutate(structuredClone(base), { kind: 'delete', where }), counts);
      }
      const objects = all.filter((at) => isObject(valueAt(base, at))).length;
      for (let where = 0; where < objects; where++) for (const key of KEYS) compare(mutate(structuredClone(base), { kind: 'add', where, key, value: 'x' }), counts);
    }
    expect(counts.quick, JSON.stringify(counts)).toBeGreaterThan(100);
  });
});
