import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['spec/**/*.spec.ts'],
    testTimeout: 20_000,
    // Specs that spawn real processes or replay the corpus share 2 cores with the rest.
    pool: 'forks',
    // Three workers on two cores: many specs wait on child processes, sockets and files, so a
    // third worker fills those waits (measured: 88 s with the default single worker on this
    // 2-core machine, 47 s with three, 48 s with four). No spec depends on wall-clock timing.
    maxWorkers: 3,
  },
});
