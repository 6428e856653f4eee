import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { defineTool, runTools, type ToolCall } from '../../lib/index.ts';
import { text } from '../helpers.ts';
import { drive, endOf, expectInvariants, expectNoListeners, expectQuiescent, sleepIgnoring, watchProcess, type ProcessWatch } from './harness.ts';

function writeNoteTool() {
  const probe = { sideEffects: 0, bodies: [] as string[] };
  const tool = defineTool({
    name: 'write_note',
    input: {
      type: 'object',
      properties: { path: { type: 'string' }, content: { type: 'string' } },
      required: ['path', 'content'],
    },
    execute: (input, { toolCallId }) => {
      probe.bodies.push(toolCallId);
      probe.sideEffects++;
      return `wrote ${String(input.path)}`;
    },
  });
  return { tool, probe };
}

const cut = '{"path":"n.txt","content":"line1\\nline2';

// runTools alone does not know the message's stop reason: a call handed over without
// `incomplete` set is answered as invalid JSON — with the parser's "Unterminated string"
// message. The stream adapters (lib/formats/*-stream.ts, which see `max_tokens`/`length`)
// set `incomplete`, and then the text says the call was cut off (test below; the
// adapters' own truncation specs are in spec/formats/*-stream.spec.ts). What matters holds
// either way: it never runs, nothing is repaired.
function expectTruncatedRejected(message: string): void {
  expect(message).toContain('are not valid JSON');
  expect(message).toContain('Unterminated string');
}

describe('C16 Truncated or partial JSON must not run as if it were complete', () => {
  let watch: ProcessWatch;
  beforeEach(() => {
    vi.useFakeTimers();
    watch = watchProcess();
  });
  afterEach(() => {
    watch.dispose();
    vi.useRealTimers();
  });

  it('runs neither the cut-off call nor the one missing its required content', async () => {
    const { tool, probe } = writeNoteTool();
    const input: ToolCall[] = [
      { id: 'c1', name: 'write_note', arguments: cut },
      { id: 'c2', name: 'write_note', arguments: '{"path":"m.txt"}' },
    ];
    const controller = new AbortController();
    const driven = await drive(runTools(input, { tools: [tool], signal: controller.signal }));
    expectInvariants(input, driven);
    expect(probe.sideEffects).toBe(0);
    expect(probe.bodies).toEqual([]);
    const [m1, m2] = driven.batch.messages;
    expect(m1!.isError).toBe(true);
    expectTruncatedRejected(text(m1!));
    // Not repaired into `"line1\nline2"` and run.
    expect(endOf(driven, 'c1').outcome).toBe('rejected');
    expect(m2!.isError).toBe(true);
    expect(text(m2!)).toContain('content: required');
    expect(endOf(driven, 'c2').outcome).toBe('rejected');
    expectNoListeners(controller.signal);
    await expectQuiescent(driven, () => probe.sideEffects);
    watch.expectClean();
  });

  it('a call marked incomplete (ToolCall.incomplete, set by a stream adapter) says it was cut off, and never runs', async () => {
    const { tool, probe } = writeNoteTool();
    const input: ToolCall[] = [
      { id: 'c1', name: 'write_note', arguments: cut, incomplete: 'the output limit (max_tokens)' },
      { id: 'c2', name: 'write_note', arguments: '{"path":"m.txt"}' },
    ];
    const driven = await drive(runTools(input, { tools: [tool] }));
    expectInvariants(input, driven);
    expect(probe.sideEffects).toBe(0);
    const [m1, m2] = driven.batch.messages;
    expect(m1!.isError).toBe(true);
    expect(text(m1!)).toContain('cut off by the output limit (max_tokens)');
    expect(text(m1!)).not.toContain('not valid JSON');
    expect(endOf(driven, 'c1').outcome).toBe('rejected');
    expect(text(m2!)).toContain('content: required');
    await expectQuiescent(driven, () => probe.sideEffects);
    watch.expectClean();
  });

  it('streaming variant: 5 argument deltas joined after the stream ends, calls arriving on an async iterable', async () => {
    const { tool, probe } = writeNoteTool();
    const deltas = [cut.slice(0, 8), cut.slice(8, 16), cut.slice(16, 24), cut.slice(24, 32), cut.slice(32)];
    expect(deltas.join('')).toBe(cut);
    async function* stream(): AsyncGenerator<ToolCall> {
      let joined = '';
      for (const d of deltas) {
        await sleepIgnoring(10);
        joined += d;
      }
      // The message is complete (stop reason `length`) only now.
      yield { id: 'c1', name: 'write_note', arguments: joined };
      await sleepIgnoring(10);
      yield { id: 'c2', name: 'write_note', arguments: '{"path":"m.txt"}' };
    }
    const driven = await drive(runTools(stream(), { tools: [tool] }));
    const input: ToolCall[] = [
      { id: 'c1', name: 'write_note', arguments: cut },
      { id: 'c2', name: 'write_note', arguments: '{"path":"m.txt"}' },
    ];
    expectInvariants(input, driven);
    expect(probe.sideEffects).toBe(0);
    expectTruncatedRejected(text(driven.batch.messages[0]!));
    expect(text(driven.batch.messages[1]!)).toContain('content: required');
    expect(driven.settledAt).toBe(60);
    await expectQuiescent(driven, () => probe.sideEffects);
    watch.expectClean();
  });
});
