/**
 * latency, the peer's side: BullMQ 6 on the same Redis under the same open-loop load as ours (`rate` adds a second
 * from `latency-pool` senders in this process, one worker process at the same concurrency, a no-op processor).
 * Add-to-start is the job's `processedOn` minus its `timestamp` (both milliseconds of this host's clock: the adding
 * client's and the worker's), the counterpart of our trigger -> start.
 */
import { Queue as BullQueue } from 'bullmq';
import { Redis } from 'ioredis';
import { REDIS_URL, uniqueName } from '../../support/env';
import { spawnNode } from '../lib/proc';
import type { Collector } from '../lib/result';
import { percentiles, sleep } from '../lib/stats';
import type { BenchContext } from '../lib/options';

export interface BullLatency {
  p50: number;
  p99: number;
}

export async function bullLatencyOnce(
  c: Collector,
  ctx: BenchContext,
  rate: number,
  subject: string,
): Promise<BullLatency | null> {
  const { opts, progress } = ctx;
  const name = uniqueName('bench_bull_latency');
  const prefix = `{${name}}`;
  const url = new URL(REDIS_URL);
  const queue = new BullQueue(name, { connection: { host: url.hostname, port: Number(url.port || 6379) }, prefix });
  const redis = new Redis(REDIS_URL);
  const worker = spawnNode(
    'test/bench/bullmq-worker.ts',
    { REDIS_URL, BULL_QUEUE: name, BULL_PREFIX: prefix, BULL_CONCURRENCY: String(opts.concurrency) },
    { stdout: 'pipe' },
  );
  try {
    const readyBy = Date.now() + 30_000;
    while (!worker.output().includes('ready\n') && Date.now() < readyBy && worker.child.exitCode === null)
      await sleep(10);
    const completed = async () => (await queue.getJobCounts('completed')).completed ?? 0;
    const waitCompleted = async (n: number) => {
      let last = -1;
      let lastChange = Date.now();
      for (;;) {
        const done = await completed();
        if (done >= n) return true;
        if (done !== last) [last, lastChange] = [done, Date.now()];
        else if (Date.now() - lastChange > 60_000 || worker.child.exitCode !== null) return false;
        await sleep(50);
      }
    };
    // Warm-up, as ours: a short burst (JIT, connections), excluded from the figures.
    const warm = 200;
    await Promise.all(Array.from({ length: warm }, (_, i) => queue.add('noop', { warm: i })));
    await waitCompleted(warm);

    const total = Math.round(rate * opts['latency-seconds']);
    progress(`latency ${subject}, BullMQ: ${total} adds at ${rate}/s, open loop`);
    let next = 0;
    let errors = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: opts['latency-pool'] }, async () => {
        for (;;) {
          const i = next++;
          if (i >= total) return;
          const wait = t0 + (i * 1000) / rate - performance.now();
          if (wait > 1) await sleep(wait);
          try {
            await queue.add('noop', { i });
          } catch {
            errors++;
          }
        }
      }),
    );
    const finished = await waitCompleted(total + warm);
    c.check('BullMQ load finished', finished && errors === 0, `finished=${finished} add errors=${errors}`, subject);
    if (!finished) return null;
    const jobs = (await queue.getJobs(['completed'], 0, -1)).filter(
      (j) => (j.data as { warm?: number }).warm === undefined,
    );
    const first = jobs.reduce((m, j) => Math.min(m, j.timestamp), Number.POSITIVE_INFINITY);
    const warmupMs = opts['latency-warmup-seconds'] * 1000;
    const toStart = jobs.filter((j) => j.timestamp - first >= warmupMs).map((j) => j.processedOn! - j.timestamp);
    const p = percentiles(toStart);
    c.add('BullMQ add -> start p50', 'ms', p.p50!, { info: true });
    c.add('BullMQ add -> start p99', 'ms', p.p99!, { info: true });
    progress(`latency ${subject}, BullMQ: start p50 ${p.p50!.toFixed(1)} p99 ${p.p99!.toFixed(1)} ms`);
    return { p50: p.p50!, p99: p.p99! };
  } finally {
    await worker.stop();
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    const keys = await redis.keys(`${prefix}*`);
    for (let i = 0; i < keys.length; i += 1000) await redis.del(...keys.slice(i, i + 1000));
    redis.disconnect();
  }
}
