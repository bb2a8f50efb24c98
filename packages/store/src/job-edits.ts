/**
 * @module job-edits — SQL of changing a job in place: the update with its version row, what it does to the waiting
 * executions, the version history, and backfilled fire times. Each write holds the job's row lock (FOR UPDATE, the
 * lock the tick takes with SKIP LOCKED), so a tick never plans from a schedule an edit is replacing.
 */
import {
  ConflictError,
  type AuditEntry,
  type ChangedExecution,
  type CreatedExecution,
  type Job,
  type JobChange,
  type JobUpdate,
  type JobVersion,
  type MovedExecution,
} from '@jobs/core';
import type pg from 'pg';
import { auditInsert } from './audit';
import { cancelLive, isId, specColumns } from './jobs';
import { CREATED_COLUMNS, JOB_COLUMNS, flowKeySql, toCreated, toJob, toQueueItem } from './rows';
import { transaction } from './transaction';

/** Most versions GET /jobs/{id}/versions returns (newest first). */
const MAX_VERSIONS_LISTED = 1000;

export async function jobUpdate(
  pool: pg.Pool,
  input: JobUpdate,
): Promise<{ job: Job; cancelled: ChangedExecution[]; moved: MovedExecution[] } | 'stale' | null> {
  if (!isId(input.id)) return null;
  try {
    return await transaction(pool, async (client) => {
      const locked = await client.query(`SELECT version FROM jobs WHERE id = $1 AND deleted_at IS NULL FOR UPDATE`, [
        input.id,
      ]);
      if (locked.rows.length === 0) return null;
      if (locked.rows[0].version !== input.expectedVersion) return 'stale' as const;
      const { names, values } = specColumns(input.spec);
      const sets = names.map((name, i) => `${name} = $${i + 6}`).join(', ');
      // A due fire time the tick has not materialised yet (next_run_at not after the edit) stays the next run.
      const updated = await client.query(
        `UPDATE jobs SET ${sets}, version = version + 1, updated_at = now(),
           next_run_at = CASE WHEN NOT $2 THEN next_run_at
                              WHEN $5 AND $3::timestamptz IS NOT NULL AND next_run_at <= $4::timestamptz THEN next_run_at
                              ELSE $3::timestamptz END
         WHERE id = $1 RETURNING ${JOB_COLUMNS}`,
        [
          input.id,
          input.schedule !== null,
          input.schedule?.nextRunAt ?? null,
          input.schedule?.cancelFrom ?? null,
          input.schedule?.keepDue ?? false,
          ...values,
        ],
      );
      const job = toJob(updated.rows[0]);
      await client.query(`INSERT INTO job_versions (job_id, version, actor, changes) VALUES ($1, $2, $3, $4)`, [
        input.id,
        job.version,
        input.actor,
        JSON.stringify(input.changes),
      ]);
      let cancelled: ChangedExecution[] = [];
      if (input.schedule) {
        // Fire times of the old schedule that are due already stay (they were due before the edit); later ones go,
        // unless they are fire times of the new schedule too (the tick would only queue them again).
        if (input.schedule.cancelAll) {
          cancelled = await cancelLive(
            client,
            input.id,
            `trigger IN ('cron', 'once') AND status = 'queued'`,
            'job edited',
          );
        } else {
          const ahead = await client.query(
            `SELECT id, scheduled_for FROM executions
             WHERE job_id = $1 AND trigger IN ('cron', 'once') AND status = 'queued' AND scheduled_for > $2`,
            [input.id, input.schedule.cancelFrom],
          );
          const isFireTime = input.schedule.isFireTime;
          const stale = ahead.rows.filter((r) => !isFireTime(r.scheduled_for as Date)).map((r) => r.id as string);
          if (stale.length > 0)
            cancelled = await cancelLive(
              client,
              input.id,
              `id = ANY($3::bigint[]) AND status = 'queued'`,
              'job edited',
              [stale],
            );
        }
      }
      const moved = input.moveWaiting ? await moveWaiting(client, input.id) : [];
      if (input.audit) await auditInsert(client, input.audit);
      return { job, cancelled, moved };
    });
  } catch (error) {
    if ((error as { code?: string }).code === '23505') {
      throw new ConflictError(`a job named ${JSON.stringify(input.spec.name)} already exists`);
    }
    throw error;
  }
}

/**
 * Gives the job's waiting attempts (not claimed by a worker: no lease token) its current lane, priority and flow key;
 * returns each that changed with where the queue holds it now and where it belongs.
 */
async function moveWaiting(client: pg.PoolClient, jobId: string): Promise<MovedExecution[]> {
  const key = flowKeySql('j', 'coalesce(e.payload, j.payload)');
  const { rows } = await client.query(
    `WITH old AS (
       SELECT id, lane, priority, flow_key FROM executions
       WHERE job_id = $1 AND status IN ('queued', 'retrying') AND lease_token IS NULL ORDER BY id FOR UPDATE
     )
     UPDATE executions e SET lane = j.lane, priority = j.priority, flow_key = ${key}
     FROM old o, jobs j
     WHERE e.id = o.id AND j.id = $1 AND ROW(e.lane, e.priority, e.flow_key) IS DISTINCT FROM ROW(j.lane, j.priority, ${key})
     RETURNING e.id, e.job_id, e.lane, e.priority, e.scheduled_for, e.flow_key,
               o.lane AS old_lane, o.priority AS old_priority, o.flow_key AS old_flow_key`,
    [jobId],
  );
  return rows.map((r) => ({
    from: toQueueItem({ ...r, lane: r.old_lane, priority: r.old_priority, flow_key: r.old_flow_key }),
    to: toQueueItem(r),
  }));
}

/** A live job's versions, newest first; null if there is no such live job. */
export async function jobVersions(pool: pg.Pool, jobId: string): Promise<JobVersion[] | null> {
  if (!isId(jobId)) return null;
  const { rows } = await pool.query(
    `SELECT v.job_id, v.version, v.actor, v.changes, v.created_at
     FROM jobs j LEFT JOIN job_versions v ON v.job_id = j.id
     WHERE j.id = $1 AND j.deleted_at IS NULL
     ORDER BY v.version DESC LIMIT $2`,
    [jobId, MAX_VERSIONS_LISTED],
  );
  if (rows.length === 0) return null;
  return rows
    .filter((r) => r.version !== null)
    .map((r) => ({
      jobId: r.job_id,
      version: r.version,
      actor: r.actor,
      changes: r.changes as JobChange[],
      createdAt: r.created_at,
    }));
}

/**
 * Creates a queued execution (trigger "backfill") for each fire time that has none yet: no cron, one-off or earlier
 * backfill execution that was not cancelled. Null if the job does not exist (or was deleted).
 */
/**
 * The executions that already hold some of these fire times of a job (scheduled or backfilled, not cancelled): what a
 * backfill of them skips. Probes the two partial unique indexes, like executionsBackfill.
 */
export async function executionsAtFireTimes(
  pool: pg.Pool,
  input: { jobId: string; fireTimes: Date[] },
): Promise<{ fireTime: Date; executionId: string }[]> {
  if (!isId(input.jobId) || input.fireTimes.length === 0) return [];
  const { rows } = await pool.query(
    `SELECT x.scheduled_for, min(x.id)::text AS id
     FROM unnest($2::timestamptz[]) AS f(t)
     JOIN executions x ON x.job_id = $1 AND x.scheduled_for = f.t
       AND x.trigger IN ('cron', 'once', 'backfill') AND x.status <> 'cancelled'
     GROUP BY x.scheduled_for ORDER BY x.scheduled_for`,
    [input.jobId, input.fireTimes],
  );
  return rows.map((r) => ({ fireTime: r.scheduled_for as Date, executionId: r.id as string }));
}

export async function executionsBackfill(
  pool: pg.Pool,
  input: { jobId: string; fireTimes: Date[]; audit?: AuditEntry },
): Promise<CreatedExecution[] | null> {
  if (!isId(input.jobId)) return null;
  return transaction(pool, async (client) => {
    const locked = await client.query(`SELECT id FROM jobs WHERE id = $1 AND deleted_at IS NULL FOR UPDATE`, [
      input.jobId,
    ]);
    if (locked.rows.length === 0) return null;
    // Two NOT EXISTS, each matching the predicate of one partial unique index, so each is an index probe.
    const { rows } = await client.query(
      `INSERT INTO executions (job_id, trigger, status, lane, priority, scheduled_for, flow_key)
       SELECT j.id, 'backfill', 'queued', j.lane, j.priority, f.t, ${flowKeySql('j', 'j.payload')}
       FROM unnest($2::timestamptz[]) AS f(t) JOIN jobs j ON j.id = $1
       WHERE NOT EXISTS (SELECT 1 FROM executions x WHERE x.job_id = $1 AND x.scheduled_for = f.t
                           AND x.trigger IN ('cron', 'once') AND x.status <> 'cancelled')
         AND NOT EXISTS (SELECT 1 FROM executions x WHERE x.job_id = $1 AND x.scheduled_for = f.t
                           AND x.trigger = 'backfill' AND x.status <> 'cancelled')
       ORDER BY f.t
       ON CONFLICT (job_id, scheduled_for) WHERE trigger = 'backfill' AND status <> 'cancelled' DO NOTHING
       RETURNING ${CREATED_COLUMNS}`,
      [input.jobId, input.fireTimes],
    );
    if (input.audit && rows.length > 0) {
      await auditInsert(client, {
        ...input.audit,
        changes: { ...input.audit.changes, created: { old: 0, new: rows.length } },
      });
    }
    return rows.map(toCreated);
  });
}
