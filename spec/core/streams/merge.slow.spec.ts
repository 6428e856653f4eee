/**
 * M6 at its full size: one merge of 100,000 sources (about 1.3 s of CPU, so in `npm run
 * test:slow`: vitest.config.ts, `*.slow.spec.ts`). spec/core/streams/merge.spec.ts runs the
 * same merge with 10,000 sources in `npm test`.
 */
import { describe, expect, it } from 'vitest';
import { mergeManySources } from './many-sources.ts';

describe('M6 works for 100,000 sources in one merge', () => {
  // Fails if a finished source's return value is lost or counted twice, or if the merge cannot hold 100,000 sources.
  // The limit is a hang guard for a CPU-bound case on a loaded machine, not a speed check.
  it('merges 100,000 sources of 2 items each', { timeout: 180_000 }, async () => {
    const { values, returns, sum } = await mergeManySources(100_000);
    expect(values).toBe(100_000);
    expect(returns).toBe(100_000);
    expect(sum).toBe(-((100_000 * 99_999) / 2));
  });
});
