/**
 * @module retention — the SQL of the retention pass: expired executions deleted in small batches, found by walking
 * the primary key (ids grow with time, so expired rows are the oldest ones) instead of an index on finished_at, which
 * every recorded outcome would pay for. Each batch is one short statement: it reads at most `scan` rows, locks the
 * expired ones with SKIP LOCKED (a row someone else holds is left for a later pass) and deletes them.
 */
import type { PruneBatch, RetentionJob, RetentionRules } from '@jobs/core';
import type pg from 'pg';

const DAY_MS = 86_400_000;

/**
 * How long a scanned row `s` is kept, in ms (NULL: forever). `days` is its job's retention_days: null follows the
 * history rule ($3), 0 keeps forever. Failed and dead rows are kept at least the dead rule ($4) and never less than
 * the history rule: the dead-letter queue outlives the ordinary history.
 */
const KEEP_MS = `CASE WHEN s.status IN ('failed', 'dead')
      THEN CASE WHEN h.ms IS NULL OR $4::bigint IS NULL THEN NULL ELSE greatest(h.ms, $4::bigint) END
      ELSE h.ms END`;

/**
 * One batch over the rows after `$1` in id order (of job `$6` only, when given: its own index then).
 * A replay is kept while the row it replays still names it (`replayed_by`): the dead-letter page links the two.
 * The cursor stops before the first scanned row queued after `$5` (the frontier: nothing newer can have expired),
 * so a later pass resumes there.
 */
const pruneSql = (byJob: boolean) => `
  WITH scan AS MATERIALIZED (
    SELECT e.id, e.queued_at, e.status, e.finished_at, e.trigger, e.retry_of,
           (SELECT j.retention_days FROM jobs j WHERE j.id = e.job_id) AS days
    FROM executions e
    WHERE e.id > $1::bigint ${byJob ? 'AND e.job_id = $6::bigint' : ''}
    ORDER BY e.id LIMIT $2
  ),
  expired AS (
    SELECT s.id FROM scan s
    CROSS JOIN LATERAL (SELECT CASE WHEN s.days IS NULL THEN $3::bigint WHEN s.days = 0 THEN NULL
                                    ELSE s.days * ${DAY_MS}::bigint END AS ms) h
    WHERE s.status IN ('succeeded', 'failed', 'dead', 'cancelled', 'skipped')
      AND s.finished_at < now() - make_interval(secs => (${KEEP_MS}) / 1000.0)
      AND NOT (s.trigger = 'replay' AND EXISTS (
        SELECT 1 FROM executions src WHERE src.id = s.retry_of AND src.replayed_by = s.id))
  ),
  doomed AS (
    SELECT e.id FROM executions e
    WHERE e.id = ANY(ARRAY(SELECT id FROM expired)) AND e.status IN ('succeeded', 'failed', 'dead', 'cancelled', 'skipped')
    FOR UPDATE SKIP LOCKED
  ),
  gone AS (
    DELETE FROM executions e WHERE e.id = ANY(ARRAY(SELECT id FROM doomed)) RETURNING e.id, e.lane, e.status
  ),
  frontier AS (
    SELECT min(id) AS first_new FROM scan WHERE queued_at >= now() - make_interval(secs => $5::bigint / 1000.0)
  )
  SELECT (SELECT count(*)::int FROM scan) AS scanned,
         (SELECT first_new FROM frontier) AS first_new,
         (SELECT max(id) FROM scan WHERE id < coalesce((SELECT first_new FROM frontier), 'Infinity'::numeric)) AS last_old,
         (SELECT coalesce(json_agg(json_build_object('id', id::text, 'lane', lane, 'status', status)), '[]') FROM gone) AS gone`;

const PRUNE_ALL = pruneSql(false);
const PRUNE_JOB = pruneSql(true);

/**
 * Deletes one batch of expired executions after `afterId` (of one job when `jobId` is set).
 * @example const batch = await executionsPrune(pool, { afterId: '0', scan: 2000, rules, frontierMs: rules.historyMs });
 */
export async function executionsPrune(
  pool: pg.Pool,
  input: { afterId: string; scan: number; rules: RetentionRules; frontierMs: number; jobId?: string },
): Promise<PruneBatch> {
  const values: unknown[] = [
    input.afterId,
    input.scan,
    input.rules.historyMs,
    input.rules.deadMs,
    Math.max(0, Math.round(input.frontierMs)),
  ];
  if (input.jobId !== undefined) values.push(input.jobId);
  const { rows } = await pool.query(input.jobId === undefined ? PRUNE_ALL : PRUNE_JOB, values);
  const r = rows[0] as {
    scanned: number;
    first_new: string | null;
    last_old: string | null;
    gone: PruneBatch['deleted'];
  };
  return {
    deleted: r.gone,
    scanned: r.scanned,
    nextAfterId: r.last_old ?? input.afterId,
    // Short of a full window, or up against rows too new to have expired: nothing further for this pass.
    reachedEnd: r.scanned < input.scan || r.first_new !== null,
  };
}

/**
 * Jobs whose own retention is shorter than `shorterThanMs` (all with one, when null): their rows expire before the
 * default sweep reaches them, so the pass sweeps them one job at a time through executions_job. Deleted jobs count
 * (their history stays until it expires). Keyset by id, for a pass that runs out of time part way.
 */
export async function jobsWithShortRetention(
  pool: pg.Pool,
  input: { shorterThanMs: number | null; afterJobId: string; limit: number },
): Promise<RetentionJob[]> {
  const { rows } = await pool.query(
    `SELECT id, retention_days FROM jobs
     WHERE retention_days > 0 AND ($1::bigint IS NULL OR retention_days::bigint * ${DAY_MS} < $1::bigint) AND id > $2::bigint
     ORDER BY id LIMIT $3`,
    [input.shorterThanMs, input.afterJobId, input.limit],
  );
  return rows.map((r) => ({ jobId: r.id as string, retentionMs: Number(r.retention_days) * DAY_MS }));
}
