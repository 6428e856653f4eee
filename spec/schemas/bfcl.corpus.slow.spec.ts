/**
 * The evidence that the BFCL dialect converter (`lib/schemas/bfcl.ts`) is right: every
 * ground-truth call of the four BFCL parallel categories in `../shared/corpus/bfcl/` runs
 * through `runTools` against its entry's functions (converted schemas, validated by toolrun's
 * JSON Schema validator) and passes — except the ground-truth entries that disagree with their
 * own schema, listed below with the reason and asserted exactly. Mutated copies (a required
 * parameter removed, a parameter's type changed) fail with an error that names the parameter.
 * A corpus sweep (about 2 s of CPU): `npm run test:slow` (vitest.config.ts, `*.slow.spec.ts`);
 * the converter's own cases are spec/schemas/bfcl.spec.ts.
 */
import { describe, expect, it } from 'vitest';
import { bfclGroundTruthArguments, convertBfclSchema, defineTool, runTools, type Tool, type ToolCall, type ToolResultMessage } from '../../lib/index.ts';
import { corpusSkipNote, hasCorpus, readCorpusLines } from '../formats/corpus.ts';
import { collect, text } from '../helpers.ts';

/** One BFCL entry: its functions and its ground-truth calls. */
interface Entry {
  id: string;
  file: string;
  functions: Array<{ name: string; description?: string; parameters: unknown }>;
  /** One `{ name: { param: [acceptable values] } }` per expected call. */
  groundTruth: Array<Record<string, Record<string, unknown[]>>>;
}

const CATEGORIES = ['parallel', 'parallel_multiple', 'live_parallel', 'live_parallel_multiple'] as const;

function loadEntries(): Entry[] {
  return CATEGORIES.flatMap((category) => {
    const file = `BFCL_v4_${category}.json`;
    const answers = new Map(readCorpusLines(`bfcl/possible_answer_${file}`).map((a: { id: string; ground_truth: Entry['groundTruth'] }) => [a.id, a.ground_truth]));
    return readCorpusLines(`bfcl/${file}`).map((q: { id: string; function: Entry['functions'] }) => {
      const groundTruth = answers.get(q.id);
      if (groundTruth === undefined) throw new Error(`${file}: entry ${q.id} has no ground truth`);
      return { id: q.id, file, functions: q.function, groundTruth };
    });
  });
}

/** Tools for an entry's functions: converted schema as `input`, a body that just says ok. */
function entryTools(entry: Entry): Tool[] {
  return entry.functions.map((fn) =>
    defineTool({ name: fn.name, ...(fn.description === undefined ? {} : { description: fn.description }), input: convertBfclSchema(fn.parameters), execute: () => 'ok' }),
  );
}

/** The entry's calls, ids `<entry>#<n>`, arguments from `pick` (the ground-truth parameter object → arguments). */
function entryCalls(entry: Entry, pick: (params: Record<string, unknown[]>) => Record<string, unknown>): ToolCall[] {
  return entry.groundTruth.flatMap((expected, n) => Object.entries(expected).map(([name, params]) => ({ id: `${entry.id}#${n}`, name, arguments: pick(params) })));
}

async function run(calls: ToolCall[], tools: Tool[]): Promise<ToolResultMessage[]> {
  const { batch } = await collect(runTools(calls, { tools }));
  expect(batch.messages.map((m) => m.toolCallId)).toEqual(calls.map((c) => c.id));
  return batch.messages;
}

/** The issue lines of a validation error (`- path: reason`). */
function issueLines(message: ToolResultMessage): string[] {
  return text(message).split('\n').filter((line) => line.startsWith('- '));
}

/**
 * Ground-truth calls that fail their own function's schema, as BFCL ships them. Each is a
 * fact about the data, not a converter problem: BFCL's grader compares values with Python
 * semantics (None for "not given", strings it never type-checks), JSON Schema does not.
 */
const KNOWN_QUIRKS: Array<{ call: string; tool: string; issues: string[]; reason: string }> = [
  { call: 'parallel_152#0', tool: 'math.power', issues: ['- mod: expected number, got null'], reason: 'null (Python None, "Default is None") given for the float parameter mod' },
  { call: 'parallel_152#1', tool: 'math.power', issues: ['- mod: expected number, got null'], reason: 'same entry, second call' },
  {
    call: 'parallel_multiple_21#1',
    tool: 'linear_regression_fit',
    issues: ['- x: expected array, got string', '- y: expected array, got string'],
    reason: `the Python expressions "data['sales']" / "data['future_sales']" given for arrays of floats`,
  },
  {
    call: 'parallel_multiple_94#0',
    tool: 'sort_list',
    issues: [0, 1, 2, 3, 4].map((i) => `- elements.${i}: expected integer, got string`),
    reason: 'fruit names given for `elements`, declared an array of integers',
  },
  {
    call: 'live_parallel_15-11-0#1',
    tool: 'cmd_controller.execute',
    issues: ['- unit: must be one of "seconds", "milliseconds"'],
    reason: '"N/A", the schema’s own default, is outside its enum',
  },
  {
    call: 'live_parallel_multiple_2-2-0#1',
    tool: 'ControlAppliance.execute',
    issues: ['- command: must be one of "거실, 에어컨, 실행", ", 에어컨, 냉방 실행", "다용도실, 통돌이, 중지"'],
    reason: 'the enum holds only the description’s three examples; the expected command (bedroom, air purifier, stop) is not one of them',
  },
  { call: 'live_parallel_multiple_8-7-0#0', tool: 'clone_repo', issues: ['- depth: expected integer, got null'], reason: 'null (the schema’s default) given for an integer' },
  {
    call: 'live_parallel_multiple_8-7-0#3',
    tool: 'create_kubernetes_yaml_file',
    issues: ['- deployment_name: expected string, got null'],
    reason: 'null (the schema’s default) given for a string',
  },
  { call: 'live_parallel_multiple_12-10-1#0', tool: 'get_class_info', issues: ['- module_name: expected string, got null'], reason: 'null (the schema’s default) given for a string' },
  {
    call: 'live_parallel_multiple_21-18-0#0',
    tool: 'Services_1_FindProvider',
    issues: ['- is_unisex: expected boolean, got string'],
    reason: 'the schema says boolean but its own enum is the strings "True", "False", "dontcare"; the ground truth gives "dontcare"',
  },
];

/**
 * Ground-truth calls where BFCL accepts "" ("may be omitted") for a parameter that its own
 * function lists in `required`: omitting it, as the ground truth allows, fails the schema.
 */
const OMISSION_QUIRKS: Array<{ call: string; tool: string; issue: string; reason: string }> = [
  { call: 'parallel_88#0', tool: 'calculate_final_speed', issue: '- initial_velocity: required', reason: 'initial_velocity is required, and the ground truth allows [0, ""]' },
  { call: 'parallel_multiple_87#2', tool: 'kinematics.distance', issue: '- initial_velocity: required', reason: 'initial_velocity is required, and the ground truth allows [0.0, ""]' },
  {
    call: 'parallel_multiple_119#2',
    tool: 'league_stats.get_top_scorer',
    issue: '- league_name: required',
    reason: 'league_name is required, and the ground truth allows ["Premier League", "PL", ""]',
  },
];

/** A value whose JSON type the schema's `type` does not allow, or undefined when every candidate is allowed. */
function wrongValueFor(type: unknown): unknown {
  const types = Array.isArray(type) ? type : [type];
  const allows = (t: string) => types.includes(t) || (t === 'integer' && types.includes('number'));
  const candidates: Array<[string, unknown]> = [
    ['boolean', true],
    ['string', 'mutated'],
    ['integer', 12345],
    ['array', ['mutated']],
    ['object', { mutated: true }],
  ];
  return candidates.find(([t]) => !allows(t))?.[1];
}

describe.skipIf(!hasCorpus)(`BFCL ground truth against its converted schemas, through runTools${corpusSkipNote}`, () => {
  const entries = hasCorpus ? loadEntries() : [];
  const functionOf = (entry: Entry, name: string) => entry.functions.find((fn) => fn.name === name);

  it('reads the four parallel categories: 440 entries, 1241 ground-truth calls, each naming a function of its entry', () => {
    expect(entries).toHaveLength(440);
    const calls = entries.flatMap((entry) => entryCalls(entry, bfclGroundTruthArguments).map((call) => ({ entry, call })));
    expect(calls).toHaveLength(1241);
    expect(calls.filter(({ entry, call }) => functionOf(entry, call.name) === undefined)).toEqual([]);
  });

  it('every ground-truth call (first acceptable value of each parameter) validates, except the 10 listed data quirks', async () => {
    const failures: Array<{ call: string; tool: string; issues: string[] }> = [];
    let passed = 0;
    for (const entry of entries) {
      const calls = entryCalls(entry, bfclGroundTruthArguments);
      const messages = await run(calls, entryTools(entry));
      messages.forEach((message, i) => {
        if (!message.isError) return void passed++;
        expect(text(message), message.toolCallId).toMatch(/^Invalid arguments for tool /);
        failures.push({ call: message.toolCallId, tool: calls[i]!.name, issues: issueLines(message) });
      });
    }
    expect(failures).toEqual(KNOWN_QUIRKS.map(({ call, tool, issues }) => ({ call, tool, issues })));
    expect(passed).toBe(1241 - KNOWN_QUIRKS.length);
  });

  it('"" means "may be omitted": leaving out every such parameter validates, except the type quirks outside optional parameters and 3 listed omission quirks', async () => {
    const omitOptional = (params: Record<string, unknown[]>) =>
      bfclGroundTruthArguments(Object.fromEntries(Object.entries(params).filter(([, acceptable]) => !acceptable.includes(''))));
    const failures: string[] = [];
    const omissionQuirks = new Map(OMISSION_QUIRKS.map((q) => [q.call, q]));
    for (const entry of entries) {
      const messages = await run(entryCalls(entry, omitOptional), entryTools(entry));
      for (const message of messages) {
        if (!message.isError) continue;
        failures.push(message.toolCallId);
        const quirk = omissionQuirks.get(message.toolCallId);
        if (quirk !== undefined) expect(issueLines(message), message.toolCallId).toEqual([quirk.issue]);
      }
    }
    // The null / "N/A" / "dontcare" quirks were all in optional parameters; these three are not.
    const typeQuirks = ['parallel_multiple_21#1', 'parallel_multiple_94#0', 'live_parallel_multiple_2-2-0#1'];
    expect(failures.filter((id) => typeQuirks.includes(id))).toEqual(typeQuirks);
    // And BFCL lists "" (may be omitted) for three parameters its schema requires:
    expect(failures.filter((id) => !typeQuirks.includes(id)).map((id) => omissionQuirks.get(id))).toEqual([...omissionQuirks.values()]);
  });

  it('a mutated copy with a required parameter removed fails, naming the parameter', async () => {
    let mutated = 0;
    const withoutRequired: string[] = [];
    for (const entry of entries) {
      const calls: ToolCall[] = [];
      const removed: string[] = [];
      for (const call of entryCalls(entry, bfclGroundTruthArguments)) {
        const args = call.arguments as Record<string, unknown>;
        const required = (convertBfclSchema(functionOf(entry, call.name)?.parameters).required ?? []) as string[];
        const victim = required.find((name) => name in args);
        if (victim === undefined) {
          withoutRequired.push(`${call.id} ${call.name}`);
          continue;
        }
        const { [victim]: _gone, ...rest } = args;
        calls.push({ ...call, arguments: rest });
        removed.push(victim);
      }
      const messages = await run(calls, entryTools(entry));
      messages.forEach((message, i) => {
        expect(message.isError, message.toolCallId).toBe(true);
        expect(issueLines(message), message.toolCallId).toContain(`- ${removed[i]}: required`);
        mutated++;
      });
    }
    // A call whose function requires nothing cannot lose a required parameter: one in BFCL.
    expect(withoutRequired).toEqual(['live_parallel_multiple_15-13-0#1 getCurrentTime']);
    expect(mutated).toBe(1240);
  });

  it('a mutated copy with a parameter of the wrong type fails, naming the parameter', async () => {
    let mutated = 0;
    let untyped = 0;
    for (const entry of entries) {
      const calls: ToolCall[] = [];
      const changed: string[] = [];
      for (const call of entryCalls(entry, bfclGroundTruthArguments)) {
        const args = call.arguments as Record<string, unknown>;
        const properties = (convertBfclSchema(functionOf(entry, call.name)?.parameters).properties ?? {}) as Record<string, { type?: unknown }>;
        const victim = Object.keys(args).find((name) => properties[name]?.type !== undefined && wrongValueFor(properties[name]?.type) !== undefined);
        if (victim === undefined) {
          untyped++;
          continue;
        }
        calls.push({ ...call, arguments: { ...args, [victim]: wrongValueFor(properties[victim]?.type) } });
        changed.push(victim);
      }
      const messages = await run(calls, entryTools(entry));
      messages.forEach((message, i) => {
        expect(message.isError, message.toolCallId).toBe(true);
        expect(issueLines(message).some((line) => line.startsWith(`- ${changed[i]}: expected `)), `${message.toolCallId}: ${text(message)}`).toBe(true);
        mutated++;
      });
    }
    // Calls with no arguments, or only arguments of BFCL type "any", have nothing to mistype.
    expect({ mutated, untyped }).toEqual({ mutated: 1241 - untyped, untyped: 0 });
  });
});
