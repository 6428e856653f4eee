/**
 * Type tests: a plain return value's type reaches the events' `details`,
 * and `tool_result` carries `toolName` (narrowing on it narrows `message.details`).
 *
 * Checked by vitest's typecheck (`tsc -p spec/types/tsconfig.json`, in `npm test`); a line
 * here fails when its type no longer holds, and each `@ts-expect-error` fails when the line
 * under it starts to compile. The runtime side (details set for plain returns) is in
 * spec/core/plain-return-details.spec.ts.
 */
import * as v from 'valibot';
import { describe, expectTypeOf, test } from 'vitest';
import { defineTool, runTools, type ToolDetailsOf, type ToolEvent, type ToolResult } from '../../lib/index.ts';

const weather = defineTool({
  name: 'weather',
  input: v.object({ city: v.string() }),
  execute: ({ city }) => ({ city, temperature: 21 }),
});
const clock = defineTool({ name: 'clock', input: v.object({}), execute: () => 'noon' });
const read = defineTool({
  name: 'read',
  input: v.object({ path: v.string() }),
  execute: (): ToolResult<{ bytes: number }> => ({ content: [{ type: 'text', text: '' }], details: { bytes: 0 } }),
});
const tools = [weather, clock, read];

describe('plain returns type details', () => {
  test('ToolDetailsOf: an object is its own details, a string none, a ToolResult<D> its D', () => {
    expectTypeOf<ToolDetailsOf<{ a: number }>>().toEqualTypeOf<{ a: number }>();
    expectTypeOf<ToolDetailsOf<number[]>>().toEqualTypeOf<number[]>();
    expectTypeOf<ToolDetailsOf<string>>().toEqualTypeOf<never>();
    expectTypeOf<ToolDetailsOf<undefined>>().toEqualTypeOf<never>();
    expectTypeOf<ToolDetailsOf<ToolResult<{ bytes: number }>>>().toEqualTypeOf<{ bytes: number }>();
    expectTypeOf<ToolDetailsOf<string | { a: 1 }>>().toEqualTypeOf<{ a: 1 }>();
  });

  test('end and result events of a tool returning an object carry its type', () => {
    type E = ToolEvent<(typeof tools)[number], never>;
    const handle = (event: E): void => {
      if (event.type === 'tool_execution_end' && event.toolName === 'weather') {
        expectTypeOf(event.result.details).toEqualTypeOf<{ city: string; temperature: number } | undefined>();
      }
      if (event.type === 'tool_result' && event.toolName === 'weather') {
        expectTypeOf(event.message.details).toEqualTypeOf<{ city: string; temperature: number } | undefined>();
      }
      if (event.type === 'tool_result' && event.toolName === 'read') {
        expectTypeOf(event.message.details).toEqualTypeOf<{ bytes: number } | undefined>();
      }
      if (event.type === 'tool_result' && event.toolName === 'clock') {
        expectTypeOf(event.message.details).toEqualTypeOf<undefined>();
        // @ts-expect-error a tool that returns a string has no details to read fields of
        event.message.details.length;
      }
    };
    expectTypeOf(handle).toBeFunction();
  });
});

describe('tool_result carries toolName', () => {
  test('toolName on the event is the union of the tool names, plus any string for an unknown tool', async () => {
    for await (const event of runTools([], { tools })) {
      if (event.type === 'tool_result') {
        expectTypeOf(event.toolCallId).toEqualTypeOf<string>();
        expectTypeOf(event.toolName).toEqualTypeOf<'weather' | 'clock' | 'read' | string>();
        if (event.toolName === 'weather') {
          // @ts-expect-error `temperature` is a number, not a string
          const wrong: string | undefined = event.message.details?.temperature;
          expectTypeOf(wrong).not.toBeAny();
        }
      }
    }
  });
});
