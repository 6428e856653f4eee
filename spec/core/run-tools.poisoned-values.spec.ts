/**
 * Defect: foreign values made `runTools` throw instead of answering every call (P4, O1).
 *
 * A fuzzer found it with a valibot `transform` that throws on the model's input; the same
 * hole was open for every value a tool, a hook or a schema hands back: a `content` array
 * holding `null`, a throwing getter, a null-prototype cycle, an object whose `toJSON` and
 * `toString` both throw, a revoked Proxy, an Error whose `message` getter throws. Each of
 * them must become that call's result; the run goes on.
 */
import type { StandardSchemaV1 } from '@standard-schema/spec';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { defineTool, runTools, type Tool, type ToolCall } from '../../lib/index.ts';
import type { RunToolsOptions } from '../../lib/core/run/options.ts';
import { collect, expectRunInvariants, text } from '../helpers.ts';

function revoked(): object {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
}

function nullProtoCycle(): object {
  const o = Object.create(null) as Record<string, unknown>;
  o.self = o;
  return o;
}

function unprintable(): object {
  return {
    toJSON() {
      throw new Error('toJSON');
    },
    toString() {
      throw new Error('toString');
    },
  };
}

function errorWithThrowingGetters(): Error {
  const error = new Error('x');
  Object.defineProperty(error, 'message', {
    get() {
      throw new Error('message getter');
    },
  });
  Object.defineProperty(error, 'name', {
    get() {
      throw new Error('name getter');
    },
  });
  return error;
}

const ok = defineTool({ name: 'ok', input: v.object({}), execute: () => 'fine' });

/** Runs `tool` (called 'poison') next to a sibling that must stay untouched; returns the poisoned call's result. */
async function answerOf(tool: Tool, options: Partial<RunToolsOptions> = {}, args: unknown = {}) {
  const input: ToolCall[] = [
    { id: 'p', name: tool.name, arguments: args },
    { id: 'o', name: 'ok', arguments: {} },
  ];
  const { events, batch } = await collect(runTools(input, { tools: [tool, ok], ...options }));
  expectRunInvariants(input, events, batch);
  expect(batch.messages).toHaveLength(2);
  expect(batch.messages[1]).toMatchObject({ isError: false, content: [{ type: 'text', text: 'fine' }] });
  return batch.messages[0]!;
}

/** A synchronous execute: its value reaches the result reader as it is (an async one would resolve a revoked Proxy into a rejection). */
const returning = (value: () => unknown): Tool => defineTool({ name: 'poison', input: v.object({}), execute: () => value() });
const throwing = (value: () => unknown): Tool =>
  defineTool({
    name: 'poison',
    input: v.object({}),
    async *execute() {
      yield 'about to throw';
      throw value();
    },
  });

describe('P4/O1 poisoned values: nothing a schema returns or throws makes runTools throw', () => {
  it('a valibot transform that throws on the model input (JSON.parse of "{not json") is that call’s error result', async () => {
    const tool = defineTool({
      name: 'poison',
      input: v.object({ data: v.pipe(v.string(), v.transform((s) => JSON.parse(s) as unknown)) }),
      execute: () => 'ran',
    });
    const message = await answerOf(tool, {}, { data: '{not json' });
    expect(message.isError).toBe(true);
    expect(text(message)).toContain('SyntaxError');
    expect(text(message)).toContain('"poison"');
  });

  it('a valibot check that throws is that call’s error result', async () => {
    // A plain Tool object: defineTool refuses a schema with a check JSON Schema cannot express.
    const tool: Tool = {
      name: 'poison',
      input: v.object({
        n: v.pipe(
          v.number(),
          v.check(() => {
            throw new RangeError('check exploded');
          }),
        ),
      }),
      execute: () => 'ran',
    };
    const message = await answerOf(tool, {}, { n: 1 });
    expect(message.isError).toBe(true);
    expect(text(message)).toContain('check exploded');
  });

  it('a Standard Schema whose validate throws synchronously is that call’s error result', async () => {
    const schema: StandardSchemaV1 = {
      '~standard': {
        version: 1,
        vendor: 'test',
        validate() {
          throw new Error('validate threw');
        },
      },
    };
    const message = await answerOf({ name: 'poison', input: schema, execute: () => 'ran' } satisfies Tool);
    expect(message.isError).toBe(true);
    expect(text(message)).toContain('validate threw');
  });

  it('a Standard Schema whose result has a throwing issues getter is that call’s error result', async () => {
    const schema: StandardSchemaV1 = {
      '~standard': {
        version: 1,
        vendor: 'test',
        validate: () =>
          ({
            get issues(): never {
              throw new Error('issues getter');
            },
          }) as never,
      },
    };
    const message = await answerOf({ name: 'poison', input: schema, execute: () => 'ran' } satisfies Tool);
    expect(message.isError).toBe(true);
  });
});

describe('P4/O1 poisoned values: nothing a tool returns makes runTools throw', () => {
  it.each([
    ['{content:[null]}', () => ({ content: [null] })],
    ['{content:[{type:"text", text: 5}]}', () => ({ content: [{ type: 'text', text: 5 }] })],
    ['a throwing content getter', () => ({
      get content(): never {
        throw new Error('content getter');
      },
    })],
    ['a null-prototype cycle', nullProtoCycle],
    ['an object whose toJSON and toString both throw', unprintable],
    ['a revoked Proxy', revoked],
  ])('returns %s: an error result for that call only', async (_label, value) => {
    const message = await answerOf(returning(value));
    expect(message.isError).toBe(true);
    expect(text(message)).toContain('"poison"');
  });

  it('a generator returning a revoked Proxy: an error result for that call only', async () => {
    const tool = defineTool({
      name: 'poison',
      input: v.object({}),
      async *execute() {
        yield 1;
        return revoked();
      },
    });
    const message = await answerOf(tool);
    expect(message.isError).toBe(true);
  });

  it('a null-prototype object without a cycle is still its JSON text', async () => {
    const o = Object.create(null) as Record<string, unknown>;
    o.a = 1;
    const message = await answerOf(returning(() => o));
    expect(message).toMatchObject({ isError: false, content: [{ type: 'text', text: '{"a":1}' }] });
  });
});

describe('P4/O1 poisoned values: nothing a tool throws makes runTools throw', () => {
  it.each([
    ['a revoked Proxy', revoked],
    ['an Error whose message and name getters throw', errorWithThrowingGetters],
    ['an object whose toJSON and toString both throw', unprintable],
    ['a null-prototype cycle', nullProtoCycle],
  ])('throws %s: an error result for that call only', async (_label, value) => {
    const message = await answerOf(throwing(value));
    expect(message.isError).toBe(true);
    expect(text(message).length).toBeGreaterThan(0);
  });
});

describe('P4/O1 poisoned values: nothing a hook or shim returns makes runTools throw', () => {
  const throwingGetter = (key: string) =>
    Object.defineProperty({}, key, {
      get(): never {
        throw new Error(`${key} getter`);
      },
    });

  it('a synchronous beforeToolCall returning an object whose block getter throws: that call is rejected', async () => {
    const message = await answerOf(returning(() => 'ran'), {
      beforeToolCall: ({ toolCall }) => (toolCall.name === 'poison' ? (throwingGetter('block') as never) : undefined),
    });
    expect(message.isError).toBe(true);
    expect(text(message)).toContain('beforeToolCall');
  });

  it('an async beforeToolCall resolving to a revoked Proxy: that call is rejected', async () => {
    const message = await answerOf(returning(() => 'ran'), {
      beforeToolCall: async ({ toolCall }) => (toolCall.name === 'poison' ? (revoked() as never) : undefined),
    });
    expect(message.isError).toBe(true);
  });

  it('beforeToolCall throwing a revoked Proxy: that call is rejected', async () => {
    const message = await answerOf(returning(() => 'ran'), {
      beforeToolCall: ({ toolCall }) => {
        if (toolCall.name === 'poison') throw revoked();
      },
    });
    expect(message.isError).toBe(true);
  });

  it.each(['content', 'isError', 'details', 'terminate'])('a synchronous afterToolCall returning an object whose %s getter throws: an error result', async (key) => {
    const message = await answerOf(returning(() => 'ran'), {
      afterToolCall: ({ toolCall }) => (toolCall.name === 'poison' ? (throwingGetter(key) as never) : undefined),
    });
    expect(message.isError).toBe(true);
    expect(text(message)).toContain('afterToolCall');
  });

  it('afterToolCall overriding content with [null]: an error result naming the hook', async () => {
    const message = await answerOf(returning(() => 'ran'), {
      afterToolCall: ({ toolCall }) => (toolCall.name === 'poison' ? { content: [null as never] } : undefined),
    });
    expect(message.isError).toBe(true);
    expect(text(message)).toContain('afterToolCall');
  });

  it('afterToolCall throwing an Error whose message getter throws: an error result', async () => {
    const message = await answerOf(returning(() => 'ran'), {
      afterToolCall: ({ toolCall }) => {
        if (toolCall.name === 'poison') throw errorWithThrowingGetters();
      },
    });
    expect(message.isError).toBe(true);
  });

  it('prepareArguments returning a revoked Proxy: that call is rejected', async () => {
    const tool = defineTool({ name: 'poison', input: v.object({}), prepareArguments: () => revoked(), execute: () => 'ran' });
    const message = await answerOf(tool);
    expect(message.isError).toBe(true);
    expect(text(message)).toContain('"poison"');
  });

  it('onInProgressChange throwing a revoked Proxy: ignored, every call answered', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error): void => {
      warnings.push(w.message);
    };
    process.on('warning', onWarning);
    try {
      const message = await answerOf(returning(() => 'ran'), {
        onInProgressChange: () => {
          throw revoked();
        },
      });
      expect(message).toMatchObject({ isError: false, content: [{ type: 'text', text: 'ran' }] });
      await new Promise((r) => setImmediate(r));
      expect(warnings.some((w) => w.includes('onInProgressChange'))).toBe(true);
    } finally {
      process.off('warning', onWarning);
    }
  });
});
