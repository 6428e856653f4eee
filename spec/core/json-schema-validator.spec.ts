/**
 * The no-eval JSON Schema validator (`lib/core/schema/json-schema-validator.ts`): its structural
 * check of the schema, the private copy, and the P5 issue lines for each keyword family.
 */
import { describe, expect, it } from 'vitest';
import { compileJsonSchema, JsonSchemaStructureError } from '../../lib/core/schema/json-schema-validator.ts';

const issues = (schema: Record<string, unknown>, value: unknown): string[] => compileJsonSchema(schema).issues(value);

describe('compileJsonSchema: the schema’s own structure (P5: the tool’s problem, not the model’s)', () => {
  it.each([
    [{ type: 'no-such-type' }, 'type must be one of array, boolean, integer, null, number, object, string'],
    [{ properties: { when: { type: 'date' } } }, 'properties.when.type must be one of'],
    [{ properties: [] }, 'properties must be an object of schemas'],
    [{ required: 'a' }, 'required must be a list of strings'],
    [{ anyOf: [] }, 'anyOf must be a non-empty list of schemas'],
    [{ properties: { a: 'string' } }, 'properties.a must be a schema'],
    [{ properties: { a: { pattern: '(' } } }, 'properties.a.pattern is not a valid regular expression'],
    [{ patternProperties: { '[': {} } }, 'patternProperties is not a valid regular expression'],
    [{ maxLength: -1 }, 'maxLength must be a non-negative integer'],
    [{ multipleOf: 0 }, 'multipleOf must be a positive number'],
  ])('%j is refused: %s', (schema, reason) => {
    expect(() => compileJsonSchema(schema)).toThrow(JsonSchemaStructureError);
    expect(() => compileJsonSchema(schema)).toThrow(reason);
  });

  it('reports a $ref that points nowhere as a schema problem', () => {
    const compiled = compileJsonSchema({ properties: { a: { $ref: '#/$defs/missing' } } });
    expect(() => compiled.issues({ a: 1 })).toThrow(/Unresolved \$ref "#\/\$defs\/missing"/);
  });

  it('reports a cyclic schema object and a $ref loop as schema problems, not as a crash', () => {
    const cyclic: Record<string, unknown> = { type: 'object' };
    cyclic.properties = { self: cyclic };
    expect(() => compileJsonSchema(cyclic)).toThrow(JsonSchemaStructureError);
    const loop = compileJsonSchema({ $schema: 'https://json-schema.org/draft/2020-12/schema', $ref: '#' });
    expect(() => loop.issues({})).toThrow(JsonSchemaStructureError);
  });

  it('leaves the tool’s schema untouched (a frozen schema works) and caches per schema object', () => {
    const schema = Object.freeze({ type: 'object', properties: Object.freeze({ a: Object.freeze({ $ref: '#/$defs/n' }) }), $defs: Object.freeze({ n: Object.freeze({ type: 'number' }) }) });
    const before = JSON.stringify(schema);
    expect(issues(schema, { a: 'x' })).toEqual(['a: expected number, got string']);
    expect(JSON.stringify(schema)).toBe(before);
    expect(Object.getOwnPropertyNames(schema.properties.a)).toEqual(['$ref']);
    expect(compileJsonSchema(schema)).toBe(compileJsonSchema(schema));
  });

  it('checks no `format` (tool schemas use it loosely), even for a property named "format"', () => {
    const schema = { type: 'object', properties: { when: { type: 'string', format: 'date' }, format: { type: 'string' } }, required: ['format'] };
    expect(issues(schema, { when: 'next tuesday', format: 'png' })).toEqual([]);
    expect(issues(schema, { when: 'x' })).toEqual(['format: required']);
  });

  it('tells a caller-made object with undefined in it apart from a schema problem', () => {
    expect(issues({ type: 'object', properties: { a: {} } }, { a: undefined })).toEqual([expect.stringMatching(/^arguments: .*Send plain JSON values only\.$/)]);
  });
});

describe('issue lines: one per issue, dotted path, plain words (P5)', () => {
  it('names types, limits, lengths, enum and const', () => {
    const schema = {
      type: 'object',
      properties: {
        n: { type: 'integer', minimum: 1 },
        x: { type: 'number', exclusiveMaximum: 5, multipleOf: 2 },
        s: { type: 'string', minLength: 3, pattern: '^[a-z]+$' },
        list: { type: 'array', maxItems: 1, uniqueItems: true },
        pick: { enum: ['a', 'b'] },
        fixed: { const: 7 },
        either: { type: ['string', 'null'] },
      },
    };
    expect(issues(schema, { n: 0.5, x: 5, s: 'A', list: [1, 1], pick: 'c', fixed: 8, either: 3 })).toEqual([
      'n: expected integer, got number',
      'n: must be ≥ 1',
      'x: must be < 5',
      'x: must be a multiple of 2',
      's: must have at least 3 characters, got 1',
      's: must match the pattern of its schema',
      'list: must have at most 1 items, got 2',
      'list: items must be unique (duplicates at indexes 0 and 1)',
      'pick: must be one of "a", "b"',
      'fixed: must be 7',
      'either: expected string or null, got integer',
    ]);
  });

  it('reads draft-04 boolean exclusiveMinimum when $schema names draft-04', () => {
    const schema = { $schema: 'http://json-schema.org/draft-04/schema#', properties: { n: { minimum: 1, exclusiveMinimum: true } } };
    expect(issues(schema, { n: 1 })).toEqual(['n: must be > 1']);
  });

  it('decodes path segments with "/", "~", "#" and spaces', () => {
    const schema = { properties: { 'a/b': { properties: { 'c~d #e': { type: 'string' } } } } };
    expect(issues(schema, { 'a/b': { 'c~d #e': 1 } })).toEqual(['a/b.c~d #e: expected string, got integer']);
  });

  it('keeps the reasons inside anyOf, oneOf and not, with one line for the alternative itself', () => {
    const schema = { properties: { v: { anyOf: [{ type: 'string' }, { type: 'number' }] }, w: { oneOf: [{ minimum: 0 }, { maximum: 10 }] }, z: { not: { type: 'null' } } } };
    expect(issues(schema, { v: true, w: 5, z: null })).toEqual([
      'v: must match at least one of the allowed shapes (anyOf)',
      'v: expected string, got boolean',
      'v: expected number, got boolean',
      'w: must match exactly one of the allowed shapes (oneOf)',
      'z: must not match the schema under "not"',
    ]);
  });

  it('min/maxProperties say the bound', () => {
    expect(issues({ maxProperties: 1 }, { a: 1, b: 2 })).toEqual(['arguments: must have at most 1 properties']);
    expect(issues({ minProperties: 2 }, {})).toEqual(['arguments: must have at least 2 properties']);
  });
});

describe('patterns run in linear time (a schema pattern from an MCP server cannot freeze the event loop)', () => {
  const catastrophic = { type: 'object', properties: { id: { type: 'string', pattern: '^([a-z]+)+$' } } } as const;

  it('answers a catastrophic pattern against a long non-matching string at once (a backtracking engine would run for ages)', () => {
    // 60 letters and a "!": a backtracking engine takes about 2^60 steps; this returns.
    const issues = compileJsonSchema(catastrophic).issues({ id: `${'a'.repeat(60)}!` });
    expect(issues).toEqual(['id: must match the pattern of its schema']);
    expect(compileJsonSchema(catastrophic).issues({ id: 'abc' })).toEqual([]);
  });

  it('keeps the meaning of ordinary patterns: anchors, classes, Unicode properties, quantifiers', () => {
    const cases: [string, string, boolean][] = [
      ['^\\d{3}-\\d{4}$', '555-1234', true],
      ['^\\d{3}-\\d{4}$', '555-12345', false],
      ['b+', 'aabbb', true], // unanchored: a search, like RegExp#test
      ['^\\p{L}+$', 'héllo', true],
      ['^\\p{L}+$', 'h3llo', false],
      ['^[A-Z][a-z]*(?: [A-Z][a-z]*)*$', 'New York', true],
      ['^[A-Z][a-z]*(?: [A-Z][a-z]*)*$', 'new york', false],
    ];
    for (const [pattern, text, valid] of cases) {
      const issues = compileJsonSchema({ type: 'string', pattern }).issues(text);
      expect(issues.length === 0, `${pattern} on ${text}`).toBe(valid);
    }
  });

  it('evaluates patternProperties keys in linear time too', () => {
    const schema = { type: 'object', patternProperties: { '^(x+)+$': { type: 'number' } } };
    expect(compileJsonSchema(schema).issues({ [`${'x'.repeat(60)}y`]: 'not checked', xx: 'nope' })).toEqual(['xx: expected number, got string']);
  });

  it('leaves a pattern with lookaround to the tool (never run on a backtracking engine); refuses such a patternProperties key', () => {
    expect(compileJsonSchema({ type: 'string', pattern: '^(?=a)(a+)+$' }).issues(`${'a'.repeat(60)}!`)).toEqual([]);
    expect(() => compileJsonSchema({ type: 'object', patternProperties: { '^(?!x)': {} } })).toThrow(/lookaround or a backreference/);
  });

  it('restores the global RegExp after validating, also when validation throws', () => {
    const native = globalThis.RegExp;
    compileJsonSchema(catastrophic).issues({ id: 'abc' });
    expect(globalThis.RegExp).toBe(native);
    expect(() => compileJsonSchema({ $ref: '#/nowhere' }).issues(1)).toThrow();
    expect(globalThis.RegExp).toBe(native);
  });
});

describe('uniqueItems is bounded (the interpreter compares every pair, so a long array would freeze the event loop)', () => {
  const schema = { type: 'object', properties: { s: { type: 'array', uniqueItems: true } } } as const;

  it('an array over 1,000 items under a schema that uses uniqueItems is one issue naming the bound, answered without comparing pairs', () => {
    // 200,000 objects: pairwise comparison would take hours; the bound answers at once.
    const s = Array.from({ length: 200_000 }, (_, i) => ({ i }));
    expect(compileJsonSchema(schema).issues({ s })).toEqual([
      "s: 200000 items; this tool's schema checks uniqueItems, which toolrun checks on at most 1000 items — send at most 1000, or split the call",
    ]);
  });

  it('up to 1,000 items, uniqueItems is checked as before; schemas without uniqueItems take any length', () => {
    const s = Array.from({ length: 1_000 }, (_, i) => ({ i }));
    expect(compileJsonSchema(schema).issues({ s })).toEqual([]);
    expect(compileJsonSchema(schema).issues({ s: [{ i: 1 }, { i: 1 }] })).toHaveLength(1);
    expect(compileJsonSchema({ type: 'object', properties: { s: { type: 'array' } } }).issues({ s: Array.from({ length: 50_000 }, (_, i) => ({ i })) })).toEqual([]);
  });
});
