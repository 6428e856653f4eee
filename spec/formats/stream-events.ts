/**
 * Event generators for the stream adapter specs: one provider's events for a message of tool
 * calls, then the ways a stream can be out of order — blocks interleaved, closing events
 * missing, a duplicate start at an open index (Anthropic), an index reused with a new id
 * (Chat), events after the message's stop event, a stream cut short — and the oracle the
 * property checks: which call ids the stream showed a start for.
 */
import fc from 'fast-check';

export type Provider = 'anthropic' | 'chat' | 'responses';

/** One call as the model meant it: its id, its arguments, and where its JSON text is cut into fragments. */
export interface ModelCall {
  id: string;
  args: Record<string, unknown>;
  /** Cut positions in `JSON.stringify(args)` (any order, repeats allowed). */
  cuts: number[];
}

/** `text` cut at `cuts` (positions clamped to the text), in order; pieces may be empty or split an escape. */
export function fragments(text: string, cuts: readonly number[]): string[] {
  const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const out: string[] = [];
  let from = 0;
  for (const p of points) {
    out.push(text.slice(from, p));
    from = p;
  }
  out.push(text.slice(from));
  return out;
}

// ---------------------------------------------------------------------------------------
// Anthropic

export const anthropic = {
  start: (index: number, id: string, name = 'echo') => ({ type: 'content_block_start', index, content_block: { type: 'tool_use', id, name, input: {} } }),
  text: (index: number) => ({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } }),
  delta: (index: number, partial_json: string) => ({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } }),
  stop: (index: number) => ({ type: 'content_block_stop', index }),
  end: (stop_reason = 'tool_use') => [{ type: 'message_delta', delta: { stop_reason } }, { type: 'message_stop' }],
};

// ---------------------------------------------------------------------------------------
// OpenAI Chat Completions

const chunk = (delta: object, finish_reason: string | null = null) => ({ object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason }] });
export const chat = {
  first: (index: number, id: string, fragment = '', name: unknown = 'echo') =>
    chunk({ tool_calls: [{ index, id, type: 'function', function: { name, arguments: fragment } }] }),
  args: (index: number, fragment: string) => chunk({ tool_calls: [{ index, function: { arguments: fragment } }] }),
  end: (reason = 'tool_calls') => [chunk({}, reason)],
};

// ---------------------------------------------------------------------------------------
// OpenAI Responses

const item = (n: number | string, callId: string, args: string, name: unknown = 'echo') => ({ type: 'function_call', id: `fc_${n}`, call_id: callId, name, arguments: args });
export const responses = {
  added: (index: number, callId: string, name: unknown = 'echo', n: number | string = index) => ({
    type: 'response.output_item.added',
    output_index: index,
    item: { ...item(n, callId, '', name), status: 'in_progress' },
  }),
  delta: (index: number, delta: string, n: number | string = index) => ({ type: 'response.function_call_arguments.delta', item_id: `fc_${n}`, output_index: index, delta }),
  argsDone: (index: number, args: string, n: number | string = index) => ({ type: 'response.function_call_arguments.done', item_id: `fc_${n}`, output_index: index, arguments: args }),
  done: (index: number, callId: string, args: string, name: unknown = 'echo', n: number | string = index) => ({
    type: 'response.output_item.done',
    output_index: index,
    item: { ...item(n, callId, args, name), status: 'completed' },
  }),
  end: (output: unknown[] = []) => [{ type: 'response.completed', response: { status: 'completed', output } }],
  finalItem: (n: number | string, callId: string, args: string) => ({ ...item(n, callId, args), status: 'completed' }),
};

/** The events of one call at position `index`; `closing` marks the events that close it (droppable), `piece` the argument fragment an event carries. */
function callEvents(provider: Provider, index: number, call: ModelCall): Array<{ event: unknown; closing: boolean; piece?: string }> {
  const text = JSON.stringify(call.args);
  const pieces = fragments(text, call.cuts);
  const open = (event: unknown) => ({ event, closing: false });
  const close = (event: unknown) => ({ event, closing: true });
  if (provider === 'chat') {
    return [{ event: chat.first(index, call.id, pieces[0]), closing: false, piece: pieces[0]! }, ...pieces.slice(1).map((p) => ({ event: chat.args(index, p), closing: false, piece: p }))];
  }
  switch (provider) {
    case 'anthropic':
      return [open(anthropic.start(index, call.id)), ...pieces.map((p) => open(anthropic.delta(index, p))), close(anthropic.stop(index))];
    case 'responses':
      return [
        open(responses.added(index, call.id)),
        ...pieces.map((p) => open(responses.delta(index, p))),
        close(responses.argsDone(index, text)),
        close(responses.done(index, call.id, text)),
      ];
  }
}

/** How a generated stream departs from a well-formed one. All fields are off in a clean scenario. */
export interface Mess {
  /** Per call: drop its closing events (Anthropic `content_block_stop`, Responses `…arguments.done` and `output_item.done`). */
  dropClosing: boolean[];
  /** Insert a second start at the index of call `index % n`, at position `at` of the merged events, for a new call `dup_0` with `args`. */
  duplicate: { index: number; at: number; args: Record<string, unknown> } | null;
  /** Move this many of the last message events to after the stop event. */
  late: number;
  /** Cut the stream at this position (no stop event): the adapter sees a stream that ended early. */
  cutAt: number | null;
  /** Responses: `response.completed` lists every call's final item (the fallback for a missing `output_item.done`). */
  finalOutput: boolean;
}

export interface Scenario {
  provider: Provider;
  calls: ModelCall[];
  /** Which call's next event comes next, as indices taken modulo the calls left (a random merge that keeps each call's own order). */
  schedule: number[];
  mess: Mess | null;
}

/**
 * The events of a scenario, in the order the adapter reads them; the call ids the stream
 * showed a start for; and, per id, the arguments a run may have: the model's own — or, for
 * Chat, `{}` when not one character of the call's arguments arrived before `finish_reason`
 * (the message ends there: a call with no argument text is a no-argument call).
 */
export function buildEvents(scenario: Scenario): { events: unknown[]; started: string[]; argsById: Map<string, Record<string, unknown>>; allowed: (id: string) => unknown[] } {
  const { provider, calls, schedule, mess } = scenario;
  const argsById = new Map(calls.map((c) => [c.id, c.args]));
  const pieceOf = new Map<unknown, { id: string; piece: string }>();
  const lists = calls.map((call, i) =>
    callEvents(provider, i, call)
      .filter((e) => !(e.closing && mess?.dropClosing[i] === true))
      .map((e) => {
        if (e.piece !== undefined) pieceOf.set(e.event, { id: call.id, piece: e.piece });
        return e;
      }),
  );
  // A random merge of the per-call lists.
  const merged: unknown[] = [];
  const left = lists.map((l) => [...l]);
  let step = 0;
  for (;;) {
    const open = left.filter((l) => l.length > 0);
    if (open.length === 0) break;
    const pick = open[(schedule[step++ % Math.max(1, schedule.length)] ?? 0) % open.length]!;
    merged.push(pick.shift()!.event);
  }
  let events = merged;
  let lateEvents: unknown[] = [];
  let cut = false;
  if (mess !== null) {
    if (mess.duplicate !== null && calls.length > 0) {
      const index = mess.duplicate.index % calls.length;
      const text = JSON.stringify(mess.duplicate.args);
      argsById.set('dup_0', mess.duplicate.args);
      const inserted =
        provider === 'anthropic'
          ? [anthropic.start(index, 'dup_0'), anthropic.delta(index, text), anthropic.stop(index)]
          : provider === 'chat'
            ? [chat.first(index, 'dup_0', text)]
            : [responses.added(index, 'dup_0', 'echo', 'dup'), responses.delta(index, text, 'dup'), responses.done(index, 'dup_0', text, 'echo', 'dup')];
      const at = mess.duplicate.at % (events.length + 1);
      events = [...events.slice(0, at), ...inserted, ...events.slice(at)];
    }
    if (mess.late > 0) {
      const keep = Math.max(0, events.length - mess.late);
      lateEvents = events.slice(keep);
      events = events.slice(0, keep);
    }
    if (mess.cutAt !== null) {
      events = events.slice(0, mess.cutAt % (events.length + 1));
      cut = true;
    }
  }
  const finalOutput = mess?.finalOutput === true && provider === 'responses' ? calls.map((c, i) => responses.finalItem(i, c.id, JSON.stringify(c.args))) : [];
  const endEvents = provider === 'anthropic' ? anthropic.end() : provider === 'chat' ? chat.end() : responses.end(finalOutput);
  const all = cut ? events : [...events, ...endEvents, ...lateEvents];
  const textBeforeEnd = new Map<string, string>();
  for (const e of events) {
    const owned = pieceOf.get(e);
    if (owned !== undefined) textBeforeEnd.set(owned.id, (textBeforeEnd.get(owned.id) ?? '') + owned.piece);
  }
  const allowed = (id: string): unknown[] => {
    const own = argsById.get(id);
    return provider === 'chat' && !cut && textBeforeEnd.get(id) === '' ? [own, {}] : [own];
  };
  return { events: all, started: startedIds(provider, all), argsById, allowed };
}

/** The call ids of every start the events show (Responses: an item `added`, `done`, or listed in `response.completed`), each once. */
export function startedIds(provider: Provider, events: readonly unknown[]): string[] {
  const seen = new Set<string>();
  for (const e of events as Array<Record<string, any>>) {
    if (provider === 'anthropic' && e.type === 'content_block_start' && e.content_block?.type === 'tool_use') seen.add(e.content_block.id);
    if (provider === 'chat') for (const t of e.choices?.[0]?.delta?.tool_calls ?? []) if (typeof t.id === 'string') seen.add(t.id);
    if (provider === 'responses') {
      if ((e.type === 'response.output_item.added' || e.type === 'response.output_item.done') && e.item?.type === 'function_call') seen.add(e.item.call_id);
      if (e.type === 'response.completed') for (const i of e.response?.output ?? []) seen.add(i.call_id);
    }
  }
  return [...seen];
}

/** Characters that stress a JSON scanner: quotes, backslashes, brackets, whitespace, non-ASCII. */
const nasty = fc.string({ unit: fc.constantFrom('a', 'b', '"', '\\', '{', '}', '[', ']', ' ', '\n', 'é', '😀', ':', ','), maxLength: 5 });

/** Tool arguments: a small object whose keys and strings are full of JSON syntax. */
export const argsArbitrary: fc.Arbitrary<Record<string, unknown>> = fc.dictionary(
  nasty.filter((k) => k !== '__proto__'),
  fc.oneof(nasty, fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.oneof(fc.integer(), nasty), { maxLength: 3 }), fc.dictionary(nasty, nasty, { maxKeys: 2 })),
  { maxKeys: 3 },
);

/** A scenario for `provider`: 1–4 calls, a random merge, and (`messy`) random departures from a well-formed stream. */
export function scenarioArbitrary(provider: Provider, messy: boolean): fc.Arbitrary<Scenario> {
  const calls = fc
    .array(fc.record({ args: argsArbitrary, cuts: fc.array(fc.nat(200), { maxLength: 6 }) }), { minLength: 1, maxLength: 4 })
    .map((cs) => cs.map((c, i) => ({ id: `call_${i}`, ...c })));
  const mess: fc.Arbitrary<Mess | null> = messy
    ? fc.record({
        dropClosing: fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }),
        duplicate: fc.option(fc.record({ index: fc.nat(3), at: fc.nat(60), args: argsArbitrary }), { nil: null }),
        late: fc.oneof(fc.constant(0), fc.nat(6)),
        cutAt: fc.option(fc.nat(60), { nil: null, freq: 4 }),
        finalOutput: fc.boolean(),
      })
    : fc.constant(null);
  return fc.record({ provider: fc.constant(provider), calls, schedule: fc.array(fc.nat(7), { maxLength: 40 }), mess });
}
