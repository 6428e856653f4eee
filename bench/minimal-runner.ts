/**
 * The minimal runner: a bench reference, not a product. It is the least code that does
 * what `runTools` does on its plain path, so that the overhead scenario can show how much
 * of toolrun's cost per call the event protocol itself costs, and how much is toolrun's
 * own (a minimal runner with the same three events, order and validation was expected near
 * 1.67× the floor).
 *
 * What it does, and nothing more:
 * - starts every call at once (parallel, no concurrency limit) and drives the tool body,
 *   the same async generator the floor and toolrun run, to its return value;
 * - validates each call's arguments with the tool's valibot schema (`v.safeParse`) first;
 *   an invalid call ends as an error result without running;
 * - emits, per call, `tool_execution_start` → `tool_execution_end` → `tool_result`, with
 *   the fields and shapes of toolrun's events (index, timestamps, outcome, the result
 *   message); ends in completion order, results in call order, each result released as
 *   soon as every earlier call has ended; a value the body yields becomes a
 *   `tool_execution_update`;
 * - hands the events out as an async iterator (an async generator), which the bench drains
 *   with the same `next()` loop as toolrun's (`for await` works the same way).
 *
 * What it leaves out: hooks, approval, timeouts, abort and AbortSignals, concurrency
 * limits, a journal, tracing, checks of the run's arguments and of the tool's output (the
 * result's `content` is passed on as the tool returned it, not copied or checked), error
 * texts for the model, a return value. Never use it to run a model's tool calls.
 *
 * @module
 */
import * as v from 'valibot';

/** A tool of the minimal runner: a name, a valibot schema and the body. */
export interface MinimalTool<Args> {
  name: string;
  schema: v.GenericSchema<unknown, Args>;
  body: (args: Args, ctx: { readonly signal: AbortSignal }) => AsyncIterator<unknown, unknown, undefined>;
}

/** A tool call as the model sent it (toolrun's `ToolCall` shape). */
interface MinimalCall {
  id: string;
  name: string;
  arguments?: unknown;
}

interface TextBlock {
  type: 'text';
  text: string;
}

/** The result message, shaped as toolrun's `ToolResultMessage`. */
interface ResultMessage {
  role: 'tool';
  toolCallId: string;
  toolName: string;
  content: unknown[];
  details?: unknown;
  isError: boolean;
}

/** The events, shaped as toolrun's `tool_execution_start` / `_update` / `_end` / `tool_result`. */
export type MinimalEvent =
  | { type: 'tool_execution_start'; toolCallId: string; toolName: string; index: number; args: unknown }
  | { type: 'tool_execution_update'; toolCallId: string; toolName: string; index: number; progress: unknown }
  | {
      type: 'tool_execution_end';
      toolCallId: string;
      toolName: string;
      index: number;
      result: { content: unknown[]; details?: unknown };
      isError: boolean;
      outcome: 'ok' | 'error' | 'rejected';
      startedAt: number;
      endedAt: number;
    }
  | { type: 'tool_result'; toolCallId: string; toolName: string; index: number; message: ResultMessage };

const neverAborted = new AbortController().signal;
const context = { signal: neverAborted };

/** Runs `calls` through `tool` and yields the events (see the module comment). */
export async function* minimalRun<Args>(calls: readonly MinimalCall[], tool: MinimalTool<Args>): AsyncGenerator<MinimalEvent, void, undefined> {
  const n = calls.length;
  const queue: MinimalEvent[] = [];
  let head = 0;
  let wake: (() => void) | undefined;
  const emit = (event: MinimalEvent): void => {
    queue.push(event);
    if (wake !== undefined) {
      const w = wake;
      wake = undefined;
      w();
    }
  };
  /** Ended calls' result messages not yet released (a hole: not ended yet). */
  const ended: (ResultMessage | undefined)[] = new Array<ResultMessage | undefined>(n);
  let released = 0;
  const end = (index: number, startedAt: number, content: unknown[], details: unknown, outcome: 'ok' | 'error' | 'rejected'): void => {
    const call = calls[index]!;
    const isError = outcome !== 'ok';
    const result = details === undefined ? { content } : { content, details };
    emit({ type: 'tool_execution_end', toolCallId: call.id, toolName: call.name, index, result, isError, outcome, startedAt, endedAt: Date.now() });
    ended[index] = { role: 'tool', toolCallId: call.id, toolName: call.name, ...result, isError };
    while (released < n) {
      const message = ended[released];
      if (message === undefined) break;
      ended[released] = undefined;
      emit({ type: 'tool_result', toolCallId: message.toolCallId, toolName: message.toolName, index: released, message });
      released++;
    }
  };
  const execute = async (index: number, args: Args, startedAt: number): Promise<void> => {
    const call = calls[index]!;
    try {
      const it = tool.body(args, context);
      for (;;) {
        const step = await it.next();
        if (step.done === true) {
          const value = step.value;
          if (typeof value === 'string') end(index, startedAt, [{ type: 'text', text: value } satisfies TextBlock], undefined, 'ok');
          else {
            const r = value as { content: unknown[]; details?: unknown };
            end(index, startedAt, r.content, r.details, 'ok');
          }
          return;
        }
        emit({ type: 'tool_execution_update', toolCallId: call.id, toolName: call.name, index, progress: step.value });
      }
    } catch (error) {
      end(index, startedAt, [{ type: 'text', text: error instanceof Error ? error.message : String(error) }], undefined, 'error');
    }
  };
  for (let index = 0; index < n; index++) {
    const call = calls[index]!;
    const startedAt = Date.now();
    emit({ type: 'tool_execution_start', toolCallId: call.id, toolName: call.name, index, args: call.arguments });
    if (call.name !== tool.name) {
      end(index, startedAt, [{ type: 'text', text: `unknown tool ${call.name}` }], undefined, 'rejected');
      continue;
    }
    const parsed = v.safeParse(tool.schema, call.arguments);
    if (!parsed.success) end(index, startedAt, [{ type: 'text', text: parsed.issues[0].message }], undefined, 'rejected');
    else void execute(index, parsed.output, startedAt);
  }
  for (;;) {
    if (head < queue.length) {
      // The slot is cleared (the consumer holds the event now); the array lives for one batch.
      const event = queue[head]!;
      queue[head++] = undefined as never;
      yield event;
    } else if (released === n) return;
    else await new Promise<void>((resolve) => (wake = resolve));
  }
}
