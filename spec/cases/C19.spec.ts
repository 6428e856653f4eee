import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { defineTool, runTools, type ToolCall } from '../../lib/index.ts';
import { text } from '../helpers.ts';
import { drive, endOf, expectInvariants, expectNoListeners, expectQuiescent, watchProcess, type ProcessWatch } from './harness.ts';

describe('C19 Schema validation errors the model can act on', () => {
  let watch: ProcessWatch;
  beforeEach(() => {
    vi.useFakeTimers();
    watch = watchProcess();
  });
  afterEach(() => {
    watch.dispose();
    vi.useRealTimers();
  });

  it('names the path and the reason in plain words, as error results; the body never runs', async () => {
    let bodies = 0;
    const grepItems = defineTool({
      name: 'grep_items',
      input: {
        type: 'object',
        properties: {
          pattern: { type: 'string' },
          limit: { type: 'integer', minimum: 1, maximum: 100 },
        },
        required: ['pattern'],
        additionalProperties: false,
      },
      execute: () => {
        bodies++;
        return 'matches';
      },
    });
    const input: ToolCall[] = [
      { id: 'c1', name: 'grep_items', arguments: '{}' },
      { id: 'c2', name: 'grep_items', arguments: '{"pattern":"x","limit":"ten"}' },
      { id: 'c3', name: 'grep_items', arguments: '{"pattern":"x","limit":500}' },
      { id: 'c4', name: 'grep_items', arguments: '{"pattern":"x","extra":1}' },
    ];
    const controller = new AbortController();
    // drive() rethrows anything thrown out of the generator: failures must be results.
    const driven = await drive(runTools(input, { tools: [grepItems], signal: controller.signal }));
    expectInvariants(input, driven);
    expect(bodies).toBe(0);
    expect(driven.batch.messages.every((m) => m.isError)).toBe(true);
    const texts = driven.batch.messages.map(text);
    expect(texts[0]).toContain('pattern: required');
    expect(texts[1]).toContain('limit: expected integer, got string');
    expect(texts[2]).toContain('limit: must be ≤ 100');
    expect(texts[3]).toContain('extra: not allowed');
    for (const [i, t] of texts.entries()) {
      expect(endOf(driven, `c${i + 1}`).outcome).toBe('rejected');
      expect(t).not.toMatch(/ZodError|SchemaError\(|ValiError|\n\s+at /);
      expect(t.length).toBeLessThan(1_000);
    }
    expectNoListeners(controller.signal);
    await expectQuiescent(driven, () => bodies);
    watch.expectClean();
  });
});
