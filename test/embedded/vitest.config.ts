import { defineConfig } from 'vitest/config';
import { fileURLToPath } from 'node:url';

/** `npm run test:embedded`: the zero-configuration start, on its own (it runs initdb, and must not share a run). */
export default defineConfig({
  root: fileURLToPath(new URL('../..', import.meta.url)),
  test: {
    include: ['test/embedded/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 120_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
});
