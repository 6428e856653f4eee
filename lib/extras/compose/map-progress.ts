/**
 * `mapProgress`: a tool whose progress values go through a function.
 *
 * @module
 */
import { describeValue } from '../../core/values/guards.ts';
import type { Tool, ToolContext } from '../../core/tool/tool.ts';
import { InnerSteps } from './child-call.ts';
import { isAsyncIterator } from '../../core/values/guards.ts';

/**
 * A tool like `tool` whose progress values go through `fn` (same name, schema, input and
 * output types; progress type `Q`). A tool without progress is returned unchanged in
 * behaviour. `fn` runs once per value, in order, before the value is yielded; a throw from
 * `fn` fails the call like a throw from the tool.
 *
 * @throws TypeError at once when `fn` is not a function.
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
  // A throw of `fn`, or the consumer leaving, leaves the inner tool to be returned.
  const steps = new InnerSteps(iterator);
  try {
    for (;;) {
      const step = await steps.next();
      if (step.done === true) return step.value;
      yield fn(step.value, context);
    }
  } finally {
    steps.release();
  }
}
