/**
 * createTestEnv for the benchmarks, with one addition: environments not cleaned up yet are dropped on Ctrl-C/SIGTERM
 * too (schema and Redis keys), so an interrupted run leaves nothing behind.
 */
import { createTestEnv, type QueueBackend, type TestEnv } from '../../support/env';

const open = new Set<TestEnv>();

export async function benchEnv(label: string, backend?: QueueBackend): Promise<TestEnv> {
  const env = await createTestEnv(label, { backend });
  open.add(env);
  const cleanup = env.cleanup.bind(env);
  env.cleanup = async () => {
    open.delete(env);
    await cleanup();
  };
  return env;
}

let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    process.stderr.write(`\n${signal}: dropping ${open.size} benchmark schema(s) and key prefix(es), then exiting\n`);
    void Promise.allSettled([...open].map((env) => env.cleanup())).then(() => process.exit(130));
  });
}
