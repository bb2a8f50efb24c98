/**
 * Correctness checks in PostgreSQL (and Redis) after a run. A benchmark that loses or duplicates a job reports FAIL
 * whatever its speed.
 */
import type pg from 'pg';
import type { QueueAdapter } from '@jobs/core';
import type { Queue } from '@jobs/queue';
import type { Collector } from './result';

interface DrainCheck {
  total: number;
  succeeded: number;
  live: number;
  other: number;
  retries: number;
  multiSuccess: number;
  minuteSucceeded: number;
  badTimes: number;
}

/**
 * The counts that show whether every execution completed exactly once (verifyDrain compares them with the number
 * expected): succeeded rows, attempt chains with more than one success, retry rows, live rows, the per-minute outcome
 * counters (written by the same statement as each outcome), and successes whose started_at is after finished_at.
 */
async function checkDrain(pool: pg.Pool): Promise<DrainCheck> {
  const { rows } = await pool.query(`
    SELECT count(*)::int AS total,
           count(*) FILTER (WHERE status = 'succeeded')::int AS succeeded,
           count(*) FILTER (WHERE status IN ('queued', 'retrying', 'running'))::int AS live,
           count(*) FILTER (WHERE status NOT IN ('succeeded', 'queued', 'retrying', 'running'))::int AS other,
           count(*) FILTER (WHERE attempt > 1 OR trigger = 'retry')::int AS retries,
           count(*) FILTER (WHERE status = 'succeeded' AND (started_at IS NULL OR finished_at IS NULL OR finished_at < started_at))::int AS bad_times
    FROM executions`);
  const multi = await pool.query(`
    SELECT count(*)::int AS n FROM (
      SELECT coalesce(root_id, id) FROM executions WHERE status = 'succeeded' GROUP BY 1 HAVING count(*) > 1) d`);
  const minutes = await pool.query(
    `SELECT coalesce(sum(count), 0)::int AS n FROM execution_minutes WHERE status = 'succeeded'`,
  );
  const r = rows[0];
  return {
    total: r.total,
    succeeded: r.succeeded,
    live: r.live,
    other: r.other,
    retries: r.retries,
    multiSuccess: multi.rows[0].n,
    minuteSucceeded: minutes.rows[0].n,
    badTimes: r.bad_times,
  };
}

/** Records the drain checks into a collector; the queue is checked for leftovers (leases, tokens, ready ids). */
export async function verifyDrain(
  c: Collector,
  pool: pg.Pool,
  queue: QueueAdapter,
  expected: number,
  label = '',
): Promise<boolean> {
  const d = await checkDrain(pool);
  const depth = await queue.depth();
  const leftovers = Object.entries(depth)
    .filter(([, v]) => v.ready + v.running + v.delayed + v.dead > 0)
    .map(([lane, v]) => `${lane}: ${JSON.stringify(v)}`);
  // The PostgreSQL queue keeps a token only on a leased row, which depth counts as running.
  const redisQueue = 'redis' in queue ? (queue as Queue) : null;
  const tokens = redisQueue
    ? await Promise.all((['short', 'long'] as const).map((l) => redisQueue.redis.hlen(redisQueue.keys.lane(l).tokens)))
    : [0, 0];
  const ok =
    d.total === expected &&
    d.succeeded === expected &&
    d.live === 0 &&
    d.other === 0 &&
    d.retries === 0 &&
    d.multiSuccess === 0 &&
    d.minuteSucceeded === expected &&
    d.badTimes === 0;
  c.check(
    'PostgreSQL: every job completed exactly once (succeeded rows == N, no chain with >1 success, no retries, nothing live, per-minute counters == N)',
    ok,
    `expected ${expected}: ${JSON.stringify(d)}`,
    label,
  );
  const redisOk = leftovers.length === 0 && tokens.every((t) => t === 0);
  c.check(
    `${redisQueue ? 'Redis' : 'PostgreSQL queue'}: no ids left (ready, delayed, leased, tokens, dead)`,
    redisOk,
    `${leftovers.join('; ')} tokens=${tokens.join(',')}`,
    label,
  );
  return ok && redisOk;
}

/**
 * The per-key limit held: no two (or `perKey` + 1) attempts of one key value overlapped, by the PostgreSQL times
 * (a start is dated when its worker began running it, after the previous one's outcome was committed), and Redis
 * holds no flow state any more (no slot, tag or waiting attempt).
 */
export async function verifyPerKeyLimit(
  c: Collector,
  env: { pool: pg.Pool; queue: QueueAdapter },
  jobId: string,
  perKey: number,
  label = '',
): Promise<boolean> {
  const { rows } = await env.pool.query(
    `SELECT max(n)::int AS worst FROM (
       SELECT count(*) OVER (PARTITION BY a.payload->>'k', a.id) AS n
       FROM executions a JOIN executions b ON b.job_id = a.job_id AND b.payload->>'k' = a.payload->>'k'
         AND b.started_at <= a.started_at AND b.finished_at > a.started_at
       WHERE a.job_id = $1) x`,
    [jobId],
  );
  const worst = rows[0].worst ?? 0;
  c.check(
    `per-key limit held (max_concurrency_per_key ${perKey})`,
    worst <= perKey,
    `${worst} attempts of one key overlapped`,
    label,
  );
  let left: string[];
  if ('redis' in env.queue) {
    const queue = env.queue as Queue;
    left = (await queue.redis.keys(`${queue.keys.flow}:*`)).filter(
      (k) => !/:(job|rate):/.test(k) && !k.endsWith(':timers'),
    );
  } else {
    const { rows: items } = await env.pool.query(`SELECT id::text FROM queue_items WHERE flow_job IS NOT NULL LIMIT 5`);
    left = items.map((r) => `queue_items ${r.id}`);
  }
  c.check(
    'queue: no flow state left (slots, tags, waiting attempts)',
    left.length === 0,
    left.slice(0, 5).join(', '),
    label,
  );
  return worst <= perKey && left.length === 0;
}
