/**
 * Writes the recordings of `examples/recordings/`: two short coding sessions, each an
 * application that sends tool definitions to a model, runs the model's tool calls with
 * toolrun's coding tools, and sends the results back, recorded as converted cassettes
 * (`{ api, interactions: [{ request, response }] }`, the format `toolrun replay` reads).
 *
 * The model is a fake provider server on 127.0.0.1 that plays a fixed script; the
 * applications talk to it through the official SDKs (`@anthropic-ai/sdk`, `openai`). The
 * tools work on a small workspace this script writes to a temp folder, so the recordings
 * are the same on every machine, byte for byte (the temp folder's path is written as
 * `/home/user/greeter`):
 *
 *   npx tsx examples/record.ts [out-folder]     (default: examples/recordings)
 *
 * - `anthropic-session.json`: Anthropic Messages, three requests; the first reply asks for
 *   three calls at once, the second for a shell command and a file that does not exist
 *   (an error result, sent back like any other).
 * - `openai-chat-session.json`: OpenAI Chat Completions, streamed: the calls start while the
 *   reply is still arriving; the cassette keeps every server-sent event, so
 *   `toolrun replay --stream` can play it again.
 */
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import {
  fromAnthropic,
  fromOpenAIChatStream,
  runTools,
  toAnthropic,
  toAnthropicTools,
  toOpenAIChat,
  toOpenAIChatTools,
  type ToolResultMessage,
} from '../lib/index.ts';
import { codingTools } from '../lib/tools/index.ts';

/** The files of the workspace the tools work on. */
const WORKSPACE: Record<string, string> = {
  'README.md': '# greeter\n\nSays hello. `npm test` checks it.\n',
  'package.json': '{\n  "name": "greeter",\n  "type": "module",\n  "scripts": { "test": "node --test" }\n}\n',
  'src/greet.ts': "export function greet(name: string): string {\n  return `Hello, ${name}!`;\n}\n",
  'src/shout.ts': "import { greet } from './greet.ts';\n\nexport function shout(name: string): string {\n  return greet(name).toUpperCase();\n}\n",
  'notes/todo.txt': 'add a farewell function\n',
};

/** How the workspace folder is named in the recordings, in place of its temp path. */
const WORKSPACE_SHOWN = '/home/user/greeter';

/** One recorded exchange, as converted cassettes hold it. */
interface Interaction {
  request: { method: string; url: string; body: unknown };
  response: { status: number; body: unknown } | { status: number; stream: true; events: Array<{ data: unknown }> };
}

/** A reply of the fake provider: a JSON body, or the chunks of a server-sent event stream. */
type Reply = { body: unknown } | { events: unknown[] };

/**
 * A fake provider on 127.0.0.1: answers the n-th POST with `script[n]` and records each
 * request and response. The SDKs talk to it as to the real API.
 */
async function fakeProvider(script: readonly Reply[]): Promise<{ url: string; interactions: Interaction[]; close(): Promise<void> }> {
  const interactions: Interaction[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const reply = script[interactions.length];
      const request = { method: req.method ?? 'POST', url: req.url ?? '/', body };
      if (reply === undefined) {
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"the script has no more replies"}');
        return;
      }
      if ('body' in reply) {
        interactions.push({ request, response: { status: 200, body: reply.body } });
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reply.body));
        return;
      }
      interactions.push({ request, response: { status: 200, stream: true, events: reply.events.map((data) => ({ data })) } });
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      for (const data of reply.events) res.write(`data: ${JSON.stringify(data)}\n\n`);
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    interactions,
    close: () => new Promise<void>((done, fail) => server.close((error) => (error === undefined ? done() : fail(error)))),
  };
}

/** An Anthropic Messages response body. */
function anthropicReply(id: string, content: unknown[], stopReason: 'tool_use' | 'end_turn'): Reply {
  return {
    body: {
      id,
      type: 'message',
      role: 'assistant',
      model: 'fake-model',
      content,
      stop_reason: stopReason,
      stop_sequence: null,
      usage: { input_tokens: 0, output_tokens: 0 },
    },
  };
}

/** The Anthropic session: the application's loop, against the fake server. */
async function anthropicSession(root: string): Promise<Interaction[]> {
  const provider = await fakeProvider([
    anthropicReply('msg_rec_01', [
      { type: 'text', text: 'Let me look at the project: its README, where functions are exported, and its files.' },
      { type: 'tool_use', id: 'toolu_rec_01', name: 'read_file', input: { path: 'README.md' } },
      { type: 'tool_use', id: 'toolu_rec_02', name: 'grep', input: { pattern: 'export function', glob: 'src/**/*.ts' } },
      { type: 'tool_use', id: 'toolu_rec_03', name: 'list_files', input: { pattern: '**/*' } },
    ], 'tool_use'),
    anthropicReply('msg_rec_02', [
      { type: 'text', text: 'Now the notes, and the test command.' },
      { type: 'tool_use', id: 'toolu_rec_04', name: 'read_file', input: { path: 'notes/todo.md' } },
      { type: 'tool_use', id: 'toolu_rec_05', name: 'shell', input: { command: 'echo "2 tests passed"' } },
    ], 'tool_use'),
    anthropicReply('msg_rec_03', [{ type: 'text', text: 'greeter exports greet and shout; the todo is a farewell function.' }], 'end_turn'),
  ]);
  try {
    const anthropic = new Anthropic({ apiKey: 'not-a-real-key', baseURL: provider.url, maxRetries: 0 });
    const tools = codingTools({ root });
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'What does this project do, and what is left to do?' }];
    for (let turn = 0; turn < 5; turn++) {
      const reply = await anthropic.messages.create({ model: 'fake-model', max_tokens: 1024, messages, tools: toAnthropicTools(tools) });
      messages.push({ role: 'assistant', content: reply.content });
      const calls = fromAnthropic(reply);
      if (calls.length === 0) break;
      const results: ToolResultMessage[] = [];
      for await (const event of runTools(calls, { tools })) if (event.type === 'tool_result') results.push(event.message);
      messages.push(toAnthropic(results));
    }
    return provider.interactions;
  } finally {
    await provider.close();
  }
}

/** The chunks of a streamed Chat Completions reply: text, then each call's name and its arguments in two pieces. */
function chatStream(id: string, text: string, calls: Array<{ id: string; name: string; arguments: unknown }>): Reply {
  const chunk = (delta: unknown, finish: string | null = null) => ({
    id,
    object: 'chat.completion.chunk',
    created: 1767225600,
    model: 'fake-model',
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const events: unknown[] = [chunk({ role: 'assistant', content: '' }), chunk({ content: text })];
  calls.forEach((call, index) => {
    const args = JSON.stringify(call.arguments);
    const half = Math.ceil(args.length / 2);
    events.push(chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }));
    events.push(chunk({ tool_calls: [{ index, function: { arguments: args.slice(0, half) } }] }));
    events.push(chunk({ tool_calls: [{ index, function: { arguments: args.slice(half) } }] }));
  });
  events.push(chunk({}, calls.length > 0 ? 'tool_calls' : 'stop'));
  return { events };
}

/** The OpenAI Chat Completions session, streamed. */
async function openaiSession(root: string): Promise<Interaction[]> {
  const provider = await fakeProvider([
    chatStream('chatcmpl-rec-01', 'I will list the sources, find the exports and read the shout module.', [
      { id: 'call_rec_01', name: 'list_files', arguments: { pattern: 'src/*.ts' } },
      { id: 'call_rec_02', name: 'grep', arguments: { pattern: 'greet\\(', glob: 'src/**/*.ts' } },
      { id: 'call_rec_03', name: 'read_file', arguments: { path: 'src/shout.ts', limit: 3 } },
    ]),
    chatStream('chatcmpl-rec-02', 'shout calls greet and upper-cases its answer.', []),
  ]);
  try {
    const openai = new OpenAI({ apiKey: 'not-a-real-key', baseURL: `${provider.url}/v1`, maxRetries: 0 });
    const tools = codingTools({ root });
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'How does shout work?' }];
    for (let turn = 0; turn < 5; turn++) {
      const stream = await openai.chat.completions.create({ model: 'fake-model', messages, tools: toOpenAIChatTools(tools), stream: true });
      // Each call starts as soon as its arguments are complete, while the reply still streams.
      const results: ToolResultMessage[] = [];
      const calls: OpenAI.ChatCompletionMessageToolCall[] = [];
      for await (const event of runTools(fromOpenAIChatStream(stream), { tools })) {
        if (event.type === 'tool_execution_start') {
          calls.push({ id: event.toolCallId, type: 'function', function: { name: event.toolName, arguments: JSON.stringify(event.args) } });
        }
        if (event.type === 'tool_result') results.push(event.message);
      }
      if (calls.length === 0) break;
      messages.push({ role: 'assistant', content: null, tool_calls: calls }, ...toOpenAIChat(results));
    }
    return provider.interactions;
  } finally {
    await provider.close();
  }
}

/**
 * Writes both recordings into `outDir` and returns their paths. Throws if a recording would
 * still name a temp folder (it would then differ from machine to machine).
 */
export async function writeRecordings(outDir: string): Promise<string[]> {
  const root = await realpath(await mkdtemp(join(tmpdir(), 'toolrun-record-')));
  try {
    for (const [path, text] of Object.entries(WORKSPACE)) {
      await mkdir(dirname(join(root, path)), { recursive: true });
      await writeFile(join(root, path), text);
    }
    const sessions = [
      { file: 'anthropic-session.json', api: 'anthropic-messages', interactions: await anthropicSession(root) },
      { file: 'openai-chat-session.json', api: 'openai-chat-completions', interactions: await openaiSession(root) },
    ];
    await mkdir(outDir, { recursive: true });
    const written: string[] = [];
    for (const session of sessions) {
      const cassette = {
        _source: 'written by examples/record.ts: an application using toolrun against a fake provider on 127.0.0.1',
        api: session.api,
        interactions: session.interactions,
      };
      // The temp folder's name is in the shell tool's description and in error texts: it is
      // written as WORKSPACE_SHOWN, as a cassette filters what differs between runs.
      const text = `${JSON.stringify(cassette, null, 2)}\n`.split(root).join(WORKSPACE_SHOWN);
      if (text.includes(join(tmpdir(), 'toolrun-'))) throw new Error(`${session.file} would contain a temp path`);
      const path = join(outDir, session.file);
      await writeFile(path, text);
      written.push(path);
    }
    return written;
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const outDir = resolve(process.argv[2] ?? fileURLToPath(new URL('recordings/', import.meta.url)));
  for (const path of await writeRecordings(outDir)) console.log(`wrote ${path}`);
}
