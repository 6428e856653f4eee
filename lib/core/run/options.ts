/**
 * The options of `runTools`, the hook contexts, and the checks of `runTools`' arguments.
 *
 * @module
 */
import type { ResumeOptions, ToolApprovalHandler } from '../approval/approval.ts';
import { assertToolShape } from '../schema/define-tool.ts';
import { describeValue } from '../values/guards.ts';
import type { ContentBlock } from '../tool/content.ts';
import type { Tool, ToolCall } from '../tool/tool.ts';
import { checkTracingOptions, type RunTracing, type TraceHeaders } from '../seams/tracing.ts';
import type { NO_CLIENT } from '../values/client.ts';
import type { ToolClient } from '../tool/client.ts';
import type { InterruptedCallPolicy, ToolJournal } from '../seams/journal.ts';

/** What `beforeToolCall` receives. */
export interface BeforeToolCallContext {
  toolCall: ToolCall;
  /** Position of the call in the batch. */
  index: number;
  tool: Tool;
  /** The validated arguments `execute` will receive; the hook may mutate them (no revalidation, as in seed 000). */
  args: unknown;
  /** The run's signal: aborted on run abort or consumer exit. */
  signal: AbortSignal;
}

/**
 * What `beforeToolCall` may return: `{ block: true, reason }` turns the call into an error
 * result (its text is `reason`) and the tool does not run.
 *
 * @example
 * ```ts
 * beforeToolCall: ({ tool }) =>
 *   tool.name === 'delete_repo' ? { block: true, reason: 'Deleting repositories is not allowed.', terminate: true } : undefined,
 * ```
 */
export interface BeforeToolCallResult {
  /** `true` blocks the call. Anything else allows it. */
  block?: boolean;
  /** The error text the model gets for a blocked call. @default a sentence saying the application blocked the call */
  reason?: string;
  /**
   * `true` (without `block`): the call needs a person's approval (contract H1). It is asked
   * about with the run's `approve` option, or deferred (the batch pauses) when there is none
   * or it answers `undefined`; once approved it runs without this hook being asked again.
   * `reason` is then the request's text for the person, not for the model.
   * @default false
   */
  needsApproval?: boolean;
  /**
   * With `block: true`: also end the agent loop after this batch — `ToolBatch.terminate`
   * becomes true whatever the other results say (contract P6). The blocked call's result
   * stays an ordinary error result, so the conversation stays valid for the provider; the
   * batch's other calls still run. Ignored without `block: true`.
   * @default false
   */
  terminate?: boolean;
}

/** What `afterToolCall` receives: the result before any override. */
export interface AfterToolCallContext extends BeforeToolCallContext {
  result: { content: ContentBlock[]; details?: unknown; meta?: Record<string, unknown>; terminate?: boolean };
  isError: boolean;
}

/**
 * Field-by-field overrides from `afterToolCall` (contract P3: no deep merge; `undefined`
 * keeps the field, and so does `null` for every field but `details`, which `null` replaces). Only these fields are read: any other field of the hook's answer
 * (`usage`, `cost`…) is ignored — put such data in `meta`, which does not replace the tool's
 * own `details` (docs/adr/0005-results.md).
 *
 * @example
 * ```ts
 * afterToolCall: ({ result }) => ({ meta: { usage: { outputChars: result.content.length } } }),
 * ```
 *
 * @typeParam Details - the type of a `details` override; the run's events type `details`
 *   as the tool's own details or this. @default unknown
 */
export interface AfterToolCallResult<Details = unknown> {
  content?: ContentBlock[];
  details?: Details;
  /**
   * Data about the call (token usage, cost, timings): lands on the result message's `meta`
   * and the `tool_execution_end` event's `result.meta`, never sent to the model. Must be a
   * plain object; anything else makes the result an error naming the hook.
   */
  meta?: Record<string, unknown>;
  isError?: boolean;
  terminate?: boolean;
}

/**
 * Options of `runTools`. One object; the signal lives inside it.
 *
 * @typeParam T - the tools, as written (a tuple when `runTools` infers it): the events are typed from them.
 * @typeParam AfterDetails - the `details` type `afterToolCall` may return (inferred from the
 *   hook; `never` without one). @default unknown
 */
export interface RunToolsOptions<T extends readonly Tool[] = readonly Tool[], AfterDetails = unknown> {
  /** The tools the model may call. Names must be unique. */
  tools: T;
  /**
   * `'parallel'` runs prepared calls concurrently up to `maxConcurrency` (contract S1);
   * `'sequential'` finishes each call, through its `tool_result`, before preparing the next (S2).
   * @default 'parallel'
   */
  mode?: 'parallel' | 'sequential';
  /** Most calls active at once in parallel mode; `Infinity` allowed. @default 10 */
  maxConcurrency?: number;
  /** Aborts the run: running calls are interrupted, calls not started never start (contract A2). */
  signal?: AbortSignal;
  /** Per-call time limit in ms for tools that set none (contract A4). @default none */
  timeoutMs?: number;
  /**
   * How long to wait, in ms, after a call's signal aborted, for a tool that ignores it; then
   * its result is synthesized and its generator abandoned (contract A3).
   * @default 100
   */
  abortGraceMs?: number;
  /**
   * Longest text of one result, in characters (UTF-16 code units), counted over all its text
   * blocks together and over every kind of result: a tool's output, an error text, a hook's
   * override, a block reason. A longer result keeps the first ¾ and the last ¼ of its text
   * around one marker, `[truncated: <original> chars, <cut> cut; showing <max>]`; text blocks
   * wholly inside the cut are dropped, image blocks kept (case C20). Applied when the call
   * completes, after `afterToolCall`: the hook sees the tool's own result.
   * @default 100_000
   */
  maxResultChars?: number;
  /**
   * Runs in the prepare stage, serially in call order, after validation (contract P1): a
   * permission prompt here asks about one call at a time. A throw becomes this call's error
   * result (P4). `{ block: true, reason, terminate: true }` also ends the agent loop after
   * this batch (P6).
   */
  beforeToolCall?: (context: BeforeToolCallContext) => BeforeToolCallResult | void | Promise<BeforeToolCallResult | void>;
  /** Runs after every executed call, success or throw, and overrides fields of its result (P3). A throw becomes an error result. */
  afterToolCall?: (context: AfterToolCallContext) => AfterToolCallResult<AfterDetails> | void | Promise<AfterToolCallResult<AfterDetails> | void>;
  /**
   * Answers approval requests within the run (contract H2): called, in the prepare stage,
   * for each call whose tool's `needsApproval` or `beforeToolCall` asks for approval.
   * `undefined` (or no `approve` at all) defers the call: the batch ends paused, with the
   * request in `ToolBatch.paused`. See {@link ToolApprovalHandler}.
   * @default none: every request is deferred
   */
  approve?: ToolApprovalHandler;
  /**
   * Continues a paused batch (contract H5–H8): `calls` and `tools` must be the paused run's.
   * Calls answered before the pause are not run again; approved calls run, denied ones get
   * an error result, unanswered ones stay pending. A state that cannot be resumed makes the
   * first `next()` throw a `ResumeError`.
   * @default none
   * @example
   * ```ts
   * runTools(calls, { tools, resume: { state: JSON.parse(text), approvals: [{ approvalId, approved: true }] } });
   * ```
   */
  resume?: ResumeOptions;
  /**
   * Secret for HMAC-SHA256 signing of paused-batch states (contract H9): a run with it signs
   * the state it pauses with, and resumes only states signed with it (else a `ResumeError`
   * with code `signature`). Must not be empty.
   * With it, `resume` needs `claim` (contract H7): a signed state is one that leaves the
   * process, and only a store every process shares keeps it single-use.
   * @default none: states are not signed, and any well-formed state is resumed
   */
  signingSecret?: string | Uint8Array;
  /**
   * Longest paused state `resume` reads, in characters (UTF-16 code units) of its JSON text
   * (`JSON.stringify(state).length`; for a state given as an object, the text it would be).
   * Checked before anything is parsed; a longer state is refused with code `malformed`
   * (contract H9). The body inside is also bounded in nesting (256), keys (100,000) and
   * values (1,000,000), so that reading any state within the limit stays short.
   * @default 16_777_216 (16 Mi: about 7 times a 1,000-call batch with 2 KB results)
   */
  maxStateChars?: number;
  /**
   * How long a paused state can be resumed, in ms from the pause: written into the state as
   * `expiresAt` (signed with it); a later resume is refused with code `expired` (contract
   * H7). It also bounds how long this process remembers a consumed state's id.
   * @default 86_400_000 (24 hours)
   */
  stateTtlMs?: number;
  /**
   * Called whenever the set of executing calls changes, with the same live `Set` each time
   * (never a copy). Ids that repeat in one batch appear once while any of them runs.
   * Must not throw; a throw is reported as a `ToolrunWarning` (`process.emitWarning` under
   * Node, `console.warn` elsewhere) and ignored.
   */
  onInProgressChange?: (ids: ReadonlySet<string>) => void;
  /**
   * Traces the batch: one span for the batch and one per call, the call's span active
   * while its code runs (every step of its generator included), progress as span events.
   * `openTelemetry()` from `toolrun/otel` gives one built on `@opentelemetry/api`. Tracing
   * never changes what the run yields or returns; a throw in it is reported with a
   * `ToolrunWarning` and ignored (contract T1).
   * @default none: nothing is traced, and the run does no tracing work
   * @example
   * ```ts
   * import { openTelemetry } from 'toolrun/otel';
   * for await (const event of runTools(calls, { tools, tracing: openTelemetry() })) { … }
   * ```
   */
  tracing?: RunTracing;
  /**
   * W3C trace context headers (`traceparent`, `tracestate`) of a remote span the batch's
   * span continues, instead of the active context's span (what `serveMcp` passes from a
   * request's `_meta`). Malformed headers are ignored (the batch span is then a root or
   * continues the active context). Only read when `tracing` is set.
   * @default the active context
   */
  traceContext?: TraceHeaders;
  /**
   * The client every call's `ToolContext.client` is: where tools' log lines go, and who
   * answers their `sample` and `elicit` requests. `createMcpServer` passes the MCP client's.
   * @default {@link NO_CLIENT}: log lines dropped, `sample` and `elicit` rejected
   */
  client?: ToolClient;
  /**
   * Makes the batch durable through a durable-execution engine (contract J1–J10): the run
   * opens each call's entry when it hands the call out — in call order, never in completion
   * order — and commits each call's finalized result (after validation, timeout, abort,
   * `afterToolCall`, approval: what its `tool_result` carries, not the tool's raw return)
   * in call order, before that `tool_result` is emitted. A call an earlier attempt of the
   * same durable run committed is not run again: it is replayed (`tool_execution_end` with
   * `replayed: true`). Approval decisions are journaled, so nobody is asked twice. An engine
   * adapter (such as `toolrun/dbos`) gives one per batch; `memoryJournal()` from
   * `toolrun/testing` is one in memory, for tests. A journal that fails makes the generator
   * throw a `JournalError`. See docs/durable.md.
   * @default none: nothing is journaled, and the run does no journal work
   * @example
   * ```ts
   * const journal = memoryJournal();
   * await drain(runTools(calls, { tools, journal }));            // stopped midway (a crash)…
   * await drain(runTools(calls, { tools, journal: journal.copy() })); // …committed calls replay
   * ```
   */
  journal?: ToolJournal;
  /**
   * With `journal`: what to do with a call an earlier attempt started and committed no
   * result for (it was running at the crash, contract J5). `'unknown'` answers it without
   * running it, with an `interrupted` error result telling the model its outcome is unknown;
   * `'run-again'` runs it again (at-least-once) with the same `ToolContext.idempotencyKey`.
   * A function decides per call. A call that needed approval and has no journaled decision,
   * or whose journaled decision denied it, never ran: it is prepared as new under either
   * policy. A call the run itself rejects before any application or tool code runs (unknown
   * tool name, arguments cut off or not JSON, a synchronous schema's failure) gets that
   * rejection, not "outcome unknown"; a rejection by `beforeToolCall`, `needsApproval`,
   * `prepareArguments` or an async schema does not prove the call never ran.
   * @default 'unknown'
   */
  interruptedCalls?: InterruptedCallPolicy;
}

/** The tools by name; throws a TypeError for a malformed tool or a repeated name. */
export function toolTable(tools: readonly Tool[]): Map<string, Tool> {
  const table = new Map<string, Tool>();
  tools.forEach((tool, i) => {
    assertToolShape(tool, `runTools: options.tools[${i}]`);
    if (table.has(tool.name)) {
      throw new TypeError(`runTools: options.tools has two tools named "${tool.name}" (at ${[...table.keys()].indexOf(tool.name)} and ${i}); names must be unique`);
    }
    table.set(tool.name, tool);
  });
  return table;
}

/**
 * Checks `runTools`' arguments before anything starts (a synchronous iterable of calls is
 * materialized into an array first, so its calls are checked too); throws one `TypeError` naming the
 * field and the value received.
 */
export function checkRunToolsArguments(calls: unknown, options: unknown): asserts options is RunToolsOptions {
  if (calls === null || typeof calls !== 'object' || !(Symbol.iterator in calls || Symbol.asyncIterator in calls)) {
    throw new TypeError(`runTools: calls must be an array or an (async) iterable of tool calls, received ${describeValue(calls)}`);
  }
  if (Array.isArray(calls)) {
    // forEach, not a loop: this function runs once per batch, so a loop here would stay in
    // baseline code, where the callback, called for every call, is optimized at once
    // (≈ 1.4 % fewer instructions per call, `bench/instructions.mjs`). forEach skips holes:
    // the count finds one.
    let checked = 0;
    calls.forEach((call, i) => {
      checkCall(call, i);
      checked++;
    });
    if (checked !== calls.length) for (let i = 0; i < calls.length; i++) if (!(i in calls)) checkCall(undefined, i);
  }
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`runTools: options must be an object with a tools array, received ${describeValue(options)}`);
  }
  const o = options as Record<string, unknown>;
  if (!Array.isArray(o.tools)) throw new TypeError(`runTools: options.tools must be an array of tools, received ${describeValue(o.tools)}`);
  if (o.mode !== undefined && o.mode !== 'parallel' && o.mode !== 'sequential') {
    throw new TypeError(`runTools: options.mode must be 'parallel' or 'sequential', received ${describeValue(o.mode)}`);
  }
  const max = o.maxConcurrency;
  if (max !== undefined && !(max === Infinity || (Number.isInteger(max) && (max as number) > 0))) {
    throw new TypeError(`runTools: options.maxConcurrency must be a positive integer or Infinity, received ${describeValue(max)}`);
  }
  for (const key of ['timeoutMs', 'abortGraceMs', 'maxResultChars'] as const) {
    const value = o[key];
    if (value !== undefined && !(typeof value === 'number' && value >= 0 && !Number.isNaN(value))) {
      throw new TypeError(`runTools: options.${key} must be a non-negative number, received ${describeValue(value)}`);
    }
  }
  for (const key of ['beforeToolCall', 'afterToolCall', 'onInProgressChange', 'approve'] as const) {
    if (o[key] !== undefined && typeof o[key] !== 'function') {
      throw new TypeError(`runTools: options.${key} must be a function, received ${describeValue(o[key])}`);
    }
  }
  const secret = o.signingSecret;
  if (secret !== undefined && !((typeof secret === 'string' || secret instanceof Uint8Array) && secret.length > 0)) {
    throw new TypeError(`runTools: options.signingSecret must be a non-empty string or Uint8Array, received ${describeValue(secret)}`);
  }
  const maxStateChars = o.maxStateChars;
  if (maxStateChars !== undefined && !(Number.isSafeInteger(maxStateChars) && (maxStateChars as number) > 0)) {
    throw new TypeError(`runTools: options.maxStateChars must be a positive integer (characters), received ${describeValue(maxStateChars)}`);
  }
  const ttl = o.stateTtlMs;
  if (ttl !== undefined && !(Number.isSafeInteger(ttl) && (ttl as number) > 0)) {
    throw new TypeError(`runTools: options.stateTtlMs must be a positive integer (ms), received ${describeValue(ttl)}`);
  }
  const resume = o.resume;
  if (resume !== undefined) {
    if (typeof resume !== 'object' || resume === null) throw new TypeError(`runTools: options.resume must be an object { state, approvals }, received ${describeValue(resume)}`);
    if (!Array.isArray(calls)) throw new TypeError('runTools: options.resume needs the calls as an array (the paused batch\'s calls), not an async iterable');
    checkClaim((resume as { claim?: unknown }).claim, secret, 'runTools');
  }
  if (o.signal !== undefined && !(o.signal instanceof AbortSignal)) {
    throw new TypeError(`runTools: options.signal must be an AbortSignal, received ${describeValue(o.signal)}`);
  }
  const client = o.client as Record<string, unknown> | undefined;
  if (client !== undefined && (typeof client !== 'object' || client === null || !['log', 'sample', 'elicit'].every((key) => typeof client[key] === 'function'))) {
    throw new TypeError(`runTools: options.client must be a ToolClient (an object with log, sample and elicit functions), received ${describeValue(client)}`);
  }
  if (o.tracing !== undefined || o.traceContext !== undefined) checkTracingOptions(o.tracing, o.traceContext, describeValue);
  checkJournalOptions(o.journal, o.interruptedCalls, 'runTools', 'open');
}

/** `journal` is an object with the journal's function(s); `interruptedCalls` is a policy. */
export function checkJournalOptions(journal: unknown, interrupted: unknown, caller: 'runTools' | 'runAgent', ...functions: readonly string[]): void {
  if (journal !== undefined) {
    const ok = typeof journal === 'object' && journal !== null && functions.every((key) => typeof (journal as Record<string, unknown>)[key] === 'function');
    if (!ok) throw new TypeError(`${caller}: options.journal must be a journal (an object with ${functions.map((f) => `a ${f} function`).join(' and ')}), received ${describeValue(journal)}`);
  }
  if (interrupted !== undefined && interrupted !== 'unknown' && interrupted !== 'run-again' && typeof interrupted !== 'function') {
    throw new TypeError(`${caller}: options.interruptedCalls must be 'unknown', 'run-again' or a function of the call, received ${describeValue(interrupted)}`);
  }
}

/**
 * `resume.claim` is a function, and there is one when states are signed (H7): a signed state
 * leaves the process, and the process's own memory cannot stop a replay in another one.
 */
export function checkClaim(claim: unknown, secret: unknown, caller: 'runTools' | 'runAgent'): void {
  if (claim !== undefined && typeof claim !== 'function') throw new TypeError(`${caller}: options.resume.claim must be a function, received ${describeValue(claim)}`);
  if (claim === undefined && secret !== undefined) {
    throw new TypeError(
      `${caller}: options.resume.claim is required with options.signingSecret: a signed state can come back to any process, so its single use needs your store ` +
        '(a function (stateId, { expiresAt }) => boolean that answers true once per id: a unique row, Redis SET NX), or inMemoryClaim() when one process does every resume',
    );
  }
}

/** A call from the caller's own code must have string `id` and `name` (empty is the model's business). */
function checkCall(call: unknown, index: number): asserts call is ToolCall {
  if (call === null || typeof call !== 'object') {
    throw new TypeError(`runTools: calls[${index}] must be a tool call object {id, name, arguments}, received ${describeValue(call)}`);
  }
  const c = call as Record<string, unknown>;
  if (typeof c.name !== 'string') {
    throw new TypeError(`runTools: calls[${index}].name must be a string, received ${describeValue(c.name)}`);
  }
  if (typeof c.id !== 'string') {
    throw new TypeError(`runTools: calls[${index}].id must be a string, received ${describeValue(c.id)}`);
  }
}
