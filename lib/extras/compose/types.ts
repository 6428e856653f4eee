/**
 * Types that read a tool's own types back out of it, for wrappers and callers.
 *
 * @module
 */
import type { Tool, ToolDetailsOf, ToolResult } from '../../core/tool/tool.ts';

/** The validated input type of a tool. */
export type ToolInputOf<T> = T extends Tool<infer I, unknown, unknown> ? I : never;
/** What a tool yields as progress (`never` for a tool without progress). */
export type ToolProgressOf<T> = T extends Tool<never, infer P, unknown> ? P : never;
/** What a tool's `execute` returns, before normalization. */
export type ToolOutputOf<T> = T extends Tool<never, unknown, infer O> ? O : never;
/** A tool's name as a literal type (`string` for a tool whose name is not a literal). */
export type ToolNameOf<T> = T extends Tool<never, unknown, unknown, infer N> ? N : never;

/**
 * What `callTool` returns for a tool whose `execute` returns `O`: the normalized
 * {@link ToolResult} (the rule of `normalizeToolOutput`). A tool that already returns
 * `ToolResult<D>` keeps its `details` type; a string becomes `ToolResult<never>` (content
 * only); any other plain value is its own `details` type; an `unknown` output gives
 * `ToolResult<unknown>`.
 */
export type NormalizedOutput<O> = ToolResult<ToolDetailsOf<O>>;
