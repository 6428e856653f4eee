/**
 * Issue 19, item 6: the adapters tell the truth about an abort (contract A2, A3). A tool
 * body that ignores its signal is still running when the run ends, so its call must be
 * `abandoned` ("did not confirm cancellation; its outcome is unknown"), not `interrupted`
 * ("it stopped before finishing") — through every adapter alike. Each body is held on a
 * gate the spec opens only after the run ended, and then shown to finish: a spec fails if
 * an adapter reports `interrupted` for a body that ran on. On the code before this issue
 * the LangChain `tool()` case failed: LangChain's `tool()` rejects its `invoke` with the
 * signal's error at the abort while the function runs on, and the adapter passed that
 * rejection on as if the tool had stopped (`interrupted`).
 *
 * The outcomes do not depend on time: an ignoring body cannot end before its gate opens, and
 * the cooperating cases get a grace of a minute, so only the tool's own answer can end them.
 */
import { StructuredTool, tool as langChainTool } from '@langchain/core/tools';
import { ToolMessage } from '@langchain/core/messages';
// `@openai/agents` re-exports these from `@openai/agents-core` (the same functions: spec/adapters/openai-agents.slow.spec.ts);
// the core alone loads in half the CPU (0.5 s against 1.0 s per worker of `npm test`).
import { tool as agentsTool } from '@openai/agents-core';
import * as ai7 from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { collect, gate, text, type Gate } from '../helpers.ts';
import { fromAISDKTools, fromLangChainTools, fromOpenAIAgentsTools, runTools, type Tool, type ToolEvent, type ToolResultMessage } from '../../lib/index.ts';

/** A body that ignores its signal: it opens `started`, waits for `release`, then counts itself finished. */
interface Held {
  started: Gate;
  release: Gate;
  finished: number;
}

function held(): Held {
  return { started: gate(), release: gate(), finished: 0 };
}

async function body(h: Held): Promise<string> {
  h.started.open();
  await h.release.promise;
  h.finished++;
  return 'done anyway';
}

const ignoring: { label: string; make: (h: Held) => Tool }[] = [
  { label: 'fromAISDKTools', make: (h) => fromAISDKTools({ slow: ai7.tool({ inputSchema: z.object({}), execute: () => body(h) }) }).tools[0]! },
  {
    label: 'fromOpenAIAgentsTools',
    make: (h) => fromOpenAIAgentsTools([agentsTool({ name: 'slow', description: 'slow', parameters: z.object({}), execute: () => body(h) })]).tools[0]!,
  },
  { label: "fromLangChainTools, tool()", make: (h) => fromLangChainTools([langChainTool(() => body(h), { name: 'slow', description: 'slow', schema: z.object({}) })])[0]! },
  {
    label: 'fromLangChainTools, a StructuredTool',
    make: (h) => {
      class Slow extends StructuredTool {
        name = 'slow';
        description = 'slow';
        schema = z.object({});
        override _call(): Promise<string> {
          return body(h);
        }
      }
      return fromLangChainTools([new Slow()])[0]!;
    },
  },
];

/** Runs one call of `tool`, aborts it once it started; returns its end event and result. */
async function abortedRun(tool: Tool, started: Promise<void>, options: { abortGraceMs?: number; timeoutMs?: number } = {}) {
  const controller = new AbortController();
  const run = collect(runTools([{ id: 'c1', name: tool.name, arguments: {} }], { tools: [tool], signal: controller.signal, ...options }));
  await started;
  if (options.timeoutMs === undefined) controller.abort();
  const { events, batch } = await run;
  const end = events.find((e): e is Extract<ToolEvent, { type: 'tool_execution_end' }> => e.type === 'tool_execution_end')!;
  return { outcome: end.outcome, message: batch.messages[0] as ToolResultMessage };
}

describe.each(ignoring)('A3: $label: a body that ignores its signal', ({ make }) => {
  it('A3: is abandoned (its outcome unknown), not interrupted; the body then finishes on its own', async () => {
    const h = held();
    const { outcome, message } = await abortedRun(make(h), h.started.promise);
    expect(outcome).toBe('abandoned');
    expect(text(message)).toMatch(/did not confirm cancellation; its outcome is unknown \(it may have finished or had partial effects\)/);
    expect(h.finished).toBe(0);
    h.release.open();
    await h.release.promise;
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(h.finished).toBe(1);
  });

  it("A3, A4: past its own time limit it is timed_out and 'may still be running'", async () => {
    const h = held();
    const { outcome, message } = await abortedRun(make(h), h.started.promise, { timeoutMs: 1 });
    expect(outcome).toBe('timed_out');
    expect(text(message)).toMatch(/did not stop when asked; its outcome is unknown and it may still be running/);
    h.release.open();
  });
});

describe('A2: LangChain tools that do stop', () => {
  it('A2: a StructuredTool that stops on its signal with its own error is interrupted (a grace of a minute: only its own answer ends it)', async () => {
    const started = gate();
    class Polite extends StructuredTool {
      name = 'polite';
      description = 'stops when asked';
      schema = z.object({});
      override _call(_input: object, _runManager: unknown, config?: { signal?: AbortSignal }): Promise<string> {
        return new Promise((_resolve, reject) => {
          config?.signal?.addEventListener('abort', () => reject(new Error('stopped: cleaned up')));
          started.open();
        });
      }
    }
    const { outcome, message } = await abortedRun(fromLangChainTools([new Polite()])[0]!, started.promise, { abortGraceMs: 60_000 });
    expect(outcome).toBe('interrupted');
    expect(text(message)).toMatch(/it stopped before finishing/);
  });

  it("A3: a tool() whose function stops on its signal is still abandoned: LangChain's tool() answers the abort itself and never says whether the function stopped", async () => {
    const started = gate();
    let stopped = false;
    const polite = langChainTool(
      (_input, config) =>
        new Promise<string>((_resolve, reject) => {
          config.signal?.addEventListener('abort', () => {
            stopped = true;
            reject(new Error('stopped: cleaned up'));
          });
          started.open();
        }),
      { name: 'polite', description: 'stops when asked', schema: z.object({}) },
    );
    const { outcome } = await abortedRun(fromLangChainTools([polite])[0]!, started.promise);
    expect([outcome, stopped]).toEqual(['abandoned', true]);
  });
});

describe('LangChain error ToolMessage', () => {
  it("a ToolMessage with status 'error' is an error result that keeps its artifact as details", async () => {
    const quota = langChainTool(
      async (_input, config) =>
        new ToolMessage({ content: 'quota exceeded, retry in 30 s', status: 'error', artifact: { retryAfterS: 30 }, tool_call_id: config.toolCall!.id! }),
      { name: 'quota', description: 'fails with data', schema: z.object({}) },
    );
    const { batch } = await collect(runTools([{ id: 'q1', name: 'quota', arguments: {} }], { tools: fromLangChainTools([quota]) }));
    const message = batch.messages[0]!;
    expect([message.isError, text(message), message.details]).toEqual([true, 'quota exceeded, retry in 30 s', { retryAfterS: 30 }]);
  });
});
