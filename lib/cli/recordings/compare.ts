/**
 * Contract F4: the results toolrun produced for a recorded assistant message, converted
 * with the format adapter, against the follow-up the recording's framework sent.
 *
 * Compared: the message structure, the ids, their order, the count, each result's kind
 * (text or error, where the format has an error flag) and — for results the replayed tool
 * returned normally — the text. A difference that the recording itself explains (a runner
 * that dropped calls, rewrote ids, logged in completion order; arguments that fail the
 * recorded schema) makes the message `explained`, with the reason; any other difference
 * makes it `mismatched`.
 *
 * @module
 */
import type { CallOutcome } from '../../core/tool/tool.ts';
import { toAnthropic } from '../../formats/anthropic.ts';
import { toOpenAIChat } from '../../formats/openai-chat.ts';
import { toOpenAIResponses } from '../../formats/openai-responses.ts';
import { asString } from '../../formats/shared.ts';
import { providerBlock } from '../../core/values/content.ts';
import type { ContentBlock } from '../../core/tool/content.ts';
import type { ToolCall, ToolResultMessage } from '../../core/tool/tool.ts';
import type { RecordedFollowUp, RecordedMessage, WireFormat } from './types.ts';
import { count } from '../text.ts';
import { isObjectRecord } from '../../core/values/guards.ts';

/** One result as a wire format carries it, normalized for comparison. */
export interface WireEntry {
  /** `tool_use_id` / `tool_call_id` / `call_id` / `functionResponse.id` (`''` when absent). */
  id: string;
  /** `undefined` when the format has no error flag (OpenAI Chat, Responses, Gemini). */
  isError: boolean | undefined;
  content: ContentBlock[];
  /** Text blocks joined with `"\n"`, images as `[image <mime>]`. */
  text: string;
}

/** The entries of a wire value, and what is wrong with its structure. */
export interface WireReading {
  entries: WireEntry[];
  problems: string[];
}

/** How one replayed message came out. */
export interface Verdict {
  status: 'matched' | 'explained' | 'mismatched';
  /** Why it is `explained` or `mismatched`, one line each (empty for `matched`). */
  reasons: string[];
}

/** What the replay produced for one message. */
export interface ProducedBatch {
  /** The `tool_result` messages, in the order they were yielded (call order, O2). */
  messages: ToolResultMessage[];
  /** Each call's `tool_execution_end.outcome`, by call index. */
  outcomes: Array<CallOutcome | undefined>;
}

/**
 * Converts toolrun's results with the adapter of `format`. Gemini's entries are built
 * directly, in the recorded frameworks' own shape (`response.return_value`), not with
 * toolrun's `toGemini` (which writes `output` / `error`, the keys the API documents).
 */
function produceWire(format: WireFormat, messages: readonly ToolResultMessage[]): unknown {
  switch (format) {
    case 'anthropic':
      return toAnthropic(messages);
    case 'openai-chat':
      return toOpenAIChat(messages);
    case 'openai-responses':
      return toOpenAIResponses(messages);
    case 'gemini':
      return messages.map((m) => ({ functionResponse: { id: m.toolCallId, name: m.toolName, response: { return_value: contentText(m.content) } } }));
  }
}

/** Reads a wire value of `format` into comparable entries. */
export function readWire(format: WireFormat, wire: unknown): WireReading {
  switch (format) {
    case 'anthropic':
      return readAnthropic(wire);
    case 'openai-chat':
      return readList(wire, (item) => item.role === 'tool', 'a role:"tool" message', (item) => ({
        id: asString(item.tool_call_id),
        isError: undefined,
        content: partsToContent(item.content),
      }));
    case 'openai-responses':
      return readList(wire, (item) => item.type === 'function_call_output', 'a function_call_output item', (item) => ({
        id: asString(item.call_id),
        isError: undefined,
        content: partsToContent(item.output),
      }));
    case 'gemini':
      return readList(wire, (item) => isObjectRecord(item.functionResponse), 'a functionResponse part', (item) => {
        const response = item.functionResponse as Record<string, unknown>;
        const value = isObjectRecord(response.response) ? response.response : {};
        const text = typeof value.return_value === 'string' ? value.return_value : JSON.stringify(value);
        return { id: asString(response.id), isError: undefined, content: [{ type: 'text', text }] };
      });
  }
}

function readAnthropic(wire: unknown): WireReading {
  const problems: string[] = [];
  if (!isObjectRecord(wire) || wire.role !== 'user' || !Array.isArray(wire.content)) {
    return { entries: [], problems: ['the follow-up is not one user message with a content array'] };
  }
  const entries: WireEntry[] = [];
  let otherBefore = false;
  for (const block of wire.content) {
    if (!isObjectRecord(block)) continue;
    if (block.type !== 'tool_result') {
      if (entries.length === 0) otherBefore = true;
      continue;
    }
    if (otherBefore) {
      problems.push('a non-tool_result block comes before the tool_result blocks (F1 wants them first)');
      otherBefore = false;
    }
    entries.push(withText({ id: asString(block.tool_use_id), isError: block.is_error === true, content: partsToContent(block.content) }));
  }
  return { entries, problems };
}

function readList(
  wire: unknown,
  accept: (item: Record<string, unknown>) => boolean,
  what: string,
  read: (item: Record<string, unknown>) => Omit<WireEntry, 'text'>,
): WireReading {
  if (!Array.isArray(wire)) return { entries: [], problems: ['the follow-up is not a list'] };
  const entries: WireEntry[] = [];
  const problems: string[] = [];
  wire.forEach((item, i) => {
    if (isObjectRecord(item) && accept(item)) entries.push(withText(read(item)));
    else problems.push(`item ${i + 1} of the follow-up is not ${what}`);
  });
  return { entries, problems };
}

function withText(entry: Omit<WireEntry, 'text'>): WireEntry {
  return { ...entry, text: contentText(entry.content) };
}

/**
 * Provider result content → toolrun content blocks: a string is one text block; a list of
 * parts keeps text (`text`, `input_text`, `output_text`) and base64 images, and any other
 * part becomes its JSON text; `null`/absent is one empty text block.
 */
function partsToContent(value: unknown): ContentBlock[] {
  if (typeof value === 'string') return [{ type: 'text', text: value }];
  if (value === undefined || value === null) return [{ type: 'text', text: '' }];
  if (!Array.isArray(value)) return [{ type: 'text', text: JSON.stringify(value) }];
  return value.map((part): ContentBlock => {
    if (isObjectRecord(part) && typeof part.text === 'string') return { type: 'text', text: part.text };
    if (isObjectRecord(part) && part.type === 'image' && isObjectRecord(part.source) && typeof part.source.data === 'string') {
      return { type: 'image', data: part.source.data, mimeType: asString(part.source.media_type) };
    }
    return { type: 'text', text: JSON.stringify(part) };
  });
}

/** Text blocks joined with `"\n"`, images as `[image <mime>]`, empty text blocks skipped. */
function contentText(content: readonly ContentBlock[]): string {
  return content
    .filter((block) => !(block.type === 'text' && block.text === ''))
    .map(providerBlock)
    .map((block) => (block.type === 'text' ? block.text : `[image ${block.mimeType}]`))
    .join('\n');
}

/**
 * Pairs the recorded results with the calls: the k-th recorded result for an id answers the
 * k-th call the framework wrote back with that id (`historyCallIds`); position in that list
 * is the call's index. Returns, per call, the index of its recorded entry (or -1).
 */
export function pairRecorded(followUp: RecordedFollowUp, entries: readonly WireEntry[], callCount: number): number[] {
  const byCall = new Array<number>(callCount).fill(-1);
  const seen = new Map<string, number>();
  entries.forEach((entry, j) => {
    const k = seen.get(entry.id) ?? 0;
    seen.set(entry.id, k + 1);
    let found = -1;
    for (let i = 0, n = 0; i < followUp.historyCallIds.length; i++) {
      if (followUp.historyCallIds[i] !== entry.id) continue;
      if (n++ === k) {
        found = i;
        break;
      }
    }
    if (found >= 0 && found < callCount && byCall[found] === -1) byCall[found] = j;
  });
  return byCall;
}

/**
 * Judges one replayed message (contract F4), see the module comment.
 *
 * @param produced - what `runTools` gave for `recorded.calls`.
 */
export function judge(recorded: RecordedMessage, produced: ProducedBatch): Verdict {
  const { calls } = recorded;
  const mismatches: string[] = [];
  const explained: string[] = [...recorded.notes];

  // The runtime itself (O1, O2): one result per call, in call order, carrying the call's id.
  mismatches.push(...runtimeProblems(calls, produced));
  if (mismatches.length > 0) return { status: 'mismatched', reasons: mismatches };

  const rejected = new Set<number>();
  produced.outcomes.forEach((outcome, i) => {
    const call = calls[i];
    if (call === undefined) return;
    if (outcome === 'rejected') {
      rejected.add(i);
      explained.push(rejectionReason(i, call, produced.messages[i], recorded.notes));
    } else if (outcome !== 'ok' && outcome !== 'error') {
      mismatches.push(`call #${i + 1} '${call.name}' ended as '${String(outcome)}' in a replay without aborts or timeouts`);
    }
  });

  if ('none' in recorded.followUp) {
    explained.unshift(`${recorded.followUp.none}; checked instead: one result per call, ids, order, argument validation`);
    return verdict(mismatches, explained);
  }
  const followUp = recorded.followUp;
  const format = followUp.format;

  // The adapter's own output (F1–F3 shape): the same reader must accept it without remarks.
  const mine = readWire(format, produceWire(format, produced.messages));
  if (mine.problems.length > 0 || mine.entries.length !== calls.length || mine.entries.some((e, i) => e.id !== calls[i]?.id)) {
    mismatches.push(`the ${format} adapter's output does not hold one result per call in call order (${mine.problems.join('; ') || 'ids differ'})`);
    return verdict(mismatches, explained);
  }

  const theirs = readWire(format, followUp.wire);
  explained.push(...theirs.problems.map((p) => `recorded follow-up: ${p}`));
  const pairing = pairRecorded(followUp, theirs.entries, calls.length);
  const pairedEntries = new Set(pairing.filter((j) => j >= 0));
  theirs.entries.forEach((entry, j) => {
    if (!pairedEntries.has(j)) mismatches.push(`the recorded result for id '${entry.id}' answers no call of this message`);
  });

  const answered = pairing.filter((j) => j >= 0).length;
  const historyRewritten = recorded.notes.some((note) => note.includes('rewrote the assistant message in history'));
  if (answered < calls.length && !historyRewritten) {
    explained.push(`the framework sent back ${count(answered, 'result')} for ${count(calls.length, 'call')}`);
  }

  const order = pairing.filter((j) => j >= 0);
  if (order.some((j, k) => k > 0 && j < (order[k - 1] ?? 0))) {
    const loggedOrder = [...pairing.entries()].filter(([, j]) => j >= 0).sort(([, a], [, b]) => a - b).map(([i]) => i + 1);
    // A loader note already explains it (Claude Code logs in completion order); otherwise it is a mismatch.
    if (!recorded.notes.some((note) => note.includes('completion order'))) {
      mismatches.push(`recorded results are not in call order (recorded: calls ${loggedOrder.join(', ')})`);
    }
  }

  const idsRewritten = recorded.notes.some((note) => note.includes('rewrote the call ids') || note.includes('assigned its own'));
  pairing.forEach((j, i) => {
    const call = calls[i];
    const ours = mine.entries[i];
    const recordedEntry = theirs.entries[j];
    if (j < 0 || call === undefined || ours === undefined || recordedEntry === undefined) return;
    if (recordedEntry.id !== ours.id && !idsRewritten) {
      mismatches.push(`call #${i + 1}: the recording answers id '${recordedEntry.id}', toolrun answers '${ours.id}'`);
    }
    if (rejected.has(i)) return;
    if (ours.isError !== undefined && recordedEntry.isError !== undefined && ours.isError !== recordedEntry.isError) {
      mismatches.push(`call #${i + 1} '${call.name}': toolrun gives ${kind(ours.isError)}, the recording ${kind(recordedEntry.isError)}`);
      return;
    }
    if (produced.outcomes[i] === 'ok' && ours.text !== recordedEntry.text) {
      mismatches.push(`call #${i + 1} '${call.name}': the result text differs from the recorded text (${ours.text.length} vs ${recordedEntry.text.length} chars)`);
    }
  });
  return verdict(mismatches, explained);
}

function verdict(mismatches: string[], explained: string[]): Verdict {
  if (mismatches.length > 0) return { status: 'mismatched', reasons: [...mismatches, ...explained] };
  if (explained.length > 0) return { status: 'explained', reasons: explained };
  return { status: 'matched', reasons: [] };
}

function kind(isError: boolean): string {
  return isError ? 'an error' : 'a text result';
}

function runtimeProblems(calls: readonly ToolCall[], produced: ProducedBatch): string[] {
  const problems: string[] = [];
  if (produced.messages.length !== calls.length) {
    problems.push(`runtime: ${count(produced.messages.length, 'result')} for ${count(calls.length, 'call')} (contract O1)`);
  }
  produced.messages.forEach((message, i) => {
    const call = calls[i];
    if (call !== undefined && (message.toolCallId !== call.id || message.toolName !== call.name)) {
      problems.push(`runtime: result #${i + 1} answers '${message.toolName}' ${message.toolCallId}, call #${i + 1} is '${call.name}' ${call.id} (contract O2)`);
    }
  });
  return problems;
}

/** Why a call was rejected before running: an undefined tool (noted by the loader) or arguments that fail the schema. */
function rejectionReason(index: number, call: ToolCall, message: ToolResultMessage | undefined, notes: readonly string[]): string {
  const undefinedTool = notes.find((note) => note.startsWith(`call #${index + 1} names tool`));
  if (undefinedTool !== undefined) return `${undefinedTool}; toolrun answered with its unknown-tool error`;
  const text = message === undefined ? '' : contentText(message.content);
  const issues = text
    .split('\n')
    .filter((line) => line.startsWith('- '))
    .map((line) => line.slice(2));
  const detail = issues.length > 0 ? issues.join('; ') : (text.split('\n')[0] ?? '');
  return `call #${index + 1} '${call.name}': the recorded arguments fail the recorded schema, so toolrun answered with an error (${detail})`;
}
