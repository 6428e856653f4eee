/**
 * A tool's `input` can be any Standard Schema (valibot, zod 4, arktype) or a plain JSON
 * Schema object (draft-07 or 2020-12, validated without eval by @cfworker/json-schema). Each kind goes through `runTools`:
 * valid arguments reach `execute` as the schema's output, invalid ones become an error
 * result with one `path: reason` line per issue (contract P5, case C19).
 */
import { type } from 'arktype';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, runTools, toolJsonSchema, type Tool, type ToolCall } from '../../lib/index.ts';
import { collect, text } from '../helpers.ts';

/** Runs three calls of `name`: valid, wrong in several places, empty. Returns [isError, text] per call. */
async function threeCalls(tool: Tool): Promise<[ok: [boolean, string], bad: [boolean, string], empty: [boolean, string]]> {
  const calls: ToolCall[] = [
    { id: 'ok', name: tool.name, arguments: { city: 'Rome' } },
    { id: 'bad', name: tool.name, arguments: JSON.stringify({ city: 5, days: 9.5, opts: { units: 'k' } }) },
    { id: 'empty', name: tool.name, arguments: '' },
  ];
  const { batch } = await collect(runTools(calls, { tools: [tool] }));
  const [ok, bad, empty] = batch.messages.map((m): [boolean, string] => [m.isError, text(m)]);
  return [ok!, bad!, empty!];
}

function issues(message: string): string[] {
  return message.split('\n').filter((line) => line.startsWith('- '));
}

describe('Standard Schema inputs through runTools', () => {
  it('valibot: output with defaults applied; issues with dotted paths in valibot’s words', async () => {
    const tool = defineTool({
      name: 'forecast',
      input: v.object({
        city: v.string(),
        days: v.optional(v.pipe(v.number(), v.integer(), v.maxValue(7)), 3),
        opts: v.optional(v.object({ units: v.picklist(['c', 'f']) })),
      }),
      execute: ({ city, days }) => `${city.toUpperCase()} for ${days.toFixed(0)} days`,
    });
    const [ok, bad, empty] = await threeCalls(tool);
    expect(ok).toEqual([false, 'ROME for 3 days']);
    expect(bad[0]).toBe(true);
    expect(issues(bad[1])).toEqual([
      '- city: Invalid type: Expected string but received 5',
      '- days: Invalid integer: Received 9.5',
      '- days: Invalid value: Expected <=7 but received 9.5',
      '- opts.units: Invalid type: Expected ("c" | "f") but received "k"',
    ]);
    expect(bad[1]).toMatch(/\nReceived arguments: \{"city":5,"days":9\.5,"opts":\{"units":"k"\}\}\nFix these and call the tool again\.$/);
    expect(empty).toEqual([true, expect.stringContaining('- city: Invalid key: Expected "city" but received undefined')]);
  });

  it('zod 4: the same path, zod’s words', async () => {
    const tool = defineTool({
      name: 'forecast',
      input: z.object({ city: z.string(), days: z.number().int().max(7).default(3), opts: z.object({ units: z.enum(['c', 'f']) }).optional() }),
      execute: ({ city, days }) => `${city.toUpperCase()} for ${days.toFixed(0)} days`,
    });
    const [ok, bad, empty] = await threeCalls(tool);
    expect(ok).toEqual([false, 'ROME for 3 days']);
    expect(issues(bad[1])).toEqual([
      '- city: Invalid input: expected string, received number',
      '- days: Invalid input: expected int, received number',
      '- opts.units: Invalid option: expected one of "c"|"f"',
    ]);
    expect(issues(empty[1])).toEqual(['- city: Invalid input: expected string, received undefined']);
  });

  it('arktype (a callable schema): the same path, arktype’s words, one line per issue', async () => {
    const tool = defineTool({
      name: 'forecast',
      input: type({ city: 'string', 'days?': '0 <= number.integer <= 7', 'opts?': { units: "'c' | 'f'" } }),
      execute: ({ city, days }) => `${city.toUpperCase()} for ${(days ?? 3).toFixed(0)} days`,
    });
    const [ok, bad, empty] = await threeCalls(tool);
    expect(ok).toEqual([false, 'ROME for 3 days']);
    expect(issues(bad[1])).toEqual([
      '- city: city must be a string (was a number)',
      '- days: days (9.5) must be... ◦ an integer ◦ at most 7',
      '- opts.units: opts.units must be "c" or "f" (was "k")',
    ]);
    expect(issues(empty[1])).toEqual(['- city: city must be a string (was missing)']);
  });
});

// Every fast spec of arktype is in this file: importing arktype costs about 0.6 s of CPU in
// each worker of `npm test` that loads it. These were in spec/formats/tool-definitions.spec.ts
// and spec/core/define-tool-input.spec.ts, next to the valibot and zod cases.
describe('arktype as a tool definition (toolJsonSchema, defineTool)', () => {
  it('toolJsonSchema: via ~standard.jsonSchema, the input side, no $schema', () => {
    const ark = toolJsonSchema({ name: 'a', input: type({ city: 'string', 'days?': 'number' }) });
    expect(ark).toEqual({ type: 'object', properties: { city: { type: 'string' }, days: { type: 'number' } }, required: ['city'] });
    expect(ark).not.toHaveProperty('$schema');
  });

  it("a Date: arktype's own converter does not throw, it writes {} (any value)", () => {
    // Its validation still checks the Date; only the model's view is looser.
    expect(toolJsonSchema({ name: 'when', input: type({ at: 'Date' }) })).toEqual({ type: 'object', properties: { at: {} }, required: ['at'] });
  });

  it('defineTool accepts an arktype schema (it converts to JSON Schema)', () => {
    expect(defineTool({ name: 'k', input: type({ a: 'string' }), execute: () => 'ok' }).name).toBe('k');
  });
});

describe('JSON Schema inputs through runTools (no-eval interpreter), both drafts, in plain words (P5)', () => {
  const bad = { point: [1, 'two', 3], a: 'x', n: 11, unit: 'k', extra: 1 };

  it('draft-07 ($schema draft-07): tuple items, dependencies, additionalProperties', async () => {
    const tool = defineTool({
      name: 'plot',
      input: {
        $schema: 'http://json-schema.org/draft-07/schema#',
        type: 'object',
        properties: {
          point: { type: 'array', items: [{ type: 'number' }, { type: 'number' }], additionalItems: false },
          a: { type: 'string' },
          b: { type: 'string' },
          n: { type: 'integer', minimum: 1, maximum: 10 },
        },
        dependencies: { a: ['b'] },
        required: ['point'],
        additionalProperties: false,
      },
      execute: (input) => input,
    });
    const { batch } = await collect(
      runTools(
        [
          { id: '1', name: 'plot', arguments: { point: [1, 2], a: 'x', b: 'y' } },
          { id: '2', name: 'plot', arguments: bad },
          { id: '3', name: 'plot', arguments: {} },
        ],
        { tools: [tool] },
      ),
    );
    const [ok, wrong, empty] = batch.messages;
    expect(ok).toMatchObject({ isError: false, content: [{ type: 'text', text: '{"point":[1,2],"a":"x","b":"y"}' }] });
    expect(issues(text(wrong!))).toEqual([
      '- b: required when a is present',
      '- point.1: expected number, got string',
      '- point.2: not allowed',
      '- n: must be ≤ 10',
      '- unit: not allowed',
      '- extra: not allowed',
    ]);
    expect(issues(text(empty!))).toEqual(['- point: required']);
  });

  it('draft 2020-12 ($schema 2020-12): prefixItems, $defs/$ref, dependentRequired, unevaluatedProperties', async () => {
    const tool = defineTool({
      name: 'plot',
      input: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        $defs: { unit: { enum: ['c', 'f'] } },
        properties: {
          point: { type: 'array', prefixItems: [{ type: 'number' }, { type: 'number' }], items: false },
          a: { type: 'string' },
          b: { type: 'string' },
          unit: { $ref: '#/$defs/unit' },
        },
        dependentRequired: { a: ['b'] },
        required: ['point'],
        unevaluatedProperties: false,
      },
      execute: (input) => input,
    });
    const { batch } = await collect(
      runTools(
        [
          { id: '1', name: 'plot', arguments: '{"point":[1,2],"unit":"c"}' },
          { id: '2', name: 'plot', arguments: bad },
        ],
        { tools: [tool] },
      ),
    );
    expect(batch.messages[0]?.isError).toBe(false);
    expect(issues(text(batch.messages[1]!))).toEqual([
      '- b: required when a is present',
      '- point.1: expected number, got string',
      '- point.2: not allowed',
      '- unit: must be one of "c", "f"',
      '- n: not allowed',
      '- extra: not allowed',
    ]);
  });

  it('a schema without $schema is read as draft-07 (array-form items is a tuple)', async () => {
    const tool = defineTool({
      name: 'pair',
      input: { type: 'object', properties: { p: { type: 'array', items: [{ type: 'string' }, { type: 'integer' }] } } },
      execute: () => 'ok',
    });
    const { batch } = await collect(runTools([{ id: '1', name: 'pair', arguments: { p: ['a', 'b'] } }], { tools: [tool] }));
    expect(issues(text(batch.messages[0]!))).toEqual(['- p.1: expected integer, got string']);
  });
});
