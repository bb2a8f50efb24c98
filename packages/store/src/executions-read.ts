/** @module executions-read — reading executions: one, lists with keyset pagination, and the stats. */
import type { Execution, ExecutionStatus, ExecutionSummary, Lane } from '@jobs/core';
import type pg from 'pg';
import { isId } from './jobs';
import { EXECUTION_COLUMNS, EXECUTION_SUMMARY_COLUMNS, toExecution, toExecutionSummary } from './rows';

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

/** A page of list rows, newest first (payload and output stay on executionGet). */
export async function executionList(pool: pg.Pool, filter: ExecutionListFilter): Promise<ExecutionSummary[]> {
  if (filter.jobId !== undefined && !isId(filter.jobId)) return [];
  const { rows } = await pool.query(
    `SELECT ${EXECUTION_SUMMARY_COLUMNS} FROM executions
     WHERE ($1::bigint IS NULL OR job_id = $1) AND ($2::text IS NULL OR status = $2) AND ($3::bigint IS NULL OR id < $3)
     ORDER BY id DESC LIMIT $4`,
    [filter.jobId ?? null, filter.status ?? null, filter.before ?? null, filter.limit],
  );
  return rows.map(toExecutionSummary);
}

/** Work per lane right now: due and waiting to start, running, and how long the oldest due one has waited. */
export interface LaneLoad {
  waiting: number;
  running: number;
  oldestWaitingAgeMs: number | null;
}

/**
 * Live executions per lane by the database clock (the tick's scaling metrics). Reads only live rows, through the
 * executions_live partial index, so the history's size does not matter.
 */
export async function executionsLoadByLane(pool: pg.Pool): Promise<Record<Lane, LaneLoad>> {
  const { rows } = await pool.query(
    `SELECT lane,
            count(*) FILTER (WHERE status <> 'running' AND scheduled_for <= now())::int AS waiting,
            count(*) FILTER (WHERE status = 'running')::int AS running,
            extract(epoch FROM now() - min(scheduled_for) FILTER (WHERE status <> 'running' AND scheduled_for <= now())) * 1000 AS oldest_ms
     FROM executions WHERE status IN ('queued', 'retrying', 'running') GROUP BY lane`,
  );
  const out: Record<Lane, LaneLoad> = {
    short: { waiting: 0, running: 0, oldestWaitingAgeMs: null },
    long: { waiting: 0, running: 0, oldestWaitingAgeMs: null },
  };
  for (const r of rows) {
    const lane = out[r.lane as Lane];
    if (!lane) continue;
    lane.waiting = r.waiting;
    lane.running = r.running;
    lane.oldestWaitingAgeMs = r.oldest_ms === null ? null : Math.max(0, Math.round(Number(r.oldest_ms)));
  }
  return out;
}

export interface ExecutionStats {
  /** Live statuses are exact; final ones count the last 24 hours (from the per-minute rollup). */
  counts: Record<ExecutionStatus, number>;
  byLane: Record<Lane, { queued: number; retrying: number; running: number }>;
  /** Queued executions already due (the rest are fire times materialised ahead, or delayed): what waits for a worker. */
  queuedDue: number;
  throughput: { lastMinute: number; lastHour: number };
  successRate: { lastHour: number | null };
  durationMs: { p50: number | null; p95: number | null; sample: number };
  oldestQueuedAgeMs: number | null;
}

export async function executionStats(pool: pg.Pool): Promise<ExecutionStats> {
  const [live, minutes, day, durations, oldest] = await Promise.all([
    pool.query(
      `SELECT status, lane, count(*)::int AS n, (count(*) FILTER (WHERE scheduled_for <= now()))::int AS due FROM executions
       WHERE status IN ('queued', 'retrying', 'running') GROUP BY status, lane`,
    ),
    pool.query(
      `SELECT status, sum(count)::bigint AS n, (minute >= date_trunc('minute', now()) - interval '1 minute') AS recent
       FROM execution_minutes WHERE minute > now() - interval '1 hour' GROUP BY status, recent`,
    ),
    pool.query(
      `SELECT status, sum(count)::bigint AS n FROM execution_minutes WHERE minute > now() - interval '24 hours' GROUP BY status`,
    ),
    // The latest finished attempts, found walking the primary key back from the newest row: no index on
    // finished_at (it would cost every recorded outcome an index insert), and ids grow with time.
    pool.query(
      `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms) AS p50,
              percentile_cont(0.95) WITHIN GROUP (ORDER BY duration_ms) AS p95, count(*)::int AS n
       FROM (SELECT duration_ms FROM executions
             WHERE id > (SELECT coalesce(max(id), 0) FROM executions) - 20000
               AND duration_ms IS NOT NULL AND finished_at > now() - interval '1 hour'
             ORDER BY id DESC LIMIT 1000) recent`,
    ),
    pool.query(
      `SELECT extract(epoch FROM now() - min(queued_at)) * 1000 AS age FROM executions
       WHERE status = 'queued' AND scheduled_for <= now()`,
    ),
  ]);
  const counts = { queued: 0, retrying: 0, running: 0, succeeded: 0, failed: 0, dead: 0, cancelled: 0, skipped: 0 } as Record<ExecutionStatus, number>;
  const byLane = { short: { queued: 0, retrying: 0, running: 0 }, long: { queued: 0, retrying: 0, running: 0 } };
  let queuedDue = 0;
  for (const r of live.rows) {
    counts[r.status as ExecutionStatus] += r.n;
    if (r.status === 'queued') queuedDue += r.due;
    const lane = byLane[r.lane as Lane];
    if (lane) lane[r.status as 'queued' | 'retrying' | 'running'] += r.n;
  }
  for (const r of day.rows) counts[r.status as ExecutionStatus] += Number(r.n);
  let lastMinute = 0;
  let lastHour = 0;
  let succeededHour = 0;
  for (const r of minutes.rows) {
    if (!['succeeded', 'failed', 'dead'].includes(r.status)) continue; // throughput counts attempts that ran
    const n = Number(r.n);
    lastHour += n;
    if (r.recent) lastMinute += n;
    if (r.status === 'succeeded') succeededHour += n;
  }
  const d = durations.rows[0];
  return {
    counts,
    byLane,
    queuedDue,
    throughput: { lastMinute, lastHour },
    successRate: { lastHour: lastHour === 0 ? null : succeededHour / lastHour },
    durationMs: { p50: d?.p50 ?? null, p95: d?.p95 ?? null, sample: d?.n ?? 0 },
    oldestQueuedAgeMs: oldest.rows[0]?.age === null || oldest.rows[0]?.age === undefined ? null : Math.round(Number(oldest.rows[0].age)),
  };
}

/** Finished attempts of one minute, by outcome (the dashboard's throughput and failure-rate charts). */
export interface MinuteOutcomes {
  minute: Date;
  succeeded: number;
  failed: number;
  dead: number;
}

/**
 * Outcomes per minute over the last `minutes` minutes (default 60), oldest first, one entry per minute up to the
 * current one by the database clock, zeros included.
 * @example const hour = await executionOutcomesPerMinute(pool); hour.at(-1)!.succeeded
 */
export async function executionOutcomesPerMinute(pool: pg.Pool, minutes = 60): Promise<MinuteOutcomes[]> {
  // Reads at most minutes × 3 rows of the rollup; generate_series gives the empty minutes their row.
  const { rows } = await pool.query(
    `SELECT m.minute, e.status, coalesce(e.count, 0)::bigint AS n
     FROM generate_series(date_trunc('minute', now()) - make_interval(mins => $1::int - 1), date_trunc('minute', now()),
                          interval '1 minute') AS m(minute)
     LEFT JOIN execution_minutes e ON e.minute = m.minute
     ORDER BY m.minute`,
    [minutes],
  );
  const byMinute = new Map<number, MinuteOutcomes>();
  for (const r of rows) {
    const minute = r.minute as Date;
    let entry = byMinute.get(minute.getTime());
    if (!entry) byMinute.set(minute.getTime(), (entry = { minute, succeeded: 0, failed: 0, dead: 0 }));
    if (r.status === 'succeeded' || r.status === 'failed' || r.status === 'dead') entry[r.status as 'succeeded'] += Number(r.n);
  }
  return [...byMinute.values()];
}

/** The latest finished attempt of each job (its "last outcome"); jobs without one are absent. */
export async function executionLastOutcomes(
  pool: pg.Pool,
  jobIds: readonly string[],
): Promise<Map<string, { id: string; status: ExecutionStatus; finishedAt: Date }>> {
  const ids = jobIds.filter(isId);
  const result = new Map<string, { id: string; status: ExecutionStatus; finishedAt: Date }>();
  if (ids.length === 0) return result;
  // One probe of executions_job (job_id, id DESC) per job, newest first, stopping at the first finished row.
  const { rows } = await pool.query(
    `SELECT j.id AS job_id, x.id, x.status, x.finished_at FROM unnest($1::bigint[]) AS j(id)
     CROSS JOIN LATERAL (SELECT e.id, e.status, e.finished_at FROM executions e
                         WHERE e.job_id = j.id AND e.finished_at IS NOT NULL ORDER BY e.id DESC LIMIT 1) x`,
    [ids],
  );
  for (const r of rows) result.set(String(r.job_id), { id: String(r.id), status: r.status, finishedAt: r.finished_at });
  return result;
}

/**
 * The attempt chain around one execution, oldest first: the attempts it retries or replays (following retry_of back),
 * and the retries and replays made from it or from its successors. Empty for an unknown id.
 * Forward links have no index on retry_of, so they are searched among the job's next `forwardLimit` linked rows.
 */
export async function executionChain(pool: pg.Pool, id: string, forwardLimit = 500): Promise<Execution[]> {
  if (!isId(id)) return [];
  const { rows } = await pool.query(
    `WITH RECURSIVE back AS (
       SELECT id, retry_of, 0 AS depth FROM executions WHERE id = $1
       UNION ALL
       SELECT e.id, e.retry_of, b.depth + 1 FROM executions e JOIN back b ON e.id = b.retry_of WHERE b.depth < 100
     ),
     later AS (
       SELECT id FROM executions
       WHERE job_id = (SELECT job_id FROM executions WHERE id = $1) AND id > $1 AND retry_of IS NOT NULL
       ORDER BY id LIMIT $2
     )
     SELECT ${EXECUTION_COLUMNS} FROM executions WHERE id IN (SELECT id FROM back UNION SELECT id FROM later) ORDER BY id`,
    [id, forwardLimit],
  );
  const all = rows.map(toExecution);
  const keep = new Set<string>();
  const self = BigInt(id);
  // Rows come in id order and a retry or replay always has a larger id than its source, so one pass links them.
  for (const e of all) {
    if (BigInt(e.id) <= self || (e.retryOf !== null && keep.has(e.retryOf))) keep.add(e.id);
  }
  return all.filter((e) => keep.has(e.id));
}
