/**
 * The one error a resume is refused with (contract H7–H9). Its own module so the state
 * reader (`state-envelope.ts`), the batch's checks (`resume.ts`), the agent's paused-state
 * reader (`extras/agent/paused-state.ts`) and the AI SDK approval converter
 * (`formats/ai-sdk-messages.ts`) can all throw it without importing each other.
 *
 * @module
 */

/** Why a state could not be resumed: the `code` of a {@link ResumeError}. */
export type ResumeErrorCode = 'malformed' | 'version' | 'signature' | 'expired' | 'already_resumed' | 'claim' | 'tools' | 'calls' | 'approval';

/**
 * A state given to `resume` could not be resumed; thrown by the resumed run's first
 * `next()`, before any call is touched (contract H7–H9). `code` says why:
 * - `malformed`: not a paused state of this kind (not JSON, a missing or wrong field, too
 *   large, nested too deep, too many keys or values, a `__proto__` key, inconsistent);
 * - `version`: a state of another format version (version 1, whose body was the state itself, included);
 * - `signature`: with `signingSecret`, the state is unsigned or its signature does not match;
 * - `expired`: the state's `expiresAt` (pause time + `stateTtlMs`) has passed;
 * - `already_resumed`: this state was resumed before (in this process, or as `resume.claim` says);
 * - `claim`: `resume.claim` threw; nothing was consumed, so the same resume can be retried;
 * - `tools`: a tool is missing, added, or has a different input schema;
 * - `calls`: the calls passed are not the state's calls;
 * - `approval`: a response names no pending request, answers one twice, or has no boolean `approved`.
 *
 * @example
 * ```ts
 * try { for await (const event of runTools(calls, { tools, resume: { state, approvals, claim } })) show(event); }
 * catch (error) { if (error instanceof ResumeError && error.code === 'already_resumed') return; throw error; }
 * ```
 */
export class ResumeError extends Error {
  override readonly name = 'ResumeError';
  constructor(
    readonly code: ResumeErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
