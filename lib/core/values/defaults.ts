/**
 * Shared defaults and limits of the core, in one place: `runTools`' option defaults, and the
 * limits the runtime applies on its own. Other parts (composition, the agent loop, MCP) read
 * them from here rather than repeating a number.
 *
 * @module
 */

/** Defaults of `RunToolsOptions`. */
export const DEFAULTS = {
  /** Calls run concurrently (contract S1). */
  mode: 'parallel',
  /** Most calls active at once in parallel mode (S1). */
  maxConcurrency: 10,
  /** How long, in ms, a tool that ignores its aborted signal is waited for (A3, A5). */
  abortGraceMs: 100,
  /** Longest text of one result, in UTF-16 code units, over all its blocks (case C20). */
  maxResultChars: 100_000,
  /**
   * Longest paused state read back, in characters (UTF-16 code units) of its JSON text (H9):
   * about 7 times a 1,000-call batch with 2 KB results (docs/adr/0014-paused-state.md).
   */
  maxStateChars: 16 * 1024 * 1024,
  /** How long a paused state can be resumed, in ms from the pause (H7): a day. */
  stateTtlMs: 24 * 60 * 60 * 1000,
} as const;

/** Longest delay a Node timer honours, in ms; a longer limit (or `Infinity`) means none. */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * Most calls handed out in one scheduling pass. The run delivers their events before the
 * next slice, so a 100,000-call batch does not keep every call's state alive at once (the
 * young-generation gc would copy all of it).
 */
export const HAND_OUT_SLICE = 64;
