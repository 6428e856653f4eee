import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { defineTool, runTools, type ToolCall } from '../../lib/index.ts';
import { text } from '../helpers.ts';
import { drive, endOf, expectInvariants, expectNoListeners, expectQuiescent, watchProcess, type ProcessWatch } from './harness.ts';

describe('C14 Empty-string arguments for a tool that takes no parameters', () => {
  let watch: ProcessWatch;
  beforeEach(() => {
    vi.useFakeTimers();
    watch = watchProcess();
  });
  afterEach(() => {
    watch.dispose();
    vi.useRealTimers();
  });

  it('runs "", whitespace, absent and null arguments as {}; a required field still gets a validation error', async () => {
    const received: [string, unknown][] = [];
    const status = defineTool({
      name: 'status',
      input: { type: 'object', properties: {} },
      execute: (input, { toolCallId }) => {
        received.push([toolCallId, input]);
        return 'green';
      },
    });
    const lookup = defineTool({
      name: 'lookup',
      input: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
      execute: (input, { toolCallId }) => {
        received.push([toolCallId, input]);
        return 'found';
      },
    });
    const input: ToolCall[] = [
      { id: 'c1', name: 'status', arguments: '' },
      { id: 'c2', name: 'status', arguments: '   ' },
      { id: 'c3', name: 'lookup', arguments: '' },
      { id: 'c4', name: 'status' },
      { id: 'c5', name: 'status', arguments: null },
    ];
    const controller = new AbortController();
    const driven = await drive(runTools(input, { tools: [status, lookup], signal: controller.signal }));
    expectInvariants(input, driven);
    expect(driven.batch.messages.map((m) => [m.toolCallId, m.isError])).toEqual([
      ['c1', false],
      ['c2', false],
      ['c3', true],
      ['c4', false],
      ['c5', false],
    ]);
    expect(received).toEqual([
      ['c1', {}],
      ['c2', {}],
      ['c4', {}],
      ['c5', {}],
    ]);
    const c3 = text(driven.batch.messages[2]!);
    // A validation error naming q, not a JSON-parse error.
    expect(c3).toContain('q: required');
    expect(c3).not.toMatch(/JSON|Unexpected end/);
    expect(endOf(driven, 'c3').outcome).toBe('rejected');
    expectNoListeners(controller.signal);
    await expectQuiescent(driven, () => received.length);
    watch.expectClean();
  });
});
