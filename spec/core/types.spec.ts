/**
 * Types flow from the tools to the events: `defineTool` infers a literal
 * name, `runTools` types its events as a union discriminated by `type` and `toolName`, a name
 * no tool has is its own branch, and no `any` reaches a tool's input.
 *
 * The `expectTypeOf` lines and the `@ts-expect-error` negatives are checked by `tsc --noEmit`
 * (part of `npm test`); each test also runs, so the typed fields are seen to be the ones the
 * runtime sets.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import * as v from 'valibot';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  defineTool,
  runTools,
  type CallOutcome,
  type ContentBlock,
  type Tool,
  type ToolBatch,
  type ToolContext,
  type ToolDetailsOf,
  type ToolEvent,
  type ToolExecutionEndEvent,
  type ToolResult,
  type ToolResultMessage,
} from '../../lib/index.ts';

const readFile = defineTool({
  name: 'read_file',
  input: v.object({ path: v.string() }),
  async *execute({ path }) {
    yield { reading: path };
    return { content: [{ type: 'text' as const, text: `text of ${path}` }], details: { bytes: 11 } };
  },
});

const search = defineTool({
  name: 'search',
  input: v.object({ q: v.string(), limit: v.number() }),
  async *execute({ q, limit }) {
    yield { step: `searching ${q}` };
    return { content: [{ type: 'text' as const, text: `${limit} hits` }], details: { hits: limit } };
  },
});

/** A tool that returns a plain value: its results carry no details. */
const clock = defineTool({
  name: 'clock',
  input: v.object({}),
  execute: () => 'noon',
});

async function drain<E, R>(run: AsyncGenerator<E, R, undefined>): Promise<{ events: E[]; batch: R }> {
  const events: E[] = [];
  for (;;) {
    const step = await run.next();
    if (step.done === true) return { events, batch: step.value };
    events.push(step.value);
  }
}

describe('defineTool: literal names, inferred input, no any', () => {
  it('infers the name as a literal and the input from the schema; a field the schema lacks is an error', () => {
    expectTypeOf(search).toEqualTypeOf<
      Tool<{ q: string; limit: number }, { step: string }, { content: { type: 'text'; text: string }[]; details: { hits: number } }, 'search'>
    >();
    expectTypeOf(search.name).toEqualTypeOf<'search'>();
    defineTool({
      name: 'strict',
      input: v.object({ q: v.string() }),
      execute: (input) => {
        // @ts-expect-error: the inferred input has no `whatever`
        return input.whatever;
      },
    });
  });

  it('a hand-written Tool without type arguments gets unknown input, never any', () => {
    const loose: Tool = {
      name: 'loose',
      input: { type: 'object' },
      execute: (input) => {
        expectTypeOf(input).toEqualTypeOf<unknown>();
        // @ts-expect-error: unknown input cannot be read without a check
        return input.whatever.deep;
      },
    };
    expect(loose.name).toBe('loose');
  });

  it('every tool is assignable to Tool (the "any tool" type); Tool.execute input cannot be widened to any', () => {
    expectTypeOf(readFile).toExtend<Tool>();
    expectTypeOf(search).toExtend<Tool>();
    expectTypeOf(clock).toExtend<Tool>();
    const list: Tool[] = [readFile, search, clock];
    expect(list.map((t) => t.name)).toEqual(['read_file', 'search', 'clock']);
    expectTypeOf<Parameters<Tool['execute']>[0]>().toEqualTypeOf<unknown>();
    expectTypeOf<Parameters<Tool['execute']>[1]>().toEqualTypeOf<ToolContext>();
  });

  it('ToolDetailsOf: a ToolResult<D> output gives D, a plain output gives never, unknown gives unknown', () => {
    expectTypeOf<ToolDetailsOf<ToolResult<{ n: number }>>>().toEqualTypeOf<{ n: number }>();
    expectTypeOf<ToolDetailsOf<{ content: ContentBlock[]; details: { n: number } }>>().toEqualTypeOf<{ n: number }>();
    expectTypeOf<ToolDetailsOf<string>>().toEqualTypeOf<never>();
    expectTypeOf<ToolDetailsOf<unknown>>().toEqualTypeOf<unknown>();
    expectTypeOf<ToolDetailsOf<string | ToolResult<{ n: number }>>>().toEqualTypeOf<{ n: number }>();
  });
});

describe('runTools: events discriminated by toolName', () => {
  it('an array of differently-typed tools is accepted, and so is a Tool[]', async () => {
    const typed = await drain(runTools([{ id: 'c1', name: 'clock', arguments: {} }], { tools: [readFile, search, clock] }));
    expect(typed.batch.messages).toHaveLength(1);
    const wide: Tool[] = [readFile, search, clock];
    const { events, batch } = await drain(runTools([{ id: 'c1', name: 'clock', arguments: {} }], { tools: wide }));
    // A Tool[] run is the event of any run: progress and details unknown.
    expectTypeOf(events).toEqualTypeOf<ToolEvent<Tool, never>[]>();
    expectTypeOf(batch).toEqualTypeOf<ToolBatch<Tool, never>>();
    expectTypeOf<Extract<ToolEvent, { type: 'tool_execution_update' }>['progress']>().toEqualTypeOf<unknown>();
  });

  it('narrowing on toolName gives that tool its progress on updates and its details on ends and results (O5)', async () => {
    const { events, batch } = await drain(
      runTools(
        [
          { id: 'r', name: 'read_file', arguments: { path: 'a.txt' } },
          { id: 's', name: 'search', arguments: { q: 'x', limit: 3 } },
          { id: 'k', name: 'clock', arguments: {} },
        ],
        { tools: [readFile, search, clock] },
      ),
    );
    const progress: string[] = [];
    const details: string[] = [];
    for (const event of events) {
      if (event.type === 'tool_execution_update') {
        if (event.toolName === 'read_file') {
          expectTypeOf(event.progress).toEqualTypeOf<{ reading: string }>();
          // @ts-expect-error: search's progress is not read_file's
          const wrong: { step: string } = event.progress;
          void wrong;
          progress.push(event.progress.reading);
        } else if (event.toolName === 'search') {
          expectTypeOf(event.progress).toEqualTypeOf<{ step: string }>();
          progress.push(event.progress.step);
        } else {
          // clock yields nothing: its update branch has progress never.
          expectTypeOf(event.progress).toEqualTypeOf<never>();
        }
      }
      if (event.type === 'tool_execution_end') {
        if (event.toolName === 'search') {
          expectTypeOf(event.result.details).toEqualTypeOf<{ hits: number } | undefined>();
          details.push(`hits ${event.result.details?.hits}`);
        }
        if (event.toolName === 'read_file') {
          expectTypeOf(event.result.details).toEqualTypeOf<{ bytes: number } | undefined>();
          // @ts-expect-error: read_file's details have no hits
          void event.result.details?.hits;
          details.push(`bytes ${event.result.details?.bytes}`);
        }
        if (event.toolName === 'clock') {
          // A plain output is normalized to text: no details (and none is set at run time).
          expectTypeOf(event.result.details).toEqualTypeOf<undefined>();
          expect(event.result.details).toBeUndefined();
        }
      }
      if (event.type === 'tool_execution_start') {
        // What the model sent, not yet validated.
        expectTypeOf(event.args).toEqualTypeOf<unknown>();
        expectTypeOf(event.toolName).toEqualTypeOf<string>();
      }
    }
    expect(progress.sort()).toEqual(['a.txt', 'searching x']);
    expect(details.sort()).toEqual(['bytes 11', 'hits 3']);

    const [read, found] = batch.messages;
    if (found?.toolName === 'search') expectTypeOf(found.details).toEqualTypeOf<{ hits: number } | undefined>();
    expect(found?.details).toEqual({ hits: 3 });
    expect(read?.details).toEqual({ bytes: 11 });
    for (const message of batch.messages) expectTypeOf(message).toExtend<ToolResultMessage>();
  });

  it('a name no tool has is its own branch: toolName string, no progress, no details (rejected before it runs)', async () => {
    const { events, batch } = await drain(runTools([{ id: 'u', name: 'rm_rf', arguments: {} }], { tools: [readFile, search] }));
    const end = events.find((e) => e.type === 'tool_execution_end');
    expect(end).toMatchObject({ toolName: 'rm_rf', outcome: 'rejected', isError: true });
    expect(end?.result.details).toBeUndefined();
    expect(batch.messages[0]).not.toHaveProperty('details');
    // Its member: string name, no details. (TypeScript cannot narrow to it with `!==`, a
    // literal is comparable to string; it shows in the type of the events.)
    type End = Extract<(typeof events)[number], { type: 'tool_execution_end' }>;
    expectTypeOf<Exclude<End, { toolName: 'read_file' | 'search' }>>().toEqualTypeOf<ToolExecutionEndEvent<never, string>>();
    expectTypeOf<Exclude<End, { toolName: 'read_file' | 'search' }>['result']['details']>().toEqualTypeOf<undefined>();
    expectTypeOf<End['outcome']>().toEqualTypeOf<CallOutcome>();
    // The update events of a run hold only its tools' names: an unknown name never yields.
    type Update = Extract<(typeof events)[number], { type: 'tool_execution_update' }>;
    expectTypeOf<Update['toolName']>().toEqualTypeOf<'read_file' | 'search'>();
  });

  it('details set by afterToolCall are part of every executed call\'s details type (P3)', async () => {
    const { events } = await drain(
      runTools([{ id: 'r', name: 'read_file', arguments: { path: 'a' } }], {
        tools: [readFile],
        afterToolCall: () => ({ details: { audited: true } }),
      }),
    );
    const end = events.find((e) => e.type === 'tool_execution_end');
    if (end?.toolName === 'read_file') {
      expectTypeOf(end.result.details).toEqualTypeOf<{ bytes: number } | { audited: boolean } | undefined>();
    }
    expect(end?.result.details).toEqual({ audited: true });
    // An async hook that sometimes returns nothing: its details type is still inferred.
    const hooked = runTools([], { tools: [readFile], afterToolCall: async ({ isError }) => (isError ? undefined : { details: { note: 'x' } }) });
    expectTypeOf(hooked).toEqualTypeOf<AsyncGenerator<ToolEvent<typeof readFile, { note: string }>, ToolBatch<typeof readFile, { note: string }>, undefined>>();
    // Without a hook, nothing is added.
    const plain = runTools([], { tools: [readFile] });
    expectTypeOf(plain).toEqualTypeOf<AsyncGenerator<ToolEvent<typeof readFile, never>, ToolBatch<typeof readFile, never>, undefined>>();
    await plain.return(undefined as never);
  });
});

describe('no any in the library', () => {
  it('no `any` keyword in lib/ (so none in the published .d.ts): foreign SDK shapes use unknown with bivariant parameters', () => {
    const lib = fileURLToPath(new URL('../../lib/', import.meta.url));
    const found: string[] = [];
    for (const entry of readdirSync(lib, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
      const file = join(entry.parentPath, entry.name);
      const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
      const visit = (node: ts.Node): void => {
        if (node.kind === ts.SyntaxKind.AnyKeyword) {
          found.push(`${file.slice(lib.length)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${node.parent.getText()}`);
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    expect(found).toEqual([]);
  });
});
