/**
 * Sub-agents as tools: `agentTool` makes a tool whose body is a whole {@link runAgent} run,
 * as Claude Code's Task/Agent tool is (seed 002: "AgentTool has no hard timeout — a
 * sub-agent can run long — but maxTurns bounds it").
 *
 * Its progress is the nested run's events, each tagged with the path of call ids that
 * leads to it, so a UI can draw the tree while it runs:
 *
 * ```
 * top-level run
 * └─ call toolu_1 "explore" (agentTool)          progress { depth: 1, path: [toolu_1], event }
 *    ├─ call c1 read_file                         ← event: tool_execution_start of c1
 *    └─ call c2 "deep_dive" (agentTool)           ← event: tool_execution_start of c2
 *       └─ call d1 grep                           progress { depth: 2, path: [toolu_1, c2], event }
 * ```
 *
 * @module
 */
import * as v from 'valibot';
import {
  assistantText,
  type AgentEndReason,
  type AgentResult,
  type AgentEvent,
  type AgentMessage,
  type AgentModel,
  type AssistantMessage,
} from './agent/messages.ts';
import { DEFAULT_MAX_TURNS, runAgent } from './agent/loop.ts';
import { resultText } from './compose/call-tool.ts';
import type { ToolProgressOf } from './compose/types.ts';
import type { RunToolsOptions } from '../core/run/options.ts';
import { describeValue } from '../core/values/guards.ts';
import { textContent } from '../core/values/content.ts';
import type { InferInput, InputSchema, Tool, ToolResult } from '../core/tool/tool.ts';

/**
 * One event of a sub-agent's run, as the progress of the call that runs it.
 *
 * Events of sub-agents nested deeper are passed up as they are (not wrapped once per
 * level), their `path` extended: every progress value of an agent tool is one of these,
 * whatever the depth.
 */
export interface AgentToolProgress<T extends Tool = Tool, AfterDetails = unknown> {
  type: 'agent_progress';
  /** The name of the agent tool whose run produced `event`. */
  agent: string;
  /**
   * The call ids from the outermost agent-tool call down to the one running this
   * sub-agent: `[toolu_1]` for a sub-agent called by the top-level run, `[toolu_1, c2]`
   * for one called by that sub-agent. Each id is the call's id in its parent's run.
   */
  path: readonly string[];
  /** `path.length`: 1 for a sub-agent of the top-level run, 2 for a sub-agent of a sub-agent… */
  depth: number;
  /** The last element of `path`: the call whose run produced `event`. */
  parentToolCallId: string;
  /** The nested run's event, typed from the sub-agent's tools (narrow on `type`, then `toolName`). */
  event: AgentEvent<T, AfterDetails>;
}

/** What an agent tool's result carries in `details` (not sent to the model). */
export interface AgentToolDetails {
  reason: AgentEndReason;
  turns: number;
  /** The sub-agent's whole history, from its first user message. */
  messages: AgentMessage[];
}

/** The default input of an agent tool: the task, in words. */
export const agentToolInput = v.object({
  prompt: v.pipe(v.string(), v.description('The task for the sub-agent, with everything it needs to know: it sees nothing else of this conversation.')),
});

/**
 * Options of {@link agentTool}. Every `runTools` option but `tools`, `signal`, `resume`,
 * `journal` and `interruptedCalls` applies to the sub-agent's batches (`approve` included: a
 * sub-agent cannot pause; no journal: the sub-agent is one call of the parent's batch).
 */
export interface AgentToolOptions<S extends InputSchema, T extends readonly Tool[], AfterDetails = unknown, Name extends string = string>
  // No journal: the sub-agent is one call of the parent's batch, journaled (or run again) as a whole.
  extends Omit<RunToolsOptions<T, AfterDetails>, 'tools' | 'signal' | 'resume' | 'journal' | 'interruptedCalls'> {
  /** The tool's name, as the parent model calls it. */
  name: Name;
  /** Sent to the parent model with the tool definition: what the sub-agent is good at. */
  description?: string;
  /** The input schema. @default {@link agentToolInput} (`{ prompt: string }`) */
  input?: S;
  /** The sub-agent's model; it gets the sub-agent's own history only. */
  model: AgentModel;
  /** The sub-agent's tools (agent tools included: sub-agents nest). */
  tools: T;
  /**
   * Most model turns of one call; then the call fails with a text saying so. There is no
   * time limit by default (seed 002): set the tool's `timeoutMs` for one.
   * @default 10
   */
  maxTurns?: number;
  /**
   * The sub-agent's first messages, from the call's input.
   * @default one user message: `input.prompt` when it is a string, else the input's JSON
   */
  messages?: (input: InferInput<S>) => AgentMessage[];
  /** Per-call time limit in ms, as any tool's. @default none */
  timeoutMs?: number;
  /** As any tool's. @default 'parallel' */
  executionMode?: 'parallel' | 'sequential';
}

/** The progress type of an agent tool whose sub-agent has tools `T`: its own events, and those of deeper agent tools passed up. */
export type AgentToolProgressOf<T extends readonly Tool[], AfterDetails = unknown> =
  | AgentToolProgress<T[number], AfterDetails>
  | Extract<ToolProgressOf<T[number]>, { type: 'agent_progress' }>;

/**
 * A tool that runs a sub-agent: each call starts a {@link runAgent} with the call's
 * input as the first user message, and `ctx.signal` as its signal.
 *
 * - **Progress**: every event of the nested run, as {@link AgentToolProgress} tagged with
 *   the call's id, depth and path; deeper sub-agents' events are passed up unwrapped.
 * - **Result**: the sub-agent's final answer — the text of its last assistant message, or,
 *   when its run ended because a batch asked to terminate, the text of those results.
 *   `details` holds the reason, the turns and the nested history.
 * - **Failure** (an error result for the parent model): `maxTurns` reached without a final
 *   answer (the text says so and quotes its last words); the sub-agent's model failed (its
 *   error); a nested call needed a person's approval that no `approve` option gave (a
 *   sub-agent cannot pause: its call is one call of the parent's batch). An abort of the
 *   parent aborts the nested run and every nested tool; the call then ends interrupted like
 *   any other.
 * - No time limit unless `timeoutMs` is set (seed 002); `maxTurns` bounds the work.
 *
 * @throws TypeError at once for a malformed definition (no name, no model function,
 *   a bad `maxTurns`).
 *
 * @example
 * ```ts
 * const explore = agentTool({
 *   name: 'explore',
 *   description: 'Explores the repository read-only and reports what it found.',
 *   model, tools: [readFileTool({ root }), grepTool({ root })], maxTurns: 8,
 * });
 * for await (const event of runAgent({ model, tools: [explore, ...codingTools({ root })], messages })) { ... }
 * ```
 */
export function agentTool<const T extends readonly Tool[], S extends InputSchema = typeof agentToolInput, AfterDetails = never, Name extends string = string>(
  options: AgentToolOptions<S, T, AfterDetails, Name>,
): Tool<InferInput<S>, AgentToolProgressOf<T, AfterDetails>, ToolResult<AgentToolDetails>, Name> {
  if (options === null || typeof options !== 'object') throw new TypeError(`agentTool: options must be an object, received ${describeValue(options)}`);
  const { name, description, input, model, tools, maxTurns = DEFAULT_MAX_TURNS, messages: toMessages, timeoutMs, executionMode, ...batchOptions } = options;
  if (typeof name !== 'string' || name === '') throw new TypeError(`agentTool: options.name must be a non-empty string, received ${describeValue(name)}`);
  if (typeof model !== 'function') throw new TypeError(`agentTool: options.model must be a function, received ${describeValue(model)}`);
  if (!(maxTurns === Infinity || (Number.isInteger(maxTurns) && maxTurns > 0))) {
    throw new TypeError(`agentTool: options.maxTurns must be a positive integer or Infinity, received ${describeValue(maxTurns)}`);
  }
  const firstMessages = toMessages ?? defaultMessages;
  const tool: Tool<InferInput<S>, AgentToolProgressOf<T, AfterDetails>, ToolResult<AgentToolDetails>, Name> = {
    name,
    input: input ?? agentToolInput,
    ...(description === undefined ? {} : { description }),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    ...(executionMode === undefined ? {} : { executionMode }),
    async *execute(callInput, context) {
      const run = runAgent({ ...batchOptions, model, tools, maxTurns, messages: firstMessages(callInput), signal: context.signal });
      const path = [context.toolCallId];
      let ended = false;
      try {
        for (;;) {
          const step = await run.next();
          if (step.done === true) {
            ended = true;
            return answer(name, maxTurns, step.value, context.signal);
          }
          const event = step.value;
          const nested = event.type === 'tool_execution_update' ? asAgentProgress(event.progress) : undefined;
          if (nested !== undefined) {
            // A deeper sub-agent's event: passed up as it is, one level deeper.
            const inner = [...path, ...nested.path];
            yield { ...nested, path: inner, depth: inner.length } as AgentToolProgressOf<T, AfterDetails>;
          } else {
            yield { type: 'agent_progress', agent: name, path, depth: 1, parentToolCallId: context.toolCallId, event } as AgentToolProgressOf<T, AfterDetails>;
          }
        }
      } finally {
        // Returned early (the parent run stopped or let go of this call): stop the nested
        // run now — its own cleanup aborts its model call and returns its tools (A5).
        if (!ended) void run.return(undefined as never).catch(() => {});
      }
    },
  };
  return tool;
}

function defaultMessages(input: unknown): AgentMessage[] {
  const prompt = (input as { prompt?: unknown } | null)?.prompt;
  return [{ role: 'user', content: typeof prompt === 'string' ? prompt : JSON.stringify(input) }];
}

/** A progress value that is an agent tool's own (from a nested agent tool), else `undefined`. */
function asAgentProgress(value: unknown): AgentToolProgress | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const p = value as Partial<AgentToolProgress>;
  return p.type === 'agent_progress' && Array.isArray(p.path) && typeof p.event === 'object' ? (p as AgentToolProgress) : undefined;
}

/** The call's result from the nested run's end; throws for the endings that are failures. */
function answer(name: string, maxTurns: number, result: AgentResult, signal: AbortSignal): ToolResult<AgentToolDetails> {
  const details: AgentToolDetails = { reason: result.reason, turns: result.turns, messages: result.messages };
  const last = lastAssistant(result.messages);
  switch (result.reason) {
    case 'completed':
      return { content: textContent(last === undefined ? '' : assistantText(last)), details };
    case 'terminated': {
      // The results of the batch that asked to stop are the answer (a "submit" tool).
      const tail: string[] = [];
      for (let i = result.messages.length - 1; i >= 0; i--) {
        const message = result.messages[i]!;
        if (message.role !== 'tool') break;
        tail.unshift(resultText(message));
      }
      return { content: textContent(tail.join('\n')), details };
    }
    case 'max_turns': {
      const words = last === undefined ? '' : assistantText(last).trim();
      throw new Error(
        `Sub-agent "${name}" reached its limit of ${maxTurns} turns without a final answer.` +
          (words === '' ? '' : ` Its last message: ${words.length > 500 ? `${words.slice(0, 500)}…` : words}`),
      );
    }
    case 'aborted':
      throw signal.reason ?? new DOMException(`Sub-agent "${name}" was aborted`, 'AbortError');
    case 'error':
      throw result.error;
    case 'paused': {
      const names = [...new Set((result.paused?.requests ?? []).map((request) => request.toolName))].join(', ');
      throw new Error(
        `Sub-agent "${name}" stopped: its calls to ${names} need a person's approval, which cannot be asked for inside a sub-agent (give the agent tool an approve option to answer them during the run).`,
      );
    }
  }
}

function lastAssistant(messages: readonly AgentMessage[]): AssistantMessage | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role === 'assistant') return message;
  }
  return undefined;
}
