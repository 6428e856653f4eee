import { describe, expect, it } from 'vitest';
import { corpusSkipNote, hasCorpus, readCorpusJson, runWithOutputs } from './corpus.ts';
import { fromGemini, toGemini, type ToolResultMessage } from '../../lib/index.ts';

const result = (over: Partial<ToolResultMessage>): ToolResultMessage => ({
  role: 'tool',
  toolCallId: 'x',
  toolName: 'get_time',
  content: [{ type: 'text', text: '12:00' }],
  isError: false,
  ...over,
});

describe('fromGemini (F5)', () => {
  it('F5: functionCall parts → calls in part order; ids synthesized by position when absent, copied when given', () => {
    const calls = fromGemini({
      role: 'model',
      parts: [
        { text: 'let me look' },
        { functionCall: { name: 'search', args: { q: 'a' } }, thoughtSignature: 'sig' },
        { functionCall: { name: 'search', args: { q: 'a' } } },
        { functionCall: { id: 'fc-7', name: 'open' } },
      ],
    });
    expect(calls).toEqual([
      { id: 'gemini-call-0', name: 'search', arguments: { q: 'a' } },
      { id: 'gemini-call-1', name: 'search', arguments: { q: 'a' } },
      { id: 'fc-7', name: 'open' },
    ]);
  });

  it('F5: reads the first candidate of a generateContent response; no parts → no calls; bad shapes throw', () => {
    expect(fromGemini({ candidates: [{ content: { role: 'model', parts: [{ functionCall: { name: 'f', args: {} } }] } }] })).toEqual([
      { id: 'gemini-call-0', name: 'f', arguments: {} },
    ]);
    expect(fromGemini({ candidates: [{ finishReason: 'SAFETY' }] })).toEqual([]);
    expect(fromGemini({ role: 'model' })).toEqual([]);
    expect(() => fromGemini(null as never)).toThrow(/fromGemini: expected a model content/);
    expect(() => fromGemini({ parts: 'x' } as never)).toThrow(/`parts` to be an array, received string "x"/);
  });
});

describe('toGemini (F5)', () => {
  it('F5: one functionResponse per result in call order, with the name; output / error keys; synthesized ids left out', () => {
    const content = toGemini([
      result({ toolCallId: 'gemini-call-0', toolName: 'search', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] }),
      result({ toolCallId: 'fc-7', toolName: 'open', isError: true, content: [{ type: 'text', text: 'no such file' }] }),
      result({ toolCallId: '', toolName: 'search', content: [] }),
    ]);
    expect(content).toEqual({
      role: 'user',
      parts: [
        { functionResponse: { name: 'search', response: { output: 'a\nb' } } },
        { functionResponse: { id: 'fc-7', name: 'open', response: { error: 'no such file' } } },
        { functionResponse: { name: 'search', response: { output: '' } } },
      ],
    });
  });

  it("F5: images are a placeholder by default, inlineData parts with images: 'parts'; role 'function' on request", () => {
    const shot = result({ toolCallId: 'gemini-call-0', content: [{ type: 'text', text: 'cat' }, { type: 'image', data: 'AAAA', mimeType: 'image/png' }] });
    expect(toGemini([shot]).parts[0]!.functionResponse.response).toEqual({
      output: 'cat\n[image omitted: image/png, 3 bytes; this tool result format carries text only]',
    });
    expect(toGemini([shot], { images: 'parts', role: 'function' })).toEqual({
      role: 'function',
      parts: [{ functionResponse: { name: 'get_time', response: { output: 'cat' }, parts: [{ inlineData: { mimeType: 'image/png', data: 'AAAA' } }] } }],
    });
  });
});

describe("toGemini with images: 'parts' (F5)", () => {
  // Fails if images: 'parts' keeps only text blocks in `output`: the resource link was dropped without a word.
  it('an audio or resource block is still sent as its text; only images move to inlineData parts', () => {
    const mixed = result({ toolCallId: 'gemini-call-0', content: [{ type: 'text', text: 'see' }, { type: 'resource_link', uri: 'file:///a.txt', name: 'a.txt' }, { type: 'image', data: 'AAAA', mimeType: 'image/png' }] });
    expect(toGemini([mixed], { images: 'parts' }).parts[0]!.functionResponse).toEqual({
      name: 'get_time',
      response: { output: 'see\n[resource link: file:///a.txt "a.txt"]' },
      parts: [{ inlineData: { mimeType: 'image/png', data: 'AAAA' } }],
    });
  });
});

describe.skipIf(!hasCorpus)(`Gemini recording round trip (F4, F5)${corpusSkipNote}`, () => {
  it('F4 F5: three identical id-less calls → results that answer them by position and name, as the follow-up request did', async () => {
    const recording = readCorpusJson('other/pydantic-ai__gemini_three_identical_calls_no_ids.json');
    const interactions: any[] = recording.interactions;
    let checked = 0;
    for (let i = 0; i + 1 < interactions.length; i++) {
      const reply = interactions[i].response.body;
      const calls = fromGemini(reply);
      if (calls.length === 0) continue;
      const recordedParts: any[] = reply.candidates[0].content.parts.filter((p: any) => p.functionCall !== undefined);
      expect(calls.map((c) => [c.name, c.arguments])).toEqual(recordedParts.map((p) => [p.functionCall.name, p.functionCall.args]));
      // The follow-up request ends with the content that answered these calls.
      const next: any[] = interactions[i + 1].request.body.contents;
      const answered = next[next.length - 1];
      const recordedResponses: any[] = answered.parts.map((p: any) => p.functionResponse);
      const outputs = recordedResponses.map((r) => String(r.response.return_value));
      const content = toGemini(await runWithOutputs(calls, outputs));
      expect(content.role).toBe(answered.role);
      expect(content.parts.map((p) => [p.functionResponse.name, (p.functionResponse.response as { output: string }).output])).toEqual(
        recordedResponses.map((r) => [r.name, r.response.return_value]),
      );
      // The model gave no ids: none is sent back (the framework sent ids it had invented).
      expect(content.parts.every((p) => p.functionResponse.id === undefined)).toBe(true);
      checked += calls.length;
    }
    expect(checked).toBe(6); // 3 + 1 + 1 + 1; the last reply (final_result) has no follow-up
  });
});
