/**
 * drain / memory / peer: N no-op jobs already queued, drained by ONE worker process.
 *   ours:  functions/worker-process.ts (`npm run worker`), executions bulk-enqueued before timing; the rate is
 *          N / (max(finished_at) - min(started_at)) by the PostgreSQL clock.
 *   peer:  one BullMQ worker process (test/bench/bullmq-worker.ts), jobs added with addBulk before timing; the rate
 *          is N / (max(finishedOn) - min(processedOn)) from the job hashes.
 */
import { Queue as BullQueue } from 'bullmq';
import { Redis } from 'ioredis';
import { REDIS_URL, uniqueName, type QueueBackend } from '../../support/env';
import {
  dbWindow,
  enqueueBulk,
  enqueueInterleaved,
  noopJob,
  spawnWorker,
  waitNoLive,
  waitRegistered,
} from '../lib/ours';
import { benchEnv } from '../lib/envs';
import { sampler, spawnNode, waitPeerDrain } from '../lib/proc';
import type { Collector } from '../lib/result';
import { verifyDrain, verifyPerKeyLimit } from '../lib/verify';

export interface OursDrainOptions {
  n: number;
  concurrency: number;
  logLevel: 'warn' | 'info';
  /** Metric name prefix, e.g. "ours" -> "ours jobs/s". */
  label: string;
  /** Extra node flags for the worker (profiling). */
  nodeArgs?: string[];
  extraEnv?: Record<string, string>;
  /** Which figures to record besides jobs/s. */
  record?: { memory?: boolean; cpu?: boolean };
  /**
   * Put this share of the N jobs under a per-key limit: a second no-op job with concurrency_key "/k" and
   * max_concurrency_per_key `perKey`, its payloads spread over `keys` values; enqueued interleaved with the others.
   */
  limited?: { share: number; keys: number; perKey: number };
  /** The queue the worker uses (default redis). */
  queue?: QueueBackend;
  progress: (msg: string) => void;
}

export interface DrainOutcome {
  jobsPerSec: number;
  ok: boolean;
  cpu: ReturnType<ReturnType<typeof sampler>['end']> | null;
}

export async function oursDrainOnce(c: Collector, o: OursDrainOptions): Promise<DrainOutcome> {
  const env = await benchEnv('bench_drain', o.queue);
  try {
    const jobId = await noopJob(env);
    const t = performance.now();
    const limited = o.limited && o.limited.share > 0 ? o.limited : null;
    const limitedJob = limited
      ? await noopJob(env, {
          limits: { maxConcurrency: null, concurrencyKey: '/k', maxConcurrencyPerKey: limited.perKey, rateLimit: null },
        })
      : null;
    if (limited && limitedJob) {
      const nLimited = Math.round(o.n * limited.share);
      await enqueueInterleaved(env, [
        { jobId, n: o.n - nLimited, payload: () => null },
        { jobId: limitedJob, n: nLimited, payload: (i) => ({ k: i % limited.keys }) },
      ]);
    } else {
      await enqueueBulk(env, jobId, o.n, 5000);
    }
    o.progress(
      `${o.label}: ${o.n} queued in ${Math.round(performance.now() - t)} ms; starting worker (C=${o.concurrency}, LOG_LEVEL=${o.logLevel})`,
    );
    const worker = spawnWorker(env, {
      concurrency: o.concurrency,
      logLevel: o.logLevel,
      nodeArgs: o.nodeArgs,
      extraEnv: o.extraEnv,
    });
    const s = sampler(worker.pid);
    let stats: ReturnType<typeof s.end> | null = null;
    try {
      await waitRegistered(env, worker);
      s.rebase();
      const { stalled } = await waitNoLive(env, worker);
      stats = s.end();
      if (stalled)
        c.check(
          'drain finished',
          false,
          `no progress for 60 s or the worker died:\n${worker.output().slice(-2000)}`,
          o.label,
        );
    } finally {
      s.end();
      const exit = await worker.stop();
      c.check(
        'worker process exited 0 on SIGTERM',
        exit.code === 0,
        `exit ${JSON.stringify(exit)}\n${worker.output().slice(-2000)}`,
        o.label,
      );
    }
    const w = await dbWindow(env);
    let ok = await verifyDrain(c, env.pool, env.queue, o.n, o.label);
    if (limited && limitedJob) ok = (await verifyPerKeyLimit(c, env, limitedJob, limited.perKey, o.label)) && ok;
    const jobsPerSec = o.n / w.seconds;
    c.add(`${o.label}: jobs/s`, 'jobs/s', jobsPerSec);
    if (o.record?.memory && stats) {
      c.add(`${o.label}: peak RSS (VmHWM)`, 'MB', stats.hwmMb, { target: { op: '<=', value: 200 } });
      c.add(`${o.label}: peak RSS (sampled VmRSS)`, 'MB', stats.peakRssMb, { info: true });
    }
    if (o.record?.cpu && stats) {
      c.add(`${o.label}: worker CPU`, '% of 1 core', (stats.processCpuS / stats.wallS) * 100, { info: true });
      c.add(`${o.label}: worker CPU per 1k jobs`, 'ms', (stats.processCpuS / o.n) * 1e6, { info: true });
      c.add(`${o.label}: postgres CPU (all backends)`, '% of 1 core', (stats.postgresCpuS / stats.wallS) * 100, {
        info: true,
      });
      c.add(`${o.label}: redis CPU`, '% of 1 core', (stats.redisCpuS / stats.wallS) * 100, { info: true });
      c.add(`${o.label}: machine busy`, '% of all cores', stats.machineBusyPct, { info: true });
    }
    o.progress(
      `${o.label}: ${Math.round(jobsPerSec)} jobs/s (${w.seconds.toFixed(2)} s by the DB clock)${ok ? '' : ' FAIL'}`,
    );
    return { jobsPerSec, ok, cpu: stats };
  } finally {
    await env.cleanup();
  }
}

export interface BullDrainOptions {
  n: number;
  concurrency: number;
  label: string;
  progress: (msg: string) => void;
}

export async function bullDrainOnce(c: Collector, o: BullDrainOptions): Promise<DrainOutcome> {
  const name = uniqueName('bench_bull');
  const prefix = `{${name}}`;
  const url = new URL(REDIS_URL);
  const connection = { host: url.hostname, port: Number(url.port || 6379) };
  const queue = new BullQueue(name, { connection, prefix });
  const redis = new Redis(REDIS_URL);
  try {
    const ids: string[] = [];
    const t = performance.now();
    for (let i = 0; i < o.n; i += 1000) {
      const jobs = await queue.addBulk(
        Array.from({ length: Math.min(1000, o.n - i) }, (_, k) => ({ name: 'noop', data: { i: i + k } })),
      );
      for (const j of jobs) ids.push(j.id!);
    }
    o.progress(
      `${o.label}: ${o.n} added in ${Math.round(performance.now() - t)} ms; starting BullMQ worker (C=${o.concurrency})`,
    );
    const worker = spawnNode(
      'test/bench/bullmq-worker.ts',
      {
        REDIS_URL,
        BULL_QUEUE: name,
        BULL_PREFIX: prefix,
        BULL_CONCURRENCY: String(o.concurrency),
      },
      { stdout: 'pipe' },
    );
    const s = sampler(worker.pid);
    let stats: ReturnType<typeof s.end> | null = null;
    try {
      await waitPeerDrain(c, worker, {
        n: o.n,
        label: o.label,
        started: () => s.rebase(),
        done: async () => {
          const counts = await queue.getJobCounts('completed', 'failed');
          return (counts.completed ?? 0) + (counts.failed ?? 0);
        },
      });
      stats = s.end();
    } finally {
      s.end();
      await worker.stop();
    }
    // Timestamps and attempt counters of every job, read in one pipeline.
    const pipeline = redis.pipeline();
    for (const id of ids)
      pipeline.hmget(`${prefix}:${name}:${id}`, 'processedOn', 'finishedOn', 'ats', 'atm', 'failedReason');
    const replies = (await pipeline.exec()) ?? [];
    let first = Number.POSITIVE_INFINITY;
    let last = 0;
    let startedTwice = 0;
    let unfinished = 0;
    let failed = 0;
    for (const [error, value] of replies) {
      if (error) throw error;
      const [processedOn, finishedOn, ats, , failedReason] = value as (string | null)[];
      if (!processedOn || !finishedOn) {
        unfinished++;
        continue;
      }
      if (failedReason) failed++;
      if (Number(ats ?? 1) > 1) startedTwice++;
      first = Math.min(first, Number(processedOn));
      last = Math.max(last, Number(finishedOn));
    }
    const counts = await queue.getJobCounts('completed', 'failed', 'active', 'wait', 'delayed', 'prioritized');
    const ok =
      counts.completed === o.n &&
      counts.failed === 0 &&
      unfinished === 0 &&
      startedTwice === 0 &&
      failed === 0 &&
      (counts.active ?? 0) + (counts.wait ?? 0) + (counts.delayed ?? 0) + (counts.prioritized ?? 0) === 0;
    c.check(
      'BullMQ: every job completed exactly once (completed == N, none failed, none started twice, none left waiting)',
      ok,
      JSON.stringify({ counts, unfinished, startedTwice, failed }),
      o.label,
    );
    const seconds = (last - first) / 1000;
    const jobsPerSec = o.n / seconds;
    c.add(`${o.label}: jobs/s`, 'jobs/s', jobsPerSec);
    if (stats) {
      c.add(`${o.label}: worker CPU`, '% of 1 core', (stats.processCpuS / stats.wallS) * 100, { info: true });
      c.add(`${o.label}: peak RSS (VmHWM)`, 'MB', stats.hwmMb, { info: true });
    }
    o.progress(
      `${o.label}: ${Math.round(jobsPerSec)} jobs/s (${seconds.toFixed(2)} s from job timestamps)${ok ? '' : ' FAIL'}`,
    );
    return { jobsPerSec, ok, cpu: stats };
  } finally {
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    const keys = await redis.keys(`${prefix}*`);
    for (let i = 0; i < keys.length; i += 1000) await redis.del(...keys.slice(i, i + 1000));
    redis.disconnect();
  }
}
