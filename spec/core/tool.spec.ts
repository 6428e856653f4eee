import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { defineTool, normalizeToolOutput } from '../../lib/index.ts';

describe('defineTool', () => {
  it('infers the input type from a Standard Schema and returns the definition', () => {
    const tool = defineTool({ name: 't', input: v.object({ n: v.number() }), execute: ({ n }) => n * 2 });
    expect(tool.name).toBe('t');
  });

  it('throws a TypeError naming the field and the value received', () => {
    const input = v.object({});
    expect(() => defineTool({ name: '', input, execute: () => 1 })).toThrow('defineTool: tool.name must be a non-empty string, received string ""');
    expect(() => defineTool({ name: 'x', input, execute: 'nope' as never })).toThrow('defineTool: tool "x".execute must be a function, received string "nope"');
    expect(() => defineTool({ name: 'x', input: null as never, execute: () => 1 })).toThrow(/tool "x".input must be a Standard Schema or a JSON Schema object, received null/);
    expect(() => defineTool({ name: 'x', input, timeoutMs: -5, execute: () => 1 })).toThrow(/timeoutMs must be a positive number of ms or a function of the input, received number -5/);
    expect(() => defineTool({ name: 'x', input, executionMode: 'exclusive' as never, execute: () => 1 })).toThrow(TypeError);
  });
});

describe('normalizeToolOutput: the rule that turns a returned value into content', () => {
  it('makes a string one text block and other values their JSON text, kept as details', () => {
    expect(normalizeToolOutput('hi')).toEqual({ content: [{ type: 'text', text: 'hi' }] });
    expect(normalizeToolOutput({ a: [1] })).toEqual({ content: [{ type: 'text', text: '{"a":[1]}' }], details: { a: [1] } });
    expect(normalizeToolOutput(7)).toEqual({ content: [{ type: 'text', text: '7' }], details: 7 });
    expect(normalizeToolOutput(undefined)).toEqual({ content: [{ type: 'text', text: '' }] });
  });

  it('takes an explicit { content, details, terminate } as is', () => {
    const result = { content: [{ type: 'text' as const, text: 'x' }], details: { d: 1 }, terminate: true };
    expect(normalizeToolOutput(result)).toBe(result);
  });

  it('falls back to String() for values JSON cannot encode', () => {
    expect(normalizeToolOutput(10n)).toEqual({ content: [{ type: 'text', text: '10' }], details: 10n });
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(normalizeToolOutput(cyclic)).toEqual({ content: [{ type: 'text', text: '[object Object]' }], details: cyclic });
  });
});
