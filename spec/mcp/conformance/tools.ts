/**
 * The tools the server scenarios of the official MCP conformance suite
 * (`@modelcontextprotocol/conformance` 0.1.16) call, written with toolrun's own API: served
 * by `toolrun serve-mcp --http 0 spec/mcp/conformance/tools.ts` in `npm run test:conformance`
 * (scripts/conformance.mjs), and by the plain SDK server of `sdk-server.ts` for the
 * comparison. Names, arguments and results are the ones each scenario's description asks
 * for; nothing here knows it is being tested.
 *
 * @module
 */
import { defineTool, type ToolElicitRequest } from '../../../lib/index.ts';

const NO_INPUT = { type: 'object', properties: {} } as const;

/** A 1×1 red PNG. */
export const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
/** A WAV file with a two-byte (one-sample) data chunk. */
export const WAV_BASE64 = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=';

export const testSimpleText = defineTool({
  name: 'test_simple_text',
  description: 'Returns one text block',
  input: NO_INPUT,
  execute: () => 'This is a simple text response for testing.',
});

export const testImageContent = defineTool({
  name: 'test_image_content',
  description: 'Returns one image block (a 1x1 PNG)',
  input: NO_INPUT,
  execute: () => ({ content: [{ type: 'image' as const, data: PNG_BASE64, mimeType: 'image/png' }] }),
});

export const testAudioContent = defineTool({
  name: 'test_audio_content',
  description: 'Returns one audio block (a tiny WAV)',
  input: NO_INPUT,
  execute: () => ({ content: [{ type: 'audio' as const, data: WAV_BASE64, mimeType: 'audio/wav' }] }),
});

export const testEmbeddedResource = defineTool({
  name: 'test_embedded_resource',
  description: 'Returns one embedded text resource',
  input: NO_INPUT,
  execute: () => ({
    content: [{ type: 'resource' as const, resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' } }],
  }),
});

export const testMultipleContentTypes = defineTool({
  name: 'test_multiple_content_types',
  description: 'Returns text, an image and an embedded resource',
  input: NO_INPUT,
  execute: () => ({
    content: [
      { type: 'text' as const, text: 'Multiple content types test:' },
      { type: 'image' as const, data: PNG_BASE64, mimeType: 'image/png' },
      { type: 'resource' as const, resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: JSON.stringify({ test: 'data', value: 123 }) } },
    ],
  }),
});

export const testToolWithLogging = defineTool({
  name: 'test_tool_with_logging',
  description: 'Sends three log lines at level info while it runs',
  input: NO_INPUT,
  async execute(_input, { client }) {
    client.log('info', 'Tool execution started');
    await Promise.resolve();
    client.log('info', 'Tool processing data');
    await Promise.resolve();
    client.log('info', 'Tool execution completed');
    return 'Tool with logging executed successfully';
  },
});

export const testToolWithProgress = defineTool({
  name: 'test_tool_with_progress',
  description: 'Reports progress 0, 50 and 100 of 100',
  input: NO_INPUT,
  async *execute() {
    yield { progress: 0, total: 100 };
    yield { progress: 50, total: 100 };
    yield { progress: 100, total: 100 };
    return 'Tool with progress executed successfully';
  },
});

export const testErrorHandling = defineTool({
  name: 'test_error_handling',
  description: 'Always fails',
  input: NO_INPUT,
  execute(): never {
    throw new Error('This tool intentionally returns an error for testing');
  },
});

export const testSampling = defineTool({
  name: 'test_sampling',
  description: "Asks the client's model to answer a prompt",
  input: { type: 'object', properties: { prompt: { type: 'string', description: 'The prompt to send to the LLM' } }, required: ['prompt'] },
  async execute({ prompt }, { client }) {
    const answer = await client.sample({ messages: [{ role: 'user', content: { type: 'text', text: String(prompt) } }], maxTokens: 100 });
    return `LLM response: ${answer.content.type === 'text' ? answer.content.text : `[${answer.content.type}]`}`;
  },
});

/** Asks the user and reports the answer as the scenarios' descriptions word it. */
async function ask(client: { elicit(request: ToolElicitRequest): Promise<{ action: string; content?: unknown }> }, request: ToolElicitRequest, prefix: string): Promise<string> {
  const answer = await client.elicit(request);
  return `${prefix}: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`;
}

export const testElicitation = defineTool({
  name: 'test_elicitation',
  description: "Asks the client's user for a username and an email address",
  input: { type: 'object', properties: { message: { type: 'string', description: 'The message to show the user' } }, required: ['message'] },
  execute: ({ message }, { client }) =>
    ask(
      client,
      {
        message: String(message),
        requestedSchema: {
          type: 'object',
          properties: { username: { type: 'string', description: "User's response" }, email: { type: 'string', description: "User's email address" } },
          required: ['username', 'email'],
        },
      },
      'User response',
    ),
});

export const testElicitationSep1034Defaults = defineTool({
  name: 'test_elicitation_sep1034_defaults',
  description: 'Asks the user with a default for every primitive type (SEP-1034)',
  input: NO_INPUT,
  execute: (_input, { client }) =>
    ask(
      client,
      {
        message: 'Please review and update the form fields with defaults',
        requestedSchema: {
          type: 'object',
          properties: {
            name: { type: 'string', description: 'User name', default: 'John Doe' },
            age: { type: 'integer', description: 'User age', default: 30 },
            score: { type: 'number', description: 'User score', default: 95.5 },
            status: { type: 'string', description: 'User status', enum: ['active', 'inactive', 'pending'], default: 'active' },
            verified: { type: 'boolean', description: 'Verification status', default: true },
          },
          required: [],
        },
      },
      'Elicitation completed',
    ),
});

export const testElicitationSep1330Enums = defineTool({
  name: 'test_elicitation_sep1330_enums',
  description: 'Asks the user with the five enum forms of SEP-1330',
  input: NO_INPUT,
  execute: (_input, { client }) =>
    ask(
      client,
      {
        message: 'Please select options from the enum fields',
        requestedSchema: {
          type: 'object',
          properties: {
            untitledSingle: { type: 'string', description: 'Select one option', enum: ['option1', 'option2', 'option3'] },
            titledSingle: {
              type: 'string',
              description: 'Select one option with titles',
              oneOf: [
                { const: 'value1', title: 'First Option' },
                { const: 'value2', title: 'Second Option' },
                { const: 'value3', title: 'Third Option' },
              ],
            },
            legacyEnum: { type: 'string', description: 'Select one option (legacy)', enum: ['opt1', 'opt2', 'opt3'], enumNames: ['Option One', 'Option Two', 'Option Three'] },
            untitledMulti: { type: 'array', description: 'Select multiple options', minItems: 1, maxItems: 3, items: { type: 'string', enum: ['option1', 'option2', 'option3'] } },
            titledMulti: {
              type: 'array',
              description: 'Select multiple options with titles',
              minItems: 1,
              maxItems: 3,
              items: {
                anyOf: [
                  { const: 'value1', title: 'First Choice' },
                  { const: 'value2', title: 'Second Choice' },
                  { const: 'value3', title: 'Third Choice' },
                ],
              },
            },
          },
          required: [],
        },
      },
      'Elicitation completed',
    ),
});

export const jsonSchema202012Tool = defineTool({
  name: 'json_schema_2020_12_tool',
  description: 'Tool with JSON Schema 2020-12 features (SEP-1613)',
  input: {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    $defs: { address: { type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } } },
    properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' } },
    additionalProperties: false,
  },
  execute: (input) => `received ${JSON.stringify(input)}`,
});

export const testReconnection = defineTool({
  name: 'test_reconnection',
  description: 'A call whose result a client may receive after resuming its SSE stream (SEP-1699)',
  input: NO_INPUT,
  execute: () => 'Reconnection test completed successfully.',
});
