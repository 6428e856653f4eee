/**
 * Reading a streamed model reply: text deltas become events, calls go to the batch as they
 * arrive, and the assistant message is assembled on the way.
 *
 * @module
 */
import { abortable } from 'abort-controller-x';
import type { Channel } from '../../core/streams/channel.ts';
import { closeWithoutWaiting } from '../../core/streams/merge.ts';
import type { ToolCall } from '../../core/tool/tool.ts';
import { toolCallsOf, type AgentEvent, type AssistantContent, type AssistantMessage, type ModelStreamEvent, type StopReason, type ToolCallContent } from './messages.ts';

/** How a model stream ended. */
export type StreamEnd =
  | { kind: 'ended'; stopReason: StopReason | undefined; final: AssistantMessage | undefined }
  | { kind: 'aborted' }
  | { kind: 'error'; error: unknown };

/**
 * Reads the model's stream: text deltas become `message_update` events, calls go to the
 * channel (and the message). Never throws: an abort or a failure is its return value.
 * Each `next()` is raced with the signal, so a stream that ignores it cannot hold the run.
 */
export async function* readModelStream(
  stream: AsyncIterable<ModelStreamEvent | ToolCall>,
  turn: number,
  signal: AbortSignal,
  channel: Channel<ToolCall>,
  builder: MessageBuilder,
): AsyncGenerator<AgentEvent, StreamEnd, undefined> {
  let iterator: AsyncIterator<ModelStreamEvent | ToolCall, unknown, undefined> | undefined;
  let settled = false;
  let stopReason: StopReason | undefined;
  try {
    iterator = stream[Symbol.asyncIterator]() as AsyncIterator<ModelStreamEvent | ToolCall, unknown, undefined>;
    for (;;) {
      let step: IteratorResult<ModelStreamEvent | ToolCall, unknown>;
      try {
        step = await abortable(signal, iterator.next());
      } catch (error) {
        if (signal.aborted) return { kind: 'aborted' };
        settled = true;
        return { kind: 'error', error };
      }
      if (step.done === true) {
        settled = true;
        const final = isAssistantMessage(step.value) ? step.value : undefined;
        return { kind: 'ended', stopReason: stopReason ?? final?.stopReason ?? stopReasonOfStreamEnd(step.value), final };
      }
      const item = step.value as ModelStreamEvent | ToolCall | null;
      if (item === null || typeof item !== 'object') continue;
      if (!('type' in item) || item.type === undefined) {
        const call = item as ToolCall;
        builder.call(call);
        channel.push(call);
      } else if (item.type === 'tool_call') {
        builder.call(item.call);
        channel.push(item.call);
      } else if (item.type === 'text_delta' && typeof item.text === 'string') {
        builder.text(item.text);
        yield { type: 'message_update', turn, text: item.text };
      } else if (item.type === 'stop') {
        stopReason = item.stopReason;
      }
    }
  } catch (error) {
    settled = true;
    return { kind: 'error', error };
  } finally {
    channel.close();
    // Not awaited: a stream parked in a network read would hold the run (merge's M5 rule).
    if (!settled && iterator !== undefined) closeWithoutWaiting(iterator);
  }
}

/** A stream adapter's return value (`ToolCallStreamEnd`) → a stop reason. */
function stopReasonOfStreamEnd(value: unknown): StopReason | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const status = (value as { status?: unknown }).status;
  if (status === 'truncated') return 'length';
  if (status === 'broken') return 'error';
  return undefined;
}

/** Builds the assistant message of a streamed reply: text deltas and calls, in arrival order. */
export class MessageBuilder {
  readonly content: AssistantContent[] = [];
  readonly calls: ToolCall[] = [];

  text(delta: string): void {
    const last = this.content.at(-1);
    if (last?.type === 'text') last.text += delta;
    else this.content.push({ type: 'text', text: delta });
  }

  call(call: ToolCall): void {
    this.calls.push(call);
    const block: ToolCallContent = { type: 'toolCall', id: call.id, name: call.name };
    if (call.arguments !== undefined) block.arguments = call.arguments;
    if (call.incomplete !== undefined) block.incomplete = call.incomplete;
    this.content.push(block);
  }

  /**
   * The message: `final` (the stream's return value) when it holds exactly the calls that
   * were streamed — same ids, same order — since it is the provider's own (thinking
   * signatures included); else the one assembled from the stream.
   */
  message(stopReason: StopReason | undefined, final?: AssistantMessage): AssistantMessage {
    const reason = stopReason ?? (this.calls.length > 0 ? 'toolUse' : 'stop');
    if (final !== undefined) {
      const ids = toolCallsOf(final).map((call) => call.id);
      if (ids.length === this.calls.length && ids.every((id, i) => id === this.calls[i]!.id)) return { ...final, content: [...final.content], stopReason: reason };
    }
    return { role: 'assistant', content: [...this.content], stopReason: reason };
  }
}

/** True for an object shaped as an {@link AssistantMessage} (`role: 'assistant'`, a `content` array). */
export function isAssistantMessage(value: unknown): value is AssistantMessage {
  return typeof value === 'object' && value !== null && (value as { role?: unknown }).role === 'assistant' && Array.isArray((value as { content?: unknown }).content);
}
