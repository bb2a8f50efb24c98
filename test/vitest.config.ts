import { defineConfig } from 'vitest/config';
import { fileURLToPath } from 'node:url';

export default defineConfig({
  root: fileURLToPath(new URL('..', import.meta.url)),
  test: {
    include: ['packages/*/src/**/*.test.ts', 'test/**/*.test.ts'],
    exclude: ['**/node_modules/**', 'test/bench/**', 'test/faults/**', '.sst/**'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Every test file gets its own schema and Redis prefix, so files run in parallel safely.
    fileParallelism: true,
  },
});
