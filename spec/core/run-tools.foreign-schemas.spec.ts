/**
 * Defects an independent attack on the redesigned core found in how it reads tool schemas
 * ("the model is untrusted, every value can be poisoned, every call is still
 * answered"). Each spec failed before its fix.
 */
import { describe, expect, it } from 'vitest';
import { runTools, type Tool, type ToolCall, type ToolEvent } from '../../lib/index.ts';
import { collect, expectRunInvariants, text } from '../helpers.ts';

const never = (): Promise<never> => new Promise<never>(() => {});
const plain: Tool = { name: 'plain', input: { type: 'object' }, execute: () => 'plain ran' };

/** Runs `calls`, aborting `controller` when the first event of call 0 arrives. */
async function runAbortingAtFirstEvent(calls: ToolCall[], tools: Tool[]) {
  const controller = new AbortController();
  const events: ToolEvent[] = [];
  const run = runTools(calls, { tools, signal: controller.signal });
  for (;;) {
    const step = await run.next();
    if (step.done === true) return { events, batch: step.value };
    events.push(step.value);
    if (events.length === 1) controller.abort();
  }
}

describe('O1/A2: a schema or prepareArguments that never settles no longer holds the run past an abort', () => {
  it('a Standard Schema whose validate never settles: the abort answers it and every later call "not run"', async () => {
    const hanging: Tool = { name: 'hanging', input: { '~standard': { version: 1, vendor: 'test', validate: never } } as never, execute: () => 'ran' };
    const calls: ToolCall[] = [{ id: 'a', name: 'hanging', arguments: {} }, { id: 'b', name: 'plain', arguments: {} }];
    const { events, batch } = await runAbortingAtFirstEvent(calls, [hanging, plain]);
    expectRunInvariants(calls, events, batch);
    expect(batch.messages.map((m) => m.isError)).toEqual([true, true]);
    for (const m of batch.messages) expect(text(m)).toMatch(/not run/i);
    expect(batch.aborted).toBe(true);
  });

  it('a prepareArguments whose promise never settles: the same', async () => {
    const hanging: Tool = { name: 'hanging', input: { type: 'object' }, prepareArguments: never as never, execute: () => 'ran' };
    const calls: ToolCall[] = [{ id: 'a', name: 'hanging', arguments: {} }, { id: 'b', name: 'plain', arguments: {} }];
    const { events, batch } = await runAbortingAtFirstEvent(calls, [hanging, plain]);
    expectRunInvariants(calls, events, batch);
    for (const m of batch.messages) expect(text(m)).toMatch(/not run/i);
  });
});

describe('P4: a tool input that throws when read is that call\'s error, not a throw out of runTools', () => {
  it('a ~standard getter that throws: the call is answered with the error, its sibling runs', async () => {
    const input = {
      get '~standard'(): never {
        throw new Error('schema not initialised');
      },
    };
    const bad: Tool = { name: 'bad', input: input as never, execute: () => 'ran' };
    const calls: ToolCall[] = [{ id: 'a', name: 'plain', arguments: {} }, { id: 'b', name: 'bad', arguments: {} }];
    const { events, batch } = await collect(runTools(calls, { tools: [plain, bad] }));
    expectRunInvariants(calls, events, batch);
    expect(text(batch.messages[0]!)).toBe('plain ran');
    expect(batch.messages[1]!.isError).toBe(true);
    expect(text(batch.messages[1]!)).toMatch(/could not validate its arguments: its input schema threw .*schema not initialised/);
  });
});

describe('P4: a Standard Schema result that is neither { value } nor { issues } never runs the tool', () => {
  it.each([
    ['a number', 42],
    ['an empty object', {}],
    ['null', null],
  ])('validate returning %s: an error result, execute not called', async (_label, returned) => {
    let ran = false;
    const odd: Tool = {
      name: 'odd',
      input: { '~standard': { version: 1, vendor: 'test', validate: () => returned } } as never,
      execute: () => {
        ran = true;
        return 'ran';
      },
    };
    const { batch } = await collect(runTools([{ id: 'a', name: 'odd', arguments: { a: 1 } }], { tools: [odd] }));
    expect(ran).toBe(false);
    expect(batch.messages[0]!.isError).toBe(true);
    expect(text(batch.messages[0]!)).toMatch(/could not validate its arguments/);
  });
});
