/**
 * Issue 14, human approval that survives a process boundary: asking (H1, H2), pausing (H3),
 * the JSON state (H4), resuming (H5), abort and time (H6), and the resume checks (H7–H9).
 * The resume in a second Node process is `approval.process.spec.ts`; the generated batches
 * are `spec/property/approval.property.spec.ts`.
 */
import { createHmac } from 'node:crypto';
import * as v from 'valibot';
import { afterEach, describe, expect, expectTypeOf, it, vi } from 'vitest';
import {
  defineTool,
  inMemoryClaim,
  ResumeError,
  runTools,
  type PausedBatchState,
  type RunToolsOptions,
  type Tool,
  type ToolApprovalRequest,
  type ToolApprovalResponse,
  type ToolCall,
  type ToolEvent,
} from '../../lib/index.ts';
import { bodyOf, rejection, withBody } from '../fixtures/approval/state.ts';
import { collect, expectRunInvariants, gate, ofType, settle, text } from '../helpers.ts';

/** Tools that count their executions per call id. */
function makeTools() {
  const executed: string[] = [];
  const read = defineTool({
    name: 'read',
    input: v.object({ path: v.string() }),
    execute: ({ path }, { toolCallId }) => {
      executed.push(toolCallId);
      return `read ${path}`;
    },
  });
  const remove = defineTool({
    name: 'remove',
    input: v.object({ path: v.string() }),
    needsApproval: true,
    execute: ({ path }, { toolCallId }) => {
      executed.push(toolCallId);
      return `removed ${path}`;
    },
  });
  const write = defineTool({
    name: 'write',
    input: v.object({ path: v.string() }),
    prepareArguments: (args) => ({ path: String((args as { path?: unknown }).path).trim() }),
    // A function of the prepared, validated input: only paths outside /tmp need a person.
    needsApproval: ({ path }) => !path.startsWith('/tmp/'),
    execute: ({ path }, { toolCallId }) => {
      executed.push(toolCallId);
      return `wrote ${path}`;
    },
  });
  const exclusive = defineTool({
    name: 'exclusive',
    input: v.object({}),
    executionMode: 'sequential',
    execute: (_input, { toolCallId }) => {
      executed.push(toolCallId);
      return 'alone';
    },
  });
  return { executed, tools: [read, remove, write, exclusive] as Tool[] };
}

const call = (id: string, name: string, args: unknown = {}): ToolCall => ({ id, name, arguments: args });

/** Runs to the end, answering every request with `decide` in process: the reference run (H5). */
async function reference(calls: ToolCall[], options: Omit<RunToolsOptions, 'approve'>, decide: (index: number) => boolean) {
  return collect(runTools(calls, { ...options, approve: (r) => ({ approvalId: r.approvalId, approved: decide(r.index), reason: 'Not now.' }) }));
}

afterEach(() => {
  vi.useRealTimers();
});

describe('H1 a tool or beforeToolCall asks for approval', () => {
  it('H1: needsApproval: true defers every call of the tool; a function of the validated input decides per call', async () => {
    const { tools, executed } = makeTools();
    const calls = [call('a', 'remove', { path: 'x' }), call('b', 'write', { path: '  /tmp/y ' }), call('c', 'write', { path: '/etc/z' })];
    const { events, batch } = await collect(runTools(calls, { tools }));
    expect(batch.paused?.requests.map((r) => [r.index, r.toolName, r.input, r.source])).toEqual([
      [0, 'remove', { path: 'x' }, 'tool'],
      [2, 'write', { path: '/etc/z' }, 'tool'],
    ]);
    expect(executed).toEqual(['b']);
    expect(ofType(events, 'tool_approval_request').map((e) => e.request)).toEqual(batch.paused!.requests);
  });

  it('H1: prepare order is lookup → parse → validate → needsApproval → beforeToolCall; a deferred tool rule has not met the hook, which runs once, after approval', async () => {
    const { tools } = makeTools();
    const order: string[] = [];
    const calls = [call('a', 'write', '{"path":"/etc/a"}')];
    const hook: RunToolsOptions['beforeToolCall'] = ({ args }) => {
      order.push(`hook ${JSON.stringify(args)}`);
    };
    const write = tools.find((t) => t.name === 'write')!;
    const traced = { ...write, needsApproval: (input: unknown) => (order.push(`rule ${JSON.stringify(input)}`), true) };
    const all = tools.map((t) => (t === write ? traced : t));
    const paused = await collect(runTools(calls, { tools: all, beforeToolCall: hook }));
    expect(order).toEqual(['rule {"path":"/etc/a"}']);
    const [request] = paused.batch.paused!.requests;
    const resumed = await collect(runTools(calls, { tools: all, beforeToolCall: hook, resume: { state: paused.batch.paused!.state, approvals: [{ approvalId: request!.approvalId, approved: true }] } }));
    // The rule is not asked again on resume; the hook runs once, now.
    expect(order).toEqual(['rule {"path":"/etc/a"}', 'hook {"path":"/etc/a"}']);
    expect(resumed.batch.messages.map(text)).toEqual(['wrote /etc/a']);
  });

  it('H1: beforeToolCall answering { needsApproval: true, reason } defers with source "hook"; once approved the hook is not asked again', async () => {
    const { tools, executed } = makeTools();
    let asked = 0;
    const beforeToolCall: RunToolsOptions['beforeToolCall'] = ({ toolCall }) => {
      asked++;
      return toolCall.name === 'read' ? { needsApproval: true, reason: 'Reads are audited.' } : undefined;
    };
    const calls = [call('a', 'read', { path: 'p' })];
    const paused = await collect(runTools(calls, { tools, beforeToolCall }));
    const [request] = paused.batch.paused!.requests;
    expect(request).toMatchObject({ source: 'hook', reason: 'Reads are audited.', toolName: 'read', input: { path: 'p' } });
    const resumed = await collect(runTools(calls, { tools, beforeToolCall, resume: { state: paused.batch.paused!.state, approvals: [{ approvalId: request!.approvalId, approved: true }] } }));
    expect(asked).toBe(1);
    expect(executed).toEqual(['a']);
    expect(resumed.batch.messages.map(text)).toEqual(['read p']);
  });

  it('H1, P4: a needsApproval function that throws or answers a non-boolean is that call\'s rejected result', async () => {
    const throwing = defineTool({ name: 'throwing', input: v.object({}), needsApproval: () => { throw new Error('rule broke'); }, execute: () => 'ran' });
    const stringy = defineTool({ name: 'stringy', input: v.object({}), needsApproval: (() => 'yes') as unknown as () => boolean, execute: () => 'ran' });
    const { events, batch } = await collect(runTools([call('a', 'throwing'), call('b', 'stringy')], { tools: [throwing, stringy] }));
    expect(batch.paused).toBeUndefined();
    expect(batch.messages.map(text)).toEqual([
      'Tool "throwing" was not run: its needsApproval threw rule broke. This is a problem in the tool definition, not in your call.',
      'Tool "stringy" was not run: its needsApproval returned string, not a boolean. This is a problem in the tool definition, not in your call.',
    ]);
    expect(ofType(events, 'tool_execution_end').map((e) => e.outcome)).toEqual(['rejected', 'rejected']);
  });

  it('H1: needsApproval gets the typed input; the approval event narrows on its type', () => {
    defineTool({
      name: 'typed',
      input: v.object({ path: v.string() }),
      needsApproval: (input, context) => {
        expectTypeOf(input).toEqualTypeOf<{ path: string }>();
        expectTypeOf(context.index).toEqualTypeOf<number>();
        return input.path.startsWith('/');
      },
      execute: () => '',
    });
    const onEvent = (event: ToolEvent) => {
      if (event.type === 'tool_approval_request') expectTypeOf(event.request).toEqualTypeOf<ToolApprovalRequest>();
    };
    expect(typeof onEvent).toBe('function');
  });

  it('H1: defineTool refuses a needsApproval that is neither a boolean nor a function', () => {
    expect(() => defineTool({ name: 't', input: v.object({}), needsApproval: 'always' as never, execute: () => '' })).toThrow(
      'defineTool: tool "t".needsApproval must be a boolean or a function of the input, received string "always"',
    );
  });
});

describe('H2 the approve option answers in process', () => {
  it('H2: approved calls run, denied calls get a rejected result with the reason, undefined defers', async () => {
    const { tools, executed } = makeTools();
    const calls = [call('a', 'remove', { path: '1' }), call('b', 'remove', { path: '2' }), call('c', 'remove', { path: '3' })];
    const seen: unknown[] = [];
    const { events, batch } = await collect(
      runTools(calls, {
        tools,
        approve: (request, { signal }) => {
          seen.push([request.index, signal instanceof AbortSignal]);
          if (request.index === 2) return undefined;
          return { approvalId: request.approvalId, approved: request.index === 0, reason: 'Keep it.' };
        },
      }),
    );
    expect(seen).toEqual([
      [0, true],
      [1, true],
      [2, true],
    ]);
    expect(executed).toEqual(['a']);
    expect(batch.messages.map(text)).toEqual([
      'removed 1',
      'A person denied this call to tool "remove", so it was not run. Their reason: "Keep it.". Do not try it again unless the user asks you to.',
    ]);
    expect(ofType(events, 'tool_execution_end').map((e) => [e.index, e.outcome])).toEqual([
      [0, 'ok'],
      [1, 'rejected'],
    ]);
    expect(batch.paused?.requests.map((r) => r.index)).toEqual([2]);
  });

  it('H2, P4: approve throwing, or answering without a boolean approved, is the call\'s rejected result', async () => {
    const { tools, executed } = makeTools();
    const calls = [call('a', 'remove', { path: '1' }), call('b', 'remove', { path: '2' })];
    const { batch } = await collect(
      runTools(calls, {
        tools,
        approve: (request) => {
          if (request.index === 0) throw new Error('prompt closed');
          return { approvalId: request.approvalId, approved: 'yes' } as never;
        },
      }),
    );
    expect(executed).toEqual([]);
    expect(batch.messages.map(text)).toEqual([
      'Tool call "remove" was not run: asking for its approval failed: prompt closed',
      'Tool call "remove" was not run: asking for its approval failed: its answer\'s approved is the string "yes", not a boolean',
    ]);
  });
});

describe('H3 a batch that reaches a deferred call ends paused', () => {
  it('H3, P1: parallel mode prepares past a deferred call; later approvals are collected, later plain calls run; only the released prefix is in messages', async () => {
    const { tools, executed } = makeTools();
    const calls = [call('a', 'read', { path: '0' }), call('b', 'remove', { path: '1' }), call('c', 'read', { path: '2' }), call('d', 'remove', { path: '3' }), call('e', 'read', { path: '4' })];
    const { events, batch } = await collect(runTools(calls, { tools }));
    expect(events.map((e) => `${e.type} ${e.index}`)).toEqual([
      'tool_execution_start 0',
      'tool_execution_end 0',
      'tool_result 0',
      'tool_execution_start 1',
      'tool_approval_request 1',
      'tool_execution_start 2',
      'tool_execution_end 2',
      'tool_execution_start 3',
      'tool_approval_request 3',
      'tool_execution_start 4',
      'tool_execution_end 4',
    ]);
    expect(executed).toEqual(['a', 'c', 'e']);
    expect(batch.messages.map(text)).toEqual(['read 0']);
    expect(batch.terminate).toBe(false);
    expect(batch.aborted).toBe(false);
    expect(batch.paused!.requests.map((r) => r.toolCallId)).toEqual(['b', 'd']);
    // The results of the calls that ended after the first deferred one are kept in the state.
    expect(bodyOf(batch.paused!.state).calls.map((c) => (c.result ? text(c.result) : c.request ? 'pending' : 'held'))).toEqual(['read 0', 'pending', 'read 2', 'pending', 'read 4']);
  });

  it('H3, S2: sequential mode prepares nothing after a deferred call: one pause, one request', async () => {
    const { tools, executed } = makeTools();
    const calls = [call('a', 'read', { path: '0' }), call('b', 'remove', { path: '1' }), call('c', 'remove', { path: '2' }), call('d', 'read', { path: '3' })];
    const { events, batch } = await collect(runTools(calls, { tools, mode: 'sequential' }));
    expect(ofType(events, 'tool_execution_start').map((e) => e.index)).toEqual([0, 1]);
    expect(executed).toEqual(['a']);
    expect(batch.paused!.requests.map((r) => r.index)).toEqual([1]);
    expect(bodyOf(batch.paused!.state).calls.map((c) => (c.result ? 'ended' : c.request ? 'pending' : 'held'))).toEqual(['ended', 'pending', 'held', 'held']);
  });

  it('H3, S3: an exclusive call after a deferred one is held unprepared, with every call after it', async () => {
    const { tools, executed } = makeTools();
    const calls = [call('a', 'remove', { path: '1' }), call('b', 'read', { path: '2' }), call('c', 'exclusive'), call('d', 'remove', { path: '3' })];
    const { events, batch } = await collect(runTools(calls, { tools }));
    expect(ofType(events, 'tool_execution_start').map((e) => e.index)).toEqual([0, 1]);
    expect(executed).toEqual(['b']);
    expect(batch.paused!.requests.map((r) => r.index)).toEqual([0]);
  });

  it('H3, S4: calls from a stream are read to its end before the batch pauses; the state keeps every call; a stream that fails answers the deferred calls too', async () => {
    const { tools, executed } = makeTools();
    const calls = [call('a', 'remove', { path: '1' }), call('b', 'read', { path: '2' }), call('c', 'exclusive'), call('d', 'read', { path: '3' })];
    async function* stream(fail: boolean) {
      for (const c of calls) {
        await Promise.resolve();
        yield c;
      }
      if (fail) throw new Error('stream broke');
    }
    const { batch } = await collect(runTools(stream(false), { tools }));
    expect(bodyOf(batch.paused!.state).calls.map((c) => c.call.id)).toEqual(['a', 'b', 'c', 'd']);
    expect(executed).toEqual(['b']);
    const resumed = await collect(runTools(calls, { tools, resume: { state: batch.paused!.state, approvals: [{ approvalId: batch.paused!.requests[0]!.approvalId, approved: true }] } }));
    expect(resumed.batch.messages.map(text)).toEqual(['removed 1', 'read 2', 'alone', 'read 3']);

    const events: ToolEvent[] = [];
    const run = runTools(stream(true), { tools });
    const error = await (async () => {
      try {
        for await (const event of run) events.push(event);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toEqual(new Error('stream broke'));
    expect(ofType(events, 'tool_result').map((e) => [e.index, ofType(events, 'tool_execution_end').find((x) => x.index === e.index)!.outcome])).toEqual([
      [0, 'not_run'],
      [1, 'ok'],
      [2, 'not_run'],
      [3, 'not_run'],
    ]);
  });

  it('H3: the batch pauses only when nothing is running', async () => {
    const open = gate();
    const slow = defineTool({
      name: 'slow',
      input: v.object({}),
      async execute() {
        await open.promise;
        return 'slow done';
      },
    });
    const { tools } = makeTools();
    const run = runTools([call('a', 'remove', { path: '1' }), call('b', 'slow')], { tools: [...tools, slow] });
    const seen: string[] = [];
    let finished = false;
    const done = (async () => {
      for (;;) {
        const step = await run.next();
        if (step.done) {
          finished = true;
          return step.value;
        }
        seen.push(`${step.value.type} ${step.value.index}`);
      }
    })();
    await settle(10);
    expect(seen).toEqual(['tool_execution_start 0', 'tool_approval_request 0', 'tool_execution_start 1']);
    expect(finished).toBe(false);
    open.open();
    const batch = await done;
    expect(seen.at(-1)).toBe('tool_execution_end 1');
    expect(bodyOf(batch.paused!.state).calls[1]!.result).toMatchObject({ content: [{ type: 'text', text: 'slow done' }] });
  });
});

describe('H4 the state is JSON', () => {
  it('H4: the state survives JSON.stringify/parse unchanged, has a version and a kind, and resumes from its text', async () => {
    const { tools } = makeTools();
    const calls = [call('a', 'remove', { path: '1' }), call('b', 'read', { path: '2' })];
    const { batch } = await collect(runTools(calls, { tools }));
    const state = batch.paused!.state;
    expect(JSON.parse(JSON.stringify(state))).toEqual(state);
    expect(state).toMatchObject({ version: 2, kind: 'toolrun/paused-batch', payload: expect.any(String) });
    expect(Object.keys(state).sort()).toEqual(['kind', 'payload', 'version']);
    const resumed = await collect(runTools(calls, { tools, resume: { state: JSON.stringify(state), approvals: [{ approvalId: batch.paused!.requests[0]!.approvalId, approved: true }] } }));
    expect(resumed.batch.messages.map(text)).toEqual(['removed 1', 'read 2']);
  });
  // The body kept with the state object for a resume in the same process must be
  // exactly what parsing its payload gives. Fails if it shares a request or a message with
  // what the application was handed (the first half), or if it is read although the object's
  // payload was replaced (the second half).
  it('H4: a resume from the state object in the process that paused reads the body its payload was written from, only while the payload is that text, sharing nothing the application was handed', async () => {
    const { tools } = makeTools();
    const calls = [call('a', 'read', { path: '0' }), call('b', 'remove', { path: '1' }), call('c', 'remove', { path: '2' })];
    const first = await collect(runTools(calls, { tools }));
    const paused = first.batch.paused!;
    // The application edits what it was handed: the released message, a request (the event's and the batch's are one object).
    (first.batch.messages[0]!.content[0] as { text: string }).text = 'changed';
    (paused.requests[0]!.input as { path: string }).path = 'changed';
    const again = await collect(runTools(calls, { tools, resume: { state: paused.state, approvals: [{ approvalId: paused.requests[1]!.approvalId, approved: true }] } }));
    expect(again.batch.messages.map(text)).toEqual(['read 0']);
    expect(again.batch.paused!.requests.map((r) => r.input)).toEqual([{ path: '1' }]);

    const second = await collect(runTools(calls, { tools }));
    const state = second.batch.paused!.state;
    (state as { payload: string }).payload = state.payload.replace('read 0', 'edited 0');
    const approvals = second.batch.paused!.requests.map((r) => ({ approvalId: r.approvalId, approved: true }));
    const edited = await collect(runTools(calls, { tools, resume: { state, approvals } }));
    expect(edited.batch.messages.map(text)).toEqual(['edited 0', 'removed 1', 'removed 2']);
  });
});

describe('H5 resuming a paused batch', () => {
  it('H5, O6: approved calls run, denied ones are rejected, answered ones are not run again; events and messages match an uninterrupted run', async () => {
    const calls = [call('a', 'read', { path: '0' }), call('b', 'remove', { path: '1' }), call('c', 'read', { path: '2' }), call('d', 'remove', { path: '3' })];
    const decide = (index: number) => index === 1;
    const ref = makeTools();
    const expected = await reference(calls, { tools: ref.tools }, decide);
    expectRunInvariants(calls, expected.events, expected.batch);

    const { tools, executed } = makeTools();
    const first = await collect(runTools(calls, { tools }));
    const approvals: ToolApprovalResponse[] = first.batch.paused!.requests.map((r) => ({ approvalId: r.approvalId, approved: decide(r.index), reason: 'Not now.' }));
    const second = await collect(runTools(calls, { tools, resume: { state: JSON.parse(JSON.stringify(first.batch.paused!.state)) as PausedBatchState, approvals } }));
    expect(second.batch.paused).toBeUndefined();
    expect(second.batch.messages).toEqual(expected.batch.messages);
    expect(executed.sort()).toEqual(ref.executed.sort());
    // The resumed run: a start for each call it works on, a result for every call not released before the pause.
    expect(second.events.map((e) => `${e.type} ${e.index}`)).toEqual([
      'tool_execution_start 1',
      'tool_execution_end 1',
      'tool_result 1',
      'tool_result 2',
      'tool_execution_start 3',
      'tool_execution_end 3',
      'tool_result 3',
    ]);
    expect(ofType([...first.events, ...second.events], 'tool_result').map((e) => e.message)).toEqual(expected.batch.messages);
  });

  it('H5: a request without a decision stays pending: the resumed batch pauses again with the same approvalId and emits the request again', async () => {
    const { tools, executed } = makeTools();
    const calls = [call('a', 'remove', { path: '1' }), call('b', 'remove', { path: '2' })];
    const first = await collect(runTools(calls, { tools }));
    const [ra, rb] = first.batch.paused!.requests;
    const second = await collect(runTools(calls, { tools, resume: { state: first.batch.paused!.state, approvals: [{ approvalId: ra!.approvalId, approved: true }] } }));
    expect(second.batch.messages.map(text)).toEqual(['removed 1']);
    expect(second.batch.paused!.requests).toEqual([rb]);
    expect(ofType(second.events, 'tool_approval_request').map((e) => e.request)).toEqual([rb]);
    expect(bodyOf(second.batch.paused!.state).id).not.toBe(bodyOf(first.batch.paused!.state).id);
    const third = await collect(runTools(calls, { tools, resume: { state: second.batch.paused!.state, approvals: [{ approvalId: rb!.approvalId, approved: true }] } }));
    expect(third.batch.messages.map(text)).toEqual(['removed 1', 'removed 2']);
    expect(executed).toEqual(['a', 'b']);
  });

  it('H2, H5: a request the resume brings no decision for is asked through the resumed run\'s approve option, with the same approvalId', async () => {
    const { tools, executed } = makeTools();
    const calls = [call('a', 'remove', { path: '1' })];
    const first = await collect(runTools(calls, { tools }));
    const asked: string[] = [];
    const second = await collect(
      runTools(calls, { tools, resume: { state: first.batch.paused!.state }, approve: (request) => (asked.push(request.approvalId), { approvalId: request.approvalId, approved: true }) }),
    );
    expect(asked).toEqual([first.batch.paused!.requests[0]!.approvalId]);
    expect(second.batch.messages.map(text)).toEqual(['removed 1']);
    expect(executed).toEqual(['a']);
  });

  it('H5: the resumed run re-validates the approved call from its raw arguments and runs the prepared input', async () => {
    const { tools } = makeTools();
    const calls = [call('a', 'write', '{"path":"  /etc/x  "}')];
    const first = await collect(runTools(calls, { tools }));
    expect(first.batch.paused!.requests[0]!.input).toEqual({ path: '/etc/x' });
    const second = await collect(runTools(calls, { tools, resume: { state: first.batch.paused!.state, approvals: [{ approvalId: first.batch.paused!.requests[0]!.approvalId, approved: true }] } }));
    expect(second.batch.messages.map(text)).toEqual(['wrote /etc/x']);
  });
});

describe('H6 abort and time while calls wait for approval', () => {
  it('H6, A2: an abort while a call is deferred ends the deferred and held calls not_run; the batch is aborted, not paused', async () => {
    const controller = new AbortController();
    const open = gate();
    const slow = defineTool({
      name: 'slow',
      input: v.object({}),
      async execute(_input, { signal }) {
        await Promise.race([open.promise, new Promise((resolve) => signal.addEventListener('abort', resolve))]);
        return 'slow done';
      },
    });
    const { tools, executed } = makeTools();
    const calls = [call('a', 'remove', { path: '1' }), call('b', 'slow'), call('c', 'exclusive'), call('d', 'read', { path: 'x' })];
    const run = runTools(calls, { tools: [...tools, slow], signal: controller.signal });
    const first = await run.next();
    expect(first.value).toMatchObject({ type: 'tool_execution_start', index: 0 });
    await run.next(); // approval request 0
    await run.next(); // start 1
    controller.abort();
    const rest = await collect(run);
    expect(rest.batch.paused).toBeUndefined();
    expect(rest.batch.aborted).toBe(true);
    expect(rest.batch.messages.map((m) => m.toolCallId)).toEqual(['a', 'b', 'c', 'd']);
    expect(ofType(rest.events, 'tool_execution_end').map((e) => [e.index, e.outcome]).sort()).toEqual([
      [0, 'not_run'],
      [1, 'interrupted'],
      [2, 'not_run'],
      [3, 'not_run'],
    ]);
    expect(executed).toEqual([]);
  });

  it('H6: an abort while approve is still asking ends that call not_run', async () => {
    const controller = new AbortController();
    const { tools, executed } = makeTools();
    const asking = gate();
    const run = runTools([call('a', 'remove', { path: '1' })], {
      tools,
      signal: controller.signal,
      approve: () => {
        asking.open();
        return new Promise<undefined>(() => {});
      },
    });
    const pending = collect(run);
    await asking.promise;
    controller.abort();
    const { events, batch } = await pending;
    expect(batch.aborted).toBe(true);
    expect(ofType(events, 'tool_execution_end').map((e) => e.outcome)).toEqual(['not_run']);
    expect(executed).toEqual([]);
  });

  it('H6, A4: a time limit does not count the wait for approval', async () => {
    vi.useFakeTimers();
    const timed = defineTool({
      name: 'timed',
      input: v.object({}),
      needsApproval: true,
      timeoutMs: 50,
      async execute() {
        await new Promise((resolve) => setTimeout(resolve, 10));
        return 'in time';
      },
    });
    const run = collect(
      runTools([call('a', 'timed')], {
        tools: [timed],
        approve: async (request) => {
          await new Promise((resolve) => setTimeout(resolve, 1_000));
          return { approvalId: request.approvalId, approved: true };
        },
      }),
    );
    // Every timer runs, in the fake clock's order, until none is left: the approval's 1,000 ms,
    // then the tool's 10 ms against its 50 ms limit (a limit counting the wait would fire first).
    await vi.runAllTimersAsync();
    const { batch } = await run;
    expect(batch.messages.map(text)).toEqual(['in time']);
  });
});

describe('H7 a state resumes once', () => {
  it('H7: a second resume of the same state in this process is refused with already_resumed', async () => {
    const { tools, executed } = makeTools();
    const calls = [call('a', 'remove', { path: '1' })];
    const first = await collect(runTools(calls, { tools }));
    const resume = { state: JSON.stringify(first.batch.paused!.state), approvals: [{ approvalId: first.batch.paused!.requests[0]!.approvalId, approved: true }] };
    await collect(runTools(calls, { tools, resume }));
    const error = await rejection(runTools(calls, { tools, resume }));
    expect(error.code).toBe('already_resumed');
    expect(executed).toEqual(['a']);
  });

  // A state resumed after 10,000 other resumes (10,000 runs, about 1 s of CPU):
  // spec/core/approval.slow.spec.ts, in npm run test:slow.

  it('H7: resume.claim is asked with the state id and expiry after every other check; false refuses the resume', async () => {
    const { tools, executed } = makeTools();
    const calls = [call('a', 'remove', { path: '1' })];
    const first = await collect(runTools(calls, { tools }));
    const claimed: unknown[] = [];
    // A wrong approval: refused before the claim, so the claim is not asked.
    await rejection(runTools(calls, { tools, resume: { state: first.batch.paused!.state, approvals: [{ approvalId: 'nope', approved: true }], claim: (id) => (claimed.push(id), true) } }));
    expect(claimed).toEqual([]);
    const error = await rejection(runTools(calls, { tools, resume: { state: first.batch.paused!.state, claim: (id, info) => (claimed.push(id, info), false) } }));
    expect(error.code).toBe('already_resumed');
    const body = bodyOf(first.batch.paused!.state);
    expect(claimed).toEqual([body.id, { expiresAt: body.expiresAt }]);
    expect(executed).toEqual([]);
  });

  // Fails when the id is marked used before claim runs: the retry then
  // gets already_resumed though nothing had run.
  it('H7: a throwing claim leaves the state usable', async () => {
    const { tools, executed } = makeTools();
    const calls = [call('a', 'remove', { path: '1' })];
    const first = await collect(runTools(calls, { tools }));
    const approvals = [{ approvalId: first.batch.paused!.requests[0]!.approvalId, approved: true }];
    const state = JSON.stringify(first.batch.paused!.state);
    const down = new Error('the claims table is unreachable');
    const error = await rejection(runTools(calls, { tools, resume: { state, approvals, claim: () => Promise.reject(down) } }));
    expect(error.code).toBe('claim');
    expect(error.cause).toBe(down);
    expect(executed).toEqual([]);
    const store = inMemoryClaim();
    const retried = await collect(runTools(calls, { tools, resume: { state, approvals, claim: store } }));
    expect(retried.batch.messages.map(text)).toEqual(['removed 1']);
    expect(executed).toEqual(['a']);
    expect((await rejection(runTools(calls, { tools, resume: { state, approvals, claim: store } }))).code).toBe('already_resumed');
  });

  it('H7: two resumes of one state at once with a store: exactly one runs', async () => {
    const { tools, executed } = makeTools();
    const calls = [call('a', 'remove', { path: '1' })];
    const first = await collect(runTools(calls, { tools }));
    const resume = { state: first.batch.paused!.state, approvals: [{ approvalId: first.batch.paused!.requests[0]!.approvalId, approved: true }] };
    // A store that answers after a gate: both resumes reach it before either is marked.
    const open = gate();
    const taken = new Set<string>();
    const claim = async (id: string): Promise<boolean> => {
      await open.promise;
      if (taken.has(id)) return false;
      taken.add(id);
      return true;
    };
    const one = collect(runTools(calls, { tools, resume: { ...resume, claim } }));
    const two = collect(runTools(calls, { tools, resume: { ...resume, claim } }));
    await settle();
    open.open();
    const outcomes = await Promise.allSettled([one, two]);
    expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect((outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult).reason).toMatchObject({ code: 'already_resumed' });
    expect(executed).toEqual(['a']);
  });

  it('H7: a state expires stateTtlMs after its pause (code expired); the expiry is inside the signed payload', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-12-01T12:00:00Z'));
    const { tools, executed } = makeTools();
    const calls = [call('a', 'remove', { path: '1' })];
    const byDefault = await collect(runTools(calls, { tools }));
    expect(bodyOf(byDefault.batch.paused!.state).expiresAt).toBe(Date.now() + 24 * 60 * 60 * 1000);
    const first = await collect(runTools(calls, { tools, stateTtlMs: 60_000, signingSecret: 's' }));
    const state = first.batch.paused!.state;
    expect(bodyOf(state).expiresAt).toBe(Date.now() + 60_000);
    const approvals = [{ approvalId: first.batch.paused!.requests[0]!.approvalId, approved: true }];
    vi.setSystemTime(Date.now() + 60_000);
    const error = await rejection(runTools(calls, { tools, signingSecret: 's', resume: { state, approvals, claim: inMemoryClaim() } }));
    expect(error.code).toBe('expired');
    // Moving the expiry breaks the signature.
    const later = withBody(state, (body) => ({ ...body, expiresAt: Date.now() + 60_000 }));
    expect((await rejection(runTools(calls, { tools, signingSecret: 's', resume: { state: later, approvals, claim: inMemoryClaim() } }))).code).toBe('signature');
    expect(executed).toEqual([]);
    expect(() => runTools([], { tools, stateTtlMs: 0 })).toThrow('runTools: options.stateTtlMs must be a positive integer (ms), received number 0');
  });

  // Fails if claim becomes optional again with a secret: a signed state then resumes once per process, not once.
  it('H7: with signingSecret, resume needs a claim (TypeError at once); inMemoryClaim keeps an id until its state expires', () => {
    const { tools } = makeTools();
    expect(() => runTools([], { tools, signingSecret: 's', resume: { state: '{}' } })).toThrow('runTools: options.resume.claim is required with options.signingSecret');
    expect(() => runTools([], { tools, resume: { state: '{}', claim: 'yes' as never } })).toThrow('runTools: options.resume.claim must be a function, received string "yes"');
    // A fixed fake clock: expiry is moved by setSystemTime, never by real time passing.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-12-01T12:00:00Z'));
    const claim = inMemoryClaim();
    const expiresAt = Date.now() + 1_000;
    expect(claim('first', { expiresAt })).toBe(true);
    for (let i = 0; i < 20_000; i++) claim(`other-${i}`, { expiresAt: Date.now() + 10 });
    expect(claim('first', { expiresAt })).toBe(false);
    vi.setSystemTime(Date.now() + 1_001);
    // Past its expiry the id may be forgotten (the reader refuses the expired state anyway).
    for (let i = 0; i < 40_000; i++) claim(`later-${i}`, { expiresAt: Date.now() + 10 });
    expect(claim('first', { expiresAt })).toBe(true);
  });
});

describe('H8 the resumed run must have the same tools, calls and requests', () => {
  it('H8: a missing tool, an extra tool or a changed input schema is refused with code tools', async () => {
    const { tools } = makeTools();
    const calls = [call('a', 'remove', { path: '1' })];
    const { batch } = await collect(runTools(calls, { tools }));
    const state = JSON.stringify(batch.paused!.state);
    const changed = tools.map((t) => (t.name === 'read' ? { ...t, input: v.object({ path: v.string(), limit: v.number() }) } : t));
    const extra = defineTool({ name: 'extra', input: v.object({}), execute: () => '' });
    for (const variant of [tools.slice(1), [...tools, extra], changed]) {
      const error = await rejection(runTools(calls, { tools: variant, resume: { state } }));
      expect(error.code).toBe('tools');
    }
    expect((await rejection(runTools(calls, { tools: changed, resume: { state } }))).message).toContain('input schema changed: read');
  });

  it('H8: the same arguments with their keys in another order are the same call; a changed value is not', async () => {
    const { tools } = makeTools();
    const { batch } = await collect(runTools([call('a', 'remove', { path: '1', note: { x: 1, y: [1, 2] } })], { tools }));
    const state = JSON.stringify(batch.paused!.state);
    const approvals = [{ approvalId: batch.paused!.requests[0]!.approvalId, approved: true }];
    // Fails if the comparison were of JSON text only: the reordered keys would be refused as other calls.
    const reordered = await collect(runTools([call('a', 'remove', { note: { y: [1, 2], x: 1 }, path: '1' })], { tools, resume: { state, approvals } }));
    expect(reordered.batch.messages).toHaveLength(1);
    const { batch: again } = await collect(runTools([call('a', 'remove', { path: '1', note: { x: 1, y: [1, 2] } })], { tools }));
    const state2 = JSON.stringify(again.paused!.state);
    // Fails if the fast path answered "same" for different texts.
    expect((await rejection(runTools([call('a', 'remove', { path: '1', note: { x: 1, y: [2, 1] } })], { tools, resume: { state: state2 } }))).code).toBe('calls');
  });

  it('H8: other calls, or an approvalId no pending request has, are refused (calls, approval)', async () => {
    const { tools } = makeTools();
    const calls = [call('a', 'remove', { path: '1' })];
    const { batch } = await collect(runTools(calls, { tools }));
    const state = JSON.stringify(batch.paused!.state);
    expect((await rejection(runTools([call('a', 'remove', { path: '2' })], { tools, resume: { state } }))).code).toBe('calls');
    expect((await rejection(runTools([...calls, call('b', 'read')], { tools, resume: { state } }))).code).toBe('calls');
    const unknown = await rejection(runTools(calls, { tools, resume: { state, approvals: [{ approvalId: 'nope', approved: true }] } }));
    expect(unknown.code).toBe('approval');
    expect(unknown.message).toContain('"nope"');
    const id = batch.paused!.requests[0]!.approvalId;
    const twice = await rejection(runTools(calls, { tools, resume: { state, approvals: [{ approvalId: id, approved: true }, { approvalId: id, approved: false }] } }));
    expect(twice.code).toBe('approval');
  });
});

describe('H9 a tampered state is refused; signing', () => {
  async function pausedState(options: Partial<RunToolsOptions> = {}) {
    const { tools, executed } = makeTools();
    const calls = [call('a', 'read', { path: '0' }), call('b', 'remove', { path: '1' }), call('c', 'read', { path: '2' })];
    const { batch } = await collect(runTools(calls, { tools, ...options }));
    return { tools, executed, calls, state: batch.paused!.state, approvalId: batch.paused!.requests[0]!.approvalId };
  }
  /** Every text JSON.parse is given while `work` runs. */
  async function parsedDuring(work: () => Promise<unknown>): Promise<string[]> {
    const parse = vi.spyOn(JSON, 'parse');
    try {
      await work();
      return parse.mock.calls.map(([text]) => String(text));
    } finally {
      parse.mockRestore();
    }
  }

  it('H9: not JSON, another kind or version, a wrong field, an inconsistent state: a ResumeError from the first next(), never from runTools()', async () => {
    const { tools, calls, state } = await pausedState();
    const edit = (change: (calls: { call: unknown; result?: Record<string, unknown>; request?: unknown }[]) => unknown[]) =>
      withBody(state, (body) => ({ ...body, calls: change(body.calls as { call: unknown; result?: Record<string, unknown> }[]) }));
    const cases: [unknown, string][] = [
      ['{not json', 'malformed'],
      ['[1, 2]', 'malformed'],
      [{ ...state, kind: 'other' }, 'malformed'],
      [{ ...state, version: 3 }, 'version'],
      [{ ...state, extra: true }, 'malformed'],
      [{ ...state, payload: 42 }, 'malformed'],
      [{ ...state, payload: '{not json' }, 'malformed'],
      [{ ...state, signature: 'abc' }, 'malformed'],
      [withBody(state, (body) => ({ ...body, released: 'one' })), 'malformed'],
      [withBody(state, (body) => ({ ...body, extra: true })), 'malformed'],
      [withBody(state, (body) => ({ ...body, id: 'not-a-uuid' })), 'malformed'],
      [withBody(state, (body) => ({ ...body, expiresAt: 'tomorrow' })), 'malformed'],
      [edit((c) => c.map((entry, i) => (i === 0 ? { ...entry, result: { ...entry.result!, content: [{ type: 'html', html: '<b>' }] } } : entry))), 'malformed'],
      [edit((c) => c.map((entry, i) => (i === 2 ? { ...entry, result: { ...entry.result!, toolCallId: 'zzz' } } : entry))), 'malformed'],
      [withBody(state, (body) => ({ ...body, released: 3 })), 'malformed'],
      [edit((c) => c.map((entry) => ({ call: entry.call, ...(entry.result ? { result: entry.result } : {}) }))), 'malformed'],
    ];
    for (const [given, code] of cases) {
      const run = runTools(calls, { tools, resume: { state: given as PausedBatchState } });
      expect((await rejection(run)).code, JSON.stringify(given).slice(0, 120)).toBe(code);
    }
  });

  it('H9: a state of format version 1 is refused with code version, as text or as object', async () => {
    const { tools, calls, state } = await pausedState();
    const v1 = { version: 1, kind: 'toolrun/paused-batch', ...(bodyOf(state) as object) };
    expect((await rejection(runTools(calls, { tools, resume: { state: JSON.stringify(v1) } }))).code).toBe('version');
    expect((await rejection(runTools(calls, { tools, resume: { state: v1 as unknown as PausedBatchState } }))).code).toBe('version');
  });

  // Fails if the length check moves after JSON.parse (unbounded, this text took 80 s and 3.8 GB of RSS).
  it('H9: a 132 M-char state is refused before parsing', async () => {
    const { tools, calls } = await pausedState();
    const huge = `{"version":2,"kind":"toolrun/paused-batch","payload":"${'x'.repeat(132_000_000)}"}`;
    expect(huge.length).toBeGreaterThan(132_000_000);
    let error: ResumeError | undefined;
    const parsed = await parsedDuring(async () => {
      error = await rejection(runTools(calls, { tools, resume: { state: huge } }));
    });
    expect(error!.code).toBe('malformed');
    expect(error!.message).toContain(`at most ${16 * 1024 * 1024} are read (maxStateChars)`);
    expect(parsed).toEqual([]);
    // The same payload in an envelope object: bounded on the payload's length, nothing parsed.
    const object = { version: 2, kind: 'toolrun/paused-batch', payload: huge.slice(55, -2) } as const;
    const parsedObject = await parsedDuring(async () => {
      expect((await rejection(runTools(calls, { tools, resume: { state: object } }))).code).toBe('malformed');
    });
    expect(parsedObject).toEqual([]);
  });

  it('H9: maxStateChars bounds the text, and an object by the text it would be', async () => {
    const { tools, calls, state, approvalId } = await pausedState();
    const json = JSON.stringify(state);
    const approvals = [{ approvalId, approved: true }];
    const short = await rejection(runTools(calls, { tools, maxStateChars: json.length - 1, resume: { state: json, approvals } }));
    expect(short.message).toContain(`resume.state is ${json.length} characters of JSON; at most ${json.length - 1}`);
    expect((await rejection(runTools(calls, { tools, maxStateChars: json.length - 1, resume: { state, approvals } }))).message).toContain(`resume.state is ${json.length} characters of JSON`);
    const exact = await collect(runTools(calls, { tools, maxStateChars: json.length, resume: { state, approvals } }));
    expect(exact.batch.messages.map(text)).toEqual(['read 0', 'removed 1', 'read 2']);
    expect(() => runTools([], { tools, maxStateChars: 1.5 })).toThrow('runTools: options.maxStateChars must be a positive integer (characters), received number 1.5');
  });

  // Fails without the nesting/key/value scan: JSON.parse builds the 1 M-deep value and the state is accepted.
  it('H9: absurd sizes and depths are refused as malformed before the payload is parsed', async () => {
    const { tools, calls, state } = await pausedState();
    const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
    const inDetails = (given: PausedBatchState, n: number) =>
      ({ ...given, payload: given.payload.replace('"isError":false}', `"isError":false,"details":${deep(n)}}`) }) as PausedBatchState;
    expect(inDetails(state, 3).payload).toContain('"details":[[[]]]');
    const cases: [PausedBatchState, string][] = [
      [inDetails(state, 1_000_000), 'nested more than 256 deep'],
      [inDetails(state, 257), 'nested more than 256 deep'],
      [{ ...state, payload: state.payload.replace('"arguments":{"path":"0"}', `"arguments":{${Array.from({ length: 100_001 }, (_, i) => `"k${i}":0`).join(',')}}`) }, 'more than 100000 keys'],
      [{ ...state, payload: state.payload.replace('"arguments":{"path":"0"}', `"arguments":[${'0,'.repeat(1_000_000)}0]`) }, 'more than 1000000 values'],
      [{ ...state, payload: state.payload.replace('"arguments":{"path":"0"}', `"arguments":[${'[],'.repeat(200_000)}[]]`) }, 'more than 200000 objects and arrays'],
    ];
    for (const [given, message] of cases) {
      let error: ResumeError | undefined;
      const parsed = await parsedDuring(async () => {
        error = await rejection(runTools(calls, { tools, resume: { state: given } }));
      });
      expect(error!.code).toBe('malformed');
      expect(error!.message).toContain(message);
      expect(parsed.some((t) => t.length > 10_000)).toBe(false);
    }
    // 256 deep is within the bound: read, then resumed.
    const within = inDetails(state, 240);
    expect((await collect(runTools(calls, { tools, resume: { state: within } }))).batch.paused).toBeDefined();
  });

  // Fails if `__proto__` is dropped silently again (valibot's record skips it).
  it('H9: __proto__ / constructor / prototype names are refused with malformed; in free JSON values only __proto__ is', async () => {
    const { tools, calls, state } = await pausedState();
    const digest = Object.values(bodyOf(state).tools)[0]!;
    const replaced = (from: string, to: string) => ({ ...state, payload: state.payload.replace(from, to) }) as PausedBatchState;
    for (const name of ['__proto__', 'constructor', 'prototype']) {
      const error = await rejection(runTools(calls, { tools, resume: { state: replaced('"tools":{', `"tools":{"${name}":"${digest}",`) } }));
      expect(error.code).toBe('malformed');
      expect(error.message).toContain(`a key named "${name}"`);
    }
    const escaped = await rejection(runTools(calls, { tools, resume: { state: replaced('"tools":{', `"tools":{"\\u005f_proto__":"${digest}",`) } }));
    expect(escaped.message).toContain('a key named "__proto__"');
    expect((await rejection(runTools(calls, { tools, resume: { state: replaced('"isError":false}', '"isError":false,"details":{"a":[{"__proto__":{"x":1}}]}}') } }))).code).toBe('malformed');
    expect((await rejection(runTools(calls, { tools, resume: { state: replaced('"released":', '"constructor":1,"released":') } }))).code).toBe('malformed');
    // A model's argument key "constructor" is data: the state resumes.
    const { tools: tools2, state: state2, calls: calls2 } = await (async () => {
      const made = makeTools();
      const withKey = [call('a', 'read', { path: '0', constructor: 'x' }), call('b', 'remove', { path: '1' })];
      const { batch } = await collect(runTools(withKey, { tools: made.tools }));
      return { tools: made.tools, state: batch.paused!.state, calls: withKey };
    })();
    expect(state2.payload).toContain('"constructor":"x"');
    expect((await collect(runTools(calls2, { tools: tools2, resume: { state: state2 } }))).batch.paused).toBeDefined();
  });

  it('H9: with signingSecret the state is signed; an unsigned, edited or differently signed state is refused with code signature', async () => {
    const secret = 'correct horse battery staple';
    const claim = inMemoryClaim();
    const unsigned = await pausedState();
    expect(unsigned.state.signature).toBeUndefined();
    expect((await rejection(runTools(unsigned.calls, { tools: unsigned.tools, signingSecret: secret, resume: { state: unsigned.state, claim } }))).code).toBe('signature');

    const signed = await pausedState({ signingSecret: secret });
    expect(signed.state.signature).toMatch(/^[0-9a-f]{64}$/);
    // The HMAC is over exactly "kind@version\n" and the payload's UTF-8, as node:crypto computes it (fails if the signed bytes change).
    expect(signed.state.signature).toBe(createHmac('sha256', secret).update(`toolrun/paused-batch@2\n${signed.state.payload}`, 'utf8').digest('hex'));
    // An edit that keeps the state well formed: a forged result for call 2.
    const forged = withBody(signed.state, (body) => ({
      ...body,
      calls: (body.calls as { result?: object }[]).map((c, i) => (i === 2 ? { ...c, result: { ...c.result!, content: [{ type: 'text', text: 'forged' }] } } : c)),
    }));
    expect((await rejection(runTools(signed.calls, { tools: signed.tools, signingSecret: secret, resume: { state: forged, claim } }))).code).toBe('signature');
    expect((await rejection(runTools(signed.calls, { tools: signed.tools, signingSecret: 'another secret', resume: { state: signed.state, claim } }))).code).toBe('signature');
    // A signature over one kind does not pass for the other.
    expect((await rejection(runTools(signed.calls, { tools: signed.tools, signingSecret: secret, resume: { state: { ...signed.state, kind: 'toolrun/paused-agent' } as never, claim } }))).code).toBe('malformed');

    const resumed = await collect(
      runTools(signed.calls, { tools: signed.tools, signingSecret: new TextEncoder().encode(secret), resume: { state: JSON.stringify(signed.state), approvals: [{ approvalId: signed.approvalId, approved: true }], claim } }),
    );
    expect(resumed.batch.messages.map(text)).toEqual(['read 0', 'removed 1', 'read 2']);
    expect(signed.executed.sort()).toEqual(['a', 'b', 'c']);
  });

  // Fails if the payload is parsed before its signature is checked (checked after parsing, unsigned text reaches JSON.parse).
  it('H9: the signature is checked over the payload text before the payload is parsed', async () => {
    const secret = 's3cret';
    const signed = await pausedState({ signingSecret: secret });
    const nested = { ...signed.state, payload: signed.state.payload.replace('"arguments":{"path":"0"}', `"arguments":${'['.repeat(100)}${']'.repeat(100)}`) };
    let error: ResumeError | undefined;
    const parsed = await parsedDuring(async () => {
      error = await rejection(runTools(signed.calls, { tools: signed.tools, signingSecret: secret, resume: { state: JSON.stringify(nested), claim: inMemoryClaim() } }));
    });
    expect(error!.code).toBe('signature');
    // Only the envelope was parsed: never the payload, as text or inside the envelope's text.
    expect(parsed.filter((t) => t === nested.payload)).toEqual([]);
    expect(parsed).toHaveLength(1);
    // A lone surrogate would encode like U+FFFD: refused, so no two payloads share a signature.
    const lone = { ...signed.state, payload: signed.state.payload.replace('read', 'r\ud800ad') };
    expect((await rejection(runTools(signed.calls, { tools: signed.tools, signingSecret: secret, resume: { state: lone, claim: inMemoryClaim() } }))).code).toBe('malformed');
  });

  it('H9: runTools checks signingSecret and resume at once (TypeError)', () => {
    const { tools } = makeTools();
    expect(() => runTools([], { tools, signingSecret: '' })).toThrow('runTools: options.signingSecret must be a non-empty string or Uint8Array, received string ""');
    const stream = (async function* () {})();
    expect(() => runTools(stream, { tools, resume: { state: '{}' } })).toThrow('options.resume needs the calls as an array');
  });
});
