/**
 * Type tests: a JSON Schema `input` types `execute`'s arguments.
 * - written `as const` (or inline in `defineTool`, whose schema parameter is `const`), through
 *   `json-schema-to-ts`'s `FromSchema`: required and optional properties, `enum` as literal
 *   unions, nested objects, arrays, `additionalProperties` (`false`: no index signature;
 *   absent: an `unknown` index signature; a schema: a record of it), `type: [..., 'null']`;
 * - the AI SDK's `jsonSchema<T>()` (and `zodSchema()`) wrapper keeps its `T`;
 * - a schema whose literal types were lost (a plain `const` object, a `JsonSchema`, a
 *   `JSONSchema7`) still types the input as `Record<string, unknown>`, and such tools still run.
 * Each `@ts-expect-error` is a mistake that must stay an error (the checker fails when the line
 * under it compiles). Checked by vitest typecheck (nodenext) and under `bundler` by
 * spec/types/resolutions.spec.ts; the runtime side is spec/core/json-schema-typed.spec.ts.
 */
import * as ai from 'ai';
import { describe, expectTypeOf, test } from 'vitest';
import { z } from 'zod';
import { defineTool, runTools, type InferInput, type JsonSchema, type Tool } from '../../lib/index.ts';

const fileSchema = {
  type: 'object',
  properties: {
    path: { type: 'string' },
    encoding: { type: 'string', enum: ['utf8', 'base64'] },
    nickname: { type: ['string', 'null'] },
    range: { type: 'object', properties: { start: { type: 'integer' }, end: { type: 'integer' } }, required: ['start'], additionalProperties: false },
    tags: { type: 'array', items: { type: 'string' } },
    points: { type: 'array', items: { type: 'object', properties: { x: { type: 'number' } }, required: ['x'], additionalProperties: false } },
    labels: { type: 'object', additionalProperties: { type: 'number' } },
    open: { type: 'object', properties: { a: { type: 'string' } } },
  },
  required: ['path', 'encoding'],
  additionalProperties: false,
} as const;

type FileInput = {
  path: string;
  encoding: 'utf8' | 'base64';
  nickname?: string | null;
  range?: { start: number; end?: number };
  tags?: string[];
  points?: { x: number }[];
  labels?: { [key: string]: number };
  open?: { [key: string]: unknown; a?: string };
};

describe('a JSON Schema written as const types execute', () => {
  test('required, enum, nullable, nested objects, arrays and additionalProperties', () => {
    expectTypeOf<InferInput<typeof fileSchema>>().toEqualTypeOf<FileInput>();
    const read = defineTool({
      name: 'read',
      input: fileSchema,
      execute: (input) => {
        expectTypeOf(input).toEqualTypeOf<FileInput>();
        expectTypeOf(input.range?.start).toEqualTypeOf<number | undefined>();
        // @ts-expect-error additionalProperties: false, so no other property
        input.other;
        // @ts-expect-error an optional property may be absent
        const end: number = input.range!.end;
        // @ts-expect-error the enum's values only
        if (input.encoding === 'hex') return end;
        return input.path;
      },
    });
    expectTypeOf(read).toExtend<Tool<FileInput, never, string | number, 'read'>>();
  });

  test('timeoutMs and needsApproval get the same input', () => {
    defineTool({
      name: 'write',
      input: fileSchema,
      timeoutMs: (input) => (input.encoding === 'utf8' ? 1_000 : 5_000),
      needsApproval: ({ path }) => {
        expectTypeOf(path).toEqualTypeOf<string>();
        return path.startsWith('/etc');
      },
      execute: () => 'ok',
    });
  });

  test('a schema written inline in defineTool is typed without as const', () => {
    defineTool({
      name: 'lookup',
      input: { type: 'object', properties: { q: { type: 'string' }, limit: { type: 'integer' } }, required: ['q'] },
      execute: (input) => {
        expectTypeOf(input.q).toEqualTypeOf<string>();
        expectTypeOf(input.limit).toEqualTypeOf<number | undefined>();
        // additionalProperties absent: other keys may come, typed unknown
        expectTypeOf(input['more']).toEqualTypeOf<unknown>();
        // @ts-expect-error q is a string, not a number
        const n: number = input.q;
        return n;
      },
    });
  });

  test('an object schema with no properties is a record of unknown', () => {
    expectTypeOf<InferInput<{ readonly type: 'object' }>>().toEqualTypeOf<{ [key: string]: unknown }>();
  });

  test('typed JSON Schema tools run in one batch with other tools, events narrow on their names', async () => {
    const read = defineTool({ name: 'read', input: fileSchema, execute: ({ path }) => ({ path }) });
    const ping = defineTool({ name: 'ping', input: { type: 'object' }, execute: () => 'pong' });
    for await (const event of runTools([], { tools: [read, ping] })) {
      if (event.type === 'tool_execution_end' && event.toolName === 'read') {
        expectTypeOf(event.result.details).toEqualTypeOf<{ path: string } | undefined>();
      }
    }
  });
});

describe('schemas whose literal types were lost still give a record', () => {
  test('a plain object (not as const), a JsonSchema and a JSONSchema7 give Record<string, unknown>', () => {
    const plain = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] };
    expectTypeOf<InferInput<typeof plain>>().toEqualTypeOf<Record<string, unknown>>();
    const tool = defineTool({
      name: 'plain',
      input: plain,
      execute: (input) => {
        expectTypeOf(input).toEqualTypeOf<Record<string, unknown>>();
        // @ts-expect-error the value is unknown until checked
        const q: string = input.q;
        return typeof input.q === 'string' ? input.q : q;
      },
    });
    expectTypeOf(tool).toExtend<Tool>();
    expectTypeOf<InferInput<JsonSchema>>().toEqualTypeOf<Record<string, unknown>>();
    expectTypeOf<InferInput<ai.JSONSchema7>>().toEqualTypeOf<Record<string, unknown>>();
    const fromFile: JsonSchema = JSON.parse('{"type":"object"}') as JsonSchema;
    expectTypeOf(defineTool({ name: 'f', input: fromFile, execute: () => 1 })).toEqualTypeOf<Tool<Record<string, unknown>, never, number, 'f'>>();
  });

  test('a schema that is not of type object gives a record too (the run-time check refuses it)', () => {
    expectTypeOf<InferInput<{ readonly type: 'string' }>>().toEqualTypeOf<Record<string, unknown>>();
  });
});

describe("the AI SDK's jsonSchema<T>() keeps T", () => {
  test('jsonSchema<T>() types execute with T; zodSchema() with the zod type', () => {
    type Weather = { city: string; unit?: 'C' | 'F' };
    const weather = defineTool({
      name: 'weather',
      input: ai.jsonSchema<Weather>({ type: 'object', properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['C', 'F'] } }, required: ['city'] }),
      execute: (input) => {
        expectTypeOf(input).toEqualTypeOf<Weather>();
        // @ts-expect-error no such property in T
        input.country;
        return input.city;
      },
    });
    expectTypeOf(weather).toExtend<Tool<Weather, never, string, 'weather'>>();
    const zodded = defineTool({ name: 'z', input: ai.zodSchema(z.object({ n: z.number() })), execute: ({ n }) => n * 2 });
    expectTypeOf(zodded).toExtend<Tool<{ n: number }, never, number, 'z'>>();
  });

  test('jsonSchema() without T gives a record, as a JSON Schema would', () => {
    const untyped = defineTool({ name: 'u', input: ai.jsonSchema({ type: 'object' }), execute: (input) => Object.keys(input).length });
    expectTypeOf(untyped).toExtend<Tool<Record<string, unknown>, never, number, 'u'>>();
  });
});
