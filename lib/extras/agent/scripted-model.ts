/**
 * `scriptedModel`: a model function that plays a script, for tests, demos and replays.
 *
 * @module
 */
import type { AgentMessage, AgentModel, AssistantMessage, ModelContext, ModelReply } from './messages.ts';

/**
 * A model that plays a script: reply *i* for the *i*-th call, whatever the history — for
 * tests, demos and replays of recorded conversations. An entry may be a message, or a
 * function of the history and context (to answer from the tool results, to stream, or to
 * wait on the signal). A message entry is handed out as a fresh copy (`structuredClone`), so
 * the run cannot change the script; the returned function's `calls` counts how many replies
 * it gave.
 *
 * @throws (from the model call, ending the run with reason `error`) an `Error` naming the
 *   turn when the script has no reply left.
 *
 * @example
 * ```ts
 * const model = scriptedModel([
 *   { role: 'assistant', content: [{ type: 'toolCall', id: 't1', name: 'read_file', arguments: { path: 'README.md' } }] },
 *   { role: 'assistant', content: [{ type: 'text', text: 'The README says hello.' }] },
 * ]);
 * ```
 */
export function scriptedModel(script: ReadonlyArray<AssistantMessage | AgentModel>): AgentModel & { readonly calls: number } {
  let calls = 0;
  const model = (messages: readonly AgentMessage[], context: ModelContext): ModelReply => {
    const entry = script[calls++];
    if (entry === undefined) throw new Error(`scriptedModel: no reply left for turn ${context.turn} (the script has ${script.length})`);
    return typeof entry === 'function' ? entry(messages, context) : structuredClone(entry);
  };
  Object.defineProperty(model, 'calls', { get: () => calls, enumerable: true });
  return model as AgentModel & { readonly calls: number };
}
