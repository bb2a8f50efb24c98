/**
 * 4. Scheduler ticks racing: (a) ten runTick passes at once, over and over, each on its own connections, next to a
 * real scheduler process; (b) scheduler processes whose clocks differ by five minutes (one on the host clock, one
 * five minutes fast and one five minutes slow, through the test-only CLOCK_OFFSET_MS knob).
 * Checks: the books, and every fire time of every cron job from its first to its last materialised exactly once;
 * every one-off job ran exactly once.
 */
import { runTick, type Clock, type Logger, type QueueAdapter, type TransitionSink } from '@jobs/core';
import { createQueue } from '@jobs/queue';
import { createPostgresQueue } from '@jobs/queue-postgres';
import { createStore } from '@jobs/store';
import { Redis } from 'ioredis';
import pg from 'pg';
import { checkBooks } from '../books';
import { createScenario, sleep, type Scenario } from '../harness';
import { verdict, type ScenarioDef } from '../types';
import { checkFireTimes, cronTimes } from './common';

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };
const noSink: TransitionSink = { emit() {} };

/** A tick loop in this process: `parallel` concurrent runTick calls every `everyMs`, each on its own pool. */
function tickLoop(s: Scenario, options: { parallel: number; everyMs: number; clock: Clock }) {
  const deps = Array.from({ length: options.parallel }, () => {
    const pool = new pg.Pool({ connectionString: s.databaseUrl, max: 2 });
    pool.on('error', () => undefined);
    const redis = new Redis(s.redisUrl, { maxRetriesPerRequest: 2 });
    redis.on('error', () => undefined);
    const queue: QueueAdapter =
      s.backend === 'redis' ? createQueue(redis, { prefix: s.prefix }) : createPostgresQueue(pool);
    return {
      pool,
      redis,
      queue,
      deps: { store: createStore(pool), queue, clock: options.clock, sink: noSink, logger: quiet },
    };
  });
  let stopped = false;
  const counts = { passes: 0, created: 0, errors: 0, droppedMisfires: 0 };
  const loop = (async () => {
    while (!stopped) {
      const results = await Promise.allSettled(
        deps.map((d) => runTick(d.deps, { lookaheadMs: 5000, misfireGraceMs: 60_000 })),
      );
      for (const r of results) {
        counts.passes++;
        if (r.status === 'fulfilled') {
          counts.created += r.value.created;
          counts.droppedMisfires += r.value.droppedMisfires;
        } else counts.errors++;
      }
      await sleep(options.everyMs);
    }
  })();
  return {
    counts,
    async stop() {
      stopped = true;
      await loop;
      for (const d of deps) {
        await d.queue.close();
        d.redis.disconnect();
        await d.pool.end().catch(() => undefined);
      }
    },
  };
}

async function oneOffsRanOnce(s: Scenario, jobIds: string[]): Promise<string[]> {
  const rows = await s.q<{ job_id: string; n: number }>(
    `SELECT j.id::text AS job_id, count(e.id) FILTER (WHERE e.trigger = 'once')::int AS n
     FROM jobs j LEFT JOIN executions e ON e.job_id = j.id WHERE j.id = ANY($1::bigint[]) GROUP BY j.id`,
    [jobIds],
  );
  return rows.filter((r) => r.n !== 1).map((r) => `job ${r.job_id} ran ${r.n} times`);
}

async function runTicks(
  ctx: Parameters<ScenarioDef['run']>[0],
  name: string,
  loops: { parallel: number; offsetMs: number }[],
  skewedProcesses: number[] = [],
) {
  const s = await createScenario(ctx.servers, name, ctx.logRoot, ctx.queue);
  try {
    const { client } = await s.api({ WORKER_CONCURRENCY: '4' });
    s.spawn('scheduler');
    await Promise.all([s.worker({ WORKER_CONCURRENCY: '16' }), s.worker({ WORKER_CONCURRENCY: '16' })]);
    const CRON = '* * * * * *';
    const cronJobs: { id: string; nextRunAt: string }[] = [];
    for (let i = 0; i < 40; i++) {
      const job = (await client.createJob({ name: `${name}-cron-${i}`, cron_expr: CRON, handler: 'noop' })) as {
        id: string;
        next_run_at: string;
      };
      cronJobs.push({ id: job.id, nextRunAt: job.next_run_at });
    }
    const oneOffs: string[] = [];
    for (let i = 0; i < 20; i++) {
      const runAt = new Date(Date.now() + 2000 + i * 300).toISOString();
      const misfire = i % 2 === 0 ? 'skip' : 'run_once';
      oneOffs.push((await client.createJob({ name: `${name}-once-${i}`, run_at: runAt, handler: 'noop', misfire })).id);
    }
    const skewed = skewedProcesses.map((offset) => ({
      offset,
      proc: s.spawn('scheduler', { CLOCK_OFFSET_MS: String(offset) }, `scheduler-skew-${offset / 60_000}min`),
    }));
    const running = loops.map((l) =>
      tickLoop(s, { parallel: l.parallel, everyMs: 250, clock: { now: () => new Date(Date.now() + l.offsetMs) } }),
    );
    await sleep(12_000);
    await Promise.all(running.map((r) => r.stop()));
    const pausedAt = new Date();
    for (const { id } of cronJobs) await client.request('POST', `/api/v1/jobs/${id}/pause`);
    const counts = running.map(
      (r, i) =>
        `offset ${loops[i]!.offsetMs / 60_000} min ×${loops[i]!.parallel}: ${r.counts.passes} passes, ${r.counts.created} created, ${r.counts.droppedMisfires} jobs with dropped misfires, ${r.counts.errors} errors`,
    );
    ctx.log(counts.join('; '));

    const books = await checkBooks(s, []);
    const fires = await checkFireTimes(s, cronJobs, cronTimes(CRON), pausedAt);
    const problems = [
      ...fires.problems.slice(0, 6),
      ...(fires.problems.length > 6 ? [`... ${fires.problems.length - 6} more`] : []),
    ];
    // Not vacuous: each skewed process saw its host clock off by the offset and corrected it (clock.skew logs
    // database minus host, so minus the offset).
    for (const { offset, proc } of skewed) {
      const seen = proc.events('clock.skew').map((e) => Number(e.offset_ms));
      if (!seen.some((ms) => Math.abs(ms + offset) < 5000))
        problems.push(`${proc.name} did not run with a clock ${offset} ms off (clock.skew: ${JSON.stringify(seen)})`);
    }
    const once = await oneOffsRanOnce(s, oneOffs);
    if (once.length > 0)
      problems.push(`one-off jobs not run exactly once: ${once.length} (${once.slice(0, 4).join(', ')})`);
    const result = verdict(books, {
      problems,
      notes: [
        ...counts,
        `${fires.fireTimes} fire times expected, ${fires.missing} never materialised, ${fires.duplicates} duplicated`,
      ],
    });
    // The books count fire times here: an execution a tick materialised is what the scheduler acknowledged.
    return {
      ...result,
      acknowledged: fires.fireTimes + oneOffs.length,
      lost: result.lost + fires.missing + once.length,
      duplicated: result.duplicated + fires.duplicates,
    };
  } finally {
    await s.close();
  }
}

export const concurrentTicks: ScenarioDef = {
  name: 'ticks-ten-concurrent',
  postgresQueue: true,
  run: (ctx) => runTicks(ctx, 'ticks-ten-concurrent', [{ parallel: 10, offsetMs: 0 }]),
};

export const skewedTicks: ScenarioDef = {
  name: 'ticks-clock-skew-5min',
  // Two real scheduler processes whose host clocks are 5 minutes fast and 5 minutes slow (CLOCK_OFFSET_MS).
  run: (ctx) => runTicks(ctx, 'ticks-clock-skew-5min', [], [5 * 60_000, -5 * 60_000]),
};
