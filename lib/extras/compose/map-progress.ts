/**
 * `mapProgress`: a tool whose progress values go through a function.
 *
 * @module
 */
import { isAsyncIterator } from '../../core/stages/execute.ts';
import { closeWithoutWaiting } from '../../core/streams/merge.ts';
import { describeValue, type Tool, type ToolContext } from '../../core/tool.ts';

/**
 * A tool like `tool` whose progress values go through `fn` (same name, schema, input and
 * output types; progress type `Q`). A tool without progress is returned unchanged in
 * behaviour. `fn` runs once per value, in order, before the value is yielded; a throw from
 * `fn` fails the call like a throw from the tool.
 *
 * @example
 * ```ts
 * const quietShell = mapProgress(shell, (chunk) => `${chunk.text.length} bytes`);
 * ```
 */
export function mapProgress<I, P, O, Q, N extends string>(tool: Tool<I, P, O, N>, fn: (progress: P, context: ToolContext) => Q): Tool<I, Q, O, N> {
  if (typeof fn !== 'function') throw new TypeError(`mapProgress: fn must be a function, received ${describeValue(fn)}`);
  return {
    ...tool,
    execute: (input: I, context: ToolContext) => {
      const output = tool.execute(input, context);
      if (!isAsyncIterator(output)) return output as O | Promise<O>;
      return mapped(output as AsyncIterator<P, O, undefined>, fn, context);
    },
  };
}

async function* mapped<P, O, Q>(iterator: AsyncIterator<P, O, undefined>, fn: (progress: P, context: ToolContext) => Q, context: ToolContext): AsyncGenerator<Q, O, undefined> {
  /** True once the inner tool returned or threw; a throw of `fn` leaves it to be returned. */
  let settled = false;
  try {
    for (;;) {
      let step: IteratorResult<P, O>;
      try {
        step = await iterator.next();
      } catch (error) {
        settled = true;
        throw error;
      }
      if (step.done === true) {
        settled = true;
        return step.value;
      }
      yield fn(step.value, context);
    }
  } finally {
    if (!settled) closeWithoutWaiting(iterator);
  }
}
