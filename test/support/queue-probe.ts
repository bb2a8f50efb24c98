/**
 * What a test needs to look at or break inside either queue adapter (test/support/env.ts picks one): the same
 * assertions then hold on Redis and on PostgreSQL.
 */
import type { Lane } from '@jobs/core';
import type { TestEnv } from './env';

/** Makes the queue's lease of `id` expire now (its worker stopped heartbeating it). */
export async function expireLease(env: TestEnv, lane: Lane, id: string): Promise<void> {
  if (env.redisQueue) await env.redis.zadd(env.redisQueue.keys.lane(lane).lease, 0, id);
  else
    await env.pool.query(`UPDATE queue_items SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [id]);
}

/** Drops every id the queue holds (a Redis FLUSHALL; on PostgreSQL, the queue's rows), leaving flow limits alone. */
export async function loseQueuedIds(env: TestEnv): Promise<void> {
  if (env.redisQueue) {
    const keys = await env.redis.keys(`${env.prefix}*`);
    if (keys.length > 0) await env.redis.del(...keys);
  } else {
    await env.pool.query('TRUNCATE queue_items, queue_dead');
  }
}

/** Attempts of limited jobs the queue still keeps anything of (tags, rows). */
export async function limitedLeft(env: TestEnv): Promise<number> {
  if (env.redisQueue) return env.redis.hlen(`${env.redisQueue.keys.flow}:items`);
  const { rows } = await env.pool.query(`SELECT count(*)::int AS n FROM queue_items WHERE flow_job IS NOT NULL`);
  return rows[0].n;
}

/** Attempts of limited jobs ready to be checked against their limits (not parked). */
export async function limitedReady(env: TestEnv, lane: Lane): Promise<number> {
  if (env.redisQueue) return env.redis.zcard(env.redisQueue.keys.lane(lane).fready);
  const { rows } = await env.pool.query(
    `SELECT count(*)::int AS n FROM queue_items WHERE lane = $1 AND state = 'ready' AND flow_job IS NOT NULL`,
    [lane],
  );
  return rows[0].n;
}

/** Leases and lease tokens the queue still holds in a lane. */
export async function leasesLeft(env: TestEnv, lane: Lane): Promise<number> {
  if (env.redisQueue) {
    const k = env.redisQueue.keys.lane(lane);
    return (await env.redis.zcard(k.lease)) + (await env.redis.hlen(k.tokens));
  }
  const { rows } = await env.pool.query(
    `SELECT count(*)::int AS n FROM queue_items WHERE lane = $1 AND (state = 'leased' OR token IS NOT NULL)`,
    [lane],
  );
  return rows[0].n;
}
