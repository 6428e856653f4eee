/**
 * Type tests (contract W1, W5) against the real `ai` 7 types: every chunk toUIMessageStream
 * writes is an ai `UIMessageChunk`; fromEventStream's events are typed from the server's tools.
 */
import type * as ai from 'ai';
import * as v from 'valibot';
import { describe, expectTypeOf, test } from 'vitest';
import { defineTool, fromEventStream, toUIMessageStream, type AISDKUIMessageChunk, type AgentEvent, type AgentResult, type ToolBatch, type ToolEvent } from '../../lib/index.ts';

const count = defineTool({
  name: 'count',
  input: v.object({ to: v.number() }),
  async *execute({ to }) {
    yield { done: to };
    return 'ok';
  },
});

describe('W5: toUIMessageStream chunks are ai 7 UIMessageChunks', () => {
  test('assignable, and the stream is what createUIMessageStreamResponse takes', () => {
    expectTypeOf<AISDKUIMessageChunk>().toExtend<ai.UIMessageChunk>();
    expectTypeOf(toUIMessageStream).returns.toExtend<ReadableStream<ai.UIMessageChunk>>();
  });
});

describe('W1: fromEventStream is typed by the server\'s events', () => {
  test('a batch: progress by tool name, the batch as return value', async () => {
    const run = fromEventStream<ToolEvent<typeof count>>(new ReadableStream<Uint8Array>());
    for await (const event of run) {
      if (event.type === 'tool_execution_update' && event.toolName === 'count') expectTypeOf(event.progress).toEqualTypeOf<{ done: number }>();
    }
    expectTypeOf(run.next()).resolves.toExtend<IteratorResult<ToolEvent<typeof count>, ToolBatch>>();
  });
  test('an agent run', () => {
    const run = fromEventStream<AgentEvent<typeof count>, AgentResult>(new ReadableStream<Uint8Array>());
    expectTypeOf(run).toExtend<AsyncGenerator<AgentEvent<typeof count>, AgentResult>>();
    // @ts-expect-error a number is not a body
    fromEventStream(5);
  });
});
