/**
 * Issue 20 (the per-call cost of the plain SDK server): `serveMcp` hands a message that is
 * plainly a JSON-RPC request straight to the SDK's request entry (`Protocol._onrequest`),
 * past the SDK's sorting of messages (two zod parses that fail for every request). That is
 * only right if every message `isPlainRequest` accepts is one the SDK itself takes as a
 * request: this spec checks it against the SDK's own predicates, on hand-picked edge cases
 * and on generated messages. Fails if `isPlainRequest` accepts anything the SDK would treat
 * otherwise (e.g. drop the key check, and `{ …, result: {} }` is accepted), or stops
 * accepting an ordinary `tools/call` (then the fast way is never taken).
 */
import { isJSONRPCErrorResponse, isJSONRPCRequest, isJSONRPCResultResponse } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isPlainRequest } from '../../lib/mcp/server/cancellation.ts';

/** What the SDK's `Protocol` does with a message: its `onmessage` tries these in this order. */
function sdkTakesAsRequest(message: Record<string, unknown>): boolean {
  return !isJSONRPCResultResponse(message) && !isJSONRPCErrorResponse(message) && isJSONRPCRequest(message);
}

const call = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hello' } } };

describe('isPlainRequest: the requests serveMcp hands past the SDK’s sorting', () => {
  it('accepts ordinary requests (ids of both kinds, a progress token, no params) exactly as the SDK takes them', () => {
    const accepted: Record<string, unknown>[] = [
      call,
      { ...call, id: 'a-1' },
      { jsonrpc: '2.0', id: 0, method: 'tools/list' },
      { ...call, params: { ...call.params, _meta: { progressToken: 3 } } },
      { ...call, params: { ...call.params, _meta: { progressToken: 'p', traceparent: '00-x' } } },
    ];
    for (const message of accepted) {
      expect(isPlainRequest(message)).toBe(true);
      expect(sdkTakesAsRequest(message)).toBe(true);
    }
  });

  it('leaves to the SDK whatever is not plainly a request (the SDK then decides, as before)', () => {
    const left: Record<string, unknown>[] = [
      { ...call, result: {} },
      { ...call, error: { code: 1, message: 'x' } },
      { ...call, jsonrpc: '1.0' },
      { ...call, id: 1.5 },
      { ...call, id: 2 ** 60 },
      { ...call, id: null },
      { ...call, method: 3 },
      { ...call, params: [] },
      { ...call, params: null },
      { ...call, params: { ...call.params, _meta: { progressToken: 1.5 } } },
      { ...call, params: { ...call.params, _meta: [] } },
      { ...call, params: { ...call.params, _meta: { 'io.modelcontextprotocol/related-task': { taskId: 't' } } } },
      JSON.parse('{"jsonrpc":"2.0","id":1,"method":"tools/call","__proto__":{}}') as Record<string, unknown>,
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 1, result: {} },
    ];
    for (const message of left) expect(isPlainRequest(message)).toBe(false);
  });

  it('never accepts a message the SDK would not take as a request (generated messages)', () => {
    const value = fc.oneof(fc.constant(undefined), fc.constant(null), fc.string(), fc.integer(), fc.double(), fc.boolean(), fc.array(fc.integer(), { maxLength: 2 }));
    const meta = fc.oneof(value, fc.record({ progressToken: value, traceparent: value }, { requiredKeys: [] }), fc.record({ 'io.modelcontextprotocol/related-task': fc.oneof(value, fc.record({ taskId: value })) }));
    const params = fc.oneof(value, fc.record({ name: value, arguments: value, _meta: meta, task: value }, { requiredKeys: [] }));
    // Mostly absent (a JSON value of undefined drops the key), sometimes present.
    const rarely = <T,>(arb: fc.Arbitrary<T>) => fc.oneof({ arbitrary: fc.constant(undefined), weight: 6 }, { arbitrary: arb, weight: 1 });
    const message = fc.record({
      jsonrpc: fc.oneof({ arbitrary: fc.constant('2.0'), weight: 6 }, { arbitrary: value, weight: 1 }),
      id: fc.oneof(fc.integer(), fc.string(), value),
      method: fc.oneof({ arbitrary: fc.constant('tools/call'), weight: 4 }, { arbitrary: value, weight: 1 }),
      params,
      result: rarely(fc.oneof(fc.object(), value)),
      error: rarely(fc.oneof(fc.record({ code: fc.integer(), message: fc.string() }), value)),
      extra: rarely(value),
    });
    let accepted = 0;
    fc.assert(
      fc.property(message, (m) => {
        // From JSON: no undefined values.
        const parsed = JSON.parse(JSON.stringify(m)) as Record<string, unknown>;
        if (isPlainRequest(parsed)) {
          accepted++;
          expect(sdkTakesAsRequest(parsed)).toBe(true);
        }
      }),
      { numRuns: 2_000, seed: 20 },
    );
    // The generator reaches the accepting side too.
    expect(accepted).toBeGreaterThan(20);
  });
});
