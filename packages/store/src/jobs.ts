/** @module jobs — all SQL on the jobs table: insert, read, list, status changes, delete, and the tick's claim. */
import { ConflictError, InvalidInputError, NO_LIMITS, parseJsonPointer, type ChangedExecution, type FirePlan, type FlowLimits, type Job, type JobSpec, type MaterialiseResult } from '@jobs/core';
import type pg from 'pg';
import { countInMinutes } from './minutes';
import { transaction } from './transaction';
import { CREATED_COLUMNS, JOB_COLUMNS, flowKeySql, toCancelled, toCreated, toJob } from './rows';

export interface JobListFilter {
  status?: Job['status'];
  /** Keyset cursor: jobs with id below this (the list is newest first). */
  before?: string;
  limit: number;
}

/**
 * The jobs columns of a job's limits, in the order max_concurrency, concurrency_key, concurrency_key_path,
 * max_concurrency_per_key, rate_limit, rate_period_ms, rate_per_key. The pointer is validated by the API.
 */
export function limitColumns(limits: FlowLimits): unknown[] {
  const pointer = limits.concurrencyKey;
  const path = pointer === null ? null : parseJsonPointer(pointer);
  if (path && !path.ok) throw new InvalidInputError(`concurrency_key: ${path.error}`, 'concurrency_key');
  return [
    limits.maxConcurrency, pointer, path?.ok ? path.path : null, limits.maxConcurrencyPerKey, limits.rateLimit?.limit ?? null,
    limits.rateLimit?.periodMs ?? null, limits.rateLimit?.perKey ?? false,
  ];
}

export async function jobInsert(pool: pg.Pool, spec: JobSpec & { nextRunAt: Date | null }): Promise<Job> {
  try {
    const { rows } = await pool.query(
      `INSERT INTO jobs (name, cron_expr, timezone, run_at, command, handler, payload, status, max_retries,
         backoff_base_ms, backoff_factor, backoff_max_ms, backoff_jitter, timeout_ms, overlap, misfire, catch_up_max,
         misfire_deadline_ms, lane, priority, next_run_at, max_concurrency, concurrency_key, concurrency_key_path,
         max_concurrency_per_key, rate_limit, rate_period_ms, rate_per_key, retention_days)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21,
         $22, $23, $24, $25, $26, $27, $28, $29)
       RETURNING ${JOB_COLUMNS}`,
      [
        spec.name, spec.cronExpr, spec.timezone, spec.runAt, spec.command, spec.handler, JSON.stringify(spec.payload ?? null),
        spec.status ?? 'active', spec.maxRetries, spec.backoff.baseMs, spec.backoff.factor, spec.backoff.maxMs,
        spec.backoff.jitter, spec.timeoutMs, spec.overlap, spec.misfire, spec.catchUpMax, spec.misfireDeadlineMs,
        spec.lane, spec.priority, spec.nextRunAt, ...limitColumns(spec.limits ?? NO_LIMITS), spec.retentionDays ?? null,
      ],
    );
    return toJob(rows[0]);
  } catch (error) {
    if ((error as { code?: string }).code === '23505') {
      throw new ConflictError(`a job named ${JSON.stringify(spec.name)} already exists`);
    }
    throw error;
  }
}

export async function jobGet(pool: pg.Pool, id: string): Promise<Job | null> {
  if (!isId(id)) return null;
  const { rows } = await pool.query(`SELECT ${JOB_COLUMNS} FROM jobs WHERE id = $1 AND deleted_at IS NULL`, [id]);
  return rows[0] ? toJob(rows[0]) : null;
}

/**
 * Names of the jobs among `ids`, in one statement: deleted ones included (their attempts may still be counted
 * somewhere), unless `live`.
 */
export async function jobNames(pool: pg.Pool, ids: readonly string[], options: { live?: boolean } = {}): Promise<Map<string, string>> {
  const valid = [...new Set(ids.filter(isId))];
  if (valid.length === 0) return new Map();
  const { rows } = await pool.query(
    `SELECT id, name FROM jobs WHERE id = ANY($1::bigint[])${options.live ? ' AND deleted_at IS NULL' : ''}`,
    [valid],
  );
  return new Map(rows.map((r) => [r.id as string, r.name as string]));
}

/** Ids and names of the newest live jobs (a filter's choices): no per-job read of the history, unlike jobList. */
export async function jobChoices(pool: pg.Pool, limit: number): Promise<{ id: string; name: string }[]> {
  const { rows } = await pool.query(`SELECT id, name FROM jobs WHERE deleted_at IS NULL ORDER BY id DESC LIMIT $1`, [limit]);
  return rows.map((r) => ({ id: r.id as string, name: r.name as string }));
}

/** Newest first, keyset-paginated by id so pages stay stable while jobs are added. */
export async function jobList(pool: pg.Pool, filter: JobListFilter): Promise<Job[]> {
  const { rows } = await pool.query(
    `SELECT ${JOB_COLUMNS} FROM jobs
     WHERE deleted_at IS NULL AND ($1::text IS NULL OR status = $1) AND ($2::bigint IS NULL OR id < $2)
     ORDER BY id DESC LIMIT $3`,
    [filter.status ?? null, filter.before ?? null, filter.limit],
  );
  return rows.map(toJob);
}

/**
 * Pauses or resumes. Pausing also cancels the scheduled runs already materialised ahead (queued cron/once rows),
 * since "paused" means nothing new starts; manual runs and retries in flight are left alone.
 */
export async function jobSetStatus(
  pool: pg.Pool,
  input: { id: string; status: Job['status']; nextRunAt: Date | null },
): Promise<{ job: Job; cancelled: ChangedExecution[] } | null> {
  if (!isId(input.id)) return null;
  return transaction(pool, async (client) => {
    const updated = await client.query(
      `UPDATE jobs SET status = $2, next_run_at = $3, updated_at = now()
       WHERE id = $1 AND deleted_at IS NULL RETURNING ${JOB_COLUMNS}`,
      [input.id, input.status, input.nextRunAt],
    );
    if (updated.rowCount === 0) return null;
    let cancelled: ChangedExecution[] = [];
    if (input.status === 'paused') {
      cancelled = await cancelLive(client, input.id, `trigger IN ('cron', 'once') AND status = 'queued'`, 'job paused');
    }
    return { job: toJob(updated.rows[0]), cancelled };
  });
}

/** Soft delete: no further runs, live executions cancelled (running ones are killed by their worker), history kept. */
export async function jobDelete(pool: pg.Pool, id: string): Promise<{ cancelled: ChangedExecution[] } | null> {
  if (!isId(id)) return null;
  return transaction(pool, async (client) => {
    const deleted = await client.query(
      `UPDATE jobs SET deleted_at = now(), next_run_at = NULL, status = 'paused', updated_at = now()
       WHERE id = $1 AND deleted_at IS NULL`,
      [id],
    );
    if (deleted.rowCount === 0) return null;
    const cancelled = await cancelLive(client, id, `status IN ('queued', 'retrying', 'running')`, 'job deleted');
    return { cancelled };
  });
}

async function cancelLive(client: pg.PoolClient, jobId: string, where: string, reason: string): Promise<ChangedExecution[]> {
  // `where` is one of two constant fragments above, never user input.
  const { rows } = await client.query(
    `WITH target AS (
       SELECT id, status FROM executions WHERE job_id = $1 AND ${where} FOR UPDATE
     ),
     changed AS (
       UPDATE executions e SET status = 'cancelled', finished_at = now(), error = $2, lease_expires_at = NULL
       FROM target t WHERE e.id = t.id
       RETURNING e.id, e.job_id, e.attempt, e.lane, e.priority, e.scheduled_for, e.worker_id, t.status AS from_status
     ),
     counted AS (${countInMinutes('changed', "'cancelled'")})
     SELECT * FROM changed`,
    [jobId, reason],
  );
  return rows.map(toCancelled);
}

/**
 * The tick's transaction. SKIP LOCKED lets concurrent ticks split the due jobs instead of waiting on each other;
 * the unique (job_id, scheduled_for) index makes a fire time that two ticks both planned land once.
 */
export async function jobsMaterialiseDue(
  pool: pg.Pool,
  input: { horizon: Date; limit: number; plan: (job: Job) => FirePlan },
): Promise<MaterialiseResult> {
  return transaction(pool, async (client) => {
    const due = await client.query(
      `SELECT ${JOB_COLUMNS} FROM jobs
       WHERE status = 'active' AND deleted_at IS NULL AND next_run_at IS NOT NULL AND next_run_at <= $1
       ORDER BY next_run_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [input.horizon, input.limit],
    );
    if (due.rows.length === 0) return { jobs: 0, created: [], droppedMisfires: 0 };
    const jobs = due.rows.map(toJob);
    const fireJobIds: string[] = [];
    const fireTimes: Date[] = [];
    const fireTriggers: string[] = [];
    const nextIds: string[] = [];
    const nextTimes: (Date | null)[] = [];
    let droppedMisfires = 0;
    for (const job of jobs) {
      const plan = input.plan(job);
      droppedMisfires += plan.droppedMisfires;
      for (const fire of plan.fires) {
        fireJobIds.push(job.id);
        fireTimes.push(fire.scheduledFor);
        fireTriggers.push(job.cronExpr ? 'cron' : 'once');
      }
      nextIds.push(job.id);
      nextTimes.push(plan.nextRunAt);
    }
    let created: MaterialiseResult['created'] = [];
    if (fireJobIds.length > 0) {
      const inserted = await client.query(
        `INSERT INTO executions (job_id, trigger, status, lane, priority, scheduled_for, flow_key)
         SELECT f.job_id, f.trigger, 'queued', j.lane, j.priority, f.scheduled_for, ${flowKeySql('j', 'j.payload')}
         FROM unnest($1::bigint[], $2::timestamptz[], $3::text[]) AS f(job_id, scheduled_for, trigger)
         JOIN jobs j ON j.id = f.job_id
         ON CONFLICT (job_id, scheduled_for) WHERE trigger IN ('cron', 'once') AND status <> 'cancelled' DO NOTHING
         RETURNING ${CREATED_COLUMNS}`,
        [fireJobIds, fireTimes, fireTriggers],
      );
      created = inserted.rows.map(toCreated);
    }
    await client.query(
      `UPDATE jobs SET next_run_at = n.next_run_at
       FROM unnest($1::bigint[], $2::timestamptz[]) AS n(id, next_run_at) WHERE jobs.id = n.id`,
      [nextIds, nextTimes],
    );
    return { jobs: jobs.length, created, droppedMisfires };
  });
}

/** Ids are positive bigints; anything else cannot name a row (and must not reach a ::bigint cast as an error). */
export function isId(id: string): boolean {
  return /^[1-9][0-9]{0,17}$/.test(id);
}
