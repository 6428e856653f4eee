/**
 * One content-block check, four paths (docs/adr/0005-results.md). The same edge-case blocks go through every place toolrun takes content blocks
 * from outside:
 * 1. a tool's return value, through `runTools` (lib/core/values/foreign.ts): a valid block is
 *    the result's content; an invalid one makes the call an error result naming it;
 * 2. a tool result message read by the provider formats (`checkedResults`, which every
 *    converter reads content through, lib/formats/shared.ts): an invalid block becomes the
 *    `[invalid content block omitted: …]` text;
 * 3. an MCP server's tool result read by `mcpTools` (`mcpContent`, lib/mcp/client/tools.ts): the same;
 * 4. an MCP client's `sampling/createMessage` answer to a served tool's `client.sample()`
 *    (lib/mcp/server/client-requests.ts), with a real SDK client and server over the SDK's in-memory
 *    transport: a valid text, image or audio block reaches the tool; an invalid one fails the
 *    `sample()` call (the SDK's own check of the answer's shape may refuse it first).
 *
 * Each path must keep exactly the blocks the table below calls valid, as the same copy, and
 * refuse the others with the same problem text: the rule is written here, not derived.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { CreateMessageRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { readContentBlock } from '../../lib/core/values/content.ts';
import { checkedResults } from '../../lib/formats/shared.ts';
import { defineTool, mcpContent, runTools, type ContentBlock } from '../../lib/index.ts';
import { createMcpServer } from '../../lib/mcp/index.ts';
import { collect } from '../helpers.ts';

const LONG = 'x'.repeat(300_000);

/** The edge cases, with the rule's verdict: the copy a valid block becomes, or the problem of an invalid one. */
const CASES: { name: string; block: unknown; valid?: ContentBlock; problem?: string }[] = [
  { name: 'an empty text', block: { type: 'text', text: '' }, valid: { type: 'text', text: '' } },
  { name: 'a text of 300,000 characters (kept whole: the check bounds nothing)', block: { type: 'text', text: LONG }, valid: { type: 'text', text: LONG } },
  { name: 'a text block with a number', block: { type: 'text', text: 5 }, problem: 'a text block whose text is a number (5), not a string' },
  { name: 'an image, with a field MCP does not define (not copied)', block: { type: 'image', data: 'AAAA', mimeType: 'image/png', extra: 1 }, valid: { type: 'image', data: 'AAAA', mimeType: 'image/png' } },
  { name: 'an image with empty data', block: { type: 'image', data: '', mimeType: 'image/png' }, problem: 'an image block without base64 data' },
  { name: 'an image with an empty MIME type', block: { type: 'image', data: 'AAAA', mimeType: '' }, problem: 'an image block without a MIME type' },
  { name: 'an image without a MIME type', block: { type: 'image', data: 'AAAA' }, problem: 'an image block without a MIME type' },
  { name: 'an audio block', block: { type: 'audio', data: 'UklGRg==', mimeType: 'audio/wav' }, valid: { type: 'audio', data: 'UklGRg==', mimeType: 'audio/wav' } },
  { name: 'an audio block with empty data', block: { type: 'audio', data: '', mimeType: 'audio/wav' }, problem: 'an audio block without base64 data' },
  { name: 'a resource link', block: { type: 'resource_link', uri: 'file:///a.txt', name: 'a.txt', size: -1 }, valid: { type: 'resource_link', uri: 'file:///a.txt', name: 'a.txt' } },
  { name: 'an embedded resource without a uri', block: { type: 'resource', resource: { text: 'x' } }, problem: 'a resource block whose resource has no string uri' },
  { name: 'a type MCP does not define', block: { type: 'hologram', data: 'AAAA' }, problem: 'a block of type "hologram"; a content block is text, image, audio, resource_link or resource' },
  { name: 'a block without a type', block: { text: 'hi' }, problem: 'a block without a type; a content block is text, image, audio, resource_link or resource' },
  { name: 'null', block: null, problem: 'null, not a content block' },
];

/** What a path made of a block: the block it kept, or the text it gave instead (an error or a placeholder). */
type Seen = { kept: ContentBlock } | { refused: string };

/** Path 1: a tool returns `{ content: [block] }` through runTools (with a bound that keeps the long text whole). */
async function throughRunTools(block: unknown): Promise<Seen> {
  const tool = defineTool({ name: 'give', input: v.object({}), execute: () => ({ content: [block] }) as never });
  const { batch } = await collect(runTools([{ id: 'c1', name: 'give', arguments: {} }], { tools: [tool], maxResultChars: 1_000_000 }));
  const message = batch.messages[0]!;
  return message.isError ? { refused: (message.content[0] as { text: string }).text } : { kept: message.content[0]! };
}

/** Paths 2 and 3 keep going: an invalid block is a text placeholder. */
function placeholderOrBlock(block: ContentBlock): Seen {
  return block.type === 'text' && block.text.startsWith('[invalid content block omitted: ') ? { refused: block.text } : { kept: block };
}

/** Path 4: a served tool's `client.sample()`, the client's model answering with `block`. */
async function sampled(block: unknown): Promise<Seen> {
  let seen: Seen | undefined;
  const ask = defineTool({
    name: 'ask',
    input: v.object({}),
    async execute(_input, { client }) {
      try {
        seen = { kept: (await client.sample({ messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 5 })).content };
      } catch (error) {
        seen = { refused: (error as Error).message };
      }
      return 'asked';
    },
  });
  const server = createMcpServer([ask]);
  const client = new Client({ name: 'spec', version: '0' }, { capabilities: { sampling: {} } });
  client.setRequestHandler(CreateMessageRequestSchema, () => ({ role: 'assistant', model: 'm', content: block }) as never);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  await client.connect(clientSide);
  try {
    const result = (await client.callTool({ name: 'ask', arguments: {} })) as CallToolResult;
    expect(result.content).toEqual([{ type: 'text', text: 'asked' }]);
  } finally {
    await client.close();
    await server.close();
  }
  return seen!;
}

describe('one content-block check: the same verdict on every path', () => {
  // Fails if the rule changes without this table (the check itself says otherwise).
  it.each(CASES)('the rule: $name', ({ block, valid, problem }) => {
    expect(readContentBlock(block)).toEqual(valid ?? problem);
  });

  // Fails if one path checks blocks by a rule of its own (before: runTools took an image with
  // empty data or MIME type that the formats and mcpTools refused; mcpTools wrote its own texts).
  it.each(CASES)('runTools, the provider formats and mcpTools agree: $name', async ({ block, valid, problem }) => {
    const paths: Record<string, Seen> = {
      runTools: await throughRunTools(block),
      formats: placeholderOrBlock(checkedResults('spec', [{ toolCallId: 'c1', content: [block], isError: false }])[0]!.content[0]!),
      mcpTools: placeholderOrBlock(mcpContent({ content: [block] })[0]!),
    };
    for (const [path, seen] of Object.entries(paths)) {
      if (valid !== undefined) expect({ path, seen }).toEqual({ path, seen: { kept: valid } });
      else expect({ path, refused: 'refused' in seen && seen.refused.includes(problem!) }).toEqual({ path, refused: true });
    }
    if (problem !== undefined) {
      expect((paths.runTools as { refused: string }).refused).toBe(`Tool "give" returned a result toolrun cannot use: content[0] is ${problem}.`);
      expect((paths.formats as { refused: string }).refused).toBe((paths.mcpTools as { refused: string }).refused);
    }
  });

  // Fails if sampling answers are read by another rule. A sampled message carries text, image
  // or audio only; the SDK refuses other shapes before toolrun's check sees them.
  it.each(CASES.filter(({ block }) => ['text', 'image', 'audio'].includes((block as { type?: string } | null)?.type ?? '')))('a sampling answer agrees: $name', async ({ block, valid, problem }) => {
    const seen = await sampled(block);
    if (valid !== undefined) expect(seen).toEqual({ kept: valid });
    else expect(seen).toEqual({ refused: expect.stringMatching(problem === undefined ? /./ : new RegExp(`${escape(problem)}|Invalid|invalid`)) });
  });

  // The blocks the SDK lets through and toolrun's rule refuses: the refusal is toolrun's, with the shared problem text.
  it('a sampling answer with an empty image, an empty MIME type or empty audio data fails with the shared problem text', async () => {
    for (const { block, problem } of CASES.filter(({ name }) => /empty (data|MIME)/.test(name))) {
      expect(await sampled(block)).toEqual({ refused: `the MCP client's model answered with content toolrun cannot pass on (${problem})` });
    }
  });

  // The bound is where results are made: the same long text through runTools with the default maxResultChars is cut.
  it('an oversized text passes the check and is bounded by runTools (maxResultChars, default 100,000)', async () => {
    const tool = defineTool({ name: 'long', input: v.object({}), execute: () => ({ content: [{ type: 'text' as const, text: LONG }] }) });
    const { batch } = await collect(runTools([{ id: 'c1', name: 'long', arguments: {} }], { tools: [tool] }));
    const text = (batch.messages[0]!.content[0] as { text: string }).text;
    expect(batch.messages[0]!.isError).toBe(false);
    expect(text).toContain('[truncated: 300000 chars, 200000 cut; showing 100000]');
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
