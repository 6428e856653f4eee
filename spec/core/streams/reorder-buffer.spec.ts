import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ReorderBuffer } from '../../../lib/core/streams/reorder-buffer.ts';

describe('B1 releases the longest ready prefix in index order, immediately', () => {
  it('holds values ahead of a gap and releases them when the gap fills', () => {
    const buffer = new ReorderBuffer<string>({ size: 4 });
    expect(buffer.push(2, 'c')).toBe(0);
    expect(buffer.push(1, 'b')).toBe(0);
    expect(buffer.shift()).toBeUndefined();
    expect(buffer.push(0, 'a')).toBe(3);
    expect([...buffer.drain()]).toEqual(['a', 'b', 'c']);
    expect(buffer.next).toBe(3);
    buffer.push(3, 'd');
    expect(buffer.shift()).toBe('d');
  });

  it('hands out any arrival order in index order (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 60 }).chain((n) => fc.shuffledSubarray([...Array(n).keys()], { minLength: n, maxLength: n })), (order) => {
        const buffer = new ReorderBuffer<number>({ size: order.length });
        const out: number[] = [];
        const late: number[] = [];
        for (const i of order) {
          buffer.push(i, i);
          // Released as soon as the prefix is complete: everything below `next` is out.
          out.push(...buffer.drain());
          if (out.length !== buffer.next) late.push(i);
        }
        expect(late).toEqual([]);
        expect(out).toEqual([...order].sort((a, b) => a - b));
      }),
    );
  });
});

describe('B2 O(1) amortized, holds only what arrived ahead of a gap', () => {
  it('heldEntries() lists exactly the held values by index, and reading them changes nothing', () => {
    const buffer = new ReorderBuffer<string>();
    buffer.push(3, 'd');
    buffer.push(1, 'b');
    // Fails if heldEntries() misses a held value, lists a ready one, or consumes what it lists.
    expect(new Map(buffer.heldEntries())).toEqual(new Map([[1, 'b'], [3, 'd']]));
    expect(buffer.held).toBe(2);
    buffer.push(0, 'a');
    expect([...buffer.heldEntries()]).toEqual([[3, 'd']]);
    expect([...buffer.drain()]).toEqual(['a', 'b']);
  });


  it('holds nothing when values arrive in order', () => {
    const buffer = new ReorderBuffer<number>();
    let held = 0;
    for (let i = 0; i < 10_000; i++) {
      buffer.push(i, i);
      held += buffer.held;
      if (buffer.shift() !== i) throw new Error(`value ${i} not handed out in order`);
    }
    expect(held).toBe(0);
  });

  it('holds exactly the values ahead of the gap', () => {
    const buffer = new ReorderBuffer<number>();
    for (let i = 1; i <= 1000; i++) buffer.push(i, i);
    expect(buffer.held).toBe(1000);
    buffer.push(0, 0);
    expect(buffer.held).toBe(0);
    expect(buffer.readyCount).toBe(1001);
  });

  it('handles 200,000 values in reverse order', () => {
    const n = 200_000;
    const buffer = new ReorderBuffer<number>({ size: n });
    for (let i = n - 1; i >= 0; i--) buffer.push(i, i);
    let expected = 0;
    let outOfOrder = 0;
    for (const v of buffer.drain()) if (v !== expected++) outOfOrder++;
    expect(outOfOrder).toBe(0);
    expect(expected).toBe(n);
  });
});

describe('B3 rejects a duplicate or out-of-range index with a clear error', () => {
  it('rejects an index already pushed, released or held', () => {
    const buffer = new ReorderBuffer<string>({ size: 5 });
    buffer.push(0, 'a');
    buffer.shift();
    expect(() => buffer.push(0, 'again')).toThrow(/index 0 was already pushed \(next expected: 1/);
    buffer.push(3, 'd');
    expect(() => buffer.push(3, 'again')).toThrow(/index 3 was already pushed/);
  });

  it('rejects negative, fractional and too-large indices', () => {
    const buffer = new ReorderBuffer<string>({ size: 2 });
    expect(() => buffer.push(-1, 'x')).toThrow(RangeError);
    expect(() => buffer.push(0.5, 'x')).toThrow(/index 0.5 is out of range \[0, 2\)/);
    expect(() => buffer.push(2, 'x')).toThrow(/index 2 is out of range \[0, 2\)/);
  });

  it('rejects a bad size', () => {
    expect(() => new ReorderBuffer({ size: -1 })).toThrow(/size must be a non-negative integer or Infinity, received -1/);
  });
});
