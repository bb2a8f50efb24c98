/** @module executions-read — reading executions: one, lists with keyset pagination, and the stats. */
import type { Execution, ExecutionStatus, Lane } from '@jobs/core';
import type pg from 'pg';
import { isId } from './jobs';
import { EXECUTION_COLUMNS, toExecution } from './rows';

export interface ExecutionListFilter {
  jobId?: string;
  status?: ExecutionStatus;
  /** Keyset cursor: executions with id below this (newest first). */
  before?: string;
  limit: number;
}

export async function executionGet(pool: pg.Pool, id: string): Promise<Execution | null> {
  if (!isId(id)) return null;
  const { rows } = await pool.query(`SELECT ${EXECUTION_COLUMNS} FROM executions WHERE id = $1`, [id]);
  return rows[0] ? toExecution(rows[0]) : null;
}

export async function executionList(pool: pg.Pool, filter: ExecutionListFilter): Promise<Execution[]> {
  if (filter.jobId !== undefined && !isId(filter.jobId)) return [];
  const { rows } = await pool.query(
    `SELECT ${EXECUTION_COLUMNS} FROM executions
     WHERE ($1::bigint IS NULL OR job_id = $1) AND ($2::text IS NULL OR status = $2) AND ($3::bigint IS NULL OR id < $3)
     ORDER BY id DESC LIMIT $4`,
    [filter.jobId ?? null, filter.status ?? null, filter.before ?? null, filter.limit],
  );
  return rows.map(toExecution);
}

export interface ExecutionStats {
  /** Live statuses are exact; final ones count the last 24 hours (from the per-minute rollup). */
  counts: Record<ExecutionStatus, number>;
  byLane: Record<Lane, { queued: number; retrying: number; running: number }>;
  throughput: { lastMinute: number; lastHour: number };
  successRate: { lastHour: number | null };
  durationMs: { p50: number | null; p95: number | null; sample: number };
  oldestQueuedAgeMs: number | null;
}

export async function executionStats(pool: pg.Pool): Promise<ExecutionStats> {
  const [live, minutes, final, durations, oldest] = await Promise.all([
    pool.query(
      `SELECT status, lane, count(*)::int AS n FROM executions
       WHERE status IN ('queued', 'retrying', 'running') GROUP BY status, lane`,
    ),
    pool.query(
      `SELECT status, sum(count)::bigint AS n, (minute >= date_trunc('minute', now()) - interval '1 minute') AS recent
       FROM execution_minutes WHERE minute > now() - interval '1 hour' GROUP BY status, recent`,
    ),
    pool.query(
      `SELECT status, count(*)::int AS n FROM executions
       WHERE finished_at > now() - interval '24 hours' AND status IN ('cancelled', 'skipped') GROUP BY status`,
    ),
    pool.query(
      `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms) AS p50,
              percentile_cont(0.95) WITHIN GROUP (ORDER BY duration_ms) AS p95, count(*)::int AS n
       FROM (SELECT duration_ms FROM executions
             WHERE finished_at IS NOT NULL AND finished_at > now() - interval '1 hour' AND duration_ms IS NOT NULL
             ORDER BY finished_at DESC LIMIT 1000) recent`,
    ),
    pool.query(
      `SELECT extract(epoch FROM now() - min(queued_at)) * 1000 AS age FROM executions
       WHERE status = 'queued' AND scheduled_for <= now()`,
    ),
  ]);
  const counts = { queued: 0, retrying: 0, running: 0, succeeded: 0, failed: 0, dead: 0, cancelled: 0, skipped: 0 } as Record<ExecutionStatus, number>;
  const byLane = { short: { queued: 0, retrying: 0, running: 0 }, long: { queued: 0, retrying: 0, running: 0 } };
  for (const r of live.rows) {
    counts[r.status as ExecutionStatus] += r.n;
    const lane = byLane[r.lane as Lane];
    if (lane) lane[r.status as 'queued' | 'retrying' | 'running'] += r.n;
  }
  const day = await pool.query(
    `SELECT status, sum(count)::bigint AS n FROM execution_minutes WHERE minute > now() - interval '24 hours' GROUP BY status`,
  );
  for (const r of day.rows) counts[r.status as ExecutionStatus] += Number(r.n);
  for (const r of final.rows) counts[r.status as ExecutionStatus] += r.n;
  let lastMinute = 0;
  let lastHour = 0;
  let succeededHour = 0;
  for (const r of minutes.rows) {
    const n = Number(r.n);
    lastHour += n;
    if (r.recent) lastMinute += n;
    if (r.status === 'succeeded') succeededHour += n;
  }
  const d = durations.rows[0];
  return {
    counts,
    byLane,
    throughput: { lastMinute, lastHour },
    successRate: { lastHour: lastHour === 0 ? null : succeededHour / lastHour },
    durationMs: { p50: d?.p50 ?? null, p95: d?.p95 ?? null, sample: d?.n ?? 0 },
    oldestQueuedAgeMs: oldest.rows[0]?.age === null || oldest.rows[0]?.age === undefined ? null : Math.round(Number(oldest.rows[0].age)),
  };
}
