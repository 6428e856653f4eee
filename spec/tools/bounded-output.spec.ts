import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BoundedOutput, completeUtf8Prefix, firstUtf8Boundary } from '../../lib/tools/bounded-output.ts';

describe('BoundedOutput', () => {
  it('returns everything unchanged while under the limit', () => {
    const out = new BoundedOutput(100);
    out.push('hello ');
    out.push(Buffer.from('world'));
    expect(out.render()).toEqual({ text: 'hello world', truncatedBytes: 0, totalBytes: 11 });
  });

  it('keeps the head and the tail and states the cut (case C20: "HEAD" and "TAIL" both kept)', () => {
    const out = new BoundedOutput(20_000);
    out.push(`HEAD${'a'.repeat(5_000_000)}TAIL`);
    const { text, truncatedBytes, totalBytes } = out.render();
    expect(totalBytes).toBe(5_000_008);
    expect(truncatedBytes).toBe(5_000_008 - 20_000);
    expect(text.startsWith('HEAD')).toBe(true);
    expect(text.endsWith('TAIL')).toBe(true);
    expect(text).toContain('[... 4980008 bytes cut: the output was 5000008 bytes, over the 20000-byte limit; showing the first 10000 and the last 10000 bytes ...]');
    expect(text.length).toBeLessThan(20_000 + 200);
  });

  it('never holds more than maxBytes, whatever is pushed', () => {
    const out = new BoundedOutput(1000);
    // The largest hold after any push, checked once (an expect per push was 10,000 of them).
    let mostRetained = 0;
    for (let i = 0; i < 10_000; i++) {
      out.push('x'.repeat(i % 97));
      mostRetained = Math.max(mostRetained, out.retainedBytes);
    }
    expect(mostRetained).toBeLessThanOrEqual(1000);
    expect(mostRetained).toBeGreaterThan(900);
    expect(out.totalBytes).toBeGreaterThan(400_000);
  });

  it('matches a reference (first half + last half of the whole input) for any chunking', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 64 }), fc.array(fc.string({ maxLength: 40 }), { maxLength: 40 }), (max, chunks) => {
        const ascii = chunks.map((c) => c.replace(/[^\x20-\x7e]/g, '.'));
        const out = new BoundedOutput(max);
        for (const chunk of ascii) out.push(chunk);
        const all = ascii.join('');
        const { text, truncatedBytes, totalBytes } = out.render();
        expect(totalBytes).toBe(all.length);
        expect(out.retainedBytes).toBe(Math.min(all.length, max));
        if (all.length <= max) {
          expect(text).toBe(all);
          expect(truncatedBytes).toBe(0);
        } else {
          const head = all.slice(0, Math.floor(max / 2));
          const tail = all.slice(all.length - (max - Math.floor(max / 2)));
          expect(truncatedBytes).toBe(all.length - max);
          expect(text.startsWith(head)).toBe(true);
          expect(text.endsWith(`...]\n${tail}`)).toBe(true);
        }
      }),
    );
  });

  it('cuts on character boundaries: no half characters in multi-byte text', () => {
    const out = new BoundedOutput(10); // head 5 bytes, tail 5 bytes; '€' is 3 bytes, so both cuts fall mid-character
    out.push('€'.repeat(100));
    const { text, truncatedBytes } = out.render();
    expect(text).not.toContain('\uFFFD');
    const [head, tail] = text.split(/\n?\[\.\.\. .*\.\.\.\]\n/);
    expect(head).toBe('€');
    expect(tail).toBe('€');
    expect(truncatedBytes).toBe(300 - 3 - 3);
  });

  it('rejects a non-positive or fractional budget', () => {
    expect(() => new BoundedOutput(0)).toThrow(RangeError);
    expect(() => new BoundedOutput(1.5)).toThrow('maxBytes must be a positive integer, received 1.5');
  });
});

describe('UTF-8 boundaries', () => {
  it('completeUtf8Prefix drops a trailing incomplete character only', () => {
    const euro = Buffer.from('a€'); // 61 e2 82 ac
    expect(completeUtf8Prefix(euro)).toBe(4);
    expect(completeUtf8Prefix(euro.subarray(0, 3))).toBe(1);
    expect(completeUtf8Prefix(euro.subarray(0, 2))).toBe(1);
    expect(completeUtf8Prefix(Buffer.from('😀').subarray(0, 3))).toBe(0);
    expect(completeUtf8Prefix(Buffer.alloc(0))).toBe(0);
  });

  it('firstUtf8Boundary skips leading continuation bytes only', () => {
    const euro = Buffer.from('€b');
    expect(firstUtf8Boundary(euro)).toBe(0);
    expect(firstUtf8Boundary(euro.subarray(1))).toBe(2);
    expect(firstUtf8Boundary(euro.subarray(2))).toBe(1);
  });
});
