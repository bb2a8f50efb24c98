/**
 * schedule: lateness of second-level cron schedules (`* * * * * *`) in the local stack with a 1-minute tick.
 * functions/scheduler-process.ts runs with SCHEDULE_INTERVAL=60s and LOOKAHEAD=70s (so one tick materialises every
 * fire time of the next 70 s into the delayed set, and workers promote each id when it comes due), next to one
 * worker process. Lateness = started_at - scheduled_for (both by the PostgreSQL clock; scheduled_for is the fire
 * time itself).
 */
import { Redis } from 'ioredis';
import { REDIS_URL } from '../../support/env';
import { noopJob, spawnWorker, waitRegistered } from '../lib/ours';
import { benchEnv } from '../lib/envs';
import { spawnNode } from '../lib/proc';
import type { Collector } from '../lib/result';
import { percentiles, sleep } from '../lib/stats';
import type { BenchContext } from '../lib/options';

export async function scheduleScenario(c: Collector, ctx: BenchContext, runs: number): Promise<void> {
  for (let run = 0; run < runs; run++) await once(c, ctx, `run ${run + 1}`);
  const overshoot = await blockingTimeoutOvershoot(20);
  c.add('Redis BZPOPMIN timeout overshoot p50', 'ms', overshoot.p50!, { info: true });
  c.add('Redis BZPOPMIN timeout overshoot max', 'ms', overshoot.max!, { info: true });
  c.note(
    "an idle worker sleeps in BZPOPMIN until the next delayed id is due; Redis notices a blocked client's timeout only when its event loop wakes (every 1000/hz ms when idle), so the overshoot above is a floor for the lateness of a fire time nobody pushed",
  );
}

/** How late BZPOPMIN returns after its timeout on an empty key (random timeouts of 20-220 ms). */
async function blockingTimeoutOvershoot(samples: number) {
  const redis = new Redis(REDIS_URL);
  const out: number[] = [];
  try {
    for (let i = 0; i < samples; i++) {
      const want = 20 + Math.random() * 200;
      const t = performance.now();
      await redis.bzpopmin(`{bench-bzpopmin-${process.pid}}:empty`, (want / 1000).toFixed(3));
      out.push(performance.now() - t - want);
    }
  } finally {
    redis.disconnect();
  }
  return percentiles(out);
}

async function once(c: Collector, ctx: BenchContext, subject: string): Promise<void> {
  const { opts, progress } = ctx;
  const env = await benchEnv('bench_schedule');
  try {
    const worker = spawnWorker(env, { concurrency: opts.concurrency, logLevel: 'warn' });
    await waitRegistered(env, worker);
    const jobIds: string[] = [];
    for (let i = 0; i < opts['schedule-jobs']; i++) jobIds.push(await noopJob(env, { cronExpr: '* * * * * *' }));
    const scheduler = spawnNode('functions/scheduler-process.ts', {
      ...env.childEnv,
      SCHEDULE_INTERVAL: '60s',
      LOOKAHEAD: '70s',
      LOG_LEVEL: 'warn',
    });
    let end: Date;
    try {
      progress(
        `schedule ${subject}: ${jobIds.length} jobs at '* * * * * *' for ${opts['schedule-seconds']} s (tick every 60 s, lookahead 70 s)`,
      );
      await sleep(opts['schedule-seconds'] * 1000);
      const { rows } = await env.pool.query(`SELECT now() AS now`);
      end = rows[0].now;
    } finally {
      const s = await scheduler.stop();
      const w = await worker.stop();
      c.check(
        'processes exited 0 on SIGTERM',
        s.code === 0 && w.code === 0,
        `scheduler ${JSON.stringify(s)} ${scheduler.output().slice(-1000)}; worker ${JSON.stringify(w)} ${worker.output().slice(-1000)}`,
        subject,
      );
    }
    // Fire times from 1 s after the first tick wrote its rows (earlier ones were due before the scheduler ran) to
    // 2 s before the end (so every one of them had time to run).
    const { rows: win } = await env.pool.query(`SELECT min(queued_at) AS first FROM executions`);
    const first: Date | null = win[0].first;
    if (!first) {
      c.check('fire times materialised', false, 'no executions were created', subject);
      return;
    }
    const from = new Date(Math.ceil((first.getTime() + 1000) / 1000) * 1000);
    const to = new Date(end.getTime() - 2000);
    const { rows } = await env.pool.query(
      `SELECT job_id::text AS job_id, scheduled_for, status, attempt,
              extract(epoch FROM started_at - scheduled_for) * 1000 AS late
       FROM executions WHERE scheduled_for >= $1 AND scheduled_for <= $2 ORDER BY scheduled_for`,
      [from, to],
    );
    const expectedPerJob = Math.floor((to.getTime() - from.getTime()) / 1000) + 1;
    const perJob = new Map<string, number>();
    let notSucceeded = 0;
    for (const r of rows) {
      perJob.set(r.job_id, (perJob.get(r.job_id) ?? 0) + 1);
      if (r.status !== 'succeeded' || r.attempt !== 1) notSucceeded++;
    }
    const missing = jobIds.filter((j) => (perJob.get(j) ?? 0) !== expectedPerJob);
    c.check(
      'every fire time in the window ran exactly once and succeeded (one row per job per second, all succeeded, attempt 1)',
      missing.length === 0 && notSucceeded === 0,
      `expected ${expectedPerJob} per job; got ${JSON.stringify(Object.fromEntries(perJob))}; not succeeded: ${notSucceeded}`,
      subject,
    );
    const late = rows.filter((r) => r.late !== null).map((r) => Number(r.late));
    const p = percentiles(late);
    c.add('lateness p50', 'ms', p.p50!);
    c.add('lateness p95', 'ms', p.p95!);
    c.add('lateness p99', 'ms', p.p99!, { target: { op: '<=', value: 1000 } });
    c.add('lateness max', 'ms', p.max!, { info: true });
    c.add('fire times measured', 'runs', late.length, { info: true });
    c.note(
      'the window starts 1 s after the first tick wrote its rows and ends 2 s before the processes stop; rows materialised beyond it stay queued and are dropped with the schema',
    );
    progress(
      `schedule ${subject}: ${late.length} fire times, lateness p50 ${p.p50!.toFixed(1)} p99 ${p.p99!.toFixed(1)} max ${p.max!.toFixed(1)} ms`,
    );
  } finally {
    await env.cleanup();
  }
}
