import { describe, expect, it } from 'vitest';
import { RegExpTimeoutError, matchLines, safeRegExpTest } from '../../lib/tools/safe-regexp.ts';

describe('safeRegExpTest (untrusted patterns, e.g. an MCP server\'s JSON Schema pattern)', () => {
  // A limit that must not be hit is a hang guard (60 s), not the 1 s default: a worker's start
  // counts against timeoutMs, and on a loaded machine it alone can take over a second.
  const GUARD = { timeoutMs: 60_000 };

  it('tests inputs in a worker and answers in order', async () => {
    expect(await safeRegExpTest(/^[a-z]+$/u, ['abc', 'ABC', ''], GUARD)).toEqual([true, false, false]);
    // `g` keeps no lastIndex between inputs.
    expect(await safeRegExpTest(/a/g, ['a', 'a'], GUARD)).toEqual([true, true]);
  });

  it('stops a catastrophic pattern at timeoutMs while the event loop keeps running, and the next call works', async () => {
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 1);
    try {
      const error = await safeRegExpTest(/^([a-z]+)+$/, [`${'a'.repeat(30)}!`], { timeoutMs: 100 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RegExpTimeoutError);
      expect((error as RegExpTimeoutError).timeoutMs).toBe(100);
      expect(ticks).toBeGreaterThan(0);
    } finally {
      clearInterval(ticker);
    }
    expect(await safeRegExpTest(/^([a-z]+)+$/, ['abc'], GUARD)).toEqual([true]);
  });

  it('rejects with the signal\'s reason when it aborts, and before starting when it already did', async () => {
    const controller = new AbortController();
    const pending = safeRegExpTest(/^(a+)+$/, [`${'a'.repeat(30)}!`], { timeoutMs: 60_000, signal: controller.signal });
    controller.abort(new Error('stop'));
    await expect(pending).rejects.toThrow('stop');
    await expect(safeRegExpTest(/a/, ['a'], { ...GUARD, signal: controller.signal })).rejects.toThrow('stop');
  });

  it('matchLines returns matching lines per file with numbers, cut, and stops in the file where more exist', async () => {
    const encode = (text: string): Uint8Array => new TextEncoder().encode(text);
    const files = [encode('alpha\r\nbeta\n'), encode('beta'), encode('alphabet soup\n\nalpha'), encode('alpha')];
    const { perFile, more } = await matchLines(/^alpha/, files, { maxMatches: 2, maxLineChars: 5, timeoutMs: GUARD.timeoutMs });
    expect(perFile).toEqual([[{ line: 1, text: 'alpha', length: 5 }], [], [{ line: 1, text: 'alpha', length: 13 }]]);
    expect(more).toBe(true);
    const all = await matchLines(/a$/, [encode('beta\nalpha\n')], { maxMatches: 5, maxLineChars: 100, timeoutMs: GUARD.timeoutMs });
    expect(all).toEqual({ perFile: [[{ line: 1, text: 'beta', length: 4 }, { line: 2, text: 'alpha', length: 5 }]], more: false });
  });
});
