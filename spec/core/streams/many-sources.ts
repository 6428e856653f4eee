/**
 * M6's workload, shared by spec/core/streams/merge.spec.ts (10,000 sources, npm test) and
 * merge.slow.spec.ts (100,000, npm run test:slow): `n` async generators that each yield
 * their index and return its negative, merged in one `mergeGenerators`.
 */
import { mergeGenerators } from '../../../lib/core/streams/merge.ts';

/** What the merge handed out: values yielded, returns seen, and the sum of the returns. */
export async function mergeManySources(n: number): Promise<{ values: number; returns: number; sum: number }> {
  function* sources() {
    for (let i = 0; i < n; i++) {
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
  return { values, returns, sum };
}
