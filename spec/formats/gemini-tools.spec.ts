/**
 * `toGeminiTools`: Gemini function declarations from the tools' JSON
 * Schema, in `parametersJsonSchema`.
 *
 * - The declarations fit `@google/genai`'s `Tool` type (a compile error here if they stop
 *   fitting: this file is typechecked with the project) and the real SDK sends them unchanged:
 *   `generateContent` against a loopback server that records the request body and answers
 *   with function calls, which `fromGemini` → `runTools` → `toGemini` then answer.
 * - The recorded Gemini 3 request of the corpus (pydantic-ai) is regenerated from tools built
 *   on its own declarations.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GoogleGenAI, type Tool as GeminiTool } from '@google/genai';
import * as v from 'valibot';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineTool, fromGemini, providerToolNames, runTools, toGemini, toGeminiTools, type JsonSchema, type Tool } from '../../lib/index.ts';
import { corpusSkipNote, hasCorpus, readCorpusJson } from './corpus.ts';

const execute = () => 'ok';
const forecast = defineTool({
  name: 'forecast',
  description: 'Weather for a city',
  input: v.object({ city: v.string(), days: v.optional(v.number()) }),
  execute: ({ city, days }) => `${city}: sunny for ${days ?? 1} day(s)`,
});
const now = defineTool({ name: 'now', input: { type: 'object', properties: {}, additionalProperties: false }, execute: () => '12:00' });
const forecastSchema = { type: 'object', properties: { city: { type: 'string' }, days: { type: 'number' } }, required: ['city'] };

describe('toGeminiTools: { functionDeclarations: [{ name, description?, parametersJsonSchema }] }', () => {
  it('one Gemini tool holding a declaration per tool, in order; fits the SDK’s Tool type', () => {
    const definitions: GeminiTool[] = toGeminiTools([forecast, now]);
    expect(definitions).toEqual([
      {
        functionDeclarations: [
          { name: 'forecast', description: 'Weather for a city', parametersJsonSchema: forecastSchema },
          { name: 'now', parametersJsonSchema: { type: 'object', properties: {}, additionalProperties: false } },
        ],
      },
    ]);
    // No description key when the tool has none, and never the OpenAPI-subset `parameters`.
    expect(definitions[0]!.functionDeclarations![1]).not.toHaveProperty('description');
    expect(definitions[0]!.functionDeclarations![0]).not.toHaveProperty('parameters');
  });

  it('no tools: no Gemini tool (an empty functionDeclarations is not sent)', () => {
    expect(toGeminiTools([])).toEqual([]);
  });

  it('refuses what Gemini refuses, naming the tool: a name starting with a digit or "-", a name outside the common rule, duplicates, a non-object schema', () => {
    expect(() => toGeminiTools([defineTool({ name: '1st', input: { type: 'object' }, execute })])).toThrow(
      /^toGeminiTools: tool "1st" is sent as "1st", which Gemini rejects: a function name must start with a letter or "_"/,
    );
    expect(() => toGeminiTools([defineTool({ name: 'files/read', input: { type: 'object' }, execute })])).toThrow(/^toGeminiTools: tool "files\/read" has a name providers reject/);
    expect(() => toGeminiTools([now, now])).toThrow(/^toGeminiTools: two tools are named "now"/);
    expect(() => toGeminiTools([{ name: 'x', input: { type: 'string' }, execute } satisfies Tool])).toThrow(/^toGeminiTools: tool "x" has an input JSON Schema without type "object"/);
  });

  it('the names and jsonSchema options work as for the other providers', () => {
    const dotted = defineTool({ name: 'spotify.play', input: { type: 'object' }, execute });
    const names = providerToolNames([dotted]);
    const schema = { type: 'object', properties: { song: { type: 'string' } } } as const;
    expect(toGeminiTools([dotted], { names, jsonSchema: () => schema })).toEqual([{ functionDeclarations: [{ name: 'spotify_play', parametersJsonSchema: schema }] }]);
  });
});

describe('toGeminiTools through the real @google/genai SDK (loopback server)', () => {
  let server: Server;
  let baseUrl = '';
  const bodies: any[] = [];
  beforeAll(async () => {
    server = createServer((request, response) => {
      let text = '';
      request.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      request.on('end', () => {
        bodies.push(JSON.parse(text));
        response.writeHead(200, { 'content-type': 'application/json' });
        // Two calls, no ids (as Gemini often sends them): matched by position.
        response.end(
          JSON.stringify({
            candidates: [
              { content: { role: 'model', parts: [{ functionCall: { name: 'forecast', args: { city: 'Oslo', days: 2 } } }, { functionCall: { name: 'now', args: {} } }] }, finishReason: 'STOP' },
            ],
          }),
        );
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  // Fails if the declarations stop fitting the SDK's request conversion (a field it drops or
  // renames), or if toGeminiTools' output changes shape.
  it('generateContent sends the declarations unchanged; the calls it returns run and are answered', async () => {
    const tools = [forecast, now];
    const ai = new GoogleGenAI({ apiKey: 'test-key', httpOptions: { baseUrl } });
    const response = await ai.models.generateContent({ model: 'gemini-test', contents: 'Weather in Oslo?', config: { tools: toGeminiTools(tools) } });
    expect(bodies).toHaveLength(1);
    expect(bodies[0].tools).toEqual(toGeminiTools(tools));
    const run = runTools(fromGemini(response), { tools });
    let step = await run.next();
    while (step.done !== true) step = await run.next();
    expect(toGemini(step.value.messages)).toEqual({
      role: 'user',
      parts: [
        { functionResponse: { name: 'forecast', response: { output: 'Oslo: sunny for 2 day(s)' } } },
        { functionResponse: { name: 'now', response: { output: '12:00' } } },
      ],
    });
  });
});

describe.skipIf(!hasCorpus)(`toGeminiTools against a recorded Gemini 3 request${corpusSkipNote}`, () => {
  it('tools built from the recorded parameters_json_schema declarations regenerate them', () => {
    const doc = readCorpusJson('other/pydantic-ai__gemini_three_identical_calls_no_ids.json');
    const recorded: Array<{ name: string; description?: string; parameters_json_schema: JsonSchema }> = doc.interactions[0].request.body.tools[0].functionDeclarations;
    expect(recorded.length).toBe(2);
    const tools = recorded.map((d) => defineTool({ name: d.name, ...(d.description === undefined ? {} : { description: d.description }), input: d.parameters_json_schema, execute }));
    // The Python SDK writes snake_case keys; the REST API reads both spellings.
    const regenerated = toGeminiTools(tools)[0]!.functionDeclarations.map(({ parametersJsonSchema, ...rest }) => ({ ...rest, parameters_json_schema: parametersJsonSchema }));
    expect(regenerated).toEqual(recorded);
  });
});
