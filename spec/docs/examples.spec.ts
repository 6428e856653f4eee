/**
 * The examples of `docs/tools.md` are real code: each code block there is a `#region` of a
 * file under `docs/examples/`, checked here to be identical, and those files are imported
 * and run here (the MCP one against the real filesystem server on a temp folder).
 */
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { text } from '../helpers.ts';
import * as jsonSchemaExample from '../../docs/examples/json-schema-tools.ts';
import { readThroughMcp } from '../../docs/examples/mcp-tools.ts';
import * as schemaExample from '../../docs/examples/schema-tools.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The code between `// #region name` and `// #endregion name` of a file. */
function region(file: string, name: string): string {
  const source = readFileSync(join(root, file), 'utf8');
  const match = new RegExp(`// #region ${name}\\n([\\s\\S]*?)// #endregion ${name}\\n`).exec(source);
  if (match === null) throw new Error(`${file} has no region ${name}`);
  return match[1]!;
}

describe('docs/tools.md shows the example files as they are', () => {
  const doc = readFileSync(join(root, 'docs/tools.md'), 'utf8');
  const blocks = [...doc.matchAll(/<!-- example: (\S+?)#(\S+?) -->\n```ts\n([\s\S]*?)```/g)];

  it('has one marked block per region, six in all, and every example file is used', () => {
    expect(blocks.map((b) => `${b[1]}#${b[2]}`)).toEqual([
      'docs/examples/schema-tools.ts#define',
      'docs/examples/schema-tools.ts#definitions',
      'docs/examples/schema-tools.ts#run',
      'docs/examples/json-schema-tools.ts#json-schema',
      'docs/examples/json-schema-tools.ts#bfcl',
      'docs/examples/mcp-tools.ts#mcp',
    ]);
    const used = new Set(blocks.map((b) => b[1]));
    for (const file of readdirSync(join(root, 'docs/examples'))) expect(used.has(`docs/examples/${file}`), file).toBe(true);
  });

  it.each(blocks.map((b) => [`${b[1]}#${b[2]}`, b[1]!, b[2]!, b[3]!]))('%s is identical to its region', (_label, file, name, code) => {
    expect(code).toBe(region(file, name));
  });
});

describe('the examples run', () => {
  it('schema-tools: valibot, zod and arktype tools give definitions for every provider and run the response', async () => {
    expect(schemaExample.anthropicTools.map((t) => t.name)).toEqual(['forecast', 'convert_temperature', 'distance_km']);
    expect(schemaExample.anthropicTools[0]).toEqual({
      name: 'forecast',
      description: 'Weather forecast for a city, 1 to 7 days',
      input_schema: {
        type: 'object',
        properties: {
          city: { type: 'string', minLength: 1 },
          days: { type: 'integer', default: 3, minimum: 1, maximum: 7 },
        },
        required: ['city'],
      },
    });
    expect(schemaExample.chatTools[1]?.function.parameters).toEqual({
      type: 'object',
      properties: { celsius: { type: 'number' }, to: { type: 'string', enum: ['fahrenheit', 'kelvin'] } },
      required: ['celsius', 'to'],
    });
    expect(schemaExample.responsesTools[2]).toMatchObject({ type: 'function', name: 'distance_km', strict: false });

    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    const message = await schemaExample.runResponse();
    expect(log).toHaveBeenCalledWith('  forecast: looking up Rome');
    log.mockRestore();
    expect(message.content.map((b) => [b.tool_use_id, b.is_error ?? false, b.content?.[0]?.type === 'text' ? b.content[0].text : undefined])).toEqual([
      ['toolu_1', false, 'Rome: sunny for the next 3 days'],
      ['toolu_2', false, '294.15'],
      ['toolu_3', true, expect.stringMatching(/^Invalid arguments for tool "distance_km":\n- to: to must be a string \(was missing\)\n/)],
    ]);
  });

  it('json-schema-tools: a JSON Schema tool is validated (JSON Schema, no eval); a BFCL function runs under a mapped name', async () => {
    const [ok, bad] = await jsonSchemaExample.runJsonTools();
    expect(ok).toMatchObject({ isError: false, content: [{ type: 'text', text: 'Bogotá, Colombia: 21 degrees celsius' }] });
    expect(text(bad!)).toMatch(/^Invalid arguments for tool "get_weather":\n- unit: must be one of "celsius", "fahrenheit"\n/);

    expect(jsonSchemaExample.bfclChatTools[0]?.function.name).toBe('math_power');
    expect(jsonSchemaExample.bfclChatTools[0]?.function.parameters).toMatchObject({ type: 'object', properties: { mod: { type: 'number' } } });
    const results = await jsonSchemaExample.runBfcl();
    expect(results.map((r) => [r.toolName, r.isError, text(r)])).toEqual([
      ['math.power', false, '8'],
      ['math.power', false, '5'],
    ]);
  });

  describe('mcp-tools: against the real filesystem server', () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'toolrun-docs-mcp-')));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('reads two files in parallel, results in call order', async () => {
      writeFileSync(join(dir, 'one.txt'), 'one\n');
      writeFileSync(join(dir, 'two.txt'), 'two\n');
      const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
      const events = await readThroughMcp(dir, ['one.txt', 'two.txt']);
      expect(log).toHaveBeenCalledWith(expect.stringMatching(/^\d+ tools, e\.g\. fs_/));
      log.mockRestore();
      const results = events.flatMap((e) => (e.type === 'tool_result' ? [e.message] : []));
      expect(results.map((m) => [m.toolCallId, m.isError, text(m)])).toEqual([
        ['call_0', false, 'one\n'],
        ['call_1', false, 'two\n'],
      ]);
    });
  });
});
