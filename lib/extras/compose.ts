/**
 * Composing tools: a tool that calls another tool in one line ({@link callTool}), wrappers
 * that return a new tool with the same types ({@link withTimeout}, {@link withRetry},
 * {@link mapProgress}), and {@link pipeEvents}, which keeps a run's cleanup when its events
 * go through ix operators. One file per unit under `compose/`:
 *
 * | file | what |
 * | --- | --- |
 * | `compose/call-tool.ts` | `callTool`, `ToolInputError`, `resultText` |
 * | `compose/with-timeout.ts` | `withTimeout` |
 * | `compose/with-retry.ts` | `withRetry` |
 * | `compose/map-progress.ts` | `mapProgress` |
 * | `compose/pipe-events.ts` | `pipeEvents` |
 * | `compose/child-call.ts` | a child call's cancellation (the core's `CancelScope` tied to the parent's signal) and run loop, shared by the first three |
 * | `compose/types.ts` | `ToolInputOf`, `ToolProgressOf`, `ToolOutputOf`, `NormalizedOutput` |
 *
 * @module
 */
export { callTool, resultText, ToolInputError } from './compose/call-tool.ts';
export type { CallToolOptions } from './compose/call-tool.ts';
export { mapProgress } from './compose/map-progress.ts';
export { pipeEvents } from './compose/pipe-events.ts';
export { withRetry } from './compose/with-retry.ts';
export type { RetryOptions } from './compose/with-retry.ts';
export { withTimeout } from './compose/with-timeout.ts';
export type { WithTimeoutOptions } from './compose/with-timeout.ts';
export type { NormalizedOutput, ToolInputOf, ToolNameOf, ToolOutputOf, ToolProgressOf } from './compose/types.ts';
