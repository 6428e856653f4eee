/**
 * Types flow through the extras: `runAgent` events are discriminated by
 * `toolName` like `runTools`' (the two agree), an `agentTool`'s progress carries its
 * sub-agent's typed events at every depth, and `callTool`, `withTimeout`, `withRetry`,
 * `mapProgress` keep a tool's literal name and types. Checked by `tsc --noEmit` (part of
 * `npm test`); each test also runs.
 */
import * as v from 'valibot';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  agentTool,
  callTool,
  defineTool,
  mapProgress,
  runAgent,
  runTools,
  withRetry,
  withTimeout,
  type AgentEvent,
  type AgentMessage,
  type AssistantMessage,
  type Tool,
  type ToolEvent,
  type ToolNameOf,
  type ToolResult,
} from '../../lib/index.ts';
import type { CodingTools, ShellProgress } from '../../lib/tools/index.ts';
import { scriptedModel } from '../../lib/testing.ts';

const lookup = defineTool({
  name: 'lookup',
  input: v.object({ key: v.string() }),
  async *execute({ key }) {
    yield { looking: key };
    return { content: [{ type: 'text' as const, text: `${key}=7` }], details: { found: true } };
  },
});

const echo = defineTool({
  name: 'echo',
  input: v.object({ text: v.string() }),
  async *execute({ text }) {
    yield text.length;
    return `echo: ${text}`;
  },
});

const user = (content: string): AgentMessage => ({ role: 'user', content });
const say = (text: string): AssistantMessage => ({ role: 'assistant', content: [{ type: 'text', text }], stopReason: 'stop' });
const call = (id: string, name: string, args: unknown): AssistantMessage => ({
  role: 'assistant',
  content: [{ type: 'toolCall', id, name, arguments: args }],
  stopReason: 'toolUse',
});

async function drain<E, R>(run: AsyncGenerator<E, R, undefined>): Promise<{ events: E[]; result: R }> {
  const events: E[] = [];
  for (;;) {
    const step = await run.next();
    if (step.done === true) return { events, result: step.value };
    events.push(step.value);
  }
}

describe('runAgent: the same discriminated events as runTools', () => {
  it('narrowing on toolName gives each tool its progress and details', async () => {
    const model = scriptedModel([call('a', 'lookup', { key: 'k' }), call('b', 'echo', { text: 'hi' }), say('done')]);
    const { events } = await drain(runAgent({ model, tools: [lookup, echo], messages: [user('go')] }));
    expectTypeOf(events[0]!).toEqualTypeOf<AgentEvent<typeof lookup | typeof echo, never>>();
    // runAgent and runTools agree: a batch's events are the runTools events of the same tools.
    expectTypeOf<Extract<AgentEvent<typeof lookup | typeof echo, never>, { type: `tool_${string}` }>>().toEqualTypeOf<
      ToolEvent<typeof lookup | typeof echo, never>
    >();
    const seen: string[] = [];
    for (const event of events) {
      if (event.type === 'tool_execution_update' && event.toolName === 'lookup') {
        expectTypeOf(event.progress).toEqualTypeOf<{ looking: string }>();
        // @ts-expect-error: lookup's progress is not echo's number
        const n: number = event.progress;
        void n;
        seen.push(event.progress.looking);
      }
      if (event.type === 'tool_execution_update' && event.toolName === 'echo') seen.push(`len ${event.progress.toFixed(0)}`);
      if (event.type === 'tool_execution_end' && event.toolName === 'lookup') {
        expectTypeOf(event.result.details).toEqualTypeOf<{ found: boolean } | undefined>();
        seen.push(`found ${event.result.details?.found}`);
      }
    }
    expect(seen).toEqual(['k', 'found true', 'len 2']);
    // turn_end carries the batch's messages, typed the same way.
    const results = events.flatMap((e) => (e.type === 'turn_end' ? e.toolResults : []));
    const lookups = results.flatMap((r) => (r.toolName === 'lookup' ? [r.details] : []));
    expectTypeOf(lookups).toEqualTypeOf<({ found: boolean } | undefined)[]>();
    expect(lookups).toEqual([{ found: true }]);
  });
});

describe('agentTool: the sub-agent\'s typed events, at every depth', () => {
  it('a nested event narrows to the sub-agent\'s tools; deeper progress is passed up with its own types', async () => {
    const deep = agentTool({ name: 'deep', model: scriptedModel([call('d1', 'lookup', { key: 'k' }), say('k=7')]), tools: [lookup] });
    const explore = agentTool({ name: 'explore', model: scriptedModel([call('e1', 'deep', { prompt: 'find k' }), say('k is 7')]), tools: [deep] });
    expectTypeOf(explore.name).toEqualTypeOf<'explore'>();
    expectTypeOf<ToolNameOf<typeof deep>>().toEqualTypeOf<'deep'>();
    const { events } = await drain(runAgent({ model: scriptedModel([call('p1', 'explore', { prompt: 'k?' }), say('7')]), tools: [explore], messages: [user('k?')] }));
    const lines: string[] = [];
    for (const event of events) {
      if (event.type !== 'tool_execution_update') continue;
      const inner = event.progress.event;
      if (inner.type === 'tool_execution_update' && inner.toolName === 'lookup') {
        // A level-2 event (lookup runs in deep, inside explore), passed up unwrapped.
        expectTypeOf(inner.progress).toEqualTypeOf<{ looking: string }>();
        lines.push(`${event.progress.depth} lookup ${inner.progress.looking}`);
      }
      if (inner.type === 'tool_execution_end' && inner.toolName === 'deep') {
        expectTypeOf(inner.result.details).toEqualTypeOf<import('../../lib/index.ts').AgentToolDetails | undefined>();
        lines.push(`${event.progress.depth} deep ${inner.result.details?.reason}`);
      }
    }
    expect(lines).toEqual(['2 lookup k', '1 deep completed']);
  });
});

describe('compose: callTool and the wrappers keep the literal name and the types', () => {
  it('withTimeout, withRetry, mapProgress keep the name; callTool returns the child\'s details type', async () => {
    expectTypeOf(withTimeout(lookup, 1000)).toEqualTypeOf(lookup);
    expectTypeOf(withRetry(lookup, { retries: 1 })).toEqualTypeOf(lookup);
    const counted = mapProgress(echo, (n) => ({ chars: n }));
    expectTypeOf(counted).toEqualTypeOf<Tool<{ text: string }, { chars: number }, string, 'echo'>>();
    const parent = defineTool({
      name: 'parent',
      input: v.object({}),
      async *execute(_input, ctx) {
        const child = yield* callTool(lookup, { key: 'z' }, ctx);
        expectTypeOf(child).toEqualTypeOf<ToolResult<{ found: boolean }>>();
        // @ts-expect-error: lookup's input has no `path`
        void callTool(lookup, { path: 'z' }, ctx);
        return `found: ${child.details?.found}`;
      },
    });
    const { events } = await drain(runTools([{ id: 'p', name: 'parent', arguments: {} }], { tools: [parent, counted] }));
    const progress = events.flatMap((e) => (e.type === 'tool_execution_update' && e.toolName === 'parent' ? [e.progress] : []));
    expectTypeOf(progress).toEqualTypeOf<{ looking: string }[]>();
    expect(progress).toEqual([{ looking: 'z' }]);
  });

  it('the coding tools have literal names: a shell branch gets ShellProgress', () => {
    type E = ToolEvent<CodingTools[number], never>;
    expectTypeOf<ToolNameOf<CodingTools[number]>>().toEqualTypeOf<'shell' | 'read_file' | 'list_files' | 'grep'>();
    expectTypeOf<Extract<E, { type: 'tool_execution_update'; toolName: 'shell' }>['progress']>().toEqualTypeOf<ShellProgress>();
  });
});
