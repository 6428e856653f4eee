/**
 * `withTimeout`: a tool whose every call is limited in time, wherever it runs.
 *
 * @module
 */
import type { Tool, ToolContext } from '../../core/tool/tool.ts';
import { checkGraceMs, checkTimeoutMs, DEFAULT_GRACE_MS, invoke } from './child-call.ts';

/** Options of {@link withTimeout}. */
export interface WithTimeoutOptions {
  /**
   * How long, in ms, to wait for a tool that ignores its aborted signal before letting go of it.
   * @default 100
   */
  graceMs?: number;
}

/**
 * A tool like `tool` (same name, schema, types, `executionMode`, `timeoutMs`) whose every
 * call is limited to `ms` wherever it runs — under `runTools`, through `callTool`, or
 * called directly. At `ms` the call's signal aborts with a `TimeoutError` DOMException
 * whose message is the runtime's (`Tool "x" timed out after N ms`); if the tool has not
 * ended `graceMs` later, it is let go of (`return()` not awaited). Either way the call
 * then fails with that `TimeoutError`, even if the tool returned something after the
 * timeout (its output is dropped).
 *
 * Under `runTools` the failure is an ordinary error result (`outcome: 'error'`), its text
 * `TimeoutError: Tool "x" timed out after N ms`; the tool's own `timeoutMs` (if any) still
 * applies as well and gives `outcome: 'timed_out'`. Use the wrapper for a limit on a
 * child called with `callTool`, or to make a limit part of the tool itself.
 *
 * @param ms - the limit, in ms (> 0).
 * @throws TypeError at once when `ms` is missing or not a positive number of ms, or
 *   `options.graceMs` is not a non-negative number of ms.
 *
 * @example
 * ```ts
 * const quickSearch = withTimeout(searchTool, 5_000); // every call fails with a TimeoutError after 5 s
 * ```
 */
export function withTimeout<I, P, O, N extends string>(tool: Tool<I, P, O, N>, ms: number, options: WithTimeoutOptions = {}): Tool<I, P, O, N> {
  if (ms === undefined) throw new TypeError('withTimeout: ms is required');
  checkTimeoutMs('withTimeout', ms);
  checkGraceMs('withTimeout', options.graceMs);
  const graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
  return {
    ...tool,
    execute: (input: I, context: ToolContext) => invoke(tool, input, context, { timeoutMs: ms, graceMs, toolCallId: context.toolCallId }),
  };
}

