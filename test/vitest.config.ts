import { defineConfig } from 'vitest/config';
import { fileURLToPath } from 'node:url';

/**
 * The files that exercise the queue run a second time with the queue on PostgreSQL (TEST_QUEUE_BACKEND, read by
 * test/support/env.ts): one suite, both adapters. Only these files, to keep CI time down.
 */
export const QUEUE_TESTS = [
  'test/queue.test.ts',
  'test/engine.test.ts',
  'test/recovery.test.ts',
  'test/tick.test.ts',
  'test/scheduling.test.ts',
  'test/trigger-batch.test.ts',
  'test/flow/*.test.ts',
  'test/lambda/worker.test.ts',
  'test/output.test.ts',
  'test/deliveries.test.ts',
  'test/release-drain.test.ts',
];

const shared = {
  root: fileURLToPath(new URL('..', import.meta.url)),
  exclude: ['**/node_modules/**', 'test/bench/**', 'test/faults/**', 'test/embedded/**', '.sst/**'],
  pool: 'forks' as const,
  testTimeout: 30_000,
  hookTimeout: 30_000,
  // Every test file gets its own schema and Redis prefix, so files run in parallel safely.
  fileParallelism: true,
};

export default defineConfig({
  root: shared.root,
  test: {
    ...shared,
    projects: [
      {
        test: {
          ...shared,
          name: 'redis',
          include: ['packages/*/src/**/*.test.ts', 'test/**/*.test.ts'],
          env: { TEST_QUEUE_BACKEND: 'redis' },
        },
      },
      { test: { ...shared, name: 'postgres', include: QUEUE_TESTS, env: { TEST_QUEUE_BACKEND: 'postgres' } } },
    ],
  },
});
