/**
 * Shared by the flow-control tests: the queue adapters the behaviour tests run against (a second adapter, such as
 * the PostgreSQL queue, is chosen by TEST_QUEUE_BACKEND and must pass the same tests), and measures of what ran when.
 */
import type { FlowLimits } from '@jobs/core';
import type pg from 'pg';
import { QUEUE_BACKEND, type QueueBackend, type TestEnv } from '../support/env';

export interface QueueAdapter {
  name: string;
  /** The queue ports the engine uses, on the test environment's servers (isolated by its schema and prefix). */
  queue(env: TestEnv): TestEnv['queue'];
  /** Makes the adapter lose its flow state, as a Redis FLUSHALL or an empty restart does (null: it cannot). */
  loseState: ((env: TestEnv) => Promise<void>) | null;
}

const ADAPTERS: Record<QueueBackend, QueueAdapter> = {
  redis: {
    name: 'redis',
    queue: (env) => env.queue,
    async loseState(env) {
      const keys = await env.redis.keys(`${env.prefix}*`);
      if (keys.length > 0) await env.redis.del(...keys);
    },
  },
  // Its flow state is rows of the same database as the store: it is never lost on its own.
  postgres: { name: 'postgres', queue: (env) => env.queue, loseState: null },
};

/** The adapter of this run (TEST_QUEUE_BACKEND: the vitest projects run these files once per adapter). */
export const QUEUE_ADAPTERS: QueueAdapter[] = [ADAPTERS[QUEUE_BACKEND]];

export const limits = (overrides: Partial<FlowLimits>): FlowLimits => ({
  maxConcurrency: null,
  concurrencyKey: null,
  maxConcurrencyPerKey: null,
  rateLimit: null,
  ...overrides,
});

export interface Run {
  id: string;
  key: string | null;
  start: number;
  end: number;
}

/** Finished attempts of a job with their start and end (ms, by the PostgreSQL clock) and payload.tenant. */
export async function runsOf(pool: pg.Pool, jobId: string): Promise<Run[]> {
  const { rows } = await pool.query(
    `SELECT id::text, payload->>'tenant' AS key, extract(epoch FROM started_at) * 1000 AS start,
            extract(epoch FROM finished_at) * 1000 AS end
     FROM executions WHERE job_id = $1 AND started_at IS NOT NULL ORDER BY started_at`,
    [jobId],
  );
  return rows.map((r) => ({
    id: r.id,
    key: r.key,
    start: Number(r.start),
    end: Number(r.end ?? Number.POSITIVE_INFINITY),
  }));
}

/** The most runs that overlapped at any instant. */
export function maxOverlap(runs: readonly Run[]): number {
  const events = runs.flatMap((r) => [
    { t: r.start, d: 1 },
    { t: r.end, d: -1 },
  ]);
  // An end and a start at the same instant do not overlap.
  events.sort((a, b) => a.t - b.t || a.d - b.d);
  let now = 0;
  let max = 0;
  for (const e of events) max = Math.max(max, (now += e.d));
  return max;
}

/** The most starts within any window of `windowMs` (a start exactly `windowMs` after another is outside it). */
export function maxStartsInWindow(runs: readonly Run[], windowMs: number): number {
  const starts = runs.map((r) => r.start).sort((a, b) => a - b);
  let max = 0;
  for (let i = 0, j = 0; i < starts.length; i++) {
    while (starts[i]! - starts[j]! >= windowMs) j++;
    max = Math.max(max, i - j + 1);
  }
  return max;
}
