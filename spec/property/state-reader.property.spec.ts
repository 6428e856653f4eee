/**
 * Fuzzing the two state readers (contract H9): real paused states — a
 * batch's and an agent run's, unsigned and signed — mutated at random (truncated, nested
 * deeper, given huge strings, keys named `__proto__` / `constructor` / `prototype`, random
 * JSON in place of the body or the envelope, random envelope fields) and resumed through
 * `runTools` and `runAgent`, as text and as an object.
 *
 * Asserted for every input: the first `next()` either starts the run or throws a
 * `ResumeError` — never another type (fails if a reader lets a RangeError or a TypeError
 * escape, as runAgent's did for a deep history). And the parsing work is bounded, without a
 * clock: every text handed to `JSON.parse` while a state is read is within `maxStateChars`
 * and, counted by this file's own scanner, within the nesting, key and value bounds (fails
 * if a text reaches `JSON.parse` before it is bounded). The stalls themselves are measured
 * by `bench/state-limits.ts`, not here.
 *
 * `TOOLRUN_STATE_FUZZ_RUNS` sets the number of inputs per reader (default 100); a failure
 * prints fast-check's seed and path (replay with `TOOLRUN_PROPERTY_SEED` / `TOOLRUN_PROPERTY_PATH`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { inMemoryClaim, ResumeError, runAgent, runTools, type AgentResult, type PausedAgentState, type PausedBatchState, type ToolCall, type ToolEvent } from '../../lib/index.ts';
import { agentModel, agentTools, firstTurn, question } from '../fixtures/approval/agent.ts';

const numRuns = Number(process.env.TOOLRUN_STATE_FUZZ_RUNS ?? 100);
const seed = process.env.TOOLRUN_PROPERTY_SEED !== undefined ? Number(process.env.TOOLRUN_PROPERTY_SEED) : process.env.CI === 'true' ? 20_261_219 : undefined;
const path = process.env.TOOLRUN_PROPERTY_PATH;

const SECRET = 'fuzz secret';
const MAX_CHARS = 16 * 1024 * 1024;
const BOUNDS = { depth: 256, keys: 100_000, values: 1_000_000 };

/** This file's own count of a JSON text's nesting, keys and values (outside strings), to check the reader's bound independently. */
function shape(text: string): { depth: number; keys: number; values: number } {
  let depth = 0;
  let deepest = 0;
  let keys = 0;
  let values = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '[' || c === '{') {
      values++;
      deepest = Math.max(deepest, ++depth);
    } else if (c === ']' || c === '}') depth--;
    else if (c === ':') keys++;
    else if (c === ',') values++;
  }
  return { depth: deepest, keys, values };
}

interface Subject {
  name: string;
  kind: 'toolrun/paused-batch' | 'toolrun/paused-agent';
  state: PausedBatchState | PausedAgentState;
  signed: boolean;
  /** The first next() of a resumed run, then the run closed. */
  resume: (state: unknown) => Promise<unknown>;
}

let dir: string;
const subjects: Subject[] = [];
// One shared huge string (over the limit), so generated cases do not each allocate one.
const HUGE = 'x'.repeat(MAX_CHARS + 10);

async function firstStep(run: AsyncGenerator<unknown, unknown, undefined>): Promise<unknown> {
  try {
    return await run.next();
  } finally {
    await run.return(undefined).catch(() => undefined);
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolrun-state-fuzz-'));
  const log = join(dir, 'executions.log');
  const tools = [...agentTools(log)];
  const calls = firstTurn.content.filter((b) => b.type === 'toolCall').map((b) => ({ id: b.id, name: b.name, arguments: b.arguments }) as ToolCall);
  for (const signed of [false, true]) {
    const secret = signed ? { signingSecret: SECRET } : {};
    const batchRun = runTools(calls, { tools, ...secret });
    let step = await batchRun.next();
    while (step.done !== true) step = await batchRun.next();
    subjects.push({
      name: `batch${signed ? ', signed' : ''}`,
      kind: 'toolrun/paused-batch',
      state: step.value.paused!.state,
      signed,
      resume: (state) => firstStep(runTools(calls, { tools, ...secret, resume: { state: state as PausedBatchState, claim: inMemoryClaim() } }) as AsyncGenerator<ToolEvent, unknown, undefined>),
    });
    const agentRun = runAgent({ model: agentModel, tools, messages: [question], ...secret });
    let agentStep = await agentRun.next();
    while (agentStep.done !== true) agentStep = await agentRun.next();
    const result: AgentResult = agentStep.value;
    subjects.push({
      name: `agent${signed ? ', signed' : ''}`,
      kind: 'toolrun/paused-agent',
      state: result.paused!.state,
      signed,
      resume: (state) => firstStep(runAgent({ model: agentModel, tools, ...secret, resume: { state: state as PausedAgentState, claim: inMemoryClaim() } })),
    });
  }
});

afterAll(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/** A change to a JSON text, at a position given as a fraction of its length. */
type Mutation = (text: string) => string;
const at = (text: string, where: number): number => Math.floor(where * text.length);
const fraction = fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true });
const forbidden = fc.constantFrom('__proto__', 'constructor', 'prototype', '\\u005f_proto__', 'construct\\u006fr', 'toString', 'x');

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  // Truncated anywhere.
  fraction.map((where): Mutation => (text) => text.slice(0, at(text, where))),
  // Nested deeper: an opening run somewhere (unbalanced), or a balanced deep value in place of a value.
  fc.tuple(fraction, fc.integer({ min: 1, max: 400_000 }), fc.constantFrom('[', '{"a":', '[{"b":')).map(
    ([where, n, open]): Mutation => (text) => text.slice(0, at(text, where)) + open.repeat(n) + text.slice(at(text, where)),
  ),
  fc.tuple(fc.integer({ min: 200, max: 300_000 }), fc.constantFrom('"isError":false', '"turn":1', '"released":1', '"role":"user"')).map(
    ([n, anchor]): Mutation => (text) => text.replace(anchor, `${anchor},"deep":${'['.repeat(n)}${']'.repeat(n)}`),
  ),
  // A key a state never has, where a key may stand.
  fc.tuple(fraction, forbidden).map(([where, key]): Mutation => (text) => {
    const brace = text.indexOf('{', at(text, where));
    return brace < 0 ? text : `${text.slice(0, brace + 1)}"${key}":{"polluted":true},${text.slice(brace + 1)}`;
  }),
  // Huge strings: over the limit, or many mid-sized ones.
  fc.constant<Mutation>((text) => text.replace(/"text":"/, `"text":"${HUGE}`)),
  fc.integer({ min: 1, max: 2_000 }).map((n): Mutation => (text) => text.replace('"isError":false', `"isError":false,"many":[${Array.from({ length: n }, () => '"yyyyyyyyyy"').join(',')}]`)),
  // Many keys or many values.
  fc.integer({ min: 50_000, max: 120_000 }).map((n): Mutation => (text) => text.replace('"isError":false', `"isError":false,"keys":{${Array.from({ length: n }, (_, i) => `"k${i}":0`).join(',')}}`)),
  fc.integer({ min: 500_000, max: 1_100_000 }).map((n): Mutation => (text) => text.replace('"isError":false', `"isError":false,"zeros":[${'0,'.repeat(n)}0]`)),
  // Random characters over a random span.
  fc.tuple(fraction, fc.nat({ max: 40 }), fc.string({ maxLength: 40, unit: 'binary' })).map(
    ([where, cut, insert]): Mutation => (text) => text.slice(0, at(text, where)) + insert + text.slice(at(text, where) + cut),
  ),
);

/** An input to a reader: the state mutated in its payload or its envelope, or something else entirely. */
type Input = { subject: number; make: (subject: Subject) => unknown };
const input: fc.Arbitrary<Input> = fc.record({
  subject: fc.nat({ max: 3 }),
  make: fc.oneof(
    // The payload mutated; the envelope as an object or as text.
    fc.tuple(mutation, fc.boolean()).map(([change, asText]) => (s: Subject) => {
      const state = { ...s.state, payload: change(s.state.payload) };
      return asText ? JSON.stringify(state) : state;
    }),
    // The whole text mutated.
    mutation.map((change) => (s: Subject) => change(JSON.stringify(s.state))),
    // Envelope fields replaced by random JSON.
    fc.tuple(fc.constantFrom('version', 'kind', 'payload', 'signature', 'extra'), fc.jsonValue({ maxDepth: 3 })).map(([field, value]) => (s: Subject) => ({ ...s.state, [field]: value })),
    // The body replaced by random JSON (unsigned: accepted up to the schema).
    fc.jsonValue({ maxDepth: 4 }).map((value) => (s: Subject) => ({ ...s.state, payload: JSON.stringify(value) })),
    // Not a state at all.
    fc.jsonValue({ maxDepth: 3 }).map((value) => () => value),
    fc.string({ maxLength: 200 }).map((text) => () => text),
  ),
});

describe('state reader fuzz (H9): always a ResumeError, parsing bounded before JSON.parse', () => {
  it(`H9: ${numRuns} random truncations, nestings, huge strings and key names per reader: a ResumeError or a start, never another throw; every parsed text within the bounds`, { timeout: 900_000 }, async () => {
    const parameters: fc.Parameters<[Input]> = { numRuns: numRuns * subjects.length };
    if (seed !== undefined) parameters.seed = seed;
    if (path !== undefined) parameters.path = path;
    const refused = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(input, async ({ subject, make }) => {
        const s = subjects[subject]!;
        const given = make(s);
        const parse = vi.spyOn(JSON, 'parse');
        let thrown: unknown;
        let parsed: unknown[][] = [];
        try {
          await s.resume(given);
        } catch (error) {
          thrown = error;
        } finally {
          parsed = [...parse.mock.calls];
          parse.mockRestore();
        }
        if (thrown !== undefined) {
          expect(thrown, `${s.name}: ${String(thrown)}`).toBeInstanceOf(ResumeError);
          const code = (thrown as ResumeError).code;
          refused.set(code, (refused.get(code) ?? 0) + 1);
        }
        // The parsing work: the reader parses only texts it bounded first.
        for (const [text] of parsed) {
          expect(typeof text === 'string' && text.length <= MAX_CHARS, `${s.name}: JSON.parse got ${String(text).length} characters`).toBe(true);
          const counted = shape(text as string);
          expect(counted.depth, s.name).toBeLessThanOrEqual(BOUNDS.depth);
          expect(counted.keys, s.name).toBeLessThanOrEqual(BOUNDS.keys);
          expect(counted.values, s.name).toBeLessThanOrEqual(BOUNDS.values + 1);
        }
      }),
      parameters,
    );
    // The generator reaches the refusals it is meant to (a sanity check of the fuzzer itself).
    if (path === undefined && numRuns >= 100) for (const code of ['malformed', 'version']) expect(refused.get(code) ?? 0, JSON.stringify([...refused])).toBeGreaterThan(0);
  });
});
