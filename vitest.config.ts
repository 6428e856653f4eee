import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    testTimeout: 20_000,
    // Specs that spawn real processes or replay the corpus share 2 cores with the rest.
    pool: 'forks',
    // Three workers on two cores: many specs wait on child processes, sockets and files, so a
    // third worker fills those waits (measured: 88 s with the default single worker on this
    // 2-core machine, 47 s with three, 48 s with four). No spec depends on wall-clock timing.
    maxWorkers: 3,
    projects: [
      { extends: true, test: { name: 'spec', include: ['spec/**/*.spec.ts'] } },
      {
        // Type tests (`spec/types/*.test-d.ts`): `expectTypeOf` and `@ts-expect-error` lines
        // checked by `tsc -p spec/types/tsconfig.json` (strict, exactOptionalPropertyTypes,
        // nodenext), each error reported on its test; the same files under `bundler`
        // resolution are compiled by spec/types/resolutions.spec.ts.
        extends: true,
        test: {
          name: 'types',
          include: [],
          typecheck: { enabled: true, only: true, include: ['spec/types/**/*.test-d.ts'], tsconfig: 'spec/types/tsconfig.json' },
        },
      },
    ],
  },
});
