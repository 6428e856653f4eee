import { isObjectRecord } from '../../core/values/guards.ts';
/**
 * Assembling the assistant message of a recorded stream, so that the format adapters see
 * the same shape as a non-streamed body.
 *
 * @module
 */

/**
 * Builds an Anthropic assistant message `{ role, content }` from Messages stream events
 * (`message_start`, `content_block_start`, `content_block_delta`, `content_block_stop`, …).
 *
 * A `tool_use` block's `input` is the concatenation of its `input_json_delta.partial_json`
 * fragments, kept as a string (possibly `""` for a no-argument call, corpus file
 * `anthropic/vercel-ai__anthropic-tool-no-args.chunks.jsonl`); the placeholder `input: {}`
 * of `content_block_start` is used only when no fragment arrived. Text deltas are joined
 * into their text block. Accepts both the SSE shape `{ event, data }` and bare event
 * objects (one JSON object per line). Events of other types (`ping`, `message_delta`,
 * `error`) are skipped; `message_delta.delta.stop_reason` is copied.
 */
export function assembleAnthropicStream(events: readonly unknown[]): { role: 'assistant'; content: unknown[]; stop_reason?: unknown } {
  const blocks = new Map<number, Record<string, unknown>>();
  const fragments = new Map<number, string[]>();
  let stopReason: unknown;
  for (const raw of events) {
    const data = isObjectRecord(raw) && 'data' in raw ? raw.data : raw;
    if (!isObjectRecord(data)) continue;
    const index = typeof data.index === 'number' ? data.index : -1;
    switch (data.type) {
      case 'content_block_start':
        if (isObjectRecord(data.content_block)) blocks.set(index, { ...data.content_block });
        break;
      case 'content_block_delta': {
        const block = blocks.get(index);
        const delta = data.delta;
        if (block === undefined || !isObjectRecord(delta)) break;
        if (delta.type === 'input_json_delta' && typeof delta.partial_json === 'string') {
          const parts = fragments.get(index) ?? [];
          parts.push(delta.partial_json);
          fragments.set(index, parts);
        } else if (delta.type === 'text_delta' && typeof delta.text === 'string') {
          block.text = `${typeof block.text === 'string' ? block.text : ''}${delta.text}`;
        } else if (delta.type === 'thinking_delta' && typeof delta.thinking === 'string') {
          block.thinking = `${typeof block.thinking === 'string' ? block.thinking : ''}${delta.thinking}`;
        }
        break;
      }
      case 'message_delta':
        if (isObjectRecord(data.delta) && data.delta.stop_reason !== undefined) stopReason = data.delta.stop_reason;
        break;
      default:
        break;
    }
  }
  const content = [...blocks.entries()]
    .sort(([a], [b]) => a - b)
    .map(([index, block]) => {
      const parts = fragments.get(index);
      return parts === undefined ? block : { ...block, input: parts.join('') };
    });
  return stopReason === undefined ? { role: 'assistant', content } : { role: 'assistant', content, stop_reason: stopReason };
}

/**
 * Builds an OpenAI Chat Completions assistant message `{ role, content, tool_calls }` from
 * `chat.completion.chunk` events.
 *
 * Tool calls are assembled by `delta.tool_calls[].index`: the first delta of a call brings
 * `id`, `type` and `function.name`; later ones only argument fragments (llama-stack spells
 * the absent fields out as `null`, which is skipped). Fragments are joined into the raw
 * `arguments` string. Only the first choice is read; the `"[DONE]"` sentinel and chunks
 * without choices (usage) are skipped. Writer's chunks carry both `message` and `delta`;
 * only `delta` is read.
 */
export function assembleOpenAIChatStream(events: readonly unknown[]): { role: 'assistant'; content: string | null; tool_calls: unknown[] } {
  const calls = new Map<number, { id: string | undefined; type: string | undefined; name: string | undefined; args: string[] }>();
  let text: string | null = null;
  for (const raw of events) {
    const data = isObjectRecord(raw) && 'data' in raw ? raw.data : raw;
    if (!isObjectRecord(data) || !Array.isArray(data.choices)) continue;
    const choice: unknown = data.choices[0];
    if (!isObjectRecord(choice) || !isObjectRecord(choice.delta)) continue;
    const delta = choice.delta;
    if (typeof delta.content === 'string') text = (text ?? '') + delta.content;
    if (!Array.isArray(delta.tool_calls)) continue;
    for (const part of delta.tool_calls as unknown[]) {
      if (!isObjectRecord(part)) continue;
      const index = typeof part.index === 'number' ? part.index : calls.size;
      const call = calls.get(index) ?? { id: undefined, type: undefined, name: undefined, args: [] };
      if (typeof part.id === 'string' && call.id === undefined) call.id = part.id;
      if (typeof part.type === 'string' && call.type === undefined) call.type = part.type;
      const fn = part.function;
      if (isObjectRecord(fn)) {
        if (typeof fn.name === 'string' && call.name === undefined) call.name = fn.name;
        if (typeof fn.arguments === 'string') call.args.push(fn.arguments);
      }
      calls.set(index, call);
    }
  }
  const toolCalls = [...calls.entries()]
    .sort(([a], [b]) => a - b)
    .map(([, call]) => ({
      id: call.id ?? '',
      type: call.type ?? 'function',
      function: { name: call.name ?? '', arguments: call.args.join('') },
    }));
  return { role: 'assistant', content: text, tool_calls: toolCalls };
}
