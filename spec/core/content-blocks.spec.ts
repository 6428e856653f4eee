/**
 * MCP's content types as toolrun content blocks: a tool returns them in process,
 * a paused batch's state keeps them across a resume, a malformed one is the call's error result.
 */
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { contentBlockText, defineTool, runTools, type ContentBlock } from '../../lib/index.ts';
import { collect } from '../helpers.ts';

const blocks: ContentBlock[] = [
  { type: 'audio', data: 'UklGRg==', mimeType: 'audio/wav' },
  { type: 'resource_link', uri: 'file:///a', name: 'a' },
  { type: 'resource', resource: { uri: 'test://t', text: 'hello' } },
];

describe('audio, resource_link and resource blocks in process', () => {
  // Fails if the runtime rejects or rewrites these blocks, or a paused state cannot hold them (its schema lists each type).
  it('a tool returns them as they are; a batch paused after it resumes with the same result', async () => {
    const media = defineTool({ name: 'media', input: v.object({}), execute: () => ({ content: blocks }) });
    const guarded = defineTool({ name: 'guarded', input: v.object({}), needsApproval: true, execute: () => 'ran' });
    const calls = [
      { id: '1', name: 'media', arguments: {} },
      { id: '2', name: 'guarded', arguments: {} },
    ];
    const first = await collect(runTools(calls, { tools: [media, guarded] }));
    const paused = first.batch.paused!;
    expect(paused.requests).toHaveLength(1);
    const state = JSON.parse(JSON.stringify(paused.state));
    const resumed = await collect(runTools(calls, { tools: [media, guarded], resume: { state, approvals: [{ approvalId: paused.requests[0]!.approvalId, approved: true }] } }));
    expect(resumed.batch.messages.map((m) => m.content)).toEqual([blocks, [{ type: 'text', text: 'ran' }]]);
  });

  // Fails if a malformed block is passed on to the formats or a client instead of failing its call.
  it('a malformed audio block is the call’s error result, naming what is missing', async () => {
    const bad = defineTool({ name: 'bad', input: v.object({}), execute: () => ({ content: [{ type: 'audio', data: 'AAAA' }] }) });
    const { batch } = await collect(runTools([{ id: '1', name: 'bad', arguments: {} }], { tools: [bad] }));
    expect(batch.messages[0]).toMatchObject({ isError: true, content: [{ type: 'text', text: expect.stringContaining('content[0] is an audio block without a MIME type') }] });
  });

  // Fails if the text a provider gets for a block changes shape or loses the resource's text.
  it('contentBlockText: the text the provider formats send for each', () => {
    expect(blocks.map(contentBlockText)).toEqual(['[audio: audio/wav, 4 bytes; not sent to the model]', '[resource link: file:///a "a"]', '[resource test://t (unknown type)]\nhello']);
    expect(contentBlockText({ type: 'text', text: 'x' })).toBeUndefined();
  });
});
