/**
 * @module flow — SQL behind flow control: the lanes table (paused or not) and the snapshot from which the queue
 * rebuilds its limits, slots and rate windows after losing them.
 */
import type { AuditEntry, FlowJob, FlowSnapshot, Lane, LaneState } from '@jobs/core';
import type pg from 'pg';
import type { QueueItem } from '@jobs/core';
import { flowKeySql, toLimits, toQueueItem } from './rows';
import { isId } from './jobs';
import { idempotent } from './pool';
import { audited, type Queryable } from './audit';

/** Recent starts looked at per rate-limited job when rate windows are rebuilt (its latest executions by id). */
const RATE_SCAN_ROWS = 100_000;

export interface LaneRow extends LaneState {
  pausedAt: Date | null;
}

/** A lanes row (version as text: a bigint). */
interface LaneDbRow {
  lane: LaneRow['lane'];
  paused: boolean;
  version: string;
  paused_at: Date | null;
}

const toLane = (r: LaneDbRow): LaneRow => ({
  lane: r.lane,
  paused: r.paused,
  version: r.version,
  pausedAt: r.paused_at,
});

export async function laneList(pool: pg.Pool): Promise<LaneRow[]> {
  const { rows } = await pool.query(
    `SELECT lane, paused, version::text AS version, paused_at FROM lanes ORDER BY lane DESC`,
  );
  return rows.map(toLane);
}

/** Pauses or resumes a lane; every call is a new version (so the latest write to Redis wins). */
export async function laneSetPaused(
  pool: pg.Pool,
  input: { lane: Lane; paused: boolean },
  audit?: AuditEntry,
): Promise<LaneRow> {
  const set = async (db: Queryable) => {
    // Safe to send twice on a new connection (without an audit row): a second run sets the same state under a newer version.
    const { rows } = await db.query(
      idempotent({
        text: `WITH old AS (SELECT paused AS was_paused FROM lanes WHERE lane = $1)
         INSERT INTO lanes (lane, paused, version, paused_at) VALUES ($1, $2, 1, CASE WHEN $2 THEN now() END)
         ON CONFLICT (lane) DO UPDATE SET paused = $2, version = lanes.version + 1, updated_at = now(),
           paused_at = CASE WHEN NOT $2 THEN NULL WHEN lanes.paused THEN lanes.paused_at ELSE now() END
         RETURNING lane, paused, version::text AS version, paused_at, coalesce((SELECT was_paused FROM old), false) AS was_paused`,
        values: [input.lane, input.paused],
      }),
    );
    return { lane: toLane(rows[0]), wasPaused: rows[0].was_paused as boolean };
  };
  const result = await audited(pool, audit, set, (r, entry) => ({
    ...entry,
    changes: { paused: { old: r.wasPaused, new: input.paused } },
  }));
  return result.lane;
}

export async function flowSnapshot(
  pool: pg.Pool,
  input: { jobIds: readonly string[]; full: boolean; changedWithinMs?: number },
): Promise<FlowSnapshot> {
  const lanes = await laneList(pool);
  const columns = `id, limited AND deleted_at IS NULL AS live_limited, max_concurrency, concurrency_key,
    max_concurrency_per_key, rate_limit, rate_period_ms, rate_per_key,
    (extract(epoch FROM updated_at) * 1000000)::bigint::text AS version`;
  // Three queries rather than one OR. The recently changed jobs are found by a scan of jobs (once per reconciler
  // pass): an index on updated_at would cost every tick's update of next_run_at an index insert.
  const [named, changed, limited] = await Promise.all([
    input.jobIds.length === 0
      ? null
      : pool.query(`SELECT ${columns} FROM jobs WHERE id = ANY($1::bigint[])`, [input.jobIds.filter(isId)]),
    input.changedWithinMs === undefined
      ? null
      : pool.query(
          `SELECT ${columns} FROM jobs WHERE updated_at > now() - make_interval(secs => $1::double precision / 1000)`,
          [input.changedWithinMs],
        ),
    input.full ? pool.query(`SELECT ${columns} FROM jobs WHERE limited AND deleted_at IS NULL`) : null,
  ]);
  const byId = new Map<string, FlowJob>();
  for (const r of [named, changed, limited].flatMap((q) => q?.rows ?? [])) {
    byId.set(r.id, { jobId: r.id, limits: r.live_limited ? toLimits(r) : null, version: r.version });
  }
  const flowJobs = [...byId.values()];
  // Jobs Redis asked about that PostgreSQL does not have: "no limits", so their attempts are not held back forever.
  const known = new Set(flowJobs.map((j) => j.jobId));
  for (const id of input.jobIds) if (!known.has(id)) flowJobs.push({ jobId: id, limits: null, version: '0' });
  if (!input.full) return { full: false, lanes, jobs: flowJobs, running: [], starts: [] };

  const running = await pool.query(
    `SELECT id, job_id, lane, flow_key FROM executions WHERE status = 'running' AND flow_key IS NOT NULL`,
  );
  // The latest `rate_limit` starts within the period, per bucket, are what a rate window can hold. Executions of a
  // job start in about id order, so its latest rows by id hold them (a bounded walk of executions_job).
  const starts = await pool.query(
    `SELECT id, job_id, key, started_at FROM (
       SELECT x.id, j.id AS job_id, CASE WHEN j.rate_per_key THEN coalesce(x.flow_key, '') ELSE '' END AS key,
              x.started_at, j.rate_limit,
              row_number() OVER (PARTITION BY j.id, CASE WHEN j.rate_per_key THEN coalesce(x.flow_key, '') ELSE '' END
                                 ORDER BY x.started_at DESC) AS n
       FROM jobs j CROSS JOIN LATERAL (
         SELECT e.id, e.flow_key, e.started_at FROM executions e WHERE e.job_id = j.id ORDER BY e.id DESC LIMIT $1
       ) x
       WHERE j.rate_limit IS NOT NULL AND j.deleted_at IS NULL
         AND x.started_at > now() - make_interval(secs => j.rate_period_ms::double precision / 1000)
     ) recent WHERE n <= rate_limit`,
    [RATE_SCAN_ROWS],
  );
  return {
    full: true,
    lanes,
    jobs: flowJobs,
    running: running.rows.map((r) => ({ id: r.id, jobId: r.job_id, lane: r.lane, key: r.flow_key })),
    starts: starts.rows.map((r) => ({ id: r.id, jobId: r.job_id, key: r.key, at: r.started_at })),
  };
}

/** The subset of `ids` whose status is final. */
export async function executionsFinal(pool: pg.Pool, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const { rows } = await pool.query(
    `SELECT id FROM executions WHERE id = ANY($1::bigint[]) AND status NOT IN ('queued', 'retrying', 'running')`,
    [ids],
  );
  return rows.map((r) => r.id as string);
}

/**
 * Gives the waiting attempts of a job the flow key its current limits imply (after an edit changed whether it has
 * limits, or its concurrency key); returns those that changed, to be queued again under their new key.
 */
export async function executionsRetag(pool: pg.Pool, jobId: string): Promise<QueueItem[]> {
  if (!isId(jobId)) return [];
  const key = flowKeySql('j', 'coalesce(e.payload, j.payload)');
  // Not marked idempotent: a second run would change nothing, but would return nothing either, and the rows the
  // first changed must be queued again.
  // The rows are locked in id order first, as every other statement that locks several of them does: an UPDATE
  // over a join locks them in whatever order its plan meets them, and a concurrent start deadlocked with it.
  const { rows } = await pool.query(
    `WITH waiting AS (
       SELECT id FROM executions
       WHERE job_id = $1 AND status IN ('queued', 'retrying') AND lease_token IS NULL
       ORDER BY id FOR UPDATE
     )
     UPDATE executions e SET flow_key = ${key}
     FROM waiting w, jobs j
     WHERE e.id = w.id AND j.id = $1 AND e.status IN ('queued', 'retrying') AND e.lease_token IS NULL
       AND e.flow_key IS DISTINCT FROM ${key}
     RETURNING e.id, e.job_id, e.lane, e.priority, e.scheduled_for, e.flow_key`,
    [jobId],
  );
  return rows.map(toQueueItem);
}
