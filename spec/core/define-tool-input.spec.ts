/**
 * Issue 13 point 2: `defineTool` checks a tool's `input` when the tool is defined, and throws
 * a TypeError naming what it got — a JSON Schema with a broken structure, a non-object type
 * or a near miss of a keyword; a Standard Schema that cannot become a tool definition — and
 * recognises the AI SDK's `jsonSchema()` / `zodSchema()` wrappers (contract P5 then holds
 * for every call of a defined tool: a bad call is the model's fault, never the schema's).
 */
import { jsonSchema, zodSchema } from 'ai';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { z as z3 } from 'zod/v3';
import { nearMissKeyword } from '../../lib/core/schema/input-check.ts';
import { defineTool, runTools, toolJsonSchema, type ToolCall } from '../../lib/index.ts';
import { collect, text } from '../helpers.ts';

const execute = (): string => 'ran';

describe('defineTool refuses a JSON Schema key that is a near miss of a keyword', () => {
  it.each([
    [{ type: 'object', propertes: { a: { type: 'string' } } }, '"propertes"', 'properties'],
    [{ typ: 'object', properties: {} }, '"typ"', 'type'],
    [{ type: 'object', properties: { a: { type: 'string' } }, requried: ['a'] }, '"requried"', 'required'],
    [{ type: 'object', properties: { list: { type: 'array', itmes: { type: 'string' } } } }, '"properties" → "list" → "itmes"', 'items'],
    [{ type: 'object', Properties: {} }, '"Properties"', 'properties'],
    [{ type: 'object', anyOf: [{ requierd: ['a'] }] }, '"anyOf" → "0" → "requierd"', 'required'],
    [{ type: 'object', $defs: { p: { type: 'string', minLenght: 1 } } }, '"$defs" → "p" → "minLenght"', 'minLength'],
  ])('%j names the key and the keyword it resembles', (input, where, keyword) => {
    expect(() => defineTool({ name: 't', input, execute })).toThrow(TypeError);
    expect(() => defineTool({ name: 't', input, execute })).toThrow(
      `defineTool: tool "t".input is not a valid JSON Schema: ${where} is not a JSON Schema keyword but looks like a misspelt "${keyword}"`,
    );
  });

  it('accepts keywords, x- extensions, known extensions and any property name', () => {
    const input = {
      type: 'object',
      'x-typ': 1,
      example: { typ: 1 },
      nullable: false,
      strict: true,
      // Property names are the tool's own, never keywords: `typ`, `itmes` and `required` are fine here.
      properties: { typ: { type: 'string' }, itmes: { type: 'array', items: { type: 'string' } }, required: { type: 'boolean' } },
      required: ['typ'],
      additionalProperties: false,
    };
    expect(defineTool({ name: 't', input, execute }).input).toBe(input);
  });

  it('the rule: within 2 edits of a keyword of 6+ characters, 1 of a keyword of 4–5, case-only of shorter ones', () => {
    expect(nearMissKeyword('propertise')).toBe('properties');
    expect(nearMissKeyword('minimun')).toBe('minimum');
    expect(nearMissKeyword('defualt')).toBe('default');
    expect(nearMissKeyword('itmes')).toBe('items');
    expect(nearMissKeyword('types')).toBe('type');
    expect(nearMissKeyword('NOT')).toBe('not');
    expect(nearMissKeyword('time')).toBeUndefined(); // 2 edits from `type`: too far for a 4-letter keyword
    expect(nearMissKeyword('no')).toBeUndefined();
    expect(nearMissKeyword('name')).toBeUndefined();
    expect(nearMissKeyword('properties')).toBeUndefined();
    expect(nearMissKeyword('example')).toBeUndefined();
  });
});

describe('defineTool checks a JSON Schema’s structure and that it describes an object', () => {
  it.each([
    [{ type: 'text' }, 'type must be one of'],
    [{ type: 'object', required: 'a' }, 'required'],
    [{ type: 'object', properties: { a: { type: 'integr' } } }, 'properties.a.type must be one of'],
    [{ type: 'object', properties: { a: { minLength: -1 } } }, 'minLength must be a non-negative integer'],
  ])('%j is refused with the structural problem', (input, problem) => {
    expect(() => defineTool({ name: 'bad', input, execute })).toThrow(/defineTool: tool "bad".input is not a valid JSON Schema: /);
    expect(() => defineTool({ name: 'bad', input, execute })).toThrow(problem);
  });

  it('a schema whose type is not object is refused (arguments are always one object)', () => {
    expect(() => defineTool({ name: 's', input: { type: 'string' }, execute })).toThrow(
      'defineTool: tool "s".input must describe an object (tool arguments are always one JSON object), but its type is string "string"',
    );
    expect(defineTool({ name: 'o', input: { type: ['object', 'null'] }, execute }).name).toBe('o');
    expect(defineTool({ name: 'e', input: {}, execute }).name).toBe('e');
  });

  it('types: an input that is neither a schema object nor a Standard Schema does not compile', () => {
    // @ts-expect-error a number is not a schema
    expect(() => defineTool({ name: 'n', input: 42, execute })).toThrow('defineTool: tool "n".input must be a Standard Schema or a JSON Schema object, received number 42');
  });
});

describe('defineTool checks that a Standard Schema can become a tool definition', () => {
  // arktype's case is in spec/schemas/input-schemas.spec.ts, the one fast spec that loads arktype.
  it('zod 4 and valibot schemas are accepted (they convert to JSON Schema)', () => {
    expect(defineTool({ name: 'z', input: z.object({ a: z.string() }), execute }).name).toBe('z');
    expect(defineTool({ name: 'v', input: v.object({ a: v.string() }), execute }).name).toBe('v');
  });

  it('a zod 3 schema (a Standard Schema with no JSON Schema converter) is refused, saying what to pass instead', () => {
    const input = z3.object({ a: z3.string() });
    expect(() => defineTool({ name: 'old', input, execute })).toThrow(TypeError);
    expect(() => defineTool({ name: 'old', input, execute })).toThrow(
      /^defineTool: tool "old".input cannot describe the tool to a model: .*A classic zod 3 schema carries none: wrap it as withJsonSchema\(schema, zodToJsonSchema\) \(package zod-to-json-schema\), define it with zod 4.2 or later, or pass a JSON Schema object instead\.$/,
    );
  });

  it('a schema with a part JSON Schema cannot express is refused, quoting the library', () => {
    const input = v.object({ n: v.pipe(v.number(), v.check((n) => n > 0)) });
    expect(() => defineTool({ name: 'checked', input, execute })).toThrow(/defineTool: tool "checked".input cannot describe the tool to a model: .*valibot/);
  });

  it('a Standard Schema that converts to a non-object is refused', () => {
    expect(() => defineTool({ name: 'str', input: z.string(), execute })).toThrow(/must describe an object/);
  });
});

describe('defineTool recognises the AI SDK’s jsonSchema() and zodSchema() wrappers', () => {
  const call: ToolCall[] = [{ id: 'c', name: 'w', arguments: { city: 5 } }];

  it('jsonSchema(): the tool’s input is the wrapped JSON Schema, validated as JSON Schema (P5)', async () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } as const;
    const tool = defineTool({ name: 'w', input: jsonSchema<{ city: string }>(schema), execute });
    expect(tool.input).toEqual(schema);
    expect(toolJsonSchema(tool)).toEqual(schema);
    const { batch } = await collect(runTools(call, { tools: [tool] }));
    expect(batch.messages[0]!.isError).toBe(true);
    expect(text(batch.messages[0]!)).toContain('city: expected string, got integer');
  });

  it('jsonSchema() with a misspelt keyword or a broken structure is refused like a plain JSON Schema', () => {
    expect(() => defineTool({ name: 'w', input: jsonSchema({ type: 'object', propertes: {} }), execute })).toThrow(/"propertes" is not a JSON Schema keyword/);
    expect(() => defineTool({ name: 'w', input: jsonSchema({ type: 'obj' } as never), execute })).toThrow(/is not a valid JSON Schema: type must be one of/);
  });

  it('zodSchema(): validated with the wrapper’s validate; the tool definition is its JSON Schema', async () => {
    const tool = defineTool({ name: 'w', input: zodSchema(z.object({ city: z.string() })), execute });
    expect(toolJsonSchema(tool)).toMatchObject({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] });
    const { batch } = await collect(runTools(call, { tools: [tool] }));
    expect(batch.messages[0]!.isError).toBe(true);
    expect(text(batch.messages[0]!)).toContain('Invalid arguments for tool "w"');
    const ok = await collect(runTools([{ id: 'c', name: 'w', arguments: { city: 'Oslo' } }], { tools: [tool] }));
    expect(text(ok.batch.messages[0]!)).toBe('ran');
  });
});
