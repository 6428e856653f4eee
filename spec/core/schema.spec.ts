import * as v from 'valibot';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { parseArguments, validateArguments } from '../../lib/core/schema/schema.ts';

describe('parseArguments (P5, cases C13–C15)', () => {
  it('takes objects as they are and treats absent or empty arguments as {}', () => {
    expect(parseArguments({ a: 1 }, 't')).toEqual({ ok: true, value: { a: 1 } });
    for (const empty of [undefined, null, '', '   ', '{}']) expect(parseArguments(empty, 't')).toEqual({ ok: true, value: {} });
  });

  it('unwraps a JSON string that holds a JSON object, one level only', () => {
    expect(parseArguments(JSON.stringify(JSON.stringify({ id: 'a' })), 't')).toEqual({ ok: true, value: { id: 'a' } });
    const twice = JSON.stringify(JSON.stringify(JSON.stringify({ id: 'a' })));
    expect(parseArguments(twice, 't')).toMatchObject({ ok: false, message: expect.stringMatching(/must be a JSON object, got string/) });
  });

  it('rejects JSON that is not an object, naming what came', () => {
    expect(parseArguments('[1,2]', 't')).toMatchObject({ ok: false, message: expect.stringContaining('got array [1,2]') });
    expect(parseArguments('42', 't')).toMatchObject({ ok: false, message: expect.stringContaining('got number 42') });
    expect(parseArguments('null', 't')).toMatchObject({ ok: false, message: expect.stringContaining('got null') });
  });

  it('reports invalid JSON with the parser’s position', () => {
    const r = parseArguments('{"q": "x",}', 'lookup');
    expect(r.ok).toBe(false);
    expect(!r.ok && r.message).toMatch(/not valid JSON \(.*position 10/);
  });
});

describe('validateArguments: one path for every Standard Schema, the no-eval validator for JSON Schema', () => {
  it('returns the valibot output (defaults applied) or one line per issue', () => {
    const schema = v.object({ city: v.string(), days: v.optional(v.number(), 3) });
    expect(validateArguments(schema, { city: 'Oslo' }, 'w')).toEqual({ ok: true, value: { city: 'Oslo', days: 3 } });
    const bad = validateArguments(schema, { city: 5, days: 'x' }, 'w');
    expect(bad).toMatchObject({ ok: false });
    expect((bad as { message: string }).message.split('\n').slice(0, 3)).toEqual([
      'Invalid arguments for tool "w":',
      '- city: Invalid type: Expected string but received 5',
      '- days: Invalid type: Expected number but received "x"',
    ]);
  });

  it('accepts zod schemas through the same Standard Schema path', () => {
    const schema = z.object({ n: z.number().int() });
    expect(validateArguments(schema, { n: 2 }, 'z')).toEqual({ ok: true, value: { n: 2 } });
    expect((validateArguments(schema, { n: 2.5 }, 'z') as { message: string }).message).toMatch(/^Invalid arguments for tool "z":\n- n: /);
  });

  it('validates draft 2020-12 schemas when $schema says so', () => {
    const schema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { tags: { type: 'array', prefixItems: [{ type: 'string' }], items: false } },
    };
    expect(validateArguments(schema, { tags: ['a'] }, 't')).toMatchObject({ ok: true });
    expect(validateArguments(schema, { tags: ['a', 'b'] }, 't')).toMatchObject({ ok: false });
  });

  it('lists nested paths with dots and caps the number of lines', () => {
    const schema = { type: 'object', properties: { a: { type: 'object', properties: { b: { type: 'array', items: { type: 'number' } } } } } };
    const r = validateArguments(schema, { a: { b: [1, 'x'] } }, 't') as { message: string };
    expect(r.message).toContain('- a.b.1: expected number, got string');
    const many = { type: 'object', additionalProperties: false };
    const args = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`k${i}`, i]));
    const capped = validateArguments(many, args, 't') as { message: string };
    expect(capped.message).toContain('- … and 20 more');
  });

  it('reports a broken tool schema as the tool’s problem, not the model’s', () => {
    const r = validateArguments({ type: 'no-such-type' }, {}, 'broken') as { ok: boolean; message: string };
    expect(r.ok).toBe(false);
    expect(r.message).toMatch(/its input JSON Schema is invalid/);
  });
});
