/**
 * tick: one runTick (the scheduler's pass) with many jobs defined.
 *   none due: `tick-jobs` jobs (default 100,000) whose next_run_at is a day ahead; target < 50 ms.
 *   10k due:  `tick-due` more jobs (default 10,000) due in the same second, materialised and pushed in one tick
 *             (in batches of 500 jobs per transaction, as the scheduler does); target < 2 s.
 * Jobs are inserted with one INSERT ... SELECT generate_series. Time is a manual clock at 2030-01-01T00:00:00.5Z.
 * The transition sink is the product's (one JSON log line per created execution), written to /dev/null.
 */
import { runTick } from '@jobs/core';
import pino from 'pino';
import { createLogger, logSink } from '../../../functions/logger';
import { manualClock } from '../../support/env';
import { benchEnv } from '../lib/envs';
import type { Collector } from '../lib/result';
import { median } from '../lib/stats';
import type { BenchContext } from '../lib/options';

const T = '2030-01-01T00:00:00Z';
const NEXT_DAY = '2030-01-02T00:00:00Z';

export async function tickScenario(c: Collector, ctx: BenchContext, runs: number): Promise<void> {
  for (let run = 0; run < runs; run++) await once(c, ctx, `run ${run + 1}`);
}

async function once(c: Collector, ctx: BenchContext, subject: string): Promise<void> {
  const { opts, progress } = ctx;
  const env = await benchEnv('bench_tick');
  try {
    let t = performance.now();
    await env.pool.query(
      `INSERT INTO jobs (name, cron_expr, handler, next_run_at)
       SELECT 'idle-' || g, '0 0 * * *', 'noop', $2::timestamptz FROM generate_series(1, $1::int) g`,
      [opts['tick-jobs'], NEXT_DAY],
    );
    progress(`tick ${subject}: ${opts['tick-jobs']} jobs inserted in ${Math.round(performance.now() - t)} ms`);
    const clock = manualClock(new Date(Date.parse(T) + 500));
    const logger = createLogger({ level: 'info', destination: pino.destination({ dest: '/dev/null', sync: false }) });
    const deps = { store: env.store, queue: env.queue, clock, sink: logSink(logger), logger };
    const tick = () => runTick(deps, { lookaheadMs: 70_000, misfireGraceMs: 60_000 });
    await env.pool.query('SELECT 1'); // a warm connection, as a running scheduler has

    // none due
    t = performance.now();
    const cold = await tick();
    const coldMs = performance.now() - t;
    const times: number[] = [];
    for (let i = 0; i < opts['tick-repeats']; i++) {
      t = performance.now();
      const r = await tick();
      times.push(performance.now() - t);
      if (r.created !== 0 || r.jobs !== 0) c.check('none-due tick touches nothing', false, JSON.stringify(r), subject);
    }
    c.check('none-due tick touches nothing', cold.created === 0 && cold.jobs === 0, JSON.stringify(cold), subject);
    c.add(
      `none due (${opts['tick-jobs'].toLocaleString('en-US')} jobs): median of ${opts['tick-repeats']} ticks`,
      'ms',
      median(times),
      { target: { op: '<', value: 50 } },
    );
    c.add('none due: first tick (cold plan)', 'ms', coldMs, { info: true });
    const plan = await env.pool.query(
      `EXPLAIN (FORMAT JSON) SELECT id FROM jobs
       WHERE status = 'active' AND deleted_at IS NULL AND next_run_at IS NOT NULL AND next_run_at <= $1
       ORDER BY next_run_at LIMIT 500 FOR UPDATE SKIP LOCKED`,
      [new Date(Date.parse(T) + 70_500)],
    );
    const planText = JSON.stringify(plan.rows[0]);
    c.check(
      'the due-jobs query is an index probe (jobs_due)',
      planText.includes('jobs_due'),
      planText.slice(0, 400),
      subject,
    );

    // 10k due in the same second
    await env.pool.query(
      `INSERT INTO jobs (name, cron_expr, handler, next_run_at)
       SELECT 'due-' || g, '0 0 * * *', 'noop', $2::timestamptz FROM generate_series(1, $1::int) g`,
      [opts['tick-due'], T],
    );
    t = performance.now();
    const due = await tick();
    const dueMs = performance.now() - t;
    c.add(`${opts['tick-due'].toLocaleString('en-US')} due: one tick (materialise + push)`, 'ms', dueMs, {
      target: { op: '<', value: 2000 },
    });
    c.add(`${opts['tick-due'].toLocaleString('en-US')} due: batches`, 'transactions', due.batches, { info: true });
    progress(
      `tick ${subject}: none due ${median(times).toFixed(1)} ms (cold ${coldMs.toFixed(1)}); ${opts['tick-due']} due ${Math.round(dueMs)} ms`,
    );

    const again = await tick();
    const { rows } = await env.pool.query(
      `SELECT count(*)::int AS n, count(DISTINCT job_id)::int AS jobs,
              count(*) FILTER (WHERE status = 'queued' AND scheduled_for = $1::timestamptz AND trigger = 'cron')::int AS ok
       FROM executions`,
      [T],
    );
    const advanced = await env.pool.query(
      `SELECT count(*)::int AS n FROM jobs WHERE name LIKE 'due-%' AND next_run_at = $1::timestamptz`,
      [NEXT_DAY],
    );
    const lane = env.redisQueue!.keys.lane('short');
    const inRedis = (await env.redis.zcard(lane.ready)) + (await env.redis.zcard(lane.delayed));
    const n = opts['tick-due'];
    c.check(
      'due tick: one execution per due job (queued, at its fire time), each pushed once, next_run_at advanced; a second tick adds nothing',
      due.created === n &&
        due.pushed === n &&
        rows[0].n === n &&
        rows[0].jobs === n &&
        rows[0].ok === n &&
        inRedis === n &&
        advanced.rows[0].n === n &&
        again.created === 0,
      JSON.stringify({ due, again, rows: rows[0], inRedis, advanced: advanced.rows[0].n }),
      subject,
    );
  } finally {
    await env.cleanup();
  }
}
