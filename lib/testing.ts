/**
 * `toolrun/testing`: test doubles for code built on toolrun. Kept out of the main entry so
 * application bundles never carry them.
 *
 * - {@link scriptedModel}: an `AgentModel` that plays a list of replies in order, for specs
 *   of `runAgent` / `agentTool` code without a provider, and for replays of recordings.
 * - {@link memoryJournal} / {@link memoryAgentJournal}: journals in memory (contract J), for
 *   specs of durable runs: stop a run midway, run it again with `journal.copy()`.
 *
 * @example
 * ```ts
 * import { runAgent } from 'toolrun';
 * import { scriptedModel } from 'toolrun/testing';
 *
 * const model = scriptedModel([{ role: 'assistant', content: [{ type: 'text', text: 'done' }] }]);
 * for await (const event of runAgent({ model, tools: [], messages: [] })) console.log(event.type);
 * ```
 *
 * @module
 */
export { scriptedModel } from './extras/agent.ts';
export { memoryAgentJournal, memoryJournal } from './extras/memory-journal.ts';
export type { MemoryAgentJournal, MemoryJournal, MemoryJournalEntry, MemoryJournalOperation, MemoryJournalOptions } from './extras/memory-journal.ts';
