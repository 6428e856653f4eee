import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['spec/**/*.spec.ts'],
    testTimeout: 20_000,
    // Specs that spawn real processes or replay the corpus share 2 cores with the rest.
    pool: 'forks',
  },
});
