/**
 * The peer for the drain comparison: one BullMQ worker in its own process, a no-op processor, concurrency from
 * BULL_CONCURRENCY; on Redis, or with BULL_BACKEND=postgres on BullMQ's PostgreSQL backend (DATABASE_URL, schema
 * BULL_SCHEMA). Run by test/bench/run.ts (scenario `peer`); SIGTERM closes the worker and exits.
 */
import { Worker, createPostgresBackend, withBackend } from 'bullmq';

const concurrency = Number(process.env.BULL_CONCURRENCY ?? 50);
const noop = async () => undefined;
let worker: {
  close(): Promise<void>;
  waitUntilReady(): Promise<unknown>;
  on(event: 'error', f: (e: Error) => void): unknown;
};
if (process.env.BULL_BACKEND === 'postgres') {
  const pg = withBackend(createPostgresBackend);
  worker = new pg.Worker(process.env.BULL_QUEUE!, noop, {
    connection: { connectionString: process.env.DATABASE_URL!, schema: process.env.BULL_SCHEMA! },
    concurrency,
  });
} else {
  const url = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  worker = new Worker(process.env.BULL_QUEUE!, noop, {
    connection: { host: url.hostname, port: Number(url.port || 6379) },
    prefix: process.env.BULL_PREFIX!,
    concurrency,
  });
}
worker.on('error', (error) => process.stderr.write(`bullmq worker error: ${String(error)}\n`));
await worker.waitUntilReady();
process.stdout.write('ready\n');
const stop = async () => {
  await worker.close();
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
