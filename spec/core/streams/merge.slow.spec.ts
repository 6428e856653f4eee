/**
 * M6 at its full size: one merge of 100,000 sources (about 1.3 s of CPU, so in `npm run
 * test:slow`: vitest.config.ts, `*.slow.spec.ts`). spec/core/streams/merge.spec.ts runs the
 * same merge with 10,000 sources in `npm test`.
 */
import { describe, expect, it } from 'vitest';
import { mergeGenerators } from '../../../lib/core/streams/merge.ts';

describe('M6 works for 100,000 sources in one merge', () => {
  // Fails if a finished source's return value is lost or counted twice, or if the merge cannot hold 100,000 sources.
  // The limit is a hang guard for a CPU-bound case on a loaded machine, not a speed check.
  it('merges 100,000 sources of 2 items each', { timeout: 180_000 }, async () => {
    function* sources() {
      for (let i = 0; i < 100_000; i++) {
        yield (async function* () {
          yield i;
          return -i;
        })();
      }
    }
    let values = 0;
    let returns = 0;
    let sum = 0;
    for await (const item of mergeGenerators(sources())) {
      if (item.done) {
        returns++;
        sum += item.value;
      } else values++;
    }
    expect(values).toBe(100_000);
    expect(returns).toBe(100_000);
    expect(sum).toBe(-((100_000 * 99_999) / 2));
  });
});
