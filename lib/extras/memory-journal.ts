/**
 * `memoryJournal()` and `memoryAgentJournal()`: reference journals (contract J) that keep
 * their entries in memory, for tests of code built on `runTools(…, { journal })` and
 * `runAgent(…, { journal })`, and for the contract's own specs. A crash is simulated by
 * stopping a run midway (abort it, or leave its generator) and running the same batch again
 * with {@link MemoryJournal.copy}: the copy holds what an engine's store would hold — every
 * committed result, every opened call as `'started'`, every decision — and nothing else.
 *
 * Not durable: a process that ends loses them. An engine adapter (`toolrun/dbos`) keeps the
 * same entries in a database.
 *
 * @module
 */
import type {
  AgentJournal,
  JournalCall,
  JournaledDecision,
  JournaledResult,
  JournalEntry,
  JournalPrior,
  JournalValueEntry,
  ToolJournal,
} from '../core/seams/journal.ts';

/** What a {@link MemoryJournal} keeps of one call. */
export interface MemoryJournalEntry {
  /** The call as it was opened. */
  readonly call: JournalCall;
  /** `'started'`: opened, nothing committed; `'ended'`: its result is committed. */
  state: 'started' | 'ended';
  /** The journaled decision, if the call needed approval and was answered. */
  decision?: JournaledDecision;
  /** The committed result (a JSON copy), once `'ended'`. */
  result?: JournaledResult;
  /** The progress values the call yielded, in order (JSON copies). */
  progress: unknown[];
}

/** One operation the run issued, in the order it issued them ({@link MemoryJournal.log}). */
export type MemoryJournalOperation =
  | { readonly op: 'open'; readonly index: number; readonly toolCallId: string; readonly toolName: string; readonly prior: JournalPrior['state'] }
  | { readonly op: 'decide'; readonly index: number; readonly decision: JournaledDecision }
  | { readonly op: 'progress'; readonly index: number; readonly value: unknown }
  | { readonly op: 'commit'; readonly index: number; readonly result: JournaledResult };

/** Options of {@link memoryJournal}. */
export interface MemoryJournalOptions {
  /**
   * Gives `prior` as a promise and settles `decide` and `commit` on a later microtask, as an
   * engine that writes to a database does; `false`: all synchronous.
   * @default false
   */
  async?: boolean;
  /**
   * The prefix of the entries' idempotency keys: call `i`'s key is `` `${key}:${i}` ``.
   * @default 'memory'
   */
  key?: string;
  /** Keeps the calls' progress values (replayed as updates, contract J7). @default true */
  keepProgress?: boolean;
}

/**
 * A journal in memory: `RunToolsOptions.journal` for tests.
 *
 * @example
 * ```ts
 * import { runTools } from 'toolrun';
 * import { memoryJournal } from 'toolrun/testing';
 *
 * const journal = memoryJournal();
 * const controller = new AbortController();
 * for await (const event of runTools(calls, { tools, journal, signal: controller.signal })) {
 *   if (event.type === 'tool_result' && event.index === 1) break; // "crash" after two results
 * }
 * // The same batch again: calls 0 and 1 replay (not run), the others run or are answered by policy.
 * for await (const event of runTools(calls, { tools, journal: journal.copy() })) console.log(event);
 * ```
 */
export interface MemoryJournal extends ToolJournal {
  /** The entries by call index. */
  readonly entries: ReadonlyMap<number, MemoryJournalEntry>;
  /** Every operation the run issued on this journal, in order (what an engine that numbers its operations would see). */
  readonly log: readonly MemoryJournalOperation[];
  /** A new journal holding a JSON copy of these entries, and an empty log: what an engine's store holds after a crash. */
  copy(): MemoryJournal;
}

/**
 * Makes a {@link MemoryJournal}. It checks the run as an engine would: opening call `i`
 * again for a different call (another id or tool name) throws an `Error` — a journal of
 * another batch — and so does a second commit of one call (the run then throws a
 * `JournalError`, contract J9).
 *
 * @example
 * ```ts
 * const journal = memoryJournal({ async: true, key: 'wf-42' }); // call i's idempotencyKey: 'wf-42:i'
 * ```
 */
export function memoryJournal(options: MemoryJournalOptions = {}): MemoryJournal {
  return new InMemoryJournal(new Map(), options);
}

class InMemoryJournal implements MemoryJournal {
  readonly entries: Map<number, MemoryJournalEntry>;
  readonly log: MemoryJournalOperation[] = [];
  readonly #options: MemoryJournalOptions;

  constructor(entries: Map<number, MemoryJournalEntry>, options: MemoryJournalOptions) {
    this.entries = entries;
    this.#options = options;
  }

  copy(): MemoryJournal {
    const entries = new Map<number, MemoryJournalEntry>();
    for (const [index, entry] of this.entries) entries.set(index, jsonCopy(entry));
    return new InMemoryJournal(entries, this.#options);
  }

  open(call: JournalCall): JournalEntry {
    const index = call.index;
    const existing = this.entries.get(index);
    if (existing !== undefined && (existing.call.toolCallId !== call.toolCallId || existing.call.toolName !== call.toolName)) {
      throw new Error(
        `memoryJournal: call ${index} is ${JSON.stringify(call.toolName)} (id ${JSON.stringify(call.toolCallId)}), but the journal holds ${JSON.stringify(existing.call.toolName)} (id ${JSON.stringify(existing.call.toolCallId)}) there: a journal of another batch`,
      );
    }
    const prior = priorOf(existing);
    this.log.push({ op: 'open', index, toolCallId: call.toolCallId, toolName: call.toolName, prior: prior.state });
    // A call run again after a crash yields its progress again: the lost attempt's is dropped.
    if (existing !== undefined && existing.state === 'started') existing.progress = [];
    const entry: MemoryJournalEntry = existing ?? { call: { index, toolCallId: call.toolCallId, toolName: call.toolName, arguments: jsonCopy(call.arguments) }, state: 'started', progress: [] };
    this.entries.set(index, entry);
    const async = this.#options.async === true;
    const keepProgress = this.#options.keepProgress !== false;
    const log = this.log;
    const settle = (work: () => void): void | Promise<void> => (async ? Promise.resolve().then(work) : work());
    return {
      prior: async ? Promise.resolve(prior) : prior,
      idempotencyKey: `${this.#options.key ?? 'memory'}:${index}`,
      progress(value: unknown): void {
        log.push({ op: 'progress', index, value });
        if (keepProgress && entry.state === 'started') entry.progress.push(jsonCopy(value));
      },
      decide(decision: JournaledDecision): void | Promise<void> {
        log.push({ op: 'decide', index, decision });
        return settle(() => {
          entry.decision = jsonCopy(decision);
        });
      },
      commit(result: JournaledResult): void | Promise<void> {
        log.push({ op: 'commit', index, result });
        if (entry.state === 'ended') throw new Error(`memoryJournal: call ${index} is committed a second time`);
        return settle(() => {
          entry.result = jsonCopy(result);
          entry.state = 'ended';
        });
      },
    };
  }
}

function priorOf(entry: MemoryJournalEntry | undefined): JournalPrior {
  if (entry === undefined) return { state: 'new' };
  const decision = entry.decision === undefined ? {} : { decision: jsonCopy(entry.decision) };
  if (entry.state === 'started') return { state: 'started', ...decision };
  return { state: 'ended', result: jsonCopy(entry.result!), ...decision, ...(entry.progress.length > 0 ? { progress: jsonCopy(entry.progress) } : {}) };
}

/** A JSON copy: what survives an engine's serialization (`undefined` for what JSON cannot hold). */
function jsonCopy<V>(value: V): V {
  const text = JSON.stringify(value);
  return (text === undefined ? undefined : JSON.parse(text)) as V;
}

/** The agent variant of {@link MemoryJournal}: `RunAgentOptions.journal` for tests. */
export interface MemoryAgentJournal<Reply = unknown> extends AgentJournal<Reply> {
  /** The journaled model replies, by turn (JSON copies). */
  readonly replies: ReadonlyMap<number, Reply>;
  /** Each turn's batch journal, by turn. */
  readonly batches: ReadonlyMap<number, MemoryJournal>;
  /** How many times `modelReply(turn)` found no journaled reply (the model was asked): by turn. */
  readonly asked: ReadonlyMap<number, number>;
  /** A new journal holding a JSON copy of the replies and the batches' entries: what an engine's store holds after a crash. */
  copy(): MemoryAgentJournal<Reply>;
}

/**
 * Makes a {@link MemoryAgentJournal}: one reply per turn, one {@link memoryJournal} per
 * turn's batch (keys `` `${key}:${turn}:${index}` ``).
 *
 * @example
 * ```ts
 * const journal = memoryAgentJournal();
 * await drain(runAgent({ model, tools, messages, journal }));            // stopped midway…
 * await drain(runAgent({ model, tools, messages, journal: journal.copy() })); // …journaled turns are not asked again
 * ```
 */
export function memoryAgentJournal<Reply = unknown>(options: MemoryJournalOptions = {}): MemoryAgentJournal<Reply> {
  return new InMemoryAgentJournal<Reply>(new Map(), new Map(), options);
}

class InMemoryAgentJournal<Reply> implements MemoryAgentJournal<Reply> {
  readonly replies: Map<number, Reply>;
  readonly batches: Map<number, MemoryJournal>;
  readonly asked = new Map<number, number>();
  readonly #options: MemoryJournalOptions;

  constructor(replies: Map<number, Reply>, batches: Map<number, MemoryJournal>, options: MemoryJournalOptions) {
    this.replies = replies;
    this.batches = batches;
    this.#options = options;
  }

  copy(): MemoryAgentJournal<Reply> {
    const replies = new Map<number, Reply>();
    for (const [turn, reply] of this.replies) replies.set(turn, jsonCopy(reply));
    const batches = new Map<number, MemoryJournal>();
    for (const [turn, batch] of this.batches) batches.set(turn, batch.copy());
    return new InMemoryAgentJournal<Reply>(replies, batches, this.#options);
  }

  modelReply(turn: number): JournalValueEntry<Reply> {
    const journaled = this.replies.get(turn);
    const prior = journaled === undefined ? undefined : jsonCopy(journaled);
    if (prior === undefined) this.asked.set(turn, (this.asked.get(turn) ?? 0) + 1);
    const replies = this.replies;
    const async = this.#options.async === true;
    return {
      prior: async ? Promise.resolve(prior) : prior,
      commit(value: Reply): void | Promise<void> {
        if (replies.has(turn)) throw new Error(`memoryAgentJournal: the model reply of turn ${turn} is committed a second time`);
        const work = (): void => {
          replies.set(turn, jsonCopy(value));
        };
        return async ? Promise.resolve().then(work) : work();
      },
    };
  }

  batch(turn: number): ToolJournal {
    let batch = this.batches.get(turn);
    if (batch === undefined) {
      batch = memoryJournal({ ...this.#options, key: `${this.#options.key ?? 'memory'}:${turn}` });
      this.batches.set(turn, batch);
    }
    return batch;
  }
}
