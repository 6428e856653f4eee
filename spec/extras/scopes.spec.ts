/**
 * The cancellation scopes outside the core (one scope everywhere): the agent
 * loop (lib/extras/agent/loop.ts) and `pipeEvents` (lib/extras/compose/pipe-events.ts) each
 * make one `CancelScope` that follows the caller's signal. What they must keep (A1, A5, A6):
 * the caller's abort reaches the signal they hand down, with the caller's reason; the
 * consumer leaving aborts it with an AbortError of its own; one listener on the caller's
 * signal while running, none once done — and after that, the caller's signal reaches nothing.
 */
import { getEventListeners } from 'node:events';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { from } from 'ix/asynciterable';
import { map } from 'ix/asynciterable/operators';
import { defineTool, pipeEvents, runAgent, runTools, type AgentResult, type AssistantMessage } from '../../lib/index.ts';
import { scriptedModel } from '../../lib/testing.ts';
import { gate } from '../helpers.ts';

const listeners = (signal: AbortSignal): number => getEventListeners(signal, 'abort').length;

async function drain<E, R>(run: AsyncGenerator<E, R, undefined>): Promise<{ events: E[]; result: R }> {
  const events: E[] = [];
  for (;;) {
    const step = await run.next();
    if (step.done === true) return { events, result: step.value };
    events.push(step.value);
  }
}

const say = (text: string): AssistantMessage => ({ role: 'assistant', content: [{ type: 'text', text }] });

/** A model whose one call waits for its signal: records that signal and when the call began. */
function waitingModel(): { model: ReturnType<typeof scriptedModel>; called: Promise<AbortSignal> } {
  const called = gate<AbortSignal>();
  const model = scriptedModel([
    (_messages, { signal }) => {
      called.open(signal);
      return new Promise<AssistantMessage>((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
    },
  ]);
  return { model, called: called.promise };
}

describe('runAgent: one CancelScope following the caller’s signal', () => {
  // Fails if the scope stops listening to the caller (the model's signal never aborts: the run
  // hangs) or hands down another reason; fails if the listener is not removed at the end.
  it('A1, A6: the caller’s abort reaches the model’s signal with the caller’s reason; one listener while running, none after', async () => {
    const caller = new AbortController();
    const { model, called } = waitingModel();
    const running = drain(runAgent({ model, tools: [], messages: [{ role: 'user', content: 'x' }], signal: caller.signal }));
    const modelSignal = await called;
    expect(listeners(caller.signal)).toBe(1);
    expect(modelSignal.aborted).toBe(false);
    const reason = new Error('Esc pressed');
    caller.abort(reason);
    const { result } = await running;
    expect(modelSignal.reason).toBe(reason);
    expect((result as AgentResult).reason).toBe('aborted');
    expect(listeners(caller.signal)).toBe(0);
  });

  // Fails if the consumer's exit no longer aborts the scope (the tool's signal stays live)
  // or if it leaves the listener on the caller's signal.
  it('A5, A6: break at a yield aborts the signal the run handed down, with the consumer-exit reason; no listener left', async () => {
    const caller = new AbortController();
    let toolSignal: AbortSignal | undefined;
    const started = gate();
    const hold = defineTool({
      name: 'hold',
      input: v.object({}),
      async *execute(_input, { signal }) {
        toolSignal = signal;
        yield 'started';
        started.open();
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        return 'stopped';
      },
    });
    const model = scriptedModel([{ role: 'assistant', content: [{ type: 'toolCall', id: 'h1', name: 'hold', arguments: {} }] }, say('done')]);
    for await (const event of runAgent({ model, tools: [hold], messages: [{ role: 'user', content: 'x' }], signal: caller.signal })) {
      if (event.type === 'tool_execution_update') break;
    }
    expect(toolSignal?.aborted).toBe(true);
    expect(toolSignal?.reason).toMatchObject({ name: 'AbortError' });
    expect(caller.signal.aborted).toBe(false);
    expect(listeners(caller.signal)).toBe(0);
  });

  // Fails if the listener stays after a normal end: the caller's later abort would still reach
  // the finished run's signal.
  it('A6: after a run that completed, the caller’s signal has no listener and its abort reaches nothing', async () => {
    const caller = new AbortController();
    let modelSignal: AbortSignal | undefined;
    const model = scriptedModel([
      (_messages, { signal }) => {
        modelSignal = signal;
        return say('hi');
      },
    ]);
    const { result } = await drain(runAgent({ model, tools: [], messages: [{ role: 'user', content: 'x' }], signal: caller.signal }));
    expect(result.reason).toBe('completed');
    expect(listeners(caller.signal)).toBe(0);
    caller.abort(new Error('later'));
    expect(modelSignal?.aborted).toBe(false);
  });

  it('A6: an already aborted caller adds no listener; the run ends aborted before the model is called', async () => {
    const caller = new AbortController();
    caller.abort(new Error('before'));
    const model = scriptedModel([say('never')]);
    const { result } = await drain(runAgent({ model, tools: [], messages: [{ role: 'user', content: 'x' }], signal: caller.signal }));
    expect(result.reason).toBe('aborted');
    expect(model.calls).toBe(0);
    expect(listeners(caller.signal)).toBe(0);
  });
});

describe('pipeEvents: one CancelScope following the outer signal', () => {
  /** A tool that waits for its signal; reports the signal once it runs. */
  function waitingTool() {
    const running = gate<AbortSignal>();
    const tool = defineTool({
      name: 'wait',
      input: v.object({}),
      execute: (_input, { signal }) => {
        running.open(signal);
        return new Promise<string>((resolve) => signal.addEventListener('abort', () => resolve('stopped'), { once: true }));
      },
    });
    return { tool, running: running.promise };
  }

  // Fails if the scope stops listening to the outer signal (the tool never stops: the run
  // hangs), hands down another reason, or leaves its listener behind.
  it('A1, A6: the outer abort reaches the signal given to start, with the outer reason; one listener while running, none after', async () => {
    const outer = new AbortController();
    const { tool, running } = waitingTool();
    let startSignal: AbortSignal | undefined;
    const piped = pipeEvents(
      (signal) => {
        startSignal = signal;
        return runTools([{ id: 'w', name: 'wait', arguments: {} }], { tools: [tool], signal });
      },
      (events) => from(events).pipe(map((e) => e.type)),
      { signal: outer.signal },
    );
    const draining = drain(piped);
    const toolSignal = await running;
    expect(listeners(outer.signal)).toBe(1);
    const reason = new Error('outer stop');
    outer.abort(reason);
    const { events, result } = await draining;
    expect(startSignal?.reason).toBe(reason);
    expect(toolSignal.aborted).toBe(true);
    expect(events.at(-1)).toBe('tool_result');
    expect(result?.messages).toHaveLength(1);
    expect(result?.aborted).toBe(true);
    expect(listeners(outer.signal)).toBe(0);
  });

  // Fails if the consumer's exit no longer aborts the run's signal, or leaves the listener.
  it('A5, A6: a break aborts the signal given to start with the pipeline’s AbortError; no listener left', async () => {
    const outer = new AbortController();
    const { tool, running } = waitingTool();
    let startSignal: AbortSignal | undefined;
    for await (const type of pipeEvents(
      (signal) => {
        startSignal = signal;
        return runTools([{ id: 'w', name: 'wait', arguments: {} }], { tools: [tool], signal });
      },
      (events) => from(events).pipe(map((e) => e.type)),
      { signal: outer.signal },
    )) {
      if (type === 'tool_execution_start') {
        await running;
        break;
      }
    }
    expect(startSignal?.aborted).toBe(true);
    expect(startSignal?.reason).toMatchObject({ name: 'AbortError', message: expect.stringMatching(/event pipeline/) });
    expect(outer.signal.aborted).toBe(false);
    expect(listeners(outer.signal)).toBe(0);
  });

  it('A6: after the pipeline completed, no listener is left and the outer abort reaches nothing', async () => {
    const outer = new AbortController();
    let startSignal: AbortSignal | undefined;
    const echo = defineTool({ name: 'echo', input: v.object({}), execute: () => 'ok' });
    const { result } = await drain(
      pipeEvents(
        (signal) => {
          startSignal = signal;
          return runTools([{ id: 'e', name: 'echo', arguments: {} }], { tools: [echo], signal });
        },
        (events) => events,
        { signal: outer.signal },
      ),
    );
    expect(result?.messages).toHaveLength(1);
    expect(listeners(outer.signal)).toBe(0);
    outer.abort(new Error('later'));
    expect(startSignal?.aborted).toBe(false);
  });

  it('A6: an already aborted outer signal: start gets an aborted signal with its reason, and no listener is added', async () => {
    const outer = new AbortController();
    const reason = new Error('before');
    outer.abort(reason);
    let startSignal: AbortSignal | undefined;
    const echo = defineTool({ name: 'echo', input: v.object({}), execute: () => 'ok' });
    await drain(
      pipeEvents(
        (signal) => {
          startSignal = signal;
          return runTools([{ id: 'e', name: 'echo', arguments: {} }], { tools: [echo], signal });
        },
        (events) => events,
        { signal: outer.signal },
      ),
    );
    expect(startSignal?.reason).toBe(reason);
    expect(listeners(outer.signal)).toBe(0);
  });

  // Fails if a start() that throws leaves the scope listening (the old hand-written code did).
  it('A6: a start() that throws leaves no listener on the outer signal', async () => {
    const outer = new AbortController();
    const piped = pipeEvents(
      () => {
        throw new Error('bad start');
      },
      (events) => events,
      { signal: outer.signal },
    );
    await expect(piped.next()).rejects.toThrow('bad start');
    expect(listeners(outer.signal)).toBe(0);
  });
});
