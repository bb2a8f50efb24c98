/**
 * The peer for the drain comparison: one BullMQ worker in its own process, a no-op processor, concurrency from
 * BULL_CONCURRENCY. Run by test/bench/run.ts (scenario `peer`); SIGTERM closes the worker and exits.
 */
import { Worker } from 'bullmq';

const url = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const worker = new Worker(process.env.BULL_QUEUE!, async () => undefined, {
  connection: { host: url.hostname, port: Number(url.port || 6379) },
  prefix: process.env.BULL_PREFIX!,
  concurrency: Number(process.env.BULL_CONCURRENCY ?? 50),
});
worker.on('error', (error) => process.stderr.write(`bullmq worker error: ${String(error)}\n`));
await worker.waitUntilReady();
process.stdout.write('ready\n');
const stop = async () => {
  await worker.close();
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
