/**
 * Every zod users have: zod 4.2+ (its own `~standard.jsonSchema`), zod
 * 4.1.8 and zod 3.25's `zod/v4` (Standard Schema without Standard JSON Schema), classic zod 3
 * (zod 3.25's root export). Each is the real package (devDependencies `zod`, `zod-4-1`, `zod-3`).
 *
 * Each zod without a converter is refused with a message that names its case and the fix, and
 * is accepted by `defineTool` and the adapters once given its own converter (`withJsonSchema`,
 * or the adapters' `toJsonSchema` option): the tool definition keeps `.describe()` texts, and
 * `runTools` validates with the schema itself. Fails if `withJsonSchema` stops carrying the
 * converter, if the per-case messages go back to "use zod 4" for zod 4.1, or if an adapter
 * ignores its `toJsonSchema` option.
 */
import * as lc from '@langchain/core/tools';
import * as ai from 'ai';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z as z4 } from 'zod';
import { z as z3 } from 'zod-3';
import { z as z3v4 } from 'zod-3/v4';
import { z as z41 } from 'zod-4-1';
import { zodToJsonSchema } from 'zod-to-json-schema';
import { defineTool, fromAISDKTools, fromLangChainTools, runTools, toolJsonSchema, withJsonSchema, type ToolResultMessage } from '../../lib/index.ts';

async function results(tool: Parameters<typeof runTools>[1]['tools'][number], calls: Array<{ arguments: unknown }>): Promise<ToolResultMessage[]> {
  const run = runTools(calls.map((c, i) => ({ id: `c${i}`, name: tool.name, arguments: c.arguments })), { tools: [tool] });
  for (;;) {
    const step = await run.next();
    if (step.done === true) return step.value.messages;
  }
}

const text = (m: ToolResultMessage | undefined): string => (m?.content[0] as { text: string } | undefined)?.text ?? '';

describe('zod versions', () => {
  it('zod 4.2+ converts itself: accepted as is, descriptions kept', () => {
    const tool = defineTool({ name: 'z4', input: z4.object({ city: z4.string().describe('City name') }), execute: ({ city }) => city });
    expect(toolJsonSchema(tool)).toMatchObject({ properties: { city: { type: 'string', description: 'City name' } }, required: ['city'] });
  });

  const cases = [
    { label: 'zod 4.1.8', version: '4.1.8', schema: () => z41.object({ city: z41.string().describe('City name'), days: z41.number().int().default(3) }), convert: (s: object) => z41.toJSONSchema(s as never, { io: 'input' }) },
    { label: "zod 3.25's zod/v4", version: '4.0.0', schema: () => z3v4.object({ city: z3v4.string().describe('City name'), days: z3v4.number().int().default(3) }), convert: (s: object) => z3v4.toJSONSchema(s as never, { io: 'input' }) },
  ] as const;
  for (const { label, version, convert, schema: make } of cases) {
    it(`${label}: refused as is with a message naming its version and the fix; accepted through withJsonSchema with its own z.toJSONSchema`, async () => {
      const schema = make();
      expect(() => defineTool({ name: 'w', input: schema, execute: () => '' })).toThrow(
        new RegExp(`zod ${version.replace(/\./g, '\\.')} \\(zod 4\\.0–4\\.1, or zod 3\\.25's "zod/v4"\\) implements Standard Schema without Standard JSON Schema, which zod adds in 4\\.2: wrap it as withJsonSchema\\(schema, \\(s\\) => z\\.toJSONSchema`),
      );
      const tool = defineTool({
        name: 'w',
        input: withJsonSchema(schema, convert),
        execute: ({ city, days }) => {
          expectTypeOf(city).toEqualTypeOf<string>();
          expectTypeOf(days).toEqualTypeOf<number>();
          return `${city} for ${days} days`;
        },
      });
      // The input side: `days` has a default, so it is not required; the description is the schema's own.
      expect(toolJsonSchema(tool)).toMatchObject({ type: 'object', properties: { city: { description: 'City name' } }, required: ['city'] });
      const [ok, bad] = await results(tool, [{ arguments: { city: 'Rome' } }, { arguments: { city: 7 } }]);
      expect(text(ok)).toBe('Rome for 3 days'); // zod's own default applied (its parse ran)
      expect(bad?.isError).toBe(true);
      expect(text(bad)).toMatch(/^Invalid arguments for tool "w":\n- city: /);
    });
  }

  it('classic zod 3: refused with its own message; accepted through withJsonSchema(schema, zodToJsonSchema)', async () => {
    const schema = z3.object({ city: z3.string().describe('City name') });
    expect(() => defineTool({ name: 'c', input: schema, execute: () => '' })).toThrow(/A classic zod 3 schema carries none: wrap it as withJsonSchema\(schema, zodToJsonSchema\)/);
    // The message for zod 3 never claims zod 4.1 would do.
    expect(() => defineTool({ name: 'c', input: schema, execute: () => '' })).not.toThrow(/use zod 4\b/);
    const tool = defineTool({ name: 'c', input: withJsonSchema(schema, (s) => zodToJsonSchema(s as never)), execute: ({ city }) => city.toUpperCase() });
    expect(toolJsonSchema(tool)).toMatchObject({ properties: { city: { type: 'string', description: 'City name' } }, required: ['city'] });
    expect(toolJsonSchema(tool)).not.toHaveProperty('$schema');
    const [ok, bad] = await results(tool, [{ arguments: { city: 'rome' } }, { arguments: {} }]);
    expect(text(ok)).toBe('ROME');
    expect(text(bad)).toMatch(/^Invalid arguments for tool "c":\n- city: Required/);
  });

  it('withJsonSchema refuses what is not a Standard Schema, and a converter that returns no object is reported by defineTool', () => {
    expect(() => withJsonSchema({} as never, {})).toThrow(/^withJsonSchema: the first argument must be a Standard Schema/);
    expect(() => defineTool({ name: 'n', input: withJsonSchema(z41.object({}), () => 'nope'), execute: () => '' })).toThrow(
      /defineTool: tool "n".input cannot describe the tool to a model: .*withJsonSchema returned string "nope", not a JSON Schema object/,
    );
  });

  it('fromAISDKTools: a zod 4.1 / classic zod 3 inputSchema is refused with the option named, and converted with toJsonSchema', async () => {
    const toolSet = {
      weather: ai.tool({ inputSchema: z41.object({ city: z41.string().describe('City name') }), execute: async ({ city }: { city: string }) => `sunny in ${city}` }),
      old: ai.tool({ inputSchema: z3.object({ n: z3.number() }) as never, execute: async (input: { n: number }) => input.n * 2 }),
    };
    expect(() => fromAISDKTools(toolSet)).toThrow(/^fromAISDKTools: tool "weather": .*zod 4\.1\.8 .*\(or pass your library's converter as fromAISDKTools's `toJsonSchema` option\)$/);
    // The schemas' own converters: z41.toJSONSchema for zod 4.1 (keeps its descriptions), zod-to-json-schema for zod 3.
    const toJsonSchema = (s: unknown): unknown => ('_zod' in (s as object) ? z41.toJSONSchema(s as never, { io: 'input' }) : zodToJsonSchema(s as never));
    const { tools } = fromAISDKTools(toolSet, { toJsonSchema });
    expect(toolJsonSchema(tools[0]!)).toMatchObject({ properties: { city: { description: 'City name' } } });
    const run = runTools(
      [
        { id: 'a', name: 'weather', arguments: { city: 'Oslo' } },
        { id: 'b', name: 'old', arguments: { n: 21 } },
        { id: 'c', name: 'old', arguments: { n: 'x' } },
      ],
      { tools },
    );
    let batch;
    for (let step = await run.next(); ; step = await run.next()) if (step.done === true) { batch = step.value; break; }
    expect(batch.messages.map(text)).toEqual(['sunny in Oslo', '42', expect.stringMatching(/^Invalid arguments for tool "old"/)]);
  });

  it("fromLangChainTools: a zod 4.1 tool converts with LangChain's own toJsonSchema passed as the option", async () => {
    const { toJsonSchema } = await import('@langchain/core/utils/json_schema');
    const peer = lc.tool(async ({ q }: { q: string }) => `found ${q}`, { name: 'search', description: 'Search', schema: z41.object({ q: z41.string() }) as never });
    expect(() => fromLangChainTools([peer])).toThrow(/fromLangChainTools: tool "search": .*zod 4\.1\.8.*fromLangChainTools's `toJsonSchema` option/);
    const [tool] = fromLangChainTools([peer], { toJsonSchema });
    expect(toolJsonSchema(tool!)).toMatchObject({ type: 'object', properties: { q: { type: 'string' } }, required: ['q'] });
    const [ok, bad] = await results(tool!, [{ arguments: { q: 'toolrun' } }, { arguments: { q: 1 } }]);
    expect(text(ok)).toBe('found toolrun');
    expect(bad?.isError).toBe(true);
  });
});
