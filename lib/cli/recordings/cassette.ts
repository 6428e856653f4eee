/**
 * Loaders for HTTP recordings: the converted VCR cassettes (`{ api, interactions }`, see
 * `../shared/corpus/SOURCES.md`, "Converted files") and raw provider response bodies.
 *
 * For each response that holds tool calls, the follow-up is looked up in the later requests
 * of the recording: the assistant message is found again in a request's history (by the
 * first call's id, or by its position among the assistant turns when the ids were rewritten
 * or absent), and what the framework put right after it is the recorded follow-up.
 *
 * @module
 */
import { fromAnthropic } from '../../formats/anthropic.ts';
import { fromOpenAIChat } from '../../formats/openai-chat.ts';
import { fromOpenAIResponses } from '../../formats/openai-responses.ts';
import { asString } from '../../formats/shared.ts';
import type { JsonSchema } from '../../core/tool/content.ts';
import type { ToolCall } from '../../core/tool/tool.ts';
import { assembleAnthropicStream, assembleOpenAIChatStream } from './streams.ts';
import { ANY_OBJECT_SCHEMA, type LoadedRecording, type RecordedMessage, type RecordedTool, type WireFormat } from './types.ts';
import { isObjectRecord } from '../../core/values/guards.ts';

/** An assistant turn found in a request's history. */
interface HistoryTurn {
  callIds: string[];
  /** Responses API item ids (`fc_…`), which frameworks keep even when they rewrite `call_id`. */
  itemIds: string[];
  names: string[];
  /** What follows the turn: the recorded follow-up, or `undefined` when nothing answers it. */
  wire: unknown;
}

/** What one API dialect needs to be replayed. */
interface Dialect {
  format: WireFormat;
  title: string;
  /** The history carried by a request body. */
  history(body: Record<string, unknown>): unknown[];
  /** The assistant turns of a history, in order. */
  turns(history: unknown[]): HistoryTurn[];
  /** The calls of a recorded response, plus the item ids (Responses API) to find them again. */
  responseCalls(response: Record<string, unknown>): { calls: ToolCall[]; itemIds: string[] } | undefined;
  /** The tool definitions of a request; `undefined` when none were recorded. */
  tools(body: Record<string, unknown>): RecordedTool[] | undefined;
}

/** The dialect of a cassette's `api` field, or `undefined` for an unknown one. */
function dialectOf(api: unknown): Dialect | undefined {
  if (api === 'anthropic-messages') return anthropic;
  if (api === 'openai-chat-completions') return openaiChat;
  if (api === 'openai-responses') return openaiResponses;
  if (typeof api === 'string' && /generativelanguage\.googleapis\.com|:generateContent|:streamGenerateContent/.test(api)) return gemini;
  return undefined;
}

/** True when `doc` is a converted cassette whose `api` this module knows. */
export function isKnownCassette(doc: unknown): doc is { api: string; interactions: unknown[] } {
  return isObjectRecord(doc) && Array.isArray(doc.interactions) && dialectOf(doc.api) !== undefined;
}

/** True when `doc` looks like a cassette (has `interactions`), known `api` or not. */
export function looksLikeCassette(doc: unknown): boolean {
  return isObjectRecord(doc) && Array.isArray(doc.interactions);
}

/**
 * Loads a converted cassette: one {@link RecordedMessage} per response with tool calls.
 * Call {@link isKnownCassette} first.
 */
export function loadCassette(doc: { api: string; interactions: unknown[] }): LoadedRecording {
  const dialect = dialectOf(doc.api);
  if (dialect === undefined) throw new Error(`loadCassette: unknown api ${doc.api}`);
  const interactions = doc.interactions.map((interaction) => {
    const i = isObjectRecord(interaction) ? interaction : {};
    const request = isObjectRecord(i.request) && isObjectRecord(i.request.body) ? i.request.body : {};
    const response = isObjectRecord(i.response) ? i.response : {};
    return { request, response };
  });
  const messages: RecordedMessage[] = [];
  interactions.forEach(({ request, response }, n) => {
    const found = dialect.responseCalls(response);
    if (found === undefined || found.calls.length === 0) return;
    const { calls, itemIds } = found;
    const tools = dialect.tools(request);
    const notes = undefinedToolNotes(calls, tools);
    const turnsBefore = dialect.turns(dialect.history(request)).length;
    let followUp: RecordedMessage['followUp'] = {
      none: n === interactions.length - 1
        ? 'no follow-up recorded (the recording ends with this response)'
        : 'no follow-up recorded (no later request carries this assistant message)',
    };
    for (let m = n + 1; m < interactions.length; m++) {
      const later = interactions[m];
      if (later === undefined) continue;
      const turns = dialect.turns(dialect.history(later.request));
      const turn = findTurn(turns, calls, itemIds, turnsBefore);
      if (turn === undefined) continue;
      notes.unshift(...historyNotes(calls, turn));
      followUp = turn.wire === undefined
        ? { none: `no follow-up recorded (request of interaction ${m} carries the assistant message with no results after it)` }
        : { format: dialect.format, wire: turn.wire, historyCallIds: turn.callIds, source: `request of interaction ${m}` };
      break;
    }
    // Missing or repeated ids, unless the history notes already say how they were paired.
    if (!notes.some((note) => note.includes('results paired by position'))) notes.unshift(...callNotes(calls));
    const message: RecordedMessage = { label: `interaction ${n}`, calls, tools, followUp, notes };
    if (response.stream === true && Array.isArray(response.events) && dialect.format !== 'gemini') {
      message.stream = { format: dialect.format, events: response.events };
    }
    messages.push(message);
  });
  return { format: `${dialect.title} cassette`, messages, companions: [] };
}

/**
 * Finds the assistant turn that echoes a response: by the first call's id (or Responses
 * item id), else by position — the turn right after the `turnsBefore` turns the response's
 * own request held — when its first call has the same name.
 */
function findTurn(turns: HistoryTurn[], calls: ToolCall[], itemIds: string[], turnsBefore: number): HistoryTurn | undefined {
  const first = calls[0];
  if (first === undefined) return undefined;
  // Turns after those the response's own request held come first: a reused id (Bedrock's
  // `call_0`) must not find an older turn.
  const ordered = [...turns.slice(turnsBefore), ...turns.slice(0, turnsBefore)];
  if (first.id !== '') {
    const byId = ordered.find((turn) => turn.callIds.includes(first.id));
    if (byId !== undefined) return byId;
  }
  const firstItem = itemIds[0];
  if (firstItem !== undefined && firstItem !== '') {
    const byItem = ordered.find((turn) => turn.itemIds.includes(firstItem));
    if (byItem !== undefined) return byItem;
  }
  const byPosition = turns[turnsBefore];
  if (byPosition !== undefined && byPosition.names[0] === first.name) return byPosition;
  return undefined;
}

/** Irregularities of the echoed assistant message against the response the model sent. */
function historyNotes(calls: ToolCall[], turn: HistoryTurn): string[] {
  const notes: string[] = [];
  if (turn.callIds.length < calls.length) {
    notes.push(
      `the framework rewrote the assistant message in history to hold ${turn.callIds.length} of its ${calls.length} calls ` +
        `and answered only those (a runner dropping sibling calls)`,
    );
  }
  const shared = Math.min(turn.callIds.length, calls.length);
  const rewritten: string[] = [];
  for (let i = 0; i < shared; i++) {
    const produced = calls[i]?.id ?? '';
    const history = turn.callIds[i] ?? '';
    if (produced !== history) rewritten.push(`${produced === '' ? '(no id)' : produced} → ${history}`);
  }
  if (rewritten.length > 0) {
    const none = calls.every((call) => call.id === '');
    notes.push(
      none
        ? 'the model sent calls without ids; the framework assigned its own ids in history; results paired by position'
        : `the framework rewrote the call ids in history (${rewritten.join(', ')}); results paired by position`,
    );
  }
  return notes;
}

/** Notes about the calls themselves: missing and repeated ids. */
export function callNotes(calls: ToolCall[]): string[] {
  const notes: string[] = [];
  const empty = calls.filter((call) => call.id === '').length;
  if (empty > 0) notes.push(`${empty} of ${calls.length} calls carry no id (paired by position)`);
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const call of calls) {
    if (call.id === '') continue;
    if (seen.has(call.id)) repeated.add(call.id);
    seen.add(call.id);
  }
  if (repeated.size > 0) notes.push(`repeated call ids within one message: ${[...repeated].join(', ')} (paired by position)`);
  return notes;
}

/** Notes for calls whose tool the recorded request did not define. */
function undefinedToolNotes(calls: ToolCall[], tools: RecordedTool[] | undefined): string[] {
  if (tools === undefined) return [];
  const names = new Set(tools.map((tool) => tool.name));
  return calls
    .map((call, index) => ({ call, index }))
    .filter(({ call }) => !names.has(call.name))
    .map(({ call, index }) => `call #${index + 1} names tool '${call.name}', which the recorded request did not define`);
}

// ---------------------------------------------------------------------------------------
// Dialects

const anthropic: Dialect = {
  format: 'anthropic',
  title: 'Anthropic Messages',
  history: (body) => (Array.isArray(body.messages) ? body.messages : []),
  turns(history) {
    const turns: HistoryTurn[] = [];
    history.forEach((message, i) => {
      if (!isObjectRecord(message) || message.role !== 'assistant') return;
      const calls = Array.isArray(message.content) ? fromAnthropic({ content: message.content }) : [];
      const next = history[i + 1];
      const answered = isObjectRecord(next) && next.role === 'user' && Array.isArray(next.content) &&
        next.content.some((block) => isObjectRecord(block) && block.type === 'tool_result');
      turns.push({ callIds: calls.map((c) => c.id), itemIds: [], names: calls.map((c) => c.name), wire: answered ? next : undefined });
    });
    return turns;
  },
  responseCalls(response) {
    const message = response.stream === true && Array.isArray(response.events)
      ? assembleAnthropicStream(response.events)
      : isObjectRecord(response.body) ? response.body : undefined;
    if (message === undefined || !Array.isArray(message.content)) return undefined;
    return { calls: fromAnthropic({ content: message.content }), itemIds: [] };
  },
  tools(body) {
    if (!Array.isArray(body.tools) || body.tools.length === 0) return undefined;
    return body.tools.flatMap((tool) =>
      isObjectRecord(tool) && typeof tool.name === 'string' && (tool.input_schema === undefined || isObjectRecord(tool.input_schema))
        ? [{ name: tool.name, schema: schemaOrAny(tool.input_schema) }]
        : [],
    );
  },
};

const openaiChat: Dialect = {
  format: 'openai-chat',
  title: 'OpenAI Chat Completions',
  history: (body) => (Array.isArray(body.messages) ? body.messages : []),
  turns(history) {
    const turns: HistoryTurn[] = [];
    history.forEach((message, i) => {
      if (!isObjectRecord(message) || message.role !== 'assistant') return;
      const calls = fromOpenAIChat({ tool_calls: Array.isArray(message.tool_calls) ? message.tool_calls : [] });
      const answers: unknown[] = [];
      for (let j = i + 1; j < history.length; j++) {
        const next = history[j];
        if (!isObjectRecord(next) || next.role !== 'tool') break;
        answers.push(next);
      }
      turns.push({
        callIds: calls.map((c) => c.id),
        itemIds: [],
        names: calls.map((c) => c.name),
        wire: answers.length > 0 ? answers : undefined,
      });
    });
    return turns;
  },
  responseCalls(response) {
    if (response.stream === true && Array.isArray(response.events)) {
      return { calls: fromOpenAIChat(assembleOpenAIChatStream(response.events)), itemIds: [] };
    }
    if (!isObjectRecord(response.body)) return undefined;
    return { calls: fromOpenAIChat(response.body), itemIds: [] };
  },
  tools(body) {
    if (!Array.isArray(body.tools) || body.tools.length === 0) return undefined;
    return body.tools.flatMap((tool) => {
      if (!isObjectRecord(tool) || !isObjectRecord(tool.function) || typeof tool.function.name !== 'string') return [];
      return [{ name: tool.function.name, schema: schemaOrAny(tool.function.parameters) }];
    });
  },
};

const openaiResponses: Dialect = {
  format: 'openai-responses',
  title: 'OpenAI Responses',
  history: (body) => (Array.isArray(body.input) ? body.input : []),
  turns(history) {
    const turns: HistoryTurn[] = [];
    let i = 0;
    while (i < history.length) {
      if (!isAssistantItem(history[i])) {
        i++;
        continue;
      }
      const callIds: string[] = [];
      const itemIds: string[] = [];
      const names: string[] = [];
      while (i < history.length && isAssistantItem(history[i])) {
        const item = history[i] as Record<string, unknown>;
        if (item.type === 'function_call') {
          callIds.push(asString(item.call_id));
          itemIds.push(asString(item.id));
          names.push(asString(item.name));
        }
        i++;
      }
      const answers: unknown[] = [];
      while (i < history.length) {
        const item = history[i];
        if (!isObjectRecord(item) || item.type !== 'function_call_output') break;
        answers.push(item);
        i++;
      }
      turns.push({ callIds, itemIds, names, wire: answers.length > 0 ? answers : undefined });
    }
    return turns;
  },
  responseCalls(response) {
    let body: unknown = response.body;
    if (response.stream === true && Array.isArray(response.events)) {
      const completed = response.events
        .map((event) => (isObjectRecord(event) && 'data' in event ? event.data : event))
        .find((data) => isObjectRecord(data) && data.type === 'response.completed');
      body = isObjectRecord(completed) ? completed.response : undefined;
    }
    if (!isObjectRecord(body) || !Array.isArray(body.output)) return undefined;
    const itemIds = body.output
      .filter((item) => isObjectRecord(item) && item.type === 'function_call')
      .map((item) => asString((item as Record<string, unknown>).id));
    return { calls: fromOpenAIResponses(body.output), itemIds };
  },
  tools(body) {
    if (!Array.isArray(body.tools) || body.tools.length === 0) return undefined;
    return body.tools.flatMap((tool) =>
      isObjectRecord(tool) && tool.type === 'function' && typeof tool.name === 'string'
        ? [{ name: tool.name, schema: schemaOrAny(tool.parameters) }]
        : [],
    );
  },
};

function isAssistantItem(item: unknown): boolean {
  if (!isObjectRecord(item)) return false;
  if (item.type === 'function_call' || item.type === 'reasoning') return true;
  return item.role === 'assistant' && (item.type === undefined || item.type === 'message');
}

const gemini: Dialect = {
  format: 'gemini',
  title: 'Gemini generateContent',
  history: (body) => (Array.isArray(body.contents) ? body.contents : []),
  turns(history) {
    const turns: HistoryTurn[] = [];
    history.forEach((content, i) => {
      if (!isObjectRecord(content) || content.role !== 'model') return;
      const calls = geminiCalls(content);
      const next = history[i + 1];
      const parts = isObjectRecord(next) && next.role !== 'model' && Array.isArray(next.parts)
        ? next.parts.filter((part) => isObjectRecord(part) && isObjectRecord(part.functionResponse))
        : [];
      turns.push({ callIds: calls.map((c) => c.id), itemIds: [], names: calls.map((c) => c.name), wire: parts.length > 0 ? parts : undefined });
    });
    return turns;
  },
  responseCalls(response) {
    const body = response.body;
    if (!isObjectRecord(body) || !Array.isArray(body.candidates)) return undefined;
    const candidate: unknown = body.candidates[0];
    if (!isObjectRecord(candidate) || !isObjectRecord(candidate.content)) return undefined;
    return { calls: geminiCalls(candidate.content), itemIds: [] };
  },
  tools(body) {
    if (!Array.isArray(body.tools)) return undefined;
    const tools = body.tools.flatMap((tool) =>
      isObjectRecord(tool) && Array.isArray(tool.functionDeclarations) ? tool.functionDeclarations : [],
    );
    if (tools.length === 0) return undefined;
    return tools.flatMap((declaration) => {
      if (!isObjectRecord(declaration) || typeof declaration.name !== 'string') return [];
      const schema = isObjectRecord(declaration.parameters_json_schema)
        ? declaration.parameters_json_schema
        : isObjectRecord(declaration.parameters) ? lowerCaseTypes(declaration.parameters) : undefined;
      return [{ name: declaration.name, schema: schemaOrAny(schema) }];
    });
  },
};

/** Gemini `functionCall` parts → calls; Gemini sends no ids (`''`), arguments are objects. */
function geminiCalls(content: Record<string, unknown>): ToolCall[] {
  const parts = Array.isArray(content.parts) ? content.parts : [];
  return parts.flatMap((part) => {
    if (!isObjectRecord(part) || !isObjectRecord(part.functionCall)) return [];
    const fc = part.functionCall;
    const call: ToolCall = { id: asString(fc.id), name: asString(fc.name) };
    if (fc.args !== undefined) call.arguments = fc.args;
    return [call];
  });
}

/** Gemini's OpenAPI-style `parameters` spell types in capitals (`OBJECT`); JSON Schema wants lower case. */
function lowerCaseTypes(schema: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'type' && typeof value === 'string') out[key] = value.toLowerCase();
    else if (key === 'properties' && isObjectRecord(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, isObjectRecord(v) ? lowerCaseTypes(v) : v]));
    } else if (key === 'items' && isObjectRecord(value)) out[key] = lowerCaseTypes(value);
    else out[key] = value;
  }
  return out;
}

function schemaOrAny(schema: unknown): JsonSchema {
  return isObjectRecord(schema) ? schema : ANY_OBJECT_SCHEMA;
}

// ---------------------------------------------------------------------------------------
// Raw response bodies (no request, no follow-up)

/** The raw body kinds {@link rawBodyKind} recognizes. */
export type RawBodyKind = 'anthropic' | 'openai-chat' | 'cohere' | 'openai-responses';

/** Which raw response body `doc` is, or `undefined`. */
export function rawBodyKind(doc: unknown): RawBodyKind | undefined {
  if (!isObjectRecord(doc)) return undefined;
  if (doc.type === 'message' && doc.role === 'assistant' && Array.isArray(doc.content)) return 'anthropic';
  if (Array.isArray(doc.choices)) return 'openai-chat';
  if (doc.object === 'response' && Array.isArray(doc.output)) return 'openai-responses';
  if (isObjectRecord(doc.message) && Array.isArray(doc.message.tool_calls)) return 'cohere';
  return undefined;
}

/**
 * Loads a raw response body: its tool calls form one message with no tool definitions (any
 * object arguments accepted) and no follow-up.
 */
export function loadRawBody(doc: Record<string, unknown>, kind: RawBodyKind): LoadedRecording {
  const titles: Record<RawBodyKind, string> = {
    anthropic: 'Anthropic Messages response body',
    'openai-chat': 'OpenAI Chat Completions response body',
    cohere: 'Cohere v2 chat response body',
    'openai-responses': 'OpenAI Responses response body',
  };
  const calls = kind === 'anthropic' ? fromAnthropic(doc) : kind === 'openai-responses' ? fromOpenAIResponses(doc) : fromOpenAIChat(doc);
  const notes = callNotes(calls);
  if (kind === 'anthropic' && calls.length > 0 && doc.stop_reason !== 'tool_use') {
    notes.push(`stop_reason is "${asString(doc.stop_reason)}" although the message holds ${calls.length} tool_use blocks`);
  }
  const callers = kind === 'anthropic' && Array.isArray(doc.content)
    ? doc.content.filter((block) => isObjectRecord(block) && block.type === 'tool_use' && isObjectRecord(block.caller) && block.caller.type !== 'direct').length
    : 0;
  if (callers > 0) notes.push(`${callers} tool_use blocks were issued by a server tool (programmatic tool calling, \`caller\` field)`);
  for (const call of calls) {
    const wrapped = wrappedToolUses(call);
    if (wrapped > 0) {
      notes.push(`call '${call.name}' wraps ${wrapped} tool uses (the multi_tool_use.parallel quirk); replayed as the one call the model sent`);
    }
  }
  const messages: RecordedMessage[] = calls.length === 0
    ? []
    : [{ label: 'response body', calls, tools: undefined, followUp: { none: 'raw response body: no request or follow-up recorded' }, notes }];
  return { format: titles[kind], messages, companions: [] };
}

function wrappedToolUses(call: ToolCall): number {
  if (typeof call.arguments !== 'string' || !call.arguments.includes('tool_uses')) return 0;
  try {
    const parsed: unknown = JSON.parse(call.arguments);
    return isObjectRecord(parsed) && Array.isArray(parsed.tool_uses) ? parsed.tool_uses.length : 0;
  } catch {
    return 0;
  }
}

/**
 * Loads an Anthropic stream fixture (one event object per line, e.g. `*.chunks.jsonl`): the
 * assembled message's calls, with no tool definitions and no follow-up.
 */
export function loadAnthropicStream(events: unknown[]): LoadedRecording {
  const message = assembleAnthropicStream(events);
  const calls = fromAnthropic(message);
  const messages: RecordedMessage[] = calls.length === 0
    ? []
    : [{
      label: 'stream',
      calls,
      tools: undefined,
      followUp: { none: 'stream fixture: no request or follow-up recorded' },
      notes: callNotes(calls),
      stream: { format: 'anthropic', events },
    }];
  return { format: 'Anthropic Messages stream events', messages, companions: [] };
}

/** True when the records look like Anthropic Messages stream events. */
export function looksLikeAnthropicStream(records: unknown[]): boolean {
  const types = new Set(records.map((record) => (isObjectRecord(record) ? (isObjectRecord(record.data) ? record.data.type : record.type) : undefined)));
  return types.has('message_start') && (types.has('content_block_start') || types.has('message_stop'));
}
