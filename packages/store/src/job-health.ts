/**
 * @module job-health — the per-job series of GET /metrics (METRICS_JOBS): when each chosen job last succeeded and
 * last failed, read from its history at scrape time. Off unless configured, and capped in number, so the series
 * count stays what the operator chose.
 */
import type pg from 'pg';

/** One job's newest outcomes; null where its kept history has none. */
interface JobHealth {
  id: string;
  name: string;
  lastSuccessAt: Date | null;
  lastFailureAt: Date | null;
}

export interface JobHealthRead {
  /** The chosen jobs, oldest first (at most `max`). */
  jobs: JobHealth[];
  /** Live jobs that matched, chosen or not: more than `jobs.length` means the cap left some out. */
  matched: number;
}

/**
 * Newest attempts of a job walked back for its last success: a job failing for longer stops the walk there (its
 * success series is then absent, as it is once retention deleted it), so a scrape costs at most this many index
 * entries a job, however long the failures ran.
 */
const SUCCESS_WALK = 10_000;

/**
 * The chosen jobs and their newest succeeded and failed (or dead) attempts. `names` null: every live job. Jobs are
 * taken oldest first (by id), so the set a cap keeps does not change as jobs are added. The success is found by a
 * bounded walk back through executions_job (no index has succeeded rows apart); a failure by one probe of
 * executions_rare_job per status.
 * @example await jobHealthRead(pool, { names: ['nightly-report'], max: 100 })
 */
export async function jobHealthRead(
  pool: pg.Pool,
  input: { names: readonly string[] | null; max: number },
): Promise<JobHealthRead> {
  const { rows } = await pool.query(
    `WITH chosen AS (
       SELECT id, name, count(*) OVER () AS matched FROM jobs
       WHERE deleted_at IS NULL AND ($1::text[] IS NULL OR name = ANY($1::text[]))
       ORDER BY id LIMIT $2
     )
     SELECT c.id, c.name, c.matched,
            (SELECT r.finished_at FROM (SELECT e.id, e.status, e.finished_at FROM executions e
                                        WHERE e.job_id = c.id ORDER BY e.id DESC LIMIT ${SUCCESS_WALK}) r
             WHERE r.status = 'succeeded' ORDER BY r.id DESC LIMIT 1) AS last_success,
            greatest(
              (SELECT e.finished_at FROM executions e WHERE e.job_id = c.id AND e.status = 'failed' ORDER BY e.id DESC LIMIT 1),
              (SELECT e.finished_at FROM executions e WHERE e.job_id = c.id AND e.status = 'dead' ORDER BY e.id DESC LIMIT 1)
            ) AS last_failure
     FROM chosen c ORDER BY c.id`,
    [input.names, input.max],
  );
  return {
    jobs: rows.map((r) => ({
      id: String(r.id),
      name: r.name,
      lastSuccessAt: r.last_success,
      lastFailureAt: r.last_failure,
    })),
    matched: rows.length === 0 ? 0 : Number(rows[0].matched),
  };
}
